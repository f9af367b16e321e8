"""The hard function family of the regret lower bound (Chowdhury–Gopalan 2019, Thm. 2).

Appendix C.1 of Chowdhury & Gopalan (NeurIPS 2019), following Scarlett, Bogunovic & Cevher
(COLT 2017), builds the "difficult" functions of the lower bound from one bump:

- ``H(ω) = exp(-1 / (1 - ||ω||²)) 1{||ω|| < 1}`` (the multi-dimensional bump function) and
  ``h`` its inverse Fourier transform, ``h(x) = (2π)^{-d} ∫ H(ω) e^{i ω·x} dω``, computed by
  quadrature: a cosine transform in 1-D, the Hankel transform of the radial ``H`` for
  ``d > 1`` (:func:`bump_h`). ``h`` is radial, real, maximal at 0 (``H >= 0``), and
  ``h(x) < h(0)/2`` for ``||x|| > ζ`` with ``ζ`` computed (:func:`bump_zeta`).
- ``g(x) = (2Δ / h(0)) h(2ζ x / w)``: maximum ``2Δ`` at 0 and ``g(x) < Δ`` when
  ``||x||_∞ > w / 2``.
- ``f_j = g(· - c_j)`` for the ``M = m^d`` centres ``c_j`` of the grid of cubes of side
  ``w = 1/m`` tiling ``[0, 1]^d``, restricted to ``[0, 1]^d``. Each ``f_j`` has its unique
  maximum ``2Δ`` at ``c_j`` and its Δ-optimal set (``f_j >= Δ``) inside cube ``j``, so no
  point is Δ-optimal for two functions of the family.

**Departure from the paper's printed scaling (stated).** The paper writes
``g(x) = (2Δ/h(0)) h(xζ/w)``, whose Δ-optimal sets are cubes of half-width ``w``; on a grid
of step ``w`` (``M = ⌊(1/w)^d⌋``) neighbouring cubes then overlap, and the property the
proof needs (Δ-optimal points of ``f_j`` are not Δ-optimal for ``f_{j'}``, the partition
``R_j`` of App. C.3) fails. Scaling by ``2ζ/w`` makes the Δ-optimal sets lie inside the
grid cells, which is what the proof uses; the RKHS norm is computed for the ``g`` actually
used, so the norm constraint ``||f_j||_H <= B`` holds exactly as stated.

**RKHS norm.** For a stationary kernel with spectral density ``k̂`` (the kernel's
:meth:`~hbo_envs.kernels.Kernel.log_spectral_density`),
``||g||²_{H(R^d)} = (2π)^{-d} ∫ |ĝ(ω)|² / k̂(ω) dω`` (:func:`rkhs_norm_radial`), computed
by quadrature in log space (the integrand of a narrow bump under the SE kernel reaches
``e^{100}``), not from the asymptotic formula of Scarlett et al.; restriction to
``[0, 1]^d`` does not increase the norm, so ``||f_j||_H <= ||g||_{H(R^d)}``.

**Choice of Δ and w** (:func:`lower_bound_family`). With ``p = α/(1+α)``:

- ``Δ_rate(M) = ½ (M/T)^p v^{1/(1+α)}`` — eq. (21) with the unknown absolute constant
  ``4C²`` set to 1;
- ``Δ_max = ½ (½)^p v^{1/(1+α)}`` — the condition of eq. (17) (it also makes the two-point
  reward distribution valid, ``Δ <= ½ v^{1/(1+α)}``);
- ``Δ_B(m) = B h(0) / (2 N(1/m))``, ``N(w) = ||h(2ζ·/w)||_H`` — the largest Δ with
  ``||g||_H <= B`` on cells of side ``1/m``.

``m`` is the largest integer with ``min(Δ_rate(m^d), Δ_max) <= Δ_B(m)`` (the theorem's
balance: the finest grid the norm budget allows at the theorem's Δ), capped so that the
candidate set has at most ``max_points`` points; then ``Δ = min(Δ_rate(M), Δ_max)``. When
even ``m = 2`` is infeasible the construction does not exist for these constants (the
theorem needs ``Δ/B`` small) and a clear error says which way to move ``B``, ``T`` or ``v``.

**Candidate set.** ``points_per_cell`` (odd) points per axis in every cell, symmetric
about its centre, so every centre is a candidate and ``f* = 2Δ`` on the candidate set.

>>> from hbo_envs.kernels import SquaredExponential
>>> fam = lower_bound_family(SquaredExponential(0.1), horizon=1000, alpha=1.0, v=1.0, B=1.0)
>>> fam.M, fam.n, round(fam.delta, 4), fam.rkhs_norm <= 1.0
(10, 50, 0.05, True)
>>> obj = fam.objective(3)
>>> bool(obj.argmax == fam.centre_index[3]), round(obj.f_star / fam.delta, 12)
(True, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from hbo_envs.kernels import Kernel, Matern, SquaredExponential, sqdist
from hbo_envs.objectives.base import Objective
from hbo_envs.validation import MAX_HORIZON, as_readonly, check_int, check_real, param_error

__all__ = [
    "LowerBoundFamily",
    "bump_h",
    "bump_spectrum",
    "bump_zeta",
    "lower_bound_exponent",
    "lower_bound_family",
    "regret_rate",
    "rkhs_norm_radial",
]

MAX_DIM = 3
MAX_POINTS = 5000  # the kernel matrix over the candidates is MAX_POINTS² floats (200 MB)


# -- the bump and its inverse Fourier transform --------------------------------------------------
def bump_spectrum(rho: Any) -> np.ndarray:
    """``H(ω) = exp(-1/(1 - ||ω||²))`` for ``||ω|| < 1``, else 0 (App. C.1), at ``||ω|| = rho``."""
    r = np.abs(np.asarray(rho, dtype=float))
    out = np.zeros_like(r)
    inside = r < 1.0
    out[inside] = np.exp(-1.0 / (1.0 - r[inside] ** 2))
    return out


def _sphere_area(dim: int) -> float:
    """``S_{d-1} = 2 π^{d/2} / Γ(d/2)``, the area of the unit sphere in ``R^d``."""
    return 2.0 * math.pi ** (dim / 2) / math.gamma(dim / 2)


@lru_cache(maxsize=64)
def _gauss_legendre(panels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Composite 32-point Gauss–Legendre on ``panels`` equal panels of [0, 1]: nodes ``ρ``,
    weights, and ``H(ρ)``."""
    x, w = special.roots_legendre(32)
    edges = np.linspace(0.0, 1.0, panels + 1)
    half = 0.5 * np.diff(edges)[:, None]
    rho = (edges[:-1, None] + half * (x[None, :] + 1.0)).ravel()
    return rho, (half * w[None, :]).ravel(), bump_spectrum(rho)


def bump_h(r: Any, dim: int = 1) -> np.ndarray:
    """``h`` (the inverse Fourier transform of the bump) at radii ``r = ||x||``.

    ``h(r) = (2π)^{-d} ∫ H(ω) e^{i ω·x} dω`` reduces to a one-dimensional integral over
    ``ρ = ||ω|| ∈ [0, 1]``:

    - ``d = 1`` (cosine transform): ``h(r) = (1/π) ∫_0^1 H(ρ) cos(ρ r) dρ``;
    - ``d > 1`` (Hankel transform of the radial ``H``):
      ``h(r) = (2π)^{-d/2} r^{1-d/2} ∫_0^1 H(ρ) J_{d/2-1}(ρ r) ρ^{d/2} dρ``, i.e.
      ``(2π)^{-1} ∫ H(ρ) J_0(ρ r) ρ dρ`` for ``d = 2`` and
      ``(2π² r)^{-1} ∫ H(ρ) ρ sin(ρ r) dρ`` for ``d = 3``;
    - ``h(0) = (2π)^{-d} S_{d-1} ∫_0^1 H(ρ) ρ^{d-1} dρ``.

    The integrals use composite 32-point Gauss–Legendre with at least 16 panels and at
    most a third of a period of the oscillating factor per panel; ``H`` is smooth (all its
    derivatives vanish at 1), and the result agrees with adaptive QUADPACK quadrature to
    ``1e-12 h(0)`` (tested).

    >>> float(bump_h(0.0)) > float(np.max(np.abs(bump_h(np.linspace(0.1, 30, 300)))))
    True
    """
    dim = check_int("bump_h", "dim", dim, 1, MAX_DIM)
    rr = np.abs(np.asarray(r, dtype=float))
    flat = rr.ravel()
    if flat.size == 0:
        return rr.copy()
    if not np.all(np.isfinite(flat)):
        raise ValueError("bump_h: radii must be finite.")
    panels = 16 * int(math.ceil(max(1.0, 3.0 * float(flat.max()) / (2.0 * math.pi)) / 16.0))
    rho, wts, H = _gauss_legendre(panels)
    out = np.empty(flat.size)
    for s in range(0, flat.size, 2048):  # chunks keep the (radii x nodes) matrix small
        rc = flat[s : s + 2048][:, None]
        if dim == 1:
            out[s : s + 2048] = (np.cos(rc * rho) @ (H * wts)) / math.pi
        elif dim == 2:
            out[s : s + 2048] = (special.j0(rc * rho) @ (H * rho * wts)) / (2.0 * math.pi)
        else:
            num = np.sin(rc * rho) @ (H * rho * wts)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[s : s + 2048] = num / (2.0 * math.pi**2 * rc[:, 0])
    zero = flat == 0.0
    if zero.any():
        out[zero] = _h_zero(dim)
    return out.reshape(rr.shape)


@lru_cache(maxsize=8)
def _h_zero(dim: int) -> float:
    rho, wts, H = _gauss_legendre(16)
    return float(_sphere_area(dim) * np.sum(H * rho ** (dim - 1) * wts) / (2.0 * math.pi) ** dim)


@lru_cache(maxsize=8)
def bump_zeta(dim: int = 1) -> float:
    """``ζ``: the radius beyond which ``h < h(0)/2`` (App. C.1), computed.

    The first root of ``h(r) = h(0)/2`` (``h`` decreases from its maximum at 0), by Brent's
    method; a scan of ``(ζ, 60]`` at step 0.02 confirms that no later lobe reaches
    ``h(0)/2`` (the side lobes are below ``h(0)/10``, tested; beyond they decay like the
    Fourier transform of a smooth compactly supported function). Since
    ``||x||_2 >= ||x||_∞``, ``h(x) < h(0)/2`` for every ``||x||_∞ > ζ``.

    >>> round(bump_zeta(1), 4)
    2.8053
    """
    dim = check_int("bump_zeta", "dim", dim, 1, MAX_DIM)
    h0 = _h_zero(dim)

    def f(r: float) -> float:
        return float(bump_h(r, dim)) - 0.5 * h0

    hi = 1.0
    while f(hi) >= 0.0:
        hi *= 1.5
    z = optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-14)
    tail = bump_h(np.arange(z + 0.02, 60.0, 0.02), dim)
    if np.any(tail >= 0.5 * h0):  # pragma: no cover - a property of H, tested
        raise RuntimeError("h has a side lobe above h(0)/2; zeta is not the first crossing.")
    return float(z)


# -- RKHS norms from spectral densities -----------------------------------------------------------
def rkhs_norm_radial(
    log_ghat: Callable[[np.ndarray], np.ndarray],
    kernel: Kernel,
    dim: int,
    omega_max: float,
) -> float:
    """``||g||_{H_k(R^d)}`` of a radial ``g`` from its Fourier transform, by quadrature.

    ``||g||² = (2π)^{-d} ∫ |ĝ(ω)|² / k̂(ω) dω
    = (2π)^{-d} S_{d-1} ∫_0^Ω exp(2 ln|ĝ(ρ)| - ln k̂(ρ)) ρ^{d-1} dρ``

    with ``ĝ(ω) = ∫ g(x) e^{-i ω·x} dx`` and ``k̂`` the kernel's spectral density in the same
    convention (:meth:`~hbo_envs.kernels.Kernel.log_spectral_density`). ``log_ghat(ρ)`` is
    ``ln|ĝ|`` at radius ``ρ`` (``-inf`` where ``ĝ = 0``); ``ĝ`` must vanish (or be
    negligible) beyond ``omega_max``. The integrand is integrated in log space around its
    peak (located on a 4001-point grid, refined by Brent's method), so norms of narrow
    functions whose integrand reaches ``e^{700}`` do not overflow.

    >>> from hbo_envs.kernels import SquaredExponential
    >>> k = SquaredExponential(0.5)   # g = k(·, 0) has norm k(0, 0)^{1/2} = 1
    >>> ln_khat = lambda r: k.log_spectral_density(r, 1)
    >>> round(rkhs_norm_radial(ln_khat, k, 1, 60.0), 10)
    1.0
    """

    def phi(rho: np.ndarray) -> np.ndarray:
        rho = np.asarray(rho, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = 2.0 * log_ghat(rho) - kernel.log_spectral_density(rho, dim)
            if dim > 1:
                out = out + (dim - 1) * np.log(rho)
        return np.where(np.isnan(out), -np.inf, out)

    grid = np.linspace(0.0, omega_max, 4001)
    vals = phi(grid)
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        lambda r: -float(phi(np.array(r))), bounds=(lo, hi), method="bounded"
    )
    peak = float(res.x) if -res.fun > vals[i] else float(grid[i])
    top = max(float(-res.fun), float(vals[i]))
    if not math.isfinite(top):
        raise ValueError("rkhs_norm_radial: the integrand is zero or infinite everywhere.")

    def integrand(r: float) -> float:
        with np.errstate(over="ignore", under="ignore"):
            return float(np.exp(phi(np.array(r)) - top))

    pts = [p for p in (peak,) if 0.0 < p < omega_max]
    val, err = integrate.quad(
        integrand, 0.0, omega_max, points=pts or None, limit=1000, epsabs=0.0, epsrel=1e-11
    )
    log_norm2 = math.log(val + err) + top + math.log(_sphere_area(dim) / (2.0 * math.pi) ** dim)
    return math.exp(0.5 * log_norm2) if 0.5 * log_norm2 < 709.0 else math.inf


def _bump_norm(kernel: Kernel, dim: int, scale: float) -> float:
    """``N = ||h(scale · x)||_H``: ``ĥ = H``, so the transform of ``h(s·)`` is ``s^{-d} H(ω/s)``."""

    def log_ghat(rho: np.ndarray) -> np.ndarray:
        u = np.asarray(rho, dtype=float) / scale
        with np.errstate(divide="ignore"):
            return np.where(u < 1.0, -1.0 / (1.0 - np.minimum(u, 1.0 - 1e-300) ** 2), -np.inf) - (
                dim * math.log(scale)
            )

    return rkhs_norm_radial(log_ghat, kernel, dim, scale)


# -- the theorem's rates --------------------------------------------------------------------------
def _matern_nu(kernel: Kernel) -> float | None:
    return kernel.nu if isinstance(kernel, Matern) else None


def lower_bound_exponent(kernel: Kernel, alpha: float, dim: int = 1) -> float:
    """The exponent of ``T`` in Theorem 2 (its polynomial part).

    SE: ``1/(1+α)`` (times ``(ln T)^{dα/(1+α)}``); Matérn-ν: ``(ν+dα)/(ν(1+α)+dα)``.

    >>> lower_bound_exponent(SquaredExponential(0.2), 1.0)
    0.5
    >>> round(lower_bound_exponent(Matern(0.2, 2.5), 1.0), 6)   # 3.5 / 6
    0.583333
    """
    nu = _matern_nu(kernel)
    if nu is None:
        return 1.0 / (1.0 + alpha)
    return (nu + dim * alpha) / (nu * (1.0 + alpha) + dim * alpha)


def regret_rate(kernel: Kernel, t: Any, *, alpha: float, v: float, B: float, dim: int = 1) -> Any:
    """Theorem 2's rate at ``T = t`` **with its unknown absolute constant set to 1**.

    - SE: ``v^{1/(1+α)} (ln(v^{-1/α} B^{(1+α)/α} T))^{dα/(1+α)} T^{1/(1+α)}`` (the log is
      floored at 1, where the theorem's asymptotics do not apply);
    - Matérn-ν: ``v^{ν/(ν(1+α)+dα)} B^{dα/(ν(1+α)+dα)} T^{(ν+dα)/(ν(1+α)+dα)}``.

    The theorem is an ``Ω(·)``: only the growth in ``T`` is known, not the level.
    """
    t = np.asarray(t, dtype=float)
    a, d = alpha, dim
    nu = _matern_nu(kernel)
    if nu is None:
        log = np.log(v ** (-1.0 / a) * B ** ((1.0 + a) / a) * np.maximum(t, 1.0))
        return v ** (1 / (1 + a)) * np.maximum(log, 1.0) ** (d * a / (1 + a)) * t ** (1 / (1 + a))
    den = nu * (1 + a) + d * a
    return v ** (nu / den) * B ** (d * a / den) * t ** ((nu + d * a) / den)


# -- the family -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LowerBoundFamily:
    """The ``M`` functions ``f_j`` of Theorem 2 on a finite candidate set (see module doc).

    Attributes
    ----------
    kernel, dim, alpha, v, B, horizon : the theorem's constants (``B`` is the budget).
    zeta, h0 : ``ζ`` and ``h(0)`` of the bump in ``dim`` dimensions.
    m, M, w : cells per axis, ``M = m^d`` functions, cell side ``w = 1/m``.
    delta : ``Δ``; every ``f_j`` has maximum ``2Δ``.
    rkhs_norm : ``||g||_{H(R^d)}`` computed by quadrature (``<= B``; bounds every ``||f_j||``).
    delta_rule : ``"theorem"`` (Δ from eq. (21)) or ``"given"`` (Δ passed by the user).
    capped : whether ``max_points`` limited ``m`` below the theorem's choice.
    points : ``(n, d)`` candidate set; centres : ``(M, d)`` maximisers ``c_j``;
    centre_index : ``(M,)`` index of ``c_j`` in ``points``; values : ``(M, n)`` ``f_j(points)``.
    """

    kernel: Kernel
    dim: int
    alpha: float
    v: float
    B: float
    horizon: int
    zeta: float
    h0: float
    m: int
    w: float
    delta: float
    rkhs_norm: float
    delta_rule: str
    capped: bool
    points_per_cell: int
    points: np.ndarray
    centres: np.ndarray
    centre_index: np.ndarray
    values: np.ndarray
    kernel_matrix: np.ndarray

    @property
    def M(self) -> int:
        return int(self.centres.shape[0])

    @property
    def n(self) -> int:
        return int(self.points.shape[0])

    def g(self, X: Any) -> np.ndarray:
        """``g(x) = (2Δ/h(0)) h(2ζ x / w)`` at the rows of ``X`` (any points of ``R^d``)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        r = np.sqrt(np.sum(X * X, axis=1)) * (2.0 * self.zeta / self.w)
        return 2.0 * self.delta / self.h0 * bump_h(r, self.dim)

    def objective(self, j: int) -> Objective:
        """``f_j`` tabulated on the candidate set, with ``B = ||g||_H`` (computed)."""
        j = check_int("LowerBoundFamily.objective", "j", j, 0, self.M - 1)
        params = {"j": j, **self.describe()}
        return Objective(
            f"lower-bound-{self.kernel.name}",
            self.points,
            self.values[j],
            self.kernel,
            self.kernel_matrix,
            self.rkhs_norm,
            0.0,
            params,
        )

    def draw(self, rng: np.random.Generator) -> Objective:
        """``f_j`` with ``j`` uniform on ``{0, ..., M-1}`` (the theorem's random ``f``)."""
        return self.objective(int(rng.integers(self.M)))

    def rate(self, t: Any) -> Any:
        """Theorem 2's rate at ``T = t``, unknown constant set to 1 (:func:`regret_rate`)."""
        return regret_rate(self.kernel, t, alpha=self.alpha, v=self.v, B=self.B, dim=self.dim)

    @property
    def exponent(self) -> float:
        """The theorem's exponent of ``T`` (:func:`lower_bound_exponent`)."""
        return lower_bound_exponent(self.kernel, self.alpha, self.dim)

    def describe(self) -> dict[str, Any]:
        """The construction as JSON-friendly data (what ``problem.meta`` reports)."""
        return {
            "kernel": self.kernel.name,
            **self.kernel.params(),
            "dim": self.dim,
            "alpha": self.alpha,
            "v": self.v,
            "B": self.B,
            "horizon": self.horizon,
            "delta": self.delta,
            "w": self.w,
            "m": self.m,
            "M": self.M,
            "zeta": self.zeta,
            "rkhs_norm_g": self.rkhs_norm,
            "delta_rule": self.delta_rule,
            "capped_by_max_points": self.capped,
            "points_per_cell": self.points_per_cell,
            "maximizers": self.centres.tolist(),
            "maximizer_indices": self.centre_index.tolist(),
            "rate_exponent": self.exponent,
        }


def _kernel_key(kernel: Kernel, owner: str) -> Kernel:
    if not isinstance(kernel, SquaredExponential | Matern):
        raise param_error(
            owner,
            "kernel",
            "a SquaredExponential or Matern kernel (Theorem 2 covers these two)",
            kernel,
        )
    return kernel


def lower_bound_family(
    kernel: Kernel,
    *,
    horizon: int,
    alpha: float = 1.0,
    v: float = 1.0,
    B: float = 1.0,
    dim: int = 1,
    points_per_cell: int = 5,
    max_points: int = 1000,
    delta: float | None = None,
    owner: str = "lower_bound_family",
) -> LowerBoundFamily:
    """Build (and cache per process) the family of Theorem 2 for ``(k, B, T, α, v, d)``.

    See the module docstring for the choice of ``Δ`` and ``w``. ``delta`` fixes ``Δ``
    instead (``w`` is then the smallest cell side with ``||g||_H <= B``). Raises
    ``ValueError`` naming the parameter (of ``owner``) when the construction does not exist.
    """
    kernel = _kernel_key(kernel, owner)
    # bounded here, before the family is built (for Matérn M grows with T: a huge horizon
    # would allocate the bump grid before the base class's own horizon check ran)
    horizon = check_int(owner, "horizon", horizon, 1, MAX_HORIZON)
    alpha = check_real(owner, "alpha", alpha, 0, 1, "right")
    v = check_real(owner, "v", v, 0)
    B = check_real(owner, "B", B, 0)
    dim = check_int(owner, "dim", dim, 1, MAX_DIM)
    points_per_cell = check_int(owner, "points_per_cell", points_per_cell, 1)
    if points_per_cell % 2 == 0:
        raise param_error(
            owner,
            "points_per_cell",
            "an odd integer (so that each cell's centre, the maximiser, is a candidate)",
            points_per_cell,
        )
    max_points = check_int(owner, "max_points", max_points, 2 * points_per_cell, MAX_POINTS)
    if delta is not None:
        delta = check_real(owner, "delta", delta, 0)
    return _family(kernel, horizon, alpha, v, B, dim, points_per_cell, max_points, delta, owner)


@lru_cache(maxsize=32)
def _family(
    kernel: Kernel,
    T: int,
    alpha: float,
    v: float,
    B: float,
    dim: int,
    k: int,
    max_points: int,
    delta: float | None,
    owner: str,
) -> LowerBoundFamily:
    p = alpha / (1.0 + alpha)
    v_root = v ** (1.0 / (1.0 + alpha))
    zeta, h0 = bump_zeta(dim), _h_zero(dim)
    m_cap = int(math.floor((max_points ** (1.0 / dim) + 1e-9) / k))
    if m_cap < 2:
        raise param_error(
            owner, "max_points", f">= (2 * points_per_cell)^dim = {(2 * k) ** dim}", max_points
        )

    def delta_B(m: int) -> float:  # the largest Δ with ||g||_H <= B on cells of side 1/m
        return B * h0 / (2.0 * _bump_norm(kernel, dim, 2.0 * zeta * m))

    delta_max = 0.5 * 0.5**p * v_root  # eq. (17)

    if delta is None:

        def target(m: int) -> float:
            return min(0.5 * (m**dim / T) ** p * v_root, delta_max)  # eq. (21), 4C² = 1

        if target(2) > delta_B(2):
            raise ValueError(
                "The lower-bound construction does not exist for these constants: at the "
                f"theorem's Δ = {target(2):.4g} (eq. (21), T={T}, v={v}, alpha={alpha}) even "
                f"M = {2**dim} functions would need an RKHS norm above B={B} (the largest Δ "
                f"that B allows is {delta_B(2):.4g}). Theorem 2 needs Δ/B small: increase "
                "'B' or 'horizon', or decrease 'v' (or change the kernel's lengthscale)."
            )
        lo, hi = 2, 3
        while hi <= m_cap and target(hi) <= delta_B(hi):  # feasibility is a prefix of m
            lo, hi = hi, hi * 2
        hi = min(hi, m_cap + 1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if target(mid) <= delta_B(mid) else (lo, mid)
        m = lo
        capped = m == m_cap and target(m + 1) <= delta_B(m + 1)
        d_final = target(m)
        rule = "theorem"
    else:
        if delta > 0.5 * v_root:
            raise param_error(
                owner,
                "delta",
                f"<= ½ v^(1/(1+alpha)) = {0.5 * v_root:.6g} (else the two-point reward "
                "distribution of App. C.2 has a probability above 1)",
                delta,
            )
        if delta > delta_B(2):
            raise param_error(
                owner,
                "delta",
                f"<= {delta_B(2):.6g} (larger Δ puts the RKHS norm of even M = {2**dim} "
                f"bumps above B={B}); decrease 'delta' or increase 'B'",
                delta,
            )
        m = 2
        while m < m_cap and delta <= delta_B(m + 1):
            m += 1
        capped = m == m_cap and delta <= delta_B(m_cap + 1)
        d_final = delta
        rule = "given"
    w = 1.0 / m
    norm = 2.0 * d_final / h0 * _bump_norm(kernel, dim, 2.0 * zeta * m)

    # Candidate set: k points per axis in every cell, symmetric about the centre.
    axis = ((np.arange(m)[:, None] + (np.arange(k)[None, :] + 0.5) / k) / m).ravel()
    grids = np.meshgrid(*([axis] * dim), indexing="ij")
    points = np.stack([g.ravel() for g in grids], axis=1)
    # The centre of cell c along an axis is entry c*k + (k-1)/2 of ``axis``.
    cidx_axis = np.arange(m) * k + (k - 1) // 2
    cgrids = np.meshgrid(*([cidx_axis] * dim), indexing="ij")
    mk = m * k
    centre_index = np.zeros(m**dim, dtype=int)
    for ax, cg in enumerate(cgrids):
        centre_index += cg.ravel() * mk ** (dim - 1 - ax)
    centres = points[centre_index]

    # f_j(x_i) = g(x_i - c_j): all squared distances are integers in units of the
    # lattice step 1/(mk), so h is integrated once per distinct distance.
    d2 = np.rint(sqdist(centres, points) * mk * mk).astype(np.int64)
    uniq, inv = np.unique(d2, return_inverse=True)
    r = np.sqrt(uniq.astype(float)) / mk * (2.0 * zeta / w)
    hv = bump_h(r, dim)
    values = (2.0 * d_final / h0) * hv[inv].reshape(d2.shape)
    K = as_readonly(kernel(points))
    return LowerBoundFamily(
        kernel=kernel,
        dim=dim,
        alpha=alpha,
        v=v,
        B=B,
        horizon=T,
        zeta=zeta,
        h0=h0,
        m=m,
        w=w,
        delta=float(d_final),
        rkhs_norm=float(norm),
        delta_rule=rule,
        capped=bool(capped),
        points_per_cell=k,
        points=as_readonly(points),
        centres=as_readonly(centres),
        centre_index=np.asarray(centre_index),
        values=as_readonly(values),
        kernel_matrix=K,
    )
