"""ATA-GP-UCB (QFF and Nyström) speed, side by side with a naive Algorithm 2.

Prints, in one run (agent time only, ``act`` + ``update``):

1. the mean per-round time of ``ata-gp-ucb-qff`` and ``ata-gp-ucb-nystrom`` (both schedule
   sets for Nyström) in a window of rounds around ``t ~ 10^3`` and ``t ~ 2 * 10^4`` on the
   100-arm SE problem of Chowdhury–Gopalan §6, and their ratio (flat in ``t``: ratio ~ 1);
2. a full ``T = 1000`` run of the naive Algorithm 2 as printed (rebuild ``Phi~_t`` (t x m),
   ``V~_t``, ``V~_t^{-1/2}``, truncate the ``m x t`` matrix ``u_{i,tau} y_tau``; Nyström:
   Algorithm 3 with one Bernoulli per past observation and a pseudo-inverse square root;
   numpy-vectorised, O(m^2 t) per round) beside ours, and the speed-up;
3. one full ``T = 1000`` run on the 100-arm problem (the authors' MATLAB code under Octave:
   Nyström 12.0 s, QFF 94 s on a 2-core machine) and on Park–Lee's 1-D problem
   (``hbo/RKHS1D-SymPareto-eps02-v0``, 1000 arms; Park–Lee Table 1: 7,746 s per ATA run).

Run: ``python benchmarks/bench_ata.py`` (``--quick`` for a smoke run). Not a test: timings
depend on the machine and its load; compare the columns, not absolute numbers.
"""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym
import numpy as np
from bench_agents import _per_round_times, make_problem
from threadpoolctl import threadpool_limits

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from agents.features.nystrom import pinv_sqrt_psd
from agents.features.qff import qff_features

ATA = ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom")


def _inv_sqrt(V: np.ndarray) -> np.ndarray:
    e, U = np.linalg.eigh(V)
    return (U / np.sqrt(e)) @ U.T


def naive_run(kind: str, problem, f: np.ndarray, noise: np.ndarray, seed: int = 0) -> float:
    """Seconds for a full run of Algorithm 2 exactly as printed (experiment schedules).

    Schedules come from a fresh agent's ``b_``/``beta_`` (its ``m_`` set to the naive
    ``m_t``) so both sides run the same formulas; everything else is rebuilt every round.
    """
    T, K, lam = problem.horizon, np.asarray(problem.kernel_matrix), 1.0
    sched = agents.make(kind)
    sched.reset(problem, seed=seed)
    rng = np.random.default_rng(seed)
    n = problem.n
    kdiag = np.diag(K)
    mu, var = np.zeros(n), kdiag.copy()
    arms, ys = [], []
    F_qff = qff_features(problem.points, problem.kernel.lengthscale, 32) if "qff" in kind else None
    t0 = time.perf_counter()
    for t in range(1, T + 1):
        a = int(np.argmax(mu + sched.beta_(t) * np.sqrt(np.maximum(var, 0.0))))
        arms.append(a)
        ys.append(float(f[a] + noise[t - 1]))
        if F_qff is not None:
            F = F_qff
        else:  # Alg. 3, experiment set: one draw per distinct arm played
            p = np.minimum(sched.q_ * np.maximum(var, 0.0), 1.0)
            played = np.unique(arms)
            D = played[rng.random(played.size) < p[played]]
            if D.size == 0:
                mu, var = np.zeros(n), kdiag.copy()
                continue
            F = (pinv_sqrt_psd(K[np.ix_(D, D)]) @ K[D, :]).T
            sched.m_ = D.size
        Phi = F[arms]  # (t, m_t)
        V = Phi.T @ Phi + lam * np.eye(F.shape[1])
        Vis = _inv_sqrt(V)
        U = Vis @ Phi.T  # rows u_i (m_t, t)
        UY = U * np.asarray(ys)[None, :]
        r = np.where(np.abs(UY) <= sched.b_(t), UY, 0.0).sum(axis=1)
        mu = F @ (Vis @ r)
        quad = lam * np.einsum("xi,ij,xj->x", F, np.linalg.inv(V), F)
        var = quad if F_qff is not None else kdiag - np.sum(F * F, axis=1) + quad
    return time.perf_counter() - t0


def full_run(name: str, problem, f: np.ndarray, noise: np.ndarray, **params) -> float:
    agent = agents.make(name, **params)
    agent.reset(problem, seed=0)
    fl, nl = f.tolist(), noise.tolist()
    t0 = time.perf_counter()
    for t in range(problem.horizon):
        a = agent.act()
        agent.update(a, fl[a] + nl[t])
    return time.perf_counter() - t0


def env_problem(env_id: str, horizon: int):
    env = gym.make(env_id, horizon=horizon)
    env.reset(seed=0)
    u = env.unwrapped
    return u.problem, np.asarray(u.objective.values, dtype=float)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (not the targets)")
    args = ap.parse_args()
    marks = (1_000, 2_000) if args.quick else (1_000, 20_000)
    window = 200 if args.quick else 1_000
    T_full = 300 if args.quick else 1_000
    print(f"hbo-bench ATA-GP-UCB benchmark — numpy {np.__version__}, {platform.processor() or ''}")
    print("BLAS limited to one thread (as in a harness cell)\n")
    with threadpool_limits(1):
        problem, f = make_problem(100, max(marks) + window)
        print(f"1. per-round time (act + update) in ms on 100 arms, mean over {window} rounds")
        head = f"{'agent':<32} {f't~{marks[0]}':>9} {f't~{marks[1]}':>9} {'ratio':>6} {'m_t':>6}"
        print(head + "\n" + "-" * len(head))
        cases = [("ata-gp-ucb-qff", {}), ("ata-gp-ucb-nystrom", {})]
        cases.append(("ata-gp-ucb-nystrom", {"schedule": "theory"}))
        for name, params in cases:
            tt = _windows(name, params, problem, f, marks, window)
            a, b = tt[marks[0]] * 1e3, tt[marks[1]] * 1e3
            label = name + ("[theory]" if params else "")
            print(f"{label:<32} {a:>9.3f} {b:>9.3f} {b / a:>6.2f} {tt['m']:>6}")

        print(f"\n2. full T = {T_full} run on 100 arms: naive Algorithm 2 vs ours (seconds)")
        problem, f = make_problem(100, T_full)
        noise = np.random.default_rng(1).standard_t(3.0, size=T_full)
        for name in ATA:
            nv = naive_run(name, problem, f, noise)
            ours = full_run(name, problem, f, noise)
            print(
                f"  {name:<20} naive {nv:8.2f} s   ours {ours:6.2f} s   speed-up {nv / ours:6.1f}x"
            )
        ours = full_run("ata-gp-ucb-nystrom", problem, f, noise, schedule="theory")
        print(
            f"  {'ata-gp-ucb-nystrom[theory]':<26} ours {ours:6.2f} s"
            " (naive: m_t ~ t, O(t^3) per round)"
        )

        print(f"\n3. one full T = {T_full} run (authors' Octave: Nyström 12.0 s, QFF 94 s; "
              "Park–Lee Table 1, 1-D: 7,746 s)")  # fmt: skip
        for env_id in ("hbo/RKHS-SE-StudentT-v0", "hbo/RKHS1D-SymPareto-eps02-v0"):
            problem, f = env_problem(env_id, T_full)
            noise = np.random.default_rng(1).standard_t(3.0, size=T_full)
            for name in ATA:
                s = full_run(name, problem, f, noise)
                print(f"  {env_id:<32} n = {problem.n:>4} {name:<20} {s:7.2f} s")


def _windows(name, params, problem, f, marks, window):
    """Mean seconds per round around each mark (bench_agents' timing loop) and ``m_t``."""
    out = _per_round_times(agents.make(name, **params), problem, f, marks, window)
    out["m"] = out["agent"].m_
    return out


if __name__ == "__main__":
    main()
