"""GP-UCB on inliers with a Student-t outlier diagnostic, after Martinez-Cantin, Tee &
McCourt (AISTATS 2018), "Practical Bayesian Optimization in the Presence of Outliers".

``../shared/papers/beyond/martinez-cantin-tee-mccourt-2018-outlier-bo.md``: the idea (a
Student-t GP used only to *classify* observations, an ordinary GP fitted on the inliers
drives the acquisition, a scheduler decides when to re-diagnose) is verified from the
abstract; the procedure and its defaults (``n_init = 10``, ``n_schedule = 2``, ``nu = 4``,
``alpha = 0.05``, at most 50% outliers) are verified **only through a third-party
re-implementation** (the DiagnosticsGP baseline of the RCGP-UCB authors' code, note §2),
not from the paper. A practitioner baseline without a regret guarantee.

Inference for the Student-t GP: a Laplace approximation (what the paper reportedly uses,
note §1; the re-implementation uses variational inference) with ``nu`` fixed. The mode of
``p(f_S | y)`` over the latent values at the distinct played arms ``S`` is found by Newton
steps with the Fisher information ``W = (nu + 1) / ((nu + 3) s^2)`` per observation in place
of the Hessian (always positive, so every step is a descent direction of a convex
quadratic model: hbo-bench's choice for robustness), and the approximate posterior
covariance is ``(K_SS^{-1} + W)^{-1}``. Student-t scale ``s = R`` (the problem's noise scale).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import linalg, stats
from scipy.linalg import lapack

from agents.gp.engine import GPPosteriorEngine
from agents.gp.gp_ucb import GPUCB
from agents.robust.rcgp_ucb import PlateauRewards
from hbo_envs.blas import small_blas
from hbo_envs.memory import check_memory
from hbo_envs.validation import MAX_HORIZON, check_int, check_real

__all__ = ["OutlierGPUCB", "SCALE_RANGE", "student_t_laplace", "flag_outliers"]

#: Most mode-search steps per diagnosis (as :func:`student_t_laplace`'s ``iters``).
LAPLACE_ITERS = 50

#: The coarse mode search stops at a step below this (relative, after a step that
#: halved at least); its flags are checked against the distance it may be off.
MODE_TOL_COARSE = 1e-7

#: The mode search refactors its matrix when a step shrinks by less than this factor.
CHORD_MAX_RATIO = 0.02

#: A diagnosis that moves an arm's inlier sum by more than this many times the inliers'
#: scale re-derives the GP on the inliers instead of moving it (no rounding residue of
#: a removed corruption: ``eps * 1e4`` relative at most).
SUBTRACT_MAX = 1e4

#: The Laplace variance comes from an engine kept by rank-one updates when the Fisher
#: noise variance ``1 / w_obs`` is at least this fraction of the largest ``k(x, x)`` (the
#: updates then keep ~12 digits); below it, it is computed afresh at each diagnosis.
FISHER_ENGINE_MIN_LAM = 1e-3

#: The mode search forms its chord matrix ``(K_SS^{-1} + W')^{-1}`` explicitly (``O(|S|^3)``)
#: once a factorisation has served this many steps: from then on a step is one product.
#: Early in a run the chord refactors almost every step and the triangular solves are
#: cheaper; late in a run one factorisation serves hundreds of steps.
CHORD_EXPLICIT_AFTER = 2

#: ``8 eps``: the rounding margin of a reward's window test (:meth:`OutlierGPUCB._diagnose`).
_EIGHT_EPS = 8.0 * float(np.finfo(float).eps)

#: Allowed Student-t scales (``scale`` or ``R``): ``scale^2`` and ``1 / scale^2`` stay
#: far from overflow in the likelihood's terms.
SCALE_RANGE = (1e-100, 1e100)


def student_t_laplace(
    K_SS: np.ndarray,
    idx: np.ndarray,
    y: np.ndarray,
    nu: float,
    scale: float,
    iters: int = 50,
    f0: np.ndarray | None = None,
    newton: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Laplace approximation of a GP with a Student-t likelihood (latent values at ``S``).

    ``K_SS``: prior covariance of the latent ``f_S`` (shape (m, m)); ``idx[i]`` the position
    in ``S`` of observation ``i``; ``y`` the observations; Student-t ``nu``, ``scale``.
    Returns ``(f_hat, var)``: the mode of ``p(f_S | y)`` and the diagonal of
    ``(K_SS^{-1} + W)^{-1}`` (module docstring). Log-likelihood gradient per observation:
    ``(nu + 1) r / (nu s^2 + r^2)``, ``r = y_i - f_{idx_i}``. ``f0``: the starting point
    of the iteration (default ``0``, the prior mean; an agent passes the previous mode).

    ``newton=True``: each step uses the observed curvature per played arm,
    ``H_a = sum_{i at a} (nu + 1)(nu s^2 - r_i^2) / (nu s^2 + r_i^2)^2`` (minus the second
    derivative of the log-likelihood), floored at the Fisher ``W_a``:
    ``f_new = (K^{-1} + W')^{-1} (W' f + g)``, ``W' = max(H, W)``. The fixed point is the
    same (``K^{-1} f = g(f)``: the mode) whatever positive ``W'`` is, and so are the returned
    variances (always from the Fisher ``W``, as above); only the number of steps changes.
    Fisher scoring converges linearly and slowly here (its constant ``W`` is below the
    curvature near the mode, so it overshoots); with the observed curvature the steps are
    Newton's near the mode (quadratic convergence: 2-4 steps from the previous mode
    instead of ~15), and where the curvature is below ``W`` (large residuals, where the
    likelihood is not log-concave) the floor keeps the steps short. Each step then also
    factors ``I + W'^{1/2} K W'^{1/2}`` (``O(|S|^3 / 3)``).
    """
    m = K_SS.shape[0]
    w_obs = (nu + 1.0) / ((nu + 3.0) * scale**2)  # Fisher information of one observation
    W = np.bincount(idx, minlength=m) * w_obs
    sw = np.sqrt(W)
    B = np.eye(m) + sw[:, None] * K_SS * sw[None, :]
    Lb = linalg.cholesky(B, lower=True)
    f = np.zeros(m) if f0 is None else np.array(f0, dtype=float)
    # The O(t) part of an iteration, in preallocated buffers (the same floating-point
    # operations as ``(nu + 1) r / (nu s^2 + r^2)`` with ``r = y - f[idx]``).
    nu1, c = nu + 1.0, nu * scale**2
    r = np.empty_like(y, dtype=float)
    den = np.empty_like(r)
    r2 = np.empty_like(r)
    diag = np.diag_indices(m)
    for _ in range(iters):
        np.take(f, idx, out=r)
        np.subtract(y, r, out=r)
        np.multiply(r, r, out=den)
        if newton:
            r2[:] = den
        den += c
        np.multiply(r, nu1, out=r)
        r /= den
        g = np.bincount(idx, weights=r, minlength=m)
        if newton:
            # -d^2/df^2 log p(y | f) per observation: (nu + 1)(c - r^2) / (c + r^2)^2
            np.subtract(c, r2, out=r2)
            r2 *= nu1
            r2 /= den
            r2 /= den
            Wi = np.maximum(np.bincount(idx, weights=r2, minlength=m), W)
            swi = np.sqrt(Wi)
            Bi = swi[:, None] * K_SS
            Bi *= swi[None, :]
            Bi[diag] += 1.0
            Li, info = lapack.dpotrf(Bi, lower=1, clean=0, overwrite_a=1)
            if info:
                raise np.linalg.LinAlgError(f"I + W^1/2 K W^1/2 not positive definite ({info})")
        else:
            Wi, swi, Li = W, sw, Lb
        # step: f_new = (K^{-1} + W')^{-1} (W' f + g)  (Fisher scoring: W' = W)
        b = Wi * f + g
        v, _ = lapack.dpotrs(Li, swi * (K_SS @ b), lower=1)
        f_new = K_SS @ (b - swi * v)
        if np.max(np.abs(f_new - f)) <= 1e-10 * (1.0 + np.max(np.abs(f_new))):
            f = f_new
            break
        f = f_new
    V = linalg.solve_triangular(Lb, sw[:, None] * K_SS, lower=True)
    var = np.diagonal(K_SS) - np.sum(V * V, axis=0)
    return f, np.maximum(var, 0.0)


def _laplace_variance(K_SS: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``diag((K_SS^{-1} + W)^{-1})`` from ``chol(I + W^{1/2} K_SS W^{1/2})``, as
    :func:`student_t_laplace` returns it (``O(|S|^3)``)."""
    sw = np.sqrt(W)
    B = np.eye(W.size) + sw[:, None] * K_SS * sw[None, :]
    Lb = linalg.cholesky(B, lower=True)
    V = linalg.solve_triangular(Lb, sw[:, None] * K_SS, lower=True)
    return np.maximum(np.diagonal(K_SS) - np.sum(V * V, axis=0), 0.0)


def flag_outliers(
    y: np.ndarray, mean: np.ndarray, sd: np.ndarray, nu: float, alpha: float
) -> np.ndarray:
    """``True`` where ``|y - mean| > t_{nu, 1 - alpha/2} sd`` (note §2, step 2)."""
    return np.abs(y - mean) > _t_quantile(float(nu), float(alpha)) * sd


class StudentTScores:
    """Per-arm score and curvature of a Student-t likelihood, without a pass over ``t``.

    Arm ``a``'s part of the log-likelihood's gradient and of its (minus) second derivative
    at a latent value ``f`` are sums over the arm's rewards ``y_i`` (``r_i = y_i - f``,
    ``c = nu s^2``)::

        g_a(f) = (nu + 1) sum_i r_i / (c + r_i^2)       = (nu + 1) Re G_a(z)
        H_a(f) = (nu + 1) sum_i (c - r_i^2) / (c + r_i^2)^2 = -(nu + 1) Re G_a'(z)

    with ``G_a(z) = sum_i 1 / (y_i - z)`` at the complex point ``z = f + i sqrt(c)`` (a
    Cauchy sum: ``1 / (r - i sqrt c) = (r + i sqrt c) / (r^2 + c)``). ``G_a`` is analytic
    off the real line and every pole ``y_i`` lies at distance ``>= sqrt(c)`` from ``z``,
    so about a centre ``z0 = f0 + i sqrt(c)`` (``d = f - f0`` real)::

        G_a(z0 + d) = sum_k d^k M_k,     M_k = sum_i w_i^(k+1),   w_i = 1 / (y_i - z0)

    with ``|w_i| <= 1 / sqrt(c)``. The store keeps ``Re M_k`` for ``k < order`` per arm
    (``order`` numbers, updated in ``O(order)`` when a reward arrives) and evaluates
    ``g_a``, ``H_a`` in ``O(order)`` per arm. Truncation: with ``rho = |d| / sqrt(c) <=
    radius`` the tail of ``G_a`` is at most ``A rho^order / (1 - rho)``, ``A = sum_i |w_i|``
    (the size of the terms summed anyway), i.e. ``~1e-17 A`` at the defaults
    (``radius = 1/32``, ``order = 12``): below the rounding of the direct sum. An arm whose
    ``f`` strays further than ``radius sqrt(c)`` from its centre is re-centred at ``f``
    from its rewards (``O(n_a order)``, :meth:`~agents.robust.rcgp_ucb.PlateauRewards.
    arm_values`); late in a run the modes settle and re-centring is rare.

    Memory: ``8 order n`` bytes (refused before allocating when it does not fit).
    """

    def __init__(
        self, n: int, nu: float, scale: float, rewards: Any, *, order: int = 12,
        radius: float = 1 / 32,
    ) -> None:  # fmt: skip
        order = check_int("StudentTScores", "order", order, 3, None)  # d^2 is read
        check_memory("StudentTScores", "n", n, 8.0 * order * n + 8.0 * n, "Use fewer arms.")
        self.nu1 = nu + 1.0
        self.root_c = math.sqrt(nu) * scale  # sqrt(nu s^2)
        self.order = order
        self.reach = radius * self.root_c
        self._reach2 = (self.reach * self.reach) * (1.0 - 1e-9)
        self._ks = np.arange(1, order + 1)  # powers of w: w^(k+1), k < order
        self._kd = np.arange(1, order, dtype=float)[:, None]  # d/dd d^k = k d^(k-1)
        self._re = np.zeros((order, n))  # Re M_k per arm (row k: all arms)
        self._centre = np.zeros(n)
        self._rewards = rewards  # a PlateauRewards holding every reward (re-centring)
        self.recentred = 0  # arms re-centred so far
        # the moments of the arms S last evaluated, scaled as the sums need them (column j:
        # arm S[j]): S, their centres, (nu + 1) Re M_k and, once the curvature was asked
        # for, -(nu + 1) k Re M_k; an arm's column follows each reward added there
        self._cache: list[Any] | None = None
        self._slot = np.full(n, -1, dtype=np.intp)  # column of each arm in the cache
        self._P = np.empty((order, 0))  # powers d^k of the last evaluation (row k)

    def add(self, arm: int, y: float) -> None:
        """Count reward ``y`` at ``arm`` (``O(order)``)."""
        w = 1.0 / complex(y - self._centre[arm], -self.root_c)
        col = self._re[:, arm]
        col += (w**self._ks).real
        j, cache = self._slot[arm], self._cache
        if j >= 0 and cache is not None:  # its cached column, as a fresh cache computes it
            cache[2][:, j] = self.nu1 * col
            if cache[3] is not None:
                cache[3][:, j] = (-self.nu1 * self._kd[:, 0]) * col[1:]

    def _recentre(self, arms: np.ndarray, f: np.ndarray) -> None:
        owner, ys = self._rewards.arm_values(arms)
        self._centre[arms] = f
        pos = np.searchsorted(arms, owner) if arms.size > 1 else np.zeros(owner.size, int)
        w = 1.0 / ((ys - f[pos]) - 1j * self.root_c)
        P = w[:, None] ** self._ks[None, :]
        re = np.zeros((arms.size, self.order))
        np.add.at(re, pos, P.real)
        self._re[:, arms] = re.T
        self.recentred += arms.size
        self._drop_cache()

    def _drop_cache(self) -> None:
        if self._cache is not None:
            self._slot[self._cache[0]] = -1
            self._cache = None

    def _powers(self, S: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, list[Any]] | None:
        """``(P, moments)``: ``P[k] = d^k`` (``d = f - centre``) for the (ascending,
        distinct) arms ``S`` and their cached moments, after re-centring the arms beyond
        :attr:`reach`; ``None`` when some were (the moments changed: evaluate again)."""
        cache = self._cache
        if cache is None or cache[0] is not S:
            self._drop_cache()
            cache = self._cache = [S, self._centre[S], self.nu1 * self._re[:, S], None]
            self._slot[S] = np.arange(S.size)
        d = f - cache[1]
        P = self._P
        if P.shape[1] != d.size:
            P = self._P = np.empty((self.order, d.size))
            P[0] = 1.0
        P[1:] = d
        np.multiply.accumulate(P[1:], axis=0, out=P[1:])
        # every |d| <= reach for certain when every d^2 is below reach^2 less a margin
        # (and no NaN); otherwise the arms beyond reach are found by |d| itself
        if not P[2].max() < self._reach2:
            far = np.abs(d) > self.reach
            if far.any():
                self._recentre(S[far], f[far])
                return None
        return P, cache

    def score(self, S: np.ndarray, f: np.ndarray) -> np.ndarray:
        """``g`` at latent values ``f`` of the (ascending, distinct) arms ``S`` (the first
        element of :meth:`derivatives`, without the curvature's work)."""
        got = self._powers(S, f)
        while got is None:
            got = self._powers(S, f)
        return np.einsum("km,km->m", got[0], got[1][2])

    def derivatives(self, S: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, H)`` at latent values ``f`` of the (ascending, distinct) arms ``S``."""
        got = self._powers(S, f)
        while got is None:
            got = self._powers(S, f)
        P, cache = got
        if cache[3] is None:
            cache[3] = (-self.nu1 * self._kd) * self._re[1:, S]
        return np.einsum("km,km->m", P, cache[2]), np.einsum("km,km->m", P[:-1], cache[3])


@functools.lru_cache(maxsize=64)
def _t_quantile(nu: float, alpha: float) -> float:
    """``t_{nu, 1 - alpha/2}``, computed once per ``(nu, alpha)`` (a diagnosis every other
    round would otherwise pay scipy's quantile each time)."""
    return float(stats.t.ppf(1.0 - alpha / 2.0, nu))


class OutlierGPUCB(GPUCB):
    """GP-UCB on the inliers of a Student-t diagnostic (Martinez-Cantin et al. 2018 style).

    Each round (note §2, as re-implemented by the RCGP-UCB authors):

    1. **Schedule.** With ``t`` observations, diagnose when ``t >= n_init`` and
       ``(t - n_init) mod n_schedule == 0``; in between keep the mask, new points are inliers.
    2. **Diagnose.** Laplace-approximated Student-t GP (``nu``) on all data
       (:func:`student_t_laplace`); predictive mean ``m_i`` and sd
       ``s_i = sqrt(var f(x_i) + scale^2 nu / (nu - 2))`` at each observation; flag ``y_i``
       outside ``m_i +- t_{nu, 1 - alpha/2} s_i`` (:func:`flag_outliers`).
    3. **Safeguard.** If more than ``max_outlier_fraction`` would be flagged, keep the old mask.
    4. **Fit.** The Gaussian GP of GP-UCB on the inliers, from the per-arm inlier counts
       ``n_a`` and reward sums ``s_a`` (the GP posterior depends on the data only through
       them: :meth:`~agents.gp.engine.GPPosteriorEngine.set_statistics` with
       ``precision = n_a``, ``sums = s_a``; exact), then GP-UCB's rule.

    Cost. A diagnosis is the published procedure (note §2, step 2: a Laplace fit over
    all ``t`` observations, every flag tested) computed without a pass over them, and
    warm-started from the last diagnosis's mode on the played set ``S``:

    - the Student-t score and curvature of each played arm come from per-arm Taylor
      moments of a Cauchy sum (:class:`StudentTScores`: ``O(|S| order)`` per step, to
      below the rounding of the direct sums; an arm whose mode strays is re-centred from
      its rewards, rarely once the modes settle);
    - the mode search is a chord iteration on :func:`student_t_laplace`'s floored Newton
      step: its matrix ``I + W'^{1/2} K_SS W'^{1/2}`` is factored (``O(|S|^3 / 3)``) only
      when ``S`` grew or a step shrinks by less than :data:`CHORD_MAX_RATIO`; otherwise a
      step is the score (without the curvature) and two ``|S| x |S|`` products and a
      triangular solve pair, or, once the factor has served
      :data:`CHORD_EXPLICIT_AFTER` steps, one product with ``(K_SS^{-1} + W')^{-1}``
      formed explicitly (the fixed point, the mode, does not depend on ``W'``); it stops
      at a step below
      :data:`MODE_TOL_COARSE` and goes on to the ``1e-10`` of :func:`student_t_laplace`
      only when a reward lies within ten last steps of a window edge, so the flags are
      those of the mode itself (a few steps a diagnosis late in a run, fewer than one
      factorisation);
    - the Laplace variance ``diag((K_SS^{-1} + W)^{-1})`` (Fisher ``W``, which only
      grows with the counts) is the posterior variance of a GP with noise variance
      ``1 / w_obs``, kept by a second engine at ``O(n^2)`` a round (``O(n |S|)`` on the
      played set) instead of ``O(|S|^3)`` a diagnosis; below :data:`FISHER_ENGINE_MIN_LAM`
      (where rank-one updates would lose digits) it is computed per diagnosis;
    - the inliers' per-arm counts and sums come from window searches in each arm's sorted
      rewards (:class:`~agents.robust.rcgp_ucb.PlateauRewards`, windows shrunk by a few
      ulps): only the flagged rewards, those within ulps of a window edge, the
      not-yet-merged ``O(sqrt t)`` and those beyond a far bound are tested one by one,
      with :func:`flag_outliers`' own arithmetic — the same mask;
    - the GP on the inliers only conditions on the new reward (one ``O(n^2)`` update)
      when the diagnosis changed no flag, the common case; otherwise it follows the
      inliers by rank-one moves of the arms whose statistics changed
      (:meth:`~agents.gp.engine.GPPosteriorEngine.move_statistics`; the played-set
      representation re-derives), re-derived also when a corruption far beyond the
      inliers' scale leaves it (:data:`SUBTRACT_MAX`).

    So a diagnosis costs ``O(steps (|S|^2 + |S| order) + #flagged + sqrt(t) + |S| log t)``
    plus ``O(k n^2)`` for ``k`` moved arms when flags changed, and a factorisation
    ``O(|S|^3 / 3)`` when ``S`` grew (every diagnosis while new arms keep arriving, e.g.
    thousands of arms) or the chord slowed; a round adds
    two ``O(n^2)`` engine updates (as two GP-UCB rounds) — flat in ``t`` while the flagged
    rewards stay few (corruptions; ``alpha`` of the noise under a mis-set scale).
    ``benchmarks/bench_agents.py --against REV`` prints it beside another revision. The
    Student-t posterior is not log-concave: with a scale well below the noise a warm
    start can track another local mode than a cold start (the previous implementation's
    warm start did too); the lockstep tests against the cold refit use scales of the
    noise's order. ``outliers_`` rebuilds the mask on demand from the last accepted
    diagnosis's per-arm modes and ``q sd``. Kernel hyperparameters are the problem's (no
    refit; the re-implementation refits them by maximum likelihood).

    Parameters: as :class:`~agents.gp.gp_ucb.GPUCB` plus ``n_init`` (10), ``n_schedule``
    (2), ``nu`` (4, ``> 2``), ``alpha`` (0.05), ``max_outlier_fraction`` (0.5) — the
    re-implementation's defaults, not the paper's (note §2) — and ``scale`` (Student-t
    scale; ``None``: the problem's noise scale ``R``).
    """

    name = "outlier-gp-ucb"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        R: float | None = None,
        n_init: int = 10,
        n_schedule: int = 2,
        nu: float = 4.0,
        alpha: float = 0.05,
        max_outlier_fraction: float = 0.5,
        scale: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta, R=R)
        self.n_init = n_init
        self.n_schedule = n_schedule
        self.nu = nu
        self.alpha = alpha
        self.max_outlier_fraction = max_outlier_fraction
        self.scale = scale

    def _setup(self, problem: Any) -> None:
        super()._setup(problem)
        o = self._owner
        # beyond the longest run (MAX_HORIZON) a diagnosis could never happen: refused
        self.n_init_ = check_int(o, "n_init", self.n_init, 1, MAX_HORIZON)
        self.n_schedule_ = check_int(o, "n_schedule", self.n_schedule, 1, MAX_HORIZON)
        self.nu_ = check_real(o, "nu", self.nu, 2.0, None, "neither")
        self.alpha_ = check_real(o, "alpha", self.alpha, 0.0, 1.0, "neither")
        self.max_frac_ = check_real(
            o, "max_outlier_fraction", self.max_outlier_fraction, 0.0, 1.0, "both"
        )
        # The Student-t terms need scale^2 and 1 / scale^2 finite with room to spare
        # (nu scale^2 + r^2, (nu + 1) / ((nu + 3) scale^2)): SCALE_RANGE.
        lo, hi = SCALE_RANGE
        if self.scale is not None:
            self.scale_ = check_real(o, "scale", self.scale, lo, hi, "both")
        elif self.R is not None:
            self.scale_ = check_real(o, "R", self.R, lo, hi, "both")
        else:
            nu = self._constant(problem, "nu", override="scale")
            derived = nu ** (1.0 / (1.0 + float(problem.alpha)))
            if not lo <= derived <= hi:
                raise ValueError(
                    f"{o}: the default Student-t scale nu^(1/(1+alpha)) = {derived!r} from "
                    f"problem.nu = {problem.nu!r} lies outside [{lo:g}, {hi:g}]; pass scale=..."
                )
            self.scale_ = max(derived, 1e-12)
        # observations (oldest first) in buffers grown by doubling; _t of them are used
        self._t = 0
        self._arm_buf = np.empty(64, dtype=np.intp)
        self._y_buf = np.empty(64)
        # the played arms S (ascending, as np.unique gives them)
        self._pos = np.full(self.n_, -1, dtype=np.intp)
        self._S = np.zeros(0, dtype=np.intp)
        self._K_SS: np.ndarray | None = None
        self._mode = np.zeros(self.n_)  # the last diagnosis's mode, per arm
        # every reward per arm, sorted (the inlier counts and sums by window searches) and
        # as Taylor moments of the Student-t score (the mode search without a pass over t)
        n, s, nu = self.n_, self.scale_, self.nu_
        self._noise = s**2 * nu / (nu - 2.0)
        q = _t_quantile(nu, self.alpha_)
        sup_f = getattr(problem, "sup_f", None)
        f_bound = float(sup_f) if sup_f is not None and math.isfinite(float(sup_f)) else 0.0
        bound = 8.0 * (abs(f_bound) + (q + 1.0) * s * math.sqrt(nu / (nu - 2.0)))
        ok = math.isfinite(bound) and math.isfinite(0.25 / bound)
        self._rewards = PlateauRewards(n, bound if ok else math.inf)
        self._scores = StudentTScores(n, nu, s, self._rewards)
        # Fisher information W = counts w_obs per arm: (K^{-1} + W)^{-1} is the posterior
        # covariance of a GP with noise variance 1 / w_obs, kept by an engine (its diagonal
        # is the Laplace variance) when 1 / w_obs is not so small against the kernel that
        # the rank-one updates lose digits; else computed per diagnosis.
        self._w_obs = (nu + 1.0) / ((nu + 3.0) * s**2)
        kmax = float(np.max(problem.kernel_diag())) if n else 1.0
        self._fisher: GPPosteriorEngine | None = None
        if 1.0 / self._w_obs >= FISHER_ENGINE_MIN_LAM * kmax:
            self._fisher = GPPosteriorEngine(problem, 1.0 / self._w_obs, refresh_every=4096)
        # the chord's matrix: [L, W'^1/2, W', (K^-1 + W')^-1 once formed, steps made on it]
        self._factor: list[Any] | None = None
        # the last accepted diagnosis: its round and, per arm, the mode and half-width of
        # the inlier window (the outlier mask, rebuilt on demand by outliers_)
        self._mask_t = 0
        self._mask_centre = np.zeros(n)
        self._mask_half = np.zeros(n)
        self.newton_factorizations = 0
        self.mode_refinements = 0  # coarse modes refined because a flag was ambiguous

    def _mode_search(
        self, f: np.ndarray, W: np.ndarray, tol: float = 1e-10
    ) -> tuple[np.ndarray, float]:
        """The mode of ``p(f_S | y)`` from ``f``: the step of :func:`student_t_laplace`
        (``newton=True``), ``f <- (K_SS^{-1} + W')^{-1} (W' f + g(f))``, with its matrix
        factored only when ``S`` changed or a step shrinks by less than
        :data:`CHORD_MAX_RATIO`: a chord iteration, whose fixed point is the same (any
        positive ``W'``), mostly on the matrix of an earlier diagnosis. With ``L L^T =
        I + W'^{1/2} K_SS W'^{1/2}``, a step is ``K (b - W'^{1/2} L^{-T} L^{-1} W'^{1/2} K
        b)``, ``b = W' f + g``, until the factor has served :data:`CHORD_EXPLICIT_AFTER`
        steps; then ``A = K_SS - V^T V``, ``V = L^{-1} W'^{1/2} K_SS`` (the Laplace
        posterior covariance's stable form) is formed once and a step is ``A b``. The
        curvature ``H`` (for ``W' = max(H, W)``) is evaluated only when the matrix is
        factored. Scores from :class:`StudentTScores`."""
        K, S = self._K_SS, self._S
        fac = self._factor
        if fac is not None and fac[0].shape[0] != S.size:
            fac = None
        prev = math.inf
        refactor = fac is None
        scores = self._scores
        for _ in range(LAPLACE_ITERS):
            if refactor:
                g, H = scores.derivatives(S, f)
                Wp = np.maximum(H, W)
                swp = np.sqrt(Wp)
                B = swp[:, None] * K
                B *= swp[None, :]
                B[np.diag_indices(S.size)] += 1.0
                Li, info = lapack.dpotrf(B, lower=1, clean=0, overwrite_a=1)
                if info:
                    raise np.linalg.LinAlgError(f"I + W^1/2 K W^1/2 not positive definite ({info})")
                fac = [Li, swp, Wp, None, 0]
                self.newton_factorizations += 1
            else:
                g = scores.score(S, f)
            Li, swp, Wp, A, uses = fac
            b = Wp * f
            b += g
            if A is None and uses >= CHORD_EXPLICIT_AFTER:
                # the factor keeps serving: (K^-1 + W')^-1 = K - V^T V explicitly, so each
                # further step is one product instead of two and a triangular solve pair
                V, _ = lapack.dtrtrs(Li, swp[:, None] * K, lower=1)
                A = fac[3] = K - V.T @ V
            fac[4] = uses + 1
            if A is None:
                v, _ = lapack.dpotrs(Li, swp * (K @ b), lower=1)
                v *= swp
                np.subtract(b, v, out=b)
                f_new = K @ b
            else:
                f_new = A @ b
            np.subtract(f_new, f, out=f)
            step = float(np.abs(f).max())
            f = f_new
            if step <= tol * (1.0 + float(np.abs(f_new).max())) and (
                tol <= 1e-10 or step <= 0.5 * prev
            ):
                break
            refactor = step > CHORD_MAX_RATIO * prev
            prev = step
        self._factor = fac
        return f, step

    def _diagnose(self) -> bool:
        """One diagnosis (class docstring, steps 2-3); True when its mask is accepted,
        with the per-arm inlier counts and sums in ``_inliers``."""
        t, n, S = self._t, self.n_, self._S
        if self._K_SS is None or self._K_SS.shape[0] != S.size:
            self._K_SS = self.problem_.kernel_block(S, S)
        counts = self._rewards.count[S]
        W = counts * self._w_obs
        # a coarse mode first: its flags are those of the mode itself unless a reward lies
        # within 10 last steps of a window edge (then the search goes on to 1e-10)
        f_hat, step = self._mode_search(self._mode[S], W, MODE_TOL_COARSE)
        if self._fisher is not None:
            var = self._fisher.variance()[S]  # clipped at 0 by variance()
        else:
            var = _laplace_variance(self._K_SS, W)
        var += self._noise
        sd = np.sqrt(var, out=var)
        half = _t_quantile(self.nu_, self.alpha_) * sd  # flag_outliers' q sd, per arm
        halfw = np.zeros(n)
        halfw[S] = half
        centre = np.zeros(n)
        delta = 10.0 * step
        while True:
            centre[S] = f_hat
            # certainly inside: a window shrunk by a few ulps (and by delta, the distance
            # the coarse mode may be off), so that every reward counted there also passes
            # flag_outliers' |y - m| <= q sd in floating point; the others are tested one
            # by one with flag_outliers' own arithmetic
            ulp = np.abs(centre)
            ulp += halfw
            ulp *= _EIGHT_EPS  # 8 eps (|m| + q sd)
            sure = halfw - ulp
            sure -= delta
            np.maximum(sure, 0.0, out=sure)
            cnt_in, sum_in, oa, oy = self._rewards.statistics(centre, sure)
            ho = halfw[oa]
            dist = oy - centre[oa]
            np.abs(dist, out=dist)
            if delta > 0.0:
                near = dist - ho
                np.abs(near, out=near)
                lim = ulp[oa]
                lim += delta
                if (near <= lim).any():
                    f_hat, _ = self._mode_search(f_hat, W)  # ambiguous: the mode to 1e-10
                    self.mode_refinements += 1
                    delta = 0.0
                    continue
            break
        self._mode[S] = f_hat  # the next diagnosis starts here (a new arm: at 0)
        keep = ~(dist > ho)
        ka = oa[keep]
        cnt = cnt_in + np.bincount(ka, minlength=n)
        if (t - int(cnt.sum())) / t > self.max_frac_:  # safeguard (step 3): old mask
            return False
        tot = sum_in + np.bincount(ka, weights=oy[keep], minlength=n)
        self._inliers = (cnt, tot)
        self._mask_t = t
        self._mask_centre, self._mask_half = centre, halfw
        return True

    def _only_new(self, cnt: np.ndarray, tot: np.ndarray, arm: int, reward: float) -> bool:
        """Whether the inliers ``(cnt, tot)`` of a diagnosis are the GP's current ones
        plus, or not, the newest reward at ``arm``: every count equal and every sum equal
        to rounding (``1e-12`` relative per reward; a swap of two rewards within that of
        each other changes the posterior by no more than rounding either way)."""
        eng = self.engine_
        held_cnt, held = eng.counts, eng.sums[:, 0]
        new_in = int(cnt[arm] - held_cnt[arm])
        if new_in not in (0, 1):
            return False
        same = cnt == held_cnt
        same[arm] = True
        if not same.all():
            return False
        diff = tot - held
        diff[arm] -= reward * new_in
        slack = 1e-12 * (1.0 + np.abs(held)) * (1.0 + cnt)
        return bool(np.all(np.abs(diff) <= slack))

    def _observe(self, arm: int, reward: float) -> None:
        t = self._t
        if t == self._y_buf.size:
            self._arm_buf = np.concatenate([self._arm_buf, np.empty(t, dtype=np.intp)])
            self._y_buf = np.concatenate([self._y_buf, np.empty(t)])
        self._arm_buf[t], self._y_buf[t] = arm, reward
        t = self._t = t + 1
        self._rewards.add(arm, reward)
        self._scores.add(arm, reward)
        if self._fisher is not None:
            self._fisher.observe(arm, 0.0)
        if self._pos[arm] < 0:  # a new arm: S stays ascending
            S = np.union1d(self._S, [arm]).astype(np.intp)
            self._S = S
            self._pos[S] = np.arange(S.size)
        if t >= self.n_init_ and (t - self.n_init_) % self.n_schedule_ == 0:
            # its factorisations are O(|S|^3): on one BLAS thread when small (hbo_envs.blas)
            with small_blas(float(self._S.size) ** 3):
                accepted = self._diagnose()
            if accepted:
                cnt, tot = self._inliers
                eng = self.engine_
                # the common case: no flag changed, the new reward is an inlier or not;
                # then the GP on the inliers only needs it (one observe), not a move of
                # every arm (which the played-set representation would re-derive)
                if self._only_new(cnt, tot, arm, reward):
                    if cnt[arm] > eng.counts[arm]:
                        eng.observe(arm, reward)
                    return
                prec = cnt.astype(float)
                # few arms' inlier statistics change between diagnoses: rank-one moves;
                # but a flagged reward far beyond the inliers' scale (a corruption the
                # engine held as an inlier since it arrived) would leave its rounding
                # (eps |y|) in the mean if subtracted: re-derive then
                scale = 1.0 + float(np.max(np.abs(tot) / np.maximum(prec, 1.0)))
                if float(np.max(np.abs(tot - eng.sums[:, 0]))) > SUBTRACT_MAX * scale:
                    eng._apply_statistics(prec, tot[:, None], cnt)
                else:
                    eng._move_statistics(prec, tot[:, None], cnt)
                return
        # a new point is an inlier until the next accepted diagnosis
        self.engine_.observe(arm, reward)

    @property
    def outliers_(self) -> np.ndarray:
        """The current outlier mask over the observations so far (oldest first): the last
        accepted diagnosis's :func:`flag_outliers` over the observations it saw (the same
        arithmetic, per arm mode and ``q sd``), ``False`` after them."""
        t, td = self._t, self._mask_t
        out = np.zeros(t, dtype=bool)
        a, y = self._arm_buf[:td], self._y_buf[:td]
        out[:td] = np.abs(y - self._mask_centre[a]) > self._mask_half[a]
        return out
