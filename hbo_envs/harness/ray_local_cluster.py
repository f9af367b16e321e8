"""A real multi-node Ray cluster on loopback, for tests and benchmarks (Linux).

:class:`LoopbackCluster` starts a head and ``nodes - 1`` worker nodes as separate
``ray start --block`` processes on ``127.0.0.1``, with token authentication on, a private
``--temp-dir`` and ``HOME`` (nothing touches ``~/.ray`` or another user's cluster), free
ports, few CPUs and a small object store per node. Every process it starts it stops, by
pid (``SIGTERM`` to each ``ray start --block``, which shuts its node down; then
``SIGKILL`` to the process group it created), also when a test fails::

    with LoopbackCluster(nodes=2) as cl:
        subprocess.run([... "hbo-bench", "run", ..., "--address", cl.address],
                       env=cl.driver_env())
        cl.kill_node(1)             # the worker node, every process at once

The commands are those of ``docs/cluster.md`` with loopback addresses and the test-only
flags (``--block``, ``--temp-dir``, explicit ports).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["LoopbackCluster", "free_port"]

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _proc_children() -> dict[int, list[int]]:
    """``ppid -> [pid]`` of every process (from ``/proc``)."""
    out: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        out.setdefault(ppid, []).append(int(d.name))
    return out


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid``."""
    kids = _proc_children()
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid: int) -> str:
    """The process's command line (Ray workers show ``ray::<task>`` / ``ray::IDLE``)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _sigkill_node(proc: subprocess.Popen[bytes], members: dict[int, str]) -> None:
    """SIGKILL the process group of a node's ``ray start`` (``proc``), then each of
    ``members`` (pid -> command line, read before) still running that command: a node
    process that left the group (``setsid``); the check spares a reused pid. Then reap
    ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid, cmd in members.items():
        if cmd and cmdline(pid) == cmd:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass


class LoopbackCluster:
    """A head plus ``nodes - 1`` worker nodes, each a ``ray start --block`` process."""

    def __init__(
        self,
        nodes: int = 2,
        *,
        cpus_per_node: int = 1,
        object_store_mb: int = 80,
        env: dict[str, str] | None = None,
        token: str | None = None,
    ) -> None:
        if sys.platform != "linux":  # pragma: no cover - /proc is used to find raylets
            raise RuntimeError("LoopbackCluster needs Linux (/proc).")
        self.nodes = nodes
        self.cpus_per_node = cpus_per_node
        self.object_store_mb = object_store_mb
        self.token = token or secrets.token_hex(16)
        self.extra_env = dict(env or {})
        # short: Ray puts unix sockets under --temp-dir (107-byte limit)
        self.root = Path(tempfile.mkdtemp(prefix="hbr"))
        self.port = free_port()
        self.address = f"{HOST}:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    # -- environment ----------------------------------------------------------------------
    def node_env(self) -> dict[str, str]:
        """Environment of every node: token auth on, private ``HOME``, extra variables."""
        env = dict(os.environ)
        env.update(self.extra_env)
        env.update(
            HOME=str(self.root / "home"),
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN=self.token,
            RAY_USAGE_STATS_ENABLED="0",
        )
        for k in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH"):
            env.pop(k, None)
        return env

    def driver_env(self, *, token: bool = True) -> dict[str, str]:
        """Environment of a driver: the token only (``RAY_AUTH_MODE`` unset, as a user
        who copied just the token has it); ``token=False`` leaves it out."""
        env = self.node_env()
        env.pop("RAY_AUTH_MODE")
        if not token:
            env.pop("RAY_AUTH_TOKEN")
        return env

    # -- commands -------------------------------------------------------------------------
    @staticmethod
    def ray_cli() -> list[str]:
        """``ray`` of this interpreter (``python -m ray.scripts.scripts`` is the same CLI)."""
        return [sys.executable, "-m", "ray.scripts.scripts"]

    def recipe_command(self, index: int) -> list[str]:
        """The ``ray start`` of node ``index`` (0 is the head) as ``docs/cluster.md`` shows it."""
        if index == 0:
            cmd = ["start", "--head", "--port", str(self.port)]
        else:
            cmd = ["start", "--address", self.address]
        return cmd + ["--node-ip-address", HOST, "--num-cpus", str(self.cpus_per_node)]

    def start_command(self, index: int) -> list[str]:
        """:meth:`recipe_command` plus what a shared test machine needs: a small object
        store, free ports, a private ``--temp-dir``, ``--block`` (stoppable by pid)."""
        cmd = self.recipe_command(index)
        if index == 0:
            cmd += ["--include-dashboard", "false"]
        cmd += ["--object-store-memory", str(self.object_store_mb * 1024 * 1024)]
        cmd += ["--disable-usage-stats"]
        for flag in (
            "--node-manager-port",
            "--object-manager-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
            "--metrics-export-port",
        ):
            cmd += [flag, str(free_port())]
        cmd += ["--temp-dir", str(self.root / "ray"), "--block"]
        return cmd

    # -- life cycle -----------------------------------------------------------------------
    def _launch(self, index: int, timeout: float) -> None:
        log = self.root / f"node{index}.log"
        self.logs.append(log)
        with open(log, "wb") as fh:
            p = subprocess.Popen(
                self.ray_cli() + self.start_command(index),
                env=self.node_env(),
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stopped as one, by pgid
            )
        self.procs.append(p)
        deadline = time.monotonic() + timeout
        while True:  # "ray start" logs this once its node is up (then blocks)
            text = log.read_text(errors="replace")
            if "Ray runtime started" in text:
                break
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"ray start of node {index} did not come up within {timeout:g} s "
                    f"(exit {p.poll()}); its log:\n{text[-3000:]}"
                )
            time.sleep(0.2)
        if self.raylet_pid(index) is None:
            raise RuntimeError(f"node {index} started but has no raylet; log:\n{text[-3000:]}")

    def start(self, timeout: float = 120.0) -> LoopbackCluster:
        """Start the head, then the worker nodes; each must be up within ``timeout`` s."""
        try:
            for i in range(self.nodes):
                self._launch(i, timeout)
            self.wait_for_nodes(self.nodes, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_for_nodes(self, n: int, timeout: float) -> None:
        """Wait until ``n`` raylets are registered (their log says so) or raise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = [i for i in range(len(self.procs)) if self.raylet_pid(i) is not None]
            if len(alive) >= n:
                return
            time.sleep(0.2)
        raise RuntimeError(f"fewer than {n} Ray nodes alive after {timeout:g} s")

    def raylet_pid(self, index: int) -> int | None:
        """The pid of node ``index``'s raylet (a child of its ``ray start``), or None."""
        p = self.procs[index]
        for pid in descendants(p.pid):
            if cmdline(pid).split(" ", 1)[0].endswith("/raylet"):
                return pid
        return None

    def running_tasks(self, index: int, task: str = "run_cell") -> list[int]:
        """Pids of node ``index``'s workers executing a ``task`` right now."""
        raylet = self.raylet_pid(index)
        if raylet is None:
            return []
        return [c for c in descendants(raylet) if cmdline(c).startswith(f"ray::{task}")]

    def kill_node(self, index: int) -> int:
        """SIGKILL every process of node ``index`` at once (a lost machine); returns the pid
        of its raylet.

        The whole node, not its raylet alone: a worker whose raylet is gone keeps running
        for a moment, and one inside a cell could still hand that cell's result to the
        driver, so the cell would not be lost. One ``killpg`` signals the node's process
        group (``ray start``, raylet, workers, agents) in one step; processes that left the
        group are killed right after."""
        pid = self.raylet_pid(index)
        if pid is None:
            raise RuntimeError(f"node {index} has no raylet to kill")
        node = self.procs[index]
        _sigkill_node(node, {q: cmdline(q) for q in descendants(node.pid)})
        return pid

    def stop(self, timeout: float = 30.0) -> list[int]:
        """Stop every node this object started, by pid, then remove its directory.

        Returns the pids of its processes still alive afterwards (none, unless a process
        ignores SIGKILL while in the kernel)."""
        spawned = {pid: cmdline(pid) for p in self.procs for pid in descendants(p.pid)}
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)  # ray start --block shuts its node down
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in self.procs:  # whatever is left of each node
            _sigkill_node(p, spawned)
        shutil.rmtree(self.root, ignore_errors=True)
        deadline = time.monotonic() + 5
        while True:  # SIGKILLed processes vanish (or turn zombie: empty cmdline) shortly
            alive = [pid for pid, cmd in spawned.items() if cmd and cmdline(pid) == cmd]
            alive += [p.pid for p in self.procs if p.poll() is None]
            if not alive or time.monotonic() > deadline:
                return alive
            time.sleep(0.1)

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
