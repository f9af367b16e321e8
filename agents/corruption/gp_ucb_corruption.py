"""GP-UCB with enlarged confidence bounds for a known corruption level C:
Bogunovic, Krause & Scarlett (AISTATS 2020), Algorithm 1."""

from __future__ import annotations

import math
from typing import Any

from agents.corruption._common import known_budget, lemma1_beta, noise_and_range
from agents.gp.base import GPUCBAgent

__all__ = ["GPUCBCorruption"]


class GPUCBCorruption(GPUCBAgent):
    """Algorithm 1 of Bogunovic et al. (2020): GP-UCB with known total corruption ``C``.

    Line 2 (eq. (13)): ``x_t = argmax_x mu~_{t-1}(x) + beta_t^{(A1)} sigma_{t-1}(x)`` with
    the posterior of the *corrupted* rewards (eq. (9)) and the usual variance (eq. (5)),
    both from the shared engine, and (Lemma 3)::

        beta_t^{(A1)} = beta_t + lambda^{-1/2} C,
        beta_t        = B + R lambda^{-1/2} sqrt(2 (gamma_{t-1} + ln(1/delta)))   (eq. (7))

    ``B = problem.B``, ``R`` the noise scale (default ``problem.nu ** (1/(1+alpha))``,
    ``sigma`` for Gaussian noise), ``gamma_{t-1}`` the realized information gain
    (DESIGN.md). ``schedule="experiment"`` equals ``"theory"``: the paper publishes no
    other experiment schedule (DESIGN.md, "Resolved ambiguities").

    Parameters
    ----------
    schedule, lam, delta, beta
        See :class:`~agents.gp.base.GPUCBAgent`; ``beta`` overrides ``beta_t^{(A1)}``.
    C : float or None
        The known corruption budget (default ``problem.C``; ``None`` there means the
        setting declares no corruption, and ``C = 0``).
    R : float or None
        Noise scale in ``beta_t``.

    >>> import gymnasium as gym, hbo_envs, numpy as np
    >>> env = gym.make("hbo/Corrupted-Fig1-v0")
    >>> agent = GPUCBCorruption()
    >>> agent.reset(env.unwrapped.problem, seed=0)
    >>> p = env.unwrapped.problem                    # B = 1.357, sigma = 0.1, delta = 0.1
    >>> beta_1 = p.B + 0.1 * (2 * np.log(10)) ** 0.5 + 3.5
    >>> agent.C_, bool(np.isclose(agent.posterior()[1].max(), beta_1))   # sigma_0 = 1
    (3.5, True)
    """

    name = "gp-ucb-corruption"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        C: float | None = None,
        R: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta)
        self.C = C
        self.R = R

    def _setup(self, problem: Any) -> None:
        self.C_ = known_budget(self, problem, self.C)
        if self.beta is None:
            self.B_, self.R_, _ = noise_and_range(self, problem, self.R, 1.0)
        self.beta_ = self._make_beta()

    def _default_beta(self, t: int) -> float:
        # Alg. 1, line 2 / Lemma 3: beta_t^{(A1)} = beta_t + lambda^{-1/2} C, beta_t of eq. (7).
        return lemma1_beta(
            self.B_,
            self.R_,
            self.lam_,
            self.engine_.info_gain,
            math.log(1.0 / self.delta_),
            self.C_,
        )

    def _observe(self, arm: int, reward: float) -> None:
        # Line 4: include (x_t, y~_t) in mu~ (eq. (9)) and sigma (eq. (5)).
        self.engine_.observe(arm, reward)
