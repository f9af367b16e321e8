"""Large candidate sets: the played-set engine and lazy kernels, side by side with today's
dense path (an ``n x n`` kernel matrix in the objective, the problem and the arm-space
engine), in one run.

Every configuration runs in its own subprocess, so its peak RSS (``ru_maxrss``) is its own.
The env is the issue's: ``hbo/GPBandit-v0`` with a random-rkhs objective (Matérn
``nu = 1.5``, ``l = 0.2``, 2-D points uniform on ``[0, 1]^2``, 100 support points),
Student-t(3) rewards, horizon ``T``.

Printed, in one run:

1. ``n = 10^5``, ``T = 2000``, gp-ucb for all ``T`` rounds (new path): ``gym.make``,
   ``env.reset``, ``agent.reset``, the mean round cost early and late, ``|S|``, peak RSS,
   and the round cost in units of the time this machine takes for ``3 n |S|`` flops of
   ``dgemv`` on an ``n x |S|`` block measured in the same process (the issue's
   "round cost <= 3 n |S| flops' worth": a ratio <= 1 meets it).
2. Every agent's round cost at ``n = 10^5`` (``--agent-rounds`` rounds each; ATA-GP-UCB
   keeps its own posterior: Nyström computes its dictionary arms' kernel rows on demand,
   QFF refuses this section's Matérn kernel with the reason).
3. Memory and time of both paths at the same ``n``: today's dense path at the sizes that
   fit (``--today-n``), the played-set path (lazy kernel, played-set engine, forced below
   8192 arms where ``"auto"`` keeps today's path) at those, the new path at
   ``n = 20000``, and today's peak RSS
   extrapolated to ``n = 20000`` by a least-squares fit ``a + b n^2`` (the dense path
   holds a fixed number of ``n x n`` arrays). Today's path at 20000 needs ~21 GB (the
   issue's measurement) and runs only with ``--today-at-20000``.

Run: ``nice -n 5 python benchmarks/bench_scale.py`` (``--quick``: a smoke run at small sizes,
``--sections 1 3``: some sections). Not a test: timings depend on the machine and its load
(printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

ENV_ID = "hbo/GPBandit-v0"
KERNEL = {"name": "matern", "nu": 1.5, "lengthscale": 0.2}


def _objective(n: int, dense: bool):
    spec = {"name": "random-rkhs", "kernel": KERNEL, "n_points": n, "dim": 2}
    if not dense:
        return spec
    from hbo_envs.kernels import LazyKernelMatrix
    from hbo_envs.objectives import Objective, random_rkhs

    def draw(rng: np.random.Generator) -> Objective:
        obj = random_rkhs(rng, KERNEL, n_points=n, dim=2)
        if isinstance(obj.kernel_matrix, LazyKernelMatrix):  # today: always n x n
            K = obj.kernel(obj.points)
            return Objective(obj.name, obj.points, obj.values, obj.kernel, K, obj.B, 0.0, {})
        return obj

    return draw


def _flop_reference(n: int, m: int) -> float:
    """Seconds for ``3 n m`` flops of ``dgemv`` on an ``n x m`` Fortran block (1.5 calls)."""
    G = np.ones((n, max(m, 1)), order="F")
    w = np.ones(G.shape[1])
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        G @ w
        times.append(time.perf_counter() - t0)
    return 1.5 * float(np.median(times))


def child(cfg: dict) -> dict:
    """One configuration, in this process: returns its timings and peak RSS."""
    import gymnasium as gym

    import agents
    import hbo_envs  # noqa: F401  (registers the envs)
    from agents.gp import engine as engine_mod

    dense = cfg["path"] == "today"
    if dense:  # today's engine: the n x n covariance whatever n and T are
        engine_mod.ARM_SPACE_MAX_N = 10**9
        engine_mod.PLAYED_MIN_N = 10**18
    if cfg["path"] == "played":  # the new regime at any n: lazy kernel, played-set engine
        import hbo_envs.objectives.rkhs as rkhs_mod

        engine_mod.ARM_SPACE_MAX_N = 0
        rkhs_mod.DENSE_MAX_N = 0
    n, T = cfg["n"], cfg["T"]
    out: dict = {"cfg": cfg}
    t0, c0 = time.perf_counter(), time.process_time()
    env = gym.make(
        ENV_ID, objective=_objective(n, dense), channel={"name": "student_t", "df": 3}, horizon=T
    )
    t1, c1 = time.perf_counter(), time.process_time()
    env.reset(seed=0)
    t2, c2 = time.perf_counter(), time.process_time()
    # Wall and CPU time (the CPU time of this process: what a loaded machine inflates least).
    out.update(make_s=t1 - t0, reset_s=t2 - t1, make_cpu_s=c1 - c0, reset_cpu_s=c2 - c1)
    problem = env.unwrapped.problem
    agent = agents.make(cfg["agent"])
    try:
        agent.reset(problem, seed=0)
    except ValueError as exc:  # e.g. a size refused before allocating
        out["refused"] = str(exc).split(";")[0][:160]
        out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return out
    out["agent_reset_s"] = time.perf_counter() - t2
    eng = getattr(agent, "engine_", None)
    out["representation"] = getattr(eng, "representation", "-")
    times = []
    for _ in range(cfg["rounds"]):
        s = time.perf_counter()
        a = agent.act()
        _, r, _, _, _ = env.step(a)
        agent.update(a, r)
        times.append(time.perf_counter() - s)
    w = max(1, min(50, len(times) // 4))
    out["early_ms"] = 1e3 * float(np.mean(times[:w])) if times else 0.0
    out["late_ms"] = 1e3 * float(np.mean(times[-w:])) if times else 0.0
    out["total_s"] = float(np.sum(times))
    # |S|: distinct arms in the engine (the largest layer's for layered agents).
    engines = [eng] if eng is not None else []
    for attr in ("fast_", "slow_"):
        if hasattr(agent, attr):
            engines.append(getattr(agent, attr).engine)
    engines += [layer.engine for layer in getattr(agent, "layers_", [])]
    out["S"] = max((len(e.played) for e in engines if hasattr(e, "played")), default=0)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if cfg.get("flops"):  # after the RSS: the reference allocates its own n x |S| block
        out["ref_3nS_ms"] = 1e3 * _flop_reference(n, out["S"])
    return out


def run(cfg: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(cfg)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return {"cfg": cfg, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--T", type=int, default=2000)
    ap.add_argument("--agent-rounds", type=int, default=200)
    ap.add_argument("--today-n", type=int, nargs="*", default=[2000, 4000, 6000])
    ap.add_argument("--today-at-20000", action="store_true")
    ap.add_argument("--sections", type=int, nargs="*", default=[1, 2, 3], help="which of 1-3")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.quick:
        args.n, args.T, args.agent_rounds, args.today_n = 9000, 60, 20, [500, 1000]
    mid = 20_000 if not args.quick else 9000
    print(f"bench_scale: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}, numpy {np.__version__}; "
          f"load average at start {os.getloadavg()[0]:.1f}")  # fmt: skip
    results: dict = {"load_start": os.getloadavg()}

    if 1 in args.sections:
        section1(args, results)
    if 2 in args.sections:
        section2(args, results)
    if 3 in args.sections:
        section3(args, results, mid)
    results["load_end"] = os.getloadavg()
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


def section1(args: argparse.Namespace, results: dict) -> None:
    """n = 10^5, T = 2000, gp-ucb for all T rounds."""
    full = run({"path": "new", "n": args.n, "T": args.T, "agent": "gp-ucb",
                "rounds": args.T, "flops": True})  # fmt: skip
    results["full"] = full
    print(f"\n1. new path, n = {args.n}, T = {args.T}, gp-ucb, all {args.T} rounds")
    if "error" in full:
        print("   failed:", full["error"])
    else:
        ratio = full["late_ms"] / full["ref_3nS_ms"]
        print(f"   gym.make {full['make_s']:.2f} s + env.reset {full['reset_s']:.2f} s = "
              f"{full['make_s'] + full['reset_s']:.2f} s wall, "
              f"{full['make_cpu_s'] + full['reset_cpu_s']:.2f} s CPU (target <= 10 s); "
              f"agent.reset {full['agent_reset_s'] * 1e3:.1f} ms")  # fmt: skip
        print(f"   round: {full['early_ms']:.1f} ms early, {full['late_ms']:.1f} ms late "
              f"at |S| = {full['S']}; 3 n |S| flops of dgemv here: "
              f"{full['ref_3nS_ms']:.1f} ms -> late round = {ratio:.2f} x "
              "(target <= 1)")  # fmt: skip
        print(f"   peak RSS {full['rss_mb'] / 1024:.2f} GB (target <= 4 GB); whole run "
              f"{full['total_s']:.0f} s")  # fmt: skip


def section2(args: argparse.Namespace, results: dict) -> None:
    """Each agent's round cost at n = 10^5."""
    import agents

    print(f"\n2. every agent at n = {args.n} (T = {args.T}), {args.agent_rounds} rounds each")
    print(f"   {'agent':<27} {'engine':>7} {'early ms':>9} {'late ms':>8} {'|S|':>5} "
          f"{'3n|S| ms':>9} {'RSS GB':>7}")  # fmt: skip
    results["agents"] = []
    for name in agents.available():
        r = run({"path": "new", "n": args.n, "T": args.T, "agent": name,
                 "rounds": args.agent_rounds, "flops": True})  # fmt: skip
        results["agents"].append(r)
        if "error" in r or "refused" in r:
            why = r.get("refused") or r.get("error")
            print(f"   {name:<27} refused: {why}")
            continue
        print(f"   {name:<27} {r['representation']:>7} {r['early_ms']:>9.1f} "
              f"{r['late_ms']:>8.1f} {r['S']:>5} {r['ref_3nS_ms']:>9.2f} "
              f"{r['rss_mb'] / 1024:>7.2f}")  # fmt: skip


def section3(args: argparse.Namespace, results: dict, mid: int) -> None:
    """Both paths side by side; today's extrapolated to n = 20000."""
    print("\n3. today's dense path vs the played-set path at equal n, and the new path "
          f"(auto) at n = {mid} (gp-ucb, {min(100, args.T)} rounds, same env)")  # fmt: skip
    print(f"   {'n':>6} {'path':>6} {'make+reset s':>13} {'round ms':>9} {'RSS GB':>7}")
    rows = []
    rounds3 = min(100, args.T)
    sizes = [(n, p) for n in args.today_n for p in ("today", "played")] + [(mid, "new")]
    if args.today_at_20000:
        sizes.append((mid, "today"))
    for n, path in sizes:
        r = run({"path": path, "n": n, "T": args.T, "agent": "gp-ucb", "rounds": rounds3})
        rows.append(r)
        if "error" in r:
            print(f"   {n:>6} {path:>6} failed: {r['error']}")
            continue
        print(f"   {n:>6} {path:>6} {r['make_s'] + r['reset_s']:>13.2f} "
              f"{r['late_ms']:>9.1f} {r['rss_mb'] / 1024:>7.2f}")  # fmt: skip
    results["paths"] = rows
    today = [(r["cfg"]["n"], r["rss_mb"]) for r in rows
             if r["cfg"]["path"] == "today" and "rss_mb" in r]  # fmt: skip
    new_mid = next((r for r in rows if r["cfg"] == {"path": "new", "n": mid, "T": args.T,
                    "agent": "gp-ucb", "rounds": rounds3} and "rss_mb" in r), None)  # fmt: skip
    if len(today) >= 2 and new_mid:
        ns = np.array([t[0] for t in today], dtype=float)
        rss = np.array([t[1] for t in today])
        A = np.column_stack([np.ones_like(ns), ns**2])
        (a, b), *_ = np.linalg.lstsq(A, rss, rcond=None)
        est = a + b * mid**2
        print(f"   today's peak RSS fitted as {a:.0f} MB + {b * 1e6:.1f} MB x (n/1000)^2 "
              f"({b * 1e6 / 8:.1f} n x n float64 arrays): {est / 1024:.1f} GB at n = {mid}; "
              f"new path measured {new_mid['rss_mb'] / 1024:.2f} GB -> "
              f"{est / new_mid['rss_mb']:.1f} x less (target >= 5 x)")  # fmt: skip
        results["today_fit_mb"] = {"a": a, "b": b, "estimate_at_mid": est}


if __name__ == "__main__":
    main()
