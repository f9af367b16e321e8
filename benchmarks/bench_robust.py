"""Per-round cost of the issue-19 robust agents next to naive references, in one run.

On ``hbo/Frequency-SE-v0`` (100 arms, the CG SE objective, ``T_c = 10`` corruptions of
``1e12``) it prints, for each agent, the mean per-round time (``act`` + ``update``, agent
only) in blocks of rounds, and for a naive reference written from the formulas (a ``t x t``
solve from scratch at round ``t``, timed at growing ``t`` on the agent's own history):

- ``rcgp-ucb`` — one engine update per round (flat in ``t``); naive: the RCGP posterior
  ``k^T (K_t + sigma^2 J)^{-1} (y - m_w)`` and its variance by a ``t x t`` solve;
- ``rcgp-ucb-adaptive`` — a fresh engine fed one observation per distinct arm each round
  (``O(t + |S| n^2)``, bounded once every arm is played); naive: two ``t x t`` solves
  (anchor and acquisition model);
- ``ec-gp-ucb`` — GP-UCB's cost; naive: one ``t x t`` solve;
- ``outlier-gp-ucb`` — a Student-t Laplace fit on ``|S|`` latent values every
  ``n_schedule = 2`` rounds plus a refit on the inliers; naive: the Laplace mode by
  ``scipy.optimize.minimize`` (BFGS) on the exact log posterior over the ``t`` observations'
  latent values plus a ``t x t`` solve.

BLAS is limited to one thread for both columns (as the harness runs every cell), so an
oversubscribed machine does not penalise the naive LAPACK solves more than the engine.

Run: ``python benchmarks/bench_robust.py`` (``--quick``: T = 300). Not a test: timings
depend on the machine and its load (printed); compare the columns, not absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import gymnasium as gym
import numpy as np
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

import agents
import hbo_envs  # noqa: F401
from agents.robust.rcgp_ucb import pimq_weight_terms

ENV = "hbo/Frequency-SE-v0"
AGENTS = ("gp-ucb", "rcgp-ucb", "rcgp-ucb-adaptive", "ec-gp-ucb", "outlier-gp-ucb")


def timed_run(name: str, T: int, blocks: int):
    env = gym.make(ENV, horizon=T).unwrapped
    env.reset(seed=0)
    ag = agents.make(name)
    ag.reset(env.problem, seed=0)
    edges = np.linspace(0, T, blocks + 1).astype(int)
    per_block = np.zeros(blocks)
    arms, ys = [], []
    perf = time.perf_counter
    for b in range(blocks):
        spent = []
        for _ in range(edges[b], edges[b + 1]):
            s = perf()
            a = ag.act()
            m = perf()
            _, y, _, _, _ = env.step(a)
            s2 = perf()
            ag.update(a, y)
            spent.append((m - s) + (perf() - s2))
            arms.append(a)
            ys.append(y)
        per_block[b] = 1e6 * float(np.median(spent))  # median: robust to a loaded machine
    return per_block, ag, np.asarray(arms), np.asarray(ys)


def _solve(K, arms, targets, noise):
    Kt = K[np.ix_(arms, arms)] + np.diag(noise)
    kx = K[:, arms]
    mu = kx @ np.linalg.solve(Kt, targets)
    var = np.diag(K) - np.einsum("ij,ji->i", kx, np.linalg.solve(Kt, kx.T))
    return mu, var


def naive_round(name: str, ag, K, arms, ys) -> None:
    """One naive posterior computation on the first ``len(arms)`` observations."""
    lam = 1.0
    if name in ("gp-ucb", "ec-gp-ucb"):
        _solve(K, arms, ys, np.full(arms.size, lam))
    elif name == "rcgp-ucb":
        J, sh = pimq_weight_terms(ys, ag.L_, ag.c_, lam)
        _solve(K, arms, ys - sh, lam * J)
    elif name == "rcgp-ucb-adaptive":
        J, sh = pimq_weight_terms(ys[:-1], ag.L_anchor_, ag.c_, lam)
        muA, _ = _solve(K, arms[:-1], ys[:-1] - sh, lam * J)
        J, sh = pimq_weight_terms(ys - muA[arms], ag.L_, ag.c_, lam)
        _solve(K, arms, ys - sh, lam * J)
    else:  # outlier-gp-ucb: exact Student-t MAP over the t latent values, then a t x t GP
        nu, s = ag.nu_, ag.scale_
        Kt = K[np.ix_(arms, arms)] + 1e-8 * np.eye(arms.size)
        Ki = np.linalg.inv(Kt)

        def nlp(f):
            return -(np.sum(stats.t.logpdf((ys - f) / s, nu)) - 0.5 * f @ Ki @ f)

        optimize.minimize(nlp, np.zeros(arms.size), method="L-BFGS-B")
        _solve(K, arms, ys, np.full(arms.size, lam))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    T = 300 if args.quick else 1000
    blocks = 5
    checkpoints = [T // 10, T // 2, T]
    print(
        f"# bench_robust: {ENV}, T = {T}, python {platform.python_version()}, "
        f"{platform.machine()}, load average {os.getloadavg()} at start"
    )
    for name in AGENTS:
        per_block, ag, arms, ys = timed_run(name, T, blocks)
        K = np.asarray(ag.problem_.kernel_matrix)
        naive = {}
        for t in checkpoints:
            reps = []
            for _ in range(3):  # best of 3: robust to a loaded machine
                s = time.perf_counter()
                naive_round(name, ag, K, arms[:t], ys[:t])
                reps.append(time.perf_counter() - s)
            naive[t] = 1e6 * min(reps)
        blk = ", ".join(f"{x:,.0f}" for x in per_block)
        nv = ", ".join(f"t={t}: {v:,.0f}" for t, v in naive.items())
        print(
            f"{name:20s} agent median us/round by block of {T // blocks}: [{blk}] | "
            f"naive us/round (best of 3): {nv}"
        )
    print(f"# load average at end {os.getloadavg()}")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
