"""Gaussian noise contaminated by rare heavy-tailed outliers (issue 35).

``y = f(x) + eta``: with probability ``1 - prob``, ``eta = sigma xi`` (``xi ~ N(0, 1)``);
with probability ``prob`` an outlier of known heavy-tailed magnitude, either
``outlier="signed_pareto"`` (``eta = zeta z``, ``z ~ Pareto(outlier_shape, outlier_scale)``,
``zeta`` a Rademacher sign: :class:`~hbo_envs.channels.signed_pareto.SignedPareto`) or
``outlier="student_t"`` (``eta = outlier_scale T``, ``T ~ t(outlier_shape)``:
:class:`~hbo_envs.channels.student_t.StudentT`). Both components are symmetric and
independent of ``x``, so ``E[y] = f(x)``.

Moments are those of a mixture: for every ``c`` and ``p = 1 + alpha``,
``E|c + eta|^p = (1 - prob) E|c + sigma xi|^p + prob E|c + O|^p``, each term computed exactly
by its own channel (:meth:`Gaussian.moments_at`, :meth:`SignedPareto.moments_at`,
:meth:`StudentT.moments_at`); a mixture of functions even and convex in ``c`` is even and
convex, so ``v`` is attained at ``max|f|`` as for the other channels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.channels.gaussian import Gaussian
from hbo_envs.channels.signed_pareto import SignedPareto, signed_pareto_sample
from hbo_envs.channels.student_t import StudentT
from hbo_envs.validation import check_choice, check_moment_index, check_real

__all__ = ["Contaminated"]

OUTLIERS = ("signed_pareto", "student_t")


@dataclass(frozen=True)
class Contaminated(RewardChannel):
    """Gaussian ``N(0, sigma^2)`` noise, replaced with probability ``prob`` by a symmetric
    heavy-tailed outlier (module docstring); moment order ``alpha``.

    ``outlier_shape`` is the outlier's tail index (Pareto shape or Student-t ``df``) and must
    exceed ``1 + alpha``; ``prob`` lies in ``[0, 1]``. ``v`` and ``nu`` are the mixture of the
    components' exact constants.
    """

    sigma: float = 0.1
    prob: float = 0.05
    outlier: str = "signed_pareto"
    outlier_shape: float = 1.5
    outlier_scale: float = 1.0
    alpha: float = 0.3
    name = "contaminated"

    def __post_init__(self) -> None:
        owner = "Contaminated"
        alpha = check_real(owner, "alpha", self.alpha, 0, 1, "right")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "prob", check_real(owner, "prob", self.prob, 0, 1, "both"))
        check_choice(owner, "outlier", self.outlier, OUTLIERS)
        object.__setattr__(
            self,
            "outlier_shape",
            check_moment_index(owner, "outlier_shape", self.outlier_shape, alpha),
        )
        # the components validate sigma and outlier_scale (their names are kept)
        object.__setattr__(self, "sigma", self.gaussian().sigma)
        object.__setattr__(self, "outlier_scale", self.outlier_channel().scale)

    def gaussian(self) -> Gaussian:
        """The inlier component as a channel."""
        try:
            return Gaussian(sigma=self.sigma, alpha=self.alpha)
        except ValueError as exc:
            raise ValueError(str(exc).replace("of Gaussian", "of Contaminated")) from None

    def outlier_channel(self) -> SignedPareto | StudentT:
        """The outlier component as a channel (same ``alpha``)."""
        try:
            if self.outlier == "signed_pareto":
                return SignedPareto(self.outlier_shape, self.outlier_scale, self.alpha)
            return StudentT(self.outlier_shape, self.outlier_scale, self.alpha)
        except ValueError as exc:
            msg = str(exc).replace("'scale'", "'outlier_scale'")
            raise ValueError(msg.replace(f"of {_cls(self.outlier)}", "of Contaminated")) from None

    def moments_at(self, c: float) -> Moments:
        g, o = self.gaussian().moments_at(c), self.outlier_channel().moments_at(c)
        q = self.prob
        v = (1.0 - q) * g.v + q * o.v
        nu = (1.0 - q) * g.nu + q * o.nu
        return Moments(self.alpha, float(v), float(nu), self.sigma)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        if rng.random() < self.prob:
            if self.outlier == "signed_pareto":
                eta = signed_pareto_sample(rng, self.outlier_shape, self.outlier_scale)
            else:
                eta = self.outlier_scale * rng.standard_t(self.outlier_shape)
        else:
            eta = self.sigma * rng.standard_normal()
        return float(f_x + eta)


def _cls(outlier: str) -> str:
    return "SignedPareto" if outlier == "signed_pareto" else "StudentT"
