"""What to run: agent specifications, cell specifications and their names.

An *agent spec* says how to build an agent and how to call it in results; a *cell* is one
``(env, agent, seed)`` run, the unit of work, of storage and of resumption.

Agents can be given as

- a registered name (``"gp-ucb"``, built with ``agents.make(name, **params)``),
- an import string ``"package.module:Class"`` (a third-party agent; ``Class(**params)``),
- a factory (a class or any callable returning an agent; ``factory(**params)``),
- an agent instance (used as is; ``reset`` is called before every cell).

Labels. An agent's label is its name (the registered name, or the agent's ``name``
attribute) followed by its parameters in brackets when it has any, keys sorted:
``gp-ucb``, ``tgp-ucb[schedule=theory]``, ``gp-ucb[b=t^1/4,beta=ln t]``. Experiment
definitions may give an explicit label instead. The same bracket syntax is how the CLI
takes parameters: ``--agent 'tgp-ucb[schedule=theory]'``.

Run names are ``{env_id}__{agent_label}__{seed}`` (predictable, CleanRL's habit); on disk
they are made file-name safe by :func:`slug` (``/`` and other unsafe characters become
``_``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "AgentSpec",
    "CellSpec",
    "agent_seed",
    "format_param",
    "parse_agent",
    "parse_seeds",
    "slug",
]

_IMPORT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._,=+\-\[\]^]")


def slug(name: str) -> str:
    """A file-name safe version of a run name (unsafe characters become ``_``)."""
    return _UNSAFE.sub("_", name)


def format_param(value: Any) -> str:
    """Compact, stable text for a parameter value (used in labels and metadata).

    Numbers use ``repr`` of the Python value (``0.5``, ``2``); objects with a ``label``
    attribute (the schedules of :mod:`hbo_envs.harness.schedules`) use it; functions use
    their name.
    """
    if isinstance(value, bool | str | int) or value is None:
        return str(value)
    if isinstance(value, float | np.floating):
        return repr(float(value))
    label = getattr(value, "label", None)
    if isinstance(label, str):
        return label
    if callable(value):
        return getattr(value, "__qualname__", None) or getattr(value, "__name__", repr(value))
    if isinstance(value, list | tuple):
        return "(" + ",".join(format_param(v) for v in value) + ")"
    return repr(value)


def jsonable(value: Any) -> Any:
    """A JSON-friendly version of a parameter value (for ``meta.json``)."""
    if isinstance(value, bool | str | int) or value is None:
        return value
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return format_param(value)


def _is_instance(obj: Any) -> bool:
    return not isinstance(obj, type) and all(
        callable(getattr(obj, m, None)) for m in ("reset", "act", "update")
    )


def _import(path: str) -> Any:
    module, _, attr = path.partition(":")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(
            f"The agent import string {path!r} names module {module!r}, which cannot be "
            f"imported ({exc}). Put the module on PYTHONPATH or install its package."
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ValueError(
                f"The agent import string {path!r}: module {module!r} has no attribute {attr!r}."
            ) from exc
    return obj


@dataclass(frozen=True)
class AgentSpec:
    """How to build one agent, and the label it carries in results.

    ``source`` is a registered name, an import string ``module:Class``, a factory or an
    instance (see the module docstring); ``params`` are passed to the constructor
    (``agents.make(name, **params)``, ``Class(**params)``, ``factory(**params)``).
    """

    source: Any
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", dict(self.params))
        if _is_instance(self.source) and self.params:
            raise ValueError(
                "The 'params' of an AgentSpec must be empty when the agent is an instance "
                f"(got {dict(self.params)!r}); pass a class or factory to set parameters."
            )
        if not (isinstance(self.source, str) or callable(self.source)):
            if not _is_instance(self.source):
                raise ValueError(
                    "The 'agent' parameter must be a registered name, an import string "
                    "'module:Class', a factory or an Agent instance (with reset, act, "
                    f"update). Got {self.source!r} instead."
                )
        if self.label is None:
            object.__setattr__(self, "label", self._default_label())
        if not self.label:
            raise ValueError("An agent label must be a non-empty string.")

    # -- construction ---------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """``"name"``, ``"import"``, ``"factory"`` or ``"instance"``."""
        if isinstance(self.source, str):
            return "import" if ":" in self.source else "name"
        return "instance" if _is_instance(self.source) else "factory"

    def load(self) -> None:
        """Import the agent's code without building an agent (the registered class of a
        name, the module of an import string; nothing for a factory or an instance).

        A process pays an import once, so the harness calls this before its clock starts: a
        cell's agent seconds are the agent's own work (construction, ``reset`` and its
        rounds), and the first cell a process runs does not carry the import of the
        ``agents`` package or of a submitted module. An unknown name or a module that
        cannot be imported raises what :meth:`build` would raise."""
        kind = self.kind
        if kind == "import" and _IMPORT.match(self.source):
            _import(self.source)
        elif kind == "name":
            import agents

            resolve = getattr(getattr(agents, "registry", None), "resolve", None)
            if resolve is not None:
                resolve(self.source)

    def build(self) -> Any:
        """A fresh agent (or the instance itself); never reads anything but ``params``."""
        kind = self.kind
        if kind == "instance":
            return self.source
        if kind == "factory":
            return self.source(**self.params)
        if kind == "import":
            if not _IMPORT.match(self.source):
                raise ValueError(
                    f"The agent import string must look like 'package.module:Class'. "
                    f"Got {self.source!r} instead."
                )
            return _import(self.source)(**self.params)
        import agents

        make = getattr(agents, "make", None)
        if make is None:  # pragma: no cover - until the agents package provides make()
            raise ValueError(
                f"Cannot build agent {self.source!r}: the installed 'agents' package has no "
                "make(); pass an import string 'module:Class' instead."
            )
        return make(self.source, **self.params)

    def _default_label(self) -> str:
        kind = self.kind
        if kind == "name":
            base = self.source
        elif kind == "import":
            obj = _import(self.source) if _IMPORT.match(self.source) else None
            base = getattr(obj, "name", None) if obj is not None else None
            if not isinstance(base, str):
                base = self.source.rpartition(":")[2]
        elif kind == "instance":
            base = getattr(self.source, "name", None) or type(self.source).__name__
        else:
            base = getattr(self.source, "name", None)
            if not isinstance(base, str):
                base = getattr(self.source, "__name__", None) or type(self.source).__name__
        if not self.params:
            return str(base)
        inner = ",".join(f"{k}={format_param(v)}" for k, v in sorted(self.params.items()))
        return f"{base}[{inner}]"

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description for metadata."""
        src = self.source if isinstance(self.source, str) else format_param(self.source)
        if self.kind == "instance":
            src = f"{type(self.source).__module__}:{type(self.source).__qualname__} (instance)"
        return {
            "label": self.label,
            "kind": self.kind,
            "source": src,
            "params": jsonable(self.params),
        }


def parse_agent(text: str) -> AgentSpec:
    """Parse the CLI form ``name`` / ``module:Class`` with optional ``[k=v,...]`` params.

    Values are read as JSON when they parse (``2``, ``0.5``, ``true``, ``"x"``) and kept
    as strings otherwise: ``tgp-ucb[schedule=theory,delta=0.05]``.
    """
    text = text.strip()
    params: dict[str, Any] = {}
    if text.endswith("]") and "[" in text:
        base, _, inner = text[:-1].partition("[")
        for item in filter(None, (s.strip() for s in inner.split(","))):
            key, eq, raw = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(
                    f"The agent parameter {item!r} in {text!r} must look like key=value."
                )
            try:
                params[key.strip()] = json.loads(raw)
            except json.JSONDecodeError:
                params[key.strip()] = raw.strip()
        text = base.strip()
    if not text:
        raise ValueError("The '--agent' value must name an agent. Got an empty string.")
    return AgentSpec(text, params)


MAX_SEED = 2**63 - 1
"""Largest seed (seeds are stored as int64)."""
MAX_SEEDS = 100_000
"""Most seeds one seed list may hold (checked before the list is built)."""


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0-4"`` -> (0, 1, 2, 3, 4); ``"0,3,7-8"`` -> (0, 3, 7, 8); order kept, no repeats.

    The one seed syntax of every subcommand (``run``, ``reproduce``). Seeds are in
    ``[0, 2^63 - 1]``; at most :data:`MAX_SEEDS` of them, checked on the range bounds
    *before* anything is allocated (``0-99999999`` is refused at once, naming the limit).
    """
    if not isinstance(text, str):
        raise ValueError(f"The 'seeds' parameter must be a string like '0-19,25'. Got {text!r}.")
    out: list[int] = []
    total = 0
    bad = ValueError(
        f"The 'seeds' parameter must be non-negative integers or ranges like '0-19,25' "
        f"(each seed in [0, {MAX_SEED}]). Got {text!r} instead."
    )
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise ValueError(f"The 'seeds' parameter must list at least one seed. Got {text!r}.")
    for part in parts:
        if not part:
            raise bad
        try:
            if "-" in part[1:]:
                i = part.index("-", 1)
                lo, hi = int(part[:i]), int(part[i + 1 :])
            else:
                lo = hi = int(part)
        except ValueError:
            raise bad from None
        if hi < lo or lo < 0 or hi > MAX_SEED:
            raise bad
        total += hi - lo + 1
        if total > MAX_SEEDS:
            raise ValueError(
                f"The 'seeds' parameter {text!r} lists {total} or more seeds; at most "
                f"{MAX_SEEDS} are allowed in one sweep."
            )
        out.extend(range(lo, hi + 1))
    return tuple(dict.fromkeys(out))


def agent_seed(seed: int) -> int:
    """The agent's seed for cell seed ``seed``: a separate stream from the env's.

    The env is reset with ``seed`` itself; the agent gets the first 32-bit word of
    ``SeedSequence(seed, spawn_key=(1,))``, so that an agent seeding
    ``np.random.default_rng(seed)`` does not draw the very stream the env's noise uses.
    """
    ss = np.random.SeedSequence(int(seed), spawn_key=(1,))
    return int(ss.generate_state(1, dtype=np.uint32)[0])


@dataclass(frozen=True)
class CellSpec:
    """One ``(env, agent, seed)`` run with its recording options.

    ``horizon=None`` uses the env's default horizon. ``coverage_points`` log-spaced
    rounds get the confidence-coverage diagnostic (agents with ``posterior()``);
    ``snapshot`` also keeps the final posterior over all points (Fig. 1f pictures).
    """

    env_id: str
    agent: AgentSpec
    seed: int
    horizon: int | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    resolution: int = 200
    coverage_points: int = 20
    snapshot: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_kwargs", dict(self.env_kwargs))

    @property
    def run_name(self) -> str:
        return f"{self.env_id}__{self.agent.label}__{self.seed}"

    @property
    def file_stem(self) -> str:
        """:func:`slug` of the run name; a name too long for a file name (more than 160
        characters: long parameter lists) keeps its first 140 characters and a hash."""
        stem = slug(self.run_name)
        if len(stem) > 160:
            digest = hashlib.sha256(self.run_name.encode()).hexdigest()[:16]
            stem = f"{stem[:140]}~{digest}"
        return stem

    def fingerprint(self) -> str:
        """Hash of everything that determines the cell's numbers (checked on resume)."""
        desc = {
            "env_id": self.env_id,
            "env_kwargs": jsonable(self.env_kwargs),
            "horizon": self.horizon,
            "agent": self.agent.describe(),
            "seed": self.seed,
            "resolution": self.resolution,
            "coverage_points": self.coverage_points,
            "snapshot": self.snapshot,
        }
        blob = json.dumps(desc, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def as_agent_spec(agent: Any, params: Mapping[str, Any] | None = None) -> AgentSpec:
    """Normalize whatever the user passed as an agent into an :class:`AgentSpec`."""
    if isinstance(agent, AgentSpec):
        if params:
            raise ValueError("Pass parameters inside the AgentSpec, not both.")
        return agent
    if isinstance(agent, str) and not params and agent.endswith("]"):
        return parse_agent(agent)
    return AgentSpec(agent, params or {})


Factory = Callable[..., Any]
