"""A decoy adversary: lift a local maximum above the global one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.adversaries._geometry import ball, local_maxima
from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_int, check_real, param_error

__all__ = ["DecoyAdversary"]


@dataclass(frozen=True)
class DecoyAdversary(Adversary):
    """``c_t(x) = f* - f(x_0) + margin`` on a ball around a decoy ``x_0``, 0 elsewhere.

    The decoy ``x_0`` is ``target`` (an index) or, by default, the best local maximum of
    ``f`` outside the ball of radius ``radius`` around ``x*`` (local maxima as in
    :func:`hbo_envs.adversaries._geometry.local_maxima`); if ``f`` has none there, the
    best point outside that ball. Corrupted, the decoy looks ``margin`` better than ``x*``
    (the lift is clipped at ``B_0`` by the ledger). Under ``"targeted"`` only rounds that
    play in the decoy's ball are charged.

    Parameters
    ----------
    radius : float
        Radius of the lifted ball around ``x_0`` and of the ball around ``x*`` excluded
        from the decoy search.
    margin : float or None
        How much better than ``f*`` the decoy looks (default ``0.1 * (f* - min f)``).
    target : int or None
        Index of the decoy point (default: chosen as above).
    """

    radius: float = 0.1
    margin: float | None = None
    target: int | None = None
    name = "decoy"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "radius", check_real(owner, "radius", self.radius, 0, None))
        if self.margin is not None:
            object.__setattr__(
                self, "margin", check_real(owner, "margin", self.margin, 0, None, "left")
            )
        if self.target is not None:
            object.__setattr__(self, "target", check_int(owner, "target", self.target, 0))

    def decoy(self, f: np.ndarray, points: np.ndarray) -> int:
        """Index of the decoy point ``x_0`` for objective ``f``."""
        star = int(np.argmax(f))
        if self.target is not None:
            if self.target >= f.size:
                raise param_error(
                    type(self).__name__, "target", f"an index in [0, {f.size - 1}]", self.target
                )
            return self.target
        outside = ~ball(points, star, self.radius)
        if not outside.any():
            raise param_error(
                type(self).__name__,
                "radius",
                "small enough that some point lies outside the ball around x*",
                self.radius,
            )
        cands = [i for i in local_maxima(f, points) if outside[i]]
        if cands:
            return int(cands[0])
        idx = np.flatnonzero(outside)
        return int(idx[np.argmax(f[idx])])

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        x0 = self.decoy(f, points)
        fmax, fmin = float(np.max(f)), float(np.min(f))
        margin = 0.1 * (fmax - fmin) if self.margin is None else self.margin
        c = np.zeros(f.size)
        c[ball(points, x0, self.radius)] = fmax - float(f[x0]) + margin
        return c

    def propose(self, view: AdversaryView) -> np.ndarray:
        return view.state
