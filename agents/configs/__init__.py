"""Named configurations of the reference agents: ``paper`` and ``tuned`` (issue 35).

- ``paper`` is every agent's published configuration: its defaults, no parameter set.
- ``tuned`` is the point chosen by the one tuning protocol of
  :mod:`hbo_envs.harness.tuning` (a declared search space of at most 16 points per agent,
  searched on tuning instances whose seeds, from ``2**40`` on, no test uses; the point of
  least median ``R_T / (T (f* - mean f))``). It is stored with its evidence, one JSON
  record per agent in ``agents/configs/tuned/<agent>.json``, and reproduced by
  ``hbo-bench tune AGENT --family FAMILY`` (the record names the family).

>>> import agents
>>> from agents.configs import config_params
>>> config_params("gp-ucb", "paper")
{}
>>> sorted(config_params("tgp-ucb", "tuned"))
['beta', 'truncation_scale']
>>> agents.make("gp-ucb", config="tuned").beta == config_params("gp-ucb", "tuned")["beta"]
True

In the harness and CLI agent syntax: ``--agent 'gp-ucb[config=tuned]'``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from hbo_envs.validation import param_error

__all__ = [
    "CONFIGS",
    "MIN_TUNING_SEED",
    "check_record",
    "config_params",
    "edge_params",
    "render_docs",
    "tuned_agents",
    "tuned_record",
    "tuned_table_markdown",
]

CONFIGS = ("paper", "tuned")
"""The configuration names ``agents.make(name, config=...)`` accepts."""

MIN_TUNING_SEED = 2**40
"""Smallest seed a tuning record may use (``hbo_envs.harness.tuning.TUNING_SEED_BASE``)."""

_KEYS = {"agent", "family", "horizon", "envs", "seeds", "space", "grid", "chosen", "protocol"}


def _bad(field: str, allowed: str, value: Any) -> ValueError:
    return param_error("tuned record", field, allowed, value)


def check_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Check a tuning evidence record's schema and its choice; return its chosen params.

    The record must hold the agent, family, horizon, envs, the tuning seeds (distinct
    integers ``>= 2**40``), the space, one grid entry per point with a run per (env, seed)
    and ``median_ratio`` equal to the median of its runs' ``R_T / uniform_R_T``, and the
    ``chosen`` params equal to the first grid point of least ``median_ratio``.
    """
    if not isinstance(record, Mapping):
        raise _bad("record", "a mapping (a JSON object)", type(record).__name__)
    missing = _KEYS - set(record)
    if missing:
        raise _bad("record", "a record with keys " + ", ".join(sorted(_KEYS)), sorted(missing))
    seeds = record["seeds"]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)
        or len(set(seeds)) != len(seeds)
        or min(seeds) < MIN_TUNING_SEED
    ):
        raise _bad("seeds", f"distinct integers >= 2**40 = {MIN_TUNING_SEED}", seeds)
    horizon = record["horizon"]
    if not isinstance(horizon, int) or horizon < 1:
        raise _bad("horizon", "a positive integer", horizon)
    envs = record["envs"]
    if not isinstance(envs, list) or not envs:
        raise _bad("envs", "a non-empty list of [env_id, kwargs]", envs)
    grid = record["grid"]
    if not isinstance(grid, list) or not 1 <= len(grid) <= 16:
        raise _bad(
            "grid", "a list of 1 to 16 points", grid if not isinstance(grid, list) else len(grid)
        )
    want = len(envs) * len(seeds)
    for g in grid:
        runs = g.get("runs") if isinstance(g, Mapping) else None
        if not isinstance(runs, list) or len(runs) != want or not isinstance(g.get("params"), dict):
            raise _bad("grid", f"points with params and {want} runs (envs x seeds)", g)
        if sorted(r["seed"] for r in runs) != sorted(seeds * len(envs)):
            raise _bad("grid", "runs on exactly the record's seeds", [r["seed"] for r in runs])
        ratios = sorted(
            r["R_T"] / r["uniform_R_T"] if r["uniform_R_T"] > 0 else math.inf for r in runs
        )
        k = len(ratios)
        median = ratios[k // 2] if k % 2 else 0.5 * (ratios[k // 2 - 1] + ratios[k // 2])
        if not math.isclose(g["median_ratio"], median, rel_tol=1e-12, abs_tol=1e-15):
            raise _bad(
                "grid", f"median_ratio equal to its runs' median {median!r}", g["median_ratio"]
            )
    best = min(range(len(grid)), key=lambda i: (grid[i]["median_ratio"], i))
    if record["chosen"] != grid[best]["params"]:
        raise _bad("chosen", f"the grid's argmin {grid[best]['params']!r}", record["chosen"])
    return dict(record["chosen"])


def _folder() -> Any:
    return resources.files("agents.configs").joinpath("tuned")


def tuned_agents() -> tuple[str, ...]:
    """Names of the agents that have a stored ``tuned`` record."""
    return tuple(
        sorted(p.name[: -len(".json")] for p in _folder().iterdir() if p.name.endswith(".json"))
    )


@cache
def _load(name: str) -> dict[str, Any]:
    path = _folder().joinpath(f"{name}.json")
    if not path.is_file():
        raise param_error(
            "agents.make",
            "config",
            "'paper', or 'tuned' for an agent with a tuned record ("
            + ", ".join(tuned_agents())
            + ")",
            f"tuned (agent {name!r})",
        )
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("agent") != name:
        raise _bad("agent", f"{name!r} (the file's name)", record.get("agent"))
    check_record(record)
    return record


def tuned_record(name: str) -> dict[str, Any]:
    """The stored tuning evidence of agent ``name`` (a copy; schema-checked)."""
    return json.loads(json.dumps(_load(name)))


def config_params(name: str, config: str) -> dict[str, Any]:
    """The keyword arguments configuration ``config`` gives agent ``name``."""
    if config not in CONFIGS:
        raise param_error("agents.make", "config", "one of 'paper', 'tuned'", config)
    if config == "paper":
        return {}
    return dict(_load(name)["chosen"])


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def edge_params(record: Mapping[str, Any]) -> list[str]:
    """Parameters whose chosen value is the smallest or largest of its axis: the optimum
    may lie outside the declared space (a finding, shown as "(edge)" in the docs table).
    An axis of one value has no edge."""
    space = record["space"]
    axes = space["axes"] if "axes" in space else [space]
    out = []
    for axis in axes:
        vals = axis["values"]
        names = [axis["param"], *axis.get("tied", [])]
        if len(vals) > 1 and record["chosen"][axis["param"]] in (min(vals), max(vals)):
            out += names
    return out


def tuned_table_markdown() -> str:
    """The stored ``tuned`` choices as a markdown table (docs/agents.md's generated block):
    agent, family, points searched, the choice (a value at an end of its axis marked
    "(edge)"), its median ``R_T / (T (f* - mean f))`` and the range of the medians over the
    grid."""
    rows = [
        "| agent | family | T × seeds × envs | points | tuned | median share | grid range |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in tuned_agents():
        rec = _load(name)
        meds = [g["median_ratio"] for g in rec["grid"]]
        edges = set(edge_params(rec))
        chosen = ", ".join(
            f"{k}={_fmt(v)}" + (" (edge)" if k in edges else "") for k, v in rec["chosen"].items()
        )
        best = min(meds)
        rows.append(
            f"| {name} | {rec['family']} | {rec['horizon']} × {len(rec['seeds'])} × "
            f"{len(rec['envs'])} | {len(rec['grid'])} | {chosen} | {best:.4g} | "
            f"{min(meds):.4g} – {max(meds):.4g} |"
        )
    return "\n".join(rows) + "\n"


def render_docs(path: str = "docs/agents.md") -> bool:
    """Rewrite the ``<!-- tuned:table:begin/end -->`` block of ``path``; True if it changed."""
    import re
    from pathlib import Path

    page = Path(path)
    text = page.read_text(encoding="utf-8")
    new = re.sub(
        r"(<!-- tuned:table:begin -->\n).*?(<!-- tuned:table:end -->)",
        lambda m: m.group(1) + tuned_table_markdown() + m.group(2),
        text,
        flags=re.S,
    )
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text
