"""Rendering of leaderboards: which entries a suite ranks (:func:`collect_entries`) and the
entry points that write the static site (:func:`render_suite`, :func:`render_index`,
:func:`render_all`; the pages themselves are jinja2 templates and matplotlib figures, see
:mod:`~hbo_envs.leaderboard.site`).

Everything rendered is a pure function of the suite definitions and the submission files
(no clock, no absolute paths, no machine facts), so a fresh render of the committed
submissions reproduces the committed pages byte for byte (a test checks it). Submissions
that fail :func:`~hbo_envs.leaderboard.submission.validate` are left out (and reported).
The pages load no external scripts, styles or fonts (the sortable tables are ~25 lines of
inline JavaScript), so they work opened from disk.

Ranking: by the normalized score (mean over envs of ``1 − IQM(agent) / IQM(random)``,
see :mod:`~hbo_envs.leaderboard.aggregate`), then by mean rank, then by name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hbo_envs.leaderboard.aggregate import mean_ranks, normalized_scores, score_with_ci
from hbo_envs.leaderboard.submission import (
    content_sha256,
    load_submission,
    resolve_agent,
    validate,
)
from hbo_envs.leaderboard.suite import Suite, leaderboards_root, list_suites, load_suite

__all__ = ["Entry", "collect_entries", "render_all", "render_index", "render_suite"]


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


# -- entry points -----------------------------------------------------------------------------
# Files of a suite's site that a render may remove when they are no longer produced (e.g. the
# figures of a suite whose last submission was withdrawn); envs/ and entries/ are owned whole.
_OPTIONAL = ("regret.svg", "profiles.svg", "results.csv")
_OWNED_DIRS = ("envs", "entries")


def _write(path: Path, text: str) -> Path:
    from hbo_envs.harness.store import _atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, lambda p: p.write_text(text))
    path.chmod(0o644)  # the temporary file's private mode is wrong for published pages
    return path


def render_suite(suite: Suite | str, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write the suite's part of the site (see :mod:`~hbo_envs.leaderboard.site`): its
    ``index.html``, ``README.md``, ``summary.json``, the figures and ``results.csv`` (when it
    has entries), and one page per env and per entry; remove pages no longer produced.

    A suite whose envs are not all available here cannot validate its submissions: it is
    rendered as "no submissions yet" when it has none, else refused (``SuiteError``).
    """
    from hbo_envs.leaderboard.site import site_files
    from hbo_envs.leaderboard.suite import SuiteError

    if not isinstance(suite, Suite):
        suite = load_suite(suite, root)
    folder = suite.folder
    has_files = any((folder / "submissions").glob("*.json"))
    reason = suite.unavailable_reason()
    if reason and has_files:
        raise SuiteError(
            f"Cannot render {suite.id!r} here: its submissions cannot be validated because "
            f"{reason}."
        )
    entries, notes = collect_entries(suite) if has_files else ([], [])
    for n in notes:
        print(f"left out: {n}")
    files = site_files(suite, entries)
    for name in _OPTIONAL:
        if name not in files:
            (folder / name).unlink(missing_ok=True)
    for d in _OWNED_DIRS:
        for p in sorted((folder / d).glob("*")) if (folder / d).is_dir() else []:
            if p.is_file() and f"{d}/{p.name}" not in files:
                p.unlink()
    return [_write(folder / rel, text) for rel, text in sorted(files.items())]


def render_index(root: str | os.PathLike[str] | None = None) -> Path:
    """Write ``index.html`` (every suite: leader, entries, last verification date) and
    ``submit.html`` of the leaderboards root; returns the path of ``index.html``.

    A suite's line comes from its ``summary.json`` (written by :func:`render_suite`), so a
    suite this machine cannot re-render keeps its committed line.
    """
    from hbo_envs.leaderboard.site import index_files, suite_summary

    r = leaderboards_root(root)
    summaries = []
    for sid in list_suites(r):
        f = r / sid / "summary.json"
        blank = suite_summary(load_suite(sid, r), [])  # every key, for a summary not yet written
        summaries.append({**blank, **json.loads(f.read_text())} if f.is_file() else blank)
    files = index_files(summaries)
    for rel, text in sorted(files.items()):
        _write(r / rel, text)
    return r / "index.html"


def render_all(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Render every suite that can be rendered here (others are skipped, saying why), and
    the index."""
    from hbo_envs.leaderboard.suite import SuiteError

    r = leaderboards_root(root)
    out = []
    for s in list_suites(r):
        try:
            out += render_suite(s, r)
        except SuiteError as exc:
            print(f"skipped {s}: {exc}")
    out.append(render_index(r))
    return out
