"""The :class:`Objective` record: f on a finite candidate set with its exact constants."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from hbo_envs.kernels import Kernel, LazyKernelMatrix
from hbo_envs.validation import as_readonly, check_finite_constants

__all__ = ["Objective", "min_norm_interpolant_norm", "objective_from_values"]


@dataclass(frozen=True, eq=False)
class Objective:
    """A mean-reward function ``f`` tabulated on the candidate set.

    Attributes
    ----------
    name : str
    points : ndarray (n, d)
    values : ndarray (n,) — ``f(points[i])``.
    kernel : Kernel
    kernel_matrix : ndarray (n, n), or a :class:`~hbo_envs.kernels.LazyKernelMatrix` for
        large candidate sets (kernel sums beyond :data:`hbo_envs.problem.DENSE_MAX_N`)
    B : float — RKHS norm (exact ``sqrt(a^T K a)`` for kernel sums, else the minimum-norm
        interpolant's norm ``sqrt(f^T K^{-1} f)``).
    kernel_jitter : float — jitter added to ``K`` to compute ``B`` (0 when none was needed).
    params : dict — how the objective was generated (for metadata).
    """

    name: str
    points: np.ndarray
    values: np.ndarray
    kernel: Kernel
    kernel_matrix: np.ndarray | LazyKernelMatrix
    B: float
    kernel_jitter: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim == 1:
            pts = pts[:, None]
        lazy = isinstance(self.kernel_matrix, LazyKernelMatrix)
        arrays = [("points", pts), ("values", self.values)]
        if not lazy:
            arrays.append(("kernel_matrix", self.kernel_matrix))
        for attr, arr in arrays:
            object.__setattr__(self, attr, as_readonly(arr))
        n = self.points.shape[0]
        if self.values.shape != (n,):
            raise ValueError(f"values must have shape ({n},); got {self.values.shape}.")
        if not np.all(np.isfinite(self.values)):
            raise ValueError("objective values must be finite.")
        K = self.kernel_matrix
        check_finite_constants(
            f"Objective {self.name!r}",
            # A lazy matrix: its diagonal stands for the entries (same formula, computed
            # on demand; Problem checks a row too).
            {"kernel_matrix": K.diag() if lazy else K, "B": self.B},
            "a NaN or overflow means a kernel or objective parameter is out of range",
        )

    @property
    def n(self) -> int:
        return int(self.points.shape[0])

    @property
    def argmax(self) -> int:
        """Index of a maximiser ``x*`` (the first one if there are ties)."""
        return int(np.argmax(self.values))

    @property
    def f_star(self) -> float:
        """``f* = max_x f(x)`` over the candidate set."""
        return float(self.values[self.argmax])

    @property
    def sup_f(self) -> float:
        """``max_x |f(x)|`` over the candidate set."""
        return float(np.max(np.abs(self.values)))


def min_norm_interpolant_norm(
    K: np.ndarray, f: np.ndarray, max_jitter: float = 1e-6
) -> tuple[float, float]:
    """Smallest RKHS norm of a function equal to ``f`` on the points: ``sqrt(f^T K^{-1} f)``.

    Solved by Cholesky. When ``K`` is numerically singular (smooth kernels on dense grids)
    the smallest jitter ``j`` in ``0, 1e-12, 1e-11, ...`` that makes ``K + j I`` factorable
    is added and returned, so the caller can report it; the norm is then that of the
    regularised interpolant ``sqrt(f^T (K + j I)^{-1} f)``, a lower bound of the exact one.

    Returns ``(norm, jitter)``.
    """
    n = K.shape[0]
    jitters = [0.0] + [10.0**e for e in range(-12, int(np.log10(max_jitter)) + 1)]
    for j in jitters:
        try:
            L = np.linalg.cholesky(K + j * np.eye(n) if j else K)
        except np.linalg.LinAlgError:
            continue
        if not np.all(np.isfinite(L)) or np.min(np.diag(L)) <= 0:
            continue
        z = sla.solve_triangular(L, f, lower=True)
        return float(np.sqrt(z @ z)), j
    raise ValueError(
        f"kernel matrix is too ill-conditioned to compute the RKHS norm with jitter up to "
        f"{max_jitter}; choose a shorter lengthscale or fewer points."
    )


def objective_from_values(
    name: str,
    points: np.ndarray,
    values: np.ndarray,
    kernel: Kernel,
    kernel_matrix: np.ndarray | None = None,
    params: dict[str, Any] | None = None,
) -> Objective:
    """An :class:`Objective` for an ``f`` that is not a kernel sum (Griewank, data).

    ``B`` is the minimum-norm interpolant's RKHS norm, see :func:`min_norm_interpolant_norm`.
    """
    points = np.asarray(points, dtype=float)
    if points.ndim == 1:
        points = points[:, None]
    K = kernel(points) if kernel_matrix is None else np.asarray(kernel_matrix, dtype=float)
    values = np.asarray(values, dtype=float)
    B, jitter = min_norm_interpolant_norm(K, values)
    return Objective(name, points, values, kernel, K, B, jitter, dict(params or {}))
