"""The uniform-random floor (``agents.make("random")``): uniform actions, the regret of
uniform play, and a posterior band that is exactly what its docstring derives."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem


def _problem(n=8, alpha=1.0, nu=3.0, sup_f=2.0, horizon=100):
    X = np.linspace(0, 1, n)[:, None]
    return Problem(
        points=X,
        kernel_matrix=SquaredExponential(0.3)(X),
        kernel=SquaredExponential(0.3),
        horizon=horizon,
        B=1.0,
        alpha=alpha,
        v=nu + 1,
        nu=nu,
        sup_f=sup_f,
    )


def test_actions_are_uniform_chi_square():
    p = _problem(n=10)
    agent = agents.make("random")
    agent.reset(p, seed=3)
    counts = np.zeros(p.n)
    for _ in range(20_000):
        a = agent.act()
        assert agent.act() == a  # the same until update
        agent.update(a, 0.0)
        counts[a] += 1
    # Under uniform play the chi-square statistic has 9 degrees of freedom.
    assert stats.chisquare(counts).pvalue > 1e-4


def test_posterior_is_the_hand_computed_mean_and_von_bahr_esseen_width():
    p = _problem(n=4, alpha=0.5, nu=3.0, sup_f=2.0)
    agent = agents.make("random", delta=0.2)
    agent.reset(p, seed=0)
    for a, y in [(0, 1.0), (0, 3.0), (2, -4.0), (0, 2.0)]:
        agent.update(a, y)
    est, w = agent.posterior()
    np.testing.assert_allclose(est, [2.0, 0.0, -4.0, 0.0])
    # w_i = (2 nu / (delta n_i^alpha))^{1/(1+alpha)}; unplayed arms: sup_f.
    np.testing.assert_allclose(
        w, [(2 * 3 / (0.2 * 3**0.5)) ** (1 / 1.5), 2.0, (2 * 3 / 0.2) ** (1 / 1.5), 2.0]
    )


def test_regret_per_round_is_the_gap_to_the_mean_of_f():
    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=4000)
    env.reset(seed=1)
    f = np.asarray(env.unwrapped.objective.values, dtype=float)
    agent = agents.make("random")
    agent.reset(env.unwrapped.problem, seed=1)
    regret = []
    for _ in range(4000):
        a = agent.act()
        _, y, _, _, info = env.step(a)
        agent.update(a, y)
        regret.append(info["regret"])
    gaps = f.max() - f
    # Mean of 4000 i.i.d. draws of the gap of a uniform arm: 5 standard errors.
    se = gaps.std() / np.sqrt(4000)
    assert abs(np.mean(regret) - gaps.mean()) < 5 * se


def test_band_covers_f_at_least_at_its_level():
    """Coverage of f by ``est ± w`` on the Student-t env (alpha = 1, nu = 3), 10 seeds."""
    cover = []
    for seed in range(10):
        env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=3000)
        env.reset(seed=seed)
        f = np.asarray(env.unwrapped.objective.values, dtype=float)
        agent = agents.make("random", delta=0.1)
        agent.reset(env.unwrapped.problem, seed=seed)
        for _ in range(3000):
            a = agent.act()
            agent.update(a, env.step(a)[1])
        est, w = agent.posterior()
        cover.append(np.mean(np.abs(est - f) <= w))
    assert np.mean(cover) >= 0.9


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan"), "0.1", True])
def test_bad_delta_is_refused_at_reset(bad):
    agent = agents.make("random", delta=bad)
    with pytest.raises((ValueError, TypeError), match="'delta' parameter of RandomAgent"):
        agent.reset(_problem(), seed=0)


def test_check_agent_passes():
    agents.check_agent(agents.make("random"))
