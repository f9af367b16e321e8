"""The two-point reward channel of the regret lower bound (Chowdhury–Gopalan 2019, App. C.2).

For ``α ∈ (0, 1]``, ``v > 0`` and the construction's ``Δ`` (eq. (14))::

    y(x) = sgn(f(x)) (v / 2Δ)^{1/α}   with probability  (2Δ / v)^{1/α} |f(x)|,
           0                          otherwise.

So ``E[y] = f(x)`` and ``E|y|^{1+α} = (v/2Δ)^{(1+α)/α} (2Δ/v)^{1/α} |f(x)| = v |f(x)| / (2Δ)``,
which is at most ``v`` when ``|f| <= 2Δ`` (the family of Theorem 2 has ``max f = 2Δ``).
The probability is at most 1 for every ``|f| <= 2Δ`` exactly when ``Δ <= ½ v^{1/(1+α)}``;
a larger ``Δ`` is refused at construction, an objective with ``max|f| > 2Δ`` at env
construction.

>>> import numpy as np
>>> ch = TwoPoint(delta=0.05, v=1.0, alpha=1.0)
>>> ch.magnitude   # (v / 2Δ)^{1/α}
10.0
>>> m = ch.moments(np.array([0.1, -0.03, 0.0]))
>>> round(m.v, 6), round(m.nu, 6)   # v |f|/(2Δ) at max|f| = 2Δ; nu = phi(2Δ)
(1.0, 0.99)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.validation import check_real, param_error

__all__ = ["TwoPoint"]


@dataclass(frozen=True)
class TwoPoint(RewardChannel):
    """``y ∈ {0, sgn(f(x)) a}``, ``a = (v/2Δ)^{1/α}``, ``P(y ≠ 0) = |f(x)| / a`` (eq. (14)).

    Moments at ``c = max|f| <= 2Δ``, exact:

    - raw: ``E|y|^{1+α} = a^α |f| = v |f| / (2Δ)``, so ``v(c) = v c / (2Δ)`` (``= v`` on the
      lower-bound family, where ``c = 2Δ``);
    - central: ``E|y - f|^{1+α} = φ(|f|)``,
      ``φ(s) = (s/a)(a - s)^{1+α} + (1 - s/a) s^{1+α} = (s(a - s)/a)((a - s)^α + s^α)``.
      ``φ`` is symmetric about ``a/2`` and increasing on ``[0, a/2]`` (both factors are,
      for ``α <= 1``), so ``sup_{s <= c} φ(s) = φ(min(c, a/2))``.
    """

    delta: float = 0.05
    v: float = 1.0
    alpha: float = 1.0
    name = "two_point"

    def __post_init__(self) -> None:
        alpha = check_real("TwoPoint", "alpha", self.alpha, 0, 1, "right")
        v = check_real("TwoPoint", "v", self.v, 0)
        delta = check_real("TwoPoint", "delta", self.delta, 0)
        limit = 0.5 * v ** (1.0 / (1.0 + alpha))
        if delta > limit * (1.0 + 1e-12):
            raise param_error(
                "TwoPoint",
                "delta",
                f"<= ½ v^(1/(1+alpha)) = {limit:.6g} (else the probability (2Δ/v)^(1/alpha)|f| "
                "exceeds 1 at |f| = 2Δ, App. C.2)",
                self.delta,
            )
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "v", v)
        object.__setattr__(self, "delta", delta)

    @property
    def magnitude(self) -> float:
        """``a = (v / 2Δ)^{1/α}``, the non-zero reward's absolute value."""
        return float((self.v / (2.0 * self.delta)) ** (1.0 / self.alpha))

    def validate(self, f: np.ndarray) -> None:
        c = float(np.max(np.abs(f)))
        if c > 2.0 * self.delta * (1.0 + 1e-12):
            raise ValueError(
                f"The two-point channel (delta={self.delta!r}) needs max|f(x)| <= 2Δ = "
                f"{2 * self.delta!r} so that P(y != 0) = |f(x)| / (v/2Δ)^(1/alpha) <= 1; the "
                f"objective has max|f| = {c!r}. Use the lower-bound family built with the "
                "same Δ (hbo_envs.objectives.lower_bound)."
            )

    def _phi(self, s: float) -> float:
        a = self.magnitude
        return (s * (a - s) / a) * ((a - s) ** self.alpha + s**self.alpha)

    def moments(self, f: np.ndarray) -> Moments:
        """Exact constants at ``c = max|f|`` itself (closed forms, nothing to cache).

        The base class rounds ``c`` up to 9 decimals to share a cache; on the lower-bound
        family ``c = 2Δ`` can be far below ``1e-9`` (long horizons, small ``v``), where the
        rounding would make ``v`` meaningless.
        """
        f = np.asarray(f, dtype=float)
        self.validate(f)
        return self.moments_at(float(np.max(np.abs(f))))

    def moments_at(self, c: float) -> Moments:
        a = self.magnitude
        v = self.v * (c / (2.0 * self.delta))  # (not v*c first: it underflows for tiny v)
        nu = self._phi(min(c, 0.5 * a))
        return Moments(self.alpha, float(v * (1.0 + 1e-9)), float(nu * (1.0 + 1e-9)), a)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        a = self.magnitude
        if rng.random() < abs(f_x) / a:
            return math.copysign(a, f_x)
        return 0.0
