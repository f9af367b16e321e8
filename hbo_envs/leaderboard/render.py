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
from pathlib import Path

from hbo_envs.leaderboard.entries import Entry, collect_entries
from hbo_envs.leaderboard.suite import Suite, leaderboards_root, list_suites, load_suite

__all__ = ["Entry", "collect_entries", "render_all", "render_index", "render_suite"]


_OPTIONAL = ("regret.svg", "profiles.svg", "profiles.phone.svg", "results.csv")
_OWNED_DIRS = ("envs", "entries")


def _write(path: Path, text: str) -> Path:
    from hbo_envs.harness.store import _atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, lambda p: p.write_text(text))
    path.chmod(0o644)  # the temporary file's private mode is wrong for published pages
    return path


def render_suite(
    suite: Suite | str,
    root: str | os.PathLike[str] | None = None,
    *,
    repository: str | None = None,
) -> list[Path]:
    """Write the suite's part of the site (see :mod:`~hbo_envs.leaderboard.site`): its
    ``index.html``, ``README.md``, ``summary.json``, the figures and ``results.csv`` (when it
    has entries), and one page per env and per entry; remove pages no longer produced.

    A suite whose envs are not all available here cannot validate its submissions: it is
    rendered as "no submissions yet" when it has none, else refused (``SuiteError``).

    Agent code is linked into the repository of ``<root>/site.toml`` (see
    :class:`~hbo_envs.leaderboard.site.SiteConfig`; default
    :data:`~hbo_envs.leaderboard.site.DEFAULT_REPOSITORY`), or into ``repository`` when given
    (e.g. for a hosted copy of a fork).
    """
    from hbo_envs.leaderboard.site import load_site_config, site_files
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
    files = site_files(suite, entries, load_site_config(folder.parent, repository=repository))
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


def render_all(
    root: str | os.PathLike[str] | None = None, *, repository: str | None = None
) -> list[Path]:
    """Render every suite that can be rendered here (others are skipped, saying why), and
    the index (``repository``: see :func:`render_suite`)."""
    from hbo_envs.leaderboard.suite import SuiteError

    r = leaderboards_root(root)
    out = []
    for s in list_suites(r):
        try:
            out += render_suite(s, r, repository=repository)
        except SuiteError as exc:
            print(f"skipped {s}: {exc}")
    out.append(render_index(r))
    return out
