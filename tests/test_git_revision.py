"""The provenance flag ``dirty`` (hbo_envs.harness.store.git_revision): a changed code file
makes a checkout dirty, a changed generated output (what ``leaderboard baselines`` and
``archive build`` write as they go) does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hbo_envs.harness.store import git_revision


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_only_code_makes_a_checkout_dirty(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for rel in ("agents/a.py", "hbo_envs/h.py", "leaderboards/s/x.json", "results/r.csv"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("0\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    inside = repo / "hbo_envs"
    clean = git_revision(inside)
    assert clean is not None and clean["dirty"] is False and len(clean["revision"]) == 40
    for rel in ("leaderboards/s/x.json", "results/r.csv"):
        (repo / rel).write_text("1\n")
    assert git_revision(inside)["dirty"] is False  # generated outputs do not count
    (repo / "agents/a.py").write_text("1\n")
    assert git_revision(inside)["dirty"] is True  # code does
