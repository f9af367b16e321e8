"""Per-round cost of the GP agents, side by side with a naive ``t x t`` reference.

Prints, in one run:

- the mean per-round time (``act`` + ``update``, agent only) of every registered agent
  in a window of rounds around ``t ~ 10^3`` and around ``t ~ 2 * 10^4``, on 100 and on
  1000 points, and the ratio of the two (flat in ``t`` means ratio ~ 1);
- the per-round time of a naive GP-UCB reference at ``t = 2000`` (build ``K_t``,
  Cholesky-factor ``K_t + lambda I``, solve for all points, ``log det`` for ``gamma_t``:
  the paper formulas with no incremental state) and the speed-up of ``gp-ucb`` over it;
- the wall time of a full ``2 * 10^4``-round GP-UCB run on 100 points.

Run: ``python benchmarks/bench_agents.py`` (``--quick`` for a smoke run). Not a test:
timings depend on the machine; compare the columns, not absolute numbers.

``--against REV`` (e.g. ``7068763``, the GP core before the seed batching) instead runs
every agent (``--agents`` to choose) on the bench problem (``--n`` arms, ``--T`` rounds)
with this tree's code and with revision ``REV``'s (``git archive`` into a temporary
directory), each run in its own process with one BLAS thread, alternating the two
``--repeats`` times, and prints CPU us/round (``time.thread_time``, robust to a shared
machine) early, late and over the whole run side by side, the late/early ratio, the
speed-up and whether both trees played the same arms.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np
from scipy import linalg

import agents
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem


def make_problem(n: int, horizon: int) -> tuple[Problem, np.ndarray]:
    """``n`` points on [0, 1], SE kernel ``l = 0.2``, ``f`` a kernel sum with max|f| = 1."""
    X = np.linspace(0.0, 1.0, n)[:, None]
    kern = SquaredExponential(0.2)
    K = kern(X)
    rng = np.random.default_rng(0)
    support = rng.choice(n, size=min(n, 100), replace=False)
    a = rng.uniform(-1, 1, support.size)
    f = K[:, support] @ a
    scale = 1.0 / np.abs(f).max()
    a, f = a * scale, f * scale
    B = float(np.sqrt(a @ K[np.ix_(support, support)] @ a))
    p = Problem(
        points=X, kernel_matrix=K, kernel=kern, B=B, alpha=1.0, v=B * B + 3.0, nu=3.0,
        sup_f=1.0, horizon=horizon, name=f"bench-se-{n}",
    )  # fmt: skip
    return p, f


def env_agent_seconds(env, agent, T: int, clock=time.perf_counter):
    """Run ``agent`` on the (reset) unwrapped ``env`` for ``T`` rounds: the seconds spent
    in the agent each round (``act`` + ``update``, ``env.step`` excluded, by ``clock``),
    and the arms played and rewards seen."""
    spent = np.zeros(T)
    arms, ys = np.zeros(T, dtype=int), np.zeros(T)
    for t in range(T):
        s = clock()
        a = agent.act()
        m = clock()
        _, y, _, _, _ = env.step(a)
        s2 = clock()
        agent.update(a, y)
        spent[t] = (m - s) + (clock() - s2)
        arms[t], ys[t] = a, y
    return spent, arms, ys


def per_round_times(
    name: str, problem: Problem, f: np.ndarray, marks, window: int, repeats: int = 1
):
    """Mean seconds per round (act + update) in ``[m - window/2, m + window/2)``; the
    minimum over ``repeats`` identical runs (other processes only ever add time)."""
    runs = [_per_round_times(name, problem, f, marks, window) for _ in range(repeats)]
    out = {m: min(r[m] for r in runs) for m in marks}
    out["agent"] = runs[-1]["agent"]
    return out


def _per_round_times(name, problem: Problem, f: np.ndarray, marks, window: int):
    """As :func:`per_round_times`, one run; ``name`` may also be an agent instance."""
    agent = agents.make(name) if isinstance(name, str) else name
    agent.reset(problem, seed=0)
    T = max(marks) + window // 2
    noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
    fl = f.tolist()
    out = {}
    t = 0
    for m in sorted(marks):
        start = m - window // 2
        while t < start:  # untimed warm-up up to the window
            a = agent.act()
            agent.update(a, fl[a] + noise[t])
            t += 1
        t0 = time.perf_counter()
        for _ in range(window):
            a = agent.act()
            agent.update(a, fl[a] + noise[t])
            t += 1
        out[m] = (time.perf_counter() - t0) / window
    out["agent"] = agent
    return out


def naive_round(K: np.ndarray, lam: float, arms: np.ndarray, Y: np.ndarray, B, R, delta):
    """One GP-UCB round from scratch: mu, sigma over all points, gamma, argmax."""
    Kt = K[np.ix_(arms, arms)]
    A = Kt + lam * np.eye(len(arms))
    cf = linalg.cho_factor(A, lower=True, check_finite=False)
    W = linalg.cho_solve(cf, K[arms, :], check_finite=False)  # (K_t + lam I)^{-1} k_t(x)
    mu = W.T @ Y
    var = np.diag(K) - np.einsum("ti,ti->i", K[arms, :], W)
    gamma = float(np.sum(np.log(np.diag(cf[0])))) - 0.5 * len(arms) * math.log(lam)
    beta = B + R * math.sqrt(2 * (gamma + 1 + math.log(1 / delta)))
    return int(np.argmax(mu + beta * np.sqrt(np.maximum(var, 0.0))))


def naive_time(problem: Problem, f: np.ndarray, t: int, reps: int) -> float:
    """Seconds per naive round at history length ``t`` (best of ``reps``; history from GP-UCB)."""
    agent = agents.make("gp-ucb")
    agent.reset(problem, seed=0)
    noise = np.random.default_rng(1).standard_t(3.0, size=t)
    arms, Y = [], []
    for s in range(t):
        a = agent.act()
        y = float(f[a] + noise[s])
        agent.update(a, y)
        arms.append(a)
        Y.append(y)
    arms_a, Y_a = np.asarray(arms), np.asarray(Y)
    K = np.asarray(problem.kernel_matrix)
    R = problem.nu ** (1 / (1 + problem.alpha))
    naive_round(K, 1.0, arms_a, Y_a, problem.B, R, 0.1)  # warm-up
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        naive_round(K, 1.0, arms_a, Y_a, problem.B, R, 0.1)
        best = min(best, time.perf_counter() - t0)
    return best


#: The child process of ``--against``: one agent, one code tree (``PYTHONPATH``), the
#: bench problem built from APIs that every revision has; prints CPU us/round (one BLAS
#: thread) in the early and late windows, the mean over the run and the actions' digest.
CHILD = r"""
import hashlib, json, sys, time
import numpy as np
import agents
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem
name, n, T, W = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if name not in agents.available():
    print(json.dumps(None)); sys.exit()
X = np.linspace(0.0, 1.0, n)[:, None]
kern = SquaredExponential(0.2)
K = kern(X)
rng = np.random.default_rng(0)
support = rng.choice(n, size=min(n, 100), replace=False)
a = rng.uniform(-1, 1, support.size)
f = K[:, support] @ a
scale = 1.0 / np.abs(f).max()
a, f = a * scale, f * scale
B = float(np.sqrt(a @ K[np.ix_(support, support)] @ a))
p = Problem(points=X, kernel_matrix=K, kernel=kern, B=B, alpha=1.0, v=B * B + 3.0, nu=3.0,
            sup_f=1.0, horizon=T, name=f"bench-se-{n}")
noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
fl = f.tolist()
agent = agents.make(name)
agent.reset(p, seed=0)
clock = time.thread_time
spent = [0.0] * T
arms = [0] * T
for t in range(T):
    s = clock()
    x = agent.act()
    agent.update(x, fl[x] + noise[t])
    spent[t] = clock() - s
    arms[t] = x
sp = np.array(spent) * 1e6
print(json.dumps({"early": sp[W:2 * W].mean(), "late": sp[T - W:].mean(), "mean": sp.mean(),
                  "digest": hashlib.sha1(np.array(arms).tobytes()).hexdigest()[:10]}))
"""


def reference_tree(rev: str, into: str) -> str:
    """``git archive`` of revision ``rev`` of this repository unpacked under ``into``."""
    import subprocess
    import tarfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    tar = Path(into) / "ref.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(root), "archive", rev], stdout=fh, check=True)
    dest = Path(into) / "tree"
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    return str(dest)


def run_child(tree: str, name: str, n: int, T: int, window: int) -> dict | None:
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, str(n), str(T), str(window)],
        env=env, capture_output=True, text=True, check=True, cwd=tree,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def against(rev: str, names: list[str], n: int, T: int, window: int, repeats: int) -> None:
    """Every agent of ``names`` on this tree and on revision ``rev``, each run in its own
    process, alternating (ref, ours) ``repeats`` times; the minimum CPU time per cell
    (other processes only ever add time)."""
    import tempfile
    from pathlib import Path

    ours = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference_tree(rev, tmp)
        print(
            f"CPU us/round (act + update, one BLAS thread), {n} arms, T = {T}: early = rounds "
            f"{window}-{2 * window}, late = the last {window}, mean = all T; min of {repeats} "
            f"alternating runs; {rev} beside this tree"
        )
        head = (
            f"{'agent':<20} {'ref early':>9} {'late':>7} {'mean':>7} | {'ours early':>10} "
            f"{'late':>7} {'mean':>7} | {'late/early':>10} {'ref/ours':>8} same actions"
        )
        print(head)
        print("-" * len(head))
        for name in names:
            cells: dict[str, list] = {"ref": [], "ours": []}
            for _ in range(repeats):
                for key, tree in (("ref", ref), ("ours", ours)):
                    cells[key].append(run_child(tree, name, n, T, window))
            best = {}
            for key, runs in cells.items():
                if runs[0] is None:
                    best[key] = None
                    continue
                best[key] = {m: min(r[m] for r in runs) for m in ("early", "late", "mean")}
                best[key]["digest"] = runs[0]["digest"]
            o, r = best["ours"], best["ref"]
            rs = (
                f"{r['early']:>9.1f} {r['late']:>7.1f} {r['mean']:>7.1f}"
                if r
                else f"{'-':>9} {'-':>7} {'-':>7}"
            )
            same = "-" if r is None else str(r["digest"] == o["digest"])
            ratio = f"{r['mean'] / o['mean']:>8.2f}" if r else f"{'-':>8}"
            print(
                f"{name:<20} {rs} | {o['early']:>10.1f} {o['late']:>7.1f} {o['mean']:>7.1f} | "
                f"{o['late'] / o['early']:>10.2f} {ratio} {same}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (not the targets)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per cell; the minimum is shown")
    ap.add_argument(
        "--against",
        metavar="REV",
        help="instead: every agent beside revision REV's code (git archive), in one run",
    )
    ap.add_argument("--agents", default=None, help="comma-separated names (--against)")
    ap.add_argument("--T", type=int, default=10_000, help="rounds per run (--against)")
    ap.add_argument("--n", type=int, default=100, help="arms (--against)")
    args = ap.parse_args()
    if args.against:
        names = args.agents.split(",") if args.agents else list(agents.available())
        lscpu = platform.processor() or platform.machine()
        print(f"hbo-bench agents vs {args.against} — numpy {np.__version__}, {lscpu}")
        window = min(500, args.T // 4)
        against(args.against, names, args.n, args.T, window, args.repeats)
        return
    marks = (1_000, 2_000) if args.quick else (1_000, 20_000)
    window = 200 if args.quick else 2_000
    sizes = (100,) if args.quick else (100, 1000)
    t_naive = 300 if args.quick else 2_000

    print(f"hbo-bench agents benchmark — numpy {np.__version__}, {platform.processor() or ''}")
    print(
        f"per-round time (act + update) in us, mean over {window} rounds around t "
        f"(minimum of {args.repeats} runs)\n"
    )
    head = f"{'agent':<12} {'n':>5} {f't~{marks[0]}':>10} {f't~{marks[1]}':>10} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    fast = {}
    for n in sizes:
        problem, f = make_problem(n, max(marks) + window)
        for name in (n for n in agents.available() if not n.startswith("ata-")):
            # ATA-GP-UCB has its own benchmark (bench_ata.py, beside its naive Alg. 2).
            tt = per_round_times(name, problem, f, marks, window, args.repeats)
            a, b = tt[marks[0]] * 1e6, tt[marks[1]] * 1e6
            fast[(name, n)] = tt
            print(f"{name:<12} {n:>5} {a:>10.1f} {b:>10.1f} {b / a:>6.2f}")

    every = agents.GPPosteriorEngine(np.eye(1), 1.0).refresh_every
    print(f"\nre-derivation from sufficient statistics (engine refresh, every {every} rounds)")
    for n in sizes:
        eng = fast[("gp-ucb", n)]["agent"].engine_
        t0 = time.perf_counter()
        eng.rederive()
        dt = time.perf_counter() - t0
        print(
            f"  n = {n:>4}, {np.count_nonzero(eng.counts):>4} distinct arms played: "
            f"{dt * 1e3:7.1f} ms  (amortised {dt / every * 1e6:5.2f} us/round)"
        )

    print(f"\nnaive GP-UCB reference (t x t Cholesky + solve for all n points) at t = {t_naive}")
    for n in sizes:
        problem, f = make_problem(n, max(marks) + window)
        nv = naive_time(problem, f, t_naive, reps=3)
        ours = per_round_times(
            "gp-ucb", problem, f, (t_naive,), min(window, t_naive), args.repeats
        )[t_naive]
        print(
            f"  n = {n:>4}: naive {nv * 1e3:9.2f} ms/round   gp-ucb {ours * 1e6:7.1f} us/round"
            f"   speed-up {nv / ours:8.0f}x"
        )

    T = marks[1]
    problem, f = make_problem(100, T)
    noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
    fl = f.tolist()
    best = math.inf
    for _ in range(args.repeats):
        agent = agents.make("gp-ucb")
        agent.reset(problem, seed=0)
        t0 = time.perf_counter()
        for t in range(T):
            a = agent.act()
            agent.update(a, fl[a] + noise[t])
        best = min(best, time.perf_counter() - t0)
    print(f"\nfull {T}-round GP-UCB run on 100 points: {best:.2f} s (minimum of {args.repeats})")


if __name__ == "__main__":
    main()
