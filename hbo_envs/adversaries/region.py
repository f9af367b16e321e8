"""The Figure 1 adversary of Bogunovic, Krause & Scarlett (2020): push the optimum down."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.adversaries._geometry import ball
from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_real

__all__ = ["RegionAdversary"]


@dataclass(frozen=True)
class RegionAdversary(Adversary):
    """``c_t(x) = -f(x*)/3`` for ``x`` in a ball around ``x*``, 0 elsewhere, until ``C`` is spent.

    Bogunovic et al. (2020) §2, Figure 1: "Observations that correspond to the points
    sampled in the shaded region around the global maximizer ``x*`` are corrupted by the
    value ``-f(x*)/3``, up to a total corruption budget". Under the ``"targeted"`` model
    (the figure's story) only rounds that sample the region are charged; under
    ``"paper"`` every round is charged ``f(x*)/3`` until the budget runs out.

    Parameters
    ----------
    radius : float
        Radius of the region around ``x*`` (Euclidean, in the units of the points).
    fraction : float
        The corruption is ``-fraction * |f(x*)|`` (default ``1/3``, the paper's).
    """

    radius: float = 0.1
    fraction: float = 1.0 / 3.0
    name = "region"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "radius", check_real(owner, "radius", self.radius, 0, None))
        object.__setattr__(
            self, "fraction", check_real(owner, "fraction", self.fraction, 0, None, "left")
        )

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        star = int(np.argmax(f))
        c = np.zeros(f.size)
        c[ball(points, star, self.radius)] = -self.fraction * abs(float(f[star]))
        return c

    def propose(self, view: AdversaryView) -> np.ndarray:
        return view.state
