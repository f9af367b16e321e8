"""``check_agent``: the public conformance checker for agents (ours and third parties').

Run it on your agent before submitting it to a leaderboard::

    from agents import check_agent
    check_agent(MyAgent())                   # on a small built-in problem
    check_agent(MyAgent(), env.unwrapped.problem, rounds=100)

It raises :class:`AgentCheckError` (an ``AssertionError``) naming the first violated rule:

1. the object implements the :class:`~agents.protocol.Agent` protocol and has a
   non-empty string ``name``;
2. ``reset(problem, seed=...)`` accepts the seed as a keyword;
3. ``act()`` returns an integer (Python or NumPy) in ``[0, problem.n)``;
4. ``posterior()`` is optional (one rule, :mod:`agents.protocol`); when the agent has it,
   it returns two float arrays of shape ``(problem.n,)``, the estimate finite and the
   width finite and non-negative, before and after every update;
5. same seed and same rewards give the same actions and posterior (bit for bit), and a
   second ``reset`` starts from scratch (no state leaks between runs);
6. extreme payoffs (``+-1e12``) leave ``act()`` valid and ``posterior()`` finite;
7. the problem is not mutated (arrays, constants, metadata);
8. ``diagnostics()`` and ``posterior_sd()`` are optional (:mod:`agents.protocol`); when
   present, ``diagnostics()`` returns a mapping whose ``"altered_fraction"`` (if any) is a
   real in ``[0, 1]``, and ``posterior_sd()`` a finite non-negative array of shape
   ``(problem.n,)``, before and after every update.

>>> from agents import check_agent, make
>>> check_agent(make("gp-ucb"))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.protocol import Agent
from hbo_envs.validation import ParameterTypeError, check_index

__all__ = ["AgentCheckError", "check_agent", "default_check_problem"]


class AgentCheckError(AssertionError):
    """An agent violates the protocol (the message names the rule and the fix)."""


def default_check_problem(horizon: int = 200) -> Any:
    """A small problem for :func:`check_agent`: 20 points on [0, 1], SE kernel ``l = 0.2``."""
    from hbo_envs.kernels import SquaredExponential
    from hbo_envs.problem import Problem

    X = np.linspace(0.0, 1.0, 20)[:, None]
    kern = SquaredExponential(0.2)
    K = kern(X)
    a = np.random.default_rng(12345).uniform(-1, 1, 20)
    f = K @ a
    scale = 1.0 / np.max(np.abs(f))
    a, f = a * scale, f * scale
    return Problem(
        points=X,
        kernel_matrix=K,
        kernel=kern,
        B=float(np.sqrt(a @ K @ a)),
        alpha=1.0,
        v=4.0,
        nu=3.0,
        sup_f=1.0,
        horizon=horizon,
        noise_scale=1.0,
        name="check-agent-se20",
        meta={"f": "kernel sum, max|f| = 1", "noise": "student_t(3)"},
    )


def _fail(msg: str) -> None:
    raise AgentCheckError(msg)


def _snapshot(problem: Any) -> dict[str, Any]:
    snap: dict[str, Any] = {}
    for name in ("B", "alpha", "v", "nu", "sup_f", "horizon", "C", "noise_scale", "name"):
        snap[name] = getattr(problem, name, None)
    snap["points"] = np.array(problem.points, copy=True)
    snap["kernel_matrix"] = np.array(problem.kernel_matrix, copy=True)
    snap["meta"] = repr(getattr(problem, "meta", None))
    return snap


def _check_posterior(agent: Any, n: int, when: str) -> tuple[np.ndarray, np.ndarray] | None:
    if not callable(getattr(agent, "posterior", None)):
        return None  # posterior() is optional (agents.protocol)
    out = agent.posterior()
    if not isinstance(out, tuple) or len(out) != 2:
        _fail(f"posterior() {when} must return a tuple (estimate, width); got {type(out)}.")
    est, width = (np.asarray(x) for x in out)
    for label, arr in (("estimate", est), ("width", width)):
        if arr.shape != (n,):
            _fail(f"posterior() {when}: {label} must have shape ({n},); got {arr.shape}.")
        if not np.issubdtype(arr.dtype, np.floating) and not np.issubdtype(arr.dtype, np.integer):
            _fail(f"posterior() {when}: {label} must be a real array; got dtype {arr.dtype}.")
        if not np.all(np.isfinite(arr)):
            _fail(f"posterior() {when}: {label} contains NaN or infinite values.")
    if np.any(width < 0):
        _fail(f"posterior() {when}: width must be non-negative (a half-width).")
    return np.array(est, dtype=float), np.array(width, dtype=float)


def _check_optional(agent: Any, n: int, when: str) -> None:
    """Rule 8: the optional ``diagnostics()`` and ``posterior_sd()``, when present."""
    diag = getattr(agent, "diagnostics", None)
    if callable(diag):
        out = diag()
        if not hasattr(out, "get"):
            _fail(f"diagnostics() {when} must return a mapping; got {type(out).__name__}.")
        share = out.get("altered_fraction")
        if share is not None:
            try:
                x = float(share)
            except (TypeError, ValueError):
                x = float("nan")
            if not 0.0 <= x <= 1.0:
                _fail(
                    f"diagnostics() {when}: altered_fraction must be a real in [0, 1]; "
                    f"got {share!r}."
                )
    sd_fn = getattr(agent, "posterior_sd", None)
    if callable(sd_fn):
        sd = np.asarray(sd_fn())
        if sd.shape != (n,) or sd.dtype.kind not in "fiu":
            _fail(f"posterior_sd() {when} must return a real array of shape ({n},).")
        if not (np.all(np.isfinite(sd)) and np.all(sd >= 0)):
            _fail(f"posterior_sd() {when} must be finite and non-negative.")


def _check_action(action: Any, n: int, t: int) -> int:
    try:
        return check_index("act()", "return value", action, n)
    except ParameterTypeError:
        _fail(
            f"act() at round {t} returned {action!r} ({type(action).__name__}); it must "
            f"return an integer index in [0, {n - 1}]."
        )
    except ValueError:
        _fail(f"act() at round {t} returned {action!r}, outside [0, {n - 1}].")
    raise AssertionError("unreachable")  # pragma: no cover


def _rollout(
    agent: Any, problem: Any, rounds: int, seed: int, rewards: str
) -> tuple[list[int], np.ndarray, np.ndarray]:
    n = problem.n
    try:
        agent.reset(problem, seed=seed)
    except TypeError as err:
        _fail(f"reset(problem, seed=...) must accept the seed as a keyword: {err}")
    _check_posterior(agent, n, "after reset")
    _check_optional(agent, n, "after reset")
    K = np.asarray(problem.kernel_matrix, dtype=float)
    f = K @ np.random.default_rng(2024).uniform(-1, 1, n)
    rng = np.random.default_rng(7)  # the reward stream: independent of the agent
    actions: list[int] = []
    for t in range(1, rounds + 1):
        a = _check_action(agent.act(), n, t)
        if rewards == "extreme":
            y = 1e12 if t % 2 else -1e12
        else:
            y = float(f[a] + rng.standard_t(2.5))
        agent.update(a, y)
        actions.append(a)
        _check_posterior(agent, n, f"after round {t}")
        _check_optional(agent, n, f"after round {t}")
    post = _check_posterior(agent, n, "at the end")
    est, width = post if post is not None else (np.zeros(0), np.zeros(0))
    return actions, est, width


def check_agent(
    agent: Any, problem: Any = None, *, rounds: int | None = None, seed: int = 0
) -> None:
    """Check that ``agent`` follows the Agent protocol (raises :class:`AgentCheckError`).

    Parameters
    ----------
    agent : object
        The agent to check (it is reset several times).
    problem : Problem or None
        The problem to run on (default :func:`default_check_problem`).
    rounds : int or None
        Rounds per rollout (default ``min(problem.horizon, 200)``).
    seed : int
        Seed passed to ``reset``.
    """
    if problem is None:
        problem = default_check_problem()
    rounds = min(int(problem.horizon), 200) if rounds is None else int(rounds)
    if not isinstance(agent, Agent):
        missing = [m for m in ("name", "reset", "act", "update") if not hasattr(agent, m)]
        _fail(f"{type(agent).__name__} does not implement the Agent protocol; missing {missing}.")
    if not isinstance(agent.name, str) or not agent.name:
        _fail(f"agent.name must be a non-empty string; got {agent.name!r}.")
    before = _snapshot(problem)

    run1 = _rollout(agent, problem, rounds, seed, "heavy")
    run2 = _rollout(agent, problem, rounds, seed, "heavy")
    if run1[0] != run2[0]:
        first = next(i for i, (a, b) in enumerate(zip(run1[0], run2[0], strict=True)) if a != b)
        _fail(
            f"not deterministic under reset(seed={seed}): actions differ first at round "
            f"{first + 1} ({run1[0][first]} vs {run2[0][first]}). Draw all randomness from "
            "one np.random.Generator seeded in reset, and reset all state there."
        )
    if not (np.array_equal(run1[1], run2[1]) and np.array_equal(run1[2], run2[2])):
        _fail(
            f"not deterministic under reset(seed={seed}): same actions but different "
            "posterior() at the end. Reset all state in reset()."
        )
    _rollout(agent, problem, min(rounds, 50), seed, "extreme")

    after = _snapshot(problem)
    for key, old in before.items():
        new = after[key]
        same = np.array_equal(old, new) if isinstance(old, np.ndarray) else old == new
        if not same:
            _fail(f"the agent mutated problem.{key}; treat the Problem as read-only.")
