"""End-to-end tests of the ``hbo-bench`` command line, tiny budgets.

The commands run in this process through ``hbo_envs.cli.main(argv)`` (what the console
script calls: ``sys.exit(main())``), with stdout and stderr captured: what these tests
check is what the commands do and print and the status ``main`` returns, not process
start-up, and each fresh interpreter cost about a second of imports. What needs a real
process runs in one: the console script's entry point, the exit status of
``python -m hbo_envs.cli`` (:func:`test_usage_errors_exit_2`), and Ctrl-C (a real SIGINT).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from hbo_envs.cli import main
from hbo_envs.harness import COLUMNS, SUMMARY_COLUMNS

TESTS = Path(__file__).resolve().parent
ENV = "hbo/RKHS-SE-Spike-v0"
ENV_T = "hbo/RKHS-SE-StudentT-v0"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def hbo_bench(capsys: pytest.CaptureFixture[str]):
    """``hbo_bench(*args)``: ``hbo-bench args`` in this process, as :class:`Result` (the
    status ``main`` returns, or argparse's ``SystemExit`` code; what it printed).
    ``fixtures_agents`` imports from ``tests/`` (on ``sys.path`` here, and loky's workers
    start with this process's ``sys.path``)."""

    def run(*args: str) -> Result:
        capsys.readouterr()  # drop anything printed before
        try:
            rc = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            rc = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return Result(rc, out, err)

    return run


def hbo_bench_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m hbo_envs.cli args`` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "hbo_envs.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=300,
    )


def test_console_script_is_installed() -> None:
    from importlib.metadata import entry_points

    eps = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert eps.get("hbo-bench") == "hbo_envs.cli:main"


def test_run_summary_plot_schema(hbo_bench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hbo_bench(
        "run",
        "--env", ENV_T,
        "--env", ENV,
        "--agent", "fixtures_agents:GreedyMean",
        "--agent", "fixtures_agents:Uniform",
        "--seeds", "0-2",
        "--horizon", "700",
        "--out", str(out),
        "--workers", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "12 cell(s) run" in r.stdout and "greedy-mean" in r.stdout

    rec = pd.read_parquet(out / "records.parquet")
    assert list(rec.columns) == list(COLUMNS)
    assert rec.groupby(["env_id", "agent", "seed"]).ngroups == 12
    assert (rec.groupby(["env_id", "agent", "seed"])["t"].max() == 700).all()
    assert len(rec) < 12 * 700  # T = 700 > 500: down-sampled
    csv = pd.read_csv(out / "records.csv")
    assert list(csv.columns) == list(COLUMNS) and len(csv) == len(rec)
    summ = pd.read_csv(out / "summary.csv")
    assert list(summ.columns) == list(SUMMARY_COLUMNS) and len(summ) == 4
    assert (summ["n"] == 3).all() and (summ["failed"] == 0).all()
    # R_T in the summary is the mean of the exact final rows
    fin = rec[rec["t"] == 700].groupby(["env_id", "agent"])["regret"].mean()
    for _, row in summ.iterrows():
        assert row["R_T_mean"] == pytest.approx(fin[(row["env_id"], row["agent"])])

    meta = json.loads((out / "meta.json").read_text())
    for key in ("packages", "git", "envs", "agents", "seeds", "cells", "seeding", "command"):
        assert key in meta
    assert meta["seeds"] == [0, 1, 2]
    assert meta["packages"]["numpy"] and meta["packages"]["hbo-bench"]
    assert set(meta["envs"]) == {ENV, ENV_T}
    assert meta["agents"]["greedy-mean"]["source"] == "fixtures_agents:GreedyMean"
    assert len(list((out / "cells").glob("*.json"))) == 12
    assert (out / "cells" / "hbo_RKHS-SE-Spike-v0__greedy-mean__1.parquet").exists()

    s = hbo_bench("summary", str(out))
    assert s.returncode == 0 and "R_T mean [95% CI]" in s.stdout and "uniform" in s.stdout
    s = hbo_bench("summary", str(out), "--format", "csv")
    assert s.stdout.splitlines()[0].split(",") == list(SUMMARY_COLUMNS)

    p = hbo_bench("plot", str(out), "--format", "png", "svg")
    assert p.returncode == 0, p.stderr
    png, svg = out / "regret.png", out / "regret.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "<svg" in svg.read_text()[:2000]


def test_resume_skips_finished_cells(hbo_bench, tmp_path: Path, monkeypatch) -> None:
    counter = tmp_path / "resets.txt"
    args = [
        "run", "--env", ENV, "--agent", "fixtures_agents:CountingUniform",
        "--seeds", "0-3", "--horizon", "50", "--out", str(tmp_path / "out"), "--workers", "1",
    ]  # fmt: skip
    monkeypatch.setenv("HBO_TEST_COUNTER", str(counter))
    r1 = hbo_bench(*args)
    assert r1.returncode == 0, r1.stderr
    assert len(counter.read_text().split()) == 1 + 4  # one validation reset + 4 cells
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "out" / "cells").iterdir()}
    time.sleep(0.01)
    r2 = hbo_bench(*args)
    assert r2.returncode == 0 and "0 cell(s) run, 4 already finished" in r2.stdout
    assert len(counter.read_text().split()) == 1 + 4  # no agent was reset again
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "out" / "cells").iterdir()} == mtimes
    # a partially finished sweep: delete one cell, only it runs again
    next((tmp_path / "out" / "cells").glob("*__2.json")).unlink()
    r3 = hbo_bench(*args)
    assert "1 cell(s) run, 3 already finished" in r3.stdout
    assert len(counter.read_text().split()) == 1 + 4 + 1 + 1


def test_failing_third_party_agent_fails_only_its_cells(hbo_bench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hbo_bench(
        "run", "--env", ENV,
        "--agent", "fixtures_agents:FailingAgent[fail_at=7]",
        "--agent", "fixtures_agents:GreedyMean",
        "--seeds", "0-2", "--horizon", "40", "--out", str(out), "--workers", "2",
    )  # fmt: skip
    assert r.returncode == 1
    assert "3 cell(s) FAILED" in r.stderr and "deliberate failure at round 7" in r.stderr
    summ = pd.read_csv(out / "summary.csv").set_index("agent")
    assert summ.loc["greedy-mean", "n"] == 3 and summ.loc["greedy-mean", "failed"] == 0
    assert summ.loc["failing[fail_at=7]", "n"] == 0
    assert summ.loc["failing[fail_at=7]", "failed"] == 3
    st = json.loads(
        (out / "cells" / "hbo_RKHS-SE-Spike-v0__failing[fail_at=7]__0.json").read_text()
    )
    assert st["status"] == "failed" and "Traceback" in st["traceback"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["cells"]["failed"] == 3 and len(meta["failures"]) == 3


def test_usage_errors_exit_2(hbo_bench, tmp_path: Path) -> None:
    # the first in a real process: the status main returns is the process's exit status
    r = hbo_bench_process(
        "run", "--env", "hbo/Nope-v0", "--agent", "fixtures_agents:Uniform", "--out", str(tmp_path)
    )  # fmt: skip
    assert r.returncode == 2 and "not registered" in r.stderr
    r = hbo_bench("run", "--env", ENV, "--agent", "no_such_mod:Y", "--out", str(tmp_path))
    assert r.returncode == 2 and "cannot be imported" in r.stderr
    r = hbo_bench("reproduce", "no-such-experiment")
    assert r.returncode == 2 and "Unknown experiment" in r.stderr
    r = hbo_bench("summary", str(tmp_path / "missing"))
    assert r.returncode == 2


def test_reproduce_list_and_tiny_reproduction(hbo_bench, tmp_path: Path) -> None:
    pytest.importorskip("agents")
    r = hbo_bench("reproduce", "--list")
    assert r.returncode == 0 and "cg2019-fig1a" in r.stdout and "pl2024-table1" in r.stdout
    out = tmp_path / "fig1f"
    r = hbo_bench(
        "reproduce", "cg2019-fig1f", "--quick", "--n-seeds", "2", "--horizon", "150",
        "--out", str(out), "--workers", "1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "gp-ucb[beta=ln t]" in r.stdout and "tgp-ucb[b=t^1/4,beta=ln t]" in r.stdout
    assert (out / "regret.png").exists() and (out / "confidence.png").exists()
    assert (out / "regret_std.png").exists()  # two seeds: the papers' band (mean +- 1 std)
    assert "regret_std: not drawn" not in r.stdout
    snaps = pd.read_parquet(out / "snapshots.parquet")
    assert set(snaps.columns) >= {"agent", "seed", "point", "x", "f", "estimate", "width"}
    # envs (sign per sample, per run) x agents (two and the random floor) x seeds x points
    assert len(snaps) == 2 * 3 * 2 * 100
    assert set(snaps["agent"]) >= {"random"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["experiment"]["name"] == "cg2019-fig1f" and meta["experiment"]["quick"]
    summary = json.loads((out / "summary.json").read_text())
    from hbo_envs.judging.experiments import EXPERIMENTS

    n_claims = len(EXPERIMENTS["cg2019-fig1f"].claims)
    assert len(summary["verdicts"]) >= n_claims  # one verdict per claim and env at least
    for v in summary["verdicts"]:
        assert v["verdict"] in r.stdout and v["claim"] in r.stdout
    assert "The paper's claims, with the measured verdicts" in r.stdout


def test_ctrl_c_keeps_finished_cells_and_resumes(hbo_bench, tmp_path: Path) -> None:
    import signal

    out = tmp_path / "out"
    args = [
        sys.executable, "-m", "hbo_envs.cli", "run", "--env", ENV,
        "--agent", "fixtures_agents:SleepyUniform[sleep=0.15]", "--seeds", "0-9",
        "--horizon", "20", "--out", str(out), "--workers", "1",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    # A test run started in the background of a non-interactive shell inherits SIGINT
    # ignored, and Python then never installs its KeyboardInterrupt handler: give the CLI
    # the default disposition, as a terminal would.
    proc = subprocess.Popen(
        args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    deadline = time.time() + 120
    while time.time() < deadline and len(list(out.glob("cells/*.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    done = len(list(out.glob("cells/*.json")))
    assert 2 <= done < 10
    assert not list(out.glob("cells/.*.tmp"))  # no half-written files
    r = hbo_bench(*args[3:], "--no-progress")
    assert r.returncode == 0
    assert f"{10 - done} cell(s) run, {done} already finished" in r.stdout


def _loaded_in_a_fresh_interpreter(statements: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` are imported after ``statements`` run in a new interpreter."""
    code = f"import sys\n{statements}\nprint([m for m in {modules!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip())


def test_the_parser_loads_no_command_package() -> None:
    """``hbo-bench``'s parser defines every subcommand itself, so ``hbo-bench --help``,
    ``list`` and a usage error load none of the packages behind the commands (the eager
    ``hbo_envs.leaderboard``, the archive, the harness, pandas, scipy.stats, and, since the
    ``data`` subcommand comes from the lazy ``data_scripts``, not its loaders either):
    1.43 -> 0.6 CPU-s. The commands still parse to their handlers."""
    heavy = ("pandas", "scipy.stats", "hbo_envs.leaderboard", "hbo_envs.harness")
    heavy += ("hbo_envs.judging.archive", "hbo_envs.data.loaders", "data_scripts._common")
    build = "from hbo_envs.cli import _parser; _parser()"
    assert _loaded_in_a_fresh_interpreter(build, heavy) == []
    from hbo_envs.cli import _parser

    a = _parser().parse_args(["leaderboard", "verify", "x.json", "--memory-mb", "512"])
    assert (a.lb_command, a.memory_mb, a.hidden_seeds) == ("verify", 512, 4)
    a = _parser().parse_args(["archive", "build", "--workers", "2", "--backend", "ray"])
    assert (a.archive_command, a.workers, a.backend, a.batch) == ("build", 2, "ray", 40)


def test_the_harness_imports_no_data_loaders() -> None:
    """``hbo_envs.data`` and ``data_scripts`` export lazily (PEP 562): importing the harness
    (its runner asks only ``hbo_envs.data.require``) no longer loads the data loaders and
    statistics, and with them scipy.stats (``import hbo_envs.harness``: 1.35 -> 0.87 CPU-s)."""
    loaders = ("scipy.stats", "hbo_envs.data.loaders", "hbo_envs.data.stats")
    assert _loaded_in_a_fresh_interpreter("import hbo_envs.harness", loaders) == []
    # and the lazy names still resolve where they are used
    from data_scripts import FetchError
    from hbo_envs.data import DATASETS, ks_gaussian

    assert FetchError.__module__ == "data_scripts._common" and "stocks29" in DATASETS
    assert ks_gaussian.__module__ == "hbo_envs.data.stats"
    # the names type checkers see (the TYPE_CHECKING imports) are the lazy exports
    import hbo_envs.data as data

    tree = ast.parse(Path(data.__file__).read_text())
    typed = {
        (alias.name, imp.module)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for imp in node.body
        if isinstance(imp, ast.ImportFrom)
        for alias in imp.names
    }
    assert typed == set(data._WHERE.items()) and set(data._WHERE) == set(data.__all__)
