"""Bogunovic, Krause & Scarlett (AISTATS 2020) experiments: the Figure 1 corruption story.

The paper has no regret experiments; its Figure 1 tells a story, stated here as claims
with measured verdicts:

- GP-UCB "eliminates the optimal region (and x*) early on due to the corruptions, and
  later on, it only selects points from the suboptimal region and consequently suffers
  linear cumulative regret" (§2, Fig. 1 middle);
- the corruption-aware algorithms "identify the true maximizer x* after the corruption
  budget C is exhausted" (Fig. 1 right; Theorems 5, 9): sublinear regret, ``R_t / t``
  falling once the budget is spent;
- Theorem 9 (27): in the uncorrupted case Fast-Slow GP-UCB's regret is within a constant
  factor of GP-UCB's (``hbo/Corrupted-SE-None-v0`` declares ``C = 10`` to the agents and
  corrupts nothing: the known-or-zero setting).

The picture (``kind="corruption"``): the points each agent chose over the first 50
rounds and its confidence band (:mod:`hbo_envs.harness.plotting_corruption`).
"""

from __future__ import annotations

from hbo_envs.judging.experiments._core import Experiment, _a, register
from hbo_envs.judging.rules.claims import (
    Claim,
    below_random,
    in_most_runs,
    less,
    linear,
    no_worse,
    sublinear,
)

__all__ = ["FIG1_ENV", "KNOWN_OR_ZERO_ENV", "LEAVES_LEVEL"]

FIG1_ENV = "hbo/Corrupted-Fig1-v0"
KNOWN_OR_ZERO_ENV = "hbo/Corrupted-SE-None-v0"
_BKC = (
    "Bogunovic, Krause & Scarlett, Corruption-Tolerant Gaussian Process Bandit Optimization, "
    "AISTATS 2020"
)


_SRC = "§2 and Fig. 1"
#: Half the gap f(x*) - f(x0) = 1.15 - 0.72 of Fig. 1: a per-round regret at least this
#: over the last half of the run means at least half of those rounds away from x*.
LEAVES_LEVEL = (1.15 - 0.72) / 2
_CLAIMS: tuple[Claim, ...] = (
    linear(
        "gp-ucb",
        env=FIG1_ENV,
        text="GP-UCB locks onto x0 after the attack: R_t grows linearly",
        source=_SRC + " (middle)",
    ),
    sublinear(
        "gp-ucb-corruption",
        env=FIG1_ENV,
        text="GP-UCB with known C (Alg. 1) finds x* once the budget is spent: R_t sublinear",
        source=_SRC + " (right), Theorem 5",
    ),
    sublinear(
        "fast-slow-gp-ucb",
        env=FIG1_ENV,
        text="Fast-Slow GP-UCB's R_t/t keeps falling after the budget is spent",
        source="Theorem 9 (28)",
    ),
    less(
        "gp-ucb-corruption",
        "gp-ucb",
        env=FIG1_ENV,
        text="the corruption-aware agent (Alg. 1) has lower R_T than GP-UCB under attack",
        source=_SRC,
    ),
    no_worse(
        "fast-slow-gp-ucb",
        "gp-ucb",
        margin=4.0,
        env=KNOWN_OR_ZERO_ENV,
        text="with C = 0, Fast-Slow GP-UCB's R_T is within a constant factor (x5) of GP-UCB's",
        source="Theorem 9 (27)",
    ),
    in_most_runs(
        "gp-ucb",
        "late_regret_at_least",
        env=FIG1_ENV,
        level=LEAVES_LEVEL,
        text=(
            "GP-UCB leaves the x* region: late in the run it samples away from x* (per-round "
            f"regret over [T/2, T] >= {LEAVES_LEVEL:.3g}, half of f(x*) - f(x0))"
        ),
        source=_SRC
        + " (middle): 'eliminates the optimal region (and x*) early on ... and continues "
        "sampling points in the suboptimal region around x0'",
    ),
    *(below_random(a, source="floor") for a in ("gp-ucb-corruption", "fast-slow-gp-ucb")),
)

register(
    Experiment(
        name="bkc2020-fig1",
        title="Bogunovic–Krause–Scarlett 2020, Fig. 1: GP-UCB vs corruption-aware agents",
        citation=_BKC + ", §2 and Fig. 1",
        protocol=(
            "Fig. 1 setting: 1-D SE kernel sum with f(x*) = 1.15 and a local maximum "
            "f(x0) = 0.72; Gaussian noise (sigma = 0.1); observations sampled within 0.1 of "
            "x* corrupted by -f(x*)/3 until C = 3.5 is spent (targeted model); C declared "
            "known. Known-or-zero check: Chowdhury-Gopalan SE objective, C = 10 declared, "
            "no corruption. lambda = 1, delta = 0.1, default ('experiment') schedules; "
            "the figure shows the first 50 rounds, the regret runs T = 1000 rounds."
        ),
        envs=(FIG1_ENV, KNOWN_OR_ZERO_ENV),
        paper=(_a("gp-ucb"), _a("gp-ucb-corruption"), _a("fast-slow-gp-ucb")),
        extra=(_a("fast-slow-gp-ucb-unknown"),),
        seeds=20,
        horizon=1000,
        quick_seeds=10,
        quick_horizon=300,
        quick_note=(
            "10 seeds x T = 300: the budget C = 3.5 buys 9 corrupted samples, spent by round "
            "26-63 in every measured run, so T = 300 leaves >= 237 rounds after the attack "
            "for the recovery / lock-in claims; the full run (20 x 1000) tightens the CIs."
        ),
        metric="regret",
        kind="corruption",
        claims=_CLAIMS,
        expect=(
            "paper: GP-UCB linear on Fig. 1, the corruption-aware agents sublinear. Measured "
            "(README): with the printed numbers the corrupted optimum f(x*) - f(x*)/3 = 0.767 "
            "still exceeds f(x0) = 0.72 and C = 3.5 buys 9 corrupted samples, so GP-UCB "
            "recovers; every agent's R_t is sublinear."
        ),
    )
)
