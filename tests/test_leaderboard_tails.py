"""The ``tails-v0`` leaderboard suite (issue 35 item 4): exactly the envs of
:data:`hbo_envs.registration.TAILS_V0` (those the archive's criterion confirms,
``tests/test_tails_suite.py``; not their Gaussian controls), each at its registered default
horizon, ranked with both configurations of every reference."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import hbo_envs
from hbo_envs.leaderboard import load_suite
from hbo_envs.registration import TAILS_V0, tails_id

BOARDS = Path(__file__).resolve().parents[1] / "leaderboards"


def test_tails_suite_ranks_every_tails_env_at_its_registered_horizon() -> None:
    suite = load_suite("tails-v0", BOARDS)
    assert suite.title == "Heavy tails that break GP-UCB"
    want = [tails_id(name) for name in TAILS_V0]
    assert list(suite.env_ids) == want
    assert all(i in hbo_envs.ENV_IDS for i in want)
    assert not any(i.endswith("-Gaussian-v0") for i in suite.env_ids)  # controls, not ranked
    for e in suite.envs:
        assert e.horizon == gym.spec(e.id).kwargs["horizon"], e.id
        assert 2000 <= e.horizon <= 10_000 and not e.kwargs
    assert suite.unavailable_reason() is None


def test_tails_suite_references_in_both_configurations() -> None:
    suite = load_suite("tails-v0", BOARDS)
    heavy = load_suite("heavy-tailed-v0", BOARDS)
    # the same references as heavy-tailed-v0 (QFF refuses the Matern envs; corruption agents
    # are ranked elsewhere), each as published and tuned, and the random floor
    assert suite.baseline_names() == heavy.baseline_names()
    refs = {(r.name, r.config) for r in suite.references()}
    names, _ = suite.baseline_names()
    assert refs == {
        (n, c) for n in names for c in ("paper", "tuned") if n != "random" or c == "paper"
    }
    kernels = set()
    for e in suite.envs:
        env = gym.make(e.id).unwrapped
        env.reset(seed=0)
        kernels.add(env.problem.kernel.name)
    assert kernels == {"se", "matern"}
