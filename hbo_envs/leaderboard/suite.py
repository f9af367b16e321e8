"""Leaderboard suites: ``leaderboards/<suite>/suite.toml``, env availability, env spec hashes.

A suite fixes everything that determines a submission's numbers: the envs (registered
ids, so a version is part of each id, plus ``gym.make`` kwargs), the horizon ``T`` of each
env, the public seeds, the metric, the checkpoints of the regret curve and the
aggregation settings. Its *content hash* covers exactly those fields (titles and prose
may change without invalidating submissions; anything else needs a new suite version).

``suite.toml``::

    [suite]
    name = "heavy-tailed"      # the suite id is "<name>-v<version>", also its folder name
    version = 0
    title = "..."
    description = "..."
    horizon = 1000             # default T; an env may override it
    seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    metric = "final_cumulative_regret"   # R_T; R_T / T is reported beside it
    checkpoints = 24           # log-spaced checkpoints of the curve (plus 20 linear ones)

    [aggregation]              # across seeds: IQM with a stratified-bootstrap CI
    confidence = 0.95
    bootstrap_reps = 2000
    bootstrap_seed = 0

    [baselines]
    agents = "reference"       # every name in agents.available() ...
    exclude = []               # ... except these
    configs = ["paper", "tuned"]   # the configurations each is ranked in (the default)

    [[envs]]
    id = "hbo/RKHS-SE-StudentT-v0"
    kwargs = {}                # passed to gym.make (besides horizon)
    horizon = 5000             # optional override

An env that is not registered in this installation, or that cannot be built (e.g. its
real data is missing), makes the suite *unavailable*; :meth:`Suite.availability` says
why instead of raising, so the tooling can list such suites without crashing.

The env spec hash (:func:`env_spec_hash`) pins a submission to the env's *definition*,
identical on any machine and under any BLAS thread count: the id (so its ``-vN``, the
version a change of reward semantics bumps), the ``gym.make`` kwargs and horizon, the
registered entry point and registered kwargs, the hash scheme
(:data:`SPEC_HASH_SCHEME`), and — after ``reset(seed=0)`` and ``reset(seed=1)`` — the
problem constants (``n, dim, B, alpha, v, nu, sup_f, C, noise_scale, horizon``, kernel
name and parameters), the points, ``f``, the kernel's diagonal and first row, and the
payoffs and regrets of 32 fixed actions. Every float enters at
:data:`SPEC_PRECISION` = 6 significant digits: what BLAS may change (a Cholesky under 1 or
2 threads moves ``B = sqrt(f^T K^-1 f)`` of Griewank2D by ~1e-10 relative) is far below
it, a change of objective, constant or reward semantics is far above. (A value whose exact
decimal expansion sits within ~1e-10 of a rounding boundary could still flip: about one
chance in 10^4 per such value.) The package version is not part of it, so a release or a
refactoring does not invalidate submissions; changing what an id means bumps its ``-vN``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hbo_envs.validation import check_int, check_real, param_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "SPEC_HASH_SCHEME",
    "SPEC_PRECISION",
    "EnvEntry",
    "Reference",
    "Suite",
    "SuiteError",
    "env_spec_hash",
    "leaderboards_root",
    "list_suites",
    "load_suite",
    "round_significant",
]

METRICS = ("final_cumulative_regret",)
SUITE_FILE = "suite.toml"


class SuiteError(ValueError):
    """A suite definition that cannot be used (unknown suite, malformed file)."""


def leaderboards_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The ``leaderboards/`` folder: ``root``, else ``$HBO_LEADERBOARDS``, else the one in
    the checkout the package runs from, else ``./leaderboards``."""
    if root is not None:
        return Path(root)
    env = os.environ.get("HBO_LEADERBOARDS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[2] / "leaderboards"
    if here.is_dir():
        return here
    return Path.cwd() / "leaderboards"


@dataclass(frozen=True)
class EnvEntry:
    """One env of a suite: registered id (with its ``-vN``), gym.make kwargs, horizon."""

    id: str
    kwargs: Mapping[str, Any]
    horizon: int

    @property
    def version(self) -> str:
        return self.id.rsplit("-", 1)[-1] if "-v" in self.id else ""

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "kwargs": dict(self.kwargs), "horizon": self.horizon}


@dataclass(frozen=True)
class Reference:
    """One of a suite's own entries: registered agent ``name`` in configuration ``config``
    (``"paper"``: its published defaults; ``"tuned"``: the stored choice of the tuning
    protocol, ``agents/configs/tuned/<name>.json``; see :mod:`agents.configs`).

    >>> r = Reference("gp-ucb", "tuned")
    >>> r.file, r.display_name, r.spec
    ('baseline-gp-ucb-tuned.json', 'gp-ucb-tuned', 'gp-ucb[config=tuned]')
    >>> Reference("gp-ucb").file, Reference("gp-ucb").display_name
    ('baseline-gp-ucb.json', 'gp-ucb')
    """

    name: str
    config: str = "paper"

    @property
    def display_name(self) -> str:
        """The entry's name in tables and figures (``<name>`` or ``<name>-tuned``)."""
        return self.name if self.config == "paper" else f"{self.name}-{self.config}"

    @property
    def file(self) -> str:
        """The file of ``submissions/`` that holds it."""
        return f"baseline-{self.display_name}.json"

    @property
    def spec(self) -> str:
        """The harness's agent syntax for it (``gp-ucb``, ``gp-ucb[config=tuned]``)."""
        return self.name if self.config == "paper" else f"{self.name}[config={self.config}]"

    def params(self) -> dict[str, Any]:
        """The constructor keywords of the configuration (``{}`` for ``paper``)."""
        from agents.configs import config_params

        return config_params(self.name, self.config)

    def config_record(self) -> dict[str, str] | None:
        """``{"path", "sha256"}`` of the tuning evidence a ``tuned`` reference's parameters
        come from (repository path ``agents/configs/tuned/<name>.json``); None for ``paper``."""
        if self.config == "paper":
            return None
        from importlib import resources

        blob = resources.files("agents.configs").joinpath("tuned", f"{self.name}.json")
        return {
            "path": f"agents/configs/tuned/{self.name}.json",
            "sha256": hashlib.sha256(blob.read_bytes()).hexdigest(),
        }


#: Configurations a suite may rank its references in (``[baselines] configs``).
CONFIGS = ("paper", "tuned")


@dataclass(frozen=True)
class Suite:
    """A parsed ``suite.toml`` (see the module docstring)."""

    name: str
    version: int
    title: str
    description: str
    envs: tuple[EnvEntry, ...]
    seeds: tuple[int, ...]
    metric: str = "final_cumulative_regret"
    checkpoints: int = 24
    confidence: float = 0.95
    bootstrap_reps: int = 2000
    bootstrap_seed: int = 0
    baseline_agents: str | tuple[str, ...] = "reference"
    baseline_exclude: tuple[str, ...] = ()
    baseline_configs: tuple[str, ...] = CONFIGS
    path: Path | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        return f"{self.name}-v{self.version}"

    @property
    def env_ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.envs)

    def env(self, env_id: str) -> EnvEntry:
        for e in self.envs:
            if e.id == env_id:
                return e
        raise KeyError(env_id)

    def definition(self) -> dict[str, Any]:
        """The fields that determine a submission's numbers (what :attr:`sha256` covers)."""
        return {
            "id": self.id,
            "envs": [e.describe() for e in self.envs],
            "seeds": list(self.seeds),
            "metric": self.metric,
            "checkpoints": self.checkpoints,
            "confidence": self.confidence,
            "bootstrap_reps": self.bootstrap_reps,
            "bootstrap_seed": self.bootstrap_seed,
        }

    @property
    def sha256(self) -> str:
        blob = json.dumps(self.definition(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()

    @property
    def folder(self) -> Path:
        if self.path is None:
            raise SuiteError(f"Suite {self.id!r} was not loaded from a folder.")
        return self.path.parent

    def checkpoint_rounds(self, horizon: int) -> list[int]:
        """Rounds at which a submission records ``R_t``: ``checkpoints`` log-spaced rounds
        on ``[1, T]`` and 20 evenly spaced ones on ``[T/20, T]`` (sorted, unique, ending at T)."""
        T = int(horizon)
        g = np.rint(np.geomspace(1, T, num=self.checkpoints))
        lin = np.rint(np.linspace(T / 20, T, num=20))
        out = np.unique(np.concatenate([g, lin, [T]]).astype(np.int64))
        return [int(t) for t in out if 1 <= t <= T]

    def baseline_names(self) -> tuple[list[str], list[str]]:
        """(reference agents to baseline that are available, listed ones that are not)."""
        import agents

        avail = list(agents.available())
        if self.baseline_agents == "reference":
            wanted = avail
        else:
            wanted = list(self.baseline_agents)
        names = [a for a in wanted if a in avail and a not in self.baseline_exclude]
        missing = [a for a in wanted if a not in avail]
        return names, missing

    def references(self) -> list[Reference]:
        """The suite's own entries: every available reference agent (:meth:`baseline_names`)
        in every configuration of ``[baselines] configs`` it has (``tuned`` needs a stored
        tuning record; ``random``, the score's zero, has none and is ranked as ``paper``
        whatever the configs say)."""
        from agents.configs import tuned_agents

        names, _ = self.baseline_names()
        tuned = set(tuned_agents())
        out = []
        for n in names:
            if n == "random":
                out.append(Reference(n, "paper"))
                continue
            out += [Reference(n, c) for c in self.baseline_configs if c == "paper" or n in tuned]
        return out

    def availability(self) -> dict[str, str | None]:
        """Per env id: ``None`` when usable here, else why not (never raises)."""
        return {e.id: _env_problem(e.id, _freeze(e.kwargs), e.horizon) for e in self.envs}

    def unavailable_reason(self) -> str | None:
        bad = {k: v for k, v in self.availability().items() if v}
        if not bad:
            return None
        return "; ".join(f"{k}: {v}" for k, v in bad.items())


def _freeze(kwargs: Mapping[str, Any]) -> str:
    return json.dumps(dict(kwargs), sort_keys=True)


@lru_cache(maxsize=64)
def _env_problem(env_id: str, kwargs_json: str, horizon: int) -> str | None:
    import gymnasium as gym

    import hbo_envs  # noqa: F401  (registers the envs)

    if env_id not in gym.registry:
        return "not registered in this installation (see hbo_envs.ENV_IDS)"
    try:
        env = gym.make(env_id, horizon=horizon, **json.loads(kwargs_json))
        env.close()
    except Exception as exc:  # noqa: BLE001 - e.g. missing real data: report, do not crash
        return f"cannot be built here: {type(exc).__name__}: {exc}"
    return None


#: Significant decimal digits at which floats enter the env spec hash.
SPEC_PRECISION = 6
#: Version of the env spec hash scheme (part of every hash; bumped when the scheme changes).
SPEC_HASH_SCHEME = 2


def round_significant(a: Any, digits: int = SPEC_PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """``(mantissa, exponent)`` integer arrays with ``a ≈ mantissa * 10**(exponent -
    digits + 1)``: ``a`` rounded to ``digits`` significant decimal digits, a pure function
    of the float values (0, -0 and non-finite values map to fixed codes).

    >>> m, e = round_significant([6.6110887634691, 6.611088763580553, -0.0, 1234567.0])
    >>> m.tolist(), e.tolist()
    ([661109, 661109, 0, 123457], [0, 0, 0, 6])
    """
    x = np.asarray(a, dtype=float).ravel()
    fin = np.isfinite(x) & (x != 0)
    e = np.zeros(x.shape, dtype=np.int64)
    e[fin] = np.floor(np.log10(np.abs(x[fin]))).astype(np.int64)
    m = np.zeros(x.shape, dtype=np.int64)
    scaled = x[fin] / np.power(10.0, (e[fin] - digits + 1).astype(float))
    r = np.rint(scaled)
    carry = np.abs(r) >= 10**digits  # 9.999995 -> 10.0000: renormalize
    r[carry] = np.rint(r[carry] / 10)
    ef = e[fin]
    ef[carry] += 1
    e[fin] = ef
    m[fin] = r.astype(np.int64)
    nonfin = ~np.isfinite(x)
    m[nonfin] = np.where(np.isnan(x[nonfin]), 1, np.sign(x[nonfin]) * 2).astype(np.int64)
    e[nonfin] = np.iinfo(np.int64).max
    return m, e


def _digest(h: Any, a: Any) -> None:
    arr = np.asarray(a, dtype=float)
    m, e = round_significant(arr)
    h.update(str(arr.shape).encode())
    h.update(m.astype("<i8").tobytes())
    h.update(e.astype("<i8").tobytes())


def _scalar(v: Any) -> Any:
    if isinstance(v, float):
        m, e = round_significant([v])
        return [int(m[0]), int(e[0])]
    return v


_CONSTANTS = ("n", "dim", "B", "alpha", "v", "nu", "sup_f", "C", "noise_scale", "horizon")


def _spec_definition(env_id: str, kwargs: Mapping[str, Any], horizon: int) -> dict[str, Any]:
    import gymnasium as gym

    spec = gym.spec(env_id)
    ep = spec.entry_point
    entry = ep if isinstance(ep, str) else f"{ep.__module__}:{ep.__qualname__}"
    return {
        "scheme": SPEC_HASH_SCHEME,
        "precision": SPEC_PRECISION,
        "id": env_id,
        "kwargs": dict(kwargs),
        "horizon": int(horizon),
        "entry_point": entry,
        "registered_kwargs": {k: v for k, v in spec.kwargs.items() if k != "horizon"},
    }


@lru_cache(maxsize=64)
def _spec_hash(env_id: str, kwargs_json: str, horizon: int) -> str:
    import gymnasium as gym

    import hbo_envs  # noqa: F401
    from hbo_envs.harness.specs import jsonable

    kwargs = json.loads(kwargs_json)
    env = gym.make(env_id, horizon=horizon, **kwargs)
    u = env.unwrapped
    h = hashlib.sha256()
    definition = jsonable(_spec_definition(env_id, kwargs, horizon))
    h.update(json.dumps(definition, sort_keys=True, default=str).encode())
    for seed in (0, 1):  # two resets: envs that redraw f per seed hash two objectives
        u.reset(seed=seed)
        p = u.problem
        consts = {k: _scalar(jsonable(getattr(p, k, None))) for k in _CONSTANTS}
        kp = jsonable(p.kernel.params())
        if isinstance(kp, dict):
            kp = {k: _scalar(v) for k, v in kp.items()}
        consts["kernel"] = [p.kernel.name, kp]
        h.update(json.dumps(consts, sort_keys=True, default=str).encode())
        _digest(h, p.points)
        _digest(h, u.objective.values)
        # through the kernel accessors: a large problem's kernel matrix is lazy (never n x n)
        _digest(h, p.kernel_diag())
        _digest(h, p.kernel_block([0], np.arange(p.n))[0])
        # the reward semantics: the first payoffs (and regrets) of a fixed action sequence
        steps = [u.step(int((7 * i) % p.n)) for i in range(32)]
        _digest(h, [[r, info["regret"]] for _, r, _, _, info in steps])
    env.close()
    return h.hexdigest()


def env_spec_hash(env_id: str, kwargs: Mapping[str, Any], horizon: int) -> str:
    """SHA-256 pinning ``gym.make(env_id, horizon=horizon, **kwargs)`` (module docstring)."""
    return _spec_hash(env_id, _freeze(kwargs), int(horizon))


# -- loading ----------------------------------------------------------------------------------
def _get(d: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise SuiteError(f"{where}: missing key {key!r}.")
    v = d[key]
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        raise SuiteError(f"{where}: {key!r} must be of type {kind}; got {v!r}.")
    return v


def parse_suite(data: Mapping[str, Any], path: Path | None = None) -> Suite:
    """Build a :class:`Suite` from the parsed TOML (raises :class:`SuiteError`)."""
    where = str(path or "suite")
    s = _get(data, "suite", dict, where)
    name = _get(s, "name", str, where)
    version = _get(s, "version", int, where)
    T = _get(s, "horizon", int, where)
    seeds = _get(s, "seeds", list, where)
    if not seeds or any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for x in seeds):
        raise SuiteError(f"{where}: 'seeds' must be a non-empty list of non-negative integers.")
    if len(set(seeds)) != len(seeds):
        raise SuiteError(f"{where}: 'seeds' lists a seed twice: {seeds}.")
    metric = s.get("metric", "final_cumulative_regret")
    if metric not in METRICS:
        raise SuiteError(str(param_error(where, "metric", f"one of {METRICS}", metric)))
    envs = []
    for i, e in enumerate(_get(data, "envs", list, where)):
        w = f"{where}: envs[{i}]"
        eid = _get(e, "id", str, w)
        kw = e.get("kwargs", {})
        if not isinstance(kw, dict) or "horizon" in kw:
            raise SuiteError(f"{w}: 'kwargs' must be a table without 'horizon'; got {kw!r}.")
        h = e.get("horizon", T)
        if not isinstance(h, int) or isinstance(h, bool) or h < 1:
            raise SuiteError(f"{w}: 'horizon' must be a positive integer; got {h!r}.")
        envs.append(EnvEntry(eid, kw, h))
    if not envs or len({e.id for e in envs}) != len(envs):
        raise SuiteError(f"{where}: 'envs' must list distinct env ids.")
    agg = data.get("aggregation", {})
    base = data.get("baselines", {})
    try:  # checked here, not first in numpy when a submission is aggregated or rendered
        checkpoints = check_int(where, "checkpoints", s.get("checkpoints", 24), 1, 10_000)
        confidence = check_real(where, "confidence", agg.get("confidence", 0.95), 0, 1)
        reps = check_int(where, "bootstrap_reps", agg.get("bootstrap_reps", 2000), 1, 10**6)
        boot_seed = check_int(where, "bootstrap_seed", agg.get("bootstrap_seed", 0), 0)
    except ValueError as exc:
        raise SuiteError(str(exc)) from None
    agents_ = base.get("agents", "reference")
    configs = base.get("configs", list(CONFIGS))
    if (
        not isinstance(configs, list)
        or not configs
        or any(c not in CONFIGS for c in configs)
        or len(set(configs)) != len(configs)
    ):
        raise SuiteError(
            str(
                param_error(
                    where,
                    "configs",
                    f"a non-empty list of distinct values of {list(CONFIGS)} ([baselines])",
                    configs,
                )
            )
        )
    suite = Suite(
        name=name,
        version=version,
        title=str(s.get("title", name)),
        description=str(s.get("description", "")),
        envs=tuple(envs),
        seeds=tuple(seeds),
        metric=metric,
        checkpoints=checkpoints,
        confidence=confidence,
        bootstrap_reps=reps,
        bootstrap_seed=boot_seed,
        baseline_agents=agents_ if isinstance(agents_, str) else tuple(agents_),
        baseline_exclude=tuple(base.get("exclude", ())),
        baseline_configs=tuple(configs),
        path=path,
    )
    if path is not None and path.parent.name != suite.id:
        raise SuiteError(
            f"{where}: the suite id {suite.id!r} (name-v<version>) must equal its folder name "
            f"{path.parent.name!r}."
        )
    return suite


def load_suite(suite: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Suite:
    """Load a suite by id (``"heavy-tailed-v0"``, looked up in :func:`leaderboards_root`),
    by folder, or by the path of its ``suite.toml``."""
    p = Path(suite)
    if p.is_dir():
        p = p / SUITE_FILE
    elif not p.is_file():
        p = leaderboards_root(root) / str(suite) / SUITE_FILE
    if not p.is_file():
        known = ", ".join(list_suites(root)) or "none"
        raise SuiteError(f"Unknown suite {str(suite)!r} (no {p}). Known suites: {known}.")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{p}: not valid TOML: {exc}") from None
    return parse_suite(data, p.resolve())


def list_suites(root: str | os.PathLike[str] | None = None) -> list[str]:
    """Ids of the suites in the leaderboards folder (sorted)."""
    r = leaderboards_root(root)
    if not r.is_dir():
        return []
    return sorted(d.name for d in r.iterdir() if (d / SUITE_FILE).is_file())
