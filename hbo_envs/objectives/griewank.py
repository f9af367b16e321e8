"""Negated Griewank objectives of Park–Lee (2024) §5.

Griewank is a minimisation benchmark,
``G(x) = 1 + (1/4000) sum_i x_i^2 - prod_i cos(x_i / sqrt(i))``; the envs maximise
``f = -G`` (DESIGN.md "Resolved ambiguities"), so ``f* = 0`` at ``x = 0`` when the origin is
a candidate. The candidate sets are Park–Lee's:

- 2D: a 20 x 20 grid on ``[-5, 5]^2`` (400 points);
- 5D: 5000 points drawn from ``N(0, I_5)`` with the fixed seed ``GRIEWANK5D_SEED``.

Griewank is not a kernel sum, so ``B`` is the RKHS norm of the minimum-norm interpolant
``sqrt(f^T K^{-1} f)`` over the candidate set (see
:func:`~hbo_envs.objectives.base.min_norm_interpolant_norm`). The SE lengthscale is not
stated in the paper; the defaults are chosen so that ``K`` is well conditioned enough for
the norm to be computed without jitter (2D: ``l = 1``, ``B ~ 6.6``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from hbo_envs.kernels import SquaredExponential
from hbo_envs.objectives.base import Objective, objective_from_values
from hbo_envs.validation import MAX_LENGTHSCALE, MIN_LENGTHSCALE, check_int, check_real

MAX_POINTS = 20_000
"""Largest candidate set of an objective: its ``n x n`` kernel matrix is 3.2 GB at this size."""
MAX_GRID = 141
"""Largest 2D grid side (``141^2 = 19881 <= MAX_POINTS`` points)."""

__all__ = ["griewank", "griewank_2d", "griewank_5d", "GRIEWANK5D_SEED"]

GRIEWANK5D_SEED = 20240807
"""Seed of the 5000 Gaussian candidate points of the 5D Griewank problem."""


def griewank(X: np.ndarray) -> np.ndarray:
    """The (un-negated) Griewank function, vectorised over the rows of ``X``.

    >>> float(griewank(np.zeros((1, 3)))[0])
    0.0
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    i = np.arange(1, X.shape[1] + 1)
    return 1.0 + (X**2).sum(axis=1) / 4000.0 - np.prod(np.cos(X / np.sqrt(i)), axis=1)


def griewank_2d(grid: int = 20, lengthscale: float = 1.0) -> Objective:
    """``f = -Griewank`` on a ``grid x grid`` grid of ``[-5, 5]^2`` (Park–Lee §5).

    Parameters are validated before the per-process cache is consulted (``True == 1``
    would otherwise hit the cached ``lengthscale=1`` entry).
    """
    grid = check_int("griewank_2d", "grid", grid, 2, MAX_GRID)
    lengthscale = check_real(
        "griewank_2d", "lengthscale", lengthscale, MIN_LENGTHSCALE, MAX_LENGTHSCALE, "both"
    )
    return _griewank_2d(grid, lengthscale)


@lru_cache(maxsize=8)
def _griewank_2d(grid: int, lengthscale: float) -> Objective:
    g = np.linspace(-5.0, 5.0, grid)
    points = np.array([(a, b) for a in g for b in g])
    return objective_from_values(
        "griewank2d",
        points,
        -griewank(points),
        SquaredExponential(lengthscale),
        params={"grid": grid, "lengthscale": lengthscale, "domain": "[-5,5]^2"},
    )


def griewank_5d(
    n_points: int = 5000, lengthscale: float = 1.0, seed: int = GRIEWANK5D_SEED
) -> Objective:
    """``f = -Griewank`` on ``n_points`` draws from ``N(0, I_5)`` (Park–Lee §5).

    Cached per process: the 5000 x 5000 kernel matrix (200 MB) is built once. At most
    :data:`MAX_POINTS` points (the kernel matrix grows as ``n^2``).
    """
    n_points = check_int("griewank_5d", "n_points", n_points, 2, MAX_POINTS)
    lengthscale = check_real(
        "griewank_5d", "lengthscale", lengthscale, MIN_LENGTHSCALE, MAX_LENGTHSCALE, "both"
    )
    seed = check_int("griewank_5d", "seed", seed, 0, 2**63 - 1)
    return _griewank_5d(n_points, lengthscale, seed)


@lru_cache(maxsize=4)
def _griewank_5d(n_points: int, lengthscale: float, seed: int) -> Objective:
    points = np.random.default_rng(seed).standard_normal((n_points, 5))
    return objective_from_values(
        "griewank5d",
        points,
        -griewank(points),
        SquaredExponential(lengthscale),
        params={"n_points": n_points, "lengthscale": lengthscale, "seed": seed},
    )
