"""Nyström embeddings with ridge-leverage-score dictionaries (Chowdhury–Gopalan 2019,
§5(b) and Appendix D.3, Algorithm 3 "NyströmEmbedding"; Calandriello et al. 2019).

**Algorithm 3.** At round ``t`` every past observation ``x_i`` (``i = 1..t``) enters the
dictionary ``D_t`` independently with probability ``p_{t,i} = min{q sigma~^2_{t-1}(x_i), 1}``;
the embedding is ``phi~_t(x) = (K_D^{1/2})^+ k_D(x)`` of dimension ``m_t = |D_t|``.

**Per-arm sampling (exactly the same distribution).** On a finite domain, all ``N_a``
observations at arm ``a`` share ``x_i = a`` and hence ``p_{t,i} = p_a``; their indicators
are i.i.d. Bernoulli(``p_a``), so the number of copies of ``a`` in ``D_t`` is
``c_a ~ Binomial(N_a, p_a)``, independently over arms. The algorithm's output depends on
``D_t`` only through the multiset of points (``phi~_t`` is permutation-equivariant in the
dictionary order, and ``mu~_t``, ``sigma~_t`` are invariant), i.e. through ``c``. Drawing
``c`` directly therefore gives the same law of every quantity of the algorithm at O(n)
instead of O(t) per round (``tests/test_ata_gp_ucb.py`` checks it statistically against
per-observation Bernoulli draws, :func:`sample_copies_per_observation`).

**Duplicates reduce exactly.** With ``c_a`` copies of each dictionary arm ``a in S``, let
``C = diag(c_S)``, ``M = C^{1/2} K_SS C^{1/2}`` and ``psi(x) = (M^{1/2})^+ C^{1/2} k_S(x)``
(dimension ``s = |S|``). Then ``phi~_t(x) = Q psi(x)`` with ``Q`` the orthonormal basis
``E C^{-1/2}`` of the span of the copy-indicator vectors ``E``, so ``phi~^T phi~ = psi^T psi``,
``V~_t`` acts on that span as ``A = Psi^T Psi + lambda I_s``, the ``m_t`` truncation
directions are ``c_a`` identical copies of ``c_a^{-1/2}`` times row ``a`` of
``A^{-1/2} Psi^T``, and ``mu~_t(x) = psi(x)^T A^{-1/2} r'`` with
``r'_a = sum_tau w_{a,tau} y_tau 1{|w_{a,tau} y_tau| <= sqrt(c_a) b_t}``,
``w = A^{-1/2} Psi^T``. (Every direction of ``V~_t`` outside the span has eigenvalue
``lambda`` and is orthogonal to the data.) So the exact algorithm with its ``m_t``-dimensional
embedding runs in ``s <= n`` dimensions; ``m_t = sum c_a`` still enters the schedules.

**A new dictionary without an ``s x s`` eigendecomposition.** Every ``K_SS`` is a
principal submatrix of the one ``n x n`` matrix ``K = L L^T`` (:func:`kernel_factor`,
``L`` of rank ``r0``), so ``M = A A^T`` with ``A = C^{1/2} L_S`` (``s x r0``). With
``A^T A = Z diag(e) Z^T`` (``r0 x r0``), the nonzero eigenpairs of ``M`` are
``(e, A Z diag(e)^{-1/2})`` and ``psi(x) = (M^{1/2})^+ A l_x = U Z^T l_x`` (``l_x`` row
``x`` of ``L``): the embedding is ``Q = A Z diag(e)^{-1/2}`` with coordinates
``Fr = (L Z)^T`` (:func:`nystrom_factors_from_factor`), one ``r0 x r0`` eigendecomposition
for every dictionary of ``s > r0`` arms instead of an ``s x s`` one. Algorithm 3 redraws
the dictionary every round, and late in a run (every played arm with
``q sigma~^2 < 1``) it is a new one every round.

>>> import numpy as np
>>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
>>> Psi = nystrom_features(K[:1, :1], K[:1, :], np.array([1]))   # D = {x_1}
>>> Psi                                                          # k(x_1, x) / sqrt(k(x_1, x_1))
array([[1. , 0.5]])
>>> np.round(nystrom_features(K[:1, :1], K[:1, :], np.array([4])), 12)  # 4 copies: same kernel
array([[1. , 0.5]])
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dtrsm as _dtrsm
from scipy.linalg.lapack import dpotrf as _dpotrf
from scipy.linalg.lapack import dsyevd as _dsyevd

__all__ = [
    "eigh",
    "kernel_factor",
    "nystrom_factors",
    "nystrom_factors_from_factor",
    "nystrom_features",
    "pinv_sqrt_psd",
    "sample_copies_distinct",
    "sample_copies_per_arm",
    "sample_copies_per_observation",
]


def eigh(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(e, U)``: the eigenvalues (ascending) and eigenvectors of the symmetric ``M``.

    LAPACK ``dsyevd`` on the lower triangle, called through :mod:`scipy.linalg.lapack`:
    the routine and triangle :func:`numpy.linalg.eigh` uses (the same numbers), without
    its per-call wrapper cost, a sizeable share of the time for the ``r x r`` matrices
    (``r ~ 20``) that ATA-GP-UCB decomposes every round.
    Raises :class:`numpy.linalg.LinAlgError` when it does not converge (a NaN in ``M``).
    """
    M = np.asarray(M, dtype=float)
    if M.shape[0] == 0:
        return np.zeros(0), np.zeros((0, 0))
    e, U, info = _dsyevd(M, compute_v=1, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"eigenvalues did not converge (LAPACK dsyevd info={info})")
    return e, U


def _kept_eigh(M: np.ndarray, rtol: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of the symmetric PSD ``M`` above ``rtol * max eigenvalue`` (default
    ``rtol = size * machine epsilon``, the pseudo-inverse convention of ``numpy.linalg.pinv``
    and MATLAB's ``pinv``): ``(e, U)`` with ``e`` (r,) and ``U`` (s, r)."""
    e, U = eigh(M)
    if e.size == 0:
        return e, U
    tol = (M.shape[0] * np.finfo(float).eps if rtol is None else rtol) * max(e[-1], 0.0)
    keep = e > tol
    return e[keep], U[:, keep]


def pinv_sqrt_psd(M: np.ndarray, rtol: float | None = None) -> np.ndarray:
    """``(M^{1/2})^+`` of a symmetric PSD matrix by its eigendecomposition.

    Eigenvalues at or below ``rtol * max eigenvalue`` count as zero (default
    ``rtol = size * machine epsilon``, the pseudo-inverse convention of ``numpy.linalg.pinv``
    and MATLAB's ``pinv``).
    """
    e, U = _kept_eigh(M, rtol)
    return (U / np.sqrt(e)) @ U.T


def nystrom_factors(
    K_SS: np.ndarray, K_SX: np.ndarray, copies: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The reduced Nyström embedding as ``Psi = Q @ Fr``: ``Q`` (s, r) orthonormal, ``Fr`` (r, n).

    With ``M = C^{1/2} K_SS C^{1/2} = U diag(e) U^T`` and ``r`` the eigenvalues kept by
    :func:`pinv_sqrt_psd`, ``(M^{1/2})^+ = U_r diag(e_r^{-1/2}) U_r^T``, so
    ``Psi = U_r (diag(e_r^{-1/2}) U_r^T C^{1/2} K_SX)``: ``Q = U_r`` and ``Fr`` the
    coordinates of every ``psi(x)`` in that basis. Every ``psi(x)`` lies in ``span(Q)``,
    which lets ATA-GP-UCB work with ``r x r`` instead of ``s x s`` matrices (``r`` is the
    numerical rank of ``K_SS``, bounded on a fixed domain while ``s`` grows).
    """
    sq = np.sqrt(np.asarray(copies, dtype=float))
    e, Q = _kept_eigh(sq[:, None] * K_SS * sq[None, :], None)
    Fr = (Q.T @ (sq[:, None] * K_SX)) / np.sqrt(e)[:, None]
    return Q, Fr


def kernel_factor(K: np.ndarray, rtol: float | None = None) -> np.ndarray | None:
    """``L`` (n, r0) with ``L L^T = K``, from the eigenpairs of ``K`` above ``rtol * max``.

    ``K = V diag(w) V^T``, ``L = V_k diag(w_k^{1/2})`` over ``w_k > rtol * max(w)``. The
    default ``rtol`` = machine epsilon drops only what is at the level of the rounding of
    ``K``'s own eigendecomposition (``|K - L L^T| ~ 1e-14`` for SE kernels), so every
    dictionary kernel matrix is ``K_SS = L_S L_S^T`` to that accuracy, with ``r0`` (21 for
    the SE kernel ``l = 0.2`` on 100 arms of ``[0, 1]``) instead of ``s`` columns
    (:func:`nystrom_factors_from_factor`). One ``O(n^3)`` eigendecomposition.

    ``None`` when ``K`` is not PSD beyond rounding (an eigenvalue below
    ``-n * eps * max(w)``): then ``L L^T`` would differ from ``K`` on some ``K_SS``.
    """
    w, V = np.linalg.eigh(np.asarray(K, dtype=float))
    if w.size == 0:
        return np.zeros((K.shape[0], 0))
    top = max(w[-1], 0.0)
    if w[0] < -w.size * np.finfo(float).eps * top:
        return None
    tol = (np.finfo(float).eps if rtol is None else rtol) * top
    keep = w > tol
    return V[:, keep] * np.sqrt(w[keep])


def nystrom_factors_from_factor(
    L: np.ndarray, S: np.ndarray, copies: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`nystrom_factors` from a factor ``K = L L^T`` (``L`` (n, r0)) and the
    dictionary arms ``S`` (s,) with their ``copies`` (``None``: one copy each): one
    ``r0 x r0`` eigendecomposition instead of an ``s x s`` one.

    Returns ``(Q, Fr, W)``: ``Q`` (s, r) orthonormal and ``Fr = (L W)^T`` (r, n) as from
    :func:`nystrom_factors`, and ``W`` (r0, r), through which sums of outer products of
    the embedding come from those of ``L``'s rows (``Fr_P N Fr_P^T = W^T L_P^T N L_P W``).

    Alg. 3 (CG 2019 App. D.3) embeds with ``(K_D^{1/2})^+ k_D(x)``; reduced as in
    :func:`nystrom_factors`, ``psi(x) = (M^{1/2})^+ C^{1/2} k_S(x)`` with
    ``M = C^{1/2} K_SS C^{1/2} = A A^T``, ``A = C^{1/2} L_S`` and ``k_S(x) = L_S l_x``
    (``l_x`` row ``x`` of ``L``). With ``A^T A = Z diag(e) Z^T``, the nonzero eigenpairs of
    ``M`` are ``(e, A Z diag(e)^{-1/2})``, of which the same are kept as by
    :func:`pinv_sqrt_psd` of ``M`` (``e > s * eps * max e``), and
    ``psi(x) = A Z diag(e)^{-1} Z^T A^T A l_x = A Z diag(e)^{-1/2} Z^T l_x``.

    Orthonormal ``Q``: the columns of ``Y = A Z`` (largest ``e`` first) are orthogonal only
    up to the rounding of ``A^T A``, which is large next to the smallest kept ``e`` (down
    to ``s * eps`` of the largest; visibly off orthonormal on the 100-arm SE problem of
    CG §6, ``tests/test_ata_gp_ucb.py``). So ``Y = Q R`` by a Cholesky QR
    (``R^T R = Y^T Y``, which is ``diag(e)`` up to that rounding; Cholesky is accurate for
    such graded matrices, so ``Q`` is orthonormal to rounding), and
    ``Fr = R diag(e)^{-1/2} Z^T L^T``: ``Q Fr = Y diag(e)^{-1/2} Z^T L^T`` is the embedding
    above, and ATA-GP-UCB, which relies on ``Q^T Q = I``, runs the exact algorithm on it.
    Should the Cholesky factorisation fail (not seen), the thin SVD of ``A`` gives ``Q`` and
    ``Fr`` instead.

    Accuracy: on dictionaries whose kernel spectrum decays into the rounding level the
    embedding is ill-conditioned in its last kept directions; two exact methods, the
    ``s x s`` eigendecomposition of ``M`` (:func:`nystrom_factors`) and the thin SVD of
    ``A``, then differ far above machine precision, and this path lies as close to the
    former as the SVD does (``tests/test_ata_gp_ucb.py`` measures both on the 100-arm SE
    problem of CG §6).

    Cost ``O(s r0^2 + r0^3 + n r0 r)`` instead of ``O(s^3 + r s n)``: ``r0`` is the
    numerical rank of the whole kernel matrix (:func:`kernel_factor`), bounded on a fixed
    domain while the dictionary size ``s`` is not; at ``r0 ~ 20`` the ``r0 x r0``
    eigendecomposition is most of it.
    """
    A = L.take(S, axis=0)  # a copy: scaled in place when arms have several copies
    if copies is not None:
        A *= np.sqrt(np.asarray(copies, dtype=float))[:, None]
    e, Z = eigh(A.T @ A)  # ascending
    # Keep e > s * eps * max e, as _kept_eigh(M): a trailing slice of the ascending e,
    # taken largest first.
    k = int(e.searchsorted(S.size * np.finfo(float).eps * max(e[-1], 0.0), side="right"))
    Z, e = np.ascontiguousarray(Z[:, k:][:, ::-1]), e[k:][::-1]
    Y = A @ Z
    R, info = _dpotrf(Y.T @ Y, lower=0, clean=1)  # Y^T Y = R^T R, R upper triangular
    if info != 0:  # Y^T Y not numerically positive definite: the thin SVD of A instead
        U, sv, Zt = np.linalg.svd(A, full_matrices=False)
        keep = sv * sv > S.size * np.finfo(float).eps * sv[0] ** 2
        W = Zt[keep].T
        return U[:, keep], (L @ W).T, W
    Q = _dtrsm(1.0, R, Y, side=1, lower=0)  # Q = Y R^{-1}
    W = Z @ (R / np.sqrt(e)).T  # Fr = W^T L^T = R diag(e)^{-1/2} Z^T L^T
    return Q, (L @ W).T, W


def nystrom_features(K_SS: np.ndarray, K_SX: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """Reduced Nyström embedding ``psi(x) = (M^{1/2})^+ C^{1/2} k_S(x)`` of every point.

    Parameters
    ----------
    K_SS : (s, s) kernel matrix of the distinct dictionary points ``S``.
    K_SX : (s, n) kernel between ``S`` and the candidate points.
    copies : (s,) positive integers ``c_a`` (copies of each point in the dictionary).

    Returns ``Psi`` of shape ``(s, n)``; ``Psi^T Psi = K_XS K_SS^+ K_SX`` is the Nyström
    kernel, whatever the copies (see the module docstring for the exact reduction).
    """
    Q, Fr = nystrom_factors(K_SS, K_SX, copies)
    return Q @ Fr


def sample_copies_per_arm(
    rng: np.random.Generator, counts: np.ndarray, p: np.ndarray
) -> np.ndarray:
    """Algorithm 3 on a finite domain: ``c_a ~ Binomial(N_a, p_a)`` copies of each arm."""
    return rng.binomial(counts, p)


def sample_copies_per_observation(
    rng: np.random.Generator, arms: np.ndarray, p: np.ndarray, n: int
) -> np.ndarray:
    """Algorithm 3 as printed: one Bernoulli(``p[x_i]``) draw per past observation ``i``.

    O(t); the reference :func:`sample_copies_per_arm` is tested against.
    """
    arms = np.asarray(arms, dtype=np.int64)
    z = rng.random(arms.size) < p[arms]
    return np.bincount(arms[z], minlength=n)


def sample_copies_distinct(
    rng: np.random.Generator, counts: np.ndarray, p: np.ndarray
) -> np.ndarray:
    """The authors' public code: one Bernoulli(``p_a``) draw per distinct arm played."""
    played = np.flatnonzero(counts)
    out = np.zeros(counts.shape[0], dtype=np.int64)
    out[played] = rng.random(played.size) < p[played]
    return out
