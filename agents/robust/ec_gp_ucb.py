"""EC-GP-UCB (enlarged confidence) of Bogunovic & Krause (NeurIPS 2021), "Misspecified
Gaussian Process Bandit Optimization" — **the width is recollection, unverified**.

``../shared/papers/beyond/bogunovic-krause-2021-misspecified-gp-bandits.md`` §2 marks the
algorithm's width ``beta_t + epsilon sqrt(t) / sqrt(lambda)`` as *(recollection,
unverified constants)*: the setting (``||f - f~||_inf <= epsilon``) and the algorithm's role
(EC-GP-UCB needs ``epsilon``) are verified, the exact width is not. This agent implements
that recollected width and is labelled so; do not cite its numbers as the paper's.
"""

from __future__ import annotations

import math
from typing import Any

from agents.gp.gp_ucb import GPUCB
from hbo_envs.validation import check_real

__all__ = ["ECGPUCB"]


class ECGPUCB(GPUCB):
    """GP-UCB with a misspecification-enlarged width (Bogunovic & Krause 2021, note §2).

    ``x_t = argmax_x mu_{t-1}(x) + (beta_t + epsilon sqrt(t) / sqrt(lambda)) sigma_{t-1}(x)``
    with GP-UCB's ``beta_t`` (:class:`~agents.gp.gp_ucb.GPUCB`, either schedule set) and
    the exact GP posterior of the raw rewards: one engine update per round, as GP-UCB.
    The ``epsilon sqrt(t) / sqrt(lambda)`` term (the bias a sup-norm misspecification
    ``epsilon`` induces in ``mu``) is **recollection, unverified** (module docstring).

    A stationary corruption ``|c(x)| <= epsilon`` (Han–Scarlett attacks) is exactly such a
    misspecification. Default ``epsilon``: ``problem.C / problem.horizon`` when the budget
    is declared (the average per-round corruption), else ``0.1 * problem.sup_f``
    (hbo-bench's fixed guess; pass ``epsilon=`` to set it).

    Parameters: as :class:`~agents.gp.gp_ucb.GPUCB` plus ``epsilon >= 0``.

    >>> import numpy as np
    >>> from hbo_envs.kernels import SquaredExponential
    >>> from hbo_envs.problem import Problem
    >>> X = np.linspace(0, 1, 4)[:, None]
    >>> p = Problem(points=X, kernel_matrix=SquaredExponential(0.2)(X),
    ...             kernel=SquaredExponential(0.2), B=1, alpha=1, v=1.01, nu=0.01, sup_f=1,
    ...             horizon=10)
    >>> agent = ECGPUCB(epsilon=0.5, lam=4.0, beta=1.0); agent.reset(p, seed=0)
    >>> float(agent.posterior()[1][0])        # (1 + 0.5 * sqrt(1) / 2) * sigma_0 = 1.25
    1.25
    """

    name = "ec-gp-ucb"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        R: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta, R=R)
        self.epsilon = epsilon

    def _setup(self, problem: Any) -> None:
        super()._setup(problem)
        if self.epsilon is not None:
            self.epsilon_ = check_real(self._owner, "epsilon", self.epsilon, 0.0, None, "left")
        elif problem.C is not None:
            self.epsilon_ = float(problem.C) / max(int(problem.horizon), 1)
        else:
            self.epsilon_ = 0.1 * self._constant(problem, "sup_f", override="epsilon")

    def _beta_t(self) -> float:
        # beta_t + epsilon sqrt(t) / sqrt(lambda)  (note §2, recollection)
        return super()._beta_t() + self.epsilon_ * math.sqrt(self.t_) / math.sqrt(self.lam_)
