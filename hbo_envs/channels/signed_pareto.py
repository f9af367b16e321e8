"""The symmetric Pareto law: a Pareto magnitude with a random sign (issue 35).

``y = f(x) + zeta z``, ``z ~ Pareto(shape a, scale s)``, ``zeta`` a Rademacher sign: ``eta``
has density ``a s^a / (2 |x|^{a+1})`` on ``|x| >= s``, mean zero for ``a > 1`` and infinite
variance for ``a <= 2``. Unlike Park–Lee's channel (:mod:`~hbo_envs.channels.symmetric_pareto`,
which centres ``z`` before the sign) the noise is never smaller than ``s``: the scale sets
the noise floor, the shape the tail, so ``s`` well below the objective's range keeps ``f``
learnable while the tail still breaks a plain mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.channels.moments import abs_moment
from hbo_envs.channels.pareto import pareto_sample
from hbo_envs.validation import MAX_SCALE, check_moment_index, check_real

__all__ = ["SignedPareto", "signed_pareto_sample"]


def signed_pareto_sample(rng: np.random.Generator, shape: float, scale: float) -> float:
    """One draw of ``zeta z``: a Rademacher sign (first), then ``z ~ Pareto(shape, scale)``."""
    sign = 1.0 if rng.random() < 0.5 else -1.0
    return sign * pareto_sample(rng, shape, scale)


@dataclass(frozen=True)
class SignedPareto(RewardChannel):
    """``y = f(x) + zeta z``, ``z ~ Pareto(shape, scale)``, ``zeta = +-1``; moment order ``alpha``.

    The ``(1+alpha)``-th moment exists iff ``shape > 1 + alpha`` (smaller is refused). With
    ``p = 1 + alpha``, central moment (closed form)::

        nu = E z^p = shape * scale^p / (shape - p)

    and ``v = (E|c + z|^p + E|c - z|^p) / 2`` at ``c = max|f|`` by quadrature (even and
    convex in ``c``, so the sup over the candidate set is at ``max|f|``).
    """

    shape: float = 1.8
    scale: float = 0.1
    alpha: float = 0.5
    name = "signed_pareto"

    def __post_init__(self) -> None:
        alpha = check_real("SignedPareto", "alpha", self.alpha, 0, 1, "right")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(
            self, "scale", check_real("SignedPareto", "scale", self.scale, 0, MAX_SCALE, "right")
        )
        object.__setattr__(
            self, "shape", check_moment_index("SignedPareto", "shape", self.shape, alpha)
        )

    def magnitude_distribution(self) -> Any:
        """``z`` (the magnitude ``|eta|``) as a frozen ``scipy.stats.pareto``."""
        return stats.pareto(self.shape, scale=self.scale)

    def moments_at(self, c: float) -> Moments:
        p, a, s = 1.0 + self.alpha, self.shape, self.scale
        nu = a * s**p / (a - p) * (1.0 + 1e-9)  # margin: see RewardChannel.moments
        z1 = stats.pareto(a)  # z = s z1: abs_moment normalises the coefficients
        v = 0.5 * (abs_moment(z1, c, s, p, upper_tail=a) + abs_moment(z1, c, -s, p, upper_tail=a))
        return Moments(self.alpha, float(v), float(nu), self.scale)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        return float(f_x + signed_pareto_sample(rng, self.shape, self.scale))
