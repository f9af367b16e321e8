"""Running a submitted agent in a separate, isolated, resource-limited process (the
verifier's side; the trust model and what each piece stops: ``docs/leaderboard-trust.md``).

The verifier never runs submitted code in its own process. :class:`AgentProcess` starts
this module's file (``python -I .../sandbox.py``) as a child that, when the verifier runs
as root on Linux (:func:`isolation` returns :data:`FULL`),

- lives in its own pid, mount and network namespaces (``unshare``): it sees only its own
  processes, has only a loopback device that is down, and dies with every descendant when
  the namespace's first process is killed;
- runs as a fresh uid/gid owning nothing, without capabilities or supplementary groups,
  with ``no_new_privs`` (``setpriv``), and a seccomp filter refusing ``AF_UNIX`` sockets;
- can write only to its scratch tmpfs (its working directory, ``HOME`` and ``TMPDIR``):
  the shared writable folders are bound read-only; folders other users cannot traverse
  that hold the Python installation are replaced by a tmpfs binding back only it;
- has limits (:class:`SandboxLimits`): processes (``RLIMIT_NPROC`` of its uid), the total
  resident memory of all its processes (a watchdog thread) and each one's address space,
  CPU seconds, file size, no core dumps, and one wall-clock deadline for a whole re-run;
- gets a minimal environment (no variables of the verifier's shell), one BLAS thread.

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
``{job JSON}`` -> ``S ok <imported file JSON>`` | ``E <message>``;
``R <seed> <nbytes>`` + pickle -> ``A <a>``; ``U <h>`` -> ``A <a>``; ``L <h>`` -> ``K``;
``Q`` -> exit.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import re
import secrets
import select
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "AgentProcess",
    "SandboxError",
    "SandboxLimits",
    "isolation",
    "module_source_sha256",
    "resolve_module_file",
]

_LINE_MAX = 4096
_ACTION = re.compile(rb"A (\d{1,19})\n")
#: Sandbox users are fresh uids in [_UID_BASE, _UID_BASE + 2**29): no account owns them.
#: Environment variables that choose CPU kernels (OpenBLAS's and numpy's SIMD dispatch),
#: passed through to the sandbox when set: they are machine configuration, not secrets.
CPU_DISPATCH_VARIABLES = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
)

_UID_BASE = 2**30


class SandboxError(RuntimeError):
    """The sandboxed agent could not be started, refused, crashed or broke a limit."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of the sandbox of one verification (every agent process and descendant).

    ``wall_s``: wall-clock seconds of the *whole* verification (``rerun_cells`` stops
    every process at this deadline; parent-enforced); ``cpu_s``: CPU seconds of each
    process (``RLIMIT_CPU``, default ``wall_s``); ``memory_mb``: total resident memory of
    the sandbox (all its processes, summed, watched every 0.2 s; each process's address
    space ``RLIMIT_AS`` is capped at it too); ``file_mb``: largest file it may write
    (``RLIMIT_FSIZE``); ``scratch_mb``: size of its scratch directory (a tmpfs, the only
    place it can write); ``processes``: tasks (processes and threads) of the sandbox's
    user (``RLIMIT_NPROC``); ``network``: allow network access (default False).
    """

    wall_s: float = 7200.0
    cpu_s: int | None = None
    memory_mb: int = 4096
    file_mb: int = 64
    scratch_mb: int = 256
    processes: int = 64
    network: bool = False

    def __post_init__(self) -> None:
        from hbo_envs.validation import check_bool, check_int, check_real

        check_real("SandboxLimits", "wall_s", self.wall_s, 0, closed="right")
        if self.cpu_s is not None:
            check_int("SandboxLimits", "cpu_s", self.cpu_s, 1)
        check_int("SandboxLimits", "memory_mb", self.memory_mb, 256)
        check_int("SandboxLimits", "file_mb", self.file_mb, 1)
        check_int("SandboxLimits", "scratch_mb", self.scratch_mb, 1)
        check_int("SandboxLimits", "processes", self.processes, 4, 4096)
        check_bool("SandboxLimits", "network", self.network)

    def describe(self) -> dict[str, Any]:
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s if self.cpu_s is not None else int(self.wall_s) + 1,
            "memory_mb": self.memory_mb,
            "file_mb": self.file_mb,
            "scratch_mb": self.scratch_mb,
            "processes": self.processes,
            "network": "allowed" if self.network else "none",
            "isolation": isolation(),
        }


#: What :func:`isolation` returns when the sandbox holds (the record says which applied).
FULL = (
    "full: unprivileged fresh uid/gid without capabilities (no_new_privs), own pid, mount "
    "and network namespaces, writes only to a scratch tmpfs, AF_UNIX sockets refused "
    "(seccomp), killed as a namespace"
)


@lru_cache(maxsize=1)
def isolation() -> str:
    """How agent processes are isolated here: :data:`FULL` when the verifier runs as root
    on Linux with ``unshare`` and ``setpriv`` (util-linux), else a sentence starting with
    ``NOT isolated`` or ``partial`` saying what is missing."""
    if sys.platform != "linux":
        return "NOT isolated (not Linux): run verify in a container"
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare is None or setpriv is None:
        return "NOT isolated (no unshare/setpriv of util-linux here): run verify in a container"
    if os.geteuid() == 0:
        probe = [unshare, "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "true"]
        if _probe(probe):
            return FULL
        return "NOT isolated (namespaces unavailable to root here): run verify in a container"
    if _probe([unshare, "-rn", "--pid", "--fork", "--kill-child", "--mount-proc", "true"]):
        return (
            "partial: own user, pid and network namespaces, but as the verifying user (its "
            "files are writable): run verify as root for the full sandbox"
        )
    return "NOT isolated (user namespaces are disabled here): run verify in a container"


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def resolve_module_file(module: str, path: list[str] | None = None) -> Path:
    """The file Python's import system loads for ``module`` (dotted), found *without
    importing or running anything*, in the import system's own order: for each entry of
    ``path`` (default ``sys.path``), a package folder ``name/__init__.py`` before a module
    ``name.py`` (so a package ``agent/`` shadows ``agent.py``, as it does for ``import``);
    an installed (e.g. editable) top-level package is looked up by the finders, which
    import nothing. ``ValueError`` when the module is not a Python source file (an
    extension module, bytecode only, or not found)."""
    import importlib.machinery
    import importlib.util

    parts = module.split(".")
    if not module or not all(p.isidentifier() for p in parts):
        raise ValueError(f"{module!r} is not a dotted module name.")
    entries = [Path(b or ".") for b in (path if path is not None else sys.path)]
    top: Path | None = None
    for base in entries:
        found = _find_in(base, parts[0])
        if found is not None:
            top = found
            break
    if top is None and path is None:
        try:
            spec = importlib.util.find_spec(parts[0])  # a top-level lookup imports nothing
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                if (Path(loc) / "__init__.py").is_file():
                    top = Path(loc) / "__init__.py"
                    break
        elif spec is not None and spec.origin:
            top = Path(spec.origin)
    if top is None:
        raise ValueError(f"the module {parts[0]!r} is not on the Python path of the verifier")
    cur = top
    for name in parts[1:]:
        if cur.name != "__init__.py":
            raise ValueError(f"{cur} is a module, not a package: {module!r} cannot be imported")
        nxt = _find_in(cur.parent, name)
        if nxt is None:
            raise ValueError(f"the module {module!r} is not a source file under {cur.parent}")
        cur = nxt
    if cur.suffix != ".py":
        raise ValueError(f"the module {module!r} resolves to {cur}, which is not Python source")
    return cur.resolve()


def _find_in(folder: Path, name: str) -> Path | None:
    """What ``FileFinder`` finds for ``name`` in ``folder``: a regular package, else an
    extension module, else a source module (``None`` for nothing or a namespace folder)."""
    import importlib.machinery

    pkg = folder / name
    if pkg.is_dir():
        for suffix in importlib.machinery.all_suffixes():
            init = pkg / f"__init__{suffix}"
            if init.is_file():
                return init
    for suffix in (*importlib.machinery.EXTENSION_SUFFIXES, *importlib.machinery.SOURCE_SUFFIXES):
        cand = folder / f"{name}{suffix}"
        if cand.is_file():
            return cand
    return None


def module_source_sha256(import_path: str, path: list[str] | None = None) -> tuple[str, str]:
    """``(sha256, file)`` of the module file an import path names, as Python's import
    resolves it (:func:`resolve_module_file`), *without importing or running anything*.
    ``ValueError`` when it is not a source file."""
    from hbo_envs.harness.store import file_sha256

    module = import_path.partition(":")[0]
    try:
        f = resolve_module_file(module, path)
    except ValueError as exc:
        raise ValueError(
            f"The module {module!r} of import path {import_path!r} cannot be pinned: {exc}; "
            "install the submitted package (or put it on PYTHONPATH)."
        ) from None
    return file_sha256(f), str(f)


def _preexec(limits: dict[str, Any]) -> Any:
    def apply() -> None:  # runs in the child between fork and exec
        import resource

        os.setsid()
        mem = limits["memory_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 5))
        size = limits["file_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        nproc = limits["processes"]
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply


def _traversable(p: Path) -> bool:
    try:
        return bool(p.stat().st_mode & stat.S_IXOTH)
    except OSError:
        return True


def _exposures(needed: list[str]) -> dict[str, list[str]]:
    """``{blocked folder: [needed paths under it]}``: folders on the way to a path the
    sandbox must read (the Python installation, the import path) that other users cannot
    traverse (e.g. ``/root`` holding ``~/.pyenv``). The sandbox hides each behind an empty
    tmpfs and binds back only the needed paths (so nothing else of them is visible)."""
    out: dict[str, list[str]] = {}
    for n in needed:
        p = Path(n)
        if not p.exists():
            continue
        for anc in [*reversed(p.parents), p][1:]:
            if not _traversable(anc):
                if anc != p:
                    out.setdefault(str(anc), []).append(str(p))
                break
    for k, v in out.items():  # keep the outermost of nested paths
        v = sorted(set(v))
        out[k] = [x for x in v if not any(x != y and x.startswith(y + "/") for y in v)]
    return out


def _full_command(
    cmd: list[str],
    *,
    private: Path,
    scratch: Path,
    uid: int,
    scratch_mb: int,
    network: bool,
    sys_path: list[str],
) -> list[str]:
    """``unshare`` (pid, mount and network namespaces, as root) running a setup script that
    makes the shared writable folders read-only, mounts the scratch tmpfs (owned by
    ``uid``), exposes the Python installation, then ``setpriv`` drops to ``uid`` without
    capabilities or the means to regain them."""
    q = shlex.quote
    needed = sorted(
        {
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            str(Path(sys.executable).resolve().parent),
            str(Path(sys.executable).parent),
            *sys_path,
        }
    )
    lines = ["set -e"]
    stage = private / "stage"
    exposures, k = [], 0
    for blocked, paths in _exposures(needed).items():
        moves = []
        for p in paths:  # staged before the read-only binds below (which carry them along)
            st = q(str(stage / str(k)))
            lines += [f"mkdir -p {st}", f"mount --rbind {q(p)} {st}"]
            moves.append((stage / str(k), p))
            k += 1
        exposures.append((blocked, moves))
    for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"):
        p = Path(d)
        if p.is_dir() and not p.is_symlink() and os.stat(d).st_mode & stat.S_IWOTH:
            lines += [f"mount --rbind {q(d)} {q(d)}", f"mount -o remount,bind,ro {q(d)}"]
    for blocked, moves in exposures:
        lines.append(f"mount -t tmpfs -o mode=0755,size=1m,nosuid,nodev tmpfs {q(blocked)}")
        for src, dst in moves:
            lines += [f"mkdir -p {q(dst)}", f"mount --move {q(str(src))} {q(dst)}"]
    lines += [
        f"mount -t tmpfs -o size={int(scratch_mb)}m,mode=0700,uid={uid},gid={uid},nosuid,nodev "
        f"tmpfs {q(str(scratch))}",
        f"cd {q(str(scratch))}",
        'exec "$@"',
    ]
    setpriv = shutil.which("setpriv") or "setpriv"
    drop = [
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]
    ns = ["--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--propagation", "private"]
    if not network:
        ns.insert(0, "--net")
    unshare = shutil.which("unshare") or "unshare"
    return [unshare, *ns, "/bin/sh", "-c", "\n".join(lines), "hbo-sandbox", *drop, *cmd]


def _uid_processes(uid: int) -> list[tuple[int, int]]:
    """``(pid, resident kB)`` of every process whose real uid is ``uid``."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status", "rb") as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(rb"\nUid:\s+(\d+)", text)
        if m is None or int(m.group(1)) != uid:
            continue
        r = re.search(rb"\nVmRSS:\s+(\d+)", text)
        out.append((int(d), int(r.group(1)) if r else 0))
    return out


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
        deadline: float | None = None,
        module_file: str | None = None,
    ) -> None:
        self.import_path = import_path
        self.params = params
        self.limits = limits or SandboxLimits()
        self.sys_path = [str(Path(p or ".").resolve()) for p in (sys_path or sys.path)]
        #: time.monotonic() past which nothing runs (a whole verification's deadline)
        self.deadline = deadline
        #: the file the verifier pinned: the child must have imported exactly this one
        self.module_file = module_file
        self.proc: subprocess.Popen[bytes] | None = None
        self.scratch: str | None = None
        self.private: str | None = None
        self.uid: int | None = None
        self._buf = b""
        self._deadline = 0.0
        self._envs: dict[Any, Any] = {}
        self._stderr: Any = None
        self._watch: threading.Thread | None = None
        self._stop = threading.Event()
        self._killed_for: str | None = None

    # -- process ----------------------------------------------------------------------------
    def start(self) -> None:
        lim = self.limits.describe()
        full = lim["isolation"] == FULL
        # private: the verifier's (root-only traversable) folder; scratch: the mount point of
        # the sandbox's tmpfs (in its own mount namespace; empty here)
        self.private = tempfile.mkdtemp(prefix="hbo-verify-")
        self.scratch = str(Path(self.private) / "scratch")
        os.mkdir(self.scratch, 0o700)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.scratch,
            "TMPDIR": self.scratch,
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            **{k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
            # the machine's CPU-kernel choices (no secrets): a machine that pins OpenBLAS's
            # kernel because the default one is wrong on its CPU needs the agent to run with
            # the same kernels as the verifier (and a CPU-family emulation reaches the agent)
            **{k: os.environ[k] for k in CPU_DISPATCH_VARIABLES if k in os.environ},
        }
        # This file run as a script, not ``-m hbo_envs.leaderboard.sandbox``: ``-m`` would
        # import the package ``hbo_envs.leaderboard`` first, whose eager exports (pandas,
        # jsonschema, scipy.stats, the verifier) cost ~0.7 CPU-s at every start, for nothing
        # the child uses. With ``-I`` the script's folder is not put on ``sys.path`` (and
        # PYTHONPATH is ignored: the job carries sys.path instead).
        cmd = [sys.executable, "-I", str(Path(__file__).resolve())]
        if full:
            os.chmod(self.private, 0o711)  # the sandbox user may traverse, not list, it
            self.uid = _UID_BASE + secrets.randbelow(2**29)
            cmd = _full_command(
                cmd,
                private=Path(self.private),
                scratch=Path(self.scratch),
                uid=self.uid,
                scratch_mb=self.limits.scratch_mb,
                network=self.limits.network,
                sys_path=self.sys_path,
            )
        elif lim["isolation"].startswith("partial") and not self.limits.network:
            unshare = shutil.which("unshare") or "unshare"
            cmd = [unshare, "-rn", "--pid", "--fork", "--kill-child", "--mount-proc", *cmd]
        self._stderr = open(Path(self.private) / "stderr.txt", "wb")  # noqa: SIM115
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
        own = time.monotonic() + float(self.limits.wall_s)
        self._deadline = own if self.deadline is None else min(own, self.deadline)
        if self.uid is not None:
            self._watch = threading.Thread(target=self._watchdog, daemon=True)
            self._watch.start()
        job = {
            "import_path": self.import_path,
            "params": self.params,
            "sys_path": self.sys_path,
            "seccomp": full,
        }
        self._send(json.dumps(job).encode() + b"\n")
        line = self._line()
        if not line.startswith(b"S ok "):
            raise SandboxError(self._refusal(line))
        try:
            imported = json.loads(line[5:])
        except ValueError:
            raise SandboxError(self._refusal(line)) from None
        if self.module_file is not None and imported != self.module_file:
            raise SandboxError(
                f"the agent process imported {self.import_path.partition(':')[0]!r} from "
                f"{imported!r}, not from the file whose hash was pinned ({self.module_file})"
            )

    def _watchdog(self) -> None:
        """Every 0.2 s: the resident memory of all the sandbox user's processes, summed;
        over ``memory_mb``, the whole sandbox is killed."""
        assert self.uid is not None
        cap = self.limits.memory_mb * 1024
        while not self._stop.wait(0.2):
            procs = _uid_processes(self.uid)
            total = sum(kb for _, kb in procs)
            if total > cap:
                self._killed_for = (
                    f"the sandbox's processes used {total // 1024} MiB in total, over the "
                    f"limit of {self.limits.memory_mb} MiB ({len(procs)} processes)"
                )
                self._kill_all()
                return

    def _kill_all(self) -> None:
        """Kill the process group (``unshare``: its pid namespace dies with it, every
        descendant included) and any process left with the sandbox's uid."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
        if self.uid is not None:
            for _ in range(50):
                left = _uid_processes(self.uid)
                if not left:
                    break
                for pid, _ in left:
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
                time.sleep(0.02)

    def close(self) -> None:
        self._stop.set()
        if self.proc is not None:
            try:
                if self.proc.poll() is None:
                    try:
                        self._send(b"Q\n")
                        self.proc.wait(timeout=5)
                    except (SandboxError, subprocess.TimeoutExpired):
                        pass
                self._kill_all()
                self.proc.wait()
            finally:
                for f in (self.proc.stdin, self.proc.stdout):
                    if f is not None:
                        f.close()
                self.proc = None
        if self._watch is not None:
            self._watch.join(timeout=5)
            self._watch = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = self.scratch = None

    def __enter__(self) -> AgentProcess:
        try:
            self.start()
        except BaseException:
            self.close()  # a refused start leaves no process and no folder behind
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stderr_tail(self) -> str:
        try:
            text = (Path(self.private or ".") / "stderr.txt").read_bytes()[-2000:]
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
        why = self._killed_for or {
            -9: "killed (CPU time limit or memory)",
            -24: "CPU time limit exceeded",
        }.get(rc or 0, f"exit status {rc}")
        tail = self._stderr_tail()
        return f"the agent process ended ({why})" + (f"; its stderr: {tail}" if tail else "")

    def _line(self) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self._kill_all()
                raise SandboxError(
                    f"the agent exceeded the wall-clock limit of {self.limits.wall_s:g} s"
                    + (" (the verification's whole time)" if self.deadline is not None else "")
                )
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SandboxError(self._died())
            if self._killed_for:
                raise SandboxError(self._killed_for)
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
        agent_seed: int | None = None,
    ) -> Any:
        """Run one episode (env in this process, agent in the child) and return the
        cumulative regret ``R_t`` at ``rounds`` (default: every round ``1..T``) as a
        float array, computed exactly as :func:`hbo_envs.harness.run_cell` does.

        The env is reset with ``seed``; the agent with ``agent_seed`` (default: the
        harness's ``agent_seed(seed)``; a verification's hidden cells pass a secret,
        independent one, so the agent cannot recover ``seed`` from it)."""
        import gymnasium as gym
        import numpy as np

        from hbo_envs.harness.specs import agent_seed as derived_seed

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
        a_seed = derived_seed(int(seed)) if agent_seed is None else int(agent_seed)
        self._send(f"R {a_seed} {len(blob)}\n".encode() + blob)
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


def _deny_unix_sockets() -> None:
    """Install a seccomp filter (inherited by every descendant, irrevocable) making
    ``socket(AF_UNIX, ...)`` fail with ``EACCES``: a UNIX socket is not scoped by the
    network namespace and could reach a host service. x86-64 only (the only architecture
    of the project's machines); x32 system calls are refused. Needs ``no_new_privs``."""
    import ctypes
    import platform
    import struct

    if platform.machine() != "x86_64":
        raise OSError(f"the seccomp filter is written for x86_64, not {platform.machine()}")
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 13  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO|EACCES
    prog = [
        (ld_w_abs, 0, 0, 4),  # A = arch
        (jeq_k, 1, 0, 0xC000003E),  # AUDIT_ARCH_X86_64 ?
        (ret_k, 0, 0, deny),
        (ld_w_abs, 0, 0, 0),  # A = syscall number
        (jge_k, 0, 1, 0x40000000),  # x32 ABI
        (ret_k, 0, 0, deny),
        (jeq_k, 0, 3, 41),  # socket(2)?
        (ld_w_abs, 0, 0, 16),  # A = low word of args[0] (the family)
        (jeq_k, 0, 1, 1),  # AF_UNIX?
        (ret_k, 0, 0, deny),
        (ret_k, 0, 0, allow),
    ]
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


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
        if job.get("seccomp"):
            _deny_unix_sockets()
        sys.path[:0] = [p for p in job["sys_path"] if p not in sys.path]
        from agents.checks import check_agent

        cls = _resolve(job["import_path"])
        module = sys.modules[job["import_path"].partition(":")[0]]
        imported = str(Path(module.__file__ or "").resolve())
        agent = cls(**job["params"])
        check_agent(agent, rounds=20)
        # The pools are one thread wide already (the environment above); holding the
        # harness's context tells the agents' small-BLAS guards so, which then skip their
        # own limit (hbo_envs.blas: ~10 us a guarded call otherwise). Never left: the
        # process ends with os._exit. Inside the try, so a failure is reported, not a crash.
        from hbo_envs.blas import one_blas_thread

        one_blas_thread().__enter__()
    except BaseException as exc:  # noqa: BLE001 - reported to the verifier
        return fail(exc)
    reply("S ok " + json.dumps(imported))
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
