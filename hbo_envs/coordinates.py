"""Coordinates in, coordinates out: the bandit envs for Bayesian-optimisation code.

A BO algorithm proposes points ``x`` in a domain, not arm indices. Two adapters:

- :class:`CoordinateBandit` — the env as a BO *test function*: ``bounds``, ``dim``,
  ``optimal_value`` and ``optimizers`` stated the way BoTorch's
  ``botorch.test_functions.SyntheticTestFunction`` states them (``bounds`` a ``(2, d)`` array
  of lower/upper rows; ``_optimal_value``; ``_optimizers`` a list of tuples), and
  ``evaluate(x)``: play the candidate nearest to ``x`` (exactly ``x`` when ``x`` is one)
  for one round and return ``(x_played, y)``.
- :class:`AskTellAgent` — any ask/tell optimiser (``ask() -> x``, ``tell(x, y)``) as an
  :class:`agents.protocol.Agent`, so the harness and the leaderboards run it. It tells the
  optimiser the candidate that was *played* (the nearest to the asked point), and the asked
  point too when ``tell`` takes ``asked=``.

The domain is the candidate set ``problem.points`` (a finite subset of the papers' domain,
e.g. 100 points of ``[0, 1]``); ``bounds`` is its bounding box. Nearest is Euclidean
(:func:`nearest_index`); ties go to the lower index.

>>> from hbo_envs.coordinates import CoordinateBandit
>>> bench = CoordinateBandit("hbo/RKHS-SE-StudentT-v0", horizon=3)
>>> bench.bounds.tolist(), bench.dim
([[0.0], [1.0]], 1)
>>> _ = bench.reset(seed=0)
>>> x, y = bench.evaluate([0.1234])      # plays the nearest of the 100 grid points
>>> round(float(x[0]), 4)
0.1212
>>> bench.optimal_value == bench.env.objective.f_star
True
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from hbo_envs.validation import check_int, param_error

__all__ = ["AskTellAgent", "CoordinateBandit", "nearest_index"]


def nearest_index(points: np.ndarray, x: Any, *, owner: str = "nearest_index") -> int:
    """The index of the candidate nearest to ``x`` (Euclidean; exact match first).

    ``x`` is a point of the domain: shape ``(d,)`` (or a number when ``d = 1``), finite.
    When ``x`` equals a candidate its index is returned exactly; otherwise the
    candidate minimising ``||points[i] - x||`` (the lowest index on a tie).

    >>> pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> nearest_index(pts, [1.0, 0.0]), nearest_index(pts, [0.1, 0.8])
    (1, 2)
    """
    d = points.shape[1]
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        arr = None
    if (
        arr is None
        or isinstance(x, bool | str)
        or any(isinstance(v, bool | np.bool_) for v in np.ravel(np.asarray(x, dtype=object)))
        or arr.shape != (d,)
        or not np.all(np.isfinite(arr))
    ):
        raise param_error(owner, "x", f"a finite point of the domain, shape ({d},)", x)
    exact = np.flatnonzero(np.all(points == arr, axis=1))
    if exact.size:
        return int(exact[0])
    return int(np.argmin(np.sum((points - arr) ** 2, axis=1)))


class CoordinateBandit:
    """A registered env as a BO test function over its candidate set (see module doc).

    Parameters
    ----------
    env : str or gymnasium.Env
        A registered id (built with ``gym.make(env, **make_kwargs)``) or a made env.
    **make_kwargs
        Passed to ``gym.make`` (``horizon``, ``C``, ...).

    Attributes
    ----------
    bounds : ndarray, shape (2, d)
        Lower and upper corner of the candidates' bounding box (BoTorch's ``bounds``).
    dim : int
        ``d``.
    optimal_value : float
        ``f* = max_x f(x)`` over the candidates (BoTorch's ``optimal_value``); the bench
        *maximises*, like BoTorch with ``negate=False``.
    optimizers : list[tuple[float, ...]]
        Every candidate attaining ``f*`` (BoTorch's ``_optimizers``).
    candidates : ndarray, shape (n, d)
        ``problem.points``: the points ``evaluate`` can play.

    An env whose ``f`` changes every round (``hbo/StockPicking-v0``, Park–Lee App. D) has
    no fixed optimum: ``optimal_value`` is then that of ``env.objective`` and the round's
    best is ``last_info["best"]``.

    ``evaluate`` is one round of the episode; ``last_info`` holds the round's ``info``
    (``regret``, ``f``, ... — for the experimenter, not for the optimiser).
    """

    def __init__(self, env: str | gym.Env, **make_kwargs: Any) -> None:
        if isinstance(env, str):
            import hbo_envs  # noqa: F401  (registers the ids)

            if env not in gym.registry:
                raise param_error(
                    "CoordinateBandit", "env", "a registered id (hbo_envs.ENV_IDS) or an env", env
                )
            env = gym.make(env, **make_kwargs)
        elif make_kwargs:
            raise param_error(
                "CoordinateBandit", "make_kwargs", "empty when an env object is given", make_kwargs
            )
        if not isinstance(getattr(env, "unwrapped", None), gym.Env) or not hasattr(
            env.unwrapped, "problem"
        ):
            raise param_error("CoordinateBandit", "env", "an hbo env (with a problem)", env)
        self.env = env.unwrapped
        self.last_info: dict[str, Any] = {}
        self._refresh()

    def _refresh(self) -> None:
        points = np.asarray(self.env.problem.points, dtype=float)
        self.candidates = points
        self.dim = int(points.shape[1])
        self.bounds = np.stack([points.min(axis=0), points.max(axis=0)])
        f = np.asarray(self.env.objective.values, dtype=float)
        self.optimal_value = float(self.env.objective.f_star)
        self.optimizers = [tuple(float(v) for v in points[i]) for i in np.flatnonzero(f == f.max())]

    @property
    def problem(self) -> Any:
        """The env's :class:`~hbo_envs.problem.Problem` (what an optimiser may know)."""
        return self.env.problem

    def reset(self, seed: int | None = None) -> CoordinateBandit:
        """Start an episode (an env that redraws ``f`` per seed redraws it here)."""
        self.env.reset(seed=seed)
        self._refresh()
        return self

    def index(self, x: Any) -> int:
        """:func:`nearest_index` of ``x`` among the candidates."""
        return nearest_index(self.candidates, x, owner="CoordinateBandit")

    def evaluate(self, x: Any) -> tuple[np.ndarray, float]:
        """Play the candidate nearest to ``x`` for one round: ``(x_played, y)``."""
        i = self.index(x)
        _, y, _, _, self.last_info = self.env.step(i)
        return self.candidates[i].copy(), float(y)


class AskTellAgent:
    """An ask/tell optimiser in coordinates as an :class:`agents.protocol.Agent`.

    ``factory(problem, bounds, seed)`` builds the optimiser at every ``reset``; it must
    have ``ask() -> x`` (a point of the domain) and ``tell(x, y)``. (No ``posterior()``:
    the protocol's posterior is optional, and the harness reports no band.)

    **What is played and what is told.** The bench plays only candidates (the finite set
    ``problem.points``): ``act`` plays the candidate *nearest* to the asked ``x``
    (:func:`nearest_index`), and ``update`` tells the optimiser that **played** point and its
    payoff, ``tell(x_played, y)``. The payoff belongs to ``x_played``, not to the asked
    point: telling ``(x_asked, y)`` would teach the optimiser the value of a point that was
    never evaluated. When the optimiser's ``tell`` also takes an ``asked`` keyword (or
    ``**kwargs``), it is called as ``tell(x_played, y, asked=x_asked)`` with the point
    ``ask()`` returned, so an optimiser that keeps the asked trial open can close it: e.g.
    Optuna marks the asked trial failed and adds the played point as a completed trial
    when the two differ (``examples/optuna_agent.py``). ``x_played`` equals ``x_asked``
    exactly when the asked point is a candidate.

    >>> import numpy as np
    >>> class RandomSearch:
    ...     def __init__(self, problem, bounds, seed):
    ...         self.rng, self.bounds = np.random.default_rng(seed), bounds
    ...     def ask(self):
    ...         return self.rng.uniform(self.bounds[0], self.bounds[1])
    ...     def tell(self, x, y, *, asked):
    ...         assert x.shape == asked.shape   # x: the candidate played, asked: ask()'s point
    >>> from agents import check_agent
    >>> check_agent(AskTellAgent(RandomSearch, name="random-search"))
    """

    def __init__(
        self,
        factory: Callable[[Any, np.ndarray, int | None], Any],
        *,
        name: str = "ask-tell",
    ) -> None:
        if not callable(factory):
            allowed = "a callable (problem, bounds, seed) -> optimiser"
            raise param_error("AskTellAgent", "factory", allowed, factory)
        if not isinstance(name, str) or not name:
            raise param_error("AskTellAgent", "name", "a non-empty string", name)
        self.factory = factory
        self.name = name

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Build a fresh optimiser for ``problem`` (its ``bounds``: the candidates' box)."""
        if seed is not None:
            seed = check_int("AskTellAgent", "seed", seed, 0, 2**63 - 1)
        self.points = np.asarray(problem.points, dtype=float)
        self.bounds = np.stack([self.points.min(axis=0), self.points.max(axis=0)])
        self.optimizer = self.factory(problem, self.bounds.copy(), seed)
        for method in ("ask", "tell"):
            if not callable(getattr(self.optimizer, method, None)):
                raise param_error(
                    "AskTellAgent", "factory", f"a factory of objects with {method}()", self.factory
                )
        self._tell_asked = _takes_keyword(self.optimizer.tell, "asked")
        self.asked: np.ndarray | None = None  # the last point ask() returned

    def act(self) -> int:
        """The index of the candidate nearest to the optimiser's ``ask()``."""
        x = self.optimizer.ask()
        i = nearest_index(self.points, x, owner="AskTellAgent.ask()")
        self.asked = np.asarray(x, dtype=float).reshape(-1).copy()
        return i

    def update(self, action: int, reward: float) -> None:
        """``tell(x_played, reward[, asked=x_asked])``: the played candidate (see the class)."""
        if not isinstance(action, numbers.Integral) or isinstance(action, bool):
            raise param_error("AskTellAgent", "action", "an arm index (int)", action)
        played = self.points[int(action)].copy()
        if self._tell_asked:
            asked = played.copy() if self.asked is None else self.asked
            self.optimizer.tell(played, float(reward), asked=asked)
        else:
            self.optimizer.tell(played, float(reward))
        self.asked = None


def _takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` accepts the keyword argument ``name`` (by name or through ``**kw``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: the two-argument call
        return False
    return any(
        p.kind is p.VAR_KEYWORD
        or (p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        for p in params
    )
