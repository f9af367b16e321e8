"""Stationary kernels used by the environments and the agents.

Every kernel here satisfies ``k(x, x) = 1`` (the papers' normalisation ``k(x, x) <= 1``,
Chowdhury–Gopalan Thm. 1 and Park–Lee Assumption 1), is vectorised over point sets and
is a frozen dataclass, so it is hashable, comparable and safe to share between an env's
:class:`~hbo_envs.problem.Problem` and any number of agents.

- :class:`SquaredExponential` — ``k(x, x') = exp(-||x - x'||^2 / (2 l^2))``
  (Park–Lee eq. (1)).
- :class:`Matern` — ``k(x, x') = 2^{1-nu}/Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l)``
  (Park–Lee eq. (2); their ``J_omega`` is the *modified* Bessel function of the second
  kind, ``K_nu``). Closed forms for ``nu`` in {1/2, 3/2, 5/2}, scipy's ``kv`` otherwise.
- :class:`EmpiricalKernel` — a positive semi-definite matrix over a finite candidate set
  with no analytic form (data-derived kernels of the real-data environments).

>>> import numpy as np
>>> k = SquaredExponential(lengthscale=0.2)
>>> X = np.linspace(0, 1, 3)[:, None]
>>> np.round(k(X, X), 4)
array([[1.    , 0.0439, 0.    ],
       [0.0439, 1.    , 0.0439],
       [0.    , 0.0439, 1.    ]])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special
from scipy.spatial.distance import cdist

from hbo_envs.validation import MAX_LENGTHSCALE, MIN_LENGTHSCALE, check_real

__all__ = [
    "Kernel",
    "SquaredExponential",
    "Matern",
    "MAX_MATERN_NU",
    "EmpiricalKernel",
    "LazyKernelMatrix",
    "make_kernel",
    "sqdist",
]


def _as_points(X: Any, name: str) -> np.ndarray:
    A = np.asarray(X, dtype=float)
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2:
        raise ValueError(f"{name} must be an array of shape (n, d); got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite coordinates.")
    return A


def sqdist(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pairwise squared Euclidean distances ``||x_i - y_j||^2``, shape ``(len(X), len(Y))``."""
    X = _as_points(X, "X")
    Y = _as_points(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must have the same dimension; got {X.shape[1]} and {Y.shape[1]}."
        )
    # Differences, not the ||x||^2 + ||y||^2 - 2 x.y expansion: the expansion leaves ~1e-15
    # on the diagonal, which a Matérn-1/2 kernel turns into k(x, x) = 1 - 1e-7.
    return cdist(X, Y, "sqeuclidean")


class Kernel:
    """Base class: ``k(X, Y)`` returns the ``(len(X), len(Y))`` Gram matrix."""

    name: str = "kernel"
    analytic: bool = True

    def __call__(self, X: Any, Y: Any | None = None) -> np.ndarray:
        X = _as_points(X, "X")
        Y = X if Y is None else _as_points(Y, "Y")
        return self._from_sqdist(sqdist(X, Y))

    def _from_sqdist(self, d2: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """``k`` from the squared distances ``d2``, a fresh array it may overwrite (only
        :meth:`__call__` calls it): in-place arithmetic spares the temporaries, whose first
        touch dominates at large ``n`` (0.83 s of 0.9 s for a 5000 x 5000 SE matrix)."""
        raise NotImplementedError

    def diag(self, X: Any) -> np.ndarray:
        """``k(x, x)`` for every row of ``X`` (all ones for these stationary kernels)."""
        return np.ones(_as_points(X, "X").shape[0])

    def params(self) -> dict[str, float]:
        """Hyperparameters as a plain dict (for metadata and the Problem record)."""
        return {}

    def log_spectral_density(self, omega: Any, dim: int = 1) -> np.ndarray:
        """``ln k̂(ω)``, the log of the kernel's Fourier transform (stationary kernels).

        Convention: ``k̂(ω) = ∫ k(r) e^{-i ω·r} dr``, ``k(r) = (2π)^{-d} ∫ k̂(ω) e^{i ω·r} dω``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no analytic spectral density.")


@dataclass(frozen=True)
class SquaredExponential(Kernel):
    """Squared-exponential kernel ``exp(-||x - x'||^2 / (2 l^2))``."""

    lengthscale: float = 1.0
    name = "se"

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "lengthscale",
            check_real(
                "SquaredExponential",
                "lengthscale",
                self.lengthscale,
                MIN_LENGTHSCALE,
                MAX_LENGTHSCALE,
                "both",
            ),
        )

    def _from_sqdist(self, d2: np.ndarray) -> np.ndarray:
        # exp(-0.5 d2 / l^2), in place: the same operations in the same order, bit for bit
        d2 *= -0.5
        d2 /= self.lengthscale**2
        return np.exp(d2, out=d2)

    def log_spectral_density(self, omega: Any, dim: int = 1) -> np.ndarray:
        """``ln k̂(ω)`` at angular frequencies of norm ``omega`` in ``dim`` dimensions.

        ``k̂(ω) = ∫ k(r) e^{-i ω·r} dr = (2π l²)^{d/2} exp(-l² ||ω||² / 2)`` (Rasmussen &
        Williams eq. (4.21) at ``ω = 2π s``), so ``k(0) = (2π)^{-d} ∫ k̂ = 1``.
        """
        w = np.asarray(omega, dtype=float)
        l2 = self.lengthscale**2
        return 0.5 * dim * np.log(2.0 * np.pi * l2) - 0.5 * l2 * w * w

    def params(self) -> dict[str, float]:
        return {"lengthscale": self.lengthscale}


MAX_MATERN_NU = 1000.0
"""Largest Matérn smoothness accepted: beyond ~1e3 it is the SE kernel for every purpose."""


@dataclass(frozen=True)
class Matern(Kernel):
    """Matérn kernel with smoothness ``nu`` and lengthscale ``l`` (Park–Lee eq. (2))."""

    lengthscale: float = 1.0
    nu: float = 2.5
    name = "matern"

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "lengthscale",
            check_real(
                "Matern", "lengthscale", self.lengthscale, MIN_LENGTHSCALE, MAX_LENGTHSCALE, "both"
            ),
        )
        # nu beyond ~1e3 is the SE kernel for every purpose, and K_nu's log-space formula
        # loses all precision there.
        object.__setattr__(
            self, "nu", check_real("Matern", "nu", self.nu, 0, MAX_MATERN_NU, "right")
        )

    def _from_sqdist(self, d2: np.ndarray) -> np.ndarray:
        # r = sqrt(d2) / l, then the closed forms of nu = 1/2, 3/2, 5/2 in place
        # (``exp(-r)``, ``(1 + s) exp(-s)``, ``(1 + s + s^2/3) exp(-s)``): the same
        # operations in the same order as the textbook expressions, bit for bit.
        r = np.sqrt(d2, out=d2)
        r /= self.lengthscale
        nu = self.nu
        if nu == 0.5:
            np.negative(r, out=r)
            return np.exp(r, out=r)
        if nu in (1.5, 2.5):
            s = r
            s *= np.sqrt(3.0 if nu == 1.5 else 5.0)
            e = np.negative(s)
            np.exp(e, out=e)
            if nu == 2.5:
                q = s * s
                q /= 3.0
                s += 1.0
                s += q
            else:
                s += 1.0
            s *= e
            return s
        s = np.sqrt(2.0 * nu) * r
        out = np.ones_like(s)
        pos = s > 0
        sp = s[pos]
        # 2^{1-nu}/Gamma(nu) s^nu K_nu(s), evaluated in log space for large nu.
        with np.errstate(over="ignore", under="ignore"):
            logc = (1.0 - nu) * np.log(2.0) - special.gammaln(nu)
            kv = special.kve(nu, sp)  # kve = kv * exp(s)
            out[pos] = np.exp(logc + nu * np.log(sp) - sp) * kv
        out[~np.isfinite(out)] = 0.0
        return np.clip(out, 0.0, 1.0)

    def log_spectral_density(self, omega: Any, dim: int = 1) -> np.ndarray:
        """``ln k̂(ω)`` at angular frequencies of norm ``omega`` in ``dim`` dimensions.

        ``k̂(ω) = 2^d π^{d/2} Γ(ν + d/2) (2ν)^ν / (Γ(ν) l^{2ν}) (2ν/l² + ||ω||²)^{-(ν + d/2)}``
        (Rasmussen & Williams eq. (4.15) at ``ω = 2π s``), so ``k(0) = (2π)^{-d} ∫ k̂ = 1``.
        """
        w = np.asarray(omega, dtype=float)
        nu, ell, d = self.nu, self.lengthscale, dim
        logc = (
            d * np.log(2.0)
            + 0.5 * d * np.log(np.pi)
            + special.gammaln(nu + 0.5 * d)
            + nu * np.log(2.0 * nu)
            - special.gammaln(nu)
            - 2.0 * nu * np.log(ell)
        )
        return logc - (nu + 0.5 * d) * np.log(2.0 * nu / ell**2 + w * w)

    def params(self) -> dict[str, float]:
        return {"lengthscale": self.lengthscale, "nu": self.nu}


class EmpiricalKernel(Kernel):
    """A kernel known only as a PSD matrix over the candidate set (real-data envs).

    Calling it with index arrays is not supported; use ``Problem.kernel_matrix``.
    Agents that need an analytic kernel (ATA-GP-UCB with QFF) refuse this one.
    """

    name = "empirical"
    analytic = False

    def __init__(self, description: str = "empirical covariance") -> None:
        self.description = description

    def __call__(self, X: Any, Y: Any | None = None) -> np.ndarray:
        raise TypeError(
            "EmpiricalKernel has no analytic form; use problem.kernel_matrix over the "
            "candidate set instead."
        )

    def __repr__(self) -> str:
        return f"EmpiricalKernel({self.description!r})"

    def params(self) -> dict[str, Any]:
        return {"description": self.description}


class LazyKernelMatrix:
    """The ``n x n`` kernel matrix of an analytic kernel over ``points``, never stored.

    Large candidate sets (``n`` beyond :data:`hbo_envs.problem.DENSE_MAX_N`) keep their
    kernel matrix in this form: blocks and columns are computed on demand from the kernel
    and the points, in ``O(len(rows) len(cols) d)`` time and ``O(len(rows) len(cols))``
    memory. ``np.asarray(lazy)`` builds the full matrix only if it fits
    (:func:`hbo_envs.memory.check_memory`); otherwise it is refused with the estimated size.

    >>> import numpy as np
    >>> X = np.linspace(0, 1, 4)[:, None]
    >>> Klazy = LazyKernelMatrix(SquaredExponential(0.5), X)
    >>> K = SquaredExponential(0.5)(X)
    >>> bool(np.array_equal(Klazy.block([0, 2], [1, 3]), K[[0, 2]][:, [1, 3]]))
    True
    >>> Klazy.shape, Klazy.diag()
    ((4, 4), array([1., 1., 1., 1.]))
    """

    ndim = 2
    dtype = np.dtype(float)

    def __init__(self, kernel: Kernel, points: Any) -> None:
        if not isinstance(kernel, Kernel) or not kernel.analytic:
            raise ValueError(
                f"LazyKernelMatrix needs an analytic kernel to compute blocks on demand; "
                f"got {kernel!r}. Pass the dense kernel matrix instead."
            )
        pts = _as_points(points, "points")
        pts.setflags(write=False)
        self.kernel = kernel
        self.points = pts

    @property
    def shape(self) -> tuple[int, int]:
        n = int(self.points.shape[0])
        return (n, n)

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def block(self, rows: Any, cols: Any) -> np.ndarray:
        """``K[rows][:, cols] = k(points[rows], points[cols])`` (index arrays or slices)."""
        return self.kernel(self.points[rows], self.points[cols])

    def columns(self, idx: Any) -> np.ndarray:
        """``K[:, idx]``, shape ``(n, len(idx))``."""
        return self.kernel(self.points, self.points[idx])

    def diag(self) -> np.ndarray:
        """``k(x_i, x_i)`` for every point, shape ``(n,)``."""
        return self.kernel.diag(self.points)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        from hbo_envs.memory import check_memory

        n = len(self)
        check_memory(
            "LazyKernelMatrix",
            "n",
            n,
            8.0 * n * n,
            "Use problem.kernel_block(rows, cols) / kernel_columns(idx) / kernel_diag() "
            "instead of the dense matrix.",
        )
        K = self.kernel(self.points)
        return K if dtype is None else K.astype(dtype, copy=False)

    def __repr__(self) -> str:
        n = len(self)
        return f"LazyKernelMatrix({self.kernel!r}, n={n})"


def make_kernel(spec: Kernel | str | dict[str, Any]) -> Kernel:
    """Build a kernel from an instance, a name (``"se"``, ``"matern"``) or a dict.

    >>> make_kernel({"name": "matern", "lengthscale": 0.2, "nu": 2.5})
    Matern(lengthscale=0.2, nu=2.5)
    """
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(
            f"The 'kernel' parameter must be a Kernel, 'se', 'matern' or a dict with a "
            f"'name' key. Got {spec!r} instead."
        )
    params = {k: v for k, v in spec.items() if k != "name"}
    name = spec["name"]
    if name in ("se", "rbf", "squared_exponential"):
        return SquaredExponential(**params)
    if name == "matern":
        return Matern(**params)
    raise ValueError(
        f"The 'kernel' parameter must name one of 'se', 'matern'. Got {name!r} instead."
    )
