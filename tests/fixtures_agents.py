"""Third-party test agents for the harness tests, importable as ``fixtures_agents:Class``.

They implement the Agent protocol without using anything from ``agents`` (the harness
must not depend on an agent being one of ours).
"""

from __future__ import annotations

import os

import numpy as np


class GreedyMean:
    """Empirical-mean greedy with a random first sweep; posterior = (mean, 1/sqrt(count))."""

    name = "greedy-mean"

    def __init__(self, explore: int = 1) -> None:
        self.explore = explore

    def reset(self, problem, *, seed=None):
        self.n = problem.n
        self.rng = np.random.default_rng(seed)
        self.sums = np.zeros(self.n)
        self.counts = np.zeros(self.n)
        self.order = self.rng.permutation(self.n)
        self.t = 0

    def act(self):
        self.t += 1
        if self.t <= self.explore * self.n:
            return int(self.order[(self.t - 1) % self.n])
        return int(np.argmax(self.sums / np.maximum(self.counts, 1)))

    def update(self, action, reward):
        self.sums[action] += reward
        self.counts[action] += 1

    def posterior(self):
        c = np.maximum(self.counts, 1)
        return self.sums / c, 1.0 / np.sqrt(c)


class Uniform:
    """Uniformly random arms; no posterior()."""

    name = "uniform"

    def reset(self, problem, *, seed=None):
        self.n = problem.n
        self.rng = np.random.default_rng(seed)

    def act(self):
        return int(self.rng.integers(self.n))

    def update(self, action, reward):
        pass


class FailingAgent(Uniform):
    """Raises at round ``fail_at`` of odd seeds only (so only some of its cells fail)."""

    name = "failing"

    def __init__(self, fail_at: int = 5, odd_only: bool = False) -> None:
        self.fail_at = fail_at
        self.odd_only = odd_only

    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        self.t = 0
        self.fails = not self.odd_only or (seed is not None and seed % 2 == 1)

    def act(self):
        self.t += 1
        if self.fails and self.t >= self.fail_at:
            raise RuntimeError(f"deliberate failure at round {self.t}")
        return super().act()


class CountingUniform(Uniform):
    """Uniform; appends a line to the file named by ``$HBO_TEST_COUNTER`` at every reset."""

    name = "counting"

    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        path = os.environ.get("HBO_TEST_COUNTER")
        if path:
            with open(path, "a") as fh:
                fh.write(f"{seed}\n")


class SleepyUniform(Uniform):
    """Uniform that sleeps ``sleep`` seconds at every reset (for interruption tests)."""

    name = "sleepy"

    def __init__(self, sleep: float = 0.5) -> None:
        self.sleep = sleep

    def reset(self, problem, *, seed=None):
        import time

        time.sleep(self.sleep)
        super().reset(problem, seed=seed)


class ExitOnSeed(Uniform):
    """Kills its worker process (``os._exit``) in the cell of seed 1: a segfault stand-in."""

    name = "exit-on-seed"

    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        self.seed = seed

    def act(self):
        import multiprocessing as mp

        from hbo_envs.harness.specs import agent_seed

        if self.seed == agent_seed(1) and mp.current_process().name != "MainProcess":
            os._exit(1)  # only ever in a pool worker, never in the test process
        return super().act()
