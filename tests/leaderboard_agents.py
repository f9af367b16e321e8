"""Third-party agents of ``test_leaderboard.py`` (a genuine submitter's code, the cheats, the
sandbox probes) and the attack agents of ``test_leaderboard_trust.py``, in a module of their
own because the verifier's sandboxed child imports the agent's module. This one imports only
numpy and the standard library at the top (gymnasium, hbo_envs and the harness's seed
derivation inside the functions that need them); the test modules pulled in pytest, the
leaderboard package, pandas and (test_leaderboard.py, through the CLI) matplotlib, which also
built its font cache in the child's empty HOME: 2-4 s at each of test_leaderboard.py's ~24
sandbox starts and ~1 s at each of the trust tests' ~15, against ~0.4 s now.

``ENVS``, ``SEEDS`` and ``T`` are the tiny suite's of ``test_leaderboard.py`` (the trust tests'
suite has the same ``ENVS``), here because the oracles rebuild those envs.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

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


def public_optima() -> dict[str, int]:
    """``"<problem name>|<agent seed>" -> optimal arm`` on the tiny suite's public seeds: the
    table a cheat memorizes (JSON, so that it ships in the submission's ``params``)."""
    import gymnasium as gym

    import hbo_envs  # noqa: F401 - registers the envs
    from hbo_envs.harness.specs import agent_seed

    table = {}
    for env_id in ENVS:
        env = gym.make(env_id, horizon=T).unwrapped
        for s in SEEDS:
            env.reset(seed=s)
            table[f"{env.problem.name}|{agent_seed(s)}"] = int(np.argmax(env.objective.values))
    return table


class PublicSeedOracle:
    """Plays the optimum on the public seeds it memorized, arm 0 elsewhere (a cheat that
    ships its table of :func:`public_optima` as a parameter)."""

    name = "public-seed-oracle"

    def __init__(self, optima: dict[str, int]) -> None:
        self.optima = optima

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.arm = self.optima.get(f"{problem.name}|{int(seed or 0)}", 0)

    def act(self) -> int:
        return self.arm

    def update(self, action: int, reward: float) -> None:
        pass


# -- the attack agents of test_leaderboard_trust.py (its tiny suite has the same ENVS) -------
class Greedy:
    """Explore each of 5 arms once, then play the best mean (a genuine, seeded agent)."""

    name = "greedy"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.arms = self.rng.choice(problem.n, size=5, replace=False)
        self.sums = np.zeros(5)
        self.t = 0

    def act(self) -> int:
        k = self.t if self.t < 5 else int(np.argmax(self.sums))
        self.k = k
        return int(self.arms[k])

    def update(self, action: int, reward: float) -> None:
        self.sums[self.k] += reward
        self.t += 1


def _rebuild_and_solve(problem: Any, env_seed: int) -> int | None:
    """The oracle's step: rebuild each of the suite's (public) envs at ``env_seed``; if its
    problem is the one seen, return the optimal arm (the answer), else None."""
    import gymnasium as gym

    import hbo_envs  # noqa: F401 - registers the envs

    for env_id in ENVS:
        env = gym.make(env_id, horizon=int(problem.horizon)).unwrapped
        env.reset(seed=int(env_seed))
        p = env.problem
        if p.n == problem.n and p.B == problem.B and np.array_equal(p.points, problem.points):
            return int(np.argmax(env.objective.values))
    return None


class SeedOracle:
    """The issue's oracle: inverts the seed it is reset with (here over env seeds below
    ``2 ** 12``, the search the issue ran over 32 bits in C) to rebuild the env, hence ``f``,
    and plays its optimum; arm 0 when no env seed maps to its seed."""

    name = "seed-oracle"
    SEARCH = 2**12

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        from hbo_envs.harness.specs import agent_seed

        self.arm = 0
        for s in range(self.SEARCH):
            if agent_seed(s) == seed:
                arm = _rebuild_and_solve(problem, s)
                if arm is not None:
                    self.arm = arm
                    break

    def act(self) -> int:
        return self.arm

    def update(self, action: int, reward: float) -> None:
        pass


class Spy:
    """Tries each escape of issue 37 in ``reset`` and plays, at round ``k``, arm 1 when
    escape ``k`` worked and arm 0 when it did not (see :data:`SPY_CHECKS`). Targets come
    in ``params``: files of the checkout and of a competitor, a host UNIX socket."""

    name = "spy"

    def __init__(self, **targets: str) -> None:
        self.targets = targets

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.bits = [int(bool(check(self.targets))) for check in SPY_CHECKS.values()]
        self.t = 0

    def act(self) -> int:
        return self.bits[self.t] if self.t < len(self.bits) else 0

    def update(self, action: int, reward: float) -> None:
        self.t += 1


def _try(fn: Any) -> bool:
    try:
        return bool(fn())
    except Exception:  # noqa: BLE001 - any failure means the escape did not work
        return False


def _privileged(_: dict[str, str]) -> bool:
    caps = [ln for ln in Path("/proc/self/status").read_text().splitlines() if "Cap" in ln]
    eff = int(next(ln for ln in caps if ln.startswith("CapEff")).split()[1], 16)
    bnd = int(next(ln for ln in caps if ln.startswith("CapBnd")).split()[1], 16)
    return os.getuid() == 0 or os.geteuid() == 0 or eff != 0 or bnd != 0


def _sees_the_verifier(_: dict[str, str]) -> bool:
    me = os.getpid()
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != me:
            cmd = _try_read(f"/proc/{d}/cmdline")
            if cmd and b"sandbox.py" not in cmd:
                return True  # a process outside the sandbox: e.g. the verifier's command line
    return False


def _try_read(p: str) -> bytes:
    try:
        return Path(p).read_bytes()
    except OSError:
        return b""


def _opens_for_writing(path: str) -> bool:
    with open(path, "ab"):  # nothing is written: opening is the escape
        return True


def _writes_outside_scratch(_: dict[str, str]) -> bool:
    for d in ("/tmp", "/var/tmp", "/dev/shm", str(Path.cwd().parent), str(ROOT)):
        if _try(lambda d=d: Path(d, f"spy-{os.getpid()}").write_bytes(b"x" * 1024)):
            return True
    return False


def _unix_socket(t: dict[str, str]) -> bool:
    for addr in (t["unix_socket"], "\0" + t["abstract_socket"]):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(2)
            s.connect(addr)
            return True
        except OSError:
            continue
        finally:
            s.close()
    return False


def _network(_: dict[str, str]) -> bool:
    return [n for _, n in socket.if_nameindex()] != ["lo"] or _try(
        lambda: socket.create_connection(("127.0.0.1", 22), timeout=1)
    )


def _scratch_is_private(_: dict[str, str]) -> bool:
    cwd = Path.cwd()
    if "hbo-verify-" not in str(cwd):
        return False  # not in a sandbox (the test's control run): write nothing
    (cwd / "note.txt").write_text("ok")  # the scratch directory is writable ...
    return os.environ.get("HOME") == str(cwd) and "HBO_TEST_SECRET" not in os.environ


#: escape -> check (True: it worked). The last one is the control: it must be True.
SPY_CHECKS: dict[str, Any] = {
    "privileges or capabilities": lambda t: _try(lambda: _privileged(t)),
    "sees the verifier's command line": lambda t: _try(lambda: _sees_the_verifier(t)),
    "writes into the checkout": lambda t: _try(lambda: _opens_for_writing(t["checkout_file"])),
    "corrupts a competitor's submission": lambda t: _try(
        lambda: _opens_for_writing(t["competitor"])
    ),
    "UNIX socket to the host": lambda t: _try(lambda: _unix_socket(t)),
    "writes outside scratch": lambda t: _try(lambda: _writes_outside_scratch(t)),
    "network": lambda t: _try(lambda: _network(t)),
    "control: private writable scratch": lambda t: _try(lambda: _scratch_is_private(t)),
}


class Daemon(Greedy):
    """Forks a daemon (double fork, new session) that would reseal the record later."""

    name = "daemon"

    def __init__(self, marker: str = "") -> None:
        self.marker = marker

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        super().reset(problem, seed=seed)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", self.marker])
            os._exit(0)
        os.wait()


class ManyChildren(Greedy):
    """Three children of ``mb`` MiB each (each under the per-process limit, together over
    the sandbox's total)."""

    name = "many-children"

    def __init__(self, mb: int = 300) -> None:
        self.mb = mb

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        super().reset(problem, seed=seed)
        kids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                try:
                    block = bytearray(self.mb * 2**20)
                    block[:: 2**12] = b"\1" * len(range(0, len(block), 2**12))  # resident
                    time.sleep(30)
                finally:
                    os._exit(0)
            kids.append(pid)
        for pid in kids:
            os.waitpid(pid, 0)


class ForkBomb:
    """Forks sleeping children until a fork fails (at most 300); plays arm 1 when a fork
    failed (a limit on processes held), else arm 0."""

    name = "fork-bomb"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.stopped = 0
        for _ in range(300):
            try:
                pid = os.fork()
            except OSError:
                self.stopped = 1
                break
            if pid == 0:
                try:
                    time.sleep(60)
                finally:
                    os._exit(0)

    def act(self) -> int:
        return self.stopped

    def update(self, action: int, reward: float) -> None:
        pass
