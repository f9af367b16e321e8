"""Running a submitted agent in a separate, resource-limited process (the verifier's side).

The verifier never runs submitted code in its own process. :class:`AgentProcess` starts
this module's file (``python -I .../sandbox.py``) as a child with

- resource limits (:class:`SandboxLimits`): address space (``RLIMIT_AS``), CPU seconds
  (``RLIMIT_CPU``), size of any file it writes (``RLIMIT_FSIZE``), no core dumps, and a
  wall-clock deadline enforced by the parent;
- a fresh, empty scratch directory as its working directory, ``HOME`` and ``TMPDIR``, and a
  minimal environment (no variables of the verifier's shell are passed: no tokens, no
  proxies), one BLAS thread;
- no network when ``unshare -rn`` works on this machine (a new user and network namespace:
  only a loopback device that is down); :func:`network_isolation` says which applies.

In the child, the import path must resolve to a *class* (not a function such as
``os:system``), defined outside the standard library, that has callable ``reset``,
``act`` and ``update`` *before* it is instantiated, and the instance must pass
:func:`agents.check_agent` (20 rounds); only then does the child serve an episode.

The environment, the rewards and the regret stay in the verifier's process: the child
receives the :class:`~hbo_envs.problem.Problem` (pickled, parent to child only) and each
reward, and answers with an action index, nothing else. So submitted code cannot see
``f``, the env's random state or the regret accounting, and cannot alter the numbers the
verifier records; the parent reads only short lines matching ``A <int>`` from it (never
unpickles anything it sends). With one BLAS thread on both sides the numbers equal the
harness's (:func:`hbo_envs.harness.run_cell`) bit for bit.

Protocol (one line each, ASCII; ``<h>`` is ``float.hex``):
``{job JSON}`` -> ``S ok`` | ``E <message>``; ``R <seed> <nbytes>`` + pickle -> ``A <a>``;
``U <h>`` -> ``A <a>``; ``L <h>`` -> ``K``; ``Q`` -> exit.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["AgentProcess", "SandboxError", "SandboxLimits", "module_source_sha256"]

_LINE_MAX = 4096
_ACTION = re.compile(rb"A (\d{1,19})\n")


class SandboxError(RuntimeError):
    """The sandboxed agent could not be started, refused, crashed or broke a limit."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandboxed agent process.

    ``wall_s``: wall-clock seconds for everything the process does (parent-enforced);
    ``cpu_s``: CPU seconds (``RLIMIT_CPU``, default ``wall_s``); ``memory_mb``: address
    space (``RLIMIT_AS``); ``file_mb``: largest file it may write (``RLIMIT_FSIZE``);
    ``network``: allow network access (default False: ``unshare -rn`` when available).
    """

    wall_s: float = 3600.0
    cpu_s: int | None = None
    memory_mb: int = 4096
    file_mb: int = 64
    network: bool = False

    def __post_init__(self) -> None:
        from hbo_envs.validation import check_bool, check_int, check_real

        check_real("SandboxLimits", "wall_s", self.wall_s, 0, closed="right")
        if self.cpu_s is not None:
            check_int("SandboxLimits", "cpu_s", self.cpu_s, 1)
        check_int("SandboxLimits", "memory_mb", self.memory_mb, 256)
        check_int("SandboxLimits", "file_mb", self.file_mb, 1)
        check_bool("SandboxLimits", "network", self.network)

    def describe(self) -> dict[str, Any]:
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s if self.cpu_s is not None else int(self.wall_s) + 1,
            "memory_mb": self.memory_mb,
            "file_mb": self.file_mb,
            "network": "allowed" if self.network else network_isolation(),
        }


@lru_cache(maxsize=1)
def network_isolation() -> str:
    """``"unshare -rn"`` when a child can be put in its own network namespace here, else
    a sentence saying the network is *not* isolated."""
    exe = shutil.which("unshare")
    if exe is None or sys.platform != "linux":
        return "NOT isolated (no unshare on this machine): run verify in a container"
    try:
        ok = subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    if not ok:
        return "NOT isolated (user namespaces are disabled here): run verify in a container"
    return "unshare -rn"


def module_source_sha256(import_path: str, path: list[str] | None = None) -> tuple[str, str]:
    """``(sha256, file)`` of the module file an import path names, *without importing or
    running anything*: the top-level package is located on ``path`` (default
    ``sys.path``) or, for an installed (e.g. editable) package, by the import system's
    finders, which only look it up; the rest of the dotted name is followed as folders.
    ``ValueError`` when it is not a source file."""
    import importlib.util

    module = import_path.partition(":")[0]
    parts = module.split(".")
    roots: list[Path] = [Path(b or ".") for b in (path if path is not None else sys.path)]
    if path is None and parts[0] not in sys.stdlib_module_names:
        try:
            spec = importlib.util.find_spec(parts[0])  # a top-level lookup imports nothing
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            roots.insert(0, Path(spec.origin).parent.parent)
        elif spec is not None and spec.submodule_search_locations:
            roots[:0] = [Path(loc).parent for loc in spec.submodule_search_locations]
    for root in roots:
        py, pkg = root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")
        for cand in (py, pkg):
            if cand.is_file():
                from hbo_envs.harness.store import file_sha256

                return file_sha256(cand), str(cand)
    raise ValueError(
        f"The module {module!r} of import path {import_path!r} is not a source file on the "
        "Python path of the verifier; install the submitted package (or put it on PYTHONPATH)."
    )


def _preexec(limits: dict[str, int]) -> Any:
    def apply() -> None:  # runs in the child between fork and exec
        import resource

        os.setsid()
        mem = limits["memory_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 5))
        size = limits["file_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


class AgentProcess:
    """One sandboxed agent ``import_path(**params)`` serving episodes (module docstring).

    >>> from hbo_envs.leaderboard.sandbox import AgentProcess
    >>> with AgentProcess("agents.baselines.uniform:RandomAgent", {}) as ap:
    ...     regret = ap.episode("hbo/RKHS-SE-Spike-v0", seed=0, horizon=20)
    >>> regret.shape
    (20,)
    """

    def __init__(
        self,
        import_path: str,
        params: dict[str, Any],
        *,
        limits: SandboxLimits | None = None,
        sys_path: list[str] | None = None,
    ) -> None:
        self.import_path = import_path
        self.params = params
        self.limits = limits or SandboxLimits()
        self.sys_path = [str(Path(p or ".").resolve()) for p in (sys_path or sys.path)]
        self.proc: subprocess.Popen[bytes] | None = None
        self.scratch: str | None = None
        self._buf = b""
        self._deadline = 0.0
        self._envs: dict[Any, Any] = {}
        self._stderr: Any = None

    # -- process ----------------------------------------------------------------------------
    def start(self) -> None:
        lim = self.limits.describe()
        self.scratch = tempfile.mkdtemp(prefix="hbo-verify-")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.scratch,
            "TMPDIR": self.scratch,
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(self.sys_path),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            **{k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        }
        # This file run as a script, not ``-m hbo_envs.leaderboard.sandbox``: ``-m`` would
        # import the package ``hbo_envs.leaderboard`` first, whose eager exports (pandas,
        # jsonschema, scipy.stats, the verifier) cost ~0.7 CPU-s at every start, for nothing
        # the child uses. With ``-I`` the script's folder is not put on ``sys.path``.
        cmd = [sys.executable, "-I", str(Path(__file__).resolve())]
        if lim["network"] == "unshare -rn":
            cmd = [shutil.which("unshare") or "unshare", "-rn", *cmd]
        # -I ignores PYTHONPATH: the job carries sys.path instead
        self._stderr = open(Path(self.scratch) / "stderr.txt", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=self.scratch,
            env=env,
            preexec_fn=_preexec(lim),  # noqa: PLW1509 - rlimits must be set before exec
            close_fds=True,
        )
        self._deadline = time.monotonic() + float(self.limits.wall_s)
        job = {"import_path": self.import_path, "params": self.params, "sys_path": self.sys_path}
        self._send(json.dumps(job).encode() + b"\n")
        line = self._line()
        if line != b"S ok\n":
            raise SandboxError(self._refusal(line))

    def close(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.poll() is None:
                    try:
                        self._send(b"Q\n")
                        self.proc.wait(timeout=5)
                    except (SandboxError, subprocess.TimeoutExpired):
                        pass
                if self.proc.poll() is None:
                    os.killpg(self.proc.pid, 9)
                    self.proc.wait()
            finally:
                for f in (self.proc.stdin, self.proc.stdout):
                    if f is not None:
                        f.close()
                self.proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def __enter__(self) -> AgentProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stderr_tail(self) -> str:
        try:
            text = (Path(self.scratch or ".") / "stderr.txt").read_bytes()[-2000:]
        except OSError:
            return ""
        return text.decode("utf-8", "replace").strip()

    def _refusal(self, line: bytes) -> str:
        if line.startswith(b"E "):
            try:
                return str(json.loads(line[2:]))
            except ValueError:
                pass
        tail = self._stderr_tail()
        return f"the agent process answered {line[:80]!r}" + (
            f"; its stderr: {tail}" if tail else ""
        )

    def _send(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxError(self._died()) from None

    def _died(self) -> str:
        assert self.proc is not None
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        why = {-9: "killed (CPU time limit or memory)", -24: "CPU time limit exceeded"}.get(
            rc or 0, f"exit status {rc}"
        )
        tail = self._stderr_tail()
        return f"the agent process ended ({why})" + (f"; its stderr: {tail}" if tail else "")

    def _line(self) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = self._deadline - time.monotonic()
            if left <= 0:
                os.killpg(self.proc.pid, 9)
                raise SandboxError(
                    f"the agent exceeded the wall-clock limit of {self.limits.wall_s:g} s"
                )
            ready, _, _ = select.select([fd], [], [], min(left, 5.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SandboxError(self._died())
            self._buf += chunk
            if len(self._buf) > _LINE_MAX and b"\n" not in self._buf:
                raise SandboxError("the agent process sent an over-long line")
        line, _, self._buf = self._buf.partition(b"\n")
        return line + b"\n"

    def _action(self, n: int) -> int:
        line = self._line()
        m = _ACTION.fullmatch(line)
        if m is None:
            raise SandboxError(self._refusal(line))
        a = int(m.group(1))
        if not 0 <= a < n:
            raise SandboxError(f"the agent played action {a}, outside 0..{n - 1}")
        return a

    # -- episodes ---------------------------------------------------------------------------
    def episode(
        self,
        env_id: str,
        *,
        seed: int,
        horizon: int | None = None,
        env_kwargs: dict[str, Any] | None = None,
        rounds: list[int] | None = None,
    ) -> Any:
        """Run one episode (env in this process, agent in the child) and return the
        cumulative regret ``R_t`` at ``rounds`` (default: every round ``1..T``) as a
        float array, computed exactly as :func:`hbo_envs.harness.run_cell` does."""
        import gymnasium as gym
        import numpy as np

        from hbo_envs.harness.specs import agent_seed

        if self.proc is None:
            self.start()
        kw = dict(env_kwargs or {})
        key = (env_id, json.dumps(kw, sort_keys=True, default=str), horizon)
        if key not in self._envs:  # one env per process (thread), as the harness's cache
            self._envs.clear()
            self._envs[key] = gym.make(
                env_id, **kw, **({} if horizon is None else {"horizon": horizon})
            )
        u = self._envs[key].unwrapped
        u.reset(seed=int(seed))
        problem = u.problem
        T, n = int(u.horizon), int(problem.n)
        want = np.arange(1, T + 1) if rounds is None else np.asarray(rounds, dtype=np.int64)
        at = {int(t): k for k, t in enumerate(want)}
        out = np.full(want.size, np.nan)
        blob = pickle.dumps(problem, protocol=pickle.HIGHEST_PROTOCOL)
        self._send(f"R {agent_seed(int(seed))} {len(blob)}\n".encode() + blob)
        cum = 0.0
        for t in range(1, T + 1):
            action = self._action(n)
            _, reward, _, _, info = u.step(action)
            cum += info["regret"]
            if t in at:
                out[at[t]] = cum
            last = t == T
            self._send(f"{'L' if last else 'U'} {float(reward).hex()}\n".encode())
        line = self._line()
        if line != b"K\n":
            raise SandboxError(self._refusal(line))
        return out


# -- the child --------------------------------------------------------------------------------
def _resolve(import_path: str) -> type:
    import importlib

    module, _, attr = import_path.partition(":")
    root = module.split(".")[0]
    if root in sys.stdlib_module_names or root == "builtins":
        raise ValueError(f"import_path {import_path!r} names a standard-library module.")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not inspect.isclass(obj):
        raise ValueError(
            f"import_path {import_path!r} must name an agent class; it names a "
            f"{type(obj).__name__}."
        )
    missing = [m for m in ("reset", "act", "update") if not callable(getattr(obj, m, None))]
    if missing:
        raise ValueError(
            f"import_path {import_path!r} names class {obj.__qualname__}, which lacks the "
            f"Agent methods {missing}; it is not instantiated."
        )
    return obj


def _child() -> int:  # pragma: no cover - runs in the sandbox process (tested end to end)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # the agent's prints go to stderr, never into the protocol
    inp = sys.stdin.buffer

    def reply(text: str) -> None:
        out.write(text.encode() + b"\n")

    def fail(exc: BaseException) -> int:
        reply("E " + json.dumps(f"{type(exc).__name__}: {exc}"))
        return 1

    try:
        job = json.loads(inp.readline(1 << 20))
        sys.path[:0] = [p for p in job["sys_path"] if p not in sys.path]
        from agents.checks import check_agent

        cls = _resolve(job["import_path"])
        agent = cls(**job["params"])
        check_agent(agent, rounds=20)
    except BaseException as exc:  # noqa: BLE001 - reported to the verifier
        return fail(exc)
    reply("S ok")
    last = 0
    while True:
        line = inp.readline(_LINE_MAX)
        if not line or line == b"Q\n":
            # Done: skip the interpreter's teardown (freeing every module of numpy, scipy,
            # gymnasium and the agent: ~0.1 s the verifier waited for at each close), with
            # the agent's buffered prints flushed to the stderr file first.
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(0)
        try:
            kind, _, rest = line.decode().strip().partition(" ")
            if kind == "R":
                seed_s, nbytes = rest.split()
                problem = pickle.loads(inp.read(int(nbytes)))  # from the (trusted) verifier
                agent.reset(problem, seed=int(seed_s))
            elif kind in ("U", "L"):
                agent.update(last, float.fromhex(rest))
                if kind == "L":
                    reply("K")
                    continue
            else:
                raise ValueError(f"unknown command {kind!r}")
            last = int(agent.act())
            reply(f"A {last}")
        except BaseException as exc:  # noqa: BLE001 - reported to the verifier
            return fail(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_child())
