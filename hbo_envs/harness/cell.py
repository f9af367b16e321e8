"""Run one ``(env, agent, seed)`` cell: the only place where an agent meets an env.

The agent sees the :class:`~hbo_envs.problem.Problem` and its rewards, nothing else: the
harness reads ``info`` (``regret``, ``corruption_used``) and the env's true ``f`` (for the
coverage diagnostic) and never passes them on.

Seeding: ``env.reset(seed=seed)`` and ``agent.reset(problem, seed=agent_seed(seed))``
(:func:`hbo_envs.harness.specs.agent_seed`, a separate stream). The same cell gives the
same numbers in any process and on any backend.

Speed: envs are built once per process and kept (``gym.make`` of the 5-D Griewank env
computes an exact RKHS norm over 5000 points); every cell resets its env with its own
seed, which restores the env completely, so a cached env gives exactly the numbers of a
fresh one. The loop steps ``env.unwrapped`` (the Gymnasium wrappers only re-check what
``step`` already validates).

Threads: a cell runs with BLAS limited to one thread (``threadpoolctl``); parallelism comes
from running cells side by side. On this project's 100-point problems a second OpenBLAS
thread makes the GP engine's rank-one updates about ten times *slower*, and with several
cells per machine it would oversubscribe the cores.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

import hbo_envs  # noqa: F401  (registers the envs in worker processes)
from hbo_envs.harness.records import COLUMNS, coerce, coverage_grid, record_grid
from hbo_envs.harness.specs import CellSpec, agent_seed

__all__ = ["CellResult", "make_env", "run_cell"]

_ENV_CACHE: OrderedDict[tuple[str, str, int | None], gym.Env] = OrderedDict()
_ENV_CACHE_SIZE = 4


def make_env(env_id: str, horizon: int | None, env_kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make(env_id, horizon=..., **env_kwargs)``, cached per process (see module doc)."""
    key = (env_id, repr(sorted(env_kwargs.items())), horizon)
    env = _ENV_CACHE.get(key)
    if env is None:
        kwargs = dict(env_kwargs)
        if horizon is not None:
            kwargs["horizon"] = int(horizon)
        env = gym.make(env_id, **kwargs)
        _ENV_CACHE[key] = env
        while len(_ENV_CACHE) > _ENV_CACHE_SIZE:
            _ENV_CACHE.popitem(last=False)
    else:
        _ENV_CACHE.move_to_end(key)
    return env


@dataclass
class CellResult:
    """What one cell produced: rows (or the failure), timing and a description."""

    spec: CellSpec
    status: str  # "ok" | "failed"
    records: pd.DataFrame | None = None
    snapshot: pd.DataFrame | None = None
    error: str | None = None  # the formatted traceback of a failed cell
    info: dict[str, Any] = field(default_factory=dict)


def lost_cell(spec: CellSpec, exc: BaseException) -> CellResult:
    """The failed result of a cell whose worker died or whose task was lost (any backend)."""
    return CellResult(
        spec,
        "failed",
        error=f"{type(exc).__name__}: {exc}",
        info={
            "run_name": spec.run_name,
            "env_id": spec.env_id,
            "agent": spec.agent.label,
            "seed": spec.seed,
            "fingerprint": spec.fingerprint(),
            "error_type": type(exc).__name__,
            "error_message": str(exc),
        },
    )


def checked_posterior(agent: Any, n: int, t: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``agent.posterior()`` checked against the protocol's rule, or None without one.

    ``posterior()`` is optional (:mod:`agents.protocol`); when present it must return a
    finite estimate and a finite non-negative width of shape ``(n,)``: anything else fails
    the cell with this error (a NaN band is never scored as coverage 0).
    """
    post = getattr(agent, "posterior", None)
    if not callable(post):
        return None
    try:
        est, width = post()
    except NotImplementedError:
        return None
    est = np.asarray(est, dtype=float)
    width = np.asarray(width, dtype=float)
    name = getattr(agent, "name", type(agent).__name__)
    if est.shape != (n,) or width.shape != (n,):
        raise ValueError(
            f"posterior() of agent {name!r} at round {t} must return two arrays of shape "
            f"({n},); got {est.shape} and {width.shape}."
        )
    if not (np.all(np.isfinite(est)) and np.all(np.isfinite(width)) and np.all(width >= 0)):
        raise ValueError(
            f"posterior() of agent {name!r} at round {t} returned "
            f"{int(np.sum(~np.isfinite(est)))} non-finite estimates and "
            f"{int(np.sum(~(np.isfinite(width) & (width >= 0))))} widths that are not finite "
            "and >= 0; the protocol requires a finite estimate and a finite non-negative "
            "width (agents.check_agent checks this)."
        )
    return est, width


def _coverage(agent: Any, f: np.ndarray, t: int) -> float:
    post = checked_posterior(agent, f.size, t)
    if post is None:
        return float("nan")
    est, width = post
    return float(np.mean(np.abs(est - f) <= width))


_CONTROLLER: Any = None


def _one_blas_thread() -> Any:
    """Context manager limiting BLAS/OpenMP pools to one thread (no-op without threadpoolctl)."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


def run_cell(spec: CellSpec) -> CellResult:
    """Run one cell; an exception from the agent (or env) becomes a ``failed`` result."""
    with _one_blas_thread():
        return _run_cell(spec)


def _run_cell(spec: CellSpec) -> CellResult:
    t_start = time.perf_counter()
    info: dict[str, Any] = {
        "run_name": spec.run_name,
        "env_id": spec.env_id,
        "agent": spec.agent.label,
        "seed": spec.seed,
        "agent_seed": agent_seed(spec.seed),
        "fingerprint": spec.fingerprint(),
    }
    try:
        records, snapshot, extra = _run(spec)
    except Exception as exc:  # noqa: BLE001 - a failing agent fails its cell only
        info["wall_time_s"] = time.perf_counter() - t_start
        info["error_type"] = type(exc).__name__
        info["error_message"] = str(exc)
        return CellResult(spec, "failed", error=traceback.format_exc(), info=info)
    info.update(extra)
    info["wall_time_s"] = time.perf_counter() - t_start
    return CellResult(spec, "ok", records=records, snapshot=snapshot, info=info)


def _run(spec: CellSpec) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    env = make_env(spec.env_id, spec.horizon, dict(spec.env_kwargs))
    uenv = env.unwrapped
    uenv.reset(seed=int(spec.seed))
    problem = uenv.problem
    T = int(uenv.horizon)
    f = np.asarray(uenv.objective.values, dtype=float)
    cov_at = coverage_grid(T, spec.coverage_points)
    rec_at = record_grid(T, spec.resolution, cov_at)
    lb_fn = getattr(uenv, "regret_lower_bound", None)
    lower = (
        np.asarray(lb_fn(rec_at), dtype=float) if callable(lb_fn) else np.full(rec_at.size, np.nan)
    )

    agent = spec.agent.build()
    has_posterior = callable(getattr(agent, "posterior", None))
    perf = time.perf_counter
    t0 = perf()
    agent.reset(problem, seed=agent_seed(spec.seed))
    agent_time = perf() - t0
    wall0 = t0  # the coverage diagnostic's own time is subtracted from wall_time

    n_rec = rec_at.size
    regret = np.empty(n_rec)
    corr = np.empty(n_rec)
    wall = np.empty(n_rec)
    atime = np.empty(n_rec)
    coverage = np.full(n_rec, np.nan)
    cov_set = set(cov_at.tolist())
    act, update, step = agent.act, agent.update, uenv.step

    cum = 0.0
    info: dict[str, Any] = {}
    k = 0
    next_rec = int(rec_at[0])
    for t in range(1, T + 1):
        a0 = perf()
        action = act()
        a1 = perf()
        _, reward, _, _, info = step(action)
        a2 = perf()
        update(action, reward)
        a3 = perf()
        agent_time += (a1 - a0) + (a3 - a2)
        cum += info["regret"]
        if t == next_rec:
            regret[k] = cum
            corr[k] = info["corruption_used"]
            atime[k] = agent_time
            wall[k] = a3 - wall0
            if has_posterior and t in cov_set:
                c0 = perf()
                coverage[k] = _coverage(agent, f, t)
                wall0 += perf() - c0  # keep the diagnostic out of the timing
            k += 1
            next_rec = int(rec_at[k]) if k < n_rec else -1

    ts = rec_at
    records = pd.DataFrame(
        {
            "env_id": spec.env_id,
            "agent": spec.agent.label,
            "seed": int(spec.seed),
            "t": ts,
            "regret": regret,
            "avg_regret": regret / ts,
            "coverage": coverage,
            "corruption_used": corr,
            "wall_time": wall,
            "agent_time": atime,
            "lower_bound": lower,
        },
        columns=list(COLUMNS),
    )
    snapshot = None
    post = checked_posterior(agent, f.size, T) if spec.snapshot else None
    if post is not None:  # agents without posterior() have no band to picture
        est, width = post
        pts = np.asarray(problem.points, dtype=float)
        snapshot = pd.DataFrame(
            {
                "env_id": spec.env_id,
                "agent": spec.agent.label,
                "seed": int(spec.seed),
                "point": np.arange(f.size),
                "x": pts[:, 0],
                "f": f,
                "estimate": np.asarray(est, dtype=float),
                "width": np.asarray(width, dtype=float),
            }
        )
    extra = {
        "horizon": T,
        "R_T": float(cum),
        "agent_time_s": float(agent_time),
        "loop_time_s": float(wall[-1]),
        "agent_name": getattr(agent, "name", None),
        "problem": problem.describe(),
    }
    return coerce(records), snapshot, extra
