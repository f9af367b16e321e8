"""False-flag rate of the leaderboard's hidden-seed test, by simulation (issue 37 item 4,
issue 38 item 1).

A genuine agent's public and hidden ``R_T`` are exchangeable across seeds; the envs of a
suite are correlated through the seed (one seed draws every env's objective and noise).
This script draws such verifications under the null — ``R_T[seed, env] = rho * common[seed]
+ sqrt(1 - rho^2) * own[seed, env]`` — and reports, side by side, how often

- the single test of the previous design (4 hidden seeds, ``p < 0.01``) flags, and
- the two-stage design (:func:`hbo_envs.leaderboard.verify.verify`: a second, independent
  draw of ``min_hidden_seeds(n, FLAG_P2)`` seeds must also give ``p < FLAG_P2``) flags,

for the committed suites' 10 public seeds and 7 envs. The rank statistic is the verifier's
own (:func:`~hbo_envs.leaderboard.verify.fresh_seed_test`). Run::

    PYTHONPATH=. python benchmarks/bench_hidden_flag.py [--trials 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hbo_envs.leaderboard.verify import FLAG_P, FLAG_P2, fresh_seed_test, min_hidden_seeds


def draw(rng: np.random.Generator, seeds: int, envs: int, rho: float) -> np.ndarray:
    common = rng.normal(size=(seeds, 1))
    return rho * common + np.sqrt(1 - rho**2) * rng.normal(size=(seeds, envs))


def p_value(pub: np.ndarray, hid: np.ndarray) -> float:
    envs = range(pub.shape[1])
    return fresh_seed_test({e: list(pub[:, e]) for e in envs}, {e: list(hid[:, e]) for e in envs})[
        1
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20000)
    ap.add_argument("--public", type=int, default=10)
    ap.add_argument("--envs", type=int, default=7)
    args = ap.parse_args()
    n, E = args.public, args.envs
    m1, m2 = min_hidden_seeds(n), min_hidden_seeds(n, FLAG_P2)
    print(
        f"n = {n} public seeds, {E} envs; stage 1: {m1} hidden at p < {FLAG_P}; stage 2: "
        f"{m2} fresh hidden at p < {FLAG_P2}; {args.trials} null verifications per row"
    )
    print(f"{'rho':>5} {'one test (old)':>15} {'two-stage (new)':>16} {'bound':>7} {'s':>6}")
    for rho in (0.0, 0.5, 0.9, 0.99):
        rng = np.random.default_rng(int(rho * 1000))
        t0 = time.perf_counter()
        first = second = 0
        for _ in range(args.trials):
            x = draw(rng, n + m1, E, rho)
            if p_value(x[:n], x[n:]) < FLAG_P:
                first += 1
                y = draw(rng, m2, E, rho)  # the second draw: new seeds, same public ones
                second += p_value(x[:n], y) < FLAG_P2
        print(
            f"{rho:5.2f} {first / args.trials:15.5f} {second / args.trials:16.6f} "
            f"{FLAG_P2:7.3f} {time.perf_counter() - t0:6.1f}"
        )
    # power: an agent memorizing the public seeds (zero regret there, its usual elsewhere)
    x = draw(np.random.default_rng(1), n + m1 + m2, E, 0.5) + 5.0
    pub = np.zeros((n, E))
    print(
        f"memorizer: stage-1 p = {p_value(pub, x[:m1]):.2e}, "
        f"stage-2 p = {p_value(pub, x[m1:]):.2e} (flagged)"
    )


if __name__ == "__main__":
    main()
