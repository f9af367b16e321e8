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

__all__ = ["Agent", "PosteriorAgent"]


@runtime_checkable
class Agent(Protocol):
    """A bandit algorithm over a finite candidate set.

    ``reset(problem, seed=...)`` starts a new run; ``act()`` returns the index of the point
    to play; ``update(action, reward)`` feeds back the observed payoff.

    ``posterior()`` is **optional** — one rule for the whole project (this protocol,
    :func:`agents.check_agent` and the harness): an agent without it runs everywhere and
    its ``coverage`` is NaN ("no confidence band"); an agent *with* it must follow
    :class:`PosteriorAgent` (finite estimate, finite non-negative width, shape
    ``(problem.n,)``), which ``check_agent`` checks and the harness enforces — a NaN
    posterior fails its cell with an error naming the agent, it is never scored.

    ``diagnostics()`` is **optional** too: a mapping of named numbers about the run so
    far. The harness reads one key, ``"altered_fraction"``: the share of the rewards
    received that the agent's robust estimator altered (truncated to 0, or dropped by a
    median of means), a real in ``[0, 1]``, recorded in the ``altered`` column at the
    coverage checkpoints and ``T`` (NaN for an agent without it; anything else fails the
    cell). The heavy-tailed reference agents have it, so a truncation that never fires is
    seen on the result pages, not guessed.

    ``posterior_sd()`` is **optional**: the posterior standard deviation ``sigma`` at every
    point (shape ``(problem.n,)``, finite, ``>= 0``), for a band ``estimate +- sigma``
    beside the agent's own (the ``coverage_sigma`` column; Chowdhury–Gopalan Fig. 1f plots
    ``mu_T +- sigma_T``). NaN without it.

    Hyperparameters belong in ``__init__``; validation and all run state belong in
    ``reset``. Draw randomness only from one ``np.random.Generator`` seeded in ``reset``
    (same seed, same rewards -> same actions). :func:`agents.check_agent` checks all this.
    """

    name: str

    def reset(self, problem: Problem, *, seed: int | None = None) -> None: ...

    def act(self) -> int: ...

    def update(self, action: int, reward: float) -> None: ...


@runtime_checkable
class PosteriorAgent(Agent, Protocol):
    """An :class:`Agent` with the optional ``posterior()``.

    ``posterior()`` returns ``(estimate, width)``: the agent's current estimate of ``f``
    on every point and the half-width of its confidence band, two float arrays of shape
    ``(problem.n,)``, the estimate finite and the width finite and non-negative. The
    harness uses it for the confidence-coverage diagnostic (Chowdhury–Gopalan Fig. 1f).
    """

    def posterior(self) -> tuple[np.ndarray, np.ndarray]: ...
