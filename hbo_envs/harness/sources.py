"""Which source files a computation depends on: the closure of project modules an object's
module reaches through its globals, and their SHA-256 (one implementation for the results
archive's cell hashes, :func:`hbo_envs.judging.archive.source_hashes`, and the leaderboard's
"is this reference current" check, :func:`hbo_envs.leaderboard.verify.reference_current`).

:func:`module_closure` walks ``sys.modules`` from a root module: every module under the given
prefixes that one of the reached modules refers to (a function, class or module it holds).
The result must not depend on what else the process imported, so a package attribute naming
one of its own submodules counts only when the package imports it or the *canonical* import
state (:func:`canonical_modules`: a fresh interpreter that imports ``hbo_envs``, ``agents``
and the archive) loads it.

>>> import agents.gp.gp_ucb as m
>>> mods = module_closure(m, AGENT_PREFIXES + (m.__name__,))
>>> "agents.gp.engine" in mods and "agents.robust.rcgp_ucb" not in mods
True
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from hbo_envs.harness.store import file_sha256

__all__ = [
    "AGENT_PREFIXES",
    "ENV_PREFIXES",
    "agent_source_hashes",
    "canonical_modules",
    "combined_sha256",
    "env_source_hashes",
    "imported_submodules",
    "module_closure",
    "module_file_sha256",
]

AGENT_PREFIXES = ("agents", "hbo_envs.kernels", "hbo_envs.problem")
ENV_PREFIXES = (
    "hbo_envs.envs",
    "hbo_envs.objectives",
    "hbo_envs.channels",
    "hbo_envs.adversaries",
    "hbo_envs.kernels",
    "hbo_envs.problem",
    "hbo_envs.data",
)


def imported_submodules(package: ModuleType) -> set[str]:
    """The names of ``package``'s submodules that its own ``__init__`` source imports
    (``from . import x``, ``from .x import y``, ``import package.x``, ...)."""
    try:
        tree = ast.parse(inspect.getsource(package))
    except (OSError, TypeError, SyntaxError):
        return set()
    name, out = package.__name__, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1 and not mod:
                out.update(a.name for a in node.names)
            elif node.level == 1:
                out.add(mod.partition(".")[0])
            elif node.level == 0 and mod == name:
                out.update(a.name for a in node.names)
            elif node.level == 0 and mod.startswith(name + "."):
                out.add(mod[len(name) + 1 :].partition(".")[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(name + "."):
                    out.add(a.name[len(name) + 1 :].partition(".")[0])
    return out


@functools.lru_cache(maxsize=1)
def canonical_modules() -> frozenset[str]:
    """The modules a fresh interpreter has loaded after importing this module (asked of
    a child process once): the import state every cell's hash is computed against, whatever
    else this process imported."""
    code = (
        "import sys, hbo_envs, agents, hbo_envs.judging.archive; "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return frozenset(out.stdout.split())


def module_closure(root: ModuleType, prefixes: tuple[str, ...]) -> list[str]:
    """``root`` and every module under ``prefixes`` it reaches through its globals.

    A package's attribute naming one of its own submodules counts only when the package's
    source imports that submodule or a fresh import of this module loads it
    (:func:`canonical_modules`): the import system sets such an attribute on the package
    whenever anything imports the submodule, so counting it otherwise would make the hash
    depend on what else the process had imported (a test run imports more than ``archive
    build``: e.g. ``hbo_envs.channels.quantiles``, the tails criterion's helper). For the
    same reason a submodule of a reached package that the canonical state loads counts even
    when this process has not imported it yet (it is imported to be walked): the closure is
    the canonical state's whatever this process imported, more or less."""
    seen: set[str] = set()
    todo = [root.__name__]
    while todo:
        name = todo.pop()
        if name in seen or name not in sys.modules:
            continue
        seen.add(name)
        mod = sys.modules[name]
        own: set[str] | None = None
        for attr, v in vars(mod).items():
            if isinstance(v, ModuleType):
                dep = v.__name__
                if hasattr(mod, "__path__") and dep == f"{name}.{attr}":
                    if own is None:
                        own = imported_submodules(mod)
                    if attr not in own and dep not in canonical_modules():
                        continue  # set by someone else's import, not this package's
            else:
                dep = getattr(v, "__module__", None)
            if isinstance(dep, str) and dep.startswith(prefixes) and dep not in seen:
                todo.append(dep)
        if hasattr(mod, "__path__"):
            # the other half: in the canonical state every submodule it loads is an
            # attribute of its package, so it counts whether or not this process has
            # imported it yet (a process that built no real-data env has not imported
            # hbo_envs.channels.empirical, which a fresh `import hbo_envs` loads)
            for dep in _canonical_children(name):
                if dep.startswith(prefixes) and dep not in seen:
                    importlib.import_module(dep)
                    todo.append(dep)
    return sorted(seen)


@functools.cache
def _canonical_children(package: str) -> tuple[str, ...]:
    """The direct submodules of ``package`` that the canonical import state loads."""
    return tuple(sorted(m for m in canonical_modules() if m.rpartition(".")[0] == package))


def module_file_sha256(module: str) -> str:
    try:
        path = inspect.getsourcefile(sys.modules[module])
    except TypeError:
        path = None
    if path is None:
        return "no-source"
    return file_sha256(Path(path))


def agent_source_hashes(module: str) -> dict[str, str]:
    """SHA-256 of the source file of every module an agent class's ``module`` depends on
    (:func:`module_closure` over :data:`AGENT_PREFIXES`): the class module itself and the
    ``agents`` modules it uses (the GP engine, schedules, ...). Imports ``module``."""
    root = sys.modules.get(module) or __import__(module, fromlist=["_"])
    return {m: module_file_sha256(m) for m in module_closure(root, AGENT_PREFIXES + (module,))}


def env_source_hashes(env_id: str) -> dict[str, str]:
    """SHA-256 of the source file of every module a registered env's entry point depends on
    (:func:`module_closure` over :data:`ENV_PREFIXES`: the env's module with its objectives,
    channels, adversaries and kernels). Imports the entry point's module."""
    import gymnasium as gym

    entry = str(gym.spec(env_id).entry_point).partition(":")[0]
    root = sys.modules.get(entry) or __import__(entry, fromlist=["_"])
    return {m: module_file_sha256(m) for m in module_closure(root, ENV_PREFIXES)}


def combined_sha256(hashes: dict[str, str]) -> str:
    """One SHA-256 of a ``{module: sha256}`` map (canonical JSON)."""
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()
