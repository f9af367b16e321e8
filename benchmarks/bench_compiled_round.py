"""What a compiled round would cost: GP-UCB and A2-RCGP-UCB, numpy beside numba kernels.

Decision data for issue 39 item 1 ("the robust agents within 5x of GP-UCB's round"), not a
design: the agents stay numpy. On the 100-arm bench problem of ``bench_agents.py`` (T
rounds, Student-t(3) noise), each agent runs as shipped; in the last ``W`` rounds every
round's work is also done, on copies of the agent's state, by `numba
<https://numba.pydata.org>`_ kernels (plain loops, no ``fastmath``), and checked against
the agent's own result. Printed, in one run (CPU us/round, ``time.thread_time_ns``, one
BLAS thread, median over the rounds):

- ``gp-ucb``: the act (``argmax mu + beta sigma`` over the arms) and the rank-one update
  of the posterior at the arm played; the compiled act must pick the agent's arm.
- ``rcgp-ucb-adaptive`` (Ezzerg et al. 2025 Alg. 2): the act on the acquisition model,
  the anchor's rank-one update, the acquisition model's per-arm statistics (window search
  in each arm's sorted rewards, the plateau-IMQ weight of every reward outside the window
  and of the pending and extreme pools: :class:`~agents.robust.rcgp_ucb.PlateauRewards`),
  and the ``k`` rank-one moves of the arms whose precision changed, with the mean's shift
  at an arm whose sum alone changed
  (:meth:`~agents.gp.engine.GPPosteriorEngine.move_statistics`). The compiled statistics
  must equal the agent's to ``1e-9`` relative (summation order differs) and the moved
  posterior mean the engine's to ``1e-9``; in rounds where the engine re-derives
  (refresh, or a move it refuses) the moves are timed but not compared. Each arm's
  segment of the sorted rewards, which a compiled design would keep at each merge, is
  located outside the timed region.

The last columns are the ratio of each agent's round to GP-UCB's, numpy to numpy and
compiled to compiled: the same technology on both sides. ``numba`` is not a dependency of
hbo-bench; this script says so and exits when it is missing (``pip install numba``).
First calls compile (cached under ``__pycache__``, or ``$NUMBA_CACHE_DIR``); the timed
rounds follow a warm-up, whose seconds are printed (a cold compile, or the cache's load: what
each new process would pay). The last line is a SHA-256 of every compiled output of the
timed rounds (posterior means, per-arm statistics): run the script under
``NUMBA_CPU_NAME=generic`` and without it (and a fresh ``NUMBA_CACHE_DIR`` each) to see
whether kernels compiled for a baseline x86-64 and for this CPU give the same bits.

Run: ``python benchmarks/bench_compiled_round.py [--T 10000] [--window 500]``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_agents import make_problem  # noqa: E402

import agents  # noqa: E402
from agents.robust.rcgp_ucb import _pimq_scalar  # noqa: E402

try:
    import numba as nb
except ImportError:  # pragma: no cover - the script's own guard
    nb = None


def _kernels():
    """The numba kernels (compiled on first call, cached)."""

    @nb.njit(cache=True)
    def act(cov, mean, beta):
        best, arm = -math.inf, 0
        for j in range(mean.size):
            v = cov[j, j]
            s = mean[j] + beta * math.sqrt(v if v > 0.0 else 0.0)
            if s > best:
                best, arm = s, j
        return arm

    @nb.njit(cache=True)
    def observe(cov, mean, arm, y, noise):
        # Sigma <- Sigma - c c^T / (noise + c_a), mean += c (y - mean_a) / (noise + c_a)
        n = mean.size
        c = cov[:, arm].copy()
        den = noise + c[arm]
        coef = (y - mean[arm]) / den
        for j in range(n):
            mean[j] += coef * c[j]
        for k in range(n):
            s = -c[k] / den
            for j in range(n):
                cov[j, k] += s * c[j]

    @nb.njit(cache=True)
    def moves(cov, mean, prec, p0, sums, s0, lam):
        # the engine's rank-one move of each arm whose precision changed, and the mean's
        # shift at an arm whose sum alone changed (a change below the rounding of the
        # sums' order is none): q = dp / lam, den = 1 + q c_a
        n = mean.size
        c = np.empty(n)
        k = 0
        for a in range(n):
            dp = prec[a] - p0[a]
            if not abs(dp) > 1e-12 * (1.0 + p0[a]):
                ds = sums[a] - s0[a]  # the sum alone changed: mean += Sigma[:, a] ds / lam
                if abs(ds) > 1e-12 * (1.0 + abs(s0[a])):
                    for j in range(n):
                        mean[j] += cov[j, a] * (ds / lam)
                continue
            k += 1
            for j in range(n):
                c[j] = cov[j, a]
            q = dp / lam
            den = 1.0 + q * c[a]
            coef = ((sums[a] - s0[a]) / lam - q * mean[a]) / den
            for j in range(n):
                mean[j] += coef * c[j]
            alpha = -q / den
            for m in range(n):
                s = alpha * c[m]
                for j in range(n):
                    cov[j, m] += s * c[j]
        return k

    @nb.njit(cache=True, inline="always")
    def weigh(a, y, g, L, c, lam, prec, sums):
        # plateau-IMQ weight (rcgp_ucb.pimq_weight_terms): J = 1 + (e/c)^2, shift
        r = y - g
        e = max(abs(r) - L, 0.0)
        q = e / c
        sh = 0.0
        if e > 0.0:
            sh = -2.0 * lam * math.copysign(1.0, r) / (e + c * c / e)
        w = 1.0 / (1.0 + q * q)
        prec[a] += w
        sums[a] += (y - sh) * w

    @nb.njit(cache=True)
    def statistics(keys, my, seg, arms, total, centre, L, bound, scale, c, lam, pa, py, prec, sums):
        # per arm: its window [g - L, g + L] (clipped to the core bound) searched in its
        # segment of the sorted keys; inside: count and (total - outside); outside and the
        # individual pools: weighted one by one
        prec[:] = 0.0
        sums[:] = 0.0
        for i in range(arms.size):
            a, s0, s1 = arms[i], seg[i], seg[i + 1]
            g = centre[a]
            klo = a + (min(max(g - L, -bound), bound) * scale + 0.5)
            khi = a + (min(max(g + L, -bound), bound) * scale + 0.5)
            lo = s0 + np.searchsorted(keys[s0:s1], klo, side="right")
            hi = max(s0 + np.searchsorted(keys[s0:s1], khi, side="left"), lo)
            out = 0.0
            for j in range(s0, lo):
                out += my[j]
                weigh(a, my[j], g, L, c, lam, prec, sums)
            for j in range(hi, s1):
                out += my[j]
                weigh(a, my[j], g, L, c, lam, prec, sums)
            prec[a] += hi - lo
            if hi > lo:
                sums[a] += total[a] - out
        for j in range(pa.size):
            weigh(pa[j], py[j], centre[pa[j]], L, c, lam, prec, sums)

    return act, observe, moves, statistics


def _start(name: str, T: int):
    """The agent reset on the bench problem, ``f`` and the noise of ``--against``."""
    problem, f = make_problem(100, T)
    agent = agents.make(name)
    agent.reset(problem, seed=0)
    return agent, f.tolist(), np.random.default_rng(1).standard_t(3.0, size=T).tolist()


def _round(agent, fl: list, eps: float) -> tuple[int, float, int]:
    """One round of the agent as shipped: its arm, the reward and the CPU ns it took."""
    s = time.thread_time_ns()
    a = agent.act()
    y = fl[a] + eps
    agent.update(a, y)
    return a, y, time.thread_time_ns() - s


def gp_ucb(T: int, W: int, k) -> dict:
    act, observe, _, _ = k
    agent, fl, noise = _start("gp-ucb", T)
    clk = time.thread_time_ns
    ours, comp, same = [], [], 0
    digest = hashlib.sha256()
    for t in range(T):
        late = t >= T - W
        if late:
            eng = agent.engine_
            cov, mean = eng.cov.copy(order="F"), eng.mean[:, 0].copy()
            beta = agent._beta_t()  # the UCB is mu + beta_t sigma (agents.gp.base)
        a, y, ns = _round(agent, fl, noise[t])
        if late:
            ours.append(ns)
            s = clk()
            b = act(cov, mean, beta)
            observe(cov, mean, a, y, agent.lam_)
            comp.append(clk() - s)
            same += b == a
            digest.update(mean.tobytes())
            err = float(np.max(np.abs(mean - agent.engine_.mean[:, 0])))
            if not err <= 1e-9:
                raise AssertionError(f"gp-ucb: compiled mean off by {err:.3g} at t = {t}")
    return {
        "ours": np.median(ours),
        "compiled": np.median(comp),
        "same": same / W,
        "digest": digest,
    }


def rcgp_adaptive(T: int, W: int, k) -> dict:
    act, observe, moves, statistics = k
    agent, fl, noise = _start("rcgp-ucb-adaptive", T)
    clk = time.thread_time_ns
    ours, comp, ks, replayed = [], [], [], 0
    prec, sums = np.zeros(agent.n_), np.zeros(agent.n_)
    digest = hashlib.sha256()
    for t in range(T):
        late = t >= T - W
        eng, anchor = agent.engine_, agent.anchor_
        if late:
            cov, mean = eng.cov.copy(order="F"), eng.mean[:, 0].copy()
            acov, amean = anchor.cov.copy(order="F"), anchor.mean[:, 0].copy()
            p0, s0, moves0, last = (
                eng.precision.copy(),
                eng.sums[:, 0].copy(),
                eng._moves,
                agent._last,
            )
            beta = agent._beta_t()  # the UCB is mu + beta_t sigma (agents.gp.base)
        a, y, ns = _round(agent, fl, noise[t])
        if not late:
            continue
        ours.append(ns)
        rw = agent._rewards
        keys, my = rw._key, rw._my
        arms = np.flatnonzero(rw._mcount)
        seg = np.append(keys.searchsorted(arms.astype(float)), keys.size)
        pa = np.concatenate([rw._earm[: rw._n_ext], rw._parm[: rw._n_pend]])
        py = np.concatenate([rw._ey[: rw._n_ext], rw._py[: rw._n_pend]])
        s = clk()
        act(cov, mean, beta)
        if last is not None:  # the anchor lags one observation (agent._observe)
            a0, y0 = last
            J, sh = _pimq_scalar(y0, agent.L_anchor_, agent.c_, agent.lam_)
            observe(acov, amean, a0, y0 - sh, agent.lam_ * J)
        statistics(
            keys, my, seg, arms, rw._total, amean, agent.L_, rw.bound, rw._scale, agent.c_,
            agent.lam_, pa, py, prec, sums,
        )  # fmt: skip
        k_moved = moves(cov, mean, prec, p0, sums, s0, agent.lam_)
        comp.append(clk() - s)
        ks.append(k_moved)
        for v in (mean, amean, prec, sums):
            digest.update(v.tobytes())
        scale = 1.0 + np.abs(eng.sums[:, 0])
        err = float(np.max(np.abs(sums - eng.sums[:, 0]) / scale))
        err = max(err, float(np.max(np.abs(prec - eng.precision) / (1.0 + eng.precision))))
        if not err <= 1e-9:
            raise AssertionError(f"rcgp-ucb-adaptive: compiled statistics off by {err:.3g}")
        if eng._moves > moves0:  # moved, not re-derived (which resets the count): compare
            errm = float(np.max(np.abs(mean - eng.mean[:, 0])))
            if not errm <= 1e-9:
                raise AssertionError(f"rcgp-ucb-adaptive: compiled mean off by {errm:.3g}")
            replayed += 1
    return {
        "ours": np.median(ours),
        "compiled": np.median(comp),
        "k": np.mean(ks),
        "replayed": replayed,
        "digest": digest,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=10_000, help="rounds per run")
    ap.add_argument("--window", type=int, default=500, help="the last rounds, timed")
    args = ap.parse_args()
    if args.T < 2 or args.window < 1:
        ap.error(f"--T must be >= 2 and --window >= 1; got --T {args.T}, --window {args.window}")
    if nb is None:
        print("numba is not installed (not a dependency of hbo-bench): pip install numba")
        raise SystemExit(2)
    T, W = args.T, min(args.window, args.T // 2)
    k = _kernels()
    t0 = time.perf_counter()
    gp_ucb(60, 20, k), rcgp_adaptive(60, 20, k)  # compile (or load the cache) first
    warm = time.perf_counter() - t0
    g = gp_ucb(T, W, k)
    r = rcgp_adaptive(T, W, k)
    print(
        f"numpy {np.__version__}, numba {nb.__version__}, {platform.machine()}; 100 arms, "
        f"T = {T}, the last {W} rounds; CPU us/round (median), one BLAS thread"
    )
    head = f"{'agent':<20} {'numpy':>8} {'compiled':>9} | {'/ gp-ucb numpy':>14} "
    head += f"{'/ gp-ucb compiled':>18}"
    print(head)
    print("-" * len(head))
    for name, m in (("gp-ucb", g), ("rcgp-ucb-adaptive", r)):
        print(
            f"{name:<20} {m['ours'] / 1e3:8.1f} {m['compiled'] / 1e3:9.1f} | "
            f"{m['ours'] / g['ours']:14.2f} {m['compiled'] / g['compiled']:18.2f}"
        )
    print(
        f"gp-ucb: the compiled act picked the agent's arm in {100 * g['same']:.1f}% of the "
        f"rounds; rcgp-ucb-adaptive: k = {r['k']:.2f} arms moved a round, the compiled "
        f"moves checked against the engine in {r['replayed']} of {W} rounds"
    )
    from llvmlite import binding as llvm

    target = nb.config.CPU_NAME or f"host ({llvm.get_host_cpu_name()})"
    print(f"warm-up (compile or cache load, 4 kernels, and 2 x 60 rounds): {warm:.2f} s")
    both = hashlib.sha256(g["digest"].digest() + r["digest"].digest()).hexdigest()
    print(f"compiled for CPU {target}: outputs sha256 {both[:32]}")


if __name__ == "__main__":
    main()
