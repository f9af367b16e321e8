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

``--threads`` instead runs every agent (``--agents`` to choose) on the bench problem twice
in one run, each run in its own process, alternating ``--repeats`` times: once with the
BLAS libraries' default thread count (every ``*_NUM_THREADS`` variable removed, as a plain
user script gets it) and once with one BLAS thread (as the harness runs a cell). It prints
wall and process-CPU us/round side by side, their wall ratio and whether both runs played
the same arms: on small problems a second BLAS thread costs more than it saves, and what
to do about it is in ``docs/agents.md`` ("Your own loop: one BLAS thread"). A second table
times the engine's re-derivation (the call behind ``rcgp-ucb-adaptive``'s difference) with
one thread and with one per CPU at sizes from 100 to 3000 arms: where threads start to pay.

``--floor`` measures the least work a round of any *exact* implementation of the two
costly robust agents must do on the bench problem late in a run (``--T`` rounds, default
``10^4``; the last ``min(500, T/4)``), each piece at its cheapest (direct BLAS/LAPACK
calls or the agent's own cheapest primitive, CPU time, one BLAS thread), and prints it
beside the agent's measured round and GP-UCB's (each agent in its own process,
alternating ``--repeats`` times; medians):

- ``rcgp-ucb-adaptive`` (A2-RCGP, Ezzerg et al. 2025 Alg. 2): floor = GP-UCB's round +
  the posterior change at the ``k`` arms whose RCGP statistics changed that round.

  * *The act* (``argmax mu^R + beta sigma^R`` over the ``n`` arms) is GP-UCB's: the rule
    reads the mean and the standard deviation at every arm.
  * *The anchor's update*: the anchor ``M_A`` is an RCGP with centre 0, whose weights are
    fixed once seen, so it takes one GP update a round (GP-UCB's); its mean is the
    acquisition model's centre ``g_R`` at every arm, which the next round needs.
  * *The acquisition model's change at the* ``k`` *arms whose statistics changed*
    (``k`` counted per round from the agent: the arm just played and every arm holding an
    observation outside the plateau, whose weight moved with ``g_R``): the posterior
    mean and variance at all ``n`` arms depend on each arm's precision, so every changed
    precision changes ``Sigma`` by a rank-one term (Sherman–Morrison) and the ``k`` of
    them by a rank-``k`` term (Woodbury); an exact algorithm that keeps the posterior
    over the arms must apply it. Timed per round at its cheapest: ``k`` rank-one updates
    (``dger``) or one rank-``k`` update (``dpotrf`` + ``dtrsm`` + one ``dgemm``; LU when
    an arm lost information), whichever is cheaper for that ``k``. The per-arm
    statistics themselves (window searches, individual weights) are *not* counted: a
    floor, not a design.

- ``outlier-gp-ucb`` (Student-t diagnostic every ``n_schedule`` rounds): floor = GP-UCB's
  round + one more engine update + (share of diagnosis rounds) x (one mode check + the
  flags).

  * *The act and the inlier GP's update* are GP-UCB's round (a new reward is an inlier
    until the next diagnosis, so the GP on the inliers conditions on it).
  * *The Laplace variance's update*: ``diag((K_SS^{-1} + W)^{-1})`` with the Fisher ``W``
    grows in ``W`` at the arm played every round and is read at every diagnosis (the
    window half-widths), so one GP update of the Fisher engine a round.
  * *One check of the mode*: a new reward moves the mode of ``p(f_S | y)``; an exact
    diagnosis must at least evaluate the stationarity condition at its answer, i.e. the
    Student-t score at the ``|S|`` played arms (the agent's Taylor moments, score only)
    and one ``|S| x |S|`` product with ``K_SS`` — one step of any iteration, while the
    agent's measured steps per diagnosis are printed beside.
  * *The flags*: every observation's test ``|y - m| > q s`` changes with the mode and
    the variance, so each arm's window must be compared with its rewards: the ``|S|``
    half-widths, two binary searches of the ``|S|`` window edges into the sorted
    rewards and the individual test of the rewards outside them (the agent's own set).

Run: ``python benchmarks/bench_agents.py --floor`` (``--T``, ``--n``, ``--repeats``).
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from functools import partial

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
wall, cpu = time.perf_counter(), time.process_time()
for t in range(T):
    s = clock()
    x = agent.act()
    agent.update(x, fl[x] + noise[t])
    spent[t] = clock() - s
    arms[t] = x
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
sp = np.array(spent) * 1e6
print(json.dumps({"early": sp[W:2 * W].mean(), "late": sp[T - W:].mean(), "mean": sp.mean(),
                  "wall": wall / T * 1e6, "cpu": cpu / T * 1e6,
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


#: The variables that fix a BLAS library's thread count at start-up (OpenBLAS, OpenMP,
#: MKL, BLIS, Apple Accelerate): ``--threads`` removes them all for its default runs.
THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def run_child(
    tree: str, name: str, n: int, T: int, window: int, *, one_thread: bool = True
) -> dict | None:
    """:data:`CHILD` in a fresh process on the code of ``tree``: with one BLAS thread, or
    (``one_thread=False``) with the BLAS libraries' own default, as a plain user script
    gets it (every variable of :data:`THREAD_VARS` removed)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env["PYTHONPATH"] = tree
    if one_thread:
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, str(n), str(T), str(window)],
        env=env, capture_output=True, text=True, check=True, cwd=tree,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _print_head(head: str) -> None:
    print(head)
    print("-" * len(head))


def _alternate(repeats: int, variants: dict) -> dict:
    """``{key: [run(), ...]}``: every variant's ``run`` called ``repeats`` times,
    alternating between the variants (so a slow spell of a shared machine hits each)."""
    out: dict = {key: [] for key in variants}
    for _ in range(repeats):
        for key, run in variants.items():
            out[key].append(run())
    return out


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
        _print_head(head)
        for name in names:
            cells = _alternate(
                repeats,
                {
                    "ref": partial(run_child, ref, name, n, T, window),
                    "ours": partial(run_child, ours, name, n, T, window),
                },
            )
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


# -------------------------------------------------------------------------- --threads
def threads(names: list[str], n: int, T: int, window: int, repeats: int) -> None:
    """Every agent of ``names`` with the BLAS libraries' default thread count (what a
    plain script that calls ``act``/``update`` gets) and with one BLAS thread (what the
    harness runs, :func:`hbo_envs.harness.cell.run_cell`), each run in its own process,
    alternating ``repeats`` times: wall and process-CPU us/round (CPU over all threads,
    so BLAS threads that spin show there), the minimum of the runs, and whether both
    played the same arms."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = "from threadpoolctl import threadpool_info; import json, numpy, scipy.linalg; "
    probe += "print(json.dumps([(i['internal_api'], i['num_threads']) for i in threadpool_info()]))"
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    pools = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    ours = str(Path(__file__).resolve().parents[1])
    print(
        f"us/round (act + update) over the whole run, {n} arms, T = {T}; min of {repeats} "
        f"alternating runs; {os.cpu_count()} CPUs; the default BLAS pools here: {pools}"
    )
    head = (
        f"{'agent':<26} {'default wall':>12} {'cpu':>7} | {'1 thread wall':>13} {'cpu':>7} | "
        f"{'default/1 (wall)':>16} same actions"
    )
    _print_head(head)
    for name in names:
        runs = _alternate(
            repeats,
            {
                False: partial(run_child, ours, name, n, T, window, one_thread=False),
                True: partial(run_child, ours, name, n, T, window, one_thread=True),
            },
        )
        if runs[True][0] is None:
            continue
        best = {
            one: {k: min(r[k] for r in rs) for k in ("wall", "cpu")} for one, rs in runs.items()
        }
        d, o = best[False], best[True]
        same = runs[False][0]["digest"] == runs[True][0]["digest"]
        print(
            f"{name:<26} {d['wall']:>12.1f} {d['cpu']:>7.1f} | {o['wall']:>13.1f} {o['cpu']:>7.1f} "
            f"| {d['wall'] / o['wall']:>16.2f} {same}",
            flush=True,
        )


#: ``(n, |S|)`` of the engine re-derivations ``--threads`` times both ways: from a
#: 100-arm problem late in a run (|S| ~ 70) to thousands of arms.
REDERIVE_SIZES = ((100, 30), (100, 70), (300, 100), (300, 300), (1000, 100), (1000, 300),
                  (1000, 1000), (3000, 300))  # fmt: skip


def rederive_threads(repeats: int, sizes=REDERIVE_SIZES) -> None:
    """The engine's re-derivation from sufficient statistics
    (:meth:`~agents.gp.engine.GPPosteriorEngine.refresh`: a Cholesky factorisation of the
    ``|S| x |S|`` matrix, a triangular solve against ``|S| x n`` and an ``n x |S| x n``
    product), the call that ``rcgp-ucb-adaptive`` makes every few dozen rounds, timed with
    one BLAS thread and with one per CPU (``threadpool_limits``, in this process,
    alternating; the minimum of ``repeats`` blocks): where a second thread starts to pay
    is the size a one-thread guard in the engine would need."""
    import os

    from threadpoolctl import threadpool_limits

    from agents.gp.engine import GPPosteriorEngine

    cpus = os.cpu_count() or 1
    rng = np.random.default_rng(0)
    print(f"\nengine re-derivation (refresh), ms: one BLAS thread beside {cpus} threads")
    head = (
        f"{'n':>6} {'|S|':>6} {'n^2 |S|':>9} {'1 thread':>9} {f'{cpus} threads':>11} {'ratio':>7}"
    )
    _print_head(head)
    for n, m in sizes:
        X = np.linspace(0.0, 1.0, n)[:, None]
        eng = GPPosteriorEngine(SquaredExponential(0.05)(X), 1.0, representation="arms")
        arms = rng.choice(n, size=m, replace=False)
        prec = np.zeros(n)
        prec[arms] = rng.integers(1, 5, m)
        sums = np.zeros(n)
        sums[arms] = rng.normal(size=m) * prec[arms]
        eng.set_statistics(prec, sums, prec.astype(np.int64))
        reps = max(3, int(2e7 / (n * n * m)))
        best = {1: math.inf, cpus: math.inf}
        for _ in range(repeats):
            for k in best:
                with threadpool_limits(limits=k):
                    eng.refresh()  # wakes the pool (or lets it settle) before the clock
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        eng.refresh()
                    best[k] = min(best[k], (time.perf_counter() - t0) / reps * 1e3)
        one, many = best[1], best[cpus]
        print(f"{n:>6} {m:>6} {n * n * m:>9.1e} {one:>9.2f} {many:>11.2f} {many / one:>7.2f}")


# ---------------------------------------------------------------------------- --floor
#: The agents ``--floor`` measures, with GP-UCB (the reference round) first.
FLOOR_AGENTS = ("gp-ucb", "rcgp-ucb-adaptive", "outlier-gp-ucb")

#: Scale of the scratch updates ``--floor`` times (the arithmetic is timed, not its result;
#: small, so the scratch state stays far from overflow and subnormals).
_SCRATCH = -1e-9


def _per_call(fn, reps: int) -> float:
    """CPU seconds of one ``fn()`` (one BLAS thread): the median of 5 blocks of ``reps``
    calls (``time.thread_time``, so other processes on the machine add nothing)."""
    blocks = []
    for _ in range(5):
        s = time.thread_time()
        for _ in range(reps):
            fn()
        blocks.append((time.thread_time() - s) / reps)
    return float(np.median(blocks))


def _timed_run(agent, problem: Problem, f: np.ndarray, T: int, W: int):
    """``agent`` over ``T`` rounds of the bench problem (the noise of ``--against``): CPU
    seconds per round of ``act`` and of ``update`` in the last ``W`` rounds."""
    agent.reset(problem, seed=0)
    noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
    fl = f.tolist()
    clock = time.thread_time
    t_act, t_upd = np.zeros(T), np.zeros(T)
    for t in range(T):
        s = clock()
        x = agent.act()
        m = clock()
        agent.update(x, fl[x] + noise[t])
        t_act[t], t_upd[t] = m - s, clock() - m
    return t_act[T - W :], t_upd[T - W :]


def _rank_k_costs(eng, rounds: list[tuple[np.ndarray, np.ndarray, np.ndarray]]):
    """Per round, CPU seconds of the posterior change of the arm-space engine at the arms
    whose statistics changed (``moved``: precision changed, ``dp`` its change;
    ``shifted``: only the sum changed), at its cheapest: ``k`` rank-one updates and one
    rank-``k`` BLAS-3 update, each timed on a scratch copy of the engine's state (one timing
    per distinct ``(k, k_shift)``).

    rank one (per moved arm ``a``, Sherman–Morrison, what ``move_statistics`` does):
    ``c = Sigma[:, a]`` (copy), ``mean += coef c`` (``daxpy``), ``Sigma -= q/(1+q c_a) c c^T``
    (``dger``); rank ``k`` (Woodbury, ``Q = diag(dp) / lambda``): ``C = Sigma[:, moved]``,
    ``M = Q^{-1} + C[moved]`` (``k x k``), ``Sigma -= C M^{-1} C^T`` — when every ``dp > 0``
    ``M = L L^T`` (``dpotrf``), ``Z = C L^{-T}`` (``dtrsm``) and one ``dgemm`` ``Z Z^T``;
    otherwise ``M^{-1}`` by LU (``dgetrf``, ``dgetri``) and two ``dgemm`` — and
    ``mean += (C M^{-1}) z`` (``dgemv``). Shifted arms add one ``mean += Sigma[:, shifted] ds``
    (``dgemv``) either way. Returns ``(rank_one, rank_k)`` arrays over the rounds."""
    from scipy.linalg import blas, lapack

    lam = eng.lam
    cov = np.array(eng.cov, order="F", copy=True)
    mean = np.array(eng.mean[:, 0], copy=True)
    cache: dict = {}
    r1, rk = [], []
    for moved, dp, shifted in rounds:
        key = (moved.size, shifted.size)
        if key not in cache:
            q = np.where(dp != 0, dp, 1.0) / lam
            idx = np.arange(moved.size)

            def one(moved=moved, q=q):
                for a, qa in zip(moved.tolist(), q.tolist(), strict=True):
                    c = cov[:, a].copy()
                    den = 1.0 + qa * float(c[a])
                    blas.daxpy(c, mean, a=1e-9 / den)
                    blas.dger(_SCRATCH / den, c, c, a=cov, overwrite_a=1)

            def rank_k(moved=moved, q=q, qinv=1.0 / q, d=idx):
                C = cov[:, moved]
                M = C[moved]
                M[d, d] += qinv
                if (q > 0).all():  # M positive definite: C M^-1 C^T = Z Z^T, Z = C L^-T
                    L, _ = lapack.dpotrf(M, lower=1, clean=1, overwrite_a=1)
                    Z = blas.dtrsm(1.0, L, C, side=1, lower=1, trans_a=1)
                    blas.dgemm(_SCRATCH, Z, Z, trans_b=1, beta=1.0, c=cov, overwrite_c=1)
                    blas.dgemv(1e-9, Z, Z[0], beta=1.0, y=mean, overwrite_y=1)
                else:  # an arm lost information: M indefinite, its inverse by LU
                    lu, piv, _ = lapack.dgetrf(M, overwrite_a=1)
                    Minv, _ = lapack.dgetri(lu, piv, overwrite_lu=1)
                    Y = blas.dgemm(1.0, C, Minv)
                    blas.dgemm(_SCRATCH, Y, C, trans_b=1, beta=1.0, c=cov, overwrite_c=1)
                    blas.dgemv(1e-9, Y, Minv[0], beta=1.0, y=mean, overwrite_y=1)

            def shift(shifted=shifted):
                Cs = cov[:, shifted]
                blas.dgemv(1e-9, Cs, np.ones(shifted.size), beta=1.0, y=mean, overwrite_y=1)

            t1 = _per_call(one, 20) if moved.size else 0.0
            tk = _per_call(rank_k, 20) if moved.size else 0.0
            ts = _per_call(shift, 20) if shifted.size else 0.0
            cache[key] = (t1 + ts, tk + ts)
        a, b = cache[key]
        r1.append(a)
        rk.append(b)
    return np.array(r1), np.array(rk)


def floor_child(name: str, n: int, T: int, W: int) -> dict:
    """One agent's late round and the floor pieces it adds to GP-UCB's (``--floor``)."""
    problem, f = make_problem(n, T)
    t_act, t_upd = _timed_run(agents.make(name), problem, f, T, W)
    out = {"round": float((t_act + t_upd).mean()), "act": float(t_act.mean())}
    out["update"] = float(t_upd.mean())
    if name == "gp-ucb":
        return out
    # the same run again (same seed, same actions), instrumented, untimed
    agent = agents.make(name)
    agent.reset(problem, seed=0)
    noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
    fl = f.tolist()
    if name == "rcgp-ucb-adaptive":
        eng = agent.engine_
        rounds: list = []
        move = eng._move_statistics

        def recorded(prec, tot, cnt):
            dp = prec - eng.precision
            moved = np.flatnonzero(dp)
            shifted = np.flatnonzero((tot[:, 0] != eng.sums[:, 0]) & (dp == 0))
            rounds.append((moved, dp[moved], shifted))
            return move(prec, tot, cnt)

        eng._move_statistics = recorded
        for t in range(T):
            x = agent.act()
            agent.update(x, fl[x] + noise[t])
        late = rounds[-W:]
        r1, rk = _rank_k_costs(eng, late)
        out["k"] = float(np.mean([m.size for m, _, _ in late]))
        out["k_shift"] = float(np.mean([s.size for _, _, s in late]))
        out["rank_one"], out["rank_k"] = float(r1.mean()), float(rk.mean())
        out["extra"] = float(np.minimum(r1, rk).mean())
        return out
    # outlier-gp-ucb: count the diagnoses and the mode-search steps of the late rounds
    from scipy.linalg import blas

    counts = {"diag": 0, "steps": 0}
    scores = agent._scores
    score, derivatives, diagnose = scores.score, scores.derivatives, agent._diagnose

    def counted(fn):  # a mode-search step evaluates the score once (with or without H)
        def call(S, fv):
            counts["steps"] += 1
            return fn(S, fv)

        return call

    def counted_diagnose():
        counts["diag"] += 1
        return diagnose()

    scores.score, scores.derivatives = counted(score), counted(derivatives)
    agent._diagnose = counted_diagnose
    for t in range(T):
        if t == T - W:
            counts.update(diag=0, steps=0)
        x = agent.act()
        agent.update(x, fl[x] + noise[t])
    scores.score, scores.derivatives = score, derivatives
    S, K = agent._S, np.asfortranarray(agent._K_SS)
    fS = agent._mode[S].copy()
    rw = agent._rewards
    var = agent._fisher.variance()
    q = float(stats_t_quantile(agent.nu_, agent.alpha_))
    centre = np.zeros(n)
    centre[S] = fS
    half = np.zeros(n)
    half[S] = q * np.sqrt(var[S] + agent._noise)
    _, _, oa, oy = rw.statistics(centre, half)

    re = scores.nu1 * scores._re[:, S]  # per-arm moments, as derivatives() caches them
    d = fS - scores._centre[S]

    def step():  # the score at f (Taylor moments: g only, no curvature), one K_SS product
        P = np.empty((scores.order, S.size))
        P[0] = 1.0
        P[1:] = d
        np.multiply.accumulate(P[1:], axis=0, out=P[1:])
        blas.dgemv(1.0, K, np.einsum("km,km->m", P, re))

    sc, key = rw._scale, rw._key
    varS = var[S]

    def flags():  # windows q sd, two searches into the sorted rewards, the outside test
        h = q * np.sqrt(varS + agent._noise)
        key.searchsorted(S + ((fS - h) * sc + 0.5), side="right")
        key.searchsorted(S + ((fS + h) * sc + 0.5), side="left")
        return np.abs(oy - centre[oa]) > half[oa]

    out["S"] = int(S.size)
    out["diag_share"] = counts["diag"] / W
    out["steps"] = counts["steps"] / max(counts["diag"], 1)
    out["step"], out["flags"] = _per_call(step, 200), _per_call(flags, 200)
    out["extra"] = out["diag_share"] * (out["step"] + out["flags"])
    return out


def stats_t_quantile(nu: float, alpha: float) -> float:
    """``t_{nu, 1 - alpha/2}`` (the outlier agent's window, computed once per diagnosis
    setting: not part of a round)."""
    from agents.robust.outlier_gp_ucb import _t_quantile

    return _t_quantile(nu, alpha)


def floor(n: int, T: int, window: int, repeats: int) -> None:
    """The floor of an exact implementation of each robust agent beside its measured round
    and GP-UCB's, in one run (module docstring of :func:`floor_child` and ``--floor``):
    each agent in its own process with one BLAS thread, alternating, ``repeats`` times;
    medians."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    runs: dict[str, list[dict]] = {a: [] for a in FLOOR_AGENTS}
    for _ in range(repeats):
        for name in FLOOR_AGENTS:
            res = subprocess.run(
                [sys.executable, __file__, "--floor-child", name, "--n", str(n), "--T", str(T)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))

    def med(name: str, key: str) -> float:
        return float(np.median([r[key] for r in runs[name]]))

    us = 1e6
    gp, gp_upd = med("gp-ucb", "round") * us, med("gp-ucb", "update") * us
    print(
        f"floor of an exact implementation, {n} arms, T = {T}, the last {window} rounds; "
        f"CPU us/round, one BLAS thread, median of {repeats} alternating runs"
    )
    print(f"gp-ucb round (act + update): {gp:.1f}  (act {med('gp-ucb', 'act') * us:.1f}, "
          f"update {gp_upd:.1f})")  # fmt: skip
    r = "rcgp-ucb-adaptive"
    one, rk = med(r, "rank_one") * us, med(r, "rank_k") * us
    fl_r = gp + med(r, "extra") * us
    print(
        f"\n{r}: k = {med(r, 'k'):.2f} arms moved a round (+ {med(r, 'k_shift'):.2f} whose sum "
        f"alone changed); their change as k rank-one updates {one:.1f}, as one rank-k update "
        f"{rk:.1f}"
    )
    print(f"  floor = gp-ucb round + the cheaper per round = {fl_r:.1f}")
    o = "outlier-gp-ucb"
    step, flg = med(o, "step") * us, med(o, "flags") * us
    fl_o = gp + gp_upd + med(o, "extra") * us
    print(
        f"\n{o}: |S| = {runs[o][0]['S']}, diagnoses in {med(o, 'diag_share'):.2f} of the "
        f"rounds, {med(o, 'steps'):.1f} mode-search steps each; one step's check "
        f"{step:.1f}, the flags {flg:.1f}"
    )
    print(f"  floor = gp-ucb round + one engine update + share x (step + flags) = {fl_o:.1f}")
    head = f"\n{'agent':<20} {'round':>8} {'floor':>8} {'floor/gp-ucb':>13} {'round/floor':>12}"
    print(head)
    print("-" * (len(head) - 1))
    print(f"{'gp-ucb':<20} {gp:>8.1f} {gp:>8.1f} {1.0:>13.2f} {1.0:>12.2f}")
    for name, fl in ((r, fl_r), (o, fl_o)):
        rd = med(name, "round") * us
        print(f"{name:<20} {rd:>8.1f} {fl:>8.1f} {fl / gp:>13.2f} {rd / fl:>12.2f}")


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
    ap.add_argument("--T", type=int, default=10_000, help="rounds per run (--against, --floor)")
    ap.add_argument("--n", type=int, default=100, help="arms (--against, --floor)")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="instead: the floor of an exact rcgp-ucb-adaptive and outlier-gp-ucb beside "
        "their round and GP-UCB's",
    )
    ap.add_argument(
        "--threads",
        action="store_true",
        help="instead: every agent (--agents) with the BLAS libraries' default thread count "
        "beside one BLAS thread, each run in its own process",
    )
    ap.add_argument("--floor-child", metavar="AGENT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    for flag in ("T", "n", "repeats"):
        if getattr(args, flag) < (4 if flag == "T" else 1):
            least = 4 if flag == "T" else 1
            ap.error(f"--{flag} must be an integer >= {least}; got {getattr(args, flag)}")
    if sum(map(bool, (args.against, args.floor, args.threads))) > 1:
        ap.error("--against, --floor and --threads are separate runs: give one of them")
    window = min(500, args.T // 4)
    if args.floor_child:
        import json

        print(json.dumps(floor_child(args.floor_child, args.n, args.T, window)))
        return
    if args.floor:
        floor(args.n, args.T, window, args.repeats)
        return
    if args.threads or args.against:
        names = args.agents.split(",") if args.agents else list(agents.available())
        unknown = [a for a in names if a not in agents.available()]
        if unknown:
            ap.error(f"--agents: unknown agent(s) {unknown}; available: {agents.available()}")
    if args.threads:
        threads(names, args.n, args.T, window, args.repeats)
        rederive_threads(args.repeats)
        return
    if args.against:
        lscpu = platform.processor() or platform.machine()
        print(f"hbo-bench agents vs {args.against} — numpy {np.__version__}, {lscpu}")
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
