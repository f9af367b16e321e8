"""Additive Gaussian noise ``y = f(x) + sigma * N(0, 1)`` (the sub-Gaussian reference)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.channels.moments import abs_moment
from hbo_envs.validation import MAX_SCALE, check_real

__all__ = ["Gaussian"]


@dataclass(frozen=True)
class Gaussian(RewardChannel):
    """``y = f(x) + sigma * xi``, ``xi ~ N(0, 1)``; moment order ``alpha`` (default 1).

    ``nu = sigma^p 2^{p/2} Gamma((p+1)/2) / sqrt(pi)`` with ``p = 1 + alpha``;
    ``v = E|sup|f| + sigma xi|^p`` (``= sup_f^2 + sigma^2`` at ``alpha = 1``).
    """

    sigma: float = 1.0
    alpha: float = 1.0
    name = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "sigma", check_real("Gaussian", "sigma", self.sigma, 0, MAX_SCALE, "both")
        )
        object.__setattr__(
            self, "alpha", check_real("Gaussian", "alpha", self.alpha, 0, 1, "right")
        )

    def moments_at(self, c: float) -> Moments:
        p = 1.0 + self.alpha
        nu = self.sigma**p * 2 ** (p / 2) * special.gamma((p + 1) / 2) / np.sqrt(np.pi)
        v = abs_moment(stats.norm(), c, self.sigma, p)
        return Moments(self.alpha, v, float(nu), self.sigma)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        return float(f_x + self.sigma * rng.standard_normal())
