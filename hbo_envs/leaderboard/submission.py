"""Leaderboard submissions: the versioned JSON format, ``submit`` and ``validate``.

One JSON file per submission (schema :data:`SUBMISSION_SCHEMA`, ``schema_version`` 1):

- ``suite``: ``id`` and the ``sha256`` of the suite's definition (envs, horizons, seeds,
  metric, checkpoints, aggregation; see :class:`~hbo_envs.leaderboard.suite.Suite`);
- ``agent``: ``display_name``, ``import_path`` (``module:Class``, built as
  ``Class(**params)``), ``params`` (JSON), ``registered_name``, ``config`` (``paper`` or
  ``tuned``) and ``config_record`` (the path and sha256 of the tuning evidence a ``tuned``
  reference's parameters come from) for the suite's references, and ``code``: the git
  ``revision``/``dirty`` flag of the checkout holding the class and the
  ``source_sha256`` of its module file;
- ``provenance``: creation time, package versions, platform, the hbo-bench revision;
- ``envs``: per env id its ``version``, ``kwargs``, ``horizon`` and ``spec_hash``
  (:func:`~hbo_envs.leaderboard.suite.env_spec_hash` of the env it ran on);
- ``results``: one entry per (env, seed): ``final_regret`` ``R_T``, ``final_avg_regret``
  ``R_T / T`` and ``checkpoints`` ``{"t": [...], "regret": [...]}`` of the curve ``R_t``
  at :meth:`Suite.checkpoint_rounds`;
- ``aggregates.per_env``: :func:`~hbo_envs.leaderboard.aggregate.per_env_aggregate` of each
  env — which :func:`validate` recomputes rather than trusts;
- ``verification`` (optional): written by ``verify --record``; it carries the
  ``submission_sha256`` of everything else, so an edit after verification shows as stale.

:func:`validate` checks a file without importing or running anything it names.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import inspect
import json
import math
import os
import platform
import re
import subprocess
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hbo_envs.leaderboard.aggregate import per_env_aggregate
from hbo_envs.leaderboard.suite import Suite, SuiteError, env_spec_hash, load_suite
from hbo_envs.validation import param_error

__all__ = [
    "SCHEMA_VERSION",
    "SUBMISSION_SCHEMA",
    "ValidationReport",
    "content_sha256",
    "load_submission",
    "resolve_agent",
    "run_suite",
    "submit",
    "validate",
    "write_submission",
]

SCHEMA_VERSION = 1
KIND = "hbo-bench-leaderboard-submission"
_HEX64 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_NUM = {"type": "number"}
_AGG = {
    "type": "object",
    "required": ["n", "iqm", "ci_low", "ci_high", "mean", "median", "avg_iqm"],
    "additionalProperties": False,
    "properties": {
        "n": {"type": "integer", "minimum": 1},
        **{k: _NUM for k in ("iqm", "ci_low", "ci_high", "mean", "median", "avg_iqm")},
    },
}

#: JSON Schema (draft 2020-12) of a submission file.
SUBMISSION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "hbo-bench leaderboard submission",
    "type": "object",
    "required": [
        "kind",
        "schema_version",
        "suite",
        "agent",
        "provenance",
        "envs",
        "results",
        "aggregates",
    ],
    "additionalProperties": False,
    "properties": {
        "kind": {"const": KIND},
        "schema_version": {"const": SCHEMA_VERSION},
        "suite": {
            "type": "object",
            "required": ["id", "sha256"],
            "additionalProperties": False,
            "properties": {"id": {"type": "string", "minLength": 1}, "sha256": _HEX64},
        },
        "agent": {
            "type": "object",
            "required": ["display_name", "import_path", "params", "code"],
            "additionalProperties": False,
            "properties": {
                "display_name": {"type": "string", "minLength": 1, "maxLength": 80},
                "import_path": {
                    "type": "string",
                    "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
                },
                "params": {"type": "object"},
                "registered_name": {"type": ["string", "null"]},
                # the suite's references: which configuration of the registered agent, and
                # for "tuned" the tuning evidence its parameters came from
                "config": {"enum": ["paper", "tuned"]},
                "config_record": {
                    "type": "object",
                    "required": ["path", "sha256"],
                    "additionalProperties": False,
                    "properties": {"path": {"type": "string"}, "sha256": _HEX64},
                },
                "code": {
                    "type": "object",
                    "required": ["revision", "dirty", "source_sha256"],
                    "properties": {
                        "revision": {"type": ["string", "null"]},
                        "dirty": {"type": ["boolean", "null"]},
                        "source_sha256": {"anyOf": [_HEX64, {"type": "null"}]},
                        "source_file": {"type": ["string", "null"]},
                    },
                },
            },
        },
        "provenance": {
            "type": "object",
            "required": ["created", "packages"],
            "properties": {
                "created": {"type": "string"},
                "packages": {
                    "type": "object",
                    "additionalProperties": {"type": ["string", "null"]},
                },
                "platform": {"type": "string"},
                "hbo_bench_git": {"type": ["object", "null"]},
                "backend": {"type": "string"},
            },
        },
        "envs": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["version", "kwargs", "horizon", "spec_hash"],
                "additionalProperties": False,
                "properties": {
                    "version": {"type": "string", "pattern": "^v[0-9]+$"},
                    "kwargs": {"type": "object"},
                    "horizon": {"type": "integer", "minimum": 1},
                    "spec_hash": _HEX64,
                },
            },
        },
        "results": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["env_id", "seed", "final_regret", "final_avg_regret", "checkpoints"],
                "additionalProperties": False,
                "properties": {
                    "env_id": {"type": "string"},
                    "seed": {"type": "integer", "minimum": 0},
                    "final_regret": {"type": "number", "minimum": 0},
                    "final_avg_regret": {"type": "number", "minimum": 0},
                    "checkpoints": {
                        "type": "object",
                        "required": ["t", "regret"],
                        "additionalProperties": False,
                        "properties": {
                            "t": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "integer", "minimum": 1},
                            },
                            "regret": {"type": "array", "minItems": 1, "items": _NUM},
                        },
                    },
                },
            },
        },
        "aggregates": {
            "type": "object",
            "required": ["per_env"],
            "additionalProperties": False,
            "properties": {"per_env": {"type": "object", "additionalProperties": _AGG}},
        },
        "verification": {"type": ["object", "null"]},
    },
}


# -- files ------------------------------------------------------------------------------------
#: Largest submission file accepted (bytes), deepest JSON nesting accepted.
MAX_FILE_BYTES = 16 * 2**20
MAX_DEPTH = 32


#: A complete JSON string: its quotes and everything between, escapes included.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', flags=re.S)
_OPEN = np.zeros(256, dtype=np.int64)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def _depth(text: str) -> int:
    r"""Deepest nesting of ``[``/``{`` in JSON text, strings skipped, without recursion.

    The strings are cut out first (left to right, as a parser meets them); where a string
    is never closed, everything after its opening quote is string, as the parser reads it.
    The depth is then the largest running sum of +1 per ``[``/``{`` and -1 per ``]``/``}``.

    >>> _depth('{"a": [1, {"b": "[[[[x"}], "c\\"[": []}')   # strings "b", "[[[[x", "c\"["
    3
    """
    rest = _JSON_STRING.sub("", text)
    cut = rest.find('"')
    if cut >= 0:  # an unterminated string runs to the end
        rest = rest[:cut]
    steps = _OPEN[np.frombuffer(rest.encode("utf-8", "surrogatepass"), dtype=np.uint8)]
    return int(max(np.cumsum(steps).max(initial=0), 0))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(
                f"duplicate key {k!r} in one JSON object (refused: which copy counts is ambiguous)"
            )
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_submission_text(text: str, where: str = "submission") -> dict[str, Any]:
    """Parse submission JSON strictly: at most :data:`MAX_FILE_BYTES`, nesting at most
    :data:`MAX_DEPTH`, no duplicate keys, no ``NaN``/``Infinity`` (``ValueError`` naming
    ``where`` and the fix)."""
    if len(text) > MAX_FILE_BYTES:
        raise ValueError(
            f"{where}: {len(text)} characters; a submission may have at most {MAX_FILE_BYTES}."
        )
    d = _depth(text)
    if d > MAX_DEPTH:
        raise ValueError(
            f"{where}: JSON nested deeper than {MAX_DEPTH} levels; a submission nests at most "
            f"{MAX_DEPTH} (see hbo-bench leaderboard schema)."
        )
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a submission must be a JSON object; got {type(data).__name__}.")
    return data


def load_submission(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a submission file strictly (:func:`parse_submission_text`; ``ValueError``
    naming the file when it cannot be used)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{p}: {size} bytes; a submission may have at most {MAX_FILE_BYTES}.")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"No submission file {str(p)!r}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p}: cannot be read as UTF-8 text: {exc}") from None
    return parse_submission_text(text, str(p))


def write_submission(path: str | os.PathLike[str], sub: Mapping[str, Any]) -> Path:
    """Write ``sub`` as indented JSON (atomically); returns the path."""
    from hbo_envs.harness.store import _atomic_write

    p = Path(path)
    text = json.dumps(sub, indent=1, allow_nan=False) + "\n"
    _atomic_write(p, lambda q: q.write_text(text))
    p.chmod(0o644)
    return p


def json_sha256(doc: Mapping[str, Any], *, without: str) -> str:
    """SHA-256 of ``doc`` without its key ``without``, as canonical JSON (sorted keys)."""
    body = {k: v for k, v in doc.items() if k != without}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def content_sha256(sub: Mapping[str, Any]) -> str:
    """SHA-256 of the submission without its ``verification`` block (canonical JSON)."""
    return json_sha256(sub, without="verification")


# -- names and import paths -------------------------------------------------------------------
_INVISIBLE = ("Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp")


def normalize_name(name: str) -> str:
    """The identity of a display name: NFKC, case-folded, runs of spaces collapsed (what
    must be unique on a leaderboard; ``gp-ucb`` and ``ＧＰ-ucb`` are the same name)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def display_name_problem(name: Any) -> str | None:
    """Why ``name`` cannot be a display name, or None: 1 to 80 characters, already in NFKC
    form, no control, format (zero-width, bidi), private-use or unassigned characters, no
    ``|``, backtick, ``<`` or ``>``, no leading/trailing space; and within the safe set
    of page names (:func:`safe_name_problem`)."""
    if not isinstance(name, str) or not 0 < len(name) <= 80:
        return "must be a string of 1 to 80 characters"
    bad = [c for c in name if unicodedata.category(c) in _INVISIBLE or c in "|`<>"]
    if bad:
        return (
            f"contains {', '.join(f'U+{ord(c):04X}' for c in dict.fromkeys(bad))} (control, "
            "zero-width, bidi, unassigned characters and | ` < > are not allowed)"
        )
    if unicodedata.normalize("NFKC", name) != name:
        c = next(c for c in name if unicodedata.normalize("NFKC", c) != c)
        return (
            f"is not in Unicode NFKC form (write it with plain characters): {c!r} "
            f"(U+{ord(c):04X} {unicodedata.name(c, 'unnamed')})"
        )
    if name != name.strip():
        return "has leading or trailing white space"
    return safe_name_problem(name)


#: The names pages are built from (display names, submission file stems): lowercase ASCII
#: letters, digits, ``.``, ``_``, ``-``; first a letter or digit; at most 64 characters; no
#: ``..``. So a name is never markup, a path or a look-alike of another name.
SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
SAFE_NAME_RULE = "[a-z0-9][a-z0-9._-]{0,63} without '..'"


def safe_name_problem(name: str) -> str | None:
    """Why ``name`` is outside :data:`SAFE_NAME`, naming the first offending character
    (a non-ASCII one with its code point and Unicode name: ``gp-ucв`` holds U+0432
    CYRILLIC SMALL LETTER VE, a look-alike of ``b``), or None.

    >>> safe_name_problem("gp-ucb") is None
    True
    >>> safe_name_problem("gp-ucв").split(":")[0]
    "has the non-ASCII character 'в' (U+0432 CYRILLIC SMALL LETTER VE) at position 6"
    """
    rule = SAFE_NAME_RULE
    for i, c in enumerate(name, 1):
        if not c.isascii():
            what = unicodedata.name(c, "unnamed")
            return (
                f"has the non-ASCII character {c!r} (U+{ord(c):04X} {what}) at position {i}: "
                f"names are ASCII, {rule}"
            )
    if SAFE_NAME.fullmatch(name) is None:
        bad = next(
            (
                (i, c)
                for i, c in enumerate(name, 1)
                if not (c.islower() or c.isdigit() or (i > 1 and c in "._-"))
            ),
            None,
        )
        where = f": {bad[1]!r} at position {bad[0]} is not allowed" if bad else ""
        if bad is None and len(name) > 64:
            where = f": {len(name)} characters"
        return f"is not a safe name{where} (names are {rule}; at most 64 characters)"
    if ".." in name:
        return f"contains '..' (names are {rule})"
    return None


def import_path_problem(import_path: str) -> str | None:
    """Why an import path cannot name a submitted agent (checked without importing)."""
    root = import_path.partition(":")[0].split(".")[0]
    if root in sys.stdlib_module_names or root in ("builtins", "__main__"):
        return (
            f"names the standard-library module {root!r}; an agent is a class of your own package"
        )
    return None


# -- submit -----------------------------------------------------------------------------------
def resolve_agent(agent: str) -> tuple[str, str | None]:
    """``(import_path, registered_name)`` of a registered name or a ``module:Class``."""
    import agents.registry as reg

    if ":" in agent:
        return agent, None
    if agent in reg.available():
        cls = reg.resolve(agent)
        return f"{cls.__module__}:{cls.__qualname__}", agent
    raise ValueError(
        f"The 'agent' parameter must be 'module:Class' or a registered name "
        f"({', '.join(reg.available())}). Got {agent!r} instead."
    )


def _code_provenance(import_path: str) -> dict[str, Any]:
    from hbo_envs.harness.specs import _import

    obj = _import(import_path)
    try:
        src = inspect.getsourcefile(obj)
    except TypeError:
        src = None
    out: dict[str, Any] = {
        "revision": None,
        "dirty": None,
        "source_sha256": None,
        "source_file": None,
    }
    if not src:
        return out
    from hbo_envs.harness.store import file_sha256

    f = Path(src)
    out["source_sha256"] = file_sha256(f)
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "HEAD"],
            cwd=f.parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        if top.returncode == 0:
            root, rev = top.stdout.split()
            st = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no", "--", str(f)],
                cwd=f.parent,
                capture_output=True,
                text=True,
                timeout=5,
            )
            out["revision"] = rev
            out["dirty"] = bool(st.stdout.strip())
            out["source_file"] = f.resolve().relative_to(Path(root).resolve()).as_posix()
        else:
            out["source_file"] = f.name
    except (OSError, subprocess.SubprocessError, ValueError):
        out["source_file"] = f.name
    return out


def run_suite(
    suite: Suite,
    import_path: str,
    params: Mapping[str, Any],
    seeds: list[int] | tuple[int, ...],
    *,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> list[dict[str, Any]]:
    """Run the agent on every env of ``suite`` at ``seeds`` through the harness.

    Returns one result entry per (env, seed) (the ``results`` items of a submission).
    Raises ``RuntimeError`` with the first traceback when a cell fails.
    """
    from hbo_envs.harness import AgentSpec, build_cells, run_sweep

    reason = suite.unavailable_reason()
    if reason:
        raise SuiteError(f"Suite {suite.id!r} is unavailable here: {reason}.")
    spec = AgentSpec(import_path, dict(params))
    cells = []
    for e in suite.envs:
        # resolution = T records every round, so any checkpoint is exact and present
        cells += build_cells(
            [e.id],
            [spec],
            list(seeds),
            horizon=e.horizon,
            env_kwargs=dict(e.kwargs),
            resolution=e.horizon,
            coverage_points=0,
        )
    res = run_sweep(
        cells, out=work_dir, backend=backend, workers=workers, progress=progress, address=address
    )
    if res.failures:
        f = res.failures[0]
        raise RuntimeError(
            f"{len(res.failures)} of {len(cells)} runs of {import_path} failed; first: "
            f"{f['run_name']}\n{f['traceback']}"
        )
    rec = res.records
    out = []
    for e in suite.envs:
        ts = suite.checkpoint_rounds(e.horizon)
        for s in seeds:
            g = rec[(rec["env_id"] == e.id) & (rec["seed"] == s)].set_index("t")["regret"]
            vals = [float(g.loc[t]) for t in ts]
            out.append(
                {
                    "env_id": e.id,
                    "seed": int(s),
                    "final_regret": vals[-1],
                    "final_avg_regret": vals[-1] / e.horizon,
                    "checkpoints": {"t": ts, "regret": vals},
                }
            )
    return out


def aggregates(suite: Suite, results: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``aggregates`` block computed from ``results`` (what validation recomputes)."""
    per_env = {}
    for e in suite.envs:
        x = [r["final_regret"] for r in results if r["env_id"] == e.id]
        if x:
            per_env[e.id] = per_env_aggregate(
                x,
                horizon=e.horizon,
                confidence=suite.confidence,
                reps=suite.bootstrap_reps,
                seed=suite.bootstrap_seed,
            )
    return {"per_env": per_env}


def submit(
    suite: Suite | str,
    agent: str,
    params: Mapping[str, Any] | None = None,
    *,
    display_name: str | None = None,
    root: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Run ``agent`` (registered name or ``module:Class``) on ``suite``; return the submission."""
    from hbo_envs.harness.store import git_revision

    if not isinstance(suite, Suite):
        suite = load_suite(suite, root)
    params = dict(params or {})
    import_path, registered = resolve_agent(agent)
    code = _code_provenance(import_path)
    if display_name is None:
        from hbo_envs.harness.specs import AgentSpec

        label = AgentSpec(registered or import_path, params).label.lower()
        display_name = re.sub(r"[^a-z0-9._-]+", "-", label).strip("-._")[:64]
    why = display_name_problem(display_name)
    if why:
        raise param_error(
            "submit", "display_name", f"a name {SAFE_NAME_RULE} ({why})", display_name
        )
    results = run_suite(
        suite,
        import_path,
        params,
        suite.seeds,
        backend=backend,
        workers=workers,
        address=address,
        work_dir=work_dir,
        progress=progress,
    )
    return submission_body(
        suite,
        {
            "display_name": display_name,
            "import_path": import_path,
            "params": json.loads(json.dumps(params)),
            "registered_name": registered,
            "code": code,
        },
        results,
        backend=backend,
        git=git_revision(),
    )


def submission_body(
    suite: Suite,
    agent: Mapping[str, Any],
    results: list[Mapping[str, Any]],
    *,
    backend: str,
    git: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A submission document (schema :data:`SCHEMA_VERSION`) of ``agent``'s ``results`` on
    ``suite``: provenance of this process, each env's definition and spec hash, the
    aggregates; ``verification`` empty. Used by :func:`submit` and by the suite's own
    references (:func:`hbo_envs.leaderboard.verify.make_reference`)."""
    from hbo_envs.harness.store import package_versions

    return {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "suite": {"id": suite.id, "sha256": suite.sha256},
        "agent": dict(agent),
        "provenance": {
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "packages": package_versions(),
            "platform": platform.platform(),
            "hbo_bench_git": git,
            "backend": backend,
        },
        "envs": {
            e.id: {
                "version": e.version,
                "kwargs": dict(e.kwargs),
                "horizon": e.horizon,
                "spec_hash": env_spec_hash(e.id, e.kwargs, e.horizon),
            }
            for e in suite.envs
        },
        "results": results,
        "aggregates": aggregates(suite, results),
        "verification": None,
    }


# -- validate ---------------------------------------------------------------------------------
@dataclass
class ValidationReport:
    """Outcome of :func:`validate`: ``ok`` when there are no errors."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    suite: Suite | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        lines = [f"error: {e}" for e in self.errors] + [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines) if lines else "ok"


def _close(a: float, b: float, rtol: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)


def validate(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    suite: Suite | None = None,
    root: str | os.PathLike[str] | None = None,
) -> ValidationReport:
    """Check a submission without importing or running its agent.

    Schema; suite id and definition hash; env ids (so versions), kwargs and horizons equal
    the suite's and spec hashes equal those of the installed envs; exactly the suite's
    seeds for every env (none missing, none repeated); each result self-consistent
    (``R_T / T``, checkpoints at the suite's rounds, non-decreasing, ending at ``R_T``);
    aggregates equal to those recomputed from the per-seed values.
    """

    rep = ValidationReport()
    if not isinstance(sub, Mapping):
        try:
            sub = load_submission(sub)
        except ValueError as exc:
            rep.errors.append(str(exc))
            return rep
    validator = _validator_class()(SUBMISSION_SCHEMA)
    schema_errors = sorted(validator.iter_errors(sub), key=lambda e: list(e.absolute_path))
    for err in schema_errors[:10]:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        rep.errors.append(f"schema: at {where}: {err.message}")
    if schema_errors:
        return rep
    why = display_name_problem(sub["agent"]["display_name"])
    if why:
        rep.errors.append(f"agent: display_name {sub['agent']['display_name']!r} {why}.")
    why = import_path_problem(sub["agent"]["import_path"])
    if why:
        rep.errors.append(f"agent: import_path {sub['agent']['import_path']!r} {why}.")
    if not rep.ok:
        return rep

    sid = sub["suite"]["id"]
    if suite is None:
        try:
            suite = load_suite(sid, root)
        except SuiteError as exc:
            rep.errors.append(f"suite: {exc}")
            return rep
    rep.suite = suite
    if sid != suite.id:
        rep.errors.append(f"suite: the submission is for {sid!r}, not {suite.id!r}.")
        return rep
    if sub["suite"]["sha256"] != suite.sha256:
        rep.errors.append(
            f"suite: the definition of {suite.id!r} changed since this submission was made "
            f"(submission sha256 {sub['suite']['sha256'][:12]}…, suite {suite.sha256[:12]}…); "
            "submit again."
        )

    _check_envs(sub, suite, rep)
    _check_results(sub, suite, rep)
    if rep.ok:
        _check_aggregates(sub, suite, rep)
    return rep


#: Python types of a JSON value that the schema's ``integer`` / ``number`` accept (booleans
#: never; see :func:`_validator_class`).
_SCALAR_TYPES = {"integer": (int,), "number": (int, float)}


def _all_scalars_pass(items: Any, instance: list[Any]) -> bool:
    """True when every element of ``instance`` certainly satisfies the item schema
    ``items``, decided without jsonschema: ``items`` is ``{"type": "integer" | "number"}``,
    optionally with a ``minimum``. False means "not decided here" (another schema, or an
    element that is not a plain ``int``/``float`` at or above the minimum, a NaN included),
    and the standard keyword then validates, so errors are jsonschema's own."""
    if not isinstance(items, dict) or not set(items) <= {"type", "minimum"}:
        return False
    kinds = _SCALAR_TYPES.get(items.get("type"))  # type: ignore[arg-type]
    if kinds is None:
        return False
    # type(x) in kinds: a bool (an int subclass) or any other subclass is left to jsonschema.
    if not all(type(x) in kinds for x in instance):
        return False
    lo = items.get("minimum")
    if lo is None:
        return True
    if type(lo) not in (int, float):
        return False
    return all(x >= lo for x in instance)


def _validator_class() -> Any:
    """Draft 2020-12 where ``integer`` means a JSON integer literal (``1``, not ``1.0``) and
    booleans are never numbers.

    ``items`` has a fast path for arrays of numbers (the checkpoint curves, ~90 % of a
    submission's values): when every element passes its scalar item schema by a plain
    Python check, the array is accepted without descending into each element (jsonschema's
    per-element ``descend`` took ~1 s to validate the 39 committed submissions, 4.5 MB);
    otherwise the standard keyword runs and reports exactly its usual errors.
    """
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _c, x: isinstance(x, int) and not isinstance(x, bool),
            "number": lambda _c, x: isinstance(x, (int, float)) and not isinstance(x, bool),
        }
    )
    standard_items = base.VALIDATORS["items"]

    def items(validator: Any, items: Any, instance: Any, schema: Any) -> Any:
        if (
            type(instance) is list
            and "prefixItems" not in schema
            and _all_scalars_pass(items, instance)
        ):
            return
        yield from standard_items(validator, items, instance, schema)

    return jsonschema.validators.extend(base, validators={"items": items}, type_checker=checker)


def _check_envs(sub: Mapping[str, Any], suite: Suite, rep: ValidationReport) -> None:
    envs = sub["envs"]
    for eid in envs:
        if eid not in suite.env_ids:
            base = eid.rsplit("-v", 1)[0]
            same = [x for x in suite.env_ids if x.rsplit("-v", 1)[0] == base]
            hint = f" (the suite has {same[0]!r}: wrong env version)" if same else ""
            rep.errors.append(f"envs: {eid!r} is not an env of suite {suite.id!r}{hint}.")
    for e in suite.envs:
        if e.id not in envs:
            rep.errors.append(f"envs: the submission has no results block for {e.id!r}.")
            continue
        d = envs[e.id]
        if d["version"] != e.version:
            rep.errors.append(
                f"envs: {e.id!r} is version {e.version!r}; the submission says {d['version']!r}."
            )
        if d["kwargs"] != dict(e.kwargs):
            rep.errors.append(
                f"envs: {e.id!r} kwargs {d['kwargs']!r} differ from the suite's {dict(e.kwargs)!r}."
            )
        if d["horizon"] != e.horizon:
            rep.errors.append(
                f"envs: {e.id!r} horizon {d['horizon']} differs from the suite's {e.horizon}."
            )
        why = suite.availability().get(e.id)
        if why:
            rep.errors.append(f"envs: {e.id!r} cannot be checked here: {why}.")
            continue
        h = env_spec_hash(e.id, e.kwargs, e.horizon)
        if d["spec_hash"] != h:
            rep.errors.append(
                f"envs: the spec hash of {e.id!r} ({d['spec_hash'][:12]}…) does not match the "
                f"installed env ({h[:12]}…): the env changed, or the submission ran on another "
                "version of it."
            )


def check_results(results: Any, suite: Suite) -> list[str]:
    """Problems of a ``results`` list against ``suite`` (empty when fine): exactly the
    suite's public seeds on every env, integer seeds, each entry self-consistent
    (``R_T / T``, checkpoints at the suite's rounds, finite, non-decreasing, ending at
    ``R_T``). Used for submitted results and for the results of verification records."""
    if not isinstance(results, list) or not all(isinstance(r, Mapping) for r in results):
        return ["results: must be a list of objects."]
    errors: list[str] = []
    keys = ("env_id", "seed", "final_regret", "final_avg_regret", "checkpoints")
    for i, r in enumerate(results):
        if set(r) != set(keys):
            return [f"results[{i}]: must have exactly the keys {list(keys)}."]
        if type(r["seed"]) is not int:
            return [f"results[{i}]: seed {r['seed']!r} is not an integer (write 3, not 3.0)."]
    seen: dict[tuple[str, int], int] = {}
    for r in results:
        key = (r["env_id"], r["seed"])
        seen[key] = seen.get(key, 0) + 1
    for (eid, s), k in sorted(seen.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if eid not in suite.env_ids:
            errors.append(f"results: env {eid!r} (seed {s}) is not in the suite.")
        elif s not in suite.seeds:
            errors.append(f"results: seed {s} on {eid!r} is not a public seed of the suite.")
        if k > 1:
            errors.append(f"results: seed {s} on {eid!r} appears {k} times (duplicate).")
    for e in suite.envs:
        missing = [s for s in suite.seeds if (e.id, s) not in seen]
        if missing:
            errors.append(f"results: {e.id!r} is missing seed(s) {missing}.")
    for r in results:
        if r["env_id"] not in suite.env_ids:
            continue
        e = suite.env(r["env_id"])
        where = f"results: {e.id!r} seed {r['seed']}"
        cp = r["checkpoints"]
        if not isinstance(cp, Mapping) or set(cp) != {"t", "regret"}:
            errors.append(f"{where}: checkpoints must be {{'t': [...], 'regret': [...]}}.")
            continue
        t, v = cp["t"], cp["regret"]
        if t != suite.checkpoint_rounds(e.horizon) or not isinstance(v, list) or len(t) != len(v):
            errors.append(f"{where}: checkpoints are not at the suite's rounds.")
            continue
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            errors.append(f"{where}: checkpoint regrets must be numbers.")
            continue
        fin = r["final_regret"]
        avg = r["final_avg_regret"]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (fin, avg)):
            errors.append(f"{where}: final_regret and final_avg_regret must be numbers.")
            continue
        va = np.asarray(v, dtype=float)
        if not np.isfinite(va).all() or (va < 0).any() or (np.diff(va) < 0).any():
            errors.append(
                f"{where}: the cumulative regret checkpoints must be finite, >= 0 and "
                "non-decreasing (regret per round is f* - f(x_t) >= 0)."
            )
        if not _close(float(va[-1]), fin):
            errors.append(
                f"{where}: final_regret {fin!r} differs from the curve's value "
                f"at T = {e.horizon} ({float(va[-1])!r})."
            )
        if not _close(avg, fin / e.horizon):
            errors.append(
                f"{where}: final_avg_regret {avg!r} is not final_regret / T = {fin / e.horizon!r}."
            )
    return errors


def _check_results(sub: Mapping[str, Any], suite: Suite, rep: ValidationReport) -> None:
    rep.errors += check_results(sub["results"], suite)


def _check_aggregates(sub: Mapping[str, Any], suite: Suite, rep: ValidationReport) -> None:
    given = sub["aggregates"]["per_env"]
    want = aggregates(suite, sub["results"])["per_env"]
    for eid in sorted(set(given) | set(want)):
        if eid not in want:
            rep.errors.append(f"aggregates: per_env has {eid!r}, which has no results.")
            continue
        if eid not in given:
            rep.errors.append(f"aggregates: per_env lacks {eid!r}.")
            continue
        for k, v in want[eid].items():
            if not _close(float(given[eid][k]), float(v)):
                rep.errors.append(
                    f"aggregates: per_env[{eid!r}].{k} = {given[eid][k]!r}, but the per-seed "
                    f"results give {v!r}."
                )
