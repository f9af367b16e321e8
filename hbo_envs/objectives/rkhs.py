"""Kernel-sum objectives ``f = sum_i a_i k(., x_i)`` with exact RKHS norm.

Random generators of the papers' synthetic objectives:

- :func:`chowdhury_gopalan_synthetic` — Chowdhury–Gopalan (2019) §6 "Synthetic data":
  100 evenly spaced points on [0, 1]; ``p = 100`` support points drawn uniformly from the
  candidate set; ``a_i ~ U[-1, 1]`` (``U[0, 1]`` for the Pareto experiment); SE ``l = 0.2``
  or Matérn ``nu = 2.5, l = 0.2``; then scaled so ``max |f| = 1``, as the authors' public
  code does (the RKHS norm scales by the same factor).
- :func:`park_lee_rkhs1d` — Park–Lee (2024) §5: 1000 evenly spaced points on [-10, 10],
  ``f = sum_{i=1}^{10} a_i k(., c_i)``, ``a_i ~ 10(-1 + 2 N(0, 1))``, ``c_i ~ N(0, 3)``
  (variance 3), SE kernel (lengthscale 1 by default; the paper does not state it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.kernels import Kernel, LazyKernelMatrix, Matern, SquaredExponential, make_kernel
from hbo_envs.memory import check_memory
from hbo_envs.objectives.base import Objective
from hbo_envs.objectives.griewank import MAX_POINTS
from hbo_envs.problem import DENSE_MAX_N
from hbo_envs.validation import (
    MAX_LENGTHSCALE,
    MIN_LENGTHSCALE,
    check_bool,
    check_choice,
    check_int,
    check_real,
    param_error,
)

MAX_RKHS_POINTS = 10_000_000
"""Largest candidate set of a kernel-sum objective. Beyond :data:`DENSE_MAX_N` points the
kernel matrix is lazy (never ``n x n``), so the cost is ``O(n (d + p))`` for ``p`` support
points; the memory this needs is also checked before allocating."""

__all__ = [
    "MAX_RKHS_POINTS",
    "RKHSFunction",
    "chowdhury_gopalan_synthetic",
    "park_lee_rkhs1d",
    "random_rkhs",
    "rkhs_objective",
]


@dataclass(frozen=True, eq=False)
class RKHSFunction:
    """``f(x) = sum_i coeffs[i] * k(x, centers[i])``.

    >>> import numpy as np
    >>> from hbo_envs.kernels import SquaredExponential
    >>> f = RKHSFunction(SquaredExponential(1.0), np.array([[0.0]]), np.array([2.0]))
    >>> float(f(np.array([[0.0]]))[0]), f.rkhs_norm()
    (2.0, 2.0)
    """

    kernel: Kernel
    centers: np.ndarray
    coeffs: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.kernel(X, self.centers) @ self.coeffs

    def rkhs_norm(self) -> float:
        """Exact ``||f||_H = sqrt(a^T K_c a)`` with ``K_c = k(centers, centers)``."""
        q = float(self.coeffs @ self.kernel(self.centers) @ self.coeffs)
        return float(np.sqrt(max(q, 0.0)))

    def scaled(self, c: float) -> RKHSFunction:
        """``c * f`` (its RKHS norm is ``|c| ||f||``)."""
        return RKHSFunction(self.kernel, self.centers, self.coeffs * c)


def rkhs_objective(
    name: str,
    points: np.ndarray,
    fn: RKHSFunction,
    params: dict[str, Any] | None = None,
    values: np.ndarray | None = None,
) -> Objective:
    """Tabulate a kernel sum on ``points`` with its exact RKHS norm.

    ``B = sqrt(a^T K_c a)`` needs only the ``p x p`` kernel of the support points, so the
    ``n x n`` kernel matrix over the candidates is built (as before) only up to
    :data:`~hbo_envs.problem.DENSE_MAX_N` points; beyond, it is a
    :class:`~hbo_envs.kernels.LazyKernelMatrix` and the cost is ``O(n p)``. ``values``, when
    given, is ``fn(points)`` already computed (by the caller, from the same kernel block).
    """
    points = np.asarray(points, dtype=float)
    if points.ndim == 1:
        points = points[:, None]
    n = points.shape[0]
    K: np.ndarray | LazyKernelMatrix
    if n > DENSE_MAX_N and fn.kernel.analytic:
        K = LazyKernelMatrix(fn.kernel, points)
    else:
        K = fn.kernel(points)
    p = dict(params or {})
    p.update(centers=fn.centers.tolist(), coeffs=fn.coeffs.tolist())
    f = fn(points) if values is None else values
    return Objective(name, points, f, fn.kernel, K, fn.rkhs_norm(), 0.0, p)


def random_rkhs(
    rng: np.random.Generator,
    kernel: Kernel | str | dict[str, Any] = "se",
    n_points: int = 100,
    dim: int = 1,
    n_support: int = 100,
    coeffs: str = "symmetric",
    normalize: bool = True,
    name: str = "random-rkhs",
) -> Objective:
    """A random kernel sum ``f = sum_{i<=p} a_i k(., x_i)`` on a candidate set.

    Candidates: ``n_points`` evenly spaced points of [0, 1] when ``dim == 1``, otherwise
    ``n_points`` uniform draws from ``[0, 1]^dim``. Support points ``x_i`` are drawn
    uniformly (with replacement) from the candidates; ``a_i ~ U[-1, 1]``
    (``coeffs="symmetric"``) or ``U[0, 1]`` (``"positive"``, which makes ``f > 0`` for
    kernels with positive values). With ``normalize`` the function is scaled so that
    ``max |f| = 1`` on the candidates; its exact RKHS norm scales with it.
    """
    owner = "random_rkhs"
    k = make_kernel(kernel)
    check_choice(owner, "coeffs", coeffs, ("symmetric", "positive"))
    n_points = check_int(owner, "n_points", n_points, 2, MAX_RKHS_POINTS)
    dim = check_int(owner, "dim", dim, 1, 1000)
    n_support = check_int(owner, "n_support", n_support, 1, MAX_POINTS)
    # The largest arrays: the (n, d) points, the (n, p) kernel block f is evaluated
    # from (and its distances), and the (n, n) kernel matrix when it is stored densely.
    dense = n_points <= DENSE_MAX_N
    check_memory(
        owner,
        "n_points",
        n_points,
        8.0 * n_points * (dim + 2 * n_support + (n_points if dense else 0)),
        "Use fewer points or support points.",
    )
    normalize = check_bool(owner, "normalize", normalize)
    if not isinstance(name, str):
        raise param_error(owner, "name", "a string", name)
    if dim == 1:
        points = np.linspace(0.0, 1.0, n_points)[:, None]
    else:
        points = rng.uniform(0.0, 1.0, size=(n_points, dim))
    lo = -1.0 if coeffs == "symmetric" else 0.0
    a = rng.uniform(lo, 1.0, size=n_support)
    centers = points[rng.integers(0, n_points, size=n_support)]
    fn = RKHSFunction(k, centers, a)
    # f(x) = k(x, centers) @ coeffs: the (n, p) kernel block is computed once and serves
    # the normalisation and the tabulation (the same numbers as fn(points), twice cheaper).
    kx = k(points, centers)
    if normalize:
        sup = float(np.max(np.abs(kx @ fn.coeffs)))
        if sup == 0.0:  # probability zero, but never divide by it
            raise ValueError(
                "generated objective is identically zero; draw again with another seed."
            )
        fn = fn.scaled(1.0 / sup)
    params = {"kernel": k.name, **k.params(), "coeffs": coeffs, "normalize": normalize}
    return rkhs_objective(name, points, fn, params, values=kx @ fn.coeffs)


def chowdhury_gopalan_synthetic(
    rng: np.random.Generator,
    kernel: str = "se",
    coeffs: str = "symmetric",
    n_points: int = 100,
    n_support: int = 100,
    lengthscale: float = 0.2,
    matern_nu: float = 2.5,
) -> Objective:
    """Chowdhury–Gopalan (2019) §6 synthetic objective, normalised to ``max |f| = 1``.

    ``kernel`` is ``"se"`` (Fig. 1a, 1b) or ``"matern"`` (``nu = 2.5``, Fig. 1c), both with
    ``l = 0.2``. ``coeffs="symmetric"`` draws ``a_i ~ U[-1, 1]`` (Fig. 1a, 1c);
    ``"positive"`` draws ``a_i ~ U[0, 1]`` (Fig. 1b: the multiplicative Pareto channel
    needs ``f > 0``).
    """
    owner = "chowdhury_gopalan_synthetic"
    check_choice(owner, "kernel", kernel, ("se", "matern"))
    k: Kernel = (
        SquaredExponential(lengthscale) if kernel == "se" else Matern(lengthscale, matern_nu)
    )
    return random_rkhs(
        rng,
        k,
        n_points=n_points,
        dim=1,
        n_support=n_support,
        coeffs=coeffs,
        normalize=True,
        name=f"chowdhury-gopalan-{kernel}-{coeffs}",
    )


def park_lee_rkhs1d(
    rng: np.random.Generator,
    n_points: int = 1000,
    n_centers: int = 10,
    lengthscale: float = 1.0,
) -> Objective:
    """Park–Lee (2024) §5 1D RKHS objective on 1000 evenly spaced points of [-10, 10].

    ``a_i ~ 10 (-1 + 2 N(0, 1))`` and ``c_i ~ N(0, 3)`` as printed; no normalisation.
    """
    owner = "park_lee_rkhs1d"
    n_points = check_int(owner, "n_points", n_points, 2, MAX_RKHS_POINTS)
    n_centers = check_int(owner, "n_centers", n_centers, 1, MAX_POINTS)
    lengthscale = check_real(
        owner, "lengthscale", lengthscale, MIN_LENGTHSCALE, MAX_LENGTHSCALE, "both"
    )
    points = np.linspace(-10.0, 10.0, n_points)[:, None]
    a = 10.0 * (-1.0 + 2.0 * rng.standard_normal(n_centers))
    c = rng.normal(0.0, np.sqrt(3.0), size=(n_centers, 1))
    fn = RKHSFunction(SquaredExponential(lengthscale), c, a)
    return rkhs_objective("park-lee-rkhs1d", points, fn, {"lengthscale": lengthscale})
