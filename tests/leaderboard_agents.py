"""Third-party agents of ``test_leaderboard.py`` (a genuine submitter's code, the cheats and
the sandbox probes), in a module of their own because the verifier's sandboxed child imports
the agent's module: this one imports only numpy (gymnasium and the harness's seed derivation
inside the one cheat that needs them), while the test module pulled in pytest, the CLI,
pandas and matplotlib, which also built its font cache in the child's empty HOME: ~2 s at
every sandbox start, of which ``test_leaderboard.py`` makes two dozen.

``ENVS``, ``SEEDS`` and ``T`` are the tiny suite's (``test_leaderboard.TINY``), here because
:class:`PublicSeedOracle` memorizes the optima of its public seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ENVS = ("hbo/RKHS-SE-StudentT-v0", "hbo/Griewank2D-SymPareto-eps08-v0")
SEEDS = (0, 1, 2, 3, 4, 5)
T = 60


class KernelUCB:
    """Naive kernel UCB from the problem's kernel matrix (a plausible third-party agent):
    ``mu = k_t^T (K_t + lam I)^{-1} y``, ``sd^2 = k(x,x) - k_t^T (K_t + lam I)^{-1} k_t``, play
    ``argmax mu + c sd`` (first round: a random arm from the seeded generator)."""

    name = "kernel-ucb"

    def __init__(self, c: float = 1.0, lam: float = 1.0) -> None:
        self.c, self.lam = c, lam

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.K = np.asarray(problem.kernel_matrix)
        self.n = problem.n
        self.x: list[int] = []
        self.y: list[float] = []

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.x:
            return np.zeros(self.n), self.c * np.sqrt(np.diag(self.K))
        kt = self.K[:, self.x]
        A = self.K[np.ix_(self.x, self.x)] + self.lam * np.eye(len(self.x))
        mu = kt @ np.linalg.solve(A, np.asarray(self.y))
        var = np.diag(self.K) - np.einsum("ij,ji->i", kt, np.linalg.solve(A, kt.T))
        return mu, self.c * np.sqrt(np.maximum(var, 0.0))

    def act(self) -> int:
        if not self.x:
            return int(self.rng.integers(self.n))
        mu, w = self.posterior()
        return int(np.argmax(mu + w))

    def update(self, action: int, reward: float) -> None:
        self.x.append(int(action))
        self.y.append(float(reward))


class FirstArm:
    """Always plays arm 0 (typically worse than uniform play)."""

    name = "first-arm"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        pass

    def act(self) -> int:
        return 0

    def update(self, action: int, reward: float) -> None:
        pass


class Unseeded(KernelUCB):
    """Ignores its seed: cannot reproduce its own results."""

    name = "unseeded"

    def act(self) -> int:
        mu, w = self.posterior()
        noise = np.random.default_rng().normal(scale=0.5, size=self.n)  # unseeded!
        return int(np.argmax(mu + w + noise))


class NotAnAgent:
    """A class without the Agent methods, whose constructor must never run in verify."""

    def __init__(self, **kwargs: Any) -> None:
        raise RuntimeError("NotAnAgent was instantiated")


def not_a_class(**kwargs: Any) -> None:
    """A function named as an agent (as ``os:system`` was): never called by verify."""
    raise RuntimeError("not_a_class was called")


class SandboxProbe:
    """Plays a bit mask of what it sees in the verifier's sandbox: bit 0 = only a loopback
    network interface, bit 1 = its working directory is an empty private scratch folder, bit
    2 = the verifier's environment variable HBO_TEST_SECRET is invisible, bit 3 = HOME is
    that scratch folder."""

    name = "sandbox-probe"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        import os
        import socket

        cwd = os.getcwd()
        self.mask = (
            int([n for _, n in socket.if_nameindex()] == ["lo"])
            # (nothing in it: this module imports no matplotlib, which made .cache and .config
            # in HOME when the probe lived in the test module)
            | int("hbo-verify-" in cwd and set(os.listdir(cwd)) <= {"stderr.txt"}) << 1
            | int("HBO_TEST_SECRET" not in os.environ) << 2
            | int(os.environ.get("HOME") == cwd) << 3
        )

    def act(self) -> int:
        return self.mask

    def update(self, action: int, reward: float) -> None:
        pass


class EnvironmentProbe:
    """Refuses to start, naming the environment variables it sees (read from the error)."""

    name = "environment-probe"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        import os

        raise RuntimeError("ENVIRONMENT " + " ".join(sorted(os.environ)))

    def act(self) -> int:
        return 0

    def update(self, action: int, reward: float) -> None:
        pass


class MemoryHog(FirstArm):
    """Allocates 2 GB in reset (the verifier's memory limit must stop it)."""

    name = "memory-hog"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.big = np.ones(2**28)


class Sleeper(FirstArm):
    """Takes 60 s a round (the verifier's time limit must stop it)."""

    name = "sleeper"

    def act(self) -> int:
        import time

        time.sleep(60)
        return 0


#: (problem name, agent seed) -> optimal arm, for the public seeds only
ORACLE: dict[tuple[str, int], int] = {}


def _memorize_public_optima() -> None:
    import gymnasium as gym

    import hbo_envs  # noqa: F401 - registers the envs (the sandbox's child has it loaded)
    from hbo_envs.harness.specs import agent_seed

    for env_id in ENVS:
        env = gym.make(env_id, horizon=T).unwrapped
        for s in SEEDS:
            env.reset(seed=s)
            ORACLE[(env.problem.name, agent_seed(s))] = int(np.argmax(env.objective.values))


class PublicSeedOracle:
    """Plays the optimum on the public seeds it memorized, arm 0 elsewhere (a cheat)."""

    name = "public-seed-oracle"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        if not ORACLE:  # in the verifier's sandbox: memorize again (a cheat ships its table)
            _memorize_public_optima()
        self.arm = ORACLE.get((problem.name, int(seed or 0)), 0)

    def act(self) -> int:
        return self.arm

    def update(self, action: int, reward: float) -> None:
        pass
