"""The Agent protocol every algorithm (ours or a third party's) implements.

An agent sees only the :class:`~hbo_envs.problem.Problem` and the rewards it receives:

>>> class Uniform:
...     name = "uniform"
...     def reset(self, problem, *, seed=None):
...         import numpy as np
...         self.n = problem.n
...         self.rng = np.random.default_rng(seed)
...     def act(self):
...         return int(self.rng.integers(self.n))
...     def update(self, action, reward):
...         pass
...     def posterior(self):
...         import numpy as np
...         return np.zeros(self.n), np.ones(self.n)
>>> isinstance(Uniform(), Agent)
True
>>> from agents import check_agent
>>> check_agent(Uniform())
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from hbo_envs.problem import Problem

__all__ = ["Agent"]


@runtime_checkable
class Agent(Protocol):
    """A bandit algorithm over a finite candidate set.

    ``reset(problem, seed=...)`` starts a new run; ``act()`` returns the index of the point
    to play; ``update(action, reward)`` feeds back the observed payoff; ``posterior()``
    returns ``(estimate, width)``, the agent's current estimate of ``f`` on every point and
    the half-width of its confidence band (shape ``(problem.n,)`` each, finite).

    Hyperparameters belong in ``__init__``; validation and all run state belong in
    ``reset``. Draw randomness only from one ``np.random.Generator`` seeded in ``reset``
    (same seed, same rewards -> same actions). :func:`agents.check_agent` checks all this.
    """

    name: str

    def reset(self, problem: Problem, *, seed: int | None = None) -> None: ...

    def act(self) -> int: ...

    def update(self, action: int, reward: float) -> None: ...

    def posterior(self) -> tuple[np.ndarray, np.ndarray]: ...
