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
#: mypy's configuration (torch and jax not followed: see the file), also used by .ci/run
CONFIG = SCRIPTS / "mypy.ini"


def _installed_checkout() -> Path | None:
    """The checkout ``hbo-bench`` is installed (editable) from: the ``direct_url.json`` pip
    wrote (an ``*.egg-info`` folder in a checkout has none)."""
    for dist in metadata.distributions(name="hbo-bench"):
        text = dist.read_text("direct_url.json")
        if text:
            url = json.loads(text).get("url", "")
            return Path(url.removeprefix("file://")).resolve() if url.startswith("file:") else None
    return None


def _mypy(
    scripts: list[Path], tmp_path: Path, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
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
        [
            *(sys.executable, "-m", "mypy", "--strict", "--config-file", str(CONFIG)),
            *(["--cache-dir", str(cache)] if cache is not None else ["--no-incremental"]),
            *map(str, scripts),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout: mypy searches the current directory first
        env=env,
        timeout=600,
    )


GOOD, WRONG = SCRIPTS / "user_script.py", SCRIPTS / "wrong_script.py"


@pytest.fixture(scope="module")
def mypy_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> subprocess.CompletedProcess[str]:
    """One ``mypy --strict`` run over both scripts (most of a run is analysing the installed
    package, ~20 s; two runs cost twice that). Each error line names its file, and the
    summary counts the files checked, so each test reads its own script's verdict.

    mypy keeps its incremental cache in pytest's cache folder (``.pytest_cache/d/mypy``):
    the first run analyses everything, a later one (~1 s) re-analyses only the modules whose
    source changed and those that depend on them, so it reports what a fresh run reports.
    ``pytest --cache-clear`` (or ``-p no:cacheprovider``: no cache, ``--no-incremental``)
    gives a cold run."""
    cache = getattr(request.config, "cache", None)
    where = cache.mkdir("mypy") if cache is not None else None
    return _mypy([GOOD, WRONG], tmp_path_factory.mktemp("mypy"), where)


def _errors_in(run: subprocess.CompletedProcess[str], script: Path) -> list[int]:
    return [int(m) for m in re.findall(rf"{re.escape(script.name)}:(\d+): error:", run.stdout)]


@pytest.mark.xdist_group("mypy")
def test_user_script_type_checks_against_the_installed_package(
    mypy_run: subprocess.CompletedProcess[str],
) -> None:
    assert "checked 2 source files" in mypy_run.stdout, mypy_run.stdout + mypy_run.stderr
    assert not mypy_run.stderr.strip(), mypy_run.stderr
    # no line of any kind (error or note) about the good script
    assert f"{GOOD.name}:" not in mypy_run.stdout, mypy_run.stdout


@pytest.mark.xdist_group("mypy")
def test_wrong_script_is_rejected_line_by_line(
    mypy_run: subprocess.CompletedProcess[str],
) -> None:
    marked = {i for i, line in enumerate(WRONG.read_text().splitlines(), 1) if "  # E:" in line}
    assert len(marked) == 6
    assert mypy_run.returncode == 1, mypy_run.stdout + mypy_run.stderr
    reported = _errors_in(mypy_run, WRONG)
    assert set(reported) == marked, mypy_run.stdout
    assert re.search(r"Found \d+ errors? in 1 file \(checked 2 source files\)", mypy_run.stdout)
    assert "import-not-found" not in mypy_run.stdout and "import-untyped" not in mypy_run.stdout
