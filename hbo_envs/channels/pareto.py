"""Multiplicative Pareto rewards (Chowdhury–Gopalan 2019 §6, Fig. 1b).

``y ~ Pareto(shape a, scale s(x))`` with ``s(x) = f(x) (a - 1) / a``, so ``E[y] = f(x)``
(at the paper's ``a = 2``, ``s = f(x)/2``). Needs ``f > 0`` on the whole candidate set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.channels.moments import abs_moment
from hbo_envs.validation import check_moment_index, check_real

__all__ = ["Pareto", "pareto_sample"]


def pareto_sample(rng: np.random.Generator, shape: float, scale: float) -> float:
    """One draw of a (type I) Pareto variable by inverse CDF, ``scale * U^{-1/shape}``.

    ``U = 1 - rng.random()`` lies in ``(0, 1]``, so the draw is always finite: at most
    ``scale * 2^{53/shape}`` (about ``1.6e13 * scale`` at ``shape = 1.21``).
    """
    u = 1.0 - rng.random()
    return float(scale * u ** (-1.0 / shape))


@dataclass(frozen=True)
class Pareto(RewardChannel):
    """``y = f(x) Z``, ``Z ~ Pareto(shape, (shape-1)/shape)`` (mean 1); moment order ``alpha``.

    ``E|y|^p = a s^p / (a - p)`` for ``p = 1 + alpha < a``, hence (Chowdhury–Gopalan §6)
    ``v = a ((a-1)/a)^p sup_f^p / (a - p)``, which is ``B^{1+alpha} / (2^alpha (1-alpha))`` at
    ``a = 2``. ``nu = sup_f^p E|Z - 1|^p`` by quadrature. Refuses ``shape <= 1 + alpha``.
    """

    shape: float = 2.0
    alpha: float = 0.9
    name = "pareto"
    requires_positive_f = True

    def __post_init__(self) -> None:
        alpha = check_real("Pareto", "alpha", self.alpha, 0, 1, "right")
        object.__setattr__(self, "alpha", alpha)
        shape = check_moment_index("Pareto", "shape", self.shape, alpha)
        object.__setattr__(self, "shape", shape)

    @property
    def _unit_scale(self) -> float:
        return (self.shape - 1.0) / self.shape

    def unit_distribution(self) -> Any:
        """``Z`` as a frozen ``scipy.stats.pareto`` (shape ``a``, scale ``(a-1)/a``, mean 1)."""
        return stats.pareto(self.shape, scale=self._unit_scale)

    def validate(self, f: np.ndarray) -> None:
        fmin = float(np.min(f))
        if fmin <= 0:
            raise ValueError(
                "The Pareto channel is multiplicative (scale f(x)(a-1)/a) and needs f(x) > 0 "
                f"at every candidate point; the objective has min f = {fmin!r}. Use an "
                "objective with positive values (e.g. coeffs='positive')."
            )

    def moments_at(self, c: float) -> Moments:
        a, p, sup = self.shape, 1.0 + self.alpha, c
        v = a * (self._unit_scale * sup) ** p / (a - p) * (1.0 + 1e-9)  # margin: see moments()
        central = abs_moment(self.unit_distribution(), -1.0, 1.0, p, upper_tail=a)
        return Moments(self.alpha, float(v), float(sup**p * central), self._unit_scale * sup)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        return pareto_sample(rng, self.shape, f_x * self._unit_scale)
