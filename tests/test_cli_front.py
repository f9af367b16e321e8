"""The CLI's front door: --version, logging behind --verbose/--quiet, help texts that say
what the program does (issue 23)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

import hbo_envs
from hbo_envs.cli import LOGGERS, main

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_the_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"hbo-bench {hbo_envs.__version__}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'^version = "{re.escape(hbo_envs.__version__)}"$', pyproject, re.M)


@pytest.mark.parametrize(
    ("flags", "level"),
    [
        ([], logging.WARNING),
        (["-v"], logging.INFO),
        (["-vv"], logging.DEBUG),
        (["--quiet"], logging.ERROR),
    ],
)
def test_verbose_and_quiet_set_the_package_loggers(
    flags: list[str], level: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*flags, "list"]) == 0
    for name in LOGGERS:
        logger = logging.getLogger(name)
        assert logger.level == level
        assert sum(getattr(h, "_hbo_cli", False) for h in logger.handlers) == 1
    err = capsys.readouterr().err
    assert ("DEBUG: hbo-bench" in err) == (level == logging.DEBUG)


def test_verbose_and_quiet_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    # in this process (main is what the console script runs); argparse exits with 2
    with pytest.raises(SystemExit) as exc:
        main(["-v", "-q", "list"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_progress_help_says_what_happens_off_a_tty(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "off when not a TTY" not in text
    assert "a progress line every $HBO_PROGRESS_INTERVAL seconds" in text
