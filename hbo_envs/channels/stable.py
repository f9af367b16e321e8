"""Symmetric alpha-stable noise (issue 35).

``y = f(x) + scale * X``, ``X ~ S(a, 0, 1, 0)``: characteristic function
``E exp(i t X) = exp(-|t|^a)``, stability index ``a`` in ``(1, 2)``. This is
``scipy.stats.levy_stable(a, 0)`` (for ``beta = 0`` its S0 and S1 parameterisations agree;
tested). Tails ``P(|X| > x) ~ x^{-a}``: every moment of order ``p < a`` exists, the
variance does not.

Moments. For ``p < a`` the absolute moment has the closed form (e.g. Samorodnitsky &
Taqqu 1994, Property 1.2.17, for ``beta = 0``)::

    E|X|^p = 2^p Gamma((1+p)/2) Gamma(1 - p/a) / (Gamma(1 - p/2) sqrt(pi)),

tested against quadrature of scipy's ``levy_stable`` density. The raw moment
``E|b + X|^p`` (``b = max|f| / scale``) has none; it is computed from the characteristic
function, for ``0 < p < 2`` and any ``Y`` with ``E|Y|^p < inf``::

    E|Y|^p = (2 Gamma(p+1) sin(p pi/2) / pi) int_0^inf (1 - Re phi_Y(t)) t^{-p-1} dt,

with ``Re phi_Y(t) = cos(b t) exp(-t^a)``. Splitting ``1 - cos(bt) e^{-t^a} =
(1 - e^{-t^a}) + e^{-t^a} (1 - cos bt)``, the first part integrates to ``Gamma(1-p/a)/p``
(which gives the closed form above at ``b = 0``) and the second is a positive integral done
by QUADPACK (an algebraic end weight near 0, the oscillatory ``cos`` rule beyond).

Sampling: Chambers–Mallows–Stuck with ``beta = 0``, from two uniforms of the env's
generator: ``V ~ U(-pi/2, pi/2)``, ``W ~ Exp(1)``,
``X = sin(aV) / cos(V)^{1/a} * (cos((1-a)V) / W)^{(1-a)/a}``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, special

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.validation import MAX_SCALE, check_moment_index, check_real

__all__ = ["SymmetricStable", "stable_abs_moment", "stable_central_moment"]

_T_EXP = 60.0  # the integrals stop at t = T with T^a = 60: exp(-60) ~ 1e-26 is bounded above


def stable_central_moment(a: float, p: float) -> float:
    """``E|X|^p`` of ``X ~ S(a, 0, 1, 0)`` (closed form, module docstring), ``0 < p < a``."""
    if not 0.0 < p < a:
        raise ValueError(f"E|X|^{p} of an {a}-stable law is infinite (needs 0 < p < a).")
    log = (
        p * math.log(2.0)
        + special.gammaln((1.0 + p) / 2.0)
        + special.gammaln(1.0 - p / a)
        - special.gammaln(1.0 - p / 2.0)
        - 0.5 * math.log(math.pi)
    )
    return math.exp(log)


def stable_abs_moment(a: float, b: float, p: float) -> float:
    """``E|b + X|^p`` for ``X ~ S(a, 0, 1, 0)``, ``1 <= p < a < 2``: an upper bound tight to
    the quadrature's tolerance (its error estimates are added, plus a relative ``1e-9``).

    From the characteristic function (module docstring)::

        E|b + X|^p = E|X|^p + K_p int_0^inf e^{-t^a} (1 - cos(b t)) t^{-p-1} dt,
        K_p = 2 Gamma(p+1) sin(p pi/2) / pi.
    """
    if not 0.0 < p < a:
        raise ValueError(f"E|X|^{p} of an {a}-stable law is infinite (needs 0 < p < a).")
    b = abs(float(b))
    base = stable_central_moment(a, p)
    if b == 0.0:
        return base
    kp = 2.0 * math.gamma(p + 1.0) * math.sin(p * math.pi / 2.0) / math.pi
    kw: dict[str, Any] = {"epsabs": 0.0, "epsrel": 1e-11, "limit": 2000}
    with warnings.catch_warnings():  # QUADPACK's error estimates are added to the result
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        if b > 1.0:
            return _large_shift(a, b, p, kp, kw)
        return _small_shift(a, b, p, kp, kw, base)


def _small_shift(a: float, b: float, p: float, kp: float, kw: dict[str, Any], base: float) -> float:
    """``E|b + X|^p`` for ``0 < b <= 1`` (the split of :func:`stable_abs_moment`)."""
    T = _T_EXP ** (1.0 / a)
    t0 = min(T, 1.0 / b)

    # [0, t0]: e^{-t^a} 2 sin^2(bt/2) t^{-p-1} = g(t) * t^{1-p}, g smooth (-> b^2/2 at 0).
    def g(t: float) -> float:
        if t == 0.0:
            return b * b / 2.0
        s = math.sin(b * t / 2.0)
        return math.exp(-(t**a)) * 2.0 * s * s / (t * t)

    total, err = integrate.quad(g, 0.0, t0, weight="alg", wvar=(1.0 - p, 0.0), **kw)
    total += err
    if t0 < T:
        # [t0, T] (t0 >= 1 here): int e^{-t^a} t^{-p-1} - int cos(bt) e^{-t^a} t^{-p-1},
        # the second by QUADPACK's QAWO rule.
        def h(t: float) -> float:
            return math.exp(-(t**a)) * t ** (-p - 1.0)

        plain, e1 = integrate.quad(h, t0, T, **kw)
        osc, e2 = integrate.quad(h, t0, T, weight="cos", wvar=b, **kw)
        total += plain - osc + e1 + e2
    # beyond T: 0 <= integrand <= 2 e^{-T^a} t^{-p-1}
    total += 2.0 * math.exp(-(T**a)) * T ** (-p) / p
    return float((base + kp * total) * (1.0 + 1e-9))


def _large_shift(a: float, b: float, p: float, kp: float, kw: dict[str, Any]) -> float:
    """``E|b + X|^p`` for ``b > 1`` as ``b^p E|1 + X/b|^p``. With ``Y = 1 + X/b``,
    ``1 - Re phi_Y(t) = (1 - cos t) + cos(t) (1 - e^{-(t/b)^a})`` and the first part
    integrates to ``1 / K_p`` (``E|1|^p = 1``), so::

        E|1 + X/b|^p = 1 + K_p int_0^inf cos(t) (1 - e^{-(t/b)^a}) t^{-p-1} dt,

    on ``[0, 1]`` with the algebraic weight ``t^{a-p-1}``, beyond by QUADPACK's Fourier
    rule (QAWF). No term grows with ``b``: the integrand is at most ``t^{a-p-1} / b^a``.
    """

    def near(t: float) -> float:  # cos(t) (1 - e^{-(t/b)^a}) / t^a, smooth on [0, 1]
        u = (t / b) ** a
        return math.cos(t) * (-math.expm1(-u)) / t**a if t > 0.0 else b ** (-a)

    def far(t: float) -> float:
        return -math.expm1(-((t / b) ** a)) * t ** (-p - 1.0)

    i1, e1 = integrate.quad(near, 0.0, 1.0, weight="alg", wvar=(a - p - 1.0, 0.0), **kw)
    i2, e2 = integrate.quad(far, 1.0, np.inf, weight="cos", wvar=1.0, epsabs=1e-15, limlst=200)
    rel = 1.0 + kp * (i1 + i2 + abs(e1) + abs(e2))
    return float(b**p * rel * (1.0 + 1e-9))


@dataclass(frozen=True)
class SymmetricStable(RewardChannel):
    """``y = f(x) + scale * X``, ``X ~ S(stability, 0, 1, 0)``; moment order ``alpha``.

    ``stability`` must lie in ``(1, 2)`` (2 is the Gaussian channel) and exceed
    ``1 + alpha``, else ``E|y|^{1+alpha}`` is infinite and the channel is refused.
    ``nu = scale^p E|X|^p`` (closed form) and ``v = scale^p E|max|f|/scale + X|^p``
    (characteristic-function quadrature), ``p = 1 + alpha``; see the module docstring.
    """

    stability: float = 1.5
    scale: float = 0.1
    alpha: float = 0.3
    name = "stable"

    def __post_init__(self) -> None:
        alpha = check_real("SymmetricStable", "alpha", self.alpha, 0, 1, "right")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(
            self,
            "scale",
            check_real("SymmetricStable", "scale", self.scale, 0, MAX_SCALE, "right"),
        )
        a = check_real("SymmetricStable", "stability", self.stability, 1, 2)
        object.__setattr__(
            self, "stability", check_moment_index("SymmetricStable", "stability", a, alpha)
        )

    def moments_at(self, c: float) -> Moments:
        p, a, s = 1.0 + self.alpha, self.stability, self.scale
        nu = s**p * stable_central_moment(a, p) * (1.0 + 1e-9)
        v = s**p * stable_abs_moment(a, c / s, p)
        return Moments(self.alpha, float(v), float(nu), self.scale)

    def sample_noise(self, rng: np.random.Generator) -> float:
        """One draw of ``scale * X`` by Chambers–Mallows–Stuck (module docstring)."""
        a = self.stability
        V = math.pi * (rng.random() - 0.5)
        W = -math.log(1.0 - rng.random())  # Exp(1); 1 - U in (0, 1]
        if W == 0.0:  # U = 0 exactly: (c / W)^{(1-a)/a} -> 0 as W -> 0, so X = 0
            return 0.0
        x = (
            math.sin(a * V)
            / math.cos(V) ** (1.0 / a)
            * (math.cos((1.0 - a) * V) / W) ** ((1.0 - a) / a)
        )
        return self.scale * x

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        return float(f_x + self.sample_noise(rng))
