"""The single-spike channel of Chowdhury–Gopalan (2019) §6 "Effect of truncation" (Fig. 1f).

At one point chosen uniformly at random per episode, ``y = f(x) + eta`` with
``eta in {-magnitude, +magnitude}`` uniformly; everywhere else ``y = f(x)`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.validation import check_real

__all__ = ["Spike"]


@dataclass(frozen=True)
class Spike(RewardChannel):
    """Noise ``+-magnitude`` at one random point (drawn at reset), zero elsewhere.

    With ``p = 1 + alpha``: ``nu = magnitude^p``, and since the spike may sit anywhere,
    ``v = (|c + m|^p + |c - m|^p) / 2`` at ``c = max|f|`` (which dominates ``|f(x)|^p``).
    """

    magnitude: float = 10.0
    alpha: float = 1.0
    name = "spike"

    def __post_init__(self) -> None:
        object.__setattr__(self, "magnitude", check_real("Spike", "magnitude", self.magnitude, 0))
        object.__setattr__(self, "alpha", check_real("Spike", "alpha", self.alpha, 0, 1, "right"))

    def moments_at(self, c: float) -> Moments:
        p, m = 1.0 + self.alpha, self.magnitude
        v = 0.5 * (abs(c + m) ** p + abs(c - m) ** p) * (1.0 + 1e-9)  # margin: see moments()
        return Moments(self.alpha, float(v), float(m**p), m)

    def new_episode(self, f: np.ndarray, rng: np.random.Generator) -> int:
        """The spike's point, uniform over the candidate set."""
        return int(rng.integers(len(f)))

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        if index != state:
            return float(f_x)
        return float(f_x + (self.magnitude if rng.random() < 0.5 else -self.magnitude))
