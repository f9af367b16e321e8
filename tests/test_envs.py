"""Tests generated from the registry: every registered id must pass these, so a new env
needs no new test code (Gymnasium's habit)."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hbo_envs
from hbo_envs.envs import GPBanditEnv
from hbo_envs.registration import missing_data

IDS = list(hbo_envs.ENV_IDS)


@pytest.fixture(scope="module", params=IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    if need := missing_data(request.param):
        pytest.skip(f"{request.param} needs the {need!r} data set (hbo-bench data fetch {need})")
    return request.param


def _rollout(env: gym.Env, seed: int, steps: int) -> tuple[list[float], list[float]]:
    env.reset(seed=seed)
    n = env.action_space.n
    rewards, regrets = [], []
    for t in range(steps):
        _, r, term, trunc, info = env.step((7 * t + 3) % n)
        rewards.append(r)
        regrets.append(info["regret"])
        assert not term
    return rewards, regrets


def test_registry_lists_the_design_ids() -> None:
    expected = {
        "hbo/RKHS-SE-StudentT-v0",
        "hbo/RKHS-SE-Pareto-v0",
        "hbo/RKHS-Matern-StudentT-v0",
        "hbo/RKHS-SE-Spike-v0",
        "hbo/RKHS-SE-SpikeFixedSign-v0",
        "hbo/RKHS1D-SymPareto-eps02-v0",
        "hbo/RKHS1D-SymPareto-eps08-v0",
        "hbo/Griewank2D-SymPareto-eps02-v0",
        "hbo/Griewank2D-SymPareto-eps08-v0",
        "hbo/Griewank5D-SymPareto-eps02-v0",
        "hbo/Griewank5D-SymPareto-eps08-v0",
        "hbo/GPBandit-v0",
    }
    assert expected <= set(IDS)
    for i in IDS:
        assert i in gym.registry


def test_check_env(env_id: str) -> None:
    env = gym.make(env_id, horizon=50)
    check_env(env.unwrapped, skip_render_check=True)


def test_seeded_determinism(env_id: str) -> None:
    env = gym.make(env_id, horizon=60)
    r1, g1 = _rollout(env, 123, 60)
    r2, g2 = _rollout(gym.make(env_id, horizon=60), 123, 60)
    assert r1 == r2 and g1 == g2
    r3, _ = _rollout(env, 124, 60)
    if not getattr(env.unwrapped, "deterministic_rewards", False):  # StockPicking replays days
        assert r1 != r3


def test_problem_is_consistent_with_the_env(env_id: str) -> None:
    env = gym.make(env_id, horizon=7)
    env.reset(seed=5)
    u = env.unwrapped
    p = u.problem
    assert p.horizon == 7
    assert p.points.shape[0] == env.action_space.n == p.kernel_matrix.shape[0]
    assert np.all(np.diag(p.kernel_matrix) <= 1 + 1e-12)
    assert 0 < p.alpha <= 1 and p.v > 0 and p.nu > 0 and p.B > 0
    assert p.sup_f == pytest.approx(np.max(np.abs(u.objective.values)), rel=1e-15)
    with pytest.raises(ValueError):
        p.points[0, 0] = 1.0  # read-only: agents cannot corrupt the problem
    with pytest.raises(ValueError):
        p.kernel_matrix[0, 0] = 1.0
    # regret in info is f* - f(x) with f* found by brute force
    f = u.objective.values
    if hasattr(u, "round_values"):  # non-stationary (StockPicking): round 1's mean rewards
        f = u.round_values[0]
    _, _, _, trunc, info = env.step(0)
    assert info["regret"] == pytest.approx(max(f) - f[0], abs=0)
    assert info["f"] == f[0]
    if hasattr(u, "adversary"):  # corrupted envs: c_1(x_1) is paid for out of the budget
        assert abs(info["corruption"]) <= info["corruption_used"] <= u.C
    else:
        assert info["corruption"] == 0.0 and info["corruption_used"] == 0.0


def test_truncated_at_horizon_and_step_after_end_refused(env_id: str) -> None:
    env = gym.make(env_id, horizon=3).unwrapped
    env.reset(seed=0)
    flags = [env.step(0)[3] for _ in range(3)]
    assert flags == [False, False, True]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_make_with_module_prefix_in_a_fresh_interpreter() -> None:
    code = (
        "import gymnasium as gym, sys\n"
        "assert 'hbo_envs' not in sys.modules\n"
        "env = gym.make('hbo_envs:hbo/RKHS-SE-StudentT-v0', horizon=5)\n"
        "env.reset(seed=0)\n"
        "print(env.step(1)[1])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert np.isfinite(float(out.stdout.strip()))


@pytest.mark.parametrize(
    "action, exc",
    [
        (100, ValueError),
        (-1, ValueError),
        (2.0, TypeError),
        (float("nan"), TypeError),
        (True, TypeError),
        ("3", TypeError),
        (np.array([1, 2]), TypeError),
        (None, TypeError),
    ],
)
def test_invalid_action_is_refused_and_state_unchanged(action: object, exc: type) -> None:
    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=10).unwrapped
    ref = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=10).unwrapped
    env.reset(seed=9)
    ref.reset(seed=9)
    env.step(4)
    ref.step(4)
    with pytest.raises(exc, match="action"):
        env.step(action)
    assert env._t == ref._t == 1
    # the generator was not advanced: the next rewards coincide with the reference's
    assert [env.step(5)[1] for _ in range(3)] == [ref.step(5)[1] for _ in range(3)]


def test_numpy_integer_actions_are_accepted() -> None:
    env = gym.make("hbo/GPBandit-v0", horizon=5).unwrapped
    env.reset(seed=0)
    for a in (np.int64(3), np.int32(2), np.array(4), np.uint8(1)):
        env.step(a)


def test_step_before_reset_is_refused() -> None:
    env = gym.make("hbo/GPBandit-v0").unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_objective_redrawn_per_seed_only_where_the_paper_does() -> None:
    cg = gym.make("hbo/RKHS-SE-StudentT-v0").unwrapped
    cg.reset(seed=1)
    f1 = cg.objective.values.copy()
    cg.reset(seed=2)
    assert not np.allclose(f1, cg.objective.values)  # "each trial ... a different f"
    cg.reset(seed=1)
    np.testing.assert_array_equal(f1, cg.objective.values)  # and reproducibly so
    for fixed in ("hbo/RKHS-SE-Spike-v0", "hbo/RKHS1D-SymPareto-eps02-v0"):
        env = gym.make(fixed).unwrapped
        env.reset(seed=1)
        g1 = env.objective.values.copy()
        env.reset(seed=2)
        np.testing.assert_array_equal(g1, env.objective.values)


@pytest.mark.parametrize("env_id", ["hbo/RKHS-SE-Spike-v0", "hbo/RKHS-SE-SpikeFixedSign-v0"])
def test_spike_demo_moves_the_spike_per_seed_and_is_exact_elsewhere(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    spots, signs = set(), []
    for seed in range(20):
        env.reset(seed=seed)
        spike = env._channel_state.index
        spots.add(spike)
        f = env.objective.values
        a = (spike + 1) % 100
        assert env.step(a)[1] == f[a]
        eta = [env.step(spike)[1] - f[spike] for _ in range(30)]
        assert np.allclose(np.abs(eta), 10.0, atol=1e-12)
        signs.append(set(np.sign(eta)))
    assert len(spots) > 10
    assert np.all((env.objective.values > 0) & (env.objective.values <= 1))
    if env_id.endswith("FixedSign-v0"):  # one sign per episode, both signs across episodes
        assert all(len(s) == 1 for s in signs) and len(set().union(*signs)) == 2
    else:  # a fresh sign at every sample
        assert all(len(s) == 2 for s in signs)


def test_pareto_channel_refused_for_nonpositive_objective() -> None:
    with pytest.raises(ValueError, match="f\\(x\\) > 0"):
        # objective_seed=2 draws an f with min f = -1
        GPBanditEnv(objective="random-rkhs", channel="pareto", objective_seed=2)


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"horizon": 0}, "horizon"),
        ({"horizon": 2.5}, "horizon"),
        ({"objective": "nope"}, "objective"),
        ({"channel": "cauchy"}, "channel"),
        ({"channel": {"name": "student_t", "df": 1.5}}, "df"),
    ],
)
def test_bad_env_arguments_raise_clear_errors(kwargs: dict, param: str) -> None:
    with pytest.raises(ValueError, match=param):
        gym.make("hbo/GPBandit-v0", **kwargs)


def test_extreme_heavy_tail_rewards_are_finite() -> None:
    env = gym.make("hbo/RKHS1D-SymPareto-eps02-v0", horizon=100_000).unwrapped
    env.reset(seed=0)
    rewards = np.array([env.step(i % 1000)[1] for i in range(100_000)])
    assert np.all(np.isfinite(rewards))
    # the tail is really heavy: the max of 1e5 draws of a 1.21-Pareto is ~1e4 (median)
    assert np.max(np.abs(rewards)) > 1e3


class _ExtremeRng:
    """A stand-in generator whose uniform draw is the largest double below 1, so the
    inverse-CDF Pareto draw hits its most extreme possible value."""

    def random(self) -> float:
        return 1.0 - 2.0**-53

    def integers(self, n: int) -> int:
        return 0


@pytest.mark.parametrize("channel, floor", [("pareto", 1e7), ("symmetric_pareto", 1e12)])
def test_most_extreme_possible_draw_is_finite(channel: str, floor: float) -> None:
    from hbo_envs.channels import make_channel

    ch = make_channel(channel)
    y = ch.sample(1.0, 0, _ExtremeRng(), None)
    assert np.isfinite(y) and abs(y) > floor  # 0.5 * 2^26.5 and 2^43.8
