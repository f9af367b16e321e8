"""``leaderboards/robust-v0`` discriminates: every env in it is one where the attack
measurably hurts plain GP-UCB (issue 19): GP-UCB's R_T at the suite's horizon is at least
2x its R_T on the same env without the attack, and the two 95% CIs (mean +- 1.96 se over
the suite's seeds) are apart."""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agents
import hbo_envs  # noqa: F401  (registers the ids)
from hbo_envs.leaderboard.suite import load_suite

SUITE = Path(__file__).resolve().parents[1] / "leaderboards" / "robust-v0"


def uncorrupted(env_id: str) -> dict:
    """The kwargs that switch the env's attack off (the control of the 2x rule)."""
    if env_id.startswith("hbo/HS-"):
        return {"attack": "none"}
    return {"T_c": 0}


def gp_ucb_regret(env_id: str, kwargs: dict, horizon: int, seed: int) -> float:
    env = gym.make(env_id, horizon=horizon, **kwargs)
    env.reset(seed=seed)
    agent = agents.make("gp-ucb")
    agent.reset(env.unwrapped.problem, seed=seed)
    R = 0.0
    for _ in range(horizon):
        a = agent.act()
        _, y, _, _, info = env.step(a)
        agent.update(a, y)
        R += info["regret"]
    return R


def ci(x: list[float]) -> tuple[float, float, float]:
    m = float(np.mean(x))
    h = 1.96 * float(np.std(x, ddof=1)) / math.sqrt(len(x))
    return m, m - h, m + h


@pytest.mark.parametrize("env", load_suite(SUITE).envs, ids=lambda e: e.id)
def test_attack_at_least_doubles_gp_ucb_regret_with_cis_apart(env):
    seeds = load_suite(SUITE).seeds[:5]
    att = [gp_ucb_regret(env.id, dict(env.kwargs), env.horizon, s) for s in seeds]
    ctl = [
        gp_ucb_regret(env.id, {**env.kwargs, **uncorrupted(env.id)}, env.horizon, s) for s in seeds
    ]
    (ma, lo_a, _), (mc, _, hi_c) = ci(att), ci(ctl)
    assert ma >= 2 * mc, (env.id, ma, mc)
    assert lo_a > hi_c, (env.id, att, ctl)
