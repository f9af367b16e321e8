"""Random-sign corruption: ``c_t = +-magnitude`` with a fresh fair sign every round."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_real

__all__ = ["RandomSignAdversary"]


@dataclass(frozen=True)
class RandomSignAdversary(Adversary):
    """With probability ``prob`` per round, ``c_t(x) = s_t * magnitude`` for every ``x``.

    ``s_t`` is a Rademacher sign drawn from the env's generator. It spends the budget
    without any strategy: a baseline against which the targeted adversaries are judged.
    Under ``"targeted"`` the same draw is applied at ``x_t`` only (same cost:
    ``magnitude``, as ``c_t`` is constant).

    Parameters
    ----------
    magnitude : float or None
        Size of the corruption (default ``B_0 / 3``).
    prob : float in (0, 1]
        Probability that a round is corrupted (default 1).
    """

    magnitude: float | None = None
    prob: float = 1.0
    name = "random_sign"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if self.magnitude is not None:
            object.__setattr__(
                self, "magnitude", check_real(owner, "magnitude", self.magnitude, 0, None)
            )
        object.__setattr__(self, "prob", check_real(owner, "prob", self.prob, 0, 1, "right"))

    def propose(self, view: AdversaryView) -> np.ndarray | None:
        rng = view.rng
        if self.prob < 1.0 and rng.random() >= self.prob:
            return None
        mag = view.B0 / 3.0 if self.magnitude is None else self.magnitude
        sign = 1.0 if rng.random() < 0.5 else -1.0
        return np.full(view.f.size, sign * mag)
