"""Leaderboard entries: which submissions a suite's table shows, with which numbers, in
which order (:func:`collect_entries`, the function every rendered page is built from).

Ranking: by the normalized score (mean over envs of ``1 - IQM(agent) / IQM(random)``,
see :mod:`~hbo_envs.leaderboard.aggregate`), then by mean rank, then by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.leaderboard.aggregate import mean_ranks, normalized_scores, score_with_ci
from hbo_envs.leaderboard.submission import (
    content_sha256,
    load_submission,
    resolve_agent,
    validate,
)
from hbo_envs.leaderboard.suite import Suite

__all__ = ["Entry", "collect_entries"]


@dataclass
class Entry:
    """One valid submission on a suite's table, with its leaderboard aggregates."""

    file: str
    sub: dict[str, Any]
    status: str  # verification: verified | flagged | failed | stale | unverified
    date: str
    score: float = float("nan")
    score_lo: float = float("nan")
    score_hi: float = float("nan")
    mean_rank: float = float("nan")
    rank: int = 0

    @property
    def name(self) -> str:
        return str(self.sub["agent"]["display_name"])

    @property
    def is_random(self) -> bool:
        """The registered ``random`` agent with default parameters (the score's 0)."""
        a = self.sub["agent"]
        return a["import_path"] == resolve_agent("random")[0] and not a["params"]

    def iqm(self, env_id: str) -> dict[str, float]:
        return self.sub["aggregates"]["per_env"][env_id]


def _status(sub: dict[str, Any]) -> tuple[str, str]:
    ver = sub.get("verification")
    if not ver:
        return "unverified", ""
    if ver.get("submission_sha256") != content_sha256(sub):
        return "stale", str(ver.get("date", ""))
    return str(ver.get("status", "unverified")), str(ver.get("date", ""))


def collect_entries(suite: Suite, *, quiet: bool = False) -> tuple[list[Entry], list[str]]:
    """Valid submissions of ``suite`` ranked, and a note for each file left out."""
    folder = suite.folder / "submissions"
    entries, notes = [], []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            sub = load_submission(p)
        except ValueError as exc:
            notes.append(f"{p.name}: {exc}")
            continue
        rep = validate(sub, suite=suite)
        if not rep.ok:
            notes.append(f"{p.name}: invalid: " + "; ".join(rep.errors[:3]))
            continue
        status, date = _status(sub)
        entries.append(Entry(p.name, sub, status, date))
    _rank(suite, entries)
    return entries, notes


def _rank(suite: Suite, entries: list[Entry]) -> None:
    envs = suite.env_ids
    ranks = mean_ranks({e.file: {x: e.iqm(x)["iqm"] for x in envs} for e in entries})
    refs = [e for e in entries if e.is_random]
    refs.sort(key=lambda e: (e.status != "verified", e.file))
    ref = {x: refs[0].iqm(x)["iqm"] for x in envs} if refs else {}
    for e in entries:
        e.mean_rank = ranks[e.file]
        if ref and all(
            np.isfinite(list(normalized_scores({x: e.iqm(x)["iqm"] for x in envs}, ref).values()))
        ):
            runs = np.array(
                [[r["final_regret"] for r in e.sub["results"] if r["env_id"] == x] for x in envs]
            ).T
            e.score, e.score_lo, e.score_hi = score_with_ci(
                runs,
                [ref[x] for x in envs],
                confidence=suite.confidence,
                reps=suite.bootstrap_reps,
                seed=suite.bootstrap_seed,
            )
    entries.sort(
        key=lambda e: (
            -e.score if np.isfinite(e.score) else np.inf,
            e.mean_rank if np.isfinite(e.mean_rank) else np.inf,
            e.name,
            e.file,
        )
    )
    for i, e in enumerate(entries, 1):
        e.rank = i
