"""The command line as a user meets it (issue 36 item 5, issue 37 item 8): logging flags anywhere
on the line and meaningful at ``-v``, a help text for every option, ``python -m hbo_envs``, every
``hbo-bench`` command the docs show parses, and paths that do not exist are errors."""

from __future__ import annotations

import argparse
import logging
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import hbo_envs
from hbo_envs.cli import LOGGERS, _parser, main

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _walk(
    p: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    out = [(path, p)]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {c.dest for c in action._choices_actions}
            for name, child in action.choices.items():
                assert name in helped, f"subcommand {' '.join((*path, name))!r} has no help"
                out += _walk(child, (*path, name))
    return out


# -- help texts --------------------------------------------------------------------------------
def test_every_option_and_argument_has_a_help_text() -> None:
    missing = []
    parsers = _walk(_parser())
    assert len(parsers) > 20  # run, summary, ..., leaderboard submit, archive build, data fetch
    for path, p in parsers:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                name = "/".join(action.option_strings) or action.dest
                missing.append(f"hbo-bench {' '.join(path)} {name}".replace("  ", " "))
    assert not missing, "options without a help text:\n" + "\n".join(missing)


def test_the_help_walk_finds_a_missing_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk above really reaches nested subcommands (a test that cannot fail is a defect)."""
    p = _parser()
    archive = dict(_walk(p))[("archive", "status")]
    archive.add_argument("--undocumented")
    found = [
        a for path, q in _walk(p) for a in q._actions if a.option_strings == ["--undocumented"]
    ]
    assert found and not found[0].help


# -- logging flags anywhere ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["data", "list"], logging.WARNING),
        (["-v", "data", "list"], logging.INFO),
        (["data", "-v", "list"], logging.INFO),
        (["data", "list", "-v"], logging.INFO),
        (["data", "list", "--verbose"], logging.INFO),
        (["-v", "data", "list", "-v"], logging.DEBUG),  # counts add up across positions
        (["data", "list", "-vv"], logging.DEBUG),
        (["data", "list", "-q"], logging.ERROR),
        (["-q", "data", "list"], logging.ERROR),
    ],
)
def test_logging_flags_anywhere_on_the_line(
    argv: list[str], level: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    for name in LOGGERS:
        assert logging.getLogger(name).level == level
    capsys.readouterr()


@pytest.mark.parametrize("argv", [["-v", "data", "list", "-q"], ["list", "-q", "--verbose"]])
def test_verbose_and_quiet_exclude_each_other_anywhere(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_every_subcommand_accepts_the_logging_flags() -> None:
    for path, p in _walk(_parser()):
        flags = {s for a in p._actions for s in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= flags, path


def test_verbose_says_what_runs_and_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["list", "-v"])
    err = capsys.readouterr().err
    assert f"INFO: hbo-bench {hbo_envs.__version__} on Python " in err
    assert "gymnasium " in err and "INFO: data directory: " in err
    assert "DEBUG" not in err
    out = tmp_path / "runs"
    argv = ["run", "--env", "hbo/GPBandit-v0", "--agent", "random", "--seeds", "0-1"]
    argv += ["--horizon", "5", "--workers", "1", "--no-progress", "--out", str(out), "-v"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        "INFO: run: 2 cell(s) = 1 env(s) x 1 agent(s) x 2 seed(s), horizon 5, "
        f"into {out} (backend local, workers 1)" in err
    )
    assert "INFO: run: 2 ran, 0 already finished, 0 failed" in err
    main(["summary", str(out), "-v"])
    assert f"INFO: read {out}: " in capsys.readouterr().err
    main(["list"])  # the default level again: no INFO line
    assert "INFO" not in capsys.readouterr().err


def test_verbose_logs_after_a_dict_config_disabled_the_loggers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``logging.config.dictConfig`` (run in-process by another tool, e.g. lint-imports)
    disables the loggers that exist; ``-v`` still logs."""
    import logging.config

    logging.getLogger("hbo_envs.cli")  # exists before the dictConfig
    logging.config.dictConfig({"version": 1, "loggers": {"other": {"level": "INFO"}}})
    assert logging.getLogger("hbo_envs.cli").disabled
    main(["list", "-v"])
    assert "INFO: hbo-bench " in capsys.readouterr().err


# -- python -m hbo_envs --------------------------------------------------------------------------
def test_python_m_hbo_envs_runs_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hbo_envs", "list"], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert main(["list"]) == 0
    assert run.stdout == capsys.readouterr().out
    bad = subprocess.run(
        [sys.executable, "-m", "hbo_envs", "no-such-command"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# -- every command the docs show ---------------------------------------------------------------
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`((?:hbo-bench|python -m hbo_envs) [^`]*)`")


def _commands(text: str) -> list[tuple[str, bool]]:
    """``(command, complete)`` for every ``hbo-bench ...`` command in a Markdown text: lines of
    fenced blocks (continuations joined, comments cut; complete commands) and inline code spans
    (possibly a fragment such as `hbo-bench run`, so required arguments may be missing)."""
    out: list[tuple[str, bool]] = []
    for block in _FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line)
            for part in re.split(r"&&|\|\||;|\s\|\s", line):
                m = re.search(r"(?:^|\s)((?:hbo-bench|python -m hbo_envs)(?:\s.*)?)$", part.strip())
                if m:
                    out.append((" ".join(m.group(1).split()), True))
    for span in _INLINE.findall(_FENCE.sub("", text)):
        for part in re.split(r"&&|\s\|\s", span):
            out.append((part.strip(), False))
    return out


class _Refused(Exception):
    pass


def _parse(argv: list[str]) -> None:
    p = _parser()

    def error(message: str) -> None:
        raise _Refused(message)

    for _, q in _walk(p):
        q.error = error  # type: ignore[method-assign]
    p.parse_args(argv)


def _doc_commands() -> list[tuple[str, str, bool]]:
    out = []
    for doc in DOCS:
        for cmd, complete in _commands(doc.read_text(encoding="utf-8")):
            out.append((doc.name, cmd, complete))
    return out


def test_the_docs_show_many_commands() -> None:
    cmds = _doc_commands()
    assert len(cmds) > 40
    assert any(c == "hbo-bench leaderboard list" for _, c, _ in cmds)
    assert any("archive build --backend ray --address auto" in c for _, c, _ in cmds)


@pytest.mark.parametrize(("doc", "cmd", "complete"), _doc_commands())
def test_every_command_in_the_docs_parses(doc: str, cmd: str, complete: bool) -> None:
    words = shlex.split(cmd)
    words = words[3:] if words[:3] == ["python", "-m", "hbo_envs"] else words[1:]
    if "..." in words:  # an elided tail ("hbo-bench leaderboard verify ..."): parse the head
        words, complete = words[: words.index("...")], False
    words = [w.split("|")[0] for w in words]  # "cg2019-fig1d|cg2019-fig1e": the first choice
    try:
        _parse(words)
    except _Refused as exc:
        fragment = not complete and str(exc).startswith("the following arguments are required")
        assert fragment, f"{doc}: `{cmd}` does not parse: {exc}"
    except SystemExit as exc:  # --help / --version
        assert exc.code == 0, f"{doc}: `{cmd}`"


def test_the_docs_command_check_catches_an_option_that_does_not_exist() -> None:
    with pytest.raises(_Refused, match="unrecognized arguments: --sample"):
        _parse(shlex.split("leaderboard verify my-agent.json --sample 2 --record"))
    assert _commands("```bash\nhbo-bench a \\\n  --b 1   # c\n```\nsee `hbo-bench d`") == [
        ("hbo-bench a --b 1", True),
        ("hbo-bench d", False),
    ]


# -- paths that do not exist are errors (issue 37 item 8) -----------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["leaderboard", "--root", "{missing}", "list"], r"--root .*missing: no such directory"),
        (["leaderboard", "--root", "{missing}", "render"], r"--root .*missing: no such directory"),
        (["leaderboard", "--root", "{empty}", "list"], r"--root .*empty: no suite in it"),
        (["leaderboard", "--root", "{empty}", "render"], r"--root .*empty: no suite in it"),
        (["leaderboard", "--root", "{file}", "list"], r"--root .*a-file: no such directory"),
        (["archive", "status", "--archive", "{file}"], r"--archive .*a-file: not a directory"),
        (["archive", "render", "--archive", "{file}"], r"--archive .*a-file: not a directory"),
        (["archive", "build", "--archive", "{file}"], r"--archive .*a-file: not a directory"),
        (["archive", "status", "--archive", "{missing}"], r"--archive .*missing: no such direc"),
        (["archive", "verify", "--archive", "{missing}"], r"--archive .*missing: no such direc"),
        (["data", "list", "--root", "{missing}"], r"--root .*missing: no such directory"),
        (["archive", "status", "nope"], r"Unknown experiment 'nope'\. Known: .*cg2019-fig1a"),
        (["archive", "verify", "nope"], r"Unknown experiment 'nope'"),
        (["archive", "build", "cg2019-fig1a", "nope"], r"Unknown experiment 'nope'"),
    ],
)
def test_paths_and_names_that_do_not_exist_are_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("not a folder\n")
    where = {"missing": tmp_path / "missing", "empty": tmp_path / "empty"}
    where["file"] = tmp_path / "a-file"
    argv = [a.format(**where) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert re.search(r"^hbo-bench: error: " + message, err, re.M), err
    assert "Traceback" not in err and not (tmp_path / "missing").exists()


def test_leaderboards_doc_lists_every_suite_with_its_envs_and_horizons() -> None:
    """docs/leaderboards.md's table names exactly the suites of ``leaderboards/`` (each a folder
    with a suite.toml), each with every env id in order, the suite's horizon, and the horizon of
    each env that has its own."""
    import tomllib

    root = ROOT / "leaderboards"
    text = (ROOT / "docs" / "leaderboards.md").read_text(encoding="utf-8")
    row = r"^\| \[`([\w.-]+)`\]\(\.\./leaderboards/\1/README\.md\) \|.*$"
    rows = {m.group(1): m.group(0) for m in re.finditer(row, text, re.M)}
    suites = sorted(d.name for d in root.iterdir() if (d / "suite.toml").is_file())
    assert sorted(rows) == suites
    for sid, line in rows.items():
        toml = tomllib.loads((root / sid / "suite.toml").read_text(encoding="utf-8"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[2] == str(toml["suite"]["horizon"]), sid
        assert re.findall(r"`(hbo/[\w.-]+)`", cells[1]) == [e["id"] for e in toml["envs"]], sid
        for env in toml["envs"]:
            if "horizon" in env:  # "`id` (T = h)" or "`a`, `b` (T = h)" for a group
                group = re.search(rf"`{re.escape(env['id'])}`[^;|]*?\(T = (\d+)\)", cells[1])
                assert group and int(group.group(1)) == env["horizon"], (sid, env["id"])
