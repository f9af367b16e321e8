"""Environments of Park & Lee (ECAI 2024), "Contextually Adaptive Algorithms for Gaussian
Process Bandit Optimization under Heavy-tailed Noise", §5 (synthetic data, Fig. 1)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hbo_envs.channels import SymmetricPareto
from hbo_envs.envs.base import GPBanditEnv
from hbo_envs.objectives import griewank_2d, griewank_5d, park_lee_rkhs1d
from hbo_envs.validation import check_choice

__all__ = ["ParkLeeEnv", "PARETO_SCALE"]

#: Default Pareto scale ``lambda_z`` per objective (the paper does not state it). Chosen so
#: that learning can show within the default ``T = 1000``: the noise's moment scale
#: ``nu^{1/(1+eps)}`` is 55 (eps = 0.2) / 18 (eps = 0.8) at ``lambda_z = 1``, about the
#: spread of the 1D function (58), but 28x / 9x the spread of Griewank (1.93). Measured
#: (5 seeds, T = 1000, R_T/T, experiment schedules) on Griewank2D eps = 0.2 for
#: lambda_z = 1 / 0.1 / 0.01: random 0.93 / 0.93 / 0.93, gp-ucb 0.93 / 0.80 / 0.37,
#: ca-tgp-ucb 0.94 / 0.93 / 0.90, mom-gp-ucb 0.94 / 0.93 / 0.85, tgp-ucb 0.94 / 0.93 / 0.92.
PARETO_SCALE = {"rkhs1d": 1.0, "griewank2d": 0.01, "griewank5d": 0.01}


def _draw(objective: str, lengthscale: float, rng: np.random.Generator) -> Any:
    """The objective of :class:`ParkLeeEnv` (a module function: the env pickles)."""
    if objective == "rkhs1d":
        return park_lee_rkhs1d(rng, lengthscale=lengthscale)
    if objective == "griewank2d":
        return griewank_2d(lengthscale=lengthscale)
    return griewank_5d(lengthscale=lengthscale)


class ParkLeeEnv(GPBanditEnv):
    """Park–Lee (2024) §5 synthetic environments with symmetrised Pareto noise (Fig. 1a–f).

    ## Description
    Objectives (``objective=``):

    - ``"rkhs1d"``: 1000 evenly spaced points on [-10, 10];
      ``f = sum_{i=1}^{10} a_i k(., c_i)``, ``a_i ~ 10(-1 + 2N(0,1))``, ``c_i ~ N(0, 3)``,
      SE kernel with lengthscale 1 (not stated in the paper). Exact RKHS norm.
    - ``"griewank2d"``: ``f = -Griewank`` on a 20 x 20 grid of ``[-5, 5]^2``; SE ``l = 1``.
    - ``"griewank5d"``: ``f = -Griewank`` on 5000 fixed draws from ``N(0, I_5)``; SE ``l = 1``.

    For Griewank, ``B`` is the exact norm of the minimum-norm interpolant
    ``sqrt(f^T K^{-1} f)`` (no jitter needed at these lengthscales). The paper does not say
    whether ``f`` is redrawn per seed; the 1D function is fixed (drawn from
    ``objective_seed``), the Griewank ones are deterministic.

    Noise: ``y = f(x) + zeta (z - E z)``, ``z ~ Pareto(1 + epsilon + 0.01, scale)``,
    ``zeta`` Rademacher; moment order ``alpha = epsilon`` in {0.2, 0.8}; ``v`` and ``nu``
    by exact quadrature. The Pareto scale ``lambda_z`` is not stated in the paper; the
    default (:data:`PARETO_SCALE`) is 1 on the 1D function and 0.01 on Griewank, chosen
    by measurement: at ``lambda_z = 1`` the noise's moment scale ``nu^{1/(1+eps)}``
    (55 at eps = 0.2, 18 at eps = 0.8) is about the 1D function's spread (58) but 28x / 9x
    Griewank's (1.93), and no agent learns Griewank within ``T = 1000`` (every R_T/T
    0.93–0.94, random 0.93); at 0.01 (``nu^{1/(1+eps)}`` 0.55 / 0.18, tails as heavy)
    every agent is below random (GP-UCB 0.37, MoM 0.85, CA-TGP 0.90, TGP 0.92 at
    eps = 0.2; 5 seeds).

    ## Action Space
    ``Discrete(n)`` with ``n`` = 1000, 400 or 5000.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The noisy payoff ``y_t`` (infinite variance: ``1 + epsilon + 0.01 <= 2``).

    ## Episode End
    Truncated after ``horizon`` rounds (default 1000; the paper does not state ``T``).

    ## Version History
    - v0: initial version (the Griewank envs' default ``lambda_z`` is 0.01, set before
      release; it was 1).

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Griewank2D-SymPareto-eps02-v0")
    >>> p = env.unwrapped.problem
    >>> p.n, p.alpha, round(p.B, 3)
    (400, 0.2, 6.611)
    """

    def __init__(
        self,
        objective: str = "rkhs1d",
        epsilon: float = 0.2,
        scale: float | None = None,
        horizon: int = 1000,
        objective_seed: int = 0,
        lengthscale: float = 1.0,
        redraw: bool = False,
        name: str = "",
    ) -> None:
        check_choice(
            type(self).__name__, "objective", objective, ("rkhs1d", "griewank2d", "griewank5d")
        )

        # a partial, not a closure: the env pickles (plain pickle) and deep-copies
        draw = functools.partial(_draw, objective, lengthscale)

        if scale is None:
            scale = PARETO_SCALE[objective]
        super().__init__(
            draw,
            SymmetricPareto(epsilon=epsilon, scale=scale),
            horizon,
            redraw,
            objective_seed,
            name or f"pl-{objective}-eps{epsilon}",
        )
