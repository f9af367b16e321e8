"""Sweeps over ``envs x agents x seeds``: the local backend, resumption and :func:`evaluate`.

The local backend is loky's reusable process pool (:func:`local_executor`): it never
re-imports the user's ``__main__`` (scripts without a main guard, stdin, notebooks),
ships script-defined agents by value (cloudpickle) and keeps its workers between calls.
Every input is validated before a cell runs (:func:`build_cells`, :func:`run_sweep`).

>>> import hbo_envs.harness as H
>>> from agents.protocol import Agent
>>> class FirstArm:
...     name = "first-arm"
...     def reset(self, problem, *, seed=None): pass
...     def act(self): return 0
...     def update(self, action, reward): pass
>>> df = H.evaluate(FirstArm, "hbo/RKHS-SE-Spike-v0", seeds=2, horizon=50, workers=1)
>>> sorted(df["seed"].unique().tolist()), int(df["t"].max())
([0, 1], 50)
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from hbo_envs.data import require as require_data
from hbo_envs.harness.cell import (
    CellResult,
    batch_key,
    lost_cell,
    make_env,
    run_batch,
    run_cell,
)
from hbo_envs.harness.records import coerce, empty_records
from hbo_envs.harness.specs import (
    MAX_SEED,
    MAX_SEEDS,
    AgentSpec,
    CellSpec,
    agent_seed,
    as_agent_spec,
    jsonable,
    parse_seeds,
)
from hbo_envs.harness.store import ResultStore, base_meta, fs_error
from hbo_envs.harness.summary import summarize
from hbo_envs.registration import missing_data
from hbo_envs.validation import (
    MAX_HORIZON,
    check_bool,
    check_choice,
    check_int,
    param_error,
    seconds_from_env,
)

__all__ = ["CellFailure", "SweepResult", "build_cells", "evaluate", "run_sweep"]

BACKENDS = ("local", "ray")


class CellFailure(RuntimeError):
    """Raised by :func:`evaluate` (``on_error="raise"``) when cells failed."""


@dataclass
class SweepResult:
    """Records of every finished cell, the summary, and what failed."""

    records: pd.DataFrame
    summary: pd.DataFrame
    failures: list[dict[str, Any]] = field(default_factory=list)
    snapshots: pd.DataFrame | None = None
    ran: int = 0  # cells computed by this call
    skipped: int = 0  # cells found finished in the results directory
    out: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.failures


MAX_CELLS = 1_000_000
"""Most ``env x agent x seed`` cells one sweep accepts."""
MAX_RESOLUTION = 100_000
MAX_COVERAGE_POINTS = 10_000
MAX_WORKERS = 4096


def _seeds(seeds: int | Iterable[int], owner: str = "evaluate") -> tuple[int, ...]:
    if isinstance(seeds, str):
        return parse_seeds(seeds)
    if isinstance(seeds, int | np.integer) and not isinstance(seeds, bool):
        return tuple(range(check_int(owner, "seeds", seeds, 1, MAX_SEEDS)))
    if not isinstance(seeds, Iterable):
        raise param_error(
            owner,
            "seeds",
            "a count n (seeds 0..n-1), an iterable of seeds or a string like '0-19,25'",
            seeds,
        )
    out: list[int] = []
    for s in seeds:
        out.append(check_int(owner, "seeds", s, 0, MAX_SEED))
        if len(out) > MAX_SEEDS:
            raise param_error(owner, "seeds", f"at most {MAX_SEEDS} seeds", f"{len(out)}+ seeds")
    if not out:
        raise ValueError("The 'seeds' parameter must list at least one seed. Got [] instead.")
    if len(set(out)) != len(out):
        twice = sorted({s for s in out if out.count(s) > 1})[:5]
        raise param_error(
            owner, "seeds", f"distinct seeds (seed(s) {twice} are listed twice)", list(out)[:20]
        )
    return tuple(out)


def _check_env_kwargs(kw: Any, where: str) -> dict[str, Any]:
    if not isinstance(kw, Mapping) or not all(isinstance(k, str) for k in kw):
        raise param_error("evaluate", where, "a dict of keyword arguments for gym.make", kw)
    return dict(kw)


def build_cells(
    env_ids: Sequence[str],
    agent_specs: Sequence[AgentSpec],
    seeds: int | Iterable[int],
    *,
    horizon: int | None = None,
    env_kwargs: Mapping[str, Mapping[str, Any]] | Mapping[str, Any] | None = None,
    per_env_kwargs: bool = False,
    resolution: int = 200,
    coverage_points: int = 20,
    snapshot: bool = False,
    validate_envs: bool = True,
) -> list[CellSpec]:
    """The cells of ``env_ids x agent_specs x seeds`` in a stable order.

    ``env_kwargs`` applies to every env, or (``per_env_kwargs=True``) maps env id -> kwargs.
    Everything is validated before a cell runs: ids, labels, seeds (at most
    :data:`MAX_SEEDS`, each in ``[0, 2^63 - 1]``), ``horizon`` (at most ``10^9``; giving it
    both here and in ``env_kwargs`` is an error, not a silent choice), ``resolution``,
    ``coverage_points`` and, with ``validate_envs``, the env kwargs themselves: every
    distinct ``(env, kwargs, horizon)`` is built once here (and kept in this process's env
    cache), so a bad kwarg is a ``ValueError`` naming it now, not a failure in every cell.
    (Agents are validated by :func:`run_sweep`, once per agent that has cells to run.)
    """
    owner = "build_cells"
    if isinstance(env_ids, str) or not isinstance(env_ids, Sequence) or not env_ids:
        raise param_error(owner, "env_ids", "a non-empty list of env ids", env_ids)
    for e in env_ids:
        if not isinstance(e, str) or e not in gym.registry:
            raise ValueError(
                f"The env id {e!r} is not registered. Registered hbo ids: "
                f"{', '.join(i for i in gym.registry if i.startswith('hbo/'))}."
            )
        if need := missing_data(e):  # a real-data env without its data: say how to get it
            require_data(need)
    if not agent_specs:
        raise param_error(owner, "agent_specs", "a non-empty list of agents", agent_specs)
    labels = [a.label for a in agent_specs]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        raise ValueError(
            f"Agent labels must be distinct within a sweep; {sorted(dup)} repeat. Give the "
            "agents different parameters or explicit labels."
        )
    if horizon is not None:
        horizon = check_int("evaluate", "horizon", horizon, 1, MAX_HORIZON)
    resolution = check_int(owner, "resolution", resolution, 1, MAX_RESOLUTION)
    coverage_points = check_int(owner, "coverage_points", coverage_points, 0, MAX_COVERAGE_POINTS)
    snapshot = bool(check_bool(owner, "snapshot", snapshot))
    seeds_t = _seeds(seeds)
    n_cells = len(env_ids) * len(agent_specs) * len(seeds_t)
    if n_cells > MAX_CELLS:
        raise ValueError(
            f"The sweep has {n_cells} cells ({len(env_ids)} envs x {len(agent_specs)} agents "
            f"x {len(seeds_t)} seeds); at most {MAX_CELLS} are allowed in one sweep. Split it."
        )
    if per_env_kwargs:
        per = _check_env_kwargs(env_kwargs or {}, "env_kwargs")
        kws = {e: _check_env_kwargs(per.get(e, {}), f"env_kwargs[{e!r}]") for e in env_ids}
    else:
        common = _check_env_kwargs(env_kwargs or {}, "env_kwargs")
        kws = {e: common for e in env_ids}
    for e in env_ids:
        if horizon is not None and "horizon" in kws[e]:
            raise ValueError(
                f"The horizon of {e!r} is given twice: horizon={horizon!r} and "
                f"env_kwargs['horizon']={kws[e]['horizon']!r}. Give it once (--horizon or "
                "'horizon' in --env-kwargs)."
            )
        if validate_envs:
            _validate_env(e, horizon, kws[e])
    cells = []
    for e in env_ids:
        for a in agent_specs:
            for s in seeds_t:
                cells.append(
                    CellSpec(e, a, s, horizon, dict(kws[e]), resolution, coverage_points, snapshot)
                )
    stems = [c.file_stem for c in cells]
    if len(set(stems)) != len(stems):
        raise ValueError("Two cells map to the same file name; use distinct agent labels.")
    return cells


def _validate_agents(todo: list[CellSpec]) -> None:
    """Build every agent that has cells to run and reset it once on its first cell's
    problem: a bad parameter (``ValueError``/``TypeError`` from the constructor or
    ``reset``, where agents validate) is refused before the sweep, naming the agent. Any
    other exception is left to the cells (a crashing agent fails its own cells)."""
    seen: set[str] = set()
    for c in todo:
        if c.agent.label in seen:
            continue
        seen.add(c.agent.label)
        env = make_env(c.env_id, c.horizon, dict(c.env_kwargs)).unwrapped
        env.reset(seed=int(c.seed))
        _validate_agent(c.agent, env.problem, c.seed)


def _validate_agent(spec: AgentSpec, problem: Any, seed: int) -> None:
    try:
        spec.build().reset(problem, seed=agent_seed(seed))
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"agent {spec.label!r}: {exc}") from exc
    except Exception:  # noqa: BLE001 - recorded per cell by the sweep
        pass


def _env_parameters(env_id: str) -> set[str]:
    """Keyword parameters of the env's entry point (empty if it takes ``**kwargs``)."""
    import inspect

    ep = gym.spec(env_id).entry_point
    try:
        if isinstance(ep, str):
            import importlib

            module, _, attr = ep.partition(":")
            ep = getattr(importlib.import_module(module), attr)
        sig = inspect.signature(ep)
    except (ImportError, AttributeError, TypeError, ValueError):
        return set()
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return set()
    return {n for n, p in sig.parameters.items() if p.kind is not p.VAR_POSITIONAL}


def _validate_env(env_id: str, horizon: int | None, kw: dict[str, Any]) -> None:
    """Build the env once (cached): a bad kwarg is refused now, naming the env."""
    allowed = _env_parameters(env_id)
    unknown = sorted(set(kw) - allowed) if allowed else []
    if unknown:
        raise ValueError(
            f"{env_id} has no parameter {unknown[0]!r} (env_kwargs={kw!r}); its parameters "
            f"are {', '.join(sorted(allowed))}."
        )
    try:
        make_env(env_id, horizon, kw)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{env_id} (env_kwargs={kw!r}): {exc}") from exc


# -- backends ---------------------------------------------------------------------------------
WORKER_IDLE_TIMEOUT = 300.0
"""Seconds an idle local worker is kept alive for the next :func:`evaluate` / sweep call."""


def _picklable(cell: CellSpec) -> bool:
    """Whether a worker can rebuild the cell's agent (cloudpickle: by value for ``__main__``)."""
    import cloudpickle

    try:
        cloudpickle.dumps(cell)
        return True
    except Exception:  # noqa: BLE001 - any pickling failure means "run in this process"
        return False


def local_executor(workers: int) -> Any:
    """The process pool of the local backend: loky's reusable executor.

    Loky (the pool under joblib and scikit-learn) starts workers that do **not** re-import
    the user's ``__main__`` module (a script without a main guard runs its top level once;
    stdin scripts and notebooks work), ships cells with cloudpickle (agents defined in the
    user's script run on every worker), and keeps its workers alive between calls for
    :data:`WORKER_IDLE_TIMEOUT` seconds, so a second ``evaluate`` call pays no start-up.
    """
    from loky import get_reusable_executor

    return get_reusable_executor(max_workers=workers, timeout=WORKER_IDLE_TIMEOUT)


def _lost(exc: BaseException) -> bool:
    """Whether a future's exception means the worker died (not an error inside the cell)."""
    from concurrent.futures.process import BrokenProcessPool

    from loky.process_executor import ShutdownExecutorError, TerminatedWorkerError

    return isinstance(exc, TerminatedWorkerError | BrokenProcessPool | ShutdownExecutorError)


def _batch_sizes(spec: CellSpec) -> tuple[int, int]:
    """``(least, most)`` seeds of ``spec``'s agent and env worth one batch
    (:func:`agents.batch.batch_sizes`); ``(2, 1)`` (never) for an agent that cannot batch."""
    from agents.batch import BATCHED, batch_sizes

    try:
        kind = type(spec.agent.build())
    except Exception:  # noqa: BLE001 - the cell reports the error when it runs
        return 2, 1
    if kind not in BATCHED:
        return 2, 1
    env = make_env(spec.env_id, spec.horizon, dict(spec.env_kwargs))
    return batch_sizes(int(env.unwrapped.problem.n))


def plan_tasks(cells: list[CellSpec], workers: int, batch: bool = True) -> list[list[CellSpec]]:
    """Group ``cells`` into tasks: seeds of one (env, agent, options) that the agent can
    batch (:func:`hbo_envs.harness.cell.run_batch`) form one task, every other cell is a
    task of its own. Batches are cut to the most runs worth a batch
    (:func:`agents.batch.batch_sizes`) and, when there are fewer tasks than ``workers``,
    into as many pieces as keep every worker busy; a piece of fewer runs than a batch needs
    to pay runs one cell a task (the numbers are the same either way). Tasks keep the order
    of their first cell."""
    if not batch:
        return [[c] for c in cells]
    groups: dict[tuple[Any, ...], list[CellSpec]] = {}
    sizes: dict[tuple[Any, ...], tuple[int, int]] = {}
    order: list[tuple[Any, ...] | int] = []
    for i, c in enumerate(cells):
        key = batch_key(c)
        if key not in sizes:
            sizes[key] = _batch_sizes(c)
        if sizes[key][0] > sizes[key][1]:
            order.append(i)
            continue
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(c)
    singles = sum(isinstance(o, int) for o in order)
    pieces = max(1, -(-max(workers - singles, 1) // max(len(groups), 1)))
    tasks: list[list[CellSpec]] = []
    for o in order:
        if isinstance(o, int):
            tasks.append([cells[o]])
            continue
        g = groups[o]
        least, most = sizes[o]
        size = max(1, min(most, -(-len(g) // pieces)))
        for i in range(0, len(g), size):
            piece = g[i : i + size]
            tasks += [piece] if len(piece) >= least else [[c] for c in piece]
    return tasks


def _run_task(task: list[CellSpec]) -> list[CellResult]:
    return run_batch(task) if len(task) > 1 else [run_cell(task[0])]


def _local(
    cells: list[CellSpec], workers: int | None, *, batch: bool = True
) -> Iterator[CellResult]:
    """Run cells in this process (``workers=1``) or on loky's reusable process pool.

    Guarantees: results arrive as cells finish (the caller writes each atomically); a queue
    of at most ``2 * workers`` submitted tasks, so Ctrl-C loses little (on interruption the
    workers are killed); a worker that dies (segfault, ``os._exit``) breaks the pool for
    every task in flight, so those cells are re-run one at a time on a fresh pool and only
    a cell that kills its worker again is recorded as failed (failure isolation).
    With ``batch`` the seeds of a batchable agent run as one task (:func:`plan_tasks`;
    bit-identical numbers, fewer numpy calls).
    """
    from loky import cpu_count

    n = len(cells)
    if workers is None:
        workers = min(cpu_count() or 1, n)
    workers = max(1, min(int(workers), n))
    if workers > 1 and not all(_picklable(c) for c in cells[:1] + cells[-1:]):
        warnings.warn(
            "The agent (or its parameters) cannot be pickled (even by cloudpickle), so cells "
            "run in this process one at a time; pass a registered name, an import string "
            "'module:Class' or a class/factory without unpicklable state to use several "
            "workers.",
            stacklevel=3,
        )
        workers = 1
    tasks = plan_tasks(cells, workers, batch)
    if workers == 1:
        for task in tasks:
            yield from _run_task(task)
        return

    clean = False
    suspects: list[CellSpec] = []
    try:
        ex = local_executor(workers)
        pending: dict[Future[list[CellResult]], list[CellSpec]] = {}
        queue = iter(tasks)
        for task in queue:  # keep a short queue so Ctrl-C loses little
            pending[ex.submit(_run_task, task)] = task
            if len(pending) >= 2 * workers:
                break
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task = pending.pop(fut)
                exc = fut.exception()
                if exc is None:
                    yield from fut.result()
                elif _lost(exc):
                    suspects += task  # re-run alone below: which cell killed it?
                else:
                    for spec in task:
                        yield lost_cell(spec, exc)
            if suspects:
                ex = local_executor(workers)  # a broken pool is replaced by a fresh one
            while len(pending) < 2 * workers:
                nxt = next(queue, None)
                if nxt is None:
                    break
                pending[ex.submit(_run_task, nxt)] = nxt
        for spec in suspects:  # one at a time: a cell that kills its worker fails alone
            fut = local_executor(workers).submit(run_cell, spec)
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - the worker died again: this cell's fault
                yield lost_cell(spec, exc)
        clean = True
    finally:
        if not clean:  # interrupted (Ctrl-C) or the consumer stopped: kill the workers
            try:
                local_executor(workers).shutdown(wait=False, kill_workers=True)
            except Exception:  # noqa: BLE001 - best effort while unwinding
                pass


def _backend(name: str) -> Callable[..., Iterator[CellResult]]:
    if name == "local":
        return _local
    from hbo_envs.harness.ray_backend import run_on_ray

    return run_on_ray


# -- sweeps -----------------------------------------------------------------------------------
PROGRESS_INTERVAL = 5.0
"""Seconds between progress lines when stderr is not a TTY (``$HBO_PROGRESS_INTERVAL``)."""


class _Heartbeat:
    """Progress for a non-TTY stderr (a piped or logged run): one line every few seconds.

    A background thread prints ``hbo-bench: 3/40 cells done (1 failed), 12 s elapsed, ~2.5
    min left`` every ``interval`` seconds, also while a long cell is still running, and
    once at the end; the main thread only updates the counters.
    """

    def __init__(self, total: int, desc: str, interval: float) -> None:
        import threading

        self.total, self.desc, self.interval = total, desc, interval
        self.n = 0
        self.failed = 0
        self.printed = False
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def line(self) -> str:
        el = time.monotonic() - self.t0
        msg = f"{self.desc}: {self.n}/{self.total} cells done"
        if self.failed:
            msg += f" ({self.failed} failed)"
        msg += f", {el:.0f} s elapsed"
        if 0 < self.n < self.total:
            left = el / self.n * (self.total - self.n)
            msg += f", ~{left:.0f} s left" if left < 120 else f", ~{left / 60:.1f} min left"
        return msg

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            print(self.line(), file=sys.stderr, flush=True)
            self.printed = True

    def update(self, k: int) -> None:
        self.n += k

    def set_postfix(self, failed: int) -> None:
        self.failed = failed

    def close(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join()
            if self.printed:  # a run shorter than one interval stays silent
                print(self.line(), file=sys.stderr, flush=True)


class _Silent:
    def update(self, k: int) -> None:
        pass

    def set_postfix(self, failed: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, progress: bool | None, desc: str, interval: float) -> Any:
    """A tqdm bar on a TTY (or ``progress=True``), a line every ``interval`` seconds
    otherwise, nothing if False."""
    if progress is False or total == 0:
        return _Silent()
    if progress is None and not sys.stderr.isatty():
        return _Heartbeat(total, desc, interval)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="cell", file=sys.stderr)


def _failure(res: CellResult) -> dict[str, Any]:
    tb = res.error or ""
    last = tb.strip().splitlines()[-1] if tb.strip() else ""
    return {
        "run_name": res.spec.run_name,
        "env_id": res.spec.env_id,
        "agent": res.spec.agent.label,
        "seed": res.spec.seed,
        "error": last,
        "traceback": tb,
    }


def run_sweep(
    cells: list[CellSpec],
    *,
    out: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    progress: bool | None = None,
    fresh: bool = False,
    meta: Mapping[str, Any] | None = None,
    address: str | None = None,
    validate_agents: bool = True,
    batch: bool = True,
) -> SweepResult:
    """Run ``cells`` (skipping finished ones in ``out``), write results, return them.

    With ``validate_agents`` each agent that has cells to run is built and reset once in
    this process first, so a bad agent parameter is a ``ValueError`` naming it, before any
    cell runs (one extra ``reset`` per agent; none when every cell is already finished).

    Each finished cell is written to ``out`` atomically as soon as it arrives (see
    :mod:`hbo_envs.harness.store`); a cell whose agent raises is recorded as failed with
    its traceback and the sweep goes on. On ``KeyboardInterrupt`` finished cells are kept
    and the interrupt propagates (rerun the same command to resume). Without ``out``
    nothing is written and every cell runs.

    With ``batch`` (default; local backend) the seeds of an agent that allows it run in
    one process as one vectorized computation (:func:`hbo_envs.harness.cell.run_batch`):
    the same numbers bit for bit, in less time; ``agent_time`` / ``wall_time`` of such a
    cell are its share of the batch's. ``batch=False`` runs every cell alone (what a
    timing comparison between agents needs). The Ray backend runs cells one by one.
    """
    check_choice("run_sweep", "backend", backend, BACKENDS)
    batch = bool(check_bool("run_sweep", "batch", batch))
    if workers is not None:
        workers = check_int("run_sweep", "workers", workers, 1, MAX_WORKERS)
    fresh = bool(check_bool("run_sweep", "fresh", fresh))
    if progress is not None:
        progress = check_bool("run_sweep", "progress", progress)
    if address is not None and not isinstance(address, str):
        raise param_error("run_sweep", "address", "a Ray address string or None", address)
    # A bad $HBO_PROGRESS_INTERVAL is an error naming it, before anything runs.
    interval = seconds_from_env("HBO_PROGRESS_INTERVAL", PROGRESS_INTERVAL)
    store = ResultStore(out) if out is not None else None
    if store is not None and fresh and store.root.exists():
        try:
            shutil.rmtree(store.root)
        except OSError as exc:
            raise fs_error(store.root, exc, "remove (--fresh)") from exc
    if store is not None:
        store.prepare()  # an unwritable --out fails here, before any cell runs
    todo = [c for c in cells if store is None or not store.is_done(c)]
    skipped = len(cells) - len(todo)
    if validate_agents:
        _validate_agents(todo)
    if store is not None:
        if todo:
            store.invalidate_merged()
        m = dict(store.read_meta() or base_meta())
        m.update(_describe_sweep(cells, backend, workers))
        m.update(dict(meta or {}))
        store.write_meta(m)

    results: dict[str, CellResult] = {}
    failures: list[dict[str, Any]] = []
    bar = _progress(len(todo), progress, "hbo-bench", interval)
    try:
        if todo:
            kwargs: dict[str, Any] = {"address": address} if backend == "ray" else {"batch": batch}
            for res in _backend(backend)(todo, workers, **kwargs):
                if store is not None:
                    store.write_cell(res)
                results[res.spec.run_name] = res
                if res.status != "ok":
                    failures.append(_failure(res))
                bar.update(1)
                if failures:
                    bar.set_postfix(failed=len(failures))
    finally:
        bar.close()

    # merge: finished cells from disk (this run and earlier ones) or from memory
    if store is not None:
        records = store.collect_records(cells)
        snapshots = store.collect_snapshots(cells)
    else:
        frames = [r.records for r in results.values() if r.records is not None]
        records = coerce(pd.concat(frames, ignore_index=True)) if frames else empty_records()
        records = records.sort_values(["env_id", "agent", "seed", "t"], ignore_index=True)
        snaps = [r.snapshot for r in results.values() if r.snapshot is not None]
        snapshots = pd.concat(snaps, ignore_index=True) if snaps else None
    failed_counts: dict[tuple[str, str], int] = {}
    for f in failures:
        key = (f["env_id"], f["agent"])
        failed_counts[key] = failed_counts.get(key, 0) + 1
    summary = summarize(records, failed_counts)
    if store is not None:
        store.write_merged(records, summary, snapshots)
        m = store.read_meta()
        m["cells"] = {
            "total": len(cells),
            "ok": len(cells) - len(failures),
            "failed": len(failures),
            "skipped_as_finished": skipped,
        }
        m["failures"] = [{k: v for k, v in f.items() if k != "traceback"} for f in failures]
        store.write_meta(m)
    return SweepResult(
        records,
        summary,
        failures,
        snapshots,
        ran=len(todo),
        skipped=skipped,
        out=store.root if store else None,
    )


def _describe_sweep(cells: list[CellSpec], backend: str, workers: int | None) -> dict[str, Any]:
    envs: dict[str, Any] = {}
    agents_: dict[str, Any] = {}
    for c in cells:
        if c.env_id not in envs:
            spec = gym.spec(c.env_id)
            envs[c.env_id] = {
                "entry_point": str(spec.entry_point),
                "registered_kwargs": jsonable(spec.kwargs),
                "env_kwargs": jsonable(c.env_kwargs),
                "horizon": c.horizon,
            }
        agents_.setdefault(c.agent.label, c.agent.describe())
    seeds = sorted({c.seed for c in cells})
    return {
        "backend": backend,
        "workers": workers,
        "envs": envs,
        "agents": agents_,
        "seeds": seeds,
        "seeding": "env.reset(seed=s); agent.reset(problem, seed=agent_seed(s)), "
        "agent_seed(s) = SeedSequence(s, spawn_key=(1,)).generate_state(1)[0]",
        "records": "hbo_envs.harness.records (schema and down-sampling)",
        "resolution": cells[0].resolution if cells else None,
        "coverage_points": cells[0].coverage_points if cells else None,
    }


def evaluate(
    agent: Any,
    env_id: str,
    *,
    seeds: int | Iterable[int],
    horizon: int | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    backend: str = "local",
    workers: int | None = None,
    agent_params: Mapping[str, Any] | None = None,
    label: str | None = None,
    out: str | os.PathLike[str] | None = None,
    on_error: str = "raise",
    progress: bool | None = None,
    address: str | None = None,
    batch: bool = True,
) -> pd.DataFrame:
    """Evaluate one agent on one env over many seeds; return the tidy record table.

    Parameters
    ----------
    agent
        A registered name (``"tgp-ucb"``), an import string ``"module:Class"``, a factory
        (class or callable) or an Agent instance; or an :class:`AgentSpec`.
    env_id
        A registered id (``hbo_envs.ENV_IDS``).
    seeds
        An int ``n`` (seeds ``0 .. n-1``), an iterable of seeds or a string in the CLI's
        syntax (``"0-19,25"``); at most 100000 seeds, each in ``[0, 2^63 - 1]``. Cell seed
        ``s`` resets the env with ``s`` and the agent with a derived seed.
    horizon, env_kwargs
        Passed to ``gym.make`` (``horizon=None`` keeps the env's default; giving the
        horizon in both is an error). Validated before any cell runs.
    backend, workers, address
        ``"local"`` (``workers`` processes of loky's reusable pool, kept between calls;
        ``1`` runs in this process) or ``"ray"`` (``ray.init(address=address or
        $RAY_ADDRESS or a local instance)``; an unreachable address raises
        ``ConnectionError`` within seconds).
    agent_params, label
        Constructor parameters and an optional explicit label.
    out
        Optional results directory (resumable; see :mod:`hbo_envs.harness.store`).
    on_error
        ``"raise"``: raise :class:`CellFailure` after the sweep if any cell failed;
        ``"record"``: keep going and list failures in ``df.attrs["failures"]``.
    batch
        Run the seeds as one vectorized computation when the agent allows it (default;
        bit-identical numbers; see :func:`run_sweep`). ``False``: one seed at a time.

    Returns
    -------
    pandas.DataFrame
        The record table (:mod:`hbo_envs.harness.records`), one row per recorded round.
    """
    check_choice("evaluate", "on_error", on_error, ("raise", "record"))
    if agent_params is not None and (
        not isinstance(agent_params, Mapping) or not all(isinstance(k, str) for k in agent_params)
    ):
        raise param_error(
            "evaluate",
            "agent_params",
            "None or a dict of the agent's keyword arguments",
            agent_params,
        )
    if label is not None and not (isinstance(label, str) and label):
        raise param_error("evaluate", "label", "None or a non-empty string", label)
    spec = as_agent_spec(agent, agent_params)
    if label is not None:
        spec = AgentSpec(spec.source, spec.params, label)
    cells = build_cells([env_id], [spec], seeds, horizon=horizon, env_kwargs=env_kwargs)
    res = run_sweep(
        cells,
        out=out,
        backend=backend,
        workers=workers,
        progress=progress,
        address=address,
        batch=batch,
    )
    if res.failures and on_error == "raise":
        first = res.failures[0]
        raise CellFailure(
            f"{len(res.failures)} of {len(cells)} cells failed; first: {first['run_name']}\n"
            f"{first['traceback']}"
        )
    df = res.records
    df.attrs["failures"] = [{k: v for k, v in f.items()} for f in res.failures]
    return df
