"""Quadrature Fourier features (QFF) of the squared-exponential kernel.

Chowdhury–Gopalan (NeurIPS 2019) §5(a), eq. (1), after Mutný–Krause (NeurIPS 2018): for
``k(x, y) = exp(-||x - y||^2 / (2 l^2))`` on ``R^d``, Bochner's theorem gives
``k(x, y) = E_{w ~ N(0, I/l^2)} cos(w^T (x - y))``, and the expectation over each
coordinate is approximated by Gauss–Hermite quadrature with ``mbar`` nodes. With
``A_mbar`` the roots of the ``mbar``-th (physicists') Hermite polynomial ``H_mbar``,
``{omega_1, ..., omega_m} = A_mbar x ... x A_mbar`` (``m = mbar^d``) and the weights::

    nu(z) = prod_j 2^{mbar-1} mbar! / (mbar^2 H_{mbar-1}(z_j)^2)      (eq. (1); sum to 1)

the ``2m``-dimensional feature map is::

    phi(x)_i     = sqrt(nu(omega_i)) cos(sqrt(2)/l omega_i^T x)     1 <= i <= m
    phi(x)_{m+i} = sqrt(nu(omega_i)) sin(sqrt(2)/l omega_i^T x)     1 <= i <= m

so that ``phi(x)^T phi(y) = sum_i nu(omega_i) cos(sqrt(2)/l omega_i^T (x - y))``.
(``nu`` is the Gauss–Hermite weight divided by ``sqrt(pi)``.) On ``[0, 1]^d`` the uniform
error obeys (Lemma 14, Mutný–Krause Thm. 1; the form of §5 after Lemma 1)::

    eps_m = sup |k(x, y) - phi(x)^T phi(y)|
          <= d 2^{d-1} / (sqrt(2 pi) 2 mbar^mbar) (e / (4 l^2))^mbar

>>> import numpy as np
>>> X = np.linspace(0, 1, 5)[:, None]
>>> Phi = qff_features(X, lengthscale=0.2, mbar=32)
>>> Phi.shape
(5, 64)
>>> K = np.exp(-0.5 * (X - X.T) ** 2 / 0.2**2)
>>> bool(np.abs(Phi @ Phi.T - K).max() < 1e-8)
True
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.hermite import hermgauss

from hbo_envs.kernels import SquaredExponential

__all__ = [
    "QFF_MAX_BYTES",
    "qff_error",
    "qff_error_bound",
    "qff_features",
    "qff_features_paired",
    "qff_memory_bytes",
    "qff_nodes",
]

#: Default memory budget of an ATA-GP-UCB-QFF run: the embedding of the ``n`` arms
#: (``n x 2m``), its coordinates in an orthonormal basis of its span and the thin SVD that
#: finds them (two more ``n x 2m`` at most), plus four ``2m x 2m`` matrices, in float64.
QFF_MAX_BYTES = 2 * 1024**3


def qff_nodes(mbar: int, d: int, lengthscale: float) -> tuple[np.ndarray, np.ndarray]:
    """Frequencies ``sqrt(2)/l omega_i`` (shape ``(m, d)``) and weights ``nu(omega_i)`` (m,).

    The nodes are the tensor grid of the ``mbar`` roots of ``H_mbar`` (eq. (1)); the weights
    are products of the 1-D Gauss–Hermite weights ``2^{mbar-1} mbar! sqrt(pi) /
    (mbar^2 H_{mbar-1}(z)^2)`` divided by ``sqrt(pi)``, so they sum to 1.
    """
    z, w = hermgauss(int(mbar))
    # The roots of H_mbar are symmetric about 0; make them exactly so (the paired features
    # of qff_features_paired rely on it; the change is at the level of rounding).
    z, w = (z - z[::-1]) / 2.0, (w + w[::-1]) / (2.0 * math.sqrt(math.pi))
    grids = np.meshgrid(*([z] * d), indexing="ij")
    omega = np.stack([g.reshape(-1) for g in grids], axis=1)
    wgrid = np.meshgrid(*([w] * d), indexing="ij")
    nu = np.prod(np.stack([g.reshape(-1) for g in wgrid], axis=1), axis=1)
    return omega * (math.sqrt(2.0) / float(lengthscale)), nu


def qff_features(X: np.ndarray, lengthscale: float, mbar: int) -> np.ndarray:
    """The QFF embedding ``phi(x)`` of eq. (1) of every row of ``X``: shape ``(n, 2 mbar^d)``."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    freq, nu = qff_nodes(mbar, X.shape[1], lengthscale)
    arg = X @ freq.T  # (n, m): sqrt(2)/l omega_i^T x
    s = np.sqrt(nu)
    return np.concatenate([s * np.cos(arg), s * np.sin(arg)], axis=1)


def qff_features_paired(
    X: np.ndarray, lengthscale: float, mbar: int
) -> tuple[np.ndarray, np.ndarray]:
    """eq. (1) with each feature and its mirror image merged: ``(Psi, copies)``.

    The node grid is symmetric (``-omega`` is a node whenever ``omega`` is), and
    ``cos(-w x) = cos(w x)``, ``sin(-w x) = -sin(w x)``: the ``2m`` columns of eq. (1) come
    in groups of ``c = 2`` columns equal up to sign (``c = 1`` for the cosine of the
    centre node ``omega = 0`` when ``mbar`` is odd; its sine is identically 0 and carries
    nothing). Returns one column per group scaled by ``sqrt(c)`` (``Psi``, shape
    ``(G, n)``) and ``c`` (G,). ATA-GP-UCB on the ``2m`` features equals ATA-GP-UCB on
    ``Psi`` with the truncation level of group ``g`` multiplied by ``sqrt(c_g)`` -- the
    reduction of repeated directions derived in :mod:`agents.features.nystrom` (a sign
    flips ``u_{j,tau}`` and ``r^_j`` together and cancels in ``theta~``).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    d = X.shape[1]
    freq, nu = qff_nodes(mbar, d, lengthscale)
    m = freq.shape[0]
    # Flat index of -omega: every grid coordinate i -> mbar - 1 - i, i.e. j -> m - 1 - j.
    j = np.arange(m)
    rep = j < m - 1 - j  # one of each pair {omega, -omega}
    centre = j == m - 1 - j  # omega = 0 (mbar odd)
    arg_r = X @ freq[rep].T
    s2 = np.sqrt(2.0 * nu[rep])
    parts = [s2 * np.cos(arg_r), s2 * np.sin(arg_r)]
    copies = [np.full(int(rep.sum()), 2), np.full(int(rep.sum()), 2)]
    if centre.any():
        parts.insert(0, np.sqrt(nu[centre]) * np.cos(X @ freq[centre].T))
        copies.insert(0, np.ones(1, dtype=np.int64))
    return np.concatenate(parts, axis=1).T, np.concatenate(copies)


def qff_error(X: np.ndarray, lengthscale: float, mbar: int) -> float:
    """``eps_m`` on the candidate set: ``max_{x, y in X} |k(x, y) - phi(x)^T phi(y)|``."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    Phi = qff_features(X, lengthscale, mbar)
    kern = SquaredExponential(lengthscale)
    err = 0.0
    for i in range(0, X.shape[0], 1024):  # row blocks: O(1024 n) memory
        block = kern(X[i : i + 1024], X) - Phi[i : i + 1024] @ Phi.T
        err = max(err, float(np.abs(block).max()))
    return err


def qff_error_bound(d: int, mbar: int, lengthscale: float) -> float:
    """Lemma 14 bound ``d 2^{d-1} / (sqrt(2 pi) 2 mbar^mbar) (e / (4 l^2))^mbar`` on ``[0,1]^d``.

    Computed in logs (``mbar^mbar`` overflows for large ``mbar``).
    """
    mbar = int(mbar)
    log_b = (
        math.log(d)
        + (d - 1) * math.log(2.0)
        - 0.5 * math.log(2 * math.pi)
        - math.log(2.0)
        - mbar * math.log(mbar)
        + mbar * (1.0 - math.log(4.0 * lengthscale**2))
    )
    return math.exp(log_b)


def qff_memory_bytes(n: int, d: int, mbar: int) -> int:
    """Bytes of the float64 arrays an ATA-GP-UCB-QFF run keeps (see :data:`QFF_MAX_BYTES`)."""
    m2 = 2 * int(mbar) ** int(d)
    return 8 * (3 * n * m2 + 4 * m2 * m2)
