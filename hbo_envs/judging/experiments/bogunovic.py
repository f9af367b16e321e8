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

from dataclasses import dataclass

import numpy as np

from hbo_envs.judging.experiments._core import Experiment, _a, register
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    REPRODUCES,
    Claim,
    ClaimContext,
    Verdict,
    below_random,
    less,
    linear,
    sublinear,
)

__all__ = ["FIG1_ENV", "KNOWN_OR_ZERO_ENV", "WithinFactor"]

FIG1_ENV = "hbo/Corrupted-Fig1-v0"
KNOWN_OR_ZERO_ENV = "hbo/Corrupted-SE-None-v0"
_BKC = (
    "Bogunovic, Krause & Scarlett, Corruption-Tolerant Gaussian Process Bandit Optimization, "
    "AISTATS 2020"
)


@dataclass(frozen=True)
class WithinFactor(Claim):
    """``mean R_T(a) / mean R_T(b) <= factor`` (the ratio's 95% bootstrap CI over paired
    seeds below ``factor``: reproduces; above: does not; else inconclusive)."""

    a: str = ""
    b: str = ""
    factor: float = 5.0
    env: str | None = None

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        for env in self._envs(ctx, self.env):
            miss = self._missing(ctx, env, (self.a, self.b))
            if miss:
                out.append(miss)
                continue
            # pair the two agents' R_T by seed (a seed one of them did not finish is left out)
            f = ctx.final[ctx.final["env_id"] == env]
            ra = f[f["agent"] == self.a].set_index("seed")["regret"]
            rb = f[f["agent"] == self.b].set_index("seed")["regret"]
            common = ra.index.intersection(rb.index)
            k = len(common)
            if k == 0:
                out.append(self._verdict(env, INCONCLUSIVE, "no seed finished by both agents"))
                continue
            pairs = np.column_stack(
                [ra.loc[common].to_numpy(dtype=float), rb.loc[common].to_numpy(dtype=float)]
            )

            def ratio(x: np.ndarray) -> float:
                return float(np.mean(x[:, 0]) / max(np.mean(x[:, 1]), 1e-300))

            # resample seeds (rows) with replacement, keeping each seed's pair together
            rng = np.random.default_rng(0)
            boots = [ratio(pairs[rng.integers(k, size=k)]) for _ in range(2000)]
            lo, hi = (float(q) for q in np.quantile(boots, [0.025, 0.975]))
            r = ratio(pairs)
            if hi <= self.factor:
                verdict = REPRODUCES
            elif lo > self.factor:
                verdict = DOES_NOT
            else:
                verdict = INCONCLUSIVE
            ev = (
                f"R_T ratio {self.a}/{self.b} = {r:.3g} [{lo:.3g}, {hi:.3g}] "
                f"vs {self.factor:g} (n = {k})"
            )
            out.append(self._verdict(env, verdict, ev))
        return out


_SRC = "§2 and Fig. 1"
_CLAIMS: tuple[Claim, ...] = (
    linear(
        "gp-ucb",
        env=FIG1_ENV,
        t_from=0.1,
        text="GP-UCB locks onto x0 after the attack: R_t grows linearly",
        source=_SRC + " (middle)",
    ),
    sublinear(
        "gp-ucb-corruption",
        env=FIG1_ENV,
        t_from=0.1,
        text="GP-UCB with known C (Alg. 1) finds x* once the budget is spent: R_t sublinear",
        source=_SRC + " (right), Theorem 5",
    ),
    sublinear(
        "fast-slow-gp-ucb",
        env=FIG1_ENV,
        t_from=0.1,
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
    WithinFactor(
        "with C = 0, Fast-Slow GP-UCB's R_T is within a constant factor (x5) of GP-UCB's",
        "Theorem 9 (27)",
        "fast-slow-gp-ucb",
        "gp-ucb",
        5.0,
        KNOWN_OR_ZERO_ENV,
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
