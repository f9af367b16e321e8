"""The uniform-random agent: the floor every table, plot and reproduction shows.

A reference algorithm is only a yardstick if it beats uniform play where the theory says
it must; this agent is that floor. It plays every round an arm drawn uniformly from the
``n`` candidate points with its own seeded generator and ignores the rewards for its
decisions. Its expected regret per round is ``f* - mean_x f(x)`` whatever ``t``: linear.

``posterior()`` reports what uniform play learns: the empirical mean ``ȳ_i`` of the
rewards seen at each arm and a confidence half-width valid under the problem's moment
assumption (no sub-Gaussian tails). For ``n_i`` independent observations with central
moment ``E|η|^{1+α} ≤ ν`` (``1 + α ∈ (1, 2]``), von Bahr–Esseen's inequality gives
``E|Σ η_s|^{1+α} ≤ 2 n_i ν`` and Markov's inequality then

    P(|ȳ_i − f(x_i)| ≥ w) ≤ 2 ν / (n_i^α w^{1+α}),   so   w_i = (2ν / (δ n_i^α))^{1/(1+α)}

is a ``1 − δ`` half-width per arm. An arm never played has estimate ``0`` and width
``sup_f`` (``|f| ≤ sup_f``, so the band holds exactly).

>>> import gymnasium as gym, hbo_envs, agents
>>> env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=50)
>>> _ = env.reset(seed=0)
>>> agent = agents.make("random")
>>> agent.reset(env.unwrapped.problem, seed=0)
>>> a = agent.act(); 0 <= a < env.unwrapped.problem.n
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hbo_envs.validation import check_index, check_real, check_reward, check_seed

__all__ = ["RandomAgent"]


class RandomAgent:
    """Uniform play over the candidate points (registered as ``random``).

    Parameters
    ----------
    delta : float
        Level of the per-arm confidence half-width reported by :meth:`posterior`
        (in ``(0, 1]``, default 0.1). It does not affect the actions.
    """

    name = "random"

    def __init__(self, *, delta: float = 0.1) -> None:
        self.delta = delta

    def get_params(self) -> dict[str, Any]:
        return {"delta": self.delta}

    def __repr__(self) -> str:
        return f"RandomAgent(delta={self.delta!r})"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start a new run on ``problem`` with its own generator seeded by ``seed``."""
        owner = type(self).__name__
        check_seed(owner, seed)
        self.delta_ = check_real(owner, "delta", self.delta, 0.0, 1.0, "right")
        self.n_ = int(problem.n)
        self.alpha_ = float(problem.alpha)
        nu, sup_f = float(problem.nu), float(problem.sup_f)
        if not (math.isfinite(nu) and math.isfinite(sup_f)):
            raise ValueError(
                f"{owner} needs finite problem.nu and problem.sup_f for its confidence "
                f"widths; got nu={problem.nu!r}, sup_f={problem.sup_f!r}."
            )
        self.nu_, self.sup_f_ = nu, sup_f
        self.rng_ = np.random.default_rng(seed)
        self.counts_ = np.zeros(self.n_)
        self.sums_ = np.zeros(self.n_)
        self._pending: int | None = None

    def act(self) -> int:
        """A uniformly drawn arm (the same until ``update`` is called)."""
        if self._pending is None:
            self._pending = int(self.rng_.integers(self.n_))
        return self._pending

    def update(self, action: int, reward: float) -> None:
        """Record ``reward`` at ``action`` (for :meth:`posterior` only)."""
        owner = type(self).__name__
        a = check_index(owner, "action", action, self.n_)
        y = check_reward(owner, reward)
        self.counts_[a] += 1.0
        self.sums_[a] += y
        self._pending = None

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ȳ_i, w_i)`` per arm: empirical means and the von Bahr–Esseen half-widths."""
        n = self.counts_
        played = n > 0
        est = np.divide(self.sums_, n, out=np.zeros(self.n_), where=played)
        p = 1.0 + self.alpha_
        w = np.full(self.n_, self.sup_f_)
        w[played] = (2.0 * self.nu_ / (self.delta_ * n[played] ** self.alpha_)) ** (1.0 / p)
        return est, w
