"""An adaptive adversary that pushes down whatever near-optimal point the agent plays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_real

__all__ = ["AdaptiveAdversary"]


@dataclass(frozen=True)
class AdaptiveAdversary(Adversary):
    """Subtract ``magnitude`` at near-optimal points the agent plays.

    The near-optimal set is ``N = {x : f(x) >= f* - gap * (f* - min f)}``. The default
    ``magnitude = (f* - min f) / 2`` makes a corrupted optimum look like an average point.

    - ``"targeted"``: if ``x_t`` is in ``N``, ``c_t(x_t) = -magnitude`` (else nothing, free).
    - ``"paper"`` (``x_t`` unknown when ``c_t`` is fixed): the adversary uses the history:
      ``c_t = -magnitude`` on the near-optimal points the agent has played so far (its
      revealed interest), 0 elsewhere; nothing before the agent first plays in ``N``.

    Parameters
    ----------
    gap : float in (0, 1]
        Width of the near-optimal set, relative to the range of ``f`` (default 0.1).
    magnitude : float or None
        Size of the push (default ``(f* - min f) / 2``).
    """

    gap: float = 0.1
    magnitude: float | None = None
    name = "adaptive"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "gap", check_real(owner, "gap", self.gap, 0, 1, "right"))
        if self.magnitude is not None:
            object.__setattr__(
                self, "magnitude", check_real(owner, "magnitude", self.magnitude, 0, None)
            )

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> dict:
        fmax, fmin = float(np.max(f)), float(np.min(f))
        near = f >= fmax - self.gap * (fmax - fmin)
        mag = 0.5 * (fmax - fmin) if self.magnitude is None else self.magnitude
        return {"near": near, "magnitude": mag, "played": np.zeros(f.size, dtype=bool)}

    def propose(self, view: AdversaryView) -> np.ndarray | None:
        s = view.state
        if view.actions:  # remember the near-optimal points played so far
            a = view.actions[-1]
            s["played"][a] = s["played"][a] or bool(s["near"][a])
        mask = s["near"] if view.action is not None else s["played"]
        if view.action is not None and not mask[view.action]:
            return None
        if not mask.any():
            return None
        return np.where(mask, -s["magnitude"], 0.0)
