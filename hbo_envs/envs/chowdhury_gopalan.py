"""Environments of Chowdhury & Gopalan (NeurIPS 2019), "Bayesian Optimization under
Heavy-tailed Payoffs", §6 (synthetic data and the "effect of truncation" demo)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hbo_envs.channels import Pareto, Spike, StudentT
from hbo_envs.envs.base import GPBanditEnv
from hbo_envs.objectives import chowdhury_gopalan_synthetic, random_rkhs
from hbo_envs.validation import check_choice

__all__ = ["ChowdhuryGopalanSyntheticEnv", "TruncationDemoEnv"]


def _spike_demo_objective(rng: np.random.Generator) -> Any:
    """The Fig. 1f objective: SE (l = 0.2) kernel sum, 100 points, a_i ~ U[0, 1], max f = 1."""
    return random_rkhs(
        rng,
        {"name": "se", "lengthscale": 0.2},
        100,
        1,
        100,
        "positive",
        True,
        "spike-demo-se",
    )


class ChowdhuryGopalanSyntheticEnv(GPBanditEnv):
    """Chowdhury–Gopalan (2019) §6 synthetic heavy-tailed environments (Fig. 1a–1c).

    ## Description
    100 evenly spaced points on [0, 1]. ``f = sum_{i=1}^{100} a_i k(., x_i)`` with support
    points drawn uniformly from the candidates and the kernel SE ``l = 0.2`` (1a, 1b) or
    Matérn ``nu = 2.5, l = 0.2`` (1c); ``f`` is scaled so ``max|f| = 1`` (the authors'
    public code), so ``problem.sup_f = 1`` and ``problem.B`` is the exact RKHS norm
    ``sqrt(a^T K a)`` of the scaled function. "For each trial we evaluate on a different
    f": a new ``f`` is drawn at every ``reset(seed=...)``.

    Reward channels:

    - ``noise="student_t"`` (1a, 1c): ``y = f(x) + T``, ``T ~ t(3)``, ``a_i ~ U[-1, 1]``;
      ``alpha = 1`` and ``v = B^2 + 3 = 4`` with the paper's ``B = max|f| = 1``.
    - ``noise="pareto"`` (1b): ``y ~ Pareto(2, f(x)/2)``, ``a_i ~ U[0, 1]`` (so ``f > 0``);
      ``alpha = 0.9``, ``v = 1 / (2^0.9 * 0.1) ~ 5.36``.

    ## Action Space
    ``Discrete(100)``.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The noisy payoff ``y_t``.

    ## Episode End
    Truncated after ``horizon`` rounds (default ``2 * 10^4``, the paper's text; the
    authors' public scripts use ``T = 1000``).

    ## Arguments
    ``kernel`` (``"se"`` | ``"matern"``), ``noise`` (``"student_t"`` | ``"pareto"``),
    ``horizon``, ``redraw`` (default true), ``objective_seed``.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/RKHS-SE-StudentT-v0")
    >>> _ = env.reset(seed=1)
    >>> p = env.unwrapped.problem
    >>> p.n, p.alpha, round(p.v, 6), round(p.sup_f, 12)
    (100, 1.0, 4.0, 1.0)
    """

    def __init__(
        self,
        kernel: str = "se",
        noise: str = "student_t",
        horizon: int = 20_000,
        redraw: bool = True,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        check_choice(owner, "kernel", kernel, ("se", "matern"))
        check_choice(owner, "noise", noise, ("student_t", "pareto"))
        coeffs = "symmetric" if noise == "student_t" else "positive"
        channel = (
            StudentT(df=3.0, alpha=1.0) if noise == "student_t" else Pareto(shape=2.0, alpha=0.9)
        )

        # a partial, not a closure: the env pickles (plain pickle) and deep-copies
        draw = functools.partial(chowdhury_gopalan_synthetic, kernel=kernel, coeffs=coeffs)
        # U[0, 1] coefficients on a kernel positive over [0, 1] (l = 0.2): f > 0 always.
        draw.positive_values = coeffs == "positive"  # type: ignore[attr-defined]

        super().__init__(
            draw, channel, horizon, redraw, objective_seed, name or f"cg-{kernel}-{noise}"
        )


class TruncationDemoEnv(GPBanditEnv):
    """The "effect of truncation" demo of Chowdhury–Gopalan (2019) §6 (Fig. 1f).

    ## Description
    ``f`` is a kernel sum (SE, ``l = 0.2``, 100 points on [0, 1]) with ``a_i ~ U[0, 1]``,
    scaled so ``max f = 1``: it lies in ``(0, 1]`` ("normalize it between [0, 1]") and
    stays an exact kernel sum, so its RKHS norm is exact. The function is fixed (drawn
    from ``objective_seed``): the paper averages "over 50 randomizations of noise".
    Rewards are ``y = f(x) + eta`` where ``eta`` is ``+-10`` (uniformly) at one point
    chosen uniformly at random at every reset, and ``0`` everywhere else.

    ``alpha = 1``, ``v = (|1 + 10|^2 + |1 - 10|^2) / 2 = 101``, ``nu = 100``. The paper's
    truncated GP-UCB uses ``b_t = t^{1/4}`` (the TGP-UCB level with ``v = 1``), not the
    honest ``v`` — an agent-side choice.

    ## Action Space
    ``Discrete(100)``.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    ``f(x_t)`` plus the spike where it sits.

    ## Episode End
    Truncated after ``horizon = 10^4`` rounds (the paper's ``T``).

    ``sign`` chooses when the spike's sign is drawn (see :mod:`hbo_envs.channels.spike`):
    ``"per_sample"`` (``hbo/RKHS-SE-Spike-v0``, a valid zero-mean noise) or
    ``"per_episode"`` (``hbo/RKHS-SE-SpikeFixedSign-v0``: a persistent offset at one point,
    the reading under which the paper's Fig. 1f shows GP-UCB's estimate staying wrong).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/RKHS-SE-Spike-v0")
    >>> round(env.unwrapped.problem.v, 6)
    101.0
    """

    def __init__(
        self,
        horizon: int = 10_000,
        magnitude: float = 10.0,
        sign: str = "per_sample",
        objective_seed: int = 0,
        redraw: bool = False,
        name: str = "",
    ) -> None:
        draw = _spike_demo_objective  # a module function, not a closure: the env pickles

        super().__init__(
            draw,
            Spike(magnitude=magnitude, alpha=1.0, sign=sign),
            horizon,
            redraw,
            objective_seed,
            name or "cg-spike",
        )
