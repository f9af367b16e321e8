"""ATA-GP-UCB (QFF and Nyström) round cost, side by side with a naive Algorithm 2 and TGP-UCB.

Prints, in one run (agent time only, ``act`` + ``update``; BLAS on one thread, as in a
harness cell; CPU seconds of this process, ``time.process_time``, so that other processes
on a loaded machine inflate the numbers less than wall time would):

1. 100 arms (the SE problem of Chowdhury–Gopalan §6): the mean per-round time in a window
   around an early and a late round (``t ~ 10^3`` and ``t ~ 2 * 10^4``; ``--quick``:
   ``500`` and ``2000``) for TGP-UCB and the ATA variants, the late/early ratio (flat in
   ``t``: ~1), the ratio to TGP-UCB measured in the same run, and one round of the naive
   Algorithm 2 as printed at the same ``t`` from the agent's own history (rebuild
   ``Phi~_t`` (t x m), ``V~_t``, ``V~_t^{-1/2}``, truncate the ``m x t`` matrix
   ``u_{i,tau} y_tau``; Nyström: Algorithm 3 drawn afresh; O(t m^2) per round);
2. Park–Lee's 1-D problem (``hbo/RKHS1D-SymPareto-eps02-v0``, 1000 arms): the same at
   ``t ~ 500`` of ``T = 1000``;
3. ``n = 10^5`` arms in 2-D (a problem without an ``n x n`` kernel matrix: the agent
   computes kernel rows of dictionary arms on demand), Nyström only: rounds early in a
   run, beside the naive round. (QFF is not run there: its ``reset`` measures the
   embedding error ``eps_m`` over all pairs of arms, O(n^2).)

The per-round cost of our implementation is ``O(r^3 + r^2 n + s r |P| + |P|)`` with ``r``
the numerical rank of the embedding (bounded on a fixed domain), ``s`` the number of
distinct dictionary arms (``2m`` merged features for QFF) and ``|P|`` the arms played so
far, plus, when the Nyström dictionary changes, ``O(s r0^2 + r0^3 + r0 r n)`` for the
``r0 x r0`` eigendecomposition of ``L_S^T C L_S`` with ``K = L L^T`` (``r0`` the numerical
rank of ``K``, 21 on the 100 arms; :func:`agents.features.nystrom.nystrom_factors_from_factor`), or
``O(s^3 + r s n)`` for the ``s x s`` eigendecomposition when there is no dense ``K`` to
factor (section 3) or ``s <= r0``. In the number of arms that is ``O(n r (r + s))`` per
round: linear in ``n``.

4. The per-arm reward store (:class:`~agents.heavy_tailed.ata_gp_ucb.ArmRewards`): microseconds
   per new reward at an arm that already holds ``N_a`` rewards (``10^3 .. 10^6``;
   ``--quick``: up to ``10^5``), ours (a pending run of ``~sqrt(N_a)`` past ``RUN_MIN``)
   beside one sorted run per arm (``RUN_MIN`` infinite, the store before issue 21's
   round), and one ``sums`` query of 35 thresholds there.

Why the Nyström round is still dearer late than early (``new D_t`` column): at
``t ~ 10^3`` every played arm has ``q sigma~^2 >= 1``, so Algorithm 3 draws the same
dictionary (all played arms) every round and nothing is refactored; at ``t ~ 2 * 10^4``
every played arm has ``p_a < 1`` and the dictionary, redrawn every round as the algorithm
prescribes, is new in every round: each round pays one ``r0 x r0`` eigendecomposition
and a few small products on top of the early round's work. The
``[s x s eigh]`` row is the same agent without the factor (as before issue 21), measured
in the same run. The lines below the table time that one decomposition alone (LAPACK
``dsyevd`` on the last dictionary's ``L_S^T C L_S``): with the early round as measured,
``(early + that) / early`` is the lowest late/early ratio an exact implementation can reach
(a cheaper early round raises it), since a new dictionary needs
the symmetric ``(K_D^{1/2})^+`` and every round the symmetric ``V~^{-1/2}`` (the truncation
directions are the rows of ``V~^{-1/2} Phi~^T`` in the dictionary's coordinates; no other
square root gives the same truncation), and the two matrices do not commute. They also
print (issue 39, docs/scale.md) the share of late rounds whose dictionary is new to the
window (what a cache of factorisations could not serve), the mean number of arms by which
consecutive late dictionaries differ (the rank-one changes an updated decomposition would
need, against ``r0``), the floating-point calls of the agent's new-dictionary branch timed
alone, so ``(early + calls) / early``, the lowest ratio of a path that keeps the agent's
(and the archive's) actions bit for bit, and those calls plus the ones every round makes
for ``V~_t``, as a multiple of TGP-UCB's late round. Between the two, the least work any
exact implementation must add on a new dictionary (:func:`_minimal_new_dictionary`: the
``r0 x r0`` Gram, its eigenvectors by the cheapest of four LAPACK drivers, the map ``Q`` to
the dictionary's coordinates, every arm's coordinates and ``V~``'s Gram in the new basis,
each by its cheapest direct BLAS/LAPACK call, timed interleaved), less the rank-one
update an early round does and a new-dictionary round skips:
``(early - skipped + minimal) / early``, and the same with the Cholesky QR that keeps
``Q`` orthonormal to rounding (what the accuracy tests of the ``A^T A`` route need). The
last line prints the floors side by side with issue 39's target.

Run: ``python benchmarks/bench_ata.py`` (``--quick`` for a smoke run). Not a test: timings
depend on the machine and its load; compare the columns of one run, not absolute numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import time
from copy import deepcopy
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
from bench_agents import make_problem
from threadpoolctl import threadpool_limits

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from agents.features.nystrom import pinv_sqrt_psd
from agents.features.qff import qff_features
from agents.heavy_tailed import ata_gp_ucb
from hbo_envs.kernels import SquaredExponential


def _inv_sqrt(V: np.ndarray) -> np.ndarray:
    e, U = np.linalg.eigh(V)
    return (U / np.sqrt(e)) @ U.T


def naive_round(agent, problem, arms: list[int], ys: list[float], rng) -> float:
    """Seconds for one round ``t = len(arms)`` of Algorithm 2 exactly as printed, from
    the history ``(arms, ys)``; schedules from ``agent`` (``b_``, ``beta_``, ``q_``, the
    QFF lengthscale and ``mbar_``), so both sides run the same formulas."""
    t = len(arms)
    pts = np.asarray(problem.points, dtype=float)
    kern = agent.kernel_ if hasattr(agent, "kernel_") else problem.kernel
    kdiag = agent.kdiag_
    t0 = time.process_time()
    if hasattr(agent, "mbar_"):
        F = qff_features(pts, kern.lengthscale, agent.mbar_)  # (n, 2m), eq. (1)
        var_prev = agent.var_
    else:  # Alg. 3, experiment set: one draw per distinct arm played
        var_prev = agent.var_
        p = np.minimum(agent.q_ * np.maximum(var_prev, 0.0), 1.0)
        played = np.unique(arms)
        D = played[rng.random(played.size) < p[played]]
        if D.size == 0:
            return time.process_time() - t0
        KD = kern(pts[D], pts)  # (m_t, n)
        F = (pinv_sqrt_psd(KD[:, D]) @ KD).T
    Phi = F[arms]  # (t, m_t)
    V = Phi.T @ Phi + agent.lam_ * np.eye(F.shape[1])
    Vis = _inv_sqrt(V)
    U = Vis @ Phi.T  # rows u_i (m_t, t)
    UY = U * np.asarray(ys)[None, :]
    r = np.where(np.abs(UY) <= agent.b_(t), UY, 0.0).sum(axis=1)
    mu = F @ (Vis @ r)
    quad = agent.lam_ * np.einsum("xi,ij,xj->x", F, np.linalg.inv(V), F)
    var = quad if hasattr(agent, "mbar_") else kdiag - np.sum(F * F, axis=1) + quad
    int(np.argmax(mu + agent.beta_(t + 1) * np.sqrt(np.maximum(var, 0.0))))
    return time.process_time() - t0


def timed_run(agent, problem, f, marks, window, naive_rounds: int) -> dict:
    """Mean seconds per round in a window at each mark, and the naive round there.

    The run is played once up to each window's start and the agent copied there; the
    copies then play their windows interleaved, ``window // 10`` rounds at a time, so a
    change of the machine's load during the measurement weighs on every window alike
    instead of biasing their ratio (the windows were timed one after the other before).
    """
    agent.reset(problem, seed=0)
    T = max(marks) + window // 2
    noise = np.random.default_rng(1).standard_t(3.0, size=T).tolist()
    fl = np.asarray(f, dtype=float).tolist()
    rng = np.random.default_rng(2)

    def step(ag, arms: list[int], ys: list[float]) -> None:
        a = ag.act()
        y = fl[a] + noise[len(arms)]
        ag.update(a, y)
        arms.append(a)
        ys.append(y)

    arms: list[int] = []
    ys: list[float] = []
    # mark -> [agent copy, its history, seconds, new dictionaries, last D_t, every D_t]
    runs = {}
    for m in sorted(marks):
        while len(arms) < m - window // 2:
            step(agent, arms, ys)
        copy = agent if m == max(marks) else deepcopy(agent)
        d = getattr(copy, "_dict_copies", None)
        runs[m] = [copy, (list(arms), list(ys)), 0.0, 0, d, [d]]
    block = max(window // 10, 1)
    for _ in range(window // block):
        for run in runs.values():
            ag, (h_arms, h_ys) = run[0], run[1]
            new, prev = 0, run[4]
            t0 = time.process_time()
            for _ in range(block):
                step(ag, h_arms, h_ys)
                cur = getattr(ag, "_dict_copies", None)  # Nyström: is D_t a new dictionary?
                new += cur is not prev
                prev = cur
                run[5].append(cur)
            run[2] += time.process_time() - t0
            run[3] += new
            run[4] = prev
    out: dict = {}
    for m, (ag, (h_arms, h_ys), secs, new, _, seen) in runs.items():
        out[m] = secs / (block * (window // block))
        out[("new", m)] = new / (block * (window // block))
        # Nyström: arms in or out of D_t against D_{t-1}, mean over the window's rounds
        out[("diff", m)] = (
            float(
                np.mean(
                    [np.count_nonzero(a != b) for a, b in zip(seen[:-1], seen[1:], strict=True)]
                )
            )
            if seen[0] is not None
            else math.nan
        )
        # and the share of its rounds whose D_t no earlier round of the window drew
        out[("fresh", m)] = (
            (len({d.tobytes() for d in seen[1:]}) - 1) / (len(seen) - 2)
            if seen[0] is not None and len(seen) > 2
            else math.nan
        )
        if naive_rounds:
            out[("naive", m)] = min(
                naive_round(ag, problem, h_arms, h_ys, rng) for _ in range(naive_rounds)
            )
    out["agent"] = runs[max(marks)][0]
    return out


def _ms(x: float) -> str:
    return f"{x * 1e3:9.3f}"


def section_100_arms(quick: bool) -> None:
    marks = (500, 2_000) if quick else (1_000, 20_000)
    window = 200 if quick else 1_000
    problem, f = make_problem(100, max(marks) + window)
    print(f"1. 100 arms: CPU ms per round (act + update), mean over {window} rounds around t")
    tgp = timed_run(agents.make("tgp-ucb"), problem, f, marks, window, 0)
    head = (
        f"{'agent':<31} {'t~' + str(marks[0]):>9} {'t~' + str(marks[1]):>9} "
        f"{'late/early':>10} {'/TGP late':>9} {'naive@late':>10} {'r':>4} {'s':>4} {'r0':>4} "
        f"{'new D_t':>9}"
    )
    print(head + "\n" + "-" * len(head))
    a, b = tgp[marks[0]], tgp[marks[1]]
    print(f"{'tgp-ucb':<31} {_ms(a)} {_ms(b)} {b / a:>10.2f}")
    cases = [
        ("ata-gp-ucb-qff", {}, True),
        ("ata-gp-ucb-nystrom", {}, True),
        ("ata-gp-ucb-nystrom", {}, False),
        ("ata-gp-ucb-nystrom", {"schedule": "theory"}, True),
    ]
    floor = None
    for name, params, factored in cases:
        nv = 0 if params or not factored else (1 if quick else 2)
        with _factoring(factored):
            tt = timed_run(agents.make(name, **params), problem, f, marks, window, nv)
        ag = tt["agent"]
        a, b = tt[marks[0]], tt[marks[1]]
        if name == "ata-gp-ucb-nystrom" and not params and factored:
            # (only meaningful when the late window draws new dictionaries; --quick's does
            # not, and runs the measurement only to check it end to end)
            if tt[("new", marks[1])] > 0.5 > tt[("new", marks[0])] or quick:
                d = _dictionary_seconds(ag)
                floor = (a, b, d["eig"], d["calls"], d["every"], tt[("diff", marks[1])])
                floor += (ag.L_.shape[1], tgp[marks[1]], tt[("fresh", marks[1])], d)
        naive = _ms(tt[("naive", marks[1])]) if nv else f"{'-':>9}"
        label = name + ("[theory]" if params else "") + ("" if factored else "[s x s eigh]")
        L = getattr(ag, "L_", None)
        r0 = f"{L.shape[1]:>4}" if L is not None else f"{'-':>4}"
        new = (
            f"{tt[('new', marks[0])]:4.2f}/{tt[('new', marks[1])]:4.2f}"
            if hasattr(ag, "_dict_copies")
            else ""
        )
        print(
            f"{label:<31} {_ms(a)} {_ms(b)} {b / a:>10.2f} {b / tgp[marks[1]]:>9.1f} "
            f"{naive:>10} {ag.Fr_.shape[0]:>4} {ag.Q_.shape[0]:>4} {r0} {new:>9}"
        )
    print(
        "  (r: rank of the embedding; s: distinct dictionary arms / merged QFF features at the "
        "end;\n   r0: rank of the kernel matrix K = L L^T the Nyström dictionary is factored "
        "through;\n   [s x s eigh]: the same agent with that factor off (FACTOR_MAX_N = 0), "
        "i.e. an s x s\n   eigendecomposition of every new dictionary, as before issue 21; "
        "new D_t: the fraction of\n   rounds of the early/late window that drew a "
        "dictionary other than the previous one)"
    )
    if floor is not None:
        a, b, eig, calls, every, diff, r0, tgp_late, fresh, d = floor
        if quick:
            print("  (--quick: the late window draws few new dictionaries; not the bound)")
        print(
            f"  Nyström late: {fresh:.1%} of the rounds drew a dictionary no earlier round of "
            f"the window drew\n   (a cache of factorisations keyed by D_t would not be hit)."
            f"\n  Nyström late - early: {_ms(b - a).strip()} ms a round. A new dictionary needs "
            f"the r0 x r0 eigendecomposition\n   of L_S^T C L_S (LAPACK dsyevd on the last "
            f"dictionary, alone): {_ms(eig).strip()} ms, so with this early round\n   no "
            f"exact path gets late/early below (early + eigh)/early = {(a + eig) / a:.2f}; "
            f"updating the last\n   decomposition instead would take one rank-one change per "
            f"arm in or out of D_t:\n   {diff:.1f} a round on average late (r0 = {r0}), each "
            f"O(r0^2) for the eigenvalues and O(r0^3)\n   for the eigenvectors, more than "
            f"one decomposition. The calls that give the archive's\n   actions bit for bit "
            f"(nystrom_factors_from_factor, W^T G W, phi~^T phi~, alone):\n   "
            f"{_ms(calls).strip()} ms, so a bit-identical path stays at or above "
            f"(early + calls)/early = {(a + calls) / a:.2f}.\n   With the calls every round "
            f"makes for V~_t (its r x r dsyevd and the products of\n   _direction_weights, "
            f"alone: {_ms(every).strip()} ms), a bit-identical late round costs at least "
            f"{_ms(calls + every).strip()} ms,\n   {(calls + every) / tgp_late:.1f} x TGP-UCB's "
            f"late round (issue 39's target: 5 x)"
        )
        us = " ".join(f"{k} {v * 1e6:.1f}" for k, v in d["eig_times"].items())
        g, e_, cq, emb, gr = (x * 1e6 for x in d["pieces"][1:])
        low = (a - d["skipped"] + d["minimal"]) / a
        acc = (a - d["skipped"] + d["accurate"]) / a
        print(
            f"  The least any exact path adds on a new dictionary (direct BLAS/LAPACK, "
            f"each piece at its cheapest,\n   interleaved; us): gather L_S "
            f"{d['pieces'][0] * 1e6:.1f}, A^T A ({d['gram_call']}) {g:.1f}, r0 x r0 "
            f"eigenvectors ({d['eig_driver']}) {e_:.1f}\n   [{us}],\n   cut + "
            f"Q = A Z_k diag(e_k)^-1/2 {cq:.1f} (route: {d['route']}), every arm's "
            f"coordinates {emb:.1f}, V~'s Gram {gr:.1f};\n   total "
            f"{d['minimal'] * 1e6:.1f}, less the early round's update of Phi~^T Phi~ it "
            f"skips ({d['skipped'] * 1e6:.1f}): (early - skipped + minimal)/early = "
            f"{low:.2f};\n   with the Cholesky QR that keeps Q orthonormal to rounding: "
            f"{acc:.2f}."
            f"\n  Floors of late/early: any exact path {low:.2f} (accurate: {acc:.2f}), "
            f"its eigendecomposition alone {(a + eig) / a:.2f},\n   bit-identical to the "
            f"archive {(a + calls) / a:.2f}; issue 39's target 1.30, measured "
            f"{b / a:.2f}"
        )


def _dictionary_seconds(agent) -> dict:
    """CPU seconds a call, all timed interleaved (:func:`_interleaved`) on the agent's
    current arrays: ``eig``, one ``r0 x r0`` eigendecomposition (``dsyevd``, eigenvectors
    too) of ``L_S^T C L_S`` for the agent's current dictionary: the decomposition a new
    dictionary needs for ``(K_D^{1/2})^+`` (Alg. 3) on top of the ``V~^{-1/2}`` one every
    round has; ``calls``, the floating-point calls of the agent's new-dictionary branch
    (:func:`~agents.features.nystrom.nystrom_factors_from_factor`, ``W^T G W`` and
    ``phi~^T phi~``): what a path that reproduces the agent's numbers bit for bit must do
    on a new dictionary; ``every``, the calls every round makes for ``V~_t``
    (``_direction_weights``: its ``r x r`` eigendecomposition and products); and
    ``floor``, the least any exact implementation must add on a new dictionary
    (:func:`_minimal_new_dictionary`, :func:`_minimal_floor`)."""
    from scipy.linalg.lapack import dsyevd

    from agents.features.nystrom import nystrom_factors_from_factor

    c = agent._dict_copies
    S = np.flatnonzero(c)
    A = agent.L_[S] * np.sqrt(c[S])[:, None]
    H = A.T @ A
    L, G = agent.L_, agent._factor_gram()
    cs = None if int(c[S].sum()) == S.size else c[S]

    def branch():
        _, Fr, W = nystrom_factors_from_factor(L, S, cs)
        W.T @ G @ W
        np.einsum("ia,ia->a", Fr, Fr)

    minimal, check = _minimal_new_dictionary(agent)
    # the minimal calls compute the agent's embedding and V~ (up to the rounding of an
    # ill-conditioned embedding: two exact methods differ by up to ~5e-5 of max |psi|)
    emb, ref = check["Q"] @ check["Fr"], agent.Q_ @ agent.Fr_
    V = check["Q"] @ check["Gr"] @ check["Q"].T
    V_ref = agent.Q_ @ agent.Gr_ @ agent.Q_.T
    if not (
        np.abs(emb - ref).max() < 1e-3 * np.abs(ref).max()
        and np.abs(V - V_ref).max() < 1e-3 * np.abs(V_ref).max()
    ):
        raise AssertionError("the minimal new-dictionary calls do not give the agent's embedding")
    t = _interleaved(
        {
            "dsyevd": lambda: dsyevd(H, compute_v=1, lower=1),
            "calls": branch,
            "every": lambda: ata_gp_ucb._direction_weights(
                agent.Q_, agent.Fr_, agent.Gr_, agent.lam_, agent.rewards_
            ),
            **minimal,
        }
    )
    return {"eig": t["dsyevd"], "calls": t["calls"], "every": t["every"], **_minimal_floor(t)}


def _interleaved(calls: dict, blocks: int = 25, reps: int = 80) -> dict[str, float]:
    """CPU seconds per call of each of ``calls`` (name -> no-argument callable): ``blocks``
    rounds in which every callable runs ``reps`` times in turn, so a change of the
    machine's load weighs on all of them alike; the median over the rounds of each one's
    mean (robust to a round that another process slowed down)."""
    seen: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(blocks):
        for name, call in calls.items():
            t0 = time.process_time()
            for _ in range(reps):
                call()
            seen[name].append((time.process_time() - t0) / reps)
    return {name: float(np.median(v)) for name, v in seen.items()}


EIGEN_DRIVERS = ("dsyevd", "dsyevr", "dsyev", "dsyevx", "dsyevx[I]")


def _minimal_new_dictionary(agent) -> tuple[dict, dict]:
    """The least work any exact implementation of Alg. 2/3 must add to a round whose
    dictionary is new, as direct BLAS/LAPACK calls (``scipy.linalg.blas``/``lapack``, f2py
    wrappers, preallocated outputs) on the agent's current arrays, each alternative a
    separate callable so that the floor takes the cheapest: returns ``(calls, check)``,
    ``check`` the arrays they produce (to compare with the agent's).

    Why each piece is necessary. The new dictionary ``D`` changes
    ``phi~(x) = (K_D^{1/2})^+ k_D(x)`` at every arm, and the truncation of Alg. 2 is per
    coordinate of ``V~^{-1/2} Phi~^T`` in the dictionary's coordinates: a rotation
    ``U phi~`` turns ``V~^{-1/2}`` into ``U V~^{-1/2} U^T`` and the directions ``u_i`` into
    ``U u_i``, so another square root of ``K_D`` (a Cholesky factor, say) truncates other
    coordinates. With ``A = C^{1/2} L_S`` (``K = L L^T``) and its thin SVD ``U S V^T``,
    ``phi~(x) = U V^T l_x``: the polar factor of ``A``, whose kept directions (the rank cut
    ``e > s eps max e`` of the pseudo-inverse) are a function of the spectrum. Hence:

    (a) ``A^T A`` (``r0 x r0``; gather the rows ``L_S``, then ``dsyrk`` or ``dgemm``);
    (b) its eigenvectors (``dsyevd``, ``dsyevr``, ``dsyev``, ``dsyevx``, all eigenpairs;
        ``dsyevx[I]``: only the kept ones and the largest one cut, given the cut's index
        for free, which an implementation would have to guess), the cut, and the map to the
        dictionary's coordinates ``Q = A Z_k diag(e_k)^{-1/2}`` (``dgemm``, ``s x r0 x r``;
        the round's ``V~^{-1/2} Phi~^T = Q (R Y_P)`` is per row of ``Q``) -- or, instead of
        all of (a)-(b), the thin SVD of ``A`` (``dgesdd``, ``dgesvd``: ``Q = U_k`` directly);
    (c) the re-embedding: every arm's coordinates ``Fr = Z_k^T L^T`` (``dgemm``,
        ``r x r0 x n``: ``mu~`` and ``sigma~`` are needed at every arm), or, folded into the
        product ``Y = diag(e_V)^{-1/2} R_V^T Fr`` every round makes, ``(Z_k B)^T L^T``
        with ``B = R_V diag(e_V)^{-1/2}`` (counted as its excess over that product); and
        ``Phi~^T Phi~`` in the new basis, the ``r x r`` Gram of the count-weighted played
        arms' features that ``V~_t`` is built from: ``Z_k^T G Z_k`` with
        ``G = sum_a N_a l_a l_a^T`` kept current (``dger`` + ``dsymm`` + ``dgemm``), or
        from the played arms' coordinates (gather, scale by ``sqrt(N_P)``, ``dsyrk``).
        ``phi~^T phi~`` at every arm is not needed: ``k(x, x) - phi~^T phi~ +
        lambda phi~^T V~^{-1} phi~ = k(x, x) - sum_j g_j Y_jx^2`` (``g = e_V - lambda``
        the eigenvalues of the Gram), in place of the ``||Y_x||^2`` every round computes.

    What an early round does that a new-dictionary round skips: ``Phi~^T Phi~ += f f^T``
    (the agent's code, ``skipped``), subtracted so that the floor is not overstated.
    ``reortho`` is the Cholesky QR of ``A Z_k`` that keeps ``Q`` orthonormal to rounding
    (``dsyrk``, ``dpotrf``, ``dtrsm``, ``dtrmm``): not needed in exact arithmetic, needed
    for the accuracy the tests ask of the ``A^T A`` route (``Q = A Z_k diag(e_k)^{-1/2}``
    is off orthonormal by up to ~4e-2 on this problem, tests/test_ata_gp_ucb.py); the SVD
    route needs no such step."""
    from scipy.linalg import blas, lapack

    L = agent.L_  # (n, r0), Fortran order
    n, r0 = L.shape
    cop = agent._dict_copies
    S = np.flatnonzero(cop)
    s = S.size
    sq = None if int(cop[S].sum()) == s else np.sqrt(cop[S].astype(float))[:, None]
    cut_at = s * np.finfo(float).eps
    Lc = np.ascontiguousarray(L)  # rows contiguous: the gather of L_S is cheapest

    def gather():  # C order: A.T is the Fortran (r0, s) array BLAS reads
        A = Lc.take(S, axis=0)  # (a take into a preallocated ``out`` is slower)
        if sq is not None:
            A *= sq
        return A

    A = gather()
    H = np.empty((r0, r0), order="F")
    calls: dict = {
        "gather": gather,
        "gram dsyrk": lambda: blas.dsyrk(1.0, A.T, c=H, lower=1, overwrite_c=1),
        "gram dgemm": lambda: blas.dgemm(1.0, A.T, A.T, trans_b=1, c=H, overwrite_c=1),
    }
    lw_d, lw_r = lapack.dsyevd_lwork(r0, compute_v=1), lapack.dsyevr_lwork(r0)
    lw, lw_x = int(lapack.dsyev_lwork(r0)[0]), int(lapack.dsyevx_lwork(r0)[0])
    calls["eig dsyevd"] = lambda: lapack.dsyevd(
        H, compute_v=1, lower=1, lwork=int(lw_d[0]), liwork=int(lw_d[1])
    )
    calls["eig dsyevr"] = lambda: lapack.dsyevr(
        H, compute_v=1, lower=1, lwork=int(lw_r[0]), liwork=int(lw_r[1])
    )
    calls["eig dsyev"] = lambda: lapack.dsyev(H, compute_v=1, lower=1, lwork=lw)
    calls["eig dsyevx"] = lambda: lapack.dsyevx(H, compute_v=1, lower=1, lwork=lw_x)
    blas.dsyrk(1.0, A.T, c=H, lower=1, overwrite_c=1)
    e, Z, _ = lapack.dsyev(H, compute_v=1, lower=1, lwork=lw)
    k = int(e.searchsorted(cut_at * max(e[-1], 0.0), side="right"))
    # only the kept eigenpairs and the largest one cut (its index given for free)
    calls["eig dsyevx[I]"] = lambda: lapack.dsyevx(
        H, compute_v=1, range="I", il=max(k, 1), iu=r0, lower=1, lwork=lw_x
    )
    r = r0 - k
    Zk = Z[:, k:]  # Fortran order (a trailing block of columns)
    Zs = np.empty((r0, r), order="F")

    def cut():
        j = int(e.searchsorted(cut_at * e[-1], side="right"))
        np.divide(Z[:, j:], np.sqrt(e[j:]), out=Zs)

    cut()
    Qb = np.empty((s, r), order="F")
    calls["cut"] = cut
    calls["Q"] = lambda: blas.dgemm(1.0, A.T, Zs, trans_a=1, c=Qb, overwrite_c=1)
    calls["svd dgesdd"] = lambda: lapack.dgesdd(A, compute_uv=1, full_matrices=0)
    calls["svd dgesvd"] = lambda: lapack.dgesvd(A, compute_uv=1, full_matrices=0)
    sv = np.linalg.svd(A, compute_uv=False)
    sv_at = math.sqrt(cut_at)
    calls["svd cut"] = lambda: int(np.count_nonzero(sv > sv_at * sv[0]))
    Frb = np.empty((r, n), order="F")
    calls["Fr"] = lambda: blas.dgemm(1.0, Zk, L, trans_a=1, trans_b=1, c=Frb, overwrite_c=1)
    calls["Fr"]()
    # V~'s Gram in the new basis, two ways; G kept current by a rank-one update a round
    G = np.array(agent._factor_gram(), order="F")
    lrow = np.ascontiguousarray(L[agent.rewards_.played[-1]])
    Gb = np.asfortranarray(G - np.outer(lrow, lrow))  # before the last observation
    T1, Grb = np.empty((r0, r), order="F"), np.empty((r, r), order="F")

    def gram_by_G():
        blas.dger(1.0, lrow, lrow, a=Gb, overwrite_a=1)
        blas.dsymm(1.0, Gb, Zk, c=T1, overwrite_c=1)
        blas.dgemm(1.0, Zk, T1, trans_a=1, c=Grb, overwrite_c=1)

    P = np.asarray(agent.rewards_.played_idx)
    sN = np.sqrt(agent.rewards_.count[P].astype(float))[:, None]  # kept current a round

    def gram_by_P():
        FPt = Frb.T.take(P, axis=0)  # (|P|, r) C order: FPt.T is Fortran
        FPt *= sN
        blas.dsyrk(1.0, FPt.T, c=Grb, overwrite_c=1)

    calls["gram_r by G"], calls["gram_r by P"] = gram_by_G, gram_by_P
    Gr = blas.dgemm(1.0, Zk, blas.dsymm(1.0, G, Zk), trans_a=1)
    eV, RV = np.linalg.eigh(Gr + agent.lam_ * np.eye(r))
    B = np.asfortranarray(RV / np.sqrt(eV))
    Mb = np.empty((r0, r), order="F")
    Yb, Yb2 = np.empty((r, n), order="F"), np.empty((r, n), order="F")
    calls["fold M"] = lambda: blas.dgemm(1.0, Zk, B, c=Mb, overwrite_c=1)
    calls["fold Y"] = lambda: blas.dgemm(1.0, Mb, L, trans_a=1, trans_b=1, c=Yb, overwrite_c=1)
    calls["early Y"] = lambda: blas.dgemm(1.0, B, Frb, trans_a=1, c=Yb2, overwrite_c=1)
    # the Cholesky QR of A Z_k (the agent's: Q orthonormal to rounding), and W = Z_k De R^T
    Yq = blas.dgemm(1.0, A.T, Zk, trans_a=1)
    Rb = np.empty((r, r), order="F")

    def reortho():
        blas.dsyrk(1.0, Yq, trans=1, c=Rb, lower=0, overwrite_c=1)
        lapack.dpotrf(Rb, lower=0, clean=0, overwrite_a=1)
        blas.dtrsm(1.0, Rb, Yq, side=1, lower=0)
        blas.dtrmm(1.0, Rb, Zs, side=1, lower=0, trans_a=1)

    calls["reortho"] = reortho
    Grc, Frc, arm = agent.Gr_.copy(), agent.Fr_, agent.rewards_.played[-1]

    def skipped():  # the early round's update of Phi~^T Phi~, as the agent does it
        nonlocal Grc
        f = Frc[:, arm]
        Grc += np.outer(f, f)

    calls["skipped"] = skipped
    calls["Q"]()
    # what the calls write (after one call each): Q, Fr, V~'s Gram, and Y folded or not
    check = {"Q": Qb, "Fr": Frb, "Gr": Gr, "Gr_out": Grb, "Y_fold": Yb, "Y": Yb2, "B": B}
    return calls, check


def _minimal_floor(t: dict) -> dict:
    """The pieces of :func:`_minimal_new_dictionary` at their cheapest (``t``: seconds per
    call by name): the alternatives' minimum for each need, the winners' names."""
    gram = min(("gram dsyrk", "gram dgemm"), key=t.__getitem__)
    eig = min((f"eig {d}" for d in EIGEN_DRIVERS), key=t.__getitem__)
    svd = min(("svd dgesdd", "svd dgesvd"), key=t.__getitem__)
    by_eig = t[gram] + t[eig] + t["cut"] + t["Q"]
    by_svd = t[svd] + t["svd cut"]
    embed = min(t["Fr"], t["fold M"] + max(t["fold Y"] - t["early Y"], 0.0))
    gram_r = min(t["gram_r by G"], t["gram_r by P"])
    rest = t["gather"] + embed + gram_r
    return {
        "minimal": rest + min(by_eig, by_svd),
        "accurate": rest + min(by_eig + t["reortho"], by_svd),
        "skipped": t["skipped"],
        "route": "A^T A" if by_eig <= by_svd else svd.split()[1],
        "gram_call": gram.split()[1],
        "eig_driver": eig.split()[1],
        "eig_times": {d: t[f"eig {d}"] for d in EIGEN_DRIVERS},
        "pieces": (t["gather"], t[gram], t[eig], t["cut"] + t["Q"], embed, gram_r),
    }


@contextlib.contextmanager
def _factoring(on: bool):
    """ATA-GP-UCB-Nyström with (the default) or without its kernel factor ``L``."""
    saved = ata_gp_ucb.FACTOR_MAX_N
    if not on:
        ata_gp_ucb.FACTOR_MAX_N = 0
    try:
        yield
    finally:
        ata_gp_ucb.FACTOR_MAX_N = saved


def section_park_lee(quick: bool) -> None:
    T = 400 if quick else 1_000
    env = gym.make("hbo/RKHS1D-SymPareto-eps02-v0", horizon=T)
    env.reset(seed=0)
    u = env.unwrapped
    problem, f = u.problem, np.asarray(u.objective.values, dtype=float)
    mark, window = T // 2, 100
    print(f"\n2. Park–Lee 1-D, n = {problem.n} arms: CPU ms per round around t = {mark}")
    tgp = timed_run(agents.make("tgp-ucb"), problem, f, (mark,), window, 0)[mark]
    print(f"  {'tgp-ucb':<22} ours {_ms(tgp)}")
    for name in ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom"):
        tt = timed_run(agents.make(name), problem, f, (mark,), window, 2)
        ag = tt["agent"]
        print(
            f"  {name:<22} ours {_ms(tt[mark])}   naive Alg. 2 {_ms(tt[('naive', mark)])}"
            f"   speed-up {tt[('naive', mark)] / tt[mark]:6.1f}x   r = {ag.Fr_.shape[0]},"
            f" s = {ag.Q_.shape[0]}"
        )


def large_problem(n: int, horizon: int) -> tuple[SimpleNamespace, np.ndarray]:
    """``n`` uniform points in [0, 1]^2, SE ``l = 0.2``, f a 50-point kernel sum; no
    ``n x n`` kernel matrix (``kernel_matrix=None``)."""
    rng = np.random.default_rng(0)
    X = rng.random((n, 2))
    kern = SquaredExponential(0.2)
    centres = rng.choice(n, 50, replace=False)
    f = kern(X, X[centres]) @ rng.uniform(-1, 1, 50)
    f /= np.abs(f).max()
    p = SimpleNamespace(
        points=X, kernel=kern, kernel_matrix=None, n=n, dim=2, B=1.0, alpha=1.0, v=4.0,
        nu=3.0, sup_f=1.0, C=None, horizon=horizon, name=f"bench-se-2d-{n}",
    )  # fmt: skip
    return p, f


def section_large(quick: bool) -> None:
    n = 10**4 if quick else 10**5
    marks, window = ((50, 150), 20) if quick else ((50, 150), 10)
    problem, f = large_problem(n, 10_000)
    print(f"\n3. n = {n} arms in 2-D (no n x n matrix): CPU ms per round around t")
    tgp = None  # TGP-UCB needs problem.kernel_matrix (n x n): beside ours only at n = 10^4
    if n <= 10**4:
        tgp = timed_run(agents.make("tgp-ucb"), _with_matrix(problem), f, marks, window, 0)
    tt = timed_run(agents.make("ata-gp-ucb-nystrom"), problem, f, marks, window, 1)
    ag = tt["agent"]
    for m in marks:
        ref = f"   tgp-ucb {_ms(tgp[m])}" if tgp else ""
        print(
            f"  ata-gp-ucb-nystrom t~{m:<5} ours {_ms(tt[m])}   naive Alg. 2 "
            f"{_ms(tt[('naive', m)])}{ref}"
        )
    rows = len(ag._rows)
    print(
        f"  at the end: r = {ag.Fr_.shape[0]}, s = {ag.Q_.shape[0]}, played "
        f"{len(ag.rewards_.played)} arms, {rows} kernel rows cached "
        f"({rows * n * 8 / 2**20:.0f} MiB)"
    )


def _with_matrix(p: SimpleNamespace):
    from hbo_envs.problem import Problem

    return Problem(
        points=p.points, kernel_matrix=p.kernel(p.points), kernel=p.kernel, B=p.B,
        alpha=p.alpha, v=p.v, nu=p.nu, sup_f=p.sup_f, horizon=p.horizon, name=p.name,
    )  # fmt: skip


def section_rewards(quick: bool) -> None:
    marks = (1_000, 10_000, 100_000) if quick else (1_000, 10_000, 100_000, 1_000_000)
    print("\n4. ArmRewards: CPU us per new reward at an arm holding N_a rewards (mean of 1000)")
    print(f"  {'N_a':>9} {'ours':>9} {'one run':>9} {'ours: sums(35 thresholds)':>26}")
    ys = np.random.default_rng(0).standard_t(3.0, size=max(marks) + 1_000).tolist()
    level = np.quantile(np.abs(ys[:1000]), np.linspace(0.05, 0.95, 35))
    W = np.ones((35, 1))
    saved = ata_gp_ucb.ArmRewards.RUN_MIN
    res: dict[str, dict] = {}
    for label, run_min in (("ours", saved), ("one run", 10**12)):
        ata_gp_ucb.ArmRewards.RUN_MIN = run_min
        store, i, out = ata_gp_ucb.ArmRewards(1), 0, {}
        try:
            for m in marks:
                while i < m:
                    store.add(0, ys[i])
                    i += 1
                t0 = time.process_time()
                for _ in range(1_000):
                    store.add(0, ys[i])
                    i += 1
                out[m] = (time.process_time() - t0) / 1_000
                t0 = time.process_time()
                for _ in range(100):
                    store.sums(W, level)
                out["sums", m] = (time.process_time() - t0) / 100
        finally:
            ata_gp_ucb.ArmRewards.RUN_MIN = saved
        res[label] = out
    for m in marks:
        ours, one = res["ours"], res["one run"]
        print(f"  {m:>9} {ours[m] * 1e6:>9.1f} {one[m] * 1e6:>9.1f} {ours['sums', m] * 1e6:>26.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (not the targets)")
    ap.add_argument(
        "--sections", type=int, nargs="+", default=[1, 2, 3, 4], help="which sections (1-4)"
    )
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(
        f"hbo-bench ATA-GP-UCB benchmark — numpy {np.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} cores, 1-min load average at start {load:.1f}"
    )
    print("BLAS limited to one thread (as in a harness cell)\n")
    with threadpool_limits(1):
        sections = (section_100_arms, section_park_lee, section_large, section_rewards)
        for k, section in enumerate(sections, 1):
            if k in args.sections:
                section(args.quick)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(f"\n1-min load average at the end {load:.1f}")


if __name__ == "__main__":
    main()
