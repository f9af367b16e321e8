"""The exact GP posterior engine shared by every GP agent.

Over a finite candidate set of ``n`` arms with prior kernel matrix ``K`` and noise
(regularisation) ``lambda``, the posterior after observations ``(x_1, y_1), ..., (x_t, y_t)``
is (Chowdhury–Gopalan 2019 §3, Park–Lee 2024 eq. (3))::

    mu_t(x)       = k_t(x)^T (K_t + lambda I_t)^{-1} Y_t
    sigma_t^2(x)  = k(x, x) - k_t(x)^T (K_t + lambda I_t)^{-1} k_t(x)

The engine never forms the ``t x t`` matrix ``K_t``. It works in the space of arms:

- **Incremental (every round, O(n^2 + n r), independent of t).** It keeps the posterior
  covariance ``Sigma`` over all ``n`` arms and the posterior means of ``r`` reward
  sequences (columns of ``mean``), and conditions on one observation at arm ``a`` with the
  rank-one (Kalman) update::

      g      = Sigma[:, a] / (lambda + Sigma[a, a])         # gain
      mean  <- mean + g (y - mean[a])                       # y: one value per sequence
      Sigma <- Sigma - g Sigma[a, :]

  ``g[i] = Sigma_t[i, a] / lambda`` is also the weight of that observation in the updated
  mean at arm ``i`` (the entry of ``k_t(x_i)^T (K_t + lambda I)^{-1}`` belonging to it),
  which is what Park–Lee's CA-TGP-UCB needs.

- **Sufficient statistics (exact re-derivation).** With ``n_i`` observations at arm ``i``
  and reward sums ``s_i``, the posterior equals one observation of the per-arm mean with
  noise ``lambda / n_i``. With ``S`` the arms played, ``D = diag(n_S)`` and
  ``M = D^{1/2} K_SS D^{1/2} + lambda I`` (eigenvalues >= lambda, so its Cholesky factor
  ``L`` is well conditioned even when ``K`` is numerically singular)::

      V     = L^{-1} D^{1/2} K_{S,:}
      Sigma = K - V^T V
      mean  = V^T L^{-1} D^{-1/2} s_S
      (1/2) ln det(I_t + K_t / lambda) = sum_i ln L_ii - (|S| / 2) ln lambda

  :meth:`refresh` replaces the incremental state with this every ``refresh_every``
  observations (default 10^5; cost ``O(|S|^3 + n^2 |S|)``, amortised to well under 1% of
  a round), so rounding errors of the rank-one downdates cannot accumulate over very long
  runs. (The incremental state alone matches the re-derived one to ~1e-12 after 10^5
  rounds; ``tests/test_gp_engine.py`` checks it.)

- **Realized information gain.** ``(1/2) ln det(I_t + lambda^{-1} K_t)`` grows by
  ``(1/2) ln(1 + sigma_{t-1}^2(x_t) / lambda)`` with every observation (Srinivas et al.
  2010, Lemma 5.3); :attr:`info_gain` is this running sum (exact after each refresh). The
  DESIGN uses it in place of the uncomputable maximum information gain ``gamma_t``.

The mean is linear in the rewards, so several reward sequences share one covariance:
TGP-UCB feeds truncated rewards, MoM-GP-UCB feeds its ``ell`` replicate sequences as
``r = ell`` columns.

**Two representations, one engine** (``representation="auto"`` picks by ``n`` and the
horizon ``T``, :func:`auto_representation`):

- ``"arms"`` (``n <= DENSE_MAX_N = 8192``, unless ``T`` is short beside ``n``): the
  ``n x n`` covariance above; a round costs ``O(n^2)`` whatever ``t`` is, which is cheapest
  while ``n`` is a few thousand and the run long enough to play a good share of the arms.
- ``"played"`` (larger ``n``, or ``n >= 2048`` arms with a horizon of at most ``n / 4``
  rounds, so ``|S| <= T <= n / 4``): the posterior is kept through the played set ``S`` (the
  distinct arms observed): the cross-kernel block ``G = K[:, S]`` (``n x |S|``, grown by
  one column per new arm) and the lower Cholesky factor ``L`` of
  ``A = K_SS + Lambda`` (grown by one row per new arm), where ``Lambda = diag(lambda /
  precision_S)`` is the per-arm effective noise (``lambda / n_i`` by default). A repeated
  play at arm ``i`` lowers ``Lambda_ii``: a rank-one Cholesky *downdate* of ``L``,
  ``O(|S|^2)``. Each round the covariance column of the arm played is computed afresh::

      c = Sigma_{t-1}[:, a] = K[:, a] - G A^{-1} K[S, a]            # one dgemv, 2 n |S|

  and the means and the variance diagonal get the same rank-one update as above
  (``var -= c^2 / (lambda + c[a])``). Memory ``O(n |S|)``, never ``n x n``; a round costs
  about ``2 n |S|`` flops plus ``O(n + |S|^2)``. The kernel is read through the problem's
  :meth:`~hbo_envs.problem.Problem.kernel_columns` / ``kernel_block`` / ``kernel_diag``,
  so a problem with a lazy kernel matrix is never made dense. (Computing ``c`` from the
  factor instead of keeping ``Sigma[:, S]`` up to date is what makes this stable: the
  identity ``Sigma[:, S] = G A^{-1} Lambda`` would amplify rounding by ``Lambda^{-1}``.)
  The downdates are where rounding accumulates: each leaves an error of order
  ``eps cond(A)`` in ``L``, which reaches ``c`` and from it the means, and a small
  ``lambda`` makes ``cond(A)`` large (``Lambda_ii = lambda / n_i``). So after every
  :data:`PLAYED_RESTORE_EVERY` downdates ``L`` is factored afresh from ``K_SS + Lambda``
  and the means are re-derived from the sufficient statistics,
  ``mean = G A^{-1} (sums_S / precision_S)`` (``O(|S|^3 / 3 + 2 n |S| r)``, amortised to a
  small share of a round). Without it the means drift away from the exact posterior as
  the run grows, far beyond the arm-space engine's error once ``lambda`` is small; with
  it they stay at the arm-space engine's accuracy (``tests/test_gp_engine.py`` compares
  both with an exact solve at ``lambda = 10^-6``). Both representations give the same
  posterior (to ~1e-12 at ``lambda = 1``; tested to 1e-9).

**Per-observation noise.** ``observe(arm, y, noise_var=s2)`` conditions on an observation
with noise variance ``s2`` instead of ``lambda`` (heteroscedastic GP, e.g. RCGP-UCB's
weighted likelihood): the update uses ``s2 + Sigma[a, a]``, the information gain grows by
``(1/2) ln(1 + sigma^2(x_t) / s2)``, and the sufficient statistics become
``precision_i = lambda sum_j 1/s2_ij`` (the count ``n_i`` when every ``s2 = lambda``) and
``sums_i = lambda sum_j y_ij / s2_ij``, with which the re-derivation above holds unchanged
(``D = diag(precision_S)``).

>>> import numpy as np
>>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
>>> eng = GPPosteriorEngine(K, lam=1.0)
>>> eng.observe(0, 2.0)
>>> eng.mean[:, 0]              # k(x, x_1) * 2 / (1 + 1)
array([1. , 0.5])
>>> eng.variance()              # k(x, x) - k(x, x_1)^2 / 2
array([0.5  , 0.875])
>>> round(eng.info_gain, 6)     # 0.5 * ln(1 + 1/1)
0.346574
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from hbo_envs.blas import small_blas
from hbo_envs.memory import check_memory
from hbo_envs.problem import DENSE_MAX_N
from hbo_envs.validation import check_choice, check_int, check_real

__all__ = [
    "ARM_SPACE_MAX_N",
    "PLAYED_MIN_N",
    "PLAYED_RESTORE_EVERY",
    "EngineBatch",
    "GPPosteriorEngine",
    "REPRESENTATIONS",
    "auto_representation",
]

#: Largest ``n`` for which ``representation="auto"`` keeps the ``n x n`` covariance
#: (every registered env today, Park–Lee's 5000-arm 5D Griewank included, so their
#: numbers are unchanged).
ARM_SPACE_MAX_N = DENSE_MAX_N

#: Smallest ``n`` for which a short horizon alone selects the played-set representation.
PLAYED_MIN_N = 2048

#: ``"played"``: after this many Cholesky downdates (repeated plays) the factor of
#: ``K_SS + Lambda`` is factored afresh and the means are re-derived from the sufficient
#: statistics (module docstring), so the downdates' rounding cannot build up.
PLAYED_RESTORE_EVERY = 64


def auto_representation(n: int, horizon: int | None) -> str:
    """What ``representation="auto"`` picks for ``n`` arms and a run of ``horizon`` rounds.

    ``"played"`` when ``n > ARM_SPACE_MAX_N`` (the ``n x n`` covariance is the wall), or when
    ``n >= PLAYED_MIN_N`` and ``4 T <= n``: at most ``T`` distinct arms are ever played, so
    a played-set round costs ``2 n |S| + O(|S|^2) <= n^2 / 2`` flops of ``dgemv`` (one pass
    over ``n |S|`` numbers) against the arm space's ``n^2``-element rank-one update, and
    memory is ``n T`` instead of ``n^2`` (Park–Lee's 5000-arm 5-D Griewank at ``T <= 1250``).
    Otherwise ``"arms"`` (every registered env below 2048 arms, whatever ``T``, keeps it,
    so their numbers do not depend on this rule). ``horizon=None`` (unknown): by ``n``.

    >>> auto_representation(100, 5000), auto_representation(5000, 300)
    ('arms', 'played')
    >>> auto_representation(5000, 5000), auto_representation(1000, 10)
    ('arms', 'arms')
    >>> auto_representation(10**5, None)
    'played'
    """
    if n > ARM_SPACE_MAX_N:
        return "played"
    if horizon is not None and n >= PLAYED_MIN_N and 4 * int(horizon) <= n:
        return "played"
    return "arms"


#: :meth:`GPPosteriorEngine.move_statistics` re-derives the posterior from the statistics
#: after ``max(MOVE_REFRESH_EVERY, |S|)`` updates of the covariance (a rank-one move, or
#: one joint rank-``k`` move: each is one pass over ``Sigma`` whose rounding, downdates
#: included, is then reset; with ``|S|`` the re-derivation's ``O(|S|^3 + n^2 |S|)`` costs
#: at most about one update's ``O(n^2)`` amortised).
MOVE_REFRESH_EVERY = 64

#: :meth:`GPPosteriorEngine.move_statistics` moves this many arms or more as one rank-``k``
#: change (Woodbury: a ``k x k`` LU and two ``dgemm``) instead of ``k`` rank-one updates
#: (each with its Python-level overhead, which dominates at 100 arms). At 100 arms the
#: joint change costs about four or five rank-one moves (``benchmarks/bench_agents.py
#: --floor`` times both), counting the re-derivations each saves (one per
#: ``MOVE_REFRESH_EVERY`` covariance updates).
MOVE_JOINT_MIN = 5

#: The two representations (and ``"auto"``, which picks by ``n`` and ``T``).
REPRESENTATIONS = ("auto", "arms", "played")

#: Largest ``rows x cols`` block handed to one BLAS ``dger`` call. OpenBLAS runs ``dger``
#: single-threaded up to 8192 elements; a rank-one update is memory-bound, and threading
#: it costs more in synchronisation than it saves (milliseconds per call when several
#: runs share the cores, as in a parallel sweep), so larger updates go column block by
#: column block.
_GER_BLOCK = 8192


#: Largest ``rows x cols x k`` product handed to one ``dgemm`` of a rank-``k`` move
#: (:meth:`GPPosteriorEngine.move_statistics`): OpenBLAS runs it on one thread below
#: about this size; larger moves go column block by column block, as ``dger``.
_GEMM_BLOCK = 1 << 18


def _column_blocks(rows: int, cols: int) -> list[tuple[int, int]]:
    width = max(1, _GER_BLOCK // max(rows, 1))
    return [(j, min(j + width, cols)) for j in range(0, cols, width)]


def _rank1_update(A: np.ndarray, alpha: float, x: np.ndarray, y: np.ndarray, blocks) -> None:
    """In place ``A += alpha x y^T`` for a Fortran-ordered ``A`` (blocked ``dger``)."""
    for j0, j1 in blocks:
        blas.dger(alpha, x, y[j0:j1], a=A[:, j0:j1], overwrite_a=1)


class _DenseKernel:
    """Kernel access (``kernel_columns`` / ``kernel_block`` / ``kernel_diag``) over a
    dense matrix, the same interface :class:`~hbo_envs.problem.Problem` offers."""

    def __init__(self, K: np.ndarray) -> None:
        self.K = K

    def kernel_columns(self, idx: Any) -> np.ndarray:
        return self.K[:, np.asarray(idx, dtype=np.intp)]

    def kernel_block(self, rows: Any, cols: Any) -> np.ndarray:
        return self.K[np.ix_(np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp))]

    def kernel_diag(self) -> np.ndarray:
        return np.diagonal(self.K).copy()


def _check_dense(K: np.ndarray) -> None:
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"kernel_matrix must be square; got shape {K.shape}.")
    if not np.all(np.isfinite(K)):
        raise ValueError("kernel_matrix contains NaN or infinite entries.")


class GPPosteriorEngine:
    """Exact GP posterior over a finite candidate set, at a round cost flat in ``t``.

    Parameters
    ----------
    kernel_matrix : array (n, n), or a Problem
        Prior covariance ``K`` over the candidate set (symmetric positive semi-definite),
        or a :class:`~hbo_envs.problem.Problem`, whose kernel is then read through its
        ``kernel_columns`` / ``kernel_block`` / ``kernel_diag`` accessors (required for a
        problem whose kernel matrix is lazy) and whose ``horizon`` bounds ``|S|``.
    lam : float
        The regularisation / noise variance ``lambda > 0`` of ``(K_t + lambda I)``.
    n_outputs : int
        Number ``r`` of reward sequences sharing the covariance (columns of :attr:`mean`).
    refresh_every : int or None
        Re-derive the state from sufficient statistics every this many observations
        (``None``: every 10^5; ``0``: never, pure incremental updates). The
        incremental updates alone stay accurate over 10^5 rounds (tested), so the refresh is
        a safeguard for very long runs whose amortised cost is well under 1% of a round.
    representation : {"auto", "arms", "played"}
        ``"arms"``: the ``n x n`` covariance (``O(n^2)`` a round and in memory);
        ``"played"``: the played-set columns (``O(n |S|)``); ``"auto"`` (default):
        :func:`auto_representation` of ``n`` and the problem's horizon (``"arms"`` up to
        8192 arms unless the horizon is at most ``n / 4`` with ``n >= 2048``).
    max_arms : int or None
        Largest number of distinct arms expected (the played-set block is reserved for
        ``min(n, max_arms)`` columns and grows if more arrive). Default: the problem's
        ``horizon``, or ``n``.

    Either representation is refused before allocating, with its estimated size, when it
    does not fit in memory (:func:`hbo_envs.memory.check_memory`).

    Attributes
    ----------
    mean : ndarray, shape (n, r)
        Posterior means ``mu_t`` of the ``r`` reward sequences at every arm.
    cov : ndarray, shape (n, n), Fortran order (``"arms"`` only)
        Posterior covariance ``Sigma_t``. In both representations
        :meth:`covariance_columns` gives ``Sigma_t[:, idx]``.
    counts : ndarray of int, shape (n,)
        Number of observations at each arm.
    precision : ndarray, shape (n,)
        ``lambda sum_j 1 / s2_ij`` over the observations at each arm (equals ``counts``
        when every observation has the default noise ``lambda``).
    sums : ndarray, shape (n, r)
        ``lambda sum_j y_ij / s2_ij`` at each arm, per sequence (the plain reward sums
        with the default noise).
    t : int
        Number of observations so far.
    info_gain : float
        Realized information gain ``(1/2) ln det(I_t + N_t^{-1/2} K_t N_t^{-1/2})``
        (``N_t = lambda I`` with the default noise).
    representation : str
        ``"arms"`` or ``"played"``.
    """

    def __init__(
        self,
        kernel_matrix: Any,
        lam: float,
        n_outputs: int = 1,
        refresh_every: int | None = None,
        *,
        representation: str = "auto",
        max_arms: int | None = None,
    ) -> None:
        owner = "GPPosteriorEngine"
        representation = check_choice(owner, "representation", representation, REPRESENTATIONS)
        if not (math.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a finite positive number; got {lam!r}.")
        source: Any
        if hasattr(kernel_matrix, "kernel_columns") and hasattr(kernel_matrix, "points"):
            source = kernel_matrix  # a Problem: kernel blocks on demand
            n = int(source.n)
            horizon = getattr(source, "horizon", None)
        else:
            # A dense matrix, or a problem-like object that only has ``kernel_matrix``.
            dense = np.asarray(getattr(kernel_matrix, "kernel_matrix", kernel_matrix), dtype=float)
            _check_dense(dense)
            source = None
            n = dense.shape[0]
            horizon = None
        if representation == "auto":
            representation = auto_representation(n, horizon)
        self.representation = representation
        self.n = n
        self.lam = float(lam)
        self.r = check_int(owner, "n_outputs", n_outputs, 1, None)
        self.refresh_every = 100_000 if refresh_every is None else int(refresh_every)
        self.counts = np.zeros(n, dtype=np.int64)
        self.precision = np.zeros(n)
        self.t = 0
        self.info_gain = 0.0
        self._since_refresh = 0
        self._moves = 0  # covariance updates of move_statistics since the last re-derivation
        self._iota = np.arange(n)  # the identity permutation (a joint move's LU pivots)
        self._std: np.ndarray | None = None
        self._batch: EngineBatch | None = None
        self._mean_blocks = _column_blocks(n, self.r)
        self._scalar_arms = representation == "arms" and self.r == 1
        check_memory(owner, "n_outputs", self.r, 16.0 * n * self.r, "Use fewer reward sequences.")
        if representation == "arms":
            check_memory(
                owner,
                "n",
                n,
                8.0 * n * n * (2 if source is None else 3),
                "Use representation='played' (memory O(n |S|)).",
            )
            if source is not None:
                K = np.array(source.kernel_matrix, dtype=float, order="F", copy=True)
                _check_dense(K)
            else:
                K = np.array(dense, dtype=float, order="F", copy=True)
            K.setflags(write=False)
            self.K = K
            self._source: Any = _DenseKernel(K)
            self._cov_blocks = _column_blocks(n, n)
            self.cov = np.array(K, order="F", copy=True)
        else:
            self._source = _DenseKernel(dense) if source is None else source
            if max_arms is None:
                max_arms = n if horizon is None else int(horizon)
            cap = min(n, check_int(owner, "max_arms", max_arms, 1, None))
            self._check_played_memory(cap)
            self._G = np.empty((n, cap), order="F")  # K[:, S]; pages touched per column
            self._KSS = np.empty((cap, cap), order="F")  # K[S, S]
            self._L = np.zeros((cap, cap), order="F")  # lower Cholesky of K_SS + Lambda
            self._S = np.empty(cap, dtype=np.intp)
            self._col = np.full(n, -1, dtype=np.intp)
            self.m = 0
            self.refactorizations = 0
            self._pending_lambda: tuple[int, float] | None = None
            self._kcol: tuple[int, np.ndarray] | None = None
            self._last_column: tuple[int, int, np.ndarray] | None = None
            self._downdates = 0  # since L was last factored from scratch
            self._kdiag = np.asarray(self._source.kernel_diag(), dtype=float)
            self._var = self._kdiag.copy()
        self.mean = np.zeros((n, self.r), order="F")
        self.sums = np.zeros((n, self.r))

    def _check_played_memory(self, cap: int) -> None:
        n = self.n
        check_memory(
            "GPPosteriorEngine",
            "max_arms",
            cap,
            8.0 * n * (cap + 2 * self.r + 6) + 24.0 * cap * cap,
            f"The played-set representation keeps the n x |S| block K[:, S] (n = {n}); use a "
            "shorter horizon (|S| <= horizon) or fewer arms.",
        )

    # ------------------------------------------------------------------ queries
    def variance(self) -> np.ndarray:
        """Posterior variances ``sigma_t^2`` at every arm (clipped at 0), shape (n,)."""
        if self.representation == "arms":
            return np.maximum(self.cov.diagonal(), 0.0)
        return np.maximum(self._var, 0.0)

    def std(self) -> np.ndarray:
        """Posterior standard deviations ``sigma_t`` at every arm, shape (n,) (read-only;
        cached until the next observation)."""
        sd = self._std
        if sd is None:
            sd = self.variance()
            np.sqrt(sd, out=sd)
            sd.flags.writeable = False
            self._std = sd
        return sd

    @property
    def played(self) -> np.ndarray:
        """The distinct arms observed so far (``"played"``: in order of first play)."""
        if self.representation == "arms":
            return np.flatnonzero(self.counts)
        return self._S[: self.m].copy()

    def _column(self, arm: int) -> np.ndarray:
        """``Sigma_t[:, arm]`` as a new array (``"played"``: ``K[:, a] - G A^{-1} K[S, a]``,
        ``O(n |S| + |S|^2)``)."""
        if self.representation == "arms":
            return self.cov[:, arm].copy()
        last = self._last_column
        if last is not None and last[0] == arm and last[1] == self.t:
            return last[2].copy()  # e.g. gain(arm) then observe(arm): one dgemv, not two
        m = self.m
        j = self._col[arm]
        if j >= 0:
            c = self._G[:, j].copy()
            kS = self._KSS[:m, j]
        else:
            cached = self._kcol
            if cached is not None and cached[0] == arm:
                kcol = cached[1]
            else:
                kcol = np.array(self._source.kernel_columns([arm])[:, 0], dtype=float)
                self._kcol = (arm, kcol)  # observe() stores it in G: computed once
            c = kcol.copy()
            kS = c[self._S[:m]]
        if m:
            L = self._L[:m, :m]
            w = linalg.solve_triangular(L, kS, lower=True, check_finite=False)
            w = linalg.solve_triangular(L, w, lower=True, trans="T", check_finite=False)
            c -= self._G[:, :m] @ w
        self._last_column = (arm, self.t, c.copy())
        return c

    def covariance_columns(self, idx: Any) -> np.ndarray:
        """``Sigma_t[:, idx]``, shape ``(n, len(idx))``, in either representation."""
        idx = np.atleast_1d(np.asarray(idx, dtype=np.intp))
        out = np.empty((self.n, idx.size))
        for k, a in enumerate(idx.tolist()):
            out[:, k] = self._column(a)
        return out

    def gain(self, arm: int) -> np.ndarray:
        """Gain ``Sigma_t[:, a] / (lambda + Sigma_t[a, a])`` of a new observation at ``arm``.

        After observing at ``arm`` (call it observation ``t+1``), entry ``i`` equals
        ``Sigma_{t+1}[i, arm] / lambda``: the weight of that observation in the posterior
        mean at arm ``i``, i.e. the ``(t+1)``-th entry of
        ``k_{t+1}(x_i)^T (K_{t+1} + lambda I)^{-1}``. Every earlier observation at arm
        ``j`` then has weight ``g[j]`` in the posterior mean at ``arm`` (symmetry of
        ``Sigma``), which gives Park–Lee's threshold without a ``t x t`` solve.
        """
        if self.representation == "arms":
            c = self.cov[:, arm]
            return c / (self.lam + c[arm])
        c = self._column(arm)
        c /= self.lam + c[arm]
        return c

    # ------------------------------------------------------------------ updates
    def observe(self, arm: int, y: Any, *, noise_var: float | None = None) -> None:
        """Condition on one observation at ``arm`` with reward(s) ``y`` (scalar or (r,)).

        ``noise_var``: the observation's noise variance ``s2 > 0`` (``None``: ``lambda``).
        ``s2 = inf`` is an observation without information (a zero RCGP weight): nothing
        changes but ``t``.
        """
        if self._batch is not None:  # a member of an EngineBatch: conditioned at its flush
            self._batch._put(self, arm, y, noise_var)
            return
        if self._scalar_arms and isinstance(y, float):
            if noise_var is None:
                self._observe_scalar(arm, y, self.lam, 1.0)
                return
            if type(noise_var) is float and 0.0 < noise_var < math.inf:
                self._observe_scalar(arm, y, noise_var, self.lam / noise_var)
                return
        if noise_var is None:
            noise = self.lam
        elif isinstance(noise_var, numbers.Real) and noise_var == math.inf:
            self.t += 1
            return
        else:
            noise = check_real("GPPosteriorEngine", "noise_var", noise_var, 0.0, None, "neither")
        self._std = None
        if self.representation == "arms":
            c = self.cov[:, arm].copy()
        else:
            c = self._column(arm)
        s_aa = float(c[arm])
        denom = noise + s_aa
        # Information gain increment (1/2) ln(1 + sigma_{t-1}^2(x_t) / s2).
        self.info_gain += 0.5 * math.log1p(max(s_aa, 0.0) / noise)
        # Sufficient statistics: precision lambda/s2 (1 by default), target lambda y/s2.
        weight = 1.0 if noise_var is None else self.lam / noise
        # Mean: mean <- mean + Sigma[:, a] (y - mean[a]) / (s2 + Sigma[a, a]).
        if self.r == 1 and np.ndim(y) == 0:
            y = float(y)
            m = self.mean[:, 0]  # a view (the mean is (n, 1))
            m += c * ((y - m[arm]) / denom)
            self.sums[arm, 0] += y if noise_var is None else weight * y
        else:
            y = np.asarray(y, dtype=float).reshape(-1)
            if y.shape[0] != self.r:
                raise ValueError(f"expected {self.r} reward value(s); got {y.shape[0]}.")
            resid = (y - self.mean[arm]) / denom
            _rank1_update(self.mean, 1.0, c, resid, self._mean_blocks)
            self.sums[arm] += y if noise_var is None else weight * y
        # Covariance: Sigma <- Sigma - Sigma[:, a] Sigma[a, :] / (s2 + Sigma[a, a]).
        if self.representation == "arms":
            _rank1_update(self.cov, -1.0 / denom, c, c, self._cov_blocks)
        else:
            self._denom, self._weight = denom, weight
            self._played_update(arm, c)
        self.counts[arm] += 1
        self.precision[arm] += weight
        if self.representation == "played" and self._downdates >= PLAYED_RESTORE_EVERY:
            self._restore()
        self._tick()

    def _observe_scalar(self, arm: int, y: float, noise: float, weight: float) -> None:
        """:meth:`observe` of one reward with noise variance ``noise`` (``weight = lambda /
        noise``) in the arm space, ``r = 1`` (every single run of GP-UCB and TGP-UCB, and
        RCGP-UCB's weighted observations): the same arithmetic in the same order as the
        general path, minus its dispatch (about half of a 100-arm round is Python
        overhead). One column copy, one ``n``-vector update of the mean, one rank-one
        ``dger`` of ``Sigma``."""
        cov = self.cov
        c = cov[:, arm].copy()
        s_aa = float(c[arm])
        denom = noise + s_aa
        self.info_gain += 0.5 * math.log1p(max(s_aa, 0.0) / noise)
        m = self.mean[:, 0]
        m += c * ((y - m[arm]) / denom)
        self.sums[arm, 0] += weight * y  # y itself when weight = 1 (exact in IEEE)
        alpha = -1.0 / denom
        for j0, j1 in self._cov_blocks:
            blas.dger(alpha, c, c[j0:j1], a=cov[:, j0:j1], overwrite_a=1)
        self.counts[arm] += 1
        self.precision[arm] += weight
        self._std = None
        self.t += 1
        self._since_refresh += 1
        if self.refresh_every and self._since_refresh >= self.refresh_every:
            self.refresh()

    def _tick(self) -> None:
        """Count the observation just conditioned on; refresh when one is due."""
        self.t += 1
        self._since_refresh += 1
        if self.refresh_every and self._since_refresh >= self.refresh_every:
            self.refresh()

    def _played_update(self, arm: int, c: np.ndarray) -> None:
        """Grow or downdate the factor of ``A = K_SS + Lambda`` and the variance diagonal.

        Called before ``precision[arm]`` is incremented; ``c = Sigma_{t-1}[:, arm]``.
        """
        self._var -= c * c / (self._denom)
        m = self.m
        j = self._col[arm]
        lam_new = self.lam / (self.precision[arm] + self._weight)  # Lambda_aa after
        if j < 0:  # a new arm: G, K_SS and L grow by one column / row
            if m == self._G.shape[1]:
                self._grow()
            cached = self._kcol
            kcol = (
                cached[1]
                if cached is not None and cached[0] == arm
                else self._source.kernel_columns([arm])[:, 0]
            )
            self._kcol = None
            self._G[:, m] = kcol
            S = self._S[:m]
            self._KSS[:m, m] = kcol[S]
            self._KSS[m, :m] = kcol[S]
            self._KSS[m, m] = kcol[arm]
            self._S[m] = arm
            self._col[arm] = m
            self.m = m + 1
            if m:
                L = self._L[:m, :m]
                ell = linalg.solve_triangular(L, kcol[S], lower=True, check_finite=False)
                d2 = kcol[arm] + lam_new - float(ell @ ell)
            else:
                ell, d2 = np.empty(0), kcol[arm] + lam_new
            if d2 > 0:
                self._L[m, :m] = ell
                self._L[m, m] = math.sqrt(d2)
            else:  # rounding: refactor from K_SS + Lambda
                self._pending_lambda = (arm, lam_new)
                self._refactor()
            return
        # A repeat: Lambda_jj drops, A' = A - (Lambda_old - Lambda_new) e_j e_j^T.
        lam_old = self.lam / self.precision[arm]
        if self._downdate(j, math.sqrt(max(lam_old - lam_new, 0.0))):
            self._downdates += 1
        else:
            self._pending_lambda = (arm, lam_new)
            self._refactor()

    def _downdate(self, j: int, v: float) -> bool:
        """In place ``L L^T <- L L^T - v^2 e_j e_j^T`` (hyperbolic rotations from row ``j``);
        False (``L`` unusable) if rounding makes it indefinite."""
        m = self.m
        L = self._L
        x = np.zeros(m)
        x[j] = v
        for k in range(j, m):
            lkk = L[k, k]
            r2 = lkk * lkk - x[k] * x[k]
            if not r2 > 0.0:
                return False
            r = math.sqrt(r2)
            cth, sth = r / lkk, x[k] / lkk
            L[k, k] = r
            if k + 1 < m:
                col = L[k + 1 : m, k]
                col -= sth * x[k + 1 : m]
                col /= cth
                xs = x[k + 1 : m]
                xs *= cth
                xs -= sth * col
        return True

    def _lambda_S(self) -> np.ndarray:
        """``diag(Lambda)`` over ``S``: ``lambda / precision`` (with a pending change)."""
        S = self._S[: self.m]
        lam = self.lam / np.where(self.precision[S] > 0, self.precision[S], 1.0)
        pending = self._pending_lambda
        if pending is not None:
            lam[self._col[pending[0]]] = pending[1]
        return lam

    def _refactor(self, *, fallback: bool = True) -> None:
        """``L = chol(K_SS + Lambda)`` from scratch (``O(|S|^3)``): after a failed update
        (``fallback``, counted in :attr:`refactorizations`), at a refresh, or every
        :data:`PLAYED_RESTORE_EVERY` downdates (:meth:`_restore`)."""
        m = self.m
        A = self._KSS[:m, :m].copy()
        A[np.diag_indices(m)] += self._lambda_S()
        self._pending_lambda = None
        self._L[:m, :m] = self._cholesky(A)
        self._downdates = 0
        if fallback:
            self.refactorizations += 1

    def _cholesky(self, A: np.ndarray) -> np.ndarray:
        """Lower Cholesky factor of ``K_SS + Lambda`` or ``D^1/2 K_SS D^1/2 + lambda I``
        (positive definite in exact arithmetic), or a ValueError naming ``lam`` when rounding
        makes it indefinite: ``lambda`` below the rounding of ``K_SS`` (``~eps ||K_SS||``)
        cannot regularise a numerically singular ``K_SS`` (close arms)."""
        try:
            return linalg.cholesky(A, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            scale = float(np.max(np.abs(np.diagonal(A)))) if A.size else 0.0
            raise ValueError(
                f"GPPosteriorEngine: lam = {self.lam!r} is too small for an exact posterior "
                f"here: the {A.shape[0]} x {A.shape[0]} matrix of the played arms plus lam "
                f"is not numerically positive definite ({exc}); lam must stay well above "
                f"the rounding of the kernel block (~1e-16 x {scale:.3g}), e.g. lam >= "
                f"{max(1e-10 * scale, 1e-300):.1g}."
            ) from exc

    def _restore(self) -> None:
        """``"played"``, every :data:`PLAYED_RESTORE_EVERY` downdates: ``L`` factored
        afresh and ``mean = G A^{-1} (sums_S / precision_S)`` re-derived from it (the
        posterior mean given the per-arm statistics, module docstring), which removes the
        rounding the downdates and the rank-one mean updates built up since the last time.
        ``O(|S|^3 / 3 + 2 n |S| r)``."""
        self._refactor(fallback=False)
        m = self.m
        S = self._S[:m]
        L = self._L[:m, :m]
        ybar = self.sums[S] / self.precision[S][:, None]  # per-arm mean reward (weighted)
        w = linalg.solve_triangular(L, ybar, lower=True, check_finite=False)
        w = linalg.solve_triangular(L, w, lower=True, trans="T", check_finite=False)
        self.mean[:] = self._G[:, :m] @ w
        self._last_column = None

    def _grow(self) -> None:
        cap = self._G.shape[1]
        new = min(self.n, 2 * cap)
        self._check_played_memory(new)
        G = np.empty((self.n, new), order="F")
        G[:, :cap] = self._G
        KSS = np.empty((new, new), order="F")
        KSS[:cap, :cap] = self._KSS
        L = np.zeros((new, new), order="F")
        L[:cap, :cap] = self._L
        S = np.empty(new, dtype=np.intp)
        S[:cap] = self._S
        self._G, self._KSS, self._L, self._S = G, KSS, L, S

    # ------------------------------------------------------- sufficient statistics
    def rederive(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(mean, cov, info_gain)`` computed from scratch from ``precision`` and ``sums``.

        Uses ``M = D^{1/2} K_SS D^{1/2} + lambda I`` over the played arms ``S`` (see the
        module docstring); exact up to the Cholesky factorisation of ``M``. In the
        ``"played"`` representation the second element is the variance diagonal
        ``sigma_t^2`` (shape ``(n,)``), not the ``n x n`` covariance.
        """
        mean, var_or_cov, _, info_gain = self._rederive()
        return mean, var_or_cov, info_gain

    def _rederive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        played = self.representation == "played"
        S = self._S[: self.m] if played else np.flatnonzero(self.counts)
        n = self.n
        if S.size == 0:
            mean = np.zeros((n, self.r), order="F")
            if played:
                return mean, self._kdiag.copy(), None, 0.0
            return mean, np.array(self.K, order="F"), None, 0.0
        # BLAS-3 work n^2 |S| ("arms") or n |S|^2 ("played"): on one thread when small,
        # where a threaded call costs more than the arithmetic (hbo_envs.blas; the same
        # bits either way)
        work = float(n) * S.size * (S.size if played else n)
        with small_blas(work):
            return self._rederive_from(S, played)

    def _rederive_from(
        self, S: np.ndarray, played: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        sq = np.sqrt(self.precision[S])
        if played:
            KSS = self._KSS[: S.size, : S.size]
            KS = self._G[:, : S.size].T  # (|S|, n)
        else:
            K = self.K
            KSS = K[np.ix_(S, S)]
            KS = K[S, :]
        M = sq[:, None] * KSS * sq[None, :]
        M[np.diag_indices_from(M)] += self.lam
        L = self._cholesky(M)
        V = linalg.solve_triangular(L, sq[:, None] * KS, lower=True, check_finite=False)
        z = linalg.solve_triangular(L, self.sums[S] / sq[:, None], lower=True, check_finite=False)
        mean = np.asfortranarray(V.T @ z)
        info_gain = float(np.sum(np.log(np.diagonal(L))) - 0.5 * S.size * math.log(self.lam))
        if played:
            var = self._kdiag - np.einsum("ij,ij->j", V, V)
            return mean, var, None, info_gain
        cov = np.asfortranarray(K - V.T @ V)
        return mean, cov, None, info_gain

    @classmethod
    def from_statistics(
        cls,
        kernel_matrix: Any,
        lam: float,
        precision: Any,
        sums: Any,
        counts: Any = None,
        **kwargs: Any,
    ) -> GPPosteriorEngine:
        """A new engine conditioned on per-arm sufficient statistics, in one re-derivation:
        ``cls(kernel_matrix, lam, **kwargs)`` then :meth:`set_statistics`.

        ``precision[i] = lambda sum_j 1 / s2_ij`` and ``sums[i] = lambda sum_j y_ij / s2_ij``
        over the observations at arm ``i`` (``s2 = lambda`` by default: the count and the
        reward sum) are what :meth:`observe` accumulates, and the posterior depends on the
        observations only through them (module docstring, "Sufficient statistics"). So
        ``from_statistics`` equals observing each arm's data one by one (to rounding,
        ~1e-12; tested) at the cost of one :meth:`refresh`, ``O(|S|^3 + n^2 |S|)`` in a few
        BLAS calls instead of ``|S|`` Python-level updates. ``counts`` (default: 1 at every
        arm with ``precision > 0``) only feeds :attr:`counts` and ``t``. ``kwargs`` go to
        the constructor. An agent that re-weights all of its data every round should keep
        one engine and call :meth:`set_statistics` instead (no new engine, no new kernel
        columns for arms it already holds).
        """
        eng = cls(
            kernel_matrix, lam, n_outputs=1 if np.ndim(sums) <= 1 else np.shape(sums)[1], **kwargs
        )
        eng._set_statistics("GPPosteriorEngine.from_statistics", precision, sums, counts)
        return eng

    def set_statistics(self, precision: Any, sums: Any, counts: Any = None) -> None:
        """Replace the data by per-arm sufficient statistics, in place: the posterior of
        :meth:`from_statistics` with the same arguments, on this engine.

        What an agent that re-weights all of its data every round needs (RCGP-UCB's adaptive
        variant, the outlier diagnostic of ``outlier-gp-ucb``): one re-derivation
        (:meth:`refresh`, ``O(|S|^3 + n^2 |S|)``; ``"played"``: ``O(|S|^3 + n |S|^2)``),
        without building a new engine every time. In the ``"played"`` representation the
        kernel columns ``K[:, S]`` of arms already held are kept (a new arm adds its column,
        an arm whose ``precision`` became 0 leaves ``S``), so ``S`` stays in order of first
        appearance: the posterior equals :meth:`from_statistics`'s (arms in ascending order)
        to rounding. Arguments as in :meth:`from_statistics`; ``sums`` has shape ``(n,)``
        or ``(n, r)`` for this engine's ``r``. Not while the engine is in an
        :class:`EngineBatch`.
        """
        if self._batch is not None:
            raise ValueError(
                "GPPosteriorEngine.set_statistics: the engine is in an EngineBatch, which "
                "conditions it observation by observation; release the batch first."
            )
        self._set_statistics("GPPosteriorEngine.set_statistics", precision, sums, counts)

    def move_statistics(self, precision: Any, sums: Any, counts: Any = None) -> int:
        """:meth:`set_statistics` by rank-one changes of the arms whose statistics moved.

        The posterior is linear in the per-arm information: moving arm ``a`` from
        ``(p_a, s_a)`` to ``(p_a + dp, s_a + ds)`` is, with ``c = Sigma[:, a]`` and
        ``q = dp / lambda`` (Sherman–Morrison on ``Sigma = (K^{-1} + D / lambda)^{-1}`` and
        ``mean = Sigma sums / lambda``)::

            mean  <- mean + c (ds / lambda - q mean[a]) / (1 + q c[a])
            Sigma <- Sigma - q c c^T / (1 + q c[a])
            info_gain += (1/2) ln(1 + q c[a])            # matrix determinant lemma

        (``dp = 0``: ``mean += c ds / lambda`` only, one ``O(n)`` pass; arms whose
        statistics are unchanged cost nothing). So an agent whose data are re-weighted
        every round but change at a few arms (RCGP-UCB's adaptive variant when its anchor
        moves) pays ``O(k n^2)`` for ``k`` moved arms instead of a re-derivation,
        ``O(|S|^3 + n^2 |S|)``. From :data:`MOVE_JOINT_MIN` moved arms on, the ``k``
        rank-one changes are made as one rank-``k`` change (Woodbury, :meth:`_move_jointly`:
        the same posterior to rounding in a few BLAS-3 calls, where ``k`` Python-level
        updates cost several times the arithmetic at 100 arms). The re-derivation is still
        used when it is the cheaper or the safer one: more than ``|S| / 4`` arms to move,
        an arm losing all or more than half of its information (``1 + q c[a] < 1/2``: the
        downdate would cancel; jointly, a moved arm's variance more than doubling), the
        ``"played"`` representation, or after ``max(MOVE_REFRESH_EVERY, |S|)`` updates of
        the covariance since the last re-derivation (their rounding is then reset;
        amortised ``O(n^2 + |S|^2)`` an update, the order of an update itself). Same
        arguments and checks as :meth:`set_statistics`; the posterior equals its to
        rounding (~1e-12, tested). Returns the number of arms moved (0 after a
        re-derivation).
        """
        if self._batch is not None:
            raise ValueError(
                "GPPosteriorEngine.move_statistics: the engine is in an EngineBatch; release "
                "the batch first."
            )
        owner = "GPPosteriorEngine.move_statistics"
        return self._move_statistics(*self._check_statistics(owner, precision, sums, counts))

    def _move_statistics(self, prec: np.ndarray, tot: np.ndarray, cnt: np.ndarray) -> int:
        """:meth:`move_statistics` of statistics already checked (``tot`` of shape
        ``(n, r)``): an agent that builds them itself skips the checks' cost."""
        if self.representation != "arms":
            self._apply_statistics(prec, tot, cnt)
            return 0
        old_p = self.precision
        dp = prec - old_p
        moved = np.flatnonzero(dp)
        differ = (tot[:, 0] != self.sums[:, 0]) if self.r == 1 else np.any(tot != self.sums, 1)
        shifted = np.flatnonzero(differ & (dp == 0))
        k = moved.size
        held = int(np.count_nonzero(prec))
        if (
            k > max(1, held // 4)
            or self._moves + (1 if k >= MOVE_JOINT_MIN else k) > max(MOVE_REFRESH_EVERY, held)
            or not prec[moved].all()
        ):
            self._apply_statistics(prec, tot, cnt)
            return 0
        lam = self.lam
        cov, mean = self.cov, self.mean
        if shifted.size:  # dp = 0: mean += Sigma[:, a] ds_a / lambda
            ds = (tot[shifted] - self.sums[shifted]) / lam
            mean += cov[:, shifted] @ ds
            self.sums[shifted] = tot[shifted]
        if k >= MOVE_JOINT_MIN:
            if not self._move_jointly(moved, prec, tot):
                self._apply_statistics(prec, tot, cnt)
                return 0
            self.counts[:] = cnt
            self.t = int(cnt.sum())
            self._std = None
            return k
        # r = 1: the mean's rank-one dger is one daxpy with dger's coefficient
        # alpha y_0 (OpenBLAS's dger is an axpy per column: the same arithmetic)
        m0 = mean[:, 0] if self.r == 1 else None
        for a, dpa in zip(moved.tolist(), dp[moved].tolist(), strict=True):
            c = cov[:, a].copy()
            q = dpa / lam
            den = 1.0 + q * c.item(a)
            if not den >= 0.5:  # losing more than half of a's information: re-derive
                self._apply_statistics(prec, tot, cnt)
                return 0
            if m0 is not None:
                y0 = (tot.item(a, 0) - self.sums.item(a, 0)) / lam - q * m0.item(a)
                blas.daxpy(c, m0, a=(1.0 / den) * y0)
            else:
                ds = (tot[a] - self.sums[a]) / lam
                _rank1_update(mean, 1.0 / den, c, ds - q * mean[a], self._mean_blocks)
            alpha = -q / den
            for j0, j1 in self._cov_blocks:
                blas.dger(alpha, c, c[j0:j1], a=cov[:, j0:j1], overwrite_a=1)
            self.info_gain += 0.5 * math.log(den)
            self.sums[a] = tot[a]
            self.precision[a] = prec[a]
            self._moves += 1
        self.counts[:] = cnt
        self.t = int(cnt.sum())
        self._std = None
        return k

    def _move_jointly(self, moved: np.ndarray, prec: np.ndarray, tot: np.ndarray) -> bool:
        """The ``k`` rank-one moves of :meth:`move_statistics` as one rank-``k`` change
        (Woodbury and the determinant lemma), in a few BLAS-3 calls instead of ``k``
        Python-level rank-one updates. With ``C = Sigma[:, moved]``, ``Q = diag(dp) /
        lambda`` and ``M = Q^{-1} + C[moved]`` (``k x k``)::

            Sigma <- Sigma - (C M^{-1}) C^T
            mean  <- mean + (C M^{-1}) (Q^{-1} ds / lambda - mean[moved])
            info_gain += (1/2) ln det(I + Q C[moved]) = (1/2) (ln|det M| + sum ln|q|)

        (``k = 1``: the rank-one formulas of :meth:`move_statistics`). ``M`` is inverted by
        LU with pivoting (it is indefinite when arms lose information). False, with
        nothing changed, when the change is not a safe one — the rank-one guard carried
        over: a moved arm whose variance would more than double (or not stay positive),
        or ``det(I + Q C[moved]) <= 0`` — and the caller re-derives."""
        lam = self.lam
        cov, mean = self.cov, self.mean
        k = moved.size
        dp = prec[moved] - self.precision[moved]
        q = dp / lam
        C = cov[:, moved]  # (n, k), Fortran order
        Ckk = C[moved]
        lu, piv, info = lapack.dgetrf(Ckk + np.diag(1.0 / q), overwrite_a=1)
        uq = lu.diagonal() * q  # det(I + Q C_kk) = det(Q) det(M) = +-prod(u_ii q_i)
        if info or (np.count_nonzero(uq < 0.0) + np.count_nonzero(piv != self._iota[:k])) % 2:
            return False  # singular, or det(I + Q C_kk) < 0
        Minv, info = lapack.dgetri(lu, piv, overwrite_lu=1)
        Y = blas.dgemm(1.0, C, Minv)  # C M^{-1}, (n, k)
        # each moved arm's variance afterwards in (0, 2 x before] (rank one: den >= 1/2)
        old_var = Ckk.diagonal()
        new_var = old_var - np.einsum("ij,ij->i", Y[moved], Ckk)
        if info or not (new_var.min() > 0.0 and (new_var - 2.0 * old_var).max() <= 0.0):
            return False
        # mean += C M^{-1} (Q^{-1} ds / lambda - mean[moved]), Q^{-1} ds / lambda = ds / dp
        z = (tot[moved] - self.sums[moved]) / dp[:, None]
        z -= mean[moved]
        mean += Y @ z
        # in column blocks small enough that OpenBLAS keeps each dgemm on one thread (as
        # _GER_BLOCK for dger: threading a small update costs more than it saves)
        n = self.n
        width = _GEMM_BLOCK // (n * k)
        if width >= n:
            blas.dgemm(-1.0, Y, C, trans_b=1, beta=1.0, c=cov, overwrite_c=1)
        else:
            for j0 in range(0, n, max(width, 1)):
                j1 = min(j0 + max(width, 1), n)
                blas.dgemm(-1.0, Y, C[j0:j1], trans_b=1, beta=1.0, c=cov[:, j0:j1], overwrite_c=1)
        self.info_gain += 0.5 * float(np.log(np.abs(uq)).sum())
        self.sums[moved] = tot[moved]
        self.precision[moved] = prec[moved]
        self._moves += 1  # one pass over Sigma (MOVE_REFRESH_EVERY)
        return True

    def _set_statistics(self, owner: str, precision: Any, sums: Any, counts: Any) -> None:
        self._apply_statistics(*self._check_statistics(owner, precision, sums, counts))

    def _check_statistics(
        self, owner: str, precision: Any, sums: Any, counts: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.n
        prec = np.asarray(precision, dtype=float)
        tot = np.asarray(sums, dtype=float).reshape(n, -1) if np.size(sums) == n * self.r else None
        if prec.shape != (n,) or tot is None:
            raise ValueError(
                f"{owner}: precision must have shape ({n},) and sums ({n},) or ({n}, {self.r}); "
                f"got {prec.shape} and {np.shape(sums)}."
            )
        if not (np.all(np.isfinite(prec)) and np.all(prec >= 0) and np.all(np.isfinite(tot))):
            raise ValueError(f"{owner}: precision must be finite and >= 0 and sums finite.")
        if np.any(tot[prec == 0] != 0):
            raise ValueError(f"{owner}: sums must be 0 where precision is 0 (no data).")
        if counts is None:
            cnt = (prec > 0).astype(np.int64)
        else:
            cnt = np.asarray(counts)
            if cnt.shape != (n,) or cnt.dtype.kind not in "iu" or np.any((cnt > 0) != (prec > 0)):
                raise ValueError(
                    f"{owner}: counts must be integers of shape ({n},), positive exactly "
                    "where precision is."
                )
        return prec, tot, cnt

    def _apply_statistics(self, prec: np.ndarray, tot: np.ndarray, cnt: np.ndarray) -> None:
        n = self.n
        S = np.flatnonzero(prec > 0)
        if self.representation == "played":  # refused before anything changes
            cap = self._G.shape[1]
            while cap < S.size:
                cap = min(n, 2 * cap)  # as _grow, which checks each size again
            if cap > self._G.shape[1]:
                self._check_played_memory(cap)
        self.precision[:] = prec
        self.sums[:] = tot
        self.counts[:] = cnt
        self.t = int(cnt.sum())
        if self.representation == "played":
            self._hold_columns(S)
        self.refresh()  # no data (S empty): the prior

    def _hold_columns(self, S: np.ndarray) -> None:
        """``"played"``: make the held arms exactly ``S`` (arms with ``precision > 0``):
        drop the others' columns (compacting ``G`` and ``K_SS``), append the new arms'
        columns ``K[:, a]`` after the kept ones. ``K_SS`` is read from the columns, each
        new column giving its entries against the arms before it, as :meth:`observe` does."""
        m = self.m
        old = self._S[:m]
        keep = self.precision[old] > 0
        if not keep.all():
            idx = np.flatnonzero(keep)
            k = idx.size
            self._G[:, :k] = self._G[:, idx]
            self._KSS[:k, :k] = self._KSS[np.ix_(idx, idx)]
            self._col[old] = -1
            kept = old[idx]
            self._S[:k] = kept
            self._col[kept] = np.arange(k)
            m = self.m = k
        new = S[self._col[S] < 0]
        if new.size:
            total = m + new.size
            while total > self._G.shape[1]:
                self._grow()
            self._G[:, m:total] = self._source.kernel_columns(new)
            self._S[m:total] = new
            self._col[new] = np.arange(m, total)
            held = self._S[:total]
            B = self._G[held, m:total]  # K[S, new]: column j against every held arm
            self._KSS[:total, m:total] = B
            self._KSS[m:total, :m] = B[:m].T
            U = B[m:]  # new x new: the upper triangle from the later column, mirrored
            self._KSS[m:total, m:total] = np.triu(U) + np.triu(U, 1).T
            self.m = total
        self._pending_lambda = None
        self._kcol = None
        self._last_column = None

    def refresh(self) -> None:
        """Replace the incremental state by :meth:`rederive` (removes rounding drift)."""
        mean, var_or_cov, _, info_gain = self._rederive()
        self.mean, self.info_gain = mean, info_gain
        if self.representation == "arms":
            self.cov = var_or_cov
        else:
            self._var = var_or_cov
            self._refactor()
            self._last_column = None
        self._since_refresh = 0
        self._moves = 0
        self._std = None


class EngineBatch:
    """``B`` arm-space engines advanced in lockstep: one vectorized update for all of them.

    Runs of one agent over ``B`` seeds (the harness's batched cells) each keep their own
    :class:`GPPosteriorEngine`; the batch stacks their state into ``cov`` (``n x n x B``,
    Fortran order) and ``mean`` / ``sums`` (``n x r x B``), ``counts`` / ``precision``
    (``n x B``) and rebinds every engine's arrays to its slice, so each engine (and the
    agent reading it: ``posterior()``, the ``gain`` of CA-TGP-UCB, the information gain in
    ``beta_t``) stays a complete, live engine. While in the batch, an engine's
    :meth:`~GPPosteriorEngine.observe` only queues the observation; :meth:`flush`
    conditions all ``B`` engines at once with exactly the arithmetic of ``observe``, in
    the same order, so a batched run is **bit-identical** to ``B`` separate runs
    (``tests/test_batch.py``)::

        C[b]     = Sigma_b[:, a_b]                              # one gather for all b
        mean_b  <- mean_b + C[b] (y_b - mean_b[a_b]) / (lambda + Sigma_b[a_b, a_b])
        Sigma_b <- Sigma_b - C[b] C[b]^T / (lambda + Sigma_b[a_b, a_b])   # dger per b

    The mean update and the bookkeeping are one numpy call each for the whole batch (the
    per-round cost of a 100-arm run is numpy call overhead, not flops); the covariance
    keeps one BLAS ``dger`` per engine, the routine ``observe`` calls (there in column
    blocks, here in one call: the same arithmetic for every element), because a
    vectorized ``C C^T`` product would round differently (no fused multiply-add) and is
    slower.
    Only the default noise ``lambda`` is batched (``observe(..., noise_var=...)`` raises).

    >>> import numpy as np
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> engines = [GPPosteriorEngine(K, lam=1.0) for _ in range(3)]
    >>> batch = EngineBatch(engines)
    >>> for e, a in zip(engines, [0, 1, 0]):
    ...     e.observe(a, 2.0)                  # queued
    >>> batch.flush()
    >>> engines[1].mean[:, 0]                  # k(x, x_2) * 2 / (1 + 1)
    array([0.5, 1. ])
    >>> batch.std()[0]
    array([0.70710678, 0.93541435])
    """

    def __init__(self, engines: list[GPPosteriorEngine]) -> None:
        if not engines:
            raise ValueError("EngineBatch needs at least one engine; got none.")
        e0 = engines[0]
        for e in engines:
            if not isinstance(e, GPPosteriorEngine) or e.representation != "arms":
                raise ValueError(
                    "EngineBatch stacks arm-space GPPosteriorEngines (representation='arms'); "
                    f"got {type(e).__name__} with representation "
                    f"{getattr(e, 'representation', None)!r}."
                )
            if (e.n, e.r, e.lam) != (e0.n, e0.r, e0.lam) or e._batch is not None:
                raise ValueError(
                    "EngineBatch needs engines of one shape (n, n_outputs, lam) that belong "
                    f"to no other batch; got (n, r, lam) = {(e.n, e.r, e.lam)} beside "
                    f"{(e0.n, e0.r, e0.lam)}."
                )
        if len({id(e) for e in engines}) != len(engines):
            raise ValueError("EngineBatch got the same engine twice.")
        n, r, B = e0.n, e0.r, len(engines)
        check_memory("EngineBatch", "engines", B, 8.0 * n * (n + 2 * r + 2) * B, "Use fewer.")
        self.engines = list(engines)
        self.lam = e0.lam
        self.cov = np.empty((n, n, B), order="F")
        self.mean = np.empty((n, r, B), order="F")
        self.sums = np.empty((n, r, B), order="F")
        self.counts = np.empty((n, B), dtype=np.int64, order="F")
        self.precision = np.empty((n, B), order="F")
        for b in range(B):
            self._bind(b)
        self._slot = {id(e): b for b, e in enumerate(self.engines)}
        self._arms = np.zeros(B, dtype=np.intp)
        self._ys: list[Any] = [None] * B
        self._queued = np.zeros(B, dtype=bool)
        self._bidx = np.arange(B)

    def _bind(self, b: int) -> None:
        """Copy engine ``b``'s state into slice ``b`` and make its arrays views of it."""
        e = self.engines[b]
        self.cov[:, :, b] = e.cov
        self.mean[:, :, b] = e.mean
        self.sums[:, :, b] = e.sums
        self.counts[:, b] = e.counts
        self.precision[:, b] = e.precision
        e.cov, e.mean, e.sums = self.cov[:, :, b], self.mean[:, :, b], self.sums[:, :, b]
        e.counts, e.precision = self.counts[:, b], self.precision[:, b]
        e._batch = self

    def _put(self, engine: GPPosteriorEngine, arm: int, y: Any, noise_var: Any) -> None:
        if noise_var is not None:
            raise ValueError(
                "EngineBatch conditions on the default noise lambda only; an observation "
                f"with noise_var={noise_var!r} needs an engine outside a batch."
            )
        b = self._slot[id(engine)]
        if self._queued[b]:
            raise RuntimeError(f"engine {b} of the batch observed twice before flush().")
        self._arms[b] = int(arm)
        self._ys[b] = y
        self._queued[b] = True

    def std(self) -> np.ndarray:
        """``sigma_t`` of every engine, shape ``(B, n)`` (``np.sqrt`` of the clipped
        diagonal, as :meth:`GPPosteriorEngine.std`)."""
        return np.sqrt(np.maximum(np.diagonal(self.cov, axis1=0, axis2=1), 0.0))

    def flush(self) -> None:
        """Condition every engine on its queued observation (all ``B`` must have one)."""
        if not self._queued.all():
            missing = np.flatnonzero(~self._queued).tolist()
            raise RuntimeError(f"EngineBatch.flush(): engines {missing} queued no observation.")
        arms, bidx, lam = self._arms, self._bidx, self.lam
        C = np.ascontiguousarray(self.cov[:, arms, bidx].T)  # C[b] = Sigma_b[:, a_b]
        s = C[bidx, arms].tolist()
        denom = [lam + s_aa for s_aa in s]
        ys = self._ys
        scalar = self.mean.shape[1] == 1 and all(np.ndim(y) == 0 for y in ys)
        if scalar:
            y = np.array([float(v) for v in ys])
            M = self.mean[:, 0, :]
            coef = (y - M[arms, bidx]) / np.array(denom)
            M += C.T * coef
            self.sums[arms, 0, bidx] += y
        for b, e in enumerate(self.engines):
            a = int(arms[b])
            e._std = None
            e.info_gain += 0.5 * math.log1p(max(s[b], 0.0) / lam)
            if not scalar:
                yb = np.asarray(ys[b], dtype=float).reshape(-1)
                if yb.shape[0] != e.r:
                    raise ValueError(f"expected {e.r} reward value(s); got {yb.shape[0]}.")
                resid = (yb - e.mean[a]) / denom[b]
                _rank1_update(e.mean, 1.0, C[b], resid, e._mean_blocks)
                e.sums[a] += yb
            blas.dger(-1.0 / denom[b], C[b], C[b], a=e.cov, overwrite_a=1)
        self.counts[arms, bidx] += 1
        self.precision[arms, bidx] += 1.0
        self._queued[:] = False
        self._ys = [None] * len(self.engines)
        for b, e in enumerate(self.engines):
            cov = e.cov
            e._tick()
            if e.cov is not cov:  # refresh() replaced the arrays: restack them
                e._batch = None
                self._bind(b)

    def release(self) -> None:
        """End the batch: every engine gets arrays of its own and observes directly again."""
        for e in self.engines:
            e.cov, e.mean, e.sums = (np.array(x, order="F") for x in (e.cov, e.mean, e.sums))
            e.counts, e.precision = e.counts.copy(), e.precision.copy()
            e._batch = None
