"""RCGP-UCB of Ezzerg, Bogunovic & Knoblauch (2025), "Robust Bayesian Optimisation with
Unbounded Corruptions" (arXiv:2511.15315), on the shared GP engine.

Specification: ``../shared/papers/beyond/ezzerg-bogunovic-knoblauch-2025-rcgp-ucb.md``.
The RCGP posterior (Altamirano, Briol & Knoblauch, ICML 2024; note §2) is a GP with
per-observation noise and shifted targets::

    mu^R(x)      = m(x) + k_n(x)^T (K_n + sigma^2 J_w)^{-1} (y - m_w)
    sigma^R(x)^2 = k(x, x) - k_n(x)^T (K_n + sigma^2 J_w)^{-1} k_n(x)
    J_w = diag(sigma^2 / (2 w^2)),   m_w = m(X) + sigma^2 grad_y log w(X, y)^2

so each observation enters :meth:`~agents.gp.engine.GPPosteriorEngine.observe` with
``noise_var = sigma^2 J_ii`` and target ``y_i - m_w,i`` (prior mean ``m = 0``, ``sigma^2 =
lambda``). The plateau-IMQ weight (note §3, Def. 3.1, verified against the authors' code):
with ``e = max(0, |y - g(x)| - L)`` and ``s = sign(y - g(x))``::

    w = (sigma / sqrt 2) (1 + e^2 / c^2)^{-1/2}
    J_ii = 1 + e^2 / c^2,     grad_y log w^2 = -2 s e / (c^2 + e^2)

Inside the plateau (``|y - g| <= L``) ``J = 1`` and the shift is 0: RCGP *is* the GP
posterior ("zero-cost robustness"), so on uncorrupted data whose residuals stay in the
plateau RCGP-UCB plays exactly as GP-UCB.

What is verified and what is not (note's provenance): the weight, the posterior and the A2
lagged centring are verified from code matching the authors'; the algorithm constants
(``L_T``, ``C_{w,T}``, ``Psi``) come from a third-party reading of the v2 HTML. This module
follows the *practical recipe* (note §5) where the note says the authors did: ``T_c = 0``
inside ``beta_t`` (``Psi(0) = 1``; "also works well"), ``beta_t`` as GP-UCB's. It departs from
it where hbo-bench's setting differs, and says so: no standardisation of ``Y`` and no
hyperparameter refit (the kernel is the problem's, as for every reference agent), the
plateau and tail scale from the problem's constants instead of the standardised-scale
``L = 1.96 / c = 1``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from agents.gp.engine import GPPosteriorEngine
from agents.gp.gp_ucb import GPUCB
from hbo_envs.memory import check_memory
from hbo_envs.validation import check_int, check_real, param_error

__all__ = ["PlateauRewards", "RCGPUCB", "RCGPUCBAdaptive", "pimq_weight_terms"]


def pimq_weight_terms(
    residual: np.ndarray, L: float, c: float, sigma2: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(J, shift)`` of the plateau-IMQ weight at residuals ``y - g(x)`` (note §3).

    ``J = 1 + e^2 / c^2`` (``inf`` when ``e / c`` overflows: no information) and
    ``shift = sigma^2 grad_y log w^2 = -2 sigma^2 s e / (c^2 + e^2)``, computed as
    ``-2 sigma^2 s / (e + c^2 / e)`` so a residual of ``1e300`` gives no overflow; the
    target is ``y - shift`` (prior mean 0).

    >>> J, sh = pimq_weight_terms(np.array([0.5, 3.0, -3.0]), L=1.0, c=1.0, sigma2=1.0)
    >>> J.tolist(), sh.tolist()       # e = (0, 2, 2): J = 1 + 4, shift = -+2*2/5
    ([1.0, 5.0, 5.0], [0.0, -0.8, 0.8])
    """
    r = np.asarray(residual, dtype=float)
    e = np.maximum(np.abs(r) - L, 0.0)
    q = e / c
    with np.errstate(over="ignore"):
        J = 1.0 + q * q
    shift = np.zeros_like(e)
    pos = e > 0
    shift[pos] = -2.0 * sigma2 * np.sign(r[pos]) / (e[pos] + c * c / e[pos])
    return J, shift


def _pimq_scalar(residual: float, L: float, c: float, sigma2: float) -> tuple[float, float]:
    """:func:`pimq_weight_terms` of one residual in Python floats: the same operations in
    the same order (IEEE doubles either way, so the same values), without the numpy calls
    that cost more than the rest of an RCGP-UCB round."""
    e = max(abs(residual) - L, 0.0)
    q = e / c
    J = 1.0 + q * q  # inf when q * q overflows, as in numpy
    if not e > 0.0:
        return J, 0.0
    return J, -2.0 * sigma2 * math.copysign(1.0, residual) / (e + c * c / e)


class PlateauRewards:
    """Each arm's rewards, arranged so the plateau sums of A2-RCGP cost no pass over ``t``.

    Inside the plateau (``|y - g_a| <= L``) the plateau-IMQ weight has ``J = 1`` and shift
    0 (note §3, Def. 3.1), so the observations there contribute to arm ``a``'s sufficient
    statistics only through their number and their sum. :meth:`statistics` returns those
    per arm, plus the observations that must be weighted one by one:

    - **main**: the rewards with ``|y| <= bound``, sorted by the key
      ``a + (0.5 + y / (4 bound))`` (arm first, then ``y``; the fraction lies in
      ``[0.25, 0.75]``), with per-arm totals. For the window ``[g_a - L, g_a + L]`` one
      ``searchsorted`` over all arms gives index ranges ``[lo_a, hi_a)`` that lie inside the
      plateau for certain: the key is non-decreasing in ``y`` in floating point, so
      ``key(y) > key(g - L)`` implies ``y >= g - L`` (likewise above). The in-window count is
      ``hi_a - lo_a`` and the sum ``total_a - (sum of a's main rewards outside)``: no prefix
      sums, whose differences would cancel catastrophically next to a ``1e12`` corruption.
      Main rewards outside the ranges (residual beyond ``L``, or within a few ulps of the
      boundary) are returned for individual weighting — the weight is exact for any
      reward, so a boundary reward treated individually gets ``J = 1``, shift 0 as well.
    - **extreme** (``|y| > bound``; ``bound`` is chosen far above ``|g| + L``): always
      weighted individually; they are the corruptions, and keeping them out of the totals
      keeps those accurate.
    - **pending**: the most recent core rewards, weighted individually until at least
      ``max(32, sqrt(#main))`` have gathered, then merged into main (``O(t)`` every
      ``sqrt(t)`` rounds: ``O(sqrt t)`` element moves per round, amortised).

    Cost of :meth:`statistics`: ``O(|P| log t)`` for the searches (``P`` the arms in main)
    plus ``O(#outside + #extreme + #pending + n)`` vectorised.

    Parameters
    ----------
    n : int
        Number of arms, at least 1 (refused before allocating when its ``~24 n`` bytes of
        per-arm totals would not fit: :class:`~hbo_envs.memory.MemoryLimitError`).
    bound : float
        The core bound ``> 0``; ``math.inf`` keeps every reward in main (each is then
        weighted individually: no window is certain on a key that ignores ``y``). A bound so
        small that ``0.25 / bound`` overflows is refused, as are NaN, ``0`` and negatives.

    >>> rw = PlateauRewards(2, bound=10.0)
    >>> for y in (0.1, 0.2, 5.0):
    ...     rw.add(0, y)
    >>> cnt, tot, arms, ys = rw.statistics(np.zeros(2), L=1.0)
    >>> int(cnt[0] + (arms == 0).sum()), ys.tolist()   # every reward once; pending ones
    (3, [0.1, 0.2, 5.0])
    """

    def __init__(self, n: int, bound: float) -> None:
        owner = "PlateauRewards"
        n = check_int(owner, "n", n, 1)
        check_memory(owner, "n", n, 24.0 * n, "Use fewer arms.")
        if isinstance(bound, numbers.Real) and not isinstance(bound, bool) and bound == math.inf:
            b = math.inf  # the agent's value when its constants overflow
        else:
            b = check_real(owner, "bound", bound, 0.0, None, "neither")
            if not math.isfinite(0.25 / b):  # subnormal: every key would be NaN or inf
                allowed = "a real number > 0 whose 0.25 / bound is finite, or math.inf"
                raise param_error(owner, "bound", allowed, bound)
        self.n = n
        self.bound = b
        self._scale = 0.25 / self.bound
        self._key = np.empty(0)  # main, sorted
        self._marm = np.empty(0, dtype=np.intp)
        self._my = np.empty(0)
        self._total = np.zeros(n)  # sum of main rewards per arm
        self._mcount = np.zeros(n, dtype=np.int64)
        self.count = np.zeros(n, dtype=np.int64)  # all rewards per arm
        # individual pools, numpy buffers grown by doubling: [0, n_ext) extreme,
        # pending in their own buffer
        self._earm = np.empty(16, dtype=np.intp)
        self._ey = np.empty(16)
        self._n_ext = 0
        self._parm = np.empty(64, dtype=np.intp)
        self._py = np.empty(64)
        self._n_pend = 0

    def _keys(self, arms: np.ndarray, y: np.ndarray) -> np.ndarray:
        return arms + (y * self._scale + 0.5)

    @staticmethod
    def _push(
        arms: np.ndarray, ys: np.ndarray, k: int, arm: int, y: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(arm, y)`` stored at position ``k`` of a buffer pair, doubled when full."""
        if k == ys.size:
            arms = np.concatenate([arms, np.empty(k, dtype=np.intp)])
            ys = np.concatenate([ys, np.empty(k)])
        arms[k], ys[k] = arm, y
        return arms, ys

    def add(self, arm: int, y: float) -> None:
        """Store reward ``y`` observed at ``arm``."""
        self.count[arm] += 1
        if not abs(y) <= self.bound:
            self._earm, self._ey = self._push(self._earm, self._ey, self._n_ext, arm, y)
            self._n_ext += 1
            return
        self._parm, self._py = self._push(self._parm, self._py, self._n_pend, arm, y)
        self._n_pend += 1
        if self._n_pend >= max(32, math.isqrt(self._key.size)):
            self._merge()

    def _merge(self) -> None:
        k = self._n_pend
        pa, py = self._parm[:k], self._py[:k]
        keys = self._keys(pa, py)
        order = np.argsort(keys, kind="stable")
        keys, pa, py = keys[order], pa[order], py[order]
        pos = np.searchsorted(self._key, keys, side="right")
        self._key = np.insert(self._key, pos, keys)
        self._marm = np.insert(self._marm, pos, pa)
        self._my = np.insert(self._my, pos, py)
        self._total += np.bincount(pa, weights=py, minlength=self.n)
        self._mcount += np.bincount(pa, minlength=self.n)
        self._n_pend = 0

    def arm_values(self, arms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(owner, ys)``: every reward stored at the given (distinct) ``arms``, with its
        arm, in no particular order. ``O(|arms| log t + #main at them + #extreme +
        #pending)``: the main rewards of an arm are one contiguous run of the sorted keys."""
        arms = np.asarray(arms, dtype=np.intp)
        parts_a, parts_y = [], []
        if self._key.size and arms.size:
            lo = self._key.searchsorted(arms.astype(float), side="left")
            hi = self._key.searchsorted(arms + 1.0, side="left")
            for a, i, j in zip(arms.tolist(), lo.tolist(), hi.tolist(), strict=True):
                if j > i:
                    parts_a.append(np.full(j - i, a, dtype=np.intp))
                    parts_y.append(self._my[i:j])
        for buf_a, buf_y, k in (
            (self._earm, self._ey, self._n_ext),
            (self._parm, self._py, self._n_pend),
        ):
            if k:
                sel = np.isin(buf_a[:k], arms)
                parts_a.append(buf_a[:k][sel])
                parts_y.append(buf_y[:k][sel])
        if not parts_a:
            return np.zeros(0, dtype=np.intp), np.zeros(0)
        return np.concatenate(parts_a), np.concatenate(parts_y)

    def statistics(
        self, centre: np.ndarray, L: float | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(count_in, sum_in, arms, ys)``: per arm, the number and sum of main rewards
        certainly inside ``[centre_a - L_a, centre_a + L_a]``; and every other reward (to be
        weighted individually), with its arm. ``L``: one half-width for every arm, or one
        per arm (shape ``(n,)``, ``>= 0``)."""
        n, M = self.n, self.bound
        cnt_in = np.zeros(n, dtype=np.int64)
        sum_in = np.zeros(n)
        parts_a = [self._earm[: self._n_ext], self._parm[: self._n_pend]]
        parts_y = [self._ey[: self._n_ext], self._py[: self._n_pend]]
        size = self._key.size
        if size:
            A = np.flatnonzero(self._mcount)
            g = centre[A]
            La = L if np.ndim(L) == 0 else np.asarray(L)[A]
            # both window edges in one array, clipped to [-M, M] in place (np.clip's
            # arithmetic, min(max(x, -M), M), without its Python-level wrapper)
            edges = np.empty((2, A.size))
            np.subtract(g, La, out=edges[0])
            np.add(g, La, out=edges[1])
            np.maximum(edges, -M, out=edges)
            np.minimum(edges, M, out=edges)
            keys = self._keys(A, edges)
            lo = self._key.searchsorted(keys[0], side="right")
            hi = self._key.searchsorted(keys[1], side="left")
            np.maximum(hi, lo, out=hi)
            # main rewards outside the windows: the gaps [hi_{k-1}, lo_k) (arm segments
            # are contiguous and in arm order)
            starts = np.concatenate([[0], hi])
            lengths = np.concatenate([lo, [size]]) - starts
            m = int(lengths.sum())
            if m:
                offs = np.cumsum(lengths) - lengths
                out = np.repeat(starts - offs, lengths) + np.arange(m)
                oa, oy = self._marm[out], self._my[out]
                parts_a.append(oa)
                parts_y.append(oy)
                outsum = np.bincount(oa, weights=oy, minlength=n)[A]
            else:
                outsum = np.zeros(A.size)
            c = hi - lo
            cnt_in[A] = c
            # exactly 0 for an arm with nothing inside (no rounding residue of total - out)
            sum_in[A] = np.where(c > 0, self._total[A] - outsum, 0.0)
        return cnt_in, sum_in, np.concatenate(parts_a), np.concatenate(parts_y)


class RCGPUCB(GPUCB):
    """FC-RCGP-UCB ("stable", fixed centre): Ezzerg et al. (2025) Algorithm 1, note §4.

    At round ``t`` play ``argmax_x mu^R_{t-1}(x) + beta_t Psi(T_c) sigma^R_{t-1}(x)`` with the
    RCGP posterior (module docstring) of the plateau-IMQ weight centred at the prior mean
    ``g = 0``. ``T_c = 0`` inside the width (``Psi = 1``; the authors' practical choice,
    note §5), so ``beta_t`` is GP-UCB's (:class:`~agents.gp.gp_ucb.GPUCB`, both schedule
    sets). The weight of an observation depends only on its own ``(x_i, y_i)``, so each
    one enters the engine once: O(n^2) per round, flat in ``t`` (as GP-UCB).

    Plateau (note §4: ``L_T = sqrt(B_f kappa) + N_T(delta/3)`` in the secondary reading):
    here ``L = B_bar + N_T`` with ``B_bar`` a bound on ``|f|`` — ``problem.sup_f`` under
    ``schedule="experiment"``, ``problem.B sqrt(kappa)`` under ``"theory"`` (the
    reproducing-property bound ``|f(x)| <= ||f||_k sqrt(k(x, x))``; the note's
    ``sqrt(B_f kappa)`` is unverified and not dimensionally a bound on ``|f|``) — and
    ``N_T = R sqrt(2 ln(4 (T + 1) / delta))`` (the authors' code's noise bound at
    ``t = T``, note §4). Uncorrupted residuals then stay in the plateau with probability
    ``>= 1 - delta`` and RCGP-UCB equals GP-UCB. Tail scale ``c``: ``problem.sup_f``
    (hbo-bench's choice; the paper's ``c = 1`` is on standardised ``Y``).

    Parameters
    ----------
    schedule, lam, delta, beta, R
        As :class:`~agents.gp.gp_ucb.GPUCB` (``lam`` is the model's ``sigma^2``).
    L : float or None
        Plateau half-width (default above).
    c : float or None
        Tail scale of the IMQ weight (default ``problem.sup_f``).

    >>> import numpy as np
    >>> from hbo_envs.kernels import SquaredExponential
    >>> from hbo_envs.problem import Problem
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> p = Problem(points=X, kernel_matrix=SquaredExponential(0.2)(X),
    ...             kernel=SquaredExponential(0.2), B=1, alpha=1, v=1.01, nu=0.01, sup_f=1,
    ...             horizon=10)
    >>> agent = RCGPUCB(); agent.reset(p, seed=0)
    >>> agent.update(2, 1e12)                     # one huge corruption: no influence
    >>> bool(np.max(np.abs(agent.posterior()[0])) < 1e-9)
    True
    """

    name = "rcgp-ucb"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        R: float | None = None,
        L: float | None = None,
        c: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta, R=R)
        self.L = L
        self.c = c

    # ------------------------------------------------------------------ set-up
    def _noise_bound(self, problem: Any) -> float:
        """``N_T = R sqrt(2 ln(4 (T + 1) / delta))`` (the authors' code, at ``t = T``)."""
        if self.R is not None:
            R = check_real(self._owner, "R", self.R, 0.0, None, "left")
        else:
            nu = self._constant(problem, "nu", override="R")
            R = nu ** (1.0 / (1.0 + float(problem.alpha)))
        T = int(problem.horizon)
        return R * math.sqrt(2.0 * math.log(4.0 * (T + 1) / self.delta_))

    def _f_bound(self, problem: Any) -> float:
        if self.schedule_ == "experiment":
            return self._constant(problem, "sup_f", override="L")
        kappa = float(np.max(problem.kernel_diag()))
        return self._constant(problem, "B", override="L") * math.sqrt(max(kappa, 0.0))

    def _setup(self, problem: Any) -> None:
        super()._setup(problem)
        owner = self._owner
        if self.L is None:
            self.L_ = self._default_L(problem)
        else:
            self.L_ = check_real(owner, "L", self.L, 0.0, None, "left")
        if self.c is None:
            self.c_ = self._constant(problem, "sup_f", override="c")
            if not self.c_ > 0:
                self.c_ = 1.0
        else:
            self.c_ = check_real(owner, "c", self.c, 0.0, None, "neither")

    def _default_L(self, problem: Any) -> float:
        return self._f_bound(problem) + self._noise_bound(problem)

    # ------------------------------------------------------------------ updates
    def _observe(self, arm: int, reward: float) -> None:
        # g = 0 (the prior mean): the weight is fixed once y is seen.
        J, shift = _pimq_scalar(reward, self.L_, self.c_, self.lam_)
        # target y - m_w (m = 0), noise sigma^2 J (note §2)
        self.engine_.observe(arm, reward - shift, noise_var=self.lam_ * J)


class RCGPUCBAdaptive(RCGPUCB):
    """A2-RCGP-UCB ("adaptive", anchored): Ezzerg et al. (2025) Algorithm 2, note §4.

    Two RCGPs on the one engine class:

    - the **anchor** ``M_A``: FC-RCGP (centre 0, plateau ``L_A``) trained on ``D_{t-1}``,
      i.e. lagged by one observation (as the authors' code does, note §4);
    - the **acquisition model** ``M_R``: centre ``g_R(x) = mu_A(x)`` (the anchor's mean),
      plateau ``L_R``; the UCB is computed on it.

    ``g_R`` moves every round, so the weights of ``M_R``'s observations outside the plateau
    change, and ``M_R`` follows its per-arm sufficient statistics on one engine
    (:meth:`~agents.gp.engine.GPPosteriorEngine.move_statistics`: a rank-one move of each
    arm whose statistics changed, one joint rank-``k`` move when several did, a
    re-derivation when many did; observation ``j`` at arm
    ``a`` has noise ``sigma^2 J_j`` and target ``y_j - m_w,j``, module docstring)::

        precision_a = sum_j 1 / J_j,      sums_a = sum_j (y_j - m_w,j) / J_j

    Inside the plateau ``J = 1`` and ``m_w = 0`` (note §3), so the observations with
    ``|y_j - g_R(a)| <= L_R`` add exactly their count and their sum: :class:`PlateauRewards`
    finds them by binary search in each arm's sorted rewards, and only the others get
    individual weights (vectorised). The anchor (centre 0, weights fixed once seen) is
    updated incrementally.

    Cost per round: ``O(n^2)`` for the anchor's update, ``O(|S| log t)`` for the window
    searches, ``O(#outside + sqrt(t))`` vectorised for the individually weighted
    observations, and ``O(k n^2)`` for the ``k`` arms whose statistics moved (the arm just
    played, the arms holding observations outside the plateau, the arms an observation
    entered or left the plateau at), with a re-derivation ``O(|S|^3 + n^2 |S|)`` when
    ``k > |S| / 4`` and after every ``max(64, |S|)`` covariance updates (``|S| <= n`` distinct arms
    played): flat in
    ``t`` as long as ``#outside`` (observations whose residual ``|y - g_R|`` exceeds
    ``L_R``) and the arms holding them stay few. It does under frequency-limited
    corruptions (``#outside <= T_c`` plus the rare noise excursions) and with the default
    ``L_R`` (a high-probability noise bound); it grows linearly in ``t`` (at the rate
    ``P(|y - g_R| > L_R)``) when ``L_R`` is set below the noise level, or under heavy
    tails whose excursions beyond ``L_R`` are not rare. Before this (a fresh engine fed
    one aggregated observation per arm, every weight recomputed) the cost was
    ``O(t + |S| n^2)`` with ``|S|`` Python-level updates.

    Defaults: ``L_A`` = FC's ``L``; ``L_R = beta_T sqrt(kappa) + N_T`` (note §4's
    ``sqrt(beta_{A,T}) sqrt(kappa) Psi(T_c) + N_T`` with ``T_c = 0``; ``beta_T`` this
    agent's width at ``t = T``; ``L_A`` under ``schedule="theory"`` without a ``beta``
    override, whose ``beta_T`` depends on the run). The note's best practical setting
    (``L_R = 1.5``, ``L_A = 0.5`` on standardised ``Y``) is not transferable without
    standardisation.

    Parameters: as :class:`RCGPUCB` (``L`` is ``L_R``) plus ``L_anchor`` (``L_A``).
    """

    name = "rcgp-ucb-adaptive"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        R: float | None = None,
        L: float | None = None,
        c: float | None = None,
        L_anchor: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta, R=R, L=L, c=c)
        self.L_anchor = L_anchor

    def _default_L(self, problem: Any) -> float:
        # L_R = beta_T sqrt(kappa) + N_T; under schedule="theory" without a beta override
        # beta_T needs the information gain of a run not yet played: L_R = L_A then.
        if self.schedule_ == "theory" and self.beta is None:
            return super()._default_L(problem)
        kappa = float(np.max(problem.kernel_diag()))
        T = max(int(problem.horizon), 1)
        return self.beta_(T) * math.sqrt(max(kappa, 0.0)) + self._noise_bound(problem)

    def _setup(self, problem: Any) -> None:
        super()._setup(problem)
        if self.L_anchor is None:
            self.L_anchor_ = super()._default_L(problem)
        else:
            self.L_anchor_ = check_real(self._owner, "L_anchor", self.L_anchor, 0.0, None, "left")
        self.anchor_ = GPPosteriorEngine(problem, self.lam_)
        self._last: tuple[int, float] | None = None  # the observation the anchor lags
        # Core bound far above |g_R| + L_R (|g_R| <~ L_A + c): rewards beyond it are
        # weighted individually (PlateauRewards).
        bound = 4.0 * (self.L_ + self.L_anchor_ + self.c_)
        self._rewards = PlateauRewards(self.n_, bound if math.isfinite(bound) else math.inf)

    def _observe(self, arm: int, reward: float) -> None:
        lam = self.lam_
        # the anchor lags one observation: it gets the previous one now (centre 0, L_A)
        if self._last is not None:
            a0, y0 = self._last
            J, sh = _pimq_scalar(y0, self.L_anchor_, self.c_, lam)
            self.anchor_.observe(a0, y0 - sh, noise_var=lam * J)
        self._last = (arm, reward)
        rw = self._rewards
        rw.add(arm, reward)
        centre = self.anchor_.mean[:, 0]  # g_R(x) = mu_A(x)
        # in the plateau: J = 1, m_w = 0 (count and sum); the rest weighted one by one
        cnt_in, sum_in, arms, ys = rw.statistics(centre, self.L_)
        J, sh = pimq_weight_terms(ys - centre[arms], self.L_, self.c_, lam)
        w = 1.0 / J  # lambda / (lambda J): 0 where J = inf (no information)
        n = self.n_
        prec = cnt_in + np.bincount(arms, weights=w, minlength=n)
        sums = sum_in + np.bincount(arms, weights=(ys - sh) * w, minlength=n)
        counts = np.where(prec > 0, rw.count, 0)
        # valid by construction (finite, prec >= 0, sums 0 where prec is): no re-checks
        self.engine_._move_statistics(prec, sums[:, None], counts)
