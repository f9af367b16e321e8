"""Seeds in one process: ``B`` runs of one agent advanced in lockstep, vectorized.

The harness (:func:`hbo_envs.harness.cell.run_batch`) runs the seeds of a cell batch
together when the agent allows it: it resets ``B`` ordinary agents (each with its own
problem draw, seed and generator, exactly as ``B`` separate cells would) and hands them
to :func:`make_batch`, which returns an object with

- ``act() -> ndarray (B,)``: every run's next arm;
- ``update(actions, rewards)``: every run's payoff;
- ``release()``: give every agent its own arrays back (the agents stay usable alone).

**Bit-identical, not approximately equal.** A batch does, for each run, exactly the
floating-point operations the run would do alone, in the same order; only the number of
numpy calls changes. For the GP-UCB family (:data:`BATCHED`) the UCB scores of all runs
are one ``(B, n)`` expression, the argmax and tie-breaking one call
(:func:`agents.gp.base.argmax_rows`, which the single-run agent uses too, with each run's
own generator), and the posterior updates one :class:`agents.gp.engine.EngineBatch` flush
(the engine's own update, stacked). The per-run parts of an agent (validation, its
schedules ``beta_t`` and ``b_t``, TGP-UCB's truncation and CA-TGP-UCB's threshold) run
unchanged, through the agent's own ``update``. ``tests/test_batch.py`` checks regret,
actions and posteriors against one-at-a-time runs for every batched agent, bit for bit.

Which agents: those in :data:`BATCHED` (exact types, default parameters or any others),
with arm-space engines (``n <= 8192``). Every other agent (ATA-GP-UCB, MoM-GP-UCB, the
robust and Fast-Slow agents, a user's own) runs one seed at a time, as before;
:func:`make_batch` returns ``None`` for them. The uniform-random baseline is batched as a
plain loop (its per-run generator is the whole of its cost).

Memory: a batch holds ``B`` posterior covariances (``8 n^2 B`` bytes);
:func:`max_batch` caps ``B`` so that they stay within :data:`BATCH_BYTES`.

When a batch pays: a single run has its own fast path (a scalar argmax, one rank-one update),
so a batch must save more numpy calls than its stacking costs. :func:`batch_sizes` gives the
range the harness plans with (``hbo_envs.harness.runner.plan_tasks``): at least
``ceil(BATCH_MIN_WORK / n)`` runs (few arms: little work a call, the batch's fixed cost
dominates), and at most as many as keep the stacked covariances within
:data:`BATCH_CACHE_BYTES` (many arms: beyond it the batch leaves the cache and loses).
``python benchmarks/bench_batch.py --sizes`` measures the speed-up per batch size and ``n``.

>>> import numpy as np
>>> from agents import make
>>> from hbo_envs.kernels import SquaredExponential
>>> from hbo_envs.problem import Problem
>>> X = np.linspace(0, 1, 5)[:, None]
>>> p = Problem(points=X, kernel_matrix=SquaredExponential(0.2)(X),
...             kernel=SquaredExponential(0.2), B=1, alpha=1, v=4, nu=3, sup_f=1, horizon=10)
>>> runs = [make("gp-ucb") for _ in range(3)]
>>> for seed, agent in enumerate(runs):
...     agent.reset(p, seed=seed)
>>> batch = make_batch(runs)
>>> actions = batch.act()
>>> batch.update(actions, np.ones(3))
>>> batch.release()
>>> [agent.engine_.t for agent in runs]
[1, 1, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.baselines.uniform import RandomAgent
from agents.corruption.gp_ucb_corruption import GPUCBCorruption
from agents.gp.base import argmax_rows
from agents.gp.engine import EngineBatch, GPPosteriorEngine
from agents.gp.gp_ucb import GPUCB
from agents.heavy_tailed.ca_tgp_ucb import CATGPUCB
from agents.heavy_tailed.tgp_ucb import TGPUCB
from hbo_envs.validation import check_int

__all__ = [
    "BATCHED",
    "BATCH_BYTES",
    "BATCH_CACHE_BYTES",
    "BATCH_MIN_WORK",
    "GPUCBBatch",
    "LoopBatch",
    "batch_sizes",
    "make_batch",
    "max_batch",
]

#: Agent classes whose runs can be batched (exact types: a subclass may change what
#: ``act`` or the posterior update does, so it runs one seed at a time).
BATCHED: tuple[type, ...] = (GPUCB, TGPUCB, CATGPUCB, GPUCBCorruption, RandomAgent)

#: Largest total size of the stacked posterior covariances of one batch (256 MiB).
BATCH_BYTES = 2**28

#: Largest batch: beyond a few dozen runs the per-call overhead a batch saves is gone.
MAX_BATCH = 64


#: Runs x arms below which a batch is slower than its runs one by one: at least
#: ``ceil(BATCH_MIN_WORK / n)`` runs a batch. Measured with ``bench_batch.py --sizes``
#: (GP-UCB, T = 2000; AMD EPYC Zen 4): break-even near 8-10 runs at n = 100, 6-7 at
#: n = 201, 3 at n = 400, below 2 at n = 625.
BATCH_MIN_WORK = 1000

#: Stacked covariances of one planned batch (32 MiB): beyond about this the batch leaves the
#: cache and is slower than its runs one by one (n = 625: 3 runs 1.27x faster, 8 runs 0.80x).
BATCH_CACHE_BYTES = 2**25


def _bytes_per_run(owner: str, n: int) -> float:
    """Bytes of one run's stacked covariances, ``n`` checked (an int >= 1, by name)."""
    return 8.0 * 3 * check_int(owner, "n", n, 1) ** 2


def max_batch(n: int) -> int:
    """Largest number of runs of an ``n``-arm problem batched together (>= 1): the stacked
    covariances (``8 n^2`` bytes a run, plus the env copies) stay within
    :data:`BATCH_BYTES`."""
    return int(max(1, min(MAX_BATCH, BATCH_BYTES // _bytes_per_run("max_batch", n))))


def batch_sizes(n: int) -> tuple[int, int]:
    """``(least, most)`` runs of an ``n``-arm problem worth one batch (module docstring):
    ``least = max(2, ceil(BATCH_MIN_WORK / n))``, ``most`` the runs whose covariances fit in
    :data:`BATCH_CACHE_BYTES` (within :func:`max_batch`). No batch pays when
    ``least > most``.

    >>> batch_sizes(100), batch_sizes(400), batch_sizes(625), batch_sizes(2000)
    ((10, 64), (3, 8), (2, 3), (2, 1))
    """
    per_run = _bytes_per_run("batch_sizes", n)
    least = max(2, -(-BATCH_MIN_WORK // int(n)))
    most = int(max(1, min(max_batch(n), BATCH_CACHE_BYTES // per_run)))
    return least, most


def _per_run(owner: str, runs: int, actions: Any, rewards: Any) -> tuple[np.ndarray, np.ndarray]:
    """``actions`` and ``rewards`` as arrays of one entry per run, or a ValueError."""
    a, r = np.asarray(actions), np.asarray(rewards)
    if a.shape != (runs,) or r.shape != (runs,):
        raise ValueError(
            f"{owner}.update: 'actions' and 'rewards' must hold one entry per run, shape "
            f"({runs},); got shapes {a.shape} and {r.shape}."
        )
    return a, r


class LoopBatch:
    """Runs of an agent advanced together by calling each one's ``act`` / ``update``."""

    def __init__(self, agents: Sequence[Any]) -> None:
        self.agents = list(agents)

    def act(self) -> np.ndarray:
        return np.array([a.act() for a in self.agents], dtype=np.intp)

    def update(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        actions, rewards = _per_run("LoopBatch", len(self.agents), actions, rewards)
        for agent, x, y in zip(self.agents, actions.tolist(), rewards.tolist(), strict=True):
            agent.update(x, y)

    def release(self) -> None:
        """Nothing is shared."""


class GPUCBBatch:
    """Runs of one GP-UCB-family agent (:data:`BATCHED`) with one stacked posterior.

    ``act`` computes ``x_t = argmax_x mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` (CG 2019
    Alg. 1; Park–Lee 2024 Alg. 1 line 5) for all runs in one ``(B, n)`` expression, with
    each run's own ``beta_t`` (its schedule, its information gain); ``update`` passes each
    payoff through the run's own ``update`` (validation, truncation, thresholds), whose
    engine queues it, then conditions all engines in one flush.
    """

    def __init__(self, agents: Sequence[Any]) -> None:
        self.agents = list(agents)
        self.engines = EngineBatch([a.engine_ for a in self.agents])
        self._owner = self.agents[0]._owner
        self.n = self.agents[0].n_

    def act(self) -> np.ndarray:
        agents = self.agents
        beta = np.array([a._beta_t() for a in agents])
        # The same expression as GPUCBAgent.act: mu + (beta_t * sigma), row by row.
        ucb = self.engines.mean[:, 0, :].T + beta[:, None] * self.engines.std()
        idx = argmax_rows(ucb, [a.rng_ for a in agents], self._owner, agents[0].t_)
        out = idx.tolist()
        for agent, i in zip(agents, out, strict=True):
            agent._pending = i
        return idx

    def update(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        agents = self.agents
        actions, rewards = _per_run("GPUCBBatch", len(agents), actions, rewards)
        valid = (
            actions.dtype.kind in "iu"
            and rewards.dtype.kind == "f"
            and bool(np.all((actions >= 0) & (actions < self.n)))
            and bool(np.isfinite(rewards).all())
        )
        if valid:  # every run's update() would accept its (action, reward): skip its checks
            for agent, x, y in zip(agents, actions.tolist(), rewards.tolist(), strict=True):
                agent._feed(x, y)  # the engine queues the observation
        else:  # the run whose input is bad raises its own error
            for agent, x, y in zip(agents, actions.tolist(), rewards.tolist(), strict=True):
                agent.update(x, y)
        self.engines.flush()

    def release(self) -> None:
        self.engines.release()


def make_batch(agents: Sequence[Any]) -> GPUCBBatch | LoopBatch | None:
    """A batch of the (already ``reset``) ``agents``, or ``None`` when they cannot be
    batched: not all of one type in :data:`BATCHED`, or (GP agents) not all on arm-space
    engines of one shape, or fewer than two distinct objects (an agent *instance* handed
    to the harness is reset for every seed in turn, so its runs cannot share a batch)."""
    agents = list(agents)
    if len(agents) < 2 or len({id(a) for a in agents}) != len(agents):
        return None  # one run, or one instance reused for every run (run them in turn)
    kind = type(agents[0])
    if kind not in BATCHED or any(type(a) is not kind for a in agents):
        return None
    if kind is RandomAgent:
        return LoopBatch(agents)
    engines = [getattr(a, "engine_", None) for a in agents]
    if not all(type(e) is GPPosteriorEngine and e.representation == "arms" for e in engines):
        return None
    e0 = engines[0]
    if any((e.n, e.r, e.lam) != (e0.n, e0.r, e0.lam) for e in engines):
        return None
    if len({a.t_ for a in agents}) != 1:
        return None
    return GPUCBBatch(agents)
