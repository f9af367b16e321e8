"""Type checkers see the installed package (issue 36 item 3): mypy, run from outside the
checkout (so it finds hbo_envs only through the installation, as a user's editor does),
accepts a user script of the public API under ``--strict`` and rejects a wrong one, line by
line. ``.ci/run`` installs with the README's ``pip install -e .``; with setuptools' import-hook
editable mode mypy found neither package and ``--ignore-missing-imports`` hid every error."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "typing"


def _installed_checkout() -> Path | None:
    """The checkout ``hbo-bench`` is installed (editable) from: the ``direct_url.json`` pip
    wrote (an ``*.egg-info`` folder in a checkout has none)."""
    for dist in metadata.distributions(name="hbo-bench"):
        text = dist.read_text("direct_url.json")
        if text:
            url = json.loads(text).get("url", "")
            return Path(url.removeprefix("file://")).resolve() if url.startswith("file:") else None
    return None


def _mypy(script: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is in the [test] extra")
    where = _installed_checkout()
    if where != ROOT:
        msg = (
            f"hbo-bench is installed from {where}, not from this checkout {ROOT}: mypy would "
            "check the other copy (pip install -e . here to run this test)"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout: mypy searches the current directory first
        env=env,
        timeout=600,
    )


def test_user_script_type_checks_against_the_installed_package(tmp_path: Path) -> None:
    run = _mypy(SCRIPTS / "user_script.py", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Success: no issues found in 1 source file")


def test_wrong_script_is_rejected_line_by_line(tmp_path: Path) -> None:
    script = SCRIPTS / "wrong_script.py"
    marked = {i for i, line in enumerate(script.read_text().splitlines(), 1) if "  # E:" in line}
    assert len(marked) == 6
    run = _mypy(script, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    reported = {int(m) for m in re.findall(r"wrong_script\.py:(\d+): error:", run.stdout)}
    assert reported == marked, run.stdout
    assert "import-not-found" not in run.stdout and "import-untyped" not in run.stdout
