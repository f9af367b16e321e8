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

import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

import hbo_envs  # noqa: F401  (registers the envs in worker processes)
from hbo_envs.blas import one_blas_thread
from hbo_envs.harness.compare import action_digests
from hbo_envs.harness.records import COLUMNS, coerce, coverage_grid, record_grid
from hbo_envs.harness.specs import CellSpec, agent_seed

__all__ = ["CellResult", "batch_key", "make_env", "run_batch", "run_cell"]

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
            **_cell_info(spec),
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


def _coverage(agent: Any, f: np.ndarray, t: int) -> tuple[float, float]:
    """``(coverage, coverage_sigma)``: the share of points with ``|estimate - f|`` within
    the agent's width, and within its ``posterior_sd()`` (NaN without one; a ``sigma``
    that is not finite, ``>= 0`` and of shape ``(n,)`` fails the cell)."""
    post = checked_posterior(agent, f.size, t)
    if post is None:
        return float("nan"), float("nan")
    est, width = post
    err = np.abs(est - f)
    cov = float(np.mean(err <= width))
    sd_fn = getattr(agent, "posterior_sd", None)
    if not callable(sd_fn):
        return cov, float("nan")
    sd = np.asarray(sd_fn(), dtype=float)
    if sd.shape != f.shape or not np.all(np.isfinite(sd) & (sd >= 0)):
        name = getattr(agent, "name", type(agent).__name__)
        raise ValueError(
            f"posterior_sd() of agent {name!r} at round {t} must return a finite "
            f"non-negative array of shape ({f.size},); got shape {sd.shape}."
        )
    return cov, float(np.mean(err <= sd))


def _altered(agent: Any, t: int) -> float:
    """``agent.diagnostics()["altered_fraction"]`` checked, or NaN without one.

    ``diagnostics()`` is optional (:mod:`agents.protocol`); a value that is not a real in
    ``[0, 1]`` fails the cell with this error."""
    diag = getattr(agent, "diagnostics", None)
    if not callable(diag):
        return float("nan")
    value = diag().get("altered_fraction")
    if value is None:
        return float("nan")
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if not 0.0 <= x <= 1.0:
        name = getattr(agent, "name", type(agent).__name__)
        raise ValueError(
            f"diagnostics() of agent {name!r} at round {t} returned altered_fraction = "
            f"{value!r}; the protocol allows a share in [0, 1] (or no such key)."
        )
    return x


def run_cell(spec: CellSpec) -> CellResult:
    """Run one cell; an exception from the agent (or env) becomes a ``failed`` result."""
    with one_blas_thread():
        return _run_cell(spec)


def _cell_info(spec: CellSpec) -> dict[str, Any]:
    return {
        "run_name": spec.run_name,
        "env_id": spec.env_id,
        "agent": spec.agent.label,
        "seed": spec.seed,
        "agent_seed": agent_seed(spec.seed),
        "fingerprint": spec.fingerprint(),
    }


def _run_cell(spec: CellSpec) -> CellResult:
    t_start = time.perf_counter()
    info = _cell_info(spec)
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


class _Cell:
    """One cell's env, recording grids and bookkeeping, shared by :func:`_run` (one seed)
    and :func:`_run_batch` (seeds in lockstep), so both record exactly the same numbers."""

    def __init__(self, spec: CellSpec, uenv: Any) -> None:
        self.spec = spec
        uenv.reset(seed=int(spec.seed))
        self.uenv = uenv
        self.problem = uenv.problem
        self.T = T = int(uenv.horizon)
        self.f = np.asarray(uenv.objective.values, dtype=float)
        self.cov_at = coverage_grid(T, spec.coverage_points)
        self.rec_at = rec_at = record_grid(T, spec.resolution, self.cov_at)
        lb_fn = getattr(uenv, "regret_lower_bound", None)
        self.lower = (
            np.asarray(lb_fn(rec_at), dtype=float)
            if callable(lb_fn)
            else np.full(rec_at.size, np.nan)
        )
        n_rec = rec_at.size
        self.regret = np.empty(n_rec)
        self.corr = np.empty(n_rec)
        self.wall = np.empty(n_rec)
        self.atime = np.empty(n_rec)
        self.coverage = np.full(n_rec, np.nan)
        self.coverage_sigma = np.full(n_rec, np.nan)
        self.altered = np.full(n_rec, np.nan)
        self.cov_set = set(self.cov_at.tolist())
        self.diag_set = self.cov_set | {T}  # rounds the estimator's diagnostics are read
        self.cum = 0.0
        self.actions = np.zeros(T, dtype=np.int64)  # actions[t - 1]: the arm of round t

    def agent(self) -> Any:
        agent = self.spec.agent.build()
        agent.reset(self.problem, seed=agent_seed(self.spec.seed))
        return agent

    def record(self, k: int, t: int, info: dict[str, Any], agent_time: float, wall: float) -> None:
        self.regret[k] = self.cum
        self.corr[k] = info["corruption_used"]
        self.atime[k] = agent_time
        self.wall[k] = wall

    def finish(self, agent: Any) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
        spec, f, ts = self.spec, self.f, self.rec_at
        records = pd.DataFrame(
            {
                "env_id": spec.env_id,
                "agent": spec.agent.label,
                "seed": int(spec.seed),
                "t": ts,
                "regret": self.regret,
                "avg_regret": self.regret / ts,
                "coverage": self.coverage,
                "coverage_sigma": self.coverage_sigma,
                "altered": self.altered,
                "corruption_used": self.corr,
                "wall_time": self.wall,
                "agent_time": self.atime,
                "lower_bound": self.lower,
            },
            columns=list(COLUMNS),
        )
        snapshot = None
        post = checked_posterior(agent, f.size, self.T) if spec.snapshot else None
        if post is not None:  # agents without posterior() have no band to picture
            est, width = post
            pts = np.asarray(self.problem.points, dtype=float)
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
        # what the agent did, exactly, for a comparison across CPUs (hbo_envs.harness.compare)
        actions_sha256, actions_prefix = action_digests(self.actions, ts)
        extra = {
            "horizon": self.T,
            "R_T": float(self.cum),
            "actions_sha256": actions_sha256,
            "actions_prefix": actions_prefix,
            "agent_time_s": float(self.atime[-1]),
            "loop_time_s": float(self.wall[-1]),
            "agent_name": getattr(agent, "name", None),
            "problem": self.problem.describe(),
        }
        return coerce(records), snapshot, extra


def _run(spec: CellSpec) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    env = make_env(spec.env_id, spec.horizon, dict(spec.env_kwargs))
    cell = _Cell(spec, env.unwrapped)
    f = cell.f
    perf = time.perf_counter
    spec.agent.load()  # a one-time import is the process's cost, not this cell's
    t0 = perf()
    agent = cell.agent()
    agent_time = perf() - t0
    wall0 = t0  # the coverage diagnostic's own time is subtracted from wall_time
    has_posterior = callable(getattr(agent, "posterior", None))
    rec_at, cov_set, n_rec = cell.rec_at, cell.cov_set, cell.rec_at.size
    has_diag, diag_set = callable(getattr(agent, "diagnostics", None)), cell.diag_set
    act, update, step = agent.act, agent.update, cell.uenv.step
    played = cell.actions

    cum = 0.0
    k = 0
    next_rec = int(rec_at[0])
    for t in range(1, cell.T + 1):
        a0 = perf()
        action = act()
        a1 = perf()
        _, reward, _, _, info = step(action)
        a2 = perf()
        played[t - 1] = action
        update(action, reward)
        a3 = perf()
        agent_time += (a1 - a0) + (a3 - a2)
        cum += info["regret"]
        if t == next_rec:
            cell.cum = cum
            cell.record(k, t, info, agent_time, a3 - wall0)
            if has_posterior and t in cov_set:
                c0 = perf()
                cell.coverage[k], cell.coverage_sigma[k] = _coverage(agent, f, t)
                wall0 += perf() - c0  # keep the diagnostic out of the timing
            if has_diag and t in diag_set:
                c0 = perf()
                cell.altered[k] = _altered(agent, t)
                wall0 += perf() - c0
            k += 1
            next_rec = int(rec_at[k]) if k < n_rec else -1
    cell.cum = cum
    return cell.finish(agent)


def batch_key(spec: CellSpec) -> tuple[Any, ...]:
    """Cells with equal keys differ only in their seed and can run as one batch."""
    return (
        spec.env_id,
        repr(sorted(spec.env_kwargs.items())),
        spec.horizon,
        repr(spec.agent.describe()),
        spec.resolution,
        spec.coverage_points,
        spec.snapshot,
    )


def run_batch(specs: list[CellSpec]) -> list[CellResult]:
    """Run cells that differ only in their seed (:func:`batch_key`) as one batch.

    When the agent allows it (:func:`agents.batch.make_batch`) the runs advance in
    lockstep with one vectorized agent update a round; the numbers are bit-identical to
    :func:`run_cell` on each spec (``tests/test_batch.py``). Otherwise, or when the batch
    fails (an agent error in one run), every cell runs alone with :func:`run_cell`, so a
    failing seed fails only its own cell, with its own traceback.

    Timing: ``agent_time`` and ``wall_time`` of a batched cell are the batch's divided by
    the number of runs (``info["batched"]`` says how many), the cost of a run when
    ``B`` runs share a process.
    """
    specs = list(specs)
    if not specs:
        raise ValueError("run_batch: the 'specs' parameter must list at least one cell; got none.")
    if len({batch_key(s) for s in specs}) != 1:
        raise ValueError("run_batch: the cells must differ only in their seed.")
    with one_blas_thread():
        if len(specs) > 1:
            t_start = time.perf_counter()
            try:
                out = _run_batch(specs)
            except Exception:  # noqa: BLE001 - isolate the failure below, cell by cell
                out = None
            if out is not None:
                wall = (time.perf_counter() - t_start) / len(specs)
                results = []
                for spec, (records, snapshot, extra) in zip(specs, out, strict=True):
                    info = _cell_info(spec)
                    info.update(extra)
                    info["wall_time_s"] = wall
                    results.append(
                        CellResult(spec, "ok", records=records, snapshot=snapshot, info=info)
                    )
                return results
        return [_run_cell(s) for s in specs]


def _run_batch(
    specs: list[CellSpec],
) -> list[tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]] | None:
    import copy

    from agents.batch import make_batch, max_batch

    s0 = specs[0]
    env = make_env(s0.env_id, s0.horizon, dict(s0.env_kwargs))
    if len(specs) > max_batch(int(env.unwrapped.problem.n)):
        return None
    perf = time.perf_counter
    cells = [_Cell(s, copy.deepcopy(env.unwrapped)) for s in specs]
    s0.agent.load()  # as _run: the import is not the batch's agent time
    t0 = perf()
    agents = [c.agent() for c in cells]
    batch = make_batch(agents)
    if batch is None:
        return None
    B = len(cells)
    agent_time = perf() - t0
    wall0 = t0
    c0 = cells[0]
    T, rec_at, cov_set, n_rec = c0.T, c0.rec_at, c0.cov_set, c0.rec_at.size
    has_posterior = callable(getattr(agents[0], "posterior", None))
    has_diag = callable(getattr(agents[0], "diagnostics", None))
    steps = [c.uenv.step for c in cells]
    played = [c.actions for c in cells]
    cum = np.zeros(B)
    rewards = np.empty(B)
    regrets = np.empty(B)
    infos: list[Any] = [None] * B
    act, update = batch.act, batch.update
    k = 0
    next_rec = int(rec_at[0])
    for t in range(1, T + 1):
        a0 = perf()
        actions = act()
        a1 = perf()
        for b, a in enumerate(actions.tolist()):
            _, rewards[b], _, _, info = steps[b](a)
            played[b][t - 1] = a
            regrets[b] = info["regret"]
            infos[b] = info
        a2 = perf()
        update(actions, rewards)
        a3 = perf()
        agent_time += (a1 - a0) + (a3 - a2)
        cum += regrets
        if t == next_rec:
            for b, cell in enumerate(cells):
                cell.cum = float(cum[b])
                cell.record(k, t, infos[b], agent_time / B, (a3 - wall0) / B)
            if has_posterior and t in cov_set:
                q0 = perf()
                for cell, agent in zip(cells, agents, strict=True):
                    cell.coverage[k], cell.coverage_sigma[k] = _coverage(agent, cell.f, t)
                wall0 += perf() - q0
            if has_diag and t in c0.diag_set:
                q0 = perf()
                for cell, agent in zip(cells, agents, strict=True):
                    cell.altered[k] = _altered(agent, t)
                wall0 += perf() - q0
            k += 1
            next_rec = int(rec_at[k]) if k < n_rec else -1
    batch.release()
    out = []
    for b, (cell, agent) in enumerate(zip(cells, agents, strict=True)):
        cell.cum = float(cum[b])
        records, snapshot, extra = cell.finish(agent)
        extra["batched"] = B
        out.append((records, snapshot, extra))
    return out
