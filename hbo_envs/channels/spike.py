"""The single-spike channel of Chowdhury–Gopalan (2019) §6 "Effect of truncation" (Fig. 1f).

At one point chosen uniformly at random per episode, ``y = f(x) + eta`` with
``eta in {-magnitude, +magnitude}`` uniformly; everywhere else ``y = f(x)`` exactly.

The paper does not say whether the sign is drawn per sample or once per "randomization of
noise". ``sign="per_sample"`` (default) draws it at every sample: ``eta`` is then a
conditionally zero-mean heavy-ish noise and the env is a valid bandit instance with the
stated moments. ``sign="per_episode"`` draws it once at reset: the spike is a persistent
``+-magnitude`` offset at one point, zero-mean only over the draw of the sign — which is
what makes untruncated GP-UCB's posterior mean stay wrong after ``10^4`` rounds, as the
paper's Fig. 1f shows. It is an estimation demo, not an instance of the paper's noise
assumption (``E[eta_t | F_{t-1}] != 0`` once the sign is revealed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.validation import MAX_SCALE, check_choice, check_real

__all__ = ["Spike", "SpikeState"]


class SpikeState(NamedTuple):
    """Per-episode state: the spike's point and, for ``sign="per_episode"``, its sign."""

    index: int
    sign: float | None


@dataclass(frozen=True)
class Spike(RewardChannel):
    """Noise ``+-magnitude`` at one random point (drawn at reset), zero elsewhere.

    With ``p = 1 + alpha``: ``nu = magnitude^p``, and since the spike may sit anywhere,
    ``v = (|c + m|^p + |c - m|^p) / 2`` at ``c = max|f|`` (which dominates ``|f(x)|^p``);
    for ``sign="per_episode"`` the bound ``max(|c + m|^p, |c - m|^p)`` holds for either sign.
    """

    magnitude: float = 10.0
    alpha: float = 1.0
    sign: str = "per_sample"
    name = "spike"

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "magnitude",
            check_real("Spike", "magnitude", self.magnitude, 0, MAX_SCALE, "right"),
        )
        object.__setattr__(self, "alpha", check_real("Spike", "alpha", self.alpha, 0, 1, "right"))
        check_choice("Spike", "sign", self.sign, ("per_sample", "per_episode"))

    def moments_at(self, c: float) -> Moments:
        p, m = 1.0 + self.alpha, self.magnitude
        if self.sign == "per_sample":
            v = 0.5 * (abs(c + m) ** p + abs(c - m) ** p)
        else:
            v = max(abs(c + m) ** p, abs(c - m) ** p)
        return Moments(self.alpha, float(v * (1.0 + 1e-9)), float(m**p), m)  # margin: moments()

    def new_episode(self, f: np.ndarray, rng: np.random.Generator) -> SpikeState:
        """The spike's point, uniform over the candidate set (and its sign if per episode)."""
        index = int(rng.integers(len(f)))
        if self.sign == "per_sample":
            return SpikeState(index, None)
        return SpikeState(index, self.magnitude if rng.random() < 0.5 else -self.magnitude)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        if index != state.index:
            return float(f_x)
        if state.sign is not None:
            return float(f_x + state.sign)
        return float(f_x + (self.magnitude if rng.random() < 0.5 else -self.magnitude))
