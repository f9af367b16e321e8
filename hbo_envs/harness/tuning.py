"""Tuning an agent by one protocol for every agent (issue 35 item 1, first part).

The protocol: a small declared search space per agent (one parameter, at most
:data:`MAX_POINTS` finite values: a constant confidence width ``beta`` for the GP agents, a
width multiplier for the per-arm Robust UCB), searched on a *tuning family* — envs whose
objective is redrawn at every seeded reset, run on seeds ``TUNING_SEED_BASE + i`` that no
archive experiment and no leaderboard uses (experiments use seeds ``0 .. n-1``, suites
list small public seeds and draw hidden ones in ``[2^20, 2^31)``; a test checks it) — and
chosen by the median, over the family's (env, seed) instances, of ``R_T`` normalised by
uniform play's expected regret on the same instance, ``T (f* - mean_x f(x))``; the first
point of the space wins ties. The evidence (space, seeds, horizon, per-point per-instance
regret, the choice) is one JSON record, written by ``hbo-bench tune AGENT --family FAMILY``
to ``results/tuning/<agent>--<family>.json``.

A third-party agent is tuned the same way: pass its import string ``"module:Class"`` and a
space (``space=SearchSpace("param", (v1, v2, ...))`` or the CLI's ``--param`` and
``--values``).

>>> space = SearchSpace("beta", (0.5, 1.0, 2.0))
>>> space.points()
[{'beta': 0.5}, {'beta': 1.0}, {'beta': 2.0}]
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from hbo_envs.harness import runner
from hbo_envs.validation import check_int, param_error

__all__ = [
    "FAMILIES",
    "GridSpace",
    "MAX_POINTS",
    "SEARCH_SPACES",
    "TUNING_SEED_BASE",
    "SearchSpace",
    "TuningFamily",
    "default_space",
    "evidence_path",
    "run",
    "space_from_dict",
    "tune",
    "tuning_seeds",
    "write_evidence",
]

MAX_POINTS = 16
"""Largest search space the protocol allows (points per agent)."""

TUNING_SEED_BASE = 2**40
"""Tuning seeds are ``TUNING_SEED_BASE + i``: above every test seed of the archive
(``0 .. n-1``) and of the leaderboards (public seeds listed in ``suite.toml``, hidden
seeds drawn in ``[2^20, 2^31)``)."""

MAX_TUNING_SEEDS = 1000


@dataclass(frozen=True)
class SearchSpace:
    """One parameter and its candidate values (finite, non-negative, at most 16, distinct).

    ``tied`` names further keyword arguments that take the same value at every point (one
    constant width for an agent with several width schedules, such as Fast-Slow GP-UCB's
    ``beta_fast``, ``beta_slow`` and ``beta_fallback``).
    """

    param: str
    values: tuple[float, ...]
    tied: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        owner = "SearchSpace"
        if not (isinstance(self.param, str) and self.param.isidentifier()):
            raise param_error(owner, "param", "a keyword-argument name of the agent", self.param)
        tied = self.tied
        if isinstance(tied, str) or not isinstance(tied, Sequence):
            raise param_error(owner, "tied", "a sequence of keyword-argument names", tied)
        if not all(isinstance(t, str) and t.isidentifier() for t in tied) or len(
            {self.param, *tied}
        ) != 1 + len(tied):
            raise param_error(
                owner, "tied", "distinct keyword-argument names other than param", tied
            )
        object.__setattr__(self, "tied", tuple(tied))
        vals = self.values
        if isinstance(vals, str | bytes) or not isinstance(vals, Sequence):
            raise param_error(owner, "values", f"a sequence of 1 to {MAX_POINTS} numbers", vals)
        if not 1 <= len(vals) <= MAX_POINTS:
            raise param_error(
                owner, "values", f"between 1 and {MAX_POINTS} values (a bounded space)", vals
            )
        out = []
        for v in vals:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise param_error(
                    owner, "values", "finite real numbers (a width must stay finite)", vals
                )
            if v < 0:
                raise param_error(owner, "values", "non-negative numbers (widths, scales)", vals)
            out.append(float(v))
        if len(set(out)) != len(out):
            raise param_error(owner, "values", "distinct values", vals)
        object.__setattr__(self, "values", tuple(out))

    def points(self) -> list[dict[str, float]]:
        """The grid: one parameter dict per value, in the declared order."""
        return [dict.fromkeys((self.param, *self.tied), v) for v in self.values]

    def to_dict(self) -> dict[str, Any]:
        """The space as it is stored in an evidence record (:func:`space_from_dict`)."""
        out: dict[str, Any] = {"param": self.param, "values": list(self.values)}
        if self.tied:
            out["tied"] = list(self.tied)
        return out


@dataclass(frozen=True)
class GridSpace:
    """The product of several one-parameter spaces (at most 16 points in all).

    >>> g = GridSpace((SearchSpace("beta", (0.5, 1.0)), SearchSpace("ell", (3, 5))))
    >>> len(g.points()), g.points()[1]
    (4, {'beta': 0.5, 'ell': 5.0})
    """

    axes: tuple[SearchSpace, ...]
    integer: tuple[str, ...] = ()
    """Parameters passed as ``int`` (a block count), not ``float``."""

    def __post_init__(self) -> None:
        owner = "GridSpace"
        axes = self.axes
        if (
            isinstance(axes, str)
            or not isinstance(axes, Sequence)
            or not axes
            or not all(isinstance(a, SearchSpace) for a in axes)
        ):
            raise param_error(owner, "axes", "a non-empty sequence of SearchSpace", axes)
        names = [n for a in axes for n in (a.param, *a.tied)]
        if len(set(names)) != len(names):
            raise param_error(owner, "axes", "axes naming distinct parameters", names)
        size = math.prod(len(a.values) for a in axes)
        if size > MAX_POINTS:
            raise param_error(
                owner, "axes", f"at most {MAX_POINTS} points in all (a bounded space)", size
            )
        for name in self.integer:
            (axis,) = [a for a in axes if a.param == name] or [None]
            if axis is None or any(v != int(v) or v < 1 for v in axis.values):
                raise param_error(
                    owner, "integer", "axes whose values are positive integers", self.integer
                )
        object.__setattr__(self, "axes", tuple(axes))
        object.__setattr__(self, "integer", tuple(self.integer))

    @property
    def values(self) -> tuple[tuple[float, ...], ...]:
        """The points' value tuples, in grid order."""
        return tuple(itertools.product(*(a.values for a in self.axes)))

    def points(self) -> list[dict[str, float]]:
        """Every combination, the first axis varying slowest."""
        out = []
        for combo in itertools.product(*(a.points() for a in self.axes)):
            point: dict[str, Any] = {}
            for part in combo:
                point.update(part)
            for name in self.integer:
                point[name] = int(point[name])
            out.append(point)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The space as it is stored in an evidence record (:func:`space_from_dict`)."""
        return {"axes": [a.to_dict() for a in self.axes], "integer": list(self.integer)}


def space_from_dict(data: Mapping[str, Any]) -> SearchSpace | GridSpace:
    """The space of an evidence record (the inverse of ``to_dict``)."""
    if not isinstance(data, Mapping):
        raise param_error("space_from_dict", "data", "a mapping from to_dict()", data)
    if "axes" in data:
        return GridSpace(
            tuple(space_from_dict(a) for a in data["axes"]),  # type: ignore[misc]
            tuple(data.get("integer", ())),
        )
    return SearchSpace(data["param"], tuple(data["values"]), tuple(data.get("tied", ())))


# GP-UCB on `tails` chose the smallest of (0.25 .. 6) when it was the lower edge: the space
# reaches down to 0.05 so that the choice is inside it.
_BETA_VALUES = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0)
_BETA = SearchSpace("beta", _BETA_VALUES)
_WIDTH = SearchSpace("width_scale", (0.01, 0.03, 0.1, 0.3, 1.0))
# Agents with a second knob search 4 widths x 4 values of it (16 points). The widths are
# those around GP-UCB's and TGP-UCB's choices on `tails` (0.25; 0.05 never won).
_BETA4 = SearchSpace("beta", (0.1, 0.25, 0.5, 1.0))
# the truncation level times 0.3 .. 10 (1 = the paper's level). A first search over
# (0.1, 0.3, 1) chose 1, its upper edge, for TGP-UCB (median regret shares 0.73-0.87 at
# 0.1, 0.01-0.02 at 1), so the scale reaches up to 10, where truncation rarely fires.
_TRUNC = GridSpace((_BETA4, SearchSpace("truncation_scale", (0.3, 1.0, 3.0, 10.0))))
# MoM's block count ell (paper's experiment set: ceil(ln(2T/delta')) = 10 at T = 1000)
_MOM = GridSpace((_BETA4, SearchSpace("ell", (1, 3, 5, 10))), integer=("ell",))

SEARCH_SPACES: dict[str, SearchSpace | GridSpace] = {
    # a constant beta_t = beta (their `beta` override)
    **{
        name: _BETA
        for name in (
            "gp-ucb",
            "gp-ucb-corruption",
            "fast-slow-gp-ucb-unknown",
            "rcgp-ucb",
            "rcgp-ucb-adaptive",
            "ec-gp-ucb",
            "outlier-gp-ucb",
        )
    },
    "fast-slow-gp-ucb": SearchSpace("beta_fast", _BETA_VALUES, ("beta_slow", "beta_fallback")),
    # a constant beta and the truncation level's scale
    **{name: _TRUNC for name in ("tgp-ucb", "ca-tgp-ucb", "ata-gp-ucb-qff", "ata-gp-ucb-nystrom")},
    # a constant beta and the block count
    "mom-gp-ucb": _MOM,
    # a multiplier on the per-arm Robust UCB width
    "robust-ucb-trunc": _WIDTH,
    "robust-ucb-mom": _WIDTH,
}
"""The declared space of every reference agent (uniform play has nothing to tune)."""


def default_space(agent: str) -> SearchSpace | GridSpace:
    """The declared space of a reference agent, or a clear error."""
    if agent not in SEARCH_SPACES:
        raise param_error(
            "tune",
            "space",
            "given for an agent without a declared space (declared: "
            + ", ".join(sorted(SEARCH_SPACES))
            + ")",
            None,
        )
    return SEARCH_SPACES[agent]


@dataclass(frozen=True)
class TuningFamily:
    """Envs whose objective is redrawn at every reset, tuned on seeds no test uses.

    The family runs seeds ``seed_base + i`` (``i < seeds``); ``seed_base`` below
    :data:`TUNING_SEED_BASE` would reach the test seeds and is refused here.
    """

    name: str
    envs: tuple[tuple[str, Mapping[str, Any]], ...]
    horizon: int
    seeds: int = 8
    doc: str = ""
    seed_base: int = TUNING_SEED_BASE

    def __post_init__(self) -> None:
        owner = "TuningFamily"
        if not (isinstance(self.name, str) and self.name):
            raise param_error(owner, "name", "a non-empty string", self.name)
        if not self.envs or not all(
            isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) for e in self.envs
        ):
            raise param_error(owner, "envs", "a non-empty tuple of (env_id, kwargs)", self.envs)
        check_int(owner, "horizon", self.horizon, 1, 10**7)
        check_int(owner, "seeds", self.seeds, 1, MAX_TUNING_SEEDS)
        if isinstance(self.seed_base, bool) or not isinstance(self.seed_base, int):
            raise param_error(owner, "seed_base", "an integer", self.seed_base)
        if self.seed_base < TUNING_SEED_BASE:
            raise param_error(
                owner,
                "seed_base",
                f"at least 2**40 = {TUNING_SEED_BASE} (smaller seeds overlap the test seeds "
                "of the archive, 0 .. n-1, and of the leaderboards, below 2**31)",
                self.seed_base,
            )

    def seed_list(self, n: int | None = None) -> list[int]:
        """The first ``n`` (default ``seeds``) tuning seeds of the family."""
        return tuning_seeds(self.seeds if n is None else n, self.seed_base)


def tuning_seeds(n: int, base: int = TUNING_SEED_BASE) -> list[int]:
    """``base + i`` for ``i < n`` (``base`` defaults to :data:`TUNING_SEED_BASE`)."""
    n = check_int("tuning_seeds", "n", n, 1, MAX_TUNING_SEEDS)
    if base < TUNING_SEED_BASE:
        raise param_error("tuning_seeds", "base", f"at least 2**40 = {TUNING_SEED_BASE}", base)
    return [base + i for i in range(n)]


def _tails_env(channel: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("hbo/GPBandit-v0", {"channel": channel, "redraw": True})


FAMILIES: dict[str, TuningFamily] = {
    "cg-synthetic": TuningFamily(
        "cg-synthetic",
        (("hbo/RKHS-SE-StudentT-v0", {}), ("hbo/RKHS-Matern-StudentT-v0", {})),
        horizon=1000,
        doc="Chowdhury–Gopalan's synthetic SE and Matérn envs (f redrawn per seed)",
    ),
    "tails": TuningFamily(
        "tails",
        (
            _tails_env({"name": "student_t", "df": 1.5, "alpha": 0.3}),
            _tails_env({"name": "signed_pareto", "shape": 1.8, "scale": 0.1, "alpha": 0.5}),
            _tails_env({"name": "contaminated", "prob": 0.05, "outlier_shape": 1.5}),
            _tails_env({"name": "stable", "stability": 1.5, "scale": 0.1, "alpha": 0.3}),
        ),
        horizon=1000,
        doc="hbo/GPBandit-v0 (random RKHS f redrawn per seed) under the issue-35 channels",
    ),
}


def _uniform_regret(env_id: str, kwargs: Mapping[str, Any], seed: int, horizon: int) -> float:
    """Uniform play's expected ``R_T`` on the instance: ``T (f* - mean f)``."""
    env = gym.make(env_id, horizon=horizon, **dict(kwargs))
    try:
        env.reset(seed=seed)
        f = np.asarray(env.unwrapped.objective.values, dtype=float)
    finally:
        env.close()
    return float(horizon * (f.max() - f.mean()))


def tune(
    agent: str,
    family: str | TuningFamily,
    *,
    space: SearchSpace | GridSpace | None = None,
    seeds: int | None = None,
    horizon: int | None = None,
    workers: int | None = 1,
) -> dict[str, Any]:
    """Run the protocol (module docstring) and return its evidence record.

    ``agent`` is a registered name or an import string ``"module:Class"``; ``space``
    defaults to the agent's declared one. Every (point, env, seed) is one harness cell.
    """
    if not isinstance(agent, str) or not agent:
        raise param_error("tune", "agent", "a registered name or 'module:Class'", agent)
    if isinstance(family, str):
        if family not in FAMILIES:
            raise param_error("tune", "family", "one of " + ", ".join(sorted(FAMILIES)), family)
        family = FAMILIES[family]
    if space is None:
        space = default_space(agent)
    if not isinstance(space, SearchSpace | GridSpace):
        raise param_error("tune", "space", "a SearchSpace or GridSpace", space)
    T = family.horizon if horizon is None else check_int("tune", "horizon", horizon, 1, 10**7)
    seed_list = family.seed_list(seeds)
    instances = [(env_id, dict(kw), s) for env_id, kw in family.envs for s in seed_list]
    uniform = {
        (e, json.dumps(kw, sort_keys=True), s): _uniform_regret(e, kw, s, T)
        for e, kw, s in instances
    }
    grid = []
    for point in space.points():
        per: list[dict[str, Any]] = []
        for env_id, kw in family.envs:
            df = runner.evaluate(
                agent,
                env_id,
                seeds=seed_list,
                horizon=T,
                env_kwargs=kw or None,
                agent_params=point,
                workers=workers,
                progress=False,
            )
            final = df[df["t"] == T].set_index("seed")["regret"]
            for s in seed_list:
                r = float(final.loc[s])
                if not math.isfinite(r):
                    raise ValueError(f"{agent} at {point} gave R_T = {r} on {env_id}, seed {s}.")
                u = uniform[(env_id, json.dumps(kw, sort_keys=True), s)]
                per.append(
                    {"env_id": env_id, "env_kwargs": kw, "seed": s, "R_T": r, "uniform_R_T": u}
                )
        ratios = [p["R_T"] / p["uniform_R_T"] if p["uniform_R_T"] > 0 else math.inf for p in per]
        grid.append({"params": point, "median_ratio": float(np.median(ratios)), "runs": per})
    best = min(range(len(grid)), key=lambda i: (grid[i]["median_ratio"], i))
    return {
        "agent": agent,
        "family": family.name,
        "family_doc": family.doc,
        "protocol": "argmin over the space of median_{(env, seed)} R_T / (T (f* - mean f)); "
        "first point wins ties",
        "space": space.to_dict(),
        "horizon": T,
        "envs": [[e, dict(kw)] for e, kw in family.envs],
        "seeds": seed_list,
        "grid": grid,
        "chosen": grid[best]["params"],
    }


def write_evidence(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write a :func:`tune` record as indented JSON (creating the folder)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return p


def evidence_path(agent: str, family: str, root: str | Path = "results/tuning") -> Path:
    """``results/tuning/<agent>--<family>.json`` (an import string's ``:`` becomes ``.``)."""
    return Path(root) / f"{agent.replace(':', '.')}--{family}.json"


# -- the command line: hbo-bench tune AGENT --family FAMILY (parser in hbo_envs.cli) ------
def run(args: Any) -> int:
    """``hbo-bench tune``: run :func:`tune`, write the evidence, print the grid."""
    space = None
    if (args.param is None) != (args.values is None):
        raise param_error("hbo-bench tune", "--param/--values", "given together", args.values)
    if args.param is not None:
        try:
            vals = tuple(float(v) for v in args.values.split(",") if v.strip())
        except ValueError:
            raise param_error(
                "hbo-bench tune", "--values", "comma-separated numbers", args.values
            ) from None
        space = SearchSpace(args.param, vals)
    record = tune(
        args.agent,
        args.family,
        space=space,
        seeds=args.seeds,
        horizon=args.horizon,
        workers=args.workers,
    )
    out = Path(args.out) if args.out else evidence_path(args.agent, record["family"])
    write_evidence(record, out)
    print(
        f"{record['agent']} on {record['family']} (T = {record['horizon']}, "
        f"{len(record['seeds'])} tuning seeds): median R_T / uniform per point"
    )
    for g in record["grid"]:
        mark = "  <- chosen" if g["params"] == record["chosen"] else ""
        print(f"  {g['params']}: {g['median_ratio']:.4g}{mark}")
    print(f"evidence: {out}")
    return 0
