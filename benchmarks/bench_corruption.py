"""Per-round cost of the unknown-C agent (Bogunovic et al. 2020, Alg. 3) at T = 2 * 10^4.

Prints, in one run, on the Figure 1 env (201 points, ``ceil(log2 T) = 15`` layers, the
printed attack):

- the mean per-round time (``act`` + ``update``, agent only) of
  ``fast-slow-gp-ucb-unknown`` in blocks of rounds over the whole run: flat in ``t``
  (each round updates one layer's engine, O(n^2), plus O(L n) set bookkeeping);
- the same for ``fast-slow-gp-ucb`` (Alg. 2) and ``gp-ucb-corruption`` (Alg. 1);
- a naive reference of Alg. 3 written from the formulas (each round re-solves the sampled
  layer's ``t_ell x t_ell`` system from scratch and recomputes every set), timed per round
  at growing ``t``: its cost grows with ``t``; the speed-up column compares it with the
  agent at the same ``t``.

Run: ``python benchmarks/bench_corruption.py`` (``--quick``: T = 2000). Not a test:
timings depend on the machine and its load; compare the columns, not absolute numbers.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import gymnasium as gym
import numpy as np
from bench_agents import env_agent_seconds
from scipy import linalg

import agents
import hbo_envs  # noqa: F401


def timed_run(name: str, T: int, blocks: int) -> tuple[np.ndarray, float]:
    """Per-block mean microseconds per round of ``name`` over a ``T``-round Fig. 1 run."""
    env = gym.make("hbo/Corrupted-Fig1-v0", horizon=T).unwrapped
    env.reset(seed=0)
    ag = agents.make(name)
    ag.reset(env.problem, seed=0)
    edges = np.linspace(0, T, blocks + 1).astype(int)
    t0 = time.perf_counter()
    spent, _, _ = env_agent_seconds(env, ag, T)
    wall = time.perf_counter() - t0
    per_block = np.array(
        [1e6 * spent[lo:hi].mean() for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    )
    return per_block, wall


def naive_alg3_round_cost(T: int, checkpoints: list[int], reps: int = 3) -> dict[int, float]:
    """Microseconds of one naive Alg. 3 round when the sampled layer holds ``t`` points."""
    env = gym.make("hbo/Corrupted-Fig1-v0", horizon=T).unwrapped
    K = np.asarray(env.problem.kernel_matrix)
    n = K.shape[0]
    L = math.ceil(math.log2(T))
    rng = np.random.default_rng(0)
    out = {}
    for t in checkpoints:
        idx = rng.integers(n, size=t)
        y = rng.standard_normal(t)
        times = []
        for _ in range(reps):
            s = time.perf_counter()
            Kt = K[np.ix_(idx, idx)] + np.eye(t)  # eq. (4)-(5) with lambda = 1
            c = linalg.cho_factor(Kt, lower=True, check_finite=False)
            W = linalg.cho_solve(c, K[idx, :], check_finite=False)
            mu = W.T @ y
            var = np.diag(K) - np.einsum("ti,ti->i", K[idx, :], W)
            gamma = float(np.sum(np.log(np.diag(c[0]))))  # 1/2 ln det(I + K_t)
            beta = 1.36 + 0.1 * math.sqrt(2 * (gamma + 6.1)) + 1.0
            w = beta * np.sqrt(np.maximum(var, 0))
            for _ in range(L):  # sets (33)-(34) from the stored bounds
                _ = (mu + w) >= np.max(mu - w)
            times.append(time.perf_counter() - s)
        out[t] = 1e6 * float(np.median(times))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="T = 2000 instead of 2 * 10^4")
    args = ap.parse_args()
    T = 2_000 if args.quick else 20_000
    blocks = 10
    print(
        f"# bench_corruption: T = {T}, Fig. 1 env (201 points), "
        f"{platform.processor() or platform.machine()}"
    )
    print(f"# layers of the unknown-C agent: ceil(log2 T) = {math.ceil(math.log2(T))}")
    edges = np.linspace(0, T, blocks + 1).astype(int)
    rows = {}
    for name in ("fast-slow-gp-ucb-unknown", "fast-slow-gp-ucb", "gp-ucb-corruption"):
        rows[name] = timed_run(name, T, blocks)
    print("\nper-round agent time (µs) by block of rounds:")
    head = f"{'rounds':>14s} " + " ".join(f"{n:>26s}" for n in rows)
    print(head)
    for b in range(blocks):
        cells = " ".join(f"{rows[n][0][b]:26.1f}" for n in rows)
        print(f"{edges[b] + 1:>6d}-{edges[b + 1]:<7d} {cells}")
    for n, (pb, wall) in rows.items():
        print(
            f"{n}: last/first block = {pb[-1] / pb[0]:.2f} (flat ~ 1); run wall time {wall:.1f} s"
        )
    unk = rows["fast-slow-gp-ucb-unknown"][0]
    cps = [250, 500, 1000, 2000] if args.quick else [500, 1000, 2000, 4000]
    naive = naive_alg3_round_cost(T, cps)
    print("\nnaive Alg. 3 round (re-solve the layer's t x t system) vs the agent's mean round:")
    print(f"{'t_layer':>8s} {'naive µs':>10s} {'agent µs':>10s} {'speed-up':>9s}")
    for t, us in naive.items():
        print(f"{t:8d} {us:10.0f} {unk.mean():10.1f} {us / unk.mean():9.1f}")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # as the harness runs cells: one BLAS thread
        main()
