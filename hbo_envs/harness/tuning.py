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
    "MAX_POINTS",
    "SEARCH_SPACES",
    "TUNING_SEED_BASE",
    "SearchSpace",
    "TuningFamily",
    "default_space",
    "evidence_path",
    "run",
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
    """One parameter and its candidate values (finite, non-negative, at most 16, distinct)."""

    param: str
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        owner = "SearchSpace"
        if not (isinstance(self.param, str) and self.param.isidentifier()):
            raise param_error(owner, "param", "a keyword-argument name of the agent", self.param)
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
        return [{self.param: v} for v in self.values]


# GP-UCB on `tails` chose the smallest of (0.25 .. 6) when it was the lower edge: the space
# reaches down to 0.05 so that the choice is inside it.
_BETA = SearchSpace("beta", (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0))
_WIDTH = SearchSpace("width_scale", (0.01, 0.03, 0.1, 0.3, 1.0))

SEARCH_SPACES: dict[str, SearchSpace] = {
    # a constant beta_t = beta for every GP-UCB-type agent (their `beta` override)
    **{
        name: _BETA
        for name in (
            "gp-ucb",
            "tgp-ucb",
            "ca-tgp-ucb",
            "mom-gp-ucb",
            "ata-gp-ucb-qff",
            "ata-gp-ucb-nystrom",
        )
    },
    # a multiplier on the per-arm Robust UCB width
    "robust-ucb-trunc": _WIDTH,
    "robust-ucb-mom": _WIDTH,
}
"""The declared space of each reference agent that has one (this first part of item 1
covers the width only; the truncation scale of TGP/CA-TGP/ATA and MoM's block count are
left to the next part)."""


def default_space(agent: str) -> SearchSpace:
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
    """Envs whose objective is redrawn at every reset, tuned on seeds no test uses."""

    name: str
    envs: tuple[tuple[str, Mapping[str, Any]], ...]
    horizon: int
    seeds: int = 8
    doc: str = ""


def tuning_seeds(n: int) -> list[int]:
    """``TUNING_SEED_BASE + i`` for ``i < n``."""
    n = check_int("tuning_seeds", "n", n, 1, MAX_TUNING_SEEDS)
    return [TUNING_SEED_BASE + i for i in range(n)]


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
    space: SearchSpace | None = None,
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
    if not isinstance(space, SearchSpace):
        raise param_error("tune", "space", "a SearchSpace", space)
    T = family.horizon if horizon is None else check_int("tune", "horizon", horizon, 1, 10**7)
    seed_list = tuning_seeds(family.seeds if seeds is None else seeds)
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
        "space": {"param": space.param, "values": list(space.values)},
        "horizon": T,
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
