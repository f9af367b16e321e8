"""Symmetrised Pareto noise of Park–Lee (2024) §5.

``y = f(x) + eta``, ``eta = zeta (z - E z)``, ``z ~ Pareto(a_z, lambda_z)`` with
``a_z = 1 + epsilon + 0.01`` and ``zeta`` a Rademacher sign. ``eta`` is symmetric with
mean zero and finite ``(1+epsilon)``-th moment (but infinite variance for ``a_z <= 2``).
The scale ``lambda_z`` is not printed in the paper; the default is 1.
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

__all__ = ["SymmetricPareto"]


@dataclass(frozen=True)
class SymmetricPareto(RewardChannel):
    """Park–Lee's symmetrised Pareto channel with moment order ``epsilon``.

    ``shape`` defaults to ``1 + epsilon + 0.01`` (the paper's ``alpha_z``); it must exceed
    ``1 + epsilon``. ``nu = E|z - E z|^{1+eps}`` and
    ``v = (E|c + (z - Ez)|^p + E|c - (z - Ez)|^p) / 2`` at ``c = max|f|`` (convex, even in
    ``c``), both by quadrature.
    """

    epsilon: float = 0.2
    scale: float = 1.0
    shape: float | None = None
    name = "symmetric_pareto"

    def __post_init__(self) -> None:
        eps = check_real("SymmetricPareto", "epsilon", self.epsilon, 0, 1, "right")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(
            self, "scale", check_real("SymmetricPareto", "scale", self.scale, 0, MAX_SCALE, "right")
        )
        shape = 1.0 + eps + 0.01 if self.shape is None else self.shape
        shape = check_moment_index("SymmetricPareto", "shape", shape, eps, "epsilon")
        object.__setattr__(self, "shape", shape)

    @property
    def alpha(self) -> float:  # type: ignore[override]
        return self.epsilon

    @property
    def z_mean(self) -> float:
        """``E z = a lambda / (a - 1)``."""
        return self.shape * self.scale / (self.shape - 1.0)

    def z_distribution(self) -> Any:
        """``z`` as a frozen ``scipy.stats.pareto`` (shape ``a_z``, scale ``lambda_z``)."""
        return stats.pareto(self.shape, scale=self.scale)

    def moments_at(self, c: float) -> Moments:
        # z = lambda z1 with z1 ~ Pareto(a, 1): eta = zeta lambda (z1 - E z1), so
        # |c + eta| = |(c -+ lambda E z1) +- lambda z1| with the unit-scale distribution
        # (abs_moment normalises the coefficients, so a huge lambda cannot overflow).
        p, a, s = 1.0 + self.epsilon, self.shape, self.scale
        m1 = a / (a - 1.0)
        z1 = stats.pareto(a)
        nu = abs_moment(z1, -s * m1, s, p, upper_tail=a)
        v = 0.5 * (
            abs_moment(z1, c - s * m1, s, p, upper_tail=a)
            + abs_moment(z1, c + s * m1, -s, p, upper_tail=a)
        )
        return Moments(self.epsilon, float(v), float(nu), self.scale)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        sign = 1.0 if rng.random() < 0.5 else -1.0
        z = pareto_sample(rng, self.shape, self.scale)
        return float(f_x + sign * (z - self.z_mean))
