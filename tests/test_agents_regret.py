"""Regret sanity of the agents on the Chowdhury–Gopalan environments (fixed seeds).

These are statistical smoke tests of whole runs, kept to a few seconds: they check that
the agents learn (time-average regret falls) and reproduce the qualitative claim of
Chowdhury–Gopalan §6 "effect of truncation" (Fig. 1f).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import hbo_envs  # noqa: F401  (registers the envs)


def rollout(agent, env_id, horizon, seed):
    env = gym.make(env_id, horizon=horizon)
    env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    regret = np.empty(horizon)
    for t in range(horizon):
        a = agent.act()
        _, y, _, _, info = env.step(a)
        agent.update(a, y)
        regret[t] = info["regret"]
    f = np.asarray(env.unwrapped.objective.values, dtype=float)
    return np.cumsum(regret), f, agent


# Measured on seeds 0-2 (mean R_250/250 -> R_4000/4000): gp-ucb 0.36 -> 0.16,
# ca-tgp-ucb 0.41 -> 0.23, tgp-ucb 0.46 -> 0.39, mom-gp-ucb 0.62 -> 0.53. TGP-UCB's
# width beta_t = B + b_t sqrt(ln t) grows like t^{1/4} sqrt(ln t), and MoM-GP-UCB has only
# N = 43 episodes of ell = 91 replays at T = 4000 with alpha_n ~ 25, so both fall slowly.
# Corruption-tolerant agents (problem.C is None here, so C = 0): gp-ucb-corruption
# 0.33 -> 0.15, fast-slow-gp-ucb 0.45 -> 0.30 (S always: min{1, 1/0} = 1),
# fast-slow-gp-ucb-unknown 0.48 -> 0.39 (13 layers, most rounds in the lower ones).
# ATA-GP-UCB (experiment set): qff 0.50 -> 0.37, nystrom 0.52 -> 0.43 (its beta_t =
# B + sqrt(m_t + 1) v^{1/2} ln((m_t + 1) T)^{1/2} ~ 40 at alpha = 1 explores for long).
FALLS_BELOW = {
    "gp-ucb": 0.6,
    "ca-tgp-ucb": 0.7,
    "tgp-ucb": 0.9,
    "mom-gp-ucb": 0.9,
    "gp-ucb-corruption": 0.6,
    "fast-slow-gp-ucb": 0.8,
    "fast-slow-gp-ucb-unknown": 0.92,
    "ata-gp-ucb-qff": 0.9,
    "ata-gp-ucb-nystrom": 0.92,
    # issue 19 (measured 3 seeds, late/early): rcgp-ucb 0.28, rcgp-ucb-adaptive 0.43,
    # outlier-gp-ucb 0.34, ec-gp-ucb 0.64 (its width grows like eps sqrt(t), eps = 0.1).
    "rcgp-ucb": 0.5,
    "rcgp-ucb-adaptive": 0.65,
    "outlier-gp-ucb": 0.55,
    "ec-gp-ucb": 0.8,
}


# Horizon T of the test (4000 unless named). Outlier-GP-UCB's diagnosis refits a Laplace
# Student-t GP over all t observations every other round, so a run costs O(T^2): T = 2000
# takes a quarter of T = 4000 (~1.2 s a seed instead of ~3 s). Same threshold 0.55, so the
# test is no looser: the agent must get there in half the rounds (its rate is T-free: it
# uses no horizon: R_t for t <= 2000 is, measured, the T = 4000 run's). Measured at T = 2000,
# seeds 0-14 (late R_2000/2000 over early R_250/250, 3-seed means): seeds 0-2 give 0.45
# (0.34 at T = 4000); the five disjoint triples 0.45, 0.35, 0.45, 0.48, 0.32; over 20000
# bootstrap triples from the 15 seeds the statistic exceeds 0.55 with probability 0.005.
# A non-learning agent (posterior never updated) sits at ~1 and fails either way.
HORIZON = {"outlier-gp-ucb": 2000}


# The per-arm Robust UCB agents (issue 35) ignore the kernel: on this env's 100 arms at
# T = 4000 the paper's widths keep them near round robin (measured late/early 0.94 and
# 1.02), which is their point as a floor; tests/test_robust_ucb.py checks their regret
# where the theory says they must learn (few arms, long horizon).
KERNEL_FREE = ("robust-ucb-trunc", "robust-ucb-mom")


@pytest.mark.parametrize(
    "name", [n for n in agents.available() if n != "random" and n not in KERNEL_FREE]
)
def test_time_average_regret_falls_on_student_t_env(name):
    T = HORIZON.get(name, 4000)
    early, late = [], []
    for seed in range(3):
        R, _, _ = rollout(agents.make(name), "hbo/RKHS-SE-StudentT-v0", T, seed)
        early.append(R[249] / 250)
        late.append(R[-1] / T)
    assert np.mean(late) < FALLS_BELOW[name] * np.mean(early), (np.mean(early), np.mean(late))


def test_truncation_helps_gp_ucb_under_the_single_spike_channel():
    """CG 2019 §6: GP-UCB with beta_t = ln t on raw rewards vs the same with rewards
    truncated at t^{1/4}; the spike (+-10 at one random point) ruins the raw posterior
    mean, and the truncated confidence band mu +- sigma covers f (Fig. 1f)."""
    log = math.log
    stats = {"gp-ucb": [], "tgp-ucb": []}
    for seed in range(24):
        for name, params in (
            ("gp-ucb", {"beta": log}),
            ("tgp-ucb", {"beta": log, "b": lambda t: t**0.25}),
        ):
            R, f, agent = rollout(agents.make(name, **params), "hbo/RKHS-SE-Spike-v0", 300, seed)
            est, _ = agent.posterior()
            sd = agent.engine_.std()
            stats[name].append((R[-1], np.abs(est - f).max(), np.mean(np.abs(est - f) <= sd)))
    gp, tgp = np.array(stats["gp-ucb"]), np.array(stats["tgp-ucb"])
    # Estimation error of the posterior mean (measured 2.2 vs 0.07).
    assert gp[:, 1].mean() > 10 * tgp[:, 1].mean()
    # Coverage of f by the band mu_T +- sigma_T (measured 0.70 vs 0.99).
    assert gp[:, 2].mean() < 0.85 < 0.95 < tgp[:, 2].mean()
    # Regret: worse on average and far worse in the worst case (measured 43 vs 40, 67 vs 43).
    assert gp[:, 0].mean() > tgp[:, 0].mean()
    assert gp[:, 0].max() > 1.3 * tgp[:, 0].max()
