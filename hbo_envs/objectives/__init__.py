"""Objective functions over finite candidate sets, with exact optimum and RKHS norm.

- :mod:`~hbo_envs.objectives.base` — the :class:`Objective` record and the RKHS-norm helpers.
- :mod:`~hbo_envs.objectives.rkhs` — kernel sums ``f = sum_i a_i k(., x_i)`` and the
  random generators of Chowdhury–Gopalan (2019) §6 and Park–Lee (2024) §5.
- :mod:`~hbo_envs.objectives.griewank` — the negated Griewank benchmarks of Park–Lee §5.
- :mod:`~hbo_envs.objectives.lower_bound` — the bump family of Chowdhury–Gopalan Thm. 2.
"""

from typing import Any

import numpy as np

from hbo_envs.kernels import make_kernel
from hbo_envs.objectives.base import Objective, min_norm_interpolant_norm, objective_from_values
from hbo_envs.objectives.griewank import griewank, griewank_2d, griewank_5d
from hbo_envs.objectives.lower_bound import LowerBoundFamily, lower_bound_family
from hbo_envs.objectives.rkhs import (
    RKHSFunction,
    chowdhury_gopalan_synthetic,
    park_lee_rkhs1d,
    random_rkhs,
    rkhs_objective,
)


def _lower_bound(rng: np.random.Generator, kernel: Any = "se", **kw: Any) -> Objective:
    """``f_j`` drawn uniformly from :func:`lower_bound_family` (``horizon`` is required)."""
    return lower_bound_family(make_kernel(kernel), **kw).draw(rng)


OBJECTIVES = {
    "random-rkhs": random_rkhs,
    "chowdhury-gopalan": chowdhury_gopalan_synthetic,
    "park-lee-rkhs1d": park_lee_rkhs1d,
    "griewank2d": lambda rng, **kw: griewank_2d(**kw),
    "griewank5d": lambda rng, **kw: griewank_5d(**kw),
    "lower-bound": _lower_bound,
}
"""Named objective generators ``gen(rng, **params) -> Objective`` (Griewank ignores ``rng``)."""

__all__ = [
    "OBJECTIVES",
    "LowerBoundFamily",
    "Objective",
    "RKHSFunction",
    "chowdhury_gopalan_synthetic",
    "griewank",
    "griewank_2d",
    "griewank_5d",
    "lower_bound_family",
    "min_norm_interpolant_norm",
    "objective_from_values",
    "park_lee_rkhs1d",
    "random_rkhs",
    "rkhs_objective",
]
