"""ATA-GP-UCB: Adaptively Truncated Approximate GP-UCB, Chowdhury & Gopalan (NeurIPS 2019),
Algorithm 2, with quadrature Fourier features (§5(a), eq. (1)) or Nyström embeddings
(§5(b), Algorithm 3).

Round ``t`` of Algorithm 2:

1. play ``x_t = argmax_x mu~_{t-1}(x) + beta_t sigma~_{t-1}(x)`` and observe ``y_t``;
2. embedding ``phi~_t`` (QFF: fixed; Nyström: a freshly sampled dictionary ``D_t``);
3. ``Phi~_t^T = [phi~_t(x_1), ..., phi~_t(x_t)]``, ``V~_t = Phi~_t^T Phi~_t + lambda I``;
4. rows ``u_i`` of ``V~_t^{-1/2} Phi~_t^T``;
   ``r^_i = sum_{tau <= t} u_{i,tau} y_tau 1{|u_{i,tau} y_tau| <= b_t}`` (every historical
   reward re-truncated in every direction);
5. ``theta~_t = V~_t^{-1/2} r^``, ``mu~_t(x) = phi~_t(x)^T theta~_t``;
6. ``sigma~_t^2(x) = lambda phi~_t(x)^T V~_t^{-1} phi~_t(x)`` (QFF, choice (i)) or
   ``k(x, x) - phi~_t(x)^T phi~_t(x) + lambda phi~_t(x)^T V~_t^{-1} phi~_t(x)`` (Nyström,
   choice (iii); DESIGN.md).

**Cost independent of t (finite domains).** All observations at arm ``a`` share the
column ``u_{., a} = V~^{-1/2} phi~(a)`` (call the ``k x n`` matrix ``W``). So
``r^_i = sum_a W[i, a] * (sum of the y at a with |y| <= b_t / |W[i, a]|)``: each arm keeps
its rewards sorted by ``|y|`` with prefix sums (:class:`ArmRewards`) and the inner sum is
its total or 0 when the threshold is above or below all of them, else one binary search:
``O(k |P|)`` work per round (``|P|`` arms played) plus ``O(log N)`` per split entry.
``Phi~^T Phi~ = sum_a N_a phi~(a) phi~(a)^T`` comes from per-arm counts, one rank-one
update per round while the embedding stays the same (QFF always; Nyström while ``D_t``
does not change: on 100 arms, most rounds while every played arm has ``q sigma~^2 >= 1``).

**In the span of the embedding.** Every ``phi~(x)`` lies in an ``r``-dimensional subspace
``span(Q)`` (``r`` = the numerical rank of the QFF feature matrix, or the eigenvalues of
``K_DD`` kept by its pseudo-inverse square root; :func:`~agents.features.nystrom.nystrom_factors`),
and ``V~_t`` is ``lambda`` on its complement, so :func:`truncated_estimate` only
eigendecomposes the ``r x r`` matrix ``Q^T V~_t Q``. ``r`` is bounded on a fixed domain
(17-18 for the SE kernel ``l = 0.2`` on 100 arms in ``[0, 1]``) while the dictionary size
``s`` and ``2m`` are not; the round costs ``O(r^3 + r^2 n + k r |P|)``, plus, for a new
Nyström dictionary, ``O(s r0^2 + r0^3 + r0 r n)``: the eigendecomposition of the
``r0 x r0`` matrix ``L_S^T C L_S`` and a Cholesky QR, with ``K = L L^T`` factored once at
``reset`` (``r0`` the numerical rank of ``K``, 21 on those 100 arms), instead of the
eigendecomposition of the ``s x s`` matrix ``C^{1/2} K_SS C^{1/2}`` (kept when there is
no dense ``K`` or more than :data:`FACTOR_MAX_N` arms, and for ``s <= r0``), and
``Phi~^T Phi~ = W^T G W`` from the ``r0 x r0`` sum ``G = sum_a N_a l_a l_a^T``, brought
up to date on each new dictionary with the observations since the last (one rank-one
update each late in a run; see :mod:`agents.features.nystrom`). Late in a run the
dictionary is new every round, early it is the same for many rounds, so a Nyström round
late costs one ``r0 x r0`` eigendecomposition and a few small products more than early.
``mu~_t = W^T r^`` and ``lambda phi~^T V~^{-1} phi~ = lambda ||W[:, x]||^2``.
``benchmarks/bench_ata.py`` measures early and late rounds beside TGP-UCB and the naive
Algorithm 2.

Nothing is approximated beyond the algorithm itself (the kernel factor ``L`` leaves out
only eigenvalues of ``K`` at the level of its rounding); ``tests/test_ata_gp_ucb.py`` checks
actions and estimates against a naive transcription of Algorithm 2 (per-observation loops,
``t x m`` matrices), with dictionaries of fewer and of more than ``r0`` arms.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg.blas import dger as _dger

from agents.features.nystrom import (
    eigh,
    kernel_factor,
    nystrom_factors,
    nystrom_factors_from_factor,
    sample_copies_distinct,
    sample_copies_per_arm,
)
from agents.features.qff import (
    QFF_MAX_BYTES,
    qff_error,
    qff_features_paired,
    qff_memory_bytes,
)
from agents.gp.base import GPUCBAgent
from agents.schedules import Schedule
from hbo_envs.kernels import Kernel, SquaredExponential, make_kernel
from hbo_envs.memory import check_memory
from hbo_envs.validation import check_int, check_real, param_error

__all__ = [
    "ATAGPUCBNystrom",
    "ATAGPUCBQFF",
    "ATA_LAM_RANGE",
    "ATA_MIN_EPS",
    "ArmRewards",
    "FACTOR_MAX_N",
    "QFF_WARN_ERROR",
    "truncated_estimate",
]

#: Largest number of arms for which ATA-GP-UCB-Nyström factors the dense kernel matrix at
#: ``reset`` (one ``n x n`` eigendecomposition, ``O(n^3)``).
FACTOR_MAX_N = 2000

#: ``reset`` warns when the QFF sup-norm error on the candidate set is at least this.
QFF_WARN_ERROR = 0.1

#: Allowed ``lam`` of both variants. ``V~_t^{-1/2}`` has entries up to ``lambda^{-1/2}`` and
#: the variance carries ``lambda ||V~^{-1/2} phi~||^2``: ``lambda`` of ``1e-300`` squares to
#: an overflow (and below ``~1e-16 ||V~||`` an eigenvalue of ``V~`` computed as
#: ``Phi^T Phi + lambda I`` can round to <= 0, a NaN), so it is bounded like a lengthscale.
ATA_LAM_RANGE = (1e-100, 1e100)

#: Smallest Nyström accuracy ``eps``: ``q ~ ln(T) / eps^2`` must stay finite (``eps = 1e-300``
#: squared underflows to 0, a division by zero); at ``eps <= ~1e-10`` every played arm is in
#: every dictionary already (``q sigma^2 >= 1``), so nothing is lost.
ATA_MIN_EPS = 1e-100


def _insert_sorted(ab: np.ndarray | None, pre: np.ndarray | None, c: int, y: float):
    """Insert ``|y|`` into the sorted run ``ab[:c]`` and ``y`` into its prefix sums
    ``pre[:c + 1]`` (capacity doubled when full): ``O(c)`` element moves."""
    if ab is None:
        ab, pre = np.empty(8), np.zeros(9)
    elif c == ab.size:
        ab = np.concatenate([ab, np.empty(c)])
        pre = np.concatenate([pre, np.zeros(c)])
    a = abs(y)
    pos = int(np.searchsorted(ab[:c], a, side="right"))
    ab[pos + 1 : c + 1] = ab[pos:c].copy()
    ab[pos] = a
    # Prefix sums in |y| order: entries after the insertion point all gain y.
    pre[pos + 2 : c + 2] = pre[pos + 1 : c + 1] + y  # type: ignore[index]
    pre[pos + 1] = pre[pos] + y  # type: ignore[index]
    return ab, pre


class ArmRewards:
    """Per-arm rewards sorted by ``|y|``, with prefix sums of ``y`` in that order.

    ``sums(W, level)[i, j] = sum of y at arm played[j] with |W[i, j] y| <= level[i]``;
    an entry whose threshold ``level[i] / |W[i, j]|`` lies at or above the arm's largest
    ``|y|`` (or below its smallest) is the arm's total (or 0) without a search, the others
    are one binary search per sorted run, ``O(log N_a)``; independent of the number of
    rounds.

    **Flat insertion.** Up to :attr:`RUN_MIN` rewards an arm keeps one sorted run, and a
    new reward moves ``O(N_a)`` entries (one memory move of at most 4096). Beyond, new
    rewards go to a second, pending run of at most ``max(64, sqrt(N_a))`` entries, merged
    into the main run when full (``O(N_a)`` every ``sqrt(N_a)`` rewards):
    ``O(sqrt(N_a))`` moves per reward, amortised, instead of ``O(N_a)`` (section 4 of
    ``benchmarks/bench_ata.py`` measures both up to ``N_a = 10^6``). The sum over an arm is
    then the main run's prefix sum plus the pending run's, and a merge adds the two
    prefix sums at each merged position (no differences, so nothing cancels).

    Parameters
    ----------
    n : int
        Number of arms, at least 1. Refused before allocating (:class:`ValueError` naming
        ``n``; :class:`~hbo_envs.memory.MemoryLimitError` with the estimated size) when it is
        not a positive integer or its ``~80 n`` bytes of per-arm state would not fit.

    >>> R = ArmRewards(3); R.add(1, -2.0); R.add(1, 0.5)
    >>> R.sums(np.array([[1.0]]), np.array([1.0]))   # arm 1's rewards with |y| <= 1
    array([[0.5]])
    """

    #: Rewards of one arm kept in a single sorted run before the pending run is used.
    RUN_MIN = 4096

    def __init__(self, n: int) -> None:
        # 6 arrays of n 8-byte numbers and 4 lists of n pointers, before any reward.
        n = check_int("ArmRewards", "n", n, 1)
        check_memory("ArmRewards", "n", n, 80.0 * n, "Use fewer arms.")
        self.n = n
        self.count = np.zeros(n, dtype=np.int64)
        self._abs: list[np.ndarray | None] = [None] * n  # main run: sorted |y|
        self._pre: list[np.ndarray | None] = [None] * n  # and its prefix sums of y
        self._main = np.zeros(n, dtype=np.int64)  # entries in the main run
        self._pabs: list[np.ndarray | None] = [None] * n  # pending run (past RUN_MIN)
        self._ppre: list[np.ndarray | None] = [None] * n
        self._pend = np.zeros(n, dtype=np.int64)  # entries in the pending run
        self.played: list[int] = []  # arms played at least once, ascending
        self.played_idx = np.zeros(0, dtype=np.int64)  # the same as an index array
        self._lo = np.zeros(n)  # smallest |y| at each arm
        self._hi = np.zeros(n)  # largest |y|
        self._total = np.zeros(n)  # sum of y

    def add(self, arm: int, y: float) -> None:
        c, cp = int(self._main[arm]), int(self._pend[arm])
        if self._abs[arm] is None:
            self.played.append(arm)
            self.played.sort()
            self.played_idx = np.array(self.played, dtype=np.int64)
        if c < self.RUN_MIN:
            ab, pre = _insert_sorted(self._abs[arm], self._pre[arm], c, y)
            self._abs[arm], self._pre[arm] = ab, pre
            self._main[arm] = c = c + 1
            self._lo[arm], self._hi[arm], self._total[arm] = ab[0], ab[c - 1], pre[c]
        else:
            pab, ppre = _insert_sorted(self._pabs[arm], self._ppre[arm], cp, y)
            self._pabs[arm], self._ppre[arm] = pab, ppre
            self._pend[arm] = cp = cp + 1
            a = abs(y)
            self._lo[arm] = min(self._lo[arm], a)
            self._hi[arm] = max(self._hi[arm], a)
            self._total[arm] = self._pre[arm][c] + ppre[cp]  # type: ignore[index]
            if cp >= max(64, math.isqrt(c)):
                self._merge(arm)
        self.count[arm] += 1

    def _merge(self, arm: int) -> None:
        """The pending run into the main run: the merged prefix sum at each position is
        the main run's prefix sum plus the pending run's, over the entries before it."""
        c, cp = int(self._main[arm]), int(self._pend[arm])
        ab, pre = self._abs[arm][:c], self._pre[arm][: c + 1]  # type: ignore[index]
        pab, ppre = self._pabs[arm][:cp], self._ppre[arm][: cp + 1]  # type: ignore[index]
        at = ab.searchsorted(pab, side="right")  # pending entry k goes before ab[at[k]]
        merged = np.insert(ab, at, pab)
        pos = at + np.arange(cp)  # the pending entries' positions in the merged run
        p = np.arange(c + cp + 1)
        j = pos.searchsorted(p, side="left")  # pending entries before merged position p
        new_pre = pre[p - j] + ppre[j]
        cap = max(2 * (c + cp), 8)
        self._abs[arm] = np.concatenate([merged, np.empty(cap - merged.size)])
        self._pre[arm] = np.concatenate([new_pre, np.zeros(cap + 1 - new_pre.size)])
        self._main[arm], self._pend[arm] = c + cp, 0

    def count_above(self, thr: np.ndarray) -> int:
        """Number of rewards with ``|y| > thr[j]`` at arm ``played[j]`` (one binary search
        per sorted run)."""
        out = 0
        for j, a in enumerate(self.played):
            c = int(self.count[a])
            if thr[j] >= self._hi[a]:
                continue
            if thr[j] < self._lo[a]:
                out += c
                continue
            kept = int(self._abs[a][: self._main[a]].searchsorted(thr[j], side="right"))  # type: ignore[index]
            if self._pend[a]:
                pab = self._pabs[a][: self._pend[a]]  # type: ignore[index]
                kept += int(pab.searchsorted(thr[j], side="right"))
            out += c - kept
        return out

    def sums(self, W: np.ndarray, level: np.ndarray) -> np.ndarray:
        """``S[i, j] = sum_{y at a} y 1{|W[i, j] y| <= level[i]}`` for ``a = played[j]``.

        ``W`` (k, len(played)) holds the columns of the played arms, in :attr:`played`
        order; the result has its shape.
        """
        P = self.played_idx
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # |W y| <= b  <=>  |y| <= b / |W|  (W = 0: every y counts, times W = 0).
            thr = level[:, None] / np.abs(W)
        if not level.all():  # 0 / 0: no reward is truncated (and W = 0 weighs them by 0)
            thr[np.isnan(thr)] = np.inf
        full = thr >= self._hi[P]
        S = np.where(full, self._total[P], 0.0)
        split = thr >= self._lo[P]
        split &= ~full  # some, not all, of the arm's rewards count
        abs_, pre, main, pend = self._abs, self._pre, self._main, self._pend
        for j in np.flatnonzero(split.any(axis=0)).tolist():
            a = self.played[j]
            idx = abs_[a][: main[a]].searchsorted(thr[:, j], side="right")  # type: ignore[index]
            S[:, j] = pre[a][idx]  # type: ignore[index]
            if pend[a]:
                pab, ppre = self._pabs[a], self._ppre[a]
                idx = pab[: pend[a]].searchsorted(thr[:, j], side="right")  # type: ignore[index]
                S[:, j] += ppre[idx]  # type: ignore[index]
        return S


def _direction_weights(
    Q: np.ndarray, Fr: np.ndarray, Gr: np.ndarray, lam: float, rewards: ArmRewards
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Y, Q R, W_P)`` of :func:`truncated_estimate`: ``W_P`` holds the direction weights
    ``u_{., tau}`` (column per played arm) of Alg. 2 line 4."""
    A = Gr.copy()
    A.flat[:: A.shape[0] + 1] += lam
    e, R = eigh(A)
    # Every eigenvalue is >= lambda; one computed below it is rounding (sqrt(<= 0) when
    # lambda is tiny next to ||Gr||), so clip at lambda.
    Y = (R / np.sqrt(np.maximum(e, lam))).T @ Fr
    QR = Q @ R
    return Y, QR, QR @ Y[:, rewards.played_idx]  # the columns u_{., tau} of the played arms


def truncated_estimate(
    Q: np.ndarray, Fr: np.ndarray, Gr: np.ndarray, lam: float, level: np.ndarray,
    rewards: ArmRewards,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Alg. 2 lines 4-5 in the space of arms: ``(mu~_t, ||V~^{-1/2} phi~||^2)`` at every arm.

    The embedding of the arms is ``F = Q @ Fr`` (k, n): ``Q`` (k, r) has orthonormal
    columns spanning every ``phi~(x)`` and ``Fr`` (r, n) holds the coordinates;
    ``Gr = Fr_P N Fr_P^T`` (r, r) is ``Phi~^T Phi~`` in that basis (``N`` the per-arm
    counts), so ``V~_t = Q (Gr + lambda I_r) Q^T + lambda (I - Q Q^T)``, and ``level`` (k,)
    is the truncation level of each of the ``k`` directions.

    With ``Gr + lambda I_r = R diag(e) R^T``: ``V~^{-1/2} F = (Q R) Y`` where
    ``Y = diag(e^{-1/2}) R^T Fr`` (the ``lambda^{-1/2}`` part meets no ``phi~``). Column
    ``a`` of ``W = (Q R) Y`` holds the direction weights ``u_{., tau}`` of every ``y_tau``
    at arm ``a``, ``||V~^{-1/2} phi~(x)||^2 = ||Y[:, x]||^2`` and
    ``mu~(x) = W[:, x]^T r^ = Y[:, x]^T (Q R)^T r^``. Cost ``O(r^3 + r^2 n + k r |P|)``
    instead of ``O(k^3 + k^2 n)``: ``r <= min(k, n)``.
    """
    Y, QR, WP = _direction_weights(Q, Fr, Gr, lam, rewards)
    S = rewards.sums(WP, level)
    r_hat = np.einsum("ij,ij->i", WP, S)  # Alg. 2 line 4: r^_i
    # line 5: mu~(x) = phi~(x)^T V~^{-1/2} r^ = W[:, x]^T r^.
    return Y.T @ (QR.T @ r_hat), np.einsum("ia,ia->a", Y, Y)


def _dense_kernel(problem: Any) -> np.ndarray | None:
    """The problem's stored ``n x n`` kernel matrix, or ``None`` when it has none: no
    matrix at all, or a lazy one (``problem.kernel_is_lazy``, large ``n``), which is read
    through the problem's accessors instead of being made dense."""
    if getattr(problem, "kernel_is_lazy", False):
        return None
    K = getattr(problem, "kernel_matrix", None)
    return None if K is None else np.asarray(K, dtype=float)


def _kernel_diag(problem: Any) -> np.ndarray:
    """``k(x, x)`` at every arm: from the stored kernel matrix, else the problem's
    ``kernel_diag()`` accessor, else ``problem.kernel`` on the points."""
    K = _dense_kernel(problem)
    if K is not None:
        return np.diagonal(K)
    if hasattr(problem, "kernel_diag"):
        return np.asarray(problem.kernel_diag(), dtype=float)
    return np.asarray(problem.kernel.diag(problem.points), dtype=float)


def orthonormal_factors(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``F = Q @ Fr`` with ``Q`` (k, r) orthonormal columns, by the thin SVD of ``F`` (k, n).

    Singular values at or below ``max(k, n) * machine epsilon * largest`` (the rank
    convention of ``numpy.linalg.matrix_rank``) are dropped: the columns of ``F`` leave
    ``span(Q)`` by at most that much.
    """
    U, sv, Vt = np.linalg.svd(F, full_matrices=False)
    keep = sv > (max(F.shape) * np.finfo(float).eps * sv[0] if sv.size else 0.0)
    return U[:, keep], sv[keep, None] * Vt[keep]


class _ATAGPUCB(GPUCBAgent):
    """Shared machinery of the two ATA-GP-UCB variants (not registered itself)."""

    _exact_info_gain = False  # the posterior is the embedding's, not the exact GP's

    def diagnostics(self) -> dict[str, float]:
        """``{"altered_fraction": share of the rewards so far that the current estimate
        truncates}``: Alg. 2 line 4 re-truncates every reward in every direction each
        round, so a reward counts as altered when ``|u_{i,tau} y_tau| > b_t`` in at least
        one direction ``i`` of the current ``mu~_t`` (0 before any reward)."""
        rewards = self.rewards_
        total = int(rewards.count.sum())
        if not total:
            return {"altered_fraction": 0.0}
        _, _, WP = _direction_weights(self.Q_, self.Fr_, self.Gr_, self.lam_, rewards)
        level = self.b_(self.t_ - 1) * self.level_scale_  # the level of the last update
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            thr = level[:, None] / np.abs(WP)  # |W y| <= b  <=>  |y| <= b / |W|
        thr[np.isnan(thr)] = np.inf  # 0 / 0: W = 0 weighs the reward by 0, never altered
        return {"altered_fraction": rewards.count_above(thr.min(axis=0)) / total}

    # -------------------------------------------------------------- GPUCBAgent hooks
    def _make_engine(self, problem: Any) -> Any:
        return self  # the posterior state lives on the agent: mean_, var_, std()

    def std(self) -> np.ndarray:
        """``sigma~_{t-1}`` at every arm (the engine query used by ``act``/``posterior``)."""
        if self._std_ is None:
            sd = np.sqrt(np.maximum(self.var_, 0.0))
            sd.setflags(write=False)
            self._std_ = sd
        return self._std_

    def _estimate(self) -> np.ndarray:
        return self.mean_

    def _common_setup(self, problem: Any, kdiag: np.ndarray | None = None) -> None:
        lo, hi = ATA_LAM_RANGE
        self.lam_ = check_real(self._owner, "lam", self.lam, lo, hi, "both")
        alpha = float(problem.alpha)
        self.alpha_ = alpha
        self.T_ = int(problem.horizon)
        needs_v = self.b is None or self.beta is None
        self.v_scale_ = (
            self._constant(problem, "v", override="b and beta") ** (1.0 / (1.0 + alpha))
            if needs_v
            else math.nan
        )
        if self.beta is None:
            self.B_ = self._constant(problem, "sup_f" if self.schedule_ == "experiment" else "B")
        # t^{(1-alpha)/(2(1+alpha))}: the growth of b_t and beta_t (Lemma 1, Thm. 4).
        self.t_exp_ = (1.0 - alpha) / (2.0 * (1.0 + alpha))
        self.b_ = Schedule.resolve(self._owner, "b", self.b, self._default_b)
        self.truncation_scale_ = check_real(
            self._owner, "truncation_scale", self.truncation_scale, 0.0, None, "neither"
        )
        self.beta_ = self._make_beta()
        self.rewards_ = ArmRewards(int(problem.n))
        if kdiag is None:
            kdiag = _kernel_diag(problem)
        self.kdiag_ = np.array(kdiag, dtype=float)
        # Alg. 2 "Set": mu~_0 = 0, sigma~_0^2 = k(x, x).
        self.mean_ = np.zeros(int(problem.n))
        self.var_ = self.kdiag_.copy()
        self._std_: np.ndarray | None = None

    @staticmethod
    def _ln(num: float, delta: float = 1.0) -> float:
        """``max(ln(num / delta), 1)``, in logs when ``num / delta`` overflows (tiny delta)."""
        x = num / delta
        ln = math.log(x) if math.isfinite(x) else math.log(num) - math.log(delta)
        return max(ln, 1.0)

    def _b_formula(self, t: int, ln: float) -> float:
        # b_t = (v / ln)^{1/(1+alpha)} t^{(1-alpha)/(2(1+alpha))}
        return self.v_scale_ / ln ** (1.0 / (1.0 + self.alpha_)) * t**self.t_exp_

    def _beta_formula(self, t: float, m: float, ln: float, lead: float, c: float) -> float:
        # beta = lead + c sqrt(m) v^{1/(1+alpha)} ln^{alpha/(1+alpha)} t^{...}
        a = self.alpha_
        return lead + c * math.sqrt(m) * self.v_scale_ * ln ** (a / (1.0 + a)) * t**self.t_exp_

    def _observe(self, arm: int, reward: float) -> None:
        self.rewards_.add(arm, reward)
        self._refit(arm)
        self._std_ = None

    def _refit(self, arm: int) -> None:
        raise NotImplementedError


class ATAGPUCBQFF(_ATAGPUCB):
    """ATA-GP-UCB with quadrature Fourier features (Chowdhury–Gopalan 2019, Alg. 2 + eq. (1)).

    The embedding is the ``2m``-dimensional QFF map of the SE kernel (``m = mbar^d``),
    fixed for the whole run; variance choice (i) ``lambda phi^T V~^{-1} phi``. Needs an
    analytic SE kernel: ``problem.kernel`` (``problem.kernel.name == "se"``), or the
    ``kernel`` parameter, an SE kernel on ``problem.points`` that replaces the problem's
    (CG 2019 §6 item 3: on the light sensors, whose kernel is data-derived, QFF runs with an
    SE kernel of ``l^2 = 0.1`` on the sensor coordinates). Without it, data-derived or other
    kernels are refused at ``reset``, as the paper does ("Since the kernel is data
    dependent, we cannot run ATA-GP-UCB-QFF"), and so are embeddings that would not fit in
    ``max_bytes``.

    Schedules (``T = problem.horizon``, ``e = (1-alpha)/(2(1+alpha))``):

    - ``"experiment"`` (authors' public code; DESIGN.md "ATA-GP-UCB (QFF, feature
      dimension m)"), ``B = problem.sup_f`` and ``m = 2 mbar^d``, the **feature count**
      (a cosine and a sine per quadrature node: 64 for the paper's 1-D ``mbar = 32``), which
      is what the authors' code puts into both formulas (issue 38 item 5: with
      ``m = mbar^d`` our R_T/T on their ten functions was 0.062 below theirs, with the
      feature count within 0.004):
      ``b_t = (v/ln(mT))^{1/(1+alpha)} t^e``,
      ``beta_t = B sqrt(lambda) + sqrt(m) v^{1/(1+alpha)} ln(mT)^{alpha/(1+alpha)} t^e``;
    - ``"theory"`` (Lemma 1 / Thm. 3), ``B = problem.B`` and the paper's ``m = mbar^d``
      (the embedding has ``2m`` features; ``2m`` in ``ln(2mT/delta)`` is the union over
      them):
      ``b_t = (v/ln(2mT/delta))^{1/(1+alpha)} t^e``,
      ``beta_{t+1} = B + 4 sqrt(m/lambda) v^{1/(1+alpha)} ln(2mT/delta)^{alpha/(1+alpha)} t^e``.

    (Logarithms of arguments below ``e`` are taken at ``e``, so tiny ``m T`` cannot divide by 0.)

    Parameters
    ----------
    schedule, lam, delta, beta
        See :class:`~agents.gp.base.GPUCBAgent`; ``lam`` must lie in
        :data:`ATA_LAM_RANGE` ``= [1e-100, 1e100]``.
    b : None, float or callable
        Override of the truncation level ``b_t``.
    truncation_scale : float
        Positive multiplier ``c`` of the level only: coordinates beyond ``c b_t`` (times
        the copies' scale) are truncated (default 1.0, Alg. 2 as printed; the width keeps
        ``b_t``). The ``tuned`` configuration searches it (issue 35, ``agents.configs``).
    mbar : None or int
        Gauss–Hermite nodes per dimension. ``None`` (default): the paper's settings, 32 in
        1-D (§6, "m = 32 features") and 16 in 2-D (§6, light sensors: "m = 16^2 = 256");
        32 otherwise, which the memory check refuses from d = 3 on.
    m : None or int
        The paper's ``m = mbar^d`` (the embedding has ``2m`` features), an alternative to
        ``mbar``: it must be the ``d``-th power of an integer (``m = 256`` in 2-D is
        ``mbar = 16``). Give ``mbar`` or ``m``, not both.
    kernel : None, Kernel, str or dict
        ``None`` (default): ``problem.kernel``. Otherwise the SE kernel the embedding
        approximates, on ``problem.points`` (a :class:`~hbo_envs.kernels.SquaredExponential`,
        ``"se"`` or a spec such as ``{"name": "se", "lengthscale": 0.1 ** 0.5}``, see
        :func:`~hbo_envs.kernels.make_kernel`). The agent then models ``f`` in that
        kernel's RKHS: its prior variance is that kernel's ``k(x, x) = 1``; ``problem.B``
        (theory schedule) still refers to the problem's kernel, so pass ``beta=...`` if
        that matters.
    max_bytes : int
        Memory budget of the embedding (default :data:`~agents.features.qff.QFF_MAX_BYTES`).

    Attributes
    ----------
    m_ : int
        The paper's ``m = mbar^d`` (the theory schedules).
    n_features_ : int
        The embedding's feature count ``2 mbar^d`` (the experiment schedules).
    qff_error_ : float
        ``max |k(x, y) - phi(x)^T phi(y)|`` over the candidate set (``eps_m`` of Lemma 1,
        which needs ``eps_m < 1``; the bound on ``[0, 1]^d`` is
        :func:`~agents.features.qff.qff_error_bound`).

    >>> import numpy as np, agents
    >>> from hbo_envs.kernels import SquaredExponential
    >>> from hbo_envs.problem import Problem
    >>> X = np.linspace(0, 1, 20)[:, None]; k = SquaredExponential(0.2)
    >>> p = Problem(points=X, kernel_matrix=k(X), kernel=k, B=1.0, alpha=1.0, v=4.0,
    ...             nu=3.0, sup_f=1.0, horizon=100)
    >>> agent = agents.make("ata-gp-ucb-qff"); agent.reset(p, seed=0)
    >>> a = agent.act(); agent.update(a, 0.5)
    >>> agent.qff_error_ < 1e-8
    True

    With a data-derived kernel (as on ``hbo/LightSensor-v0``), name the SE kernel to use:

    >>> from hbo_envs.kernels import EmpiricalKernel
    >>> q = p.replace(kernel=EmpiricalKernel())
    >>> agent = agents.make("ata-gp-ucb-qff", kernel={"name": "se", "lengthscale": 0.2})
    >>> agent.reset(q, seed=0); agent.kernel_
    SquaredExponential(lengthscale=0.2)
    """

    name = "ata-gp-ucb-qff"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        b: Any = None,
        truncation_scale: float = 1.0,
        mbar: int | None = None,
        max_bytes: int = QFF_MAX_BYTES,
        m: int | None = None,
        kernel: Kernel | str | dict[str, Any] | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta)
        self.b = b
        self.truncation_scale = truncation_scale
        self.mbar = mbar
        self.max_bytes = max_bytes
        self.m = m
        self.kernel = kernel

    def _kernel_param(self) -> SquaredExponential:
        """The ``kernel`` parameter as an SE kernel, or the uniform error naming it."""
        allowed = (
            "None (the problem's kernel) or a squared-exponential kernel: a "
            "SquaredExponential, 'se' or a dict such as {'name': 'se', 'lengthscale': 0.3}"
        )
        try:
            kern = make_kernel(self.kernel)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            msg = str(param_error(self._owner, "kernel", allowed, self.kernel))
            raise ValueError(f"{msg} ({exc})") from exc
        if not isinstance(kern, SquaredExponential):
            raise param_error(self._owner, "kernel", allowed, self.kernel)
        return kern

    def _mbar_param(self, d: int) -> int:
        owner = self._owner
        if self.m is None:
            default = 16 if d == 2 else 32  # CG 2019 §6: 32 in 1-D, 16^2 on the 2-D sensors
            return default if self.mbar is None else check_int(owner, "mbar", self.mbar, 1)
        m = check_int(owner, "m", self.m, 1)
        if self.mbar is not None:
            raise param_error(
                owner, "m", f"None when mbar is given (mbar = {self.mbar!r}; m = mbar^d)", m
            )
        mbar = round(m ** (1.0 / d))
        mbar = next((c for c in (mbar - 1, mbar, mbar + 1) if c >= 1 and c**d == m), 0)
        if not mbar:
            allowed = f"mbar^{d} for an integer mbar >= 1 (m = mbar^d, d = {d})"
            raise param_error(owner, "m", allowed, m)
        return mbar

    def _setup(self, problem: Any) -> None:
        owner = self._owner
        d = int(problem.dim)
        mbar = self._mbar_param(d)
        # a byte count a machine can address (2**64 is not one: refused, not ignored)
        max_bytes = check_int(owner, "max_bytes", self.max_bytes, 1, 2**63 - 1)
        kern = problem.kernel if self.kernel is None else self._kernel_param()
        if getattr(kern, "name", None) != "se" or not getattr(kern, "analytic", False):
            raise ValueError(
                f"{owner} needs an analytic squared-exponential kernel (QFF is the "
                f"Gauss–Hermite quadrature of the SE kernel's spectral measure, CG 2019 §5(a)); "
                f"got problem.kernel = {kern!r}. Pass kernel={{'name': 'se', 'lengthscale': "
                f"...}} to run QFF with an SE kernel on problem.points instead (CG 2019 §6 "
                f"item 3), or use 'ata-gp-ucb-nystrom' for other or data-derived kernels."
            )
        self.kernel_ = kern
        n = int(problem.n)
        need = qff_memory_bytes(n, d, mbar)
        if need > max_bytes:
            raise ValueError(
                f"{owner}: a QFF embedding with mbar={mbar} in d={d} dimensions has "
                f"2*mbar^d = {2 * mbar**d} features and needs {need / 2**30:.3g} GiB for "
                f"{n} arms, above max_bytes = {max_bytes / 2**30:.3g} GiB. Lower mbar, raise "
                f"max_bytes, or use 'ata-gp-ucb-nystrom'."
            )
        # within max_bytes, but the machine's limit (hbo_envs.memory) still applies
        check_memory(owner, "mbar", mbar, need, "Lower mbar, or use 'ata-gp-ucb-nystrom'.")
        self.mbar_ = mbar
        self.m_ = mbar**d  # the paper's m (the embedding has dimension 2m)
        self.n_features_ = 2 * self.m_  # the authors' code's m: a cosine and a sine per node
        # Alg. 2 "Set": sigma~_0^2(x) = k(x, x) of the kernel the embedding approximates.
        kdiag = None if self.kernel is None else kern.diag(problem.points)
        self._common_setup(problem, kdiag)
        ls = float(kern.lengthscale)
        # The 2m features of eq. (1) merged in mirror pairs (exact; see qff_features_paired):
        # the embedding of each arm is a column of features_, and direction g is truncated
        # at sqrt(c_g) b_t.
        self.features_, copies = qff_features_paired(problem.points, ls, mbar)
        self.level_scale_ = np.sqrt(copies.astype(float))
        self.qff_error_ = qff_error(problem.points, ls, mbar)
        if self.qff_error_ >= QFF_WARN_ERROR:
            warnings.warn(
                f"{owner}: the QFF embedding (mbar={mbar}, lengthscale {ls:g}) approximates "
                f"the kernel on the candidate set only to eps_m = {self.qff_error_:.3g} "
                f"(Lemma 1 needs eps_m < 1 and the error decays only for mbar > e/(4 l^2) "
                f"in units of the domain width; the theory is for [0, 1]^d). Raise mbar or "
                f"use 'ata-gp-ucb-nystrom'.",
                RuntimeWarning,
                stacklevel=3,
            )
        # Every phi~(x) in span(Q_): V~_t acts there as Gr_ + lambda I (r = rank <= n).
        self.Q_, self.Fr_ = orthonormal_factors(self.features_)
        self.Gr_ = np.zeros((self.Fr_.shape[0],) * 2)

    def _default_b(self, t: int) -> float:
        m, T = self.m_, self.T_
        if self.schedule_ == "experiment":  # authors' code: m = the feature count 2 mbar^d
            f = self.n_features_
            return self._b_formula(t, self._ln(f * T))
        return self._b_formula(t, self._ln(2 * m * T, self.delta_))  # Lemma 1

    def _default_beta(self, t: int) -> float:
        m, T = self.m_, self.T_
        if self.schedule_ == "experiment":  # authors' code: m = the feature count 2 mbar^d
            f = self.n_features_
            return self._beta_formula(t, f, self._ln(f * T), self.B_ * math.sqrt(self.lam_), 1.0)
        # Lemma 1: beta_{t+1} = B + 4 sqrt(m/lambda) v^{..} ln(2mT/delta)^{..} t^e.
        return self._beta_formula(
            t - 1, m, self._ln(2 * m * T, self.delta_), self.B_, 4.0 / math.sqrt(self.lam_)
        )

    def _refit(self, arm: int) -> None:
        f = self.Fr_[:, arm]
        self.Gr_ += np.outer(f, f)  # Alg. 2 line 3: V~_t = Phi~^T Phi~ + lambda I
        level = self.truncation_scale_ * self.b_(self.t_) * self.level_scale_
        self.mean_, w2 = truncated_estimate(
            self.Q_, self.Fr_, self.Gr_, self.lam_, level, self.rewards_
        )
        self.var_ = self.lam_ * w2  # variance choice (i)


class ATAGPUCBNystrom(_ATAGPUCB):
    """ATA-GP-UCB with Nyström embeddings (Chowdhury–Gopalan 2019, Alg. 2 + Alg. 3).

    Every round a new dictionary is drawn with ridge-leverage-score probabilities
    ``p_a = min{q sigma~^2_{t-1}(x_a), 1}``; variance choice (iii)
    ``k(x,x) - phi~^T phi~ + lambda phi~^T V~^{-1} phi~``.

    Schedules (``m_t`` = dictionary size with repetitions, ``T = problem.horizon``,
    ``e = (1-alpha)/(2(1+alpha))``, ``rho = (1+eps)/(1-eps)``):

    - ``"experiment"`` (authors' public code; DESIGN.md), ``B = problem.sup_f``:
      ``q = ln(T)/eps^2``, one draw per *distinct* arm played;
      ``b_t = (v/ln((m_t+1)T))^{1/(1+alpha)} t^e``,
      ``beta_t = B sqrt(lambda) + sqrt(m_{t-1}+1) v^{1/(1+alpha)}
      ln((m_{t-1}+1)T)^{alpha/(1+alpha)} t^e``;
    - ``"theory"`` (Thm. 4 / Lemma 20), ``B = problem.B``: ``q = 6 rho ln(4T/delta)/eps^2``,
      one draw per past *observation* (Alg. 3; sampled per arm as
      ``Binomial(N_a, p_a)``, the same distribution),
      ``b_t = (v/ln(4 m_t T/delta))^{1/(1+alpha)} t^e``,
      ``beta_{t+1} = B (1 + 1/sqrt(1-eps)) + 4 sqrt(m_t/lambda) v^{1/(1+alpha)}
      ln(4 m_t T/delta)^{alpha/(1+alpha)} t^e``.

    (``m_t`` is taken as at least 1 inside the theory logarithms and square roots.)

    Parameters
    ----------
    schedule, lam, delta, beta
        See :class:`~agents.gp.base.GPUCBAgent`; ``lam`` must lie in
        :data:`ATA_LAM_RANGE` ``= [1e-100, 1e100]``.
    b : None, float or callable
        Override of the truncation level ``b_t``.
    truncation_scale : float
        Positive multiplier ``c`` of the level only: coordinates beyond ``c b_t`` (times
        the copies' scale) are truncated (default 1.0, Alg. 2 as printed; the width keeps
        ``b_t``). The ``tuned`` configuration searches it (issue 35, ``agents.configs``).
    eps : float
        Accuracy ``eps in [1e-100, 1)`` of the dictionary (default 0.1, the paper's
        experiments; :data:`ATA_MIN_EPS` keeps ``q ~ 1/eps^2`` finite).
    q : None or float
        Override of the oversampling parameter ``q > 0``.
    dictionary : None or callable
        ``None`` (the algorithm): resample every round. A callable ``(t, counts) ->``
        sequence of arm indices fixes the dictionary ``D_t`` (a multiset of arms) instead;
        meant for experiments and tests that hold the dictionary fixed.

    Attributes
    ----------
    m_ : int
        Current dictionary size ``m_t`` (with repetitions).
    dictionary_sizes_ : list of int
        ``m_t`` of every round.
    L_ : ndarray (n, r0) or None
        ``K = L_ L_^T`` (:func:`~agents.features.nystrom.kernel_factor`), through which a
        dictionary of more than ``r0`` distinct arms is factored; ``None`` without a dense
        PSD kernel matrix of rank ``< n`` on at most :data:`FACTOR_MAX_N` arms.

    >>> import numpy as np, agents
    >>> from hbo_envs.kernels import Matern
    >>> from hbo_envs.problem import Problem
    >>> X = np.linspace(0, 1, 20)[:, None]; k = Matern(0.2, 2.5)
    >>> p = Problem(points=X, kernel_matrix=k(X), kernel=k, B=1.0, alpha=1.0, v=4.0,
    ...             nu=3.0, sup_f=1.0, horizon=100)
    >>> agent = agents.make("ata-gp-ucb-nystrom"); agent.reset(p, seed=0)
    >>> for _ in range(5):
    ...     a = agent.act(); agent.update(a, 0.5)
    >>> 1 <= agent.m_ <= 5
    True
    """

    name = "ata-gp-ucb-nystrom"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        b: Any = None,
        truncation_scale: float = 1.0,
        eps: float = 0.1,
        q: float | None = None,
        dictionary: Callable[[int, np.ndarray], Any] | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta)
        self.b = b
        self.truncation_scale = truncation_scale
        self.eps = eps
        self.q = q
        self.dictionary = dictionary

    def _setup(self, problem: Any) -> None:
        owner = self._owner
        eps = check_real(owner, "eps", self.eps, ATA_MIN_EPS, 1.0, "left")
        if self.q is not None:
            q = check_real(owner, "q", self.q, 0.0, None, "neither")
        elif self.schedule_ == "experiment":
            q = math.log(int(problem.horizon)) / eps**2  # authors' code: q = ln(T)/eps^2
        else:
            rho = (1.0 + eps) / (1.0 - eps)  # Thm. 4: q = 6 rho ln(4T/delta)/eps^2
            q = 6.0 * rho * self._ln(4.0 * int(problem.horizon), self.delta_) / eps**2
        if self.dictionary is not None and not callable(self.dictionary):
            raise param_error(
                owner, "dictionary", "None or a callable (t, counts) -> arms", self.dictionary
            )
        self.eps_, self.q_ = eps, q
        self.K_ = _dense_kernel(problem)
        # K = L_ L_^T (n x r0, r0 the numerical rank of K): the eigendecomposition of a
        # new dictionary's s x s matrix becomes that of an r0 x r0 one
        # (nystrom_factors_from_factor). None: no dense K, too many arms, K not PSD, or
        # of full rank (s > r0 = n never happens).
        L = (
            kernel_factor(self.K_)
            if self.K_ is not None and self.K_.shape[0] <= FACTOR_MAX_N
            else None
        )
        self.L_ = L if L is not None and 0 < L.shape[1] < L.shape[0] else None
        if self.L_ is not None:  # sum_a N_a l_a l_a^T (_factor_gram), arms not yet in it
            self._G = np.zeros((self.L_.shape[1],) * 2, order="F")
            self._G_pending: list[int] = []
        self.m_ = 0
        self.dictionary_sizes_: list[int] = []
        # The factorisation of the current dictionary (kept while D_t stays the same).
        self._dict_copies: np.ndarray | None = None
        self._dict_key: bytes | None = None  # its bytes: D_t = D_{t-1} in one comparison
        self._rows: dict[int, np.ndarray] = {}  # kernel rows (problems without a matrix)
        self._common_setup(problem)

    def _mm(self) -> float:
        return self.m_ + 1.0 if self.schedule_ == "experiment" else max(self.m_, 1.0)

    def _default_b(self, t: int) -> float:
        m, T = self._mm(), self.T_
        if self.schedule_ == "experiment":
            return self._b_formula(t, self._ln(m * T))
        return self._b_formula(t, self._ln(4.0 * m * T, self.delta_))  # Thm. 4

    def _default_beta(self, t: int) -> float:
        m, T = self._mm(), self.T_
        if self.schedule_ == "experiment":
            return self._beta_formula(t, m, self._ln(m * T), self.B_ * math.sqrt(self.lam_), 1.0)
        lead = self.B_ * (1.0 + 1.0 / math.sqrt(1.0 - self.eps_))  # Thm. 4
        return self._beta_formula(
            t - 1, m, self._ln(4.0 * m * T, self.delta_), lead, 4.0 / math.sqrt(self.lam_)
        )

    def _copies(self) -> np.ndarray:
        """Copies ``c_a`` of each arm in ``D_t`` (Alg. 3; see agents.features.nystrom)."""
        counts = self.rewards_.count
        if self.dictionary is not None:
            raw = self.dictionary(self.t_, counts.copy())
            allowed = (
                f"a callable returning a sequence of arm indices in [0, {counts.size - 1}] "
                f"(at t={self.t_})"
            )
            try:
                arms = np.asarray(raw).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise param_error(self._owner, "dictionary", allowed, raw) from exc
            if arms.size == 0:
                arms = arms.astype(np.int64)
            if arms.dtype.kind not in "iu" or (
                arms.size and (arms.min() < 0 or arms.max() >= counts.size)
            ):
                raise param_error(self._owner, "dictionary", allowed, raw)
            return np.bincount(arms, minlength=counts.size)
        # p_{t,i} = min{q sigma~^2_{t-1}(x_i), 1} (self.var_ still holds sigma~^2_{t-1}).
        p = np.minimum(self.q_ * np.maximum(self.var_, 0.0), 1.0)
        if self.schedule_ == "experiment":
            return sample_copies_distinct(self.rng_, counts, p)
        return sample_copies_per_arm(self.rng_, counts, p)

    def _kernel_rows(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(K_SS, K_SX)``: from the stored kernel matrix, or computed on demand (the
        problem's ``kernel_block`` accessor) when it has no dense ``n x n`` matrix."""
        if self.K_ is not None:
            K_SX = self.K_[S, :]
        else:  # kernel rows computed once per distinct dictionary arm, O(n) memory each
            rows = self._rows
            new = [a for a in S.tolist() if a not in rows]
            if new:
                p = self.problem_
                if hasattr(p, "kernel_block"):  # the problem's lazy blocks
                    block = np.asarray(p.kernel_block(new, np.arange(p.n)), dtype=float)
                else:
                    pts = np.asarray(p.points, dtype=float)
                    block = np.asarray(p.kernel(pts[new], pts), dtype=float)
                rows.update(zip(new, block, strict=True))
            K_SX = np.array([rows[a] for a in S.tolist()]).reshape(S.size, -1)
        return K_SX[:, S], K_SX

    def _factor_gram(self) -> np.ndarray:
        """``G = sum_a N_a l_a l_a^T`` (r0 x r0; ``l_a`` row ``a`` of ``L_``), brought up
        to date with the observations since its last use: one rank-one update each late
        in a run, when the dictionary is new every round."""
        G, pending = self._G, self._G_pending
        if len(pending) == 1:
            l = self.L_[pending[0]]
            G = _dger(1.0, l, l, a=G, overwrite_a=1)
        elif pending:
            Lp = self.L_.take(pending, axis=0)
            G += Lp.T @ Lp
        pending.clear()
        self._G = G
        return G

    def _refit(self, arm: int) -> None:
        if self.L_ is not None:
            self._G_pending.append(arm)
        copies = self._copies()
        N = self.rewards_.count
        key = copies.tobytes()  # c is int64 from every sampler and from np.bincount
        if key == self._dict_key:
            # D_t = D_{t-1}: the same embedding; Phi~^T Phi~ gains the new observation.
            f = self.Fr_[:, arm]
            self.Gr_ += np.outer(f, f)
        else:
            S = np.flatnonzero(copies)
            c = copies[S]
            self.m_ = int(c.sum())
            self._dict_copies, self._dict_key = copies, key
            # psi~_t = Q_ Fr_ (s x n): the reduced phi~_t (agents.features.nystrom), with
            # Q_ (s x r) orthonormal; r = 0 for an empty dictionary. Past r0 = rank(K)
            # distinct arms, through K = L L^T: one r0 x r0 eigendecomposition of
            # L_S^T C L_S instead of the s x s one of M = C^{1/2} K_SS C^{1/2}.
            if self.L_ is not None and self.L_.shape[1] < S.size:
                ones = self.m_ == S.size  # one copy of each arm (always, "experiment")
                self.Q_, self.Fr_, W = nystrom_factors_from_factor(self.L_, S, None if ones else c)
                # Phi~^T Phi~ = W^T (sum_a N_a l_a l_a^T) W, the r0 x r0 sum kept current.
                self.Gr_ = W.T @ self._factor_gram() @ W
            else:
                self.Q_, self.Fr_ = nystrom_factors(*self._kernel_rows(S), c)
                P = self.rewards_.played_idx
                FrP = self.Fr_[:, P]
                self.Gr_ = (FrP * N[P].astype(float)) @ FrP.T  # Phi~^T Phi~ from counts
            self.fr2_ = np.einsum("ia,ia->a", self.Fr_, self.Fr_)  # phi~^T phi~
            # The c_a identical directions of arm a reduce to one with level sqrt(c_a) b_t.
            self.level_scale_ = np.sqrt(c.astype(float))
        self.dictionary_sizes_.append(self.m_)
        level = self.truncation_scale_ * self.b_(self.t_) * self.level_scale_
        self.mean_, w2 = truncated_estimate(
            self.Q_, self.Fr_, self.Gr_, self.lam_, level, self.rewards_
        )
        # Variance choice (iii): k(x,x) - phi~^T phi~ + lambda phi~^T V~^{-1} phi~.
        self.var_ = self.kdiag_ - self.fr2_ + self.lam_ * w2
