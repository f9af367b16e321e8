"""How the candidate comparison rules behave at the archive's seed counts, side by side.

The measurement behind the claims' comparison rule (issue 38): for each candidate rule
and each number of paired seeds ``n``, the share of simulated comparisons it *decides*
(either direction) when there is no difference (nominal 5%), under Gaussian and under
heavy-tailed (Student-t, df = 2) per-seed differences, and its power (share decided in
the right direction) at a stated effect: a mean difference of one standard deviation of
the Gaussian differences (``effect = 1``).

Candidates:

- ``bootstrap`` — the former rule: 95% percentile paired-bootstrap CI of the mean excludes 0;
- ``paired t`` — Student's t CI of the mean difference excludes 0;
- ``wilcoxon`` — the signed-rank test's exact two-sided p <= 0.05 (``scipy``, method "exact");
- ``sign-flip`` — the exact sign-flip test of the mean (:func:`hbo_envs.harness.stats.sign_flip`),
  at ``n >= MIN_PAIRED_SEEDS`` (below: never decides). The rule the claims use.

Run: ``python benchmarks/bench_rules.py [--reps 2000]``. Monte Carlo numbers: a rate of
0.05 over ``reps`` replicates has standard error ``sqrt(0.05 * 0.95 / reps)`` (0.005 at 2000).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats as st

from hbo_envs.harness.stats import MIN_PAIRED_SEEDS, sign_flip_batch


def decided_bootstrap(D: np.ndarray, reps: int = 2000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R, n = D.shape
    out = np.empty(R, dtype=bool)
    for r in range(R):
        boot = D[r][rng.integers(n, size=(reps, n))].mean(axis=1)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        out[r] = hi < 0 or lo > 0
    return out


def decided_t(D: np.ndarray) -> np.ndarray:
    return st.ttest_1samp(D, 0.0, axis=1).pvalue <= 0.05


def decided_wilcoxon(D: np.ndarray) -> np.ndarray:
    return np.array([st.wilcoxon(d, method="exact").pvalue <= 0.05 for d in D])


def decided_sign_flip(D: np.ndarray) -> np.ndarray:
    if D.shape[1] < MIN_PAIRED_SEEDS:
        return np.zeros(D.shape[0], dtype=bool)
    _, lo, hi, _ = sign_flip_batch(D)
    return (hi < 0) | (lo > 0)


RULES = {
    "bootstrap": decided_bootstrap,
    "paired t": decided_t,
    "wilcoxon": decided_wilcoxon,
    "sign-flip": decided_sign_flip,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n", type=int, nargs="+", default=[3, 5, 6, 10, 20])
    args = ap.parse_args()
    rng = np.random.default_rng(2026)
    R = args.reps
    print(f"share decided over {R} replicates (null: nominal 0.05; power: effect = 1 sd)")
    head = f"{'n':>3s} {'law':>10s} " + " ".join(f"{k:>11s}" for k in RULES)
    print(head)
    for n in args.n:
        laws = {
            "null N": rng.normal(size=(R, n)),
            "null t2": rng.standard_t(2, size=(R, n)),
            "power N": rng.normal(size=(R, n)) - 1.0,
        }
        for law, D in laws.items():
            cells = " ".join(f"{float(np.mean(f(D))):11.3f}" for f in RULES.values())
            print(f"{n:3d} {law:>10s} {cells}")


if __name__ == "__main__":
    main()
