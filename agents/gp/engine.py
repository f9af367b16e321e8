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
from typing import Any

import numpy as np
from scipy import linalg
from scipy.linalg import blas

__all__ = ["GPPosteriorEngine"]

#: Largest ``rows x cols`` block handed to one BLAS ``dger`` call. OpenBLAS runs ``dger``
#: single-threaded up to 8192 elements; a rank-one update is memory-bound, and threading
#: it costs more in synchronisation than it saves (milliseconds per call when several
#: runs share the cores, as in a parallel sweep), so larger updates go column block by
#: column block.
_GER_BLOCK = 8192


def _column_blocks(rows: int, cols: int) -> list[tuple[int, int]]:
    width = max(1, _GER_BLOCK // max(rows, 1))
    return [(j, min(j + width, cols)) for j in range(0, cols, width)]


def _rank1_update(A: np.ndarray, alpha: float, x: np.ndarray, y: np.ndarray, blocks) -> None:
    """In place ``A += alpha x y^T`` for a Fortran-ordered ``A`` (blocked ``dger``)."""
    for j0, j1 in blocks:
        blas.dger(alpha, x, y[j0:j1], a=A[:, j0:j1], overwrite_a=1)


class GPPosteriorEngine:
    """Exact GP posterior over a finite candidate set, updated in O(n^2) per observation.

    Parameters
    ----------
    kernel_matrix : array, shape (n, n)
        Prior covariance ``K`` over the candidate set (symmetric positive semi-definite).
    lam : float
        The regularisation / noise variance ``lambda > 0`` of ``(K_t + lambda I)``.
    n_outputs : int
        Number ``r`` of reward sequences sharing the covariance (columns of :attr:`mean`).
    refresh_every : int or None
        Re-derive the state from sufficient statistics every this many observations
        (``None``: every 10^5; ``0``: never, pure incremental updates). The
        incremental updates alone stay accurate over 10^5 rounds (tested), so the refresh is
        a safeguard for very long runs whose amortised cost is well under 1% of a round.

    Attributes
    ----------
    mean : ndarray, shape (n, r)
        Posterior means ``mu_t`` of the ``r`` reward sequences at every arm.
    cov : ndarray, shape (n, n), Fortran order
        Posterior covariance ``Sigma_t``.
    counts : ndarray of int, shape (n,)
        Number of observations at each arm.
    sums : ndarray, shape (n, r)
        Sum of the observed (transformed) rewards at each arm, per sequence.
    precision : ndarray, shape (n,)
        Per-arm precision sum ``sum_j 1 / noise_var_j`` of the observations at each arm
        (``counts / lambda`` when every observation used the default noise ``lambda``).
    wsums : ndarray, shape (n, r)
        Per-arm precision-weighted target sum ``sum_j y_j / noise_var_j``.
    t : int
        Number of observations so far.
    info_gain : float
        Realized information gain ``(1/2) ln det(I_t + lambda^{-1} K_t)``.
    """

    def __init__(
        self,
        kernel_matrix: Any,
        lam: float,
        n_outputs: int = 1,
        refresh_every: int | None = None,
    ) -> None:
        K = np.array(kernel_matrix, dtype=float, order="F", copy=True)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"kernel_matrix must be square; got shape {K.shape}.")
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel_matrix contains NaN or infinite entries.")
        if not (math.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a finite positive number; got {lam!r}.")
        n = K.shape[0]
        K.setflags(write=False)
        self.K = K
        self.n = n
        self.lam = float(lam)
        self.r = int(n_outputs)
        self.refresh_every = 100_000 if refresh_every is None else int(refresh_every)
        self._cov_blocks = _column_blocks(n, n)
        self._mean_blocks = _column_blocks(n, self.r)
        self.cov = np.array(K, order="F", copy=True)
        self.mean = np.zeros((n, self.r), order="F")
        self.counts = np.zeros(n, dtype=np.int64)
        self.sums = np.zeros((n, self.r))
        self.precision = np.zeros(n)
        self.wsums = np.zeros((n, self.r))
        self._hetero = False  # some observation had noise_var != lam
        self.t = 0
        self.info_gain = 0.0
        self._since_refresh = 0
        self._std: np.ndarray | None = None

    # ------------------------------------------------------------------ queries
    def variance(self) -> np.ndarray:
        """Posterior variances ``sigma_t^2`` at every arm (clipped at 0), shape (n,)."""
        return np.maximum(np.diagonal(self.cov), 0.0)

    def std(self) -> np.ndarray:
        """Posterior standard deviations ``sigma_t`` at every arm, shape (n,) (read-only;
        cached until the next observation)."""
        if self._std is None:
            sd = np.sqrt(self.variance())
            sd.setflags(write=False)
            self._std = sd
        return self._std

    def gain(self, arm: int) -> np.ndarray:
        """Gain ``Sigma_t[:, a] / (lambda + Sigma_t[a, a])`` of a new observation at ``arm``.

        After observing at ``arm`` (call it observation ``t+1``), entry ``i`` equals
        ``Sigma_{t+1}[i, arm] / lambda``: the weight of that observation in the posterior
        mean at arm ``i``, i.e. the ``(t+1)``-th entry of
        ``k_{t+1}(x_i)^T (K_{t+1} + lambda I)^{-1}``. Every earlier observation at arm
        ``j`` then has weight ``g[j]`` in the posterior mean at ``arm`` (symmetry of
        ``Sigma``), which gives Park–Lee's threshold without a ``t x t`` solve.
        """
        c = self.cov[:, arm]
        return c / (self.lam + c[arm])

    # ------------------------------------------------------------------ updates
    def observe(self, arm: int, y: Any, *, noise_var: float | None = None) -> None:
        """Condition on one observation at ``arm`` with reward(s) ``y`` (scalar or (r,)).

        ``noise_var`` is this observation's noise variance (``None``: the engine's
        ``lambda``). A heteroscedastic GP (noise ``diag(v_1, ..., v_t)`` in place of
        ``lambda I``) is what the RCGP posterior of Altamirano et al. (2024) /
        Ezzerg et al. (2025) §2 needs: ``mu = k_t^T (K_t + diag(v))^{-1} (y - m_w)``. The
        rank-one update is the same with ``lambda`` replaced by ``v_t``; an infinite
        ``noise_var`` is an observation without information (nothing changes but ``t``).
        """
        lam = self.lam if noise_var is None else float(noise_var)
        if noise_var is not None:
            if not lam > 0:  # also refuses NaN
                raise ValueError(f"noise_var must be a positive number or None; got {noise_var!r}.")
            if lam != self.lam:
                self._hetero = True
        cov = self.cov
        self._std = None
        c = cov[:, arm].copy()
        s_aa = float(c[arm])
        denom = lam + s_aa
        # Information gain increment (1/2) ln(1 + sigma_{t-1}^2(x_t) / v_t).
        self.info_gain += 0.5 * math.log1p(max(s_aa, 0.0) / lam)
        # Mean: mean <- mean + Sigma[:, a] (y - mean[a]) / (v_t + Sigma[a, a]).
        if self.r == 1 and np.ndim(y) == 0:
            y = float(y)
            m = self.mean[:, 0]  # a view (the mean is (n, 1))
            if math.isfinite(denom):
                m += c * ((y - m[arm]) / denom)
            self.sums[arm, 0] += y
            self.wsums[arm, 0] += y / lam
        else:
            y = np.asarray(y, dtype=float).reshape(-1)
            if y.shape[0] != self.r:
                raise ValueError(f"expected {self.r} reward value(s); got {y.shape[0]}.")
            if math.isfinite(denom):
                resid = (y - self.mean[arm]) / denom
                _rank1_update(self.mean, 1.0, c, resid, self._mean_blocks)
            self.sums[arm] += y
            self.wsums[arm] += y / lam
        # Covariance: Sigma <- Sigma - Sigma[:, a] Sigma[a, :] / (v_t + Sigma[a, a]).
        if math.isfinite(denom):
            _rank1_update(cov, -1.0 / denom, c, c, self._cov_blocks)
        self.precision[arm] += 1.0 / lam
        self.counts[arm] += 1
        self.t += 1
        self._since_refresh += 1
        if self.refresh_every and self._since_refresh >= self.refresh_every:
            self.refresh()

    # ------------------------------------------------------- sufficient statistics
    def rederive(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(mean, cov, info_gain)`` computed from scratch from ``counts`` and ``sums``.

        Uses ``M = D^{1/2} K_SS D^{1/2} + lambda I`` over the played arms ``S`` (see the
        module docstring); exact up to the Cholesky factorisation of ``M``. With
        heteroscedastic observations (``observe(..., noise_var=v)``) the observations at
        arm ``i`` equal one observation of ``wsums_i / precision_i`` with noise
        ``1 / precision_i``, i.e. ``D_ii = lambda * precision_i`` and
        ``s_i = lambda * wsums_i`` in the same formulas.
        """
        K = self.K
        if self._hetero:
            S = np.flatnonzero(self.precision > 0)
            d = self.lam * self.precision[S]
            sums = self.lam * self.wsums[S]
        else:
            S = np.flatnonzero(self.counts)
            d = self.counts[S].astype(float)
            sums = self.sums[S]
        if S.size == 0:
            return np.zeros((self.n, self.r), order="F"), np.array(K, order="F"), 0.0
        sq = np.sqrt(d)
        M = sq[:, None] * K[np.ix_(S, S)] * sq[None, :]
        M[np.diag_indices_from(M)] += self.lam
        L = linalg.cholesky(M, lower=True, check_finite=False)
        V = linalg.solve_triangular(L, sq[:, None] * K[S, :], lower=True, check_finite=False)
        z = linalg.solve_triangular(L, sums / sq[:, None], lower=True, check_finite=False)
        cov = np.asfortranarray(K - V.T @ V)
        mean = np.asfortranarray(V.T @ z)
        info_gain = float(np.sum(np.log(np.diagonal(L))) - 0.5 * S.size * math.log(self.lam))
        return mean, cov, info_gain

    def refresh(self) -> None:
        """Replace the incremental state by :meth:`rederive` (removes rounding drift)."""
        self.mean, self.cov, self.info_gain = self.rederive()
        self._since_refresh = 0
        self._std = None
