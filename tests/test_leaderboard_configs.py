"""Leaderboard references in both configurations (issue 35 item 6): every reference agent is
ranked as published (``paper``) and ``tuned``, beside the random floor; the tuned reference is
the suite's own computation like any other (verified, gated, caught when edited); ``baselines``
skips references whose stored file is current.

A tiny suite (one env, T = 60, 6 public seeds) in a temporary folder holds three references:
``random`` (the floor), ``gp-ucb`` and ``gp-ucb-tuned``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents.configs import config_params
from hbo_envs.cli import main
from hbo_envs.harness.runner import evaluate
from hbo_envs.leaderboard import load_suite, write_submission
from hbo_envs.leaderboard.entries import collect_entries, reference_file
from hbo_envs.leaderboard.render import render_suite
from hbo_envs.leaderboard.submission import aggregates, content_sha256, load_submission
from hbo_envs.leaderboard.suite import Reference, SuiteError
from hbo_envs.leaderboard.verify import (
    gate,
    make_reference,
    record_sha256,
    record_status,
    reference_current,
)

ROOT = Path(__file__).resolve().parents[1]
ENV = "hbo/RKHS-SE-StudentT-v0"
SEEDS = (0, 1, 2, 3, 4, 5)
T = 60
HIDDEN = 7  # the fewest hidden seeds a 6-seed suite accepts

TINY = f"""
[suite]
name = "tiny"
version = 0
title = "Tiny test suite"
description = "One env, T = {T}."
horizon = {T}
seeds = {list(SEEDS)}
checkpoints = 8

[aggregation]
bootstrap_reps = 200

[baselines]
agents = ["gp-ucb", "random"]
{{configs}}

[[envs]]
id = "{ENV}"
"""

BOARD = pytest.mark.xdist_group("tiny_config_board")


def _suite_toml(configs: str = "") -> str:
    return TINY.replace("{configs}", configs)


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The three references of the tiny suite, computed by the suite itself."""
    root = tmp_path_factory.mktemp("boards")
    (root / "tiny-v0").mkdir()
    (root / "tiny-v0" / "suite.toml").write_text(_suite_toml())
    suite = load_suite("tiny-v0", root)
    folder = root / "tiny-v0" / "submissions"
    subs = {}
    for ref in suite.references():
        sub, rep = make_reference(suite, ref.name, config=ref.config, hidden=HIDDEN)
        assert rep.status == "verified", str(rep)
        write_submission(folder / ref.file, sub)
        subs[ref.file] = sub
    render_suite(suite)
    return {"root": root, "suite": suite, "folder": folder, "subs": subs}


def _copy(board: dict[str, Any], tmp_path: Path) -> tuple[Any, Path]:
    root = tmp_path / "b"
    shutil.copytree(board["root"], root)
    return load_suite("tiny-v0", root), root / "tiny-v0" / "submissions"


# -- the suite's option ------------------------------------------------------------------------
def test_configs_default_to_both_and_random_is_only_the_floor(tmp_path: Path) -> None:
    (tmp_path / "tiny-v0").mkdir()
    (tmp_path / "tiny-v0" / "suite.toml").write_text(_suite_toml())
    suite = load_suite("tiny-v0", tmp_path)
    assert suite.baseline_configs == ("paper", "tuned")
    assert [(r.name, r.config) for r in suite.references()] == [
        ("gp-ucb", "paper"),
        ("gp-ucb", "tuned"),
        ("random", "paper"),
    ]
    (tmp_path / "tiny-v0" / "suite.toml").write_text(_suite_toml('configs = ["paper"]'))
    paper_only = load_suite("tiny-v0", tmp_path)
    assert [r.file for r in paper_only.references()] == [
        "baseline-gp-ucb.json",
        "baseline-random.json",
    ]
    # which configurations are ranked does not change any number: not in the definition hash
    assert paper_only.sha256 == suite.sha256


@pytest.mark.parametrize(
    "configs",
    ['configs = ["tuned", "tuned"]', 'configs = ["best"]', "configs = []", 'configs = "tuned"'],
)
def test_bad_configs_are_refused_naming_the_parameter(tmp_path: Path, configs: str) -> None:
    (tmp_path / "tiny-v0").mkdir()
    (tmp_path / "tiny-v0" / "suite.toml").write_text(_suite_toml(configs))
    with pytest.raises(SuiteError, match=r"'configs' parameter .* must be a non-empty list"):
        load_suite("tiny-v0", tmp_path)


def test_every_committed_suite_ranks_both_configurations_of_every_reference() -> None:
    from hbo_envs.leaderboard.suite import list_suites

    for sid in list_suites(ROOT / "leaderboards"):
        suite = load_suite(sid, ROOT / "leaderboards")
        assert suite.baseline_configs == ("paper", "tuned"), sid
        refs = suite.references()
        names, _ = suite.baseline_names()
        for n in names:
            want = {"paper"} if n == "random" else {"paper", "tuned"}
            assert {r.config for r in refs if r.name == n} == want, (sid, n)


# -- the tuned reference is the suite's own computation ----------------------------------------
@BOARD
def test_tuned_reference_runs_the_tuned_configuration(board: dict[str, Any]) -> None:
    tuned = board["subs"]["baseline-gp-ucb-tuned.json"]
    paper = board["subs"]["baseline-gp-ucb.json"]
    want = config_params("gp-ucb", "tuned")
    assert want and tuned["agent"]["params"] == want and paper["agent"]["params"] == {}
    assert tuned["agent"]["display_name"] == "gp-ucb-tuned"
    assert (tuned["agent"]["config"], paper["agent"]["config"]) == ("tuned", "paper")
    # the provenance: the tuning evidence file its parameters come from, by path and hash
    evidence = ROOT / "agents" / "configs" / "tuned" / "gp-ucb.json"
    assert tuned["agent"]["config_record"] == {
        "path": "agents/configs/tuned/gp-ucb.json",
        "sha256": hashlib.sha256(evidence.read_bytes()).hexdigest(),
    }
    assert "config_record" not in paper["agent"]
    assert tuned["verification"]["verifier"]["config"] == "tuned"
    # the suite's numbers are the harness's run of `gp-ucb[config=tuned]`, bit for bit
    df = evaluate(
        "gp-ucb", ENV, seeds=list(SEEDS), horizon=T, workers=1, agent_params={"config": "tuned"}
    )
    last = df[df["t"] == T].sort_values("seed")
    got = [r["final_regret"] for r in sorted(tuned["results"], key=lambda r: r["seed"])]
    assert got == last["regret"].tolist()
    # and differ from the paper configuration's (the tuned beta plays other arms)
    assert got != [r["final_regret"] for r in sorted(paper["results"], key=lambda r: r["seed"])]


@BOARD
def test_both_rows_and_the_floor_are_ranked_and_told_apart(board: dict[str, Any]) -> None:
    suite = board["suite"]
    entries, notes = collect_entries(suite)
    assert not notes, notes
    by = {e.file: e for e in entries}
    assert set(by) == {"baseline-gp-ucb.json", "baseline-gp-ucb-tuned.json", "baseline-random.json"}
    assert (by["baseline-gp-ucb.json"].config, by["baseline-gp-ucb-tuned.json"].config) == (
        "paper",
        "tuned",
    )
    assert by["baseline-gp-ucb-tuned.json"].reference == "gp-ucb"
    assert by["baseline-random.json"].is_random and by["baseline-random.json"].score == 0.0
    folder = suite.folder
    # README.md: a config column, one row per reference and configuration, and the floor
    readme = (folder / "README.md").read_text()
    assert "| # | agent | config | score [CI] |" in readme
    rows = {
        line.split("|")[2].strip(): line.split("|")[3].strip()
        for line in readme.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().lstrip("=").isdigit()
    }
    assert rows == {"`gp-ucb`": "paper", "`gp-ucb-tuned`": "tuned", "`random`": "floor"}
    # results.csv: every run carries its configuration
    runs = list(csv.DictReader(io.StringIO((folder / "results.csv").read_text())))
    configs = {(r["agent"], r["config"]) for r in runs}
    assert configs == {("gp-ucb", "paper"), ("gp-ucb-tuned", "tuned"), ("random", "floor")}
    assert len(runs) == 3 * len(SEEDS)
    # summary.json: every ranked row with its configuration, in rank order
    summary = json.loads((folder / "summary.json").read_text())
    assert [(r["agent"], r["config"]) for r in summary["rows"]] == [
        (e.name, "floor" if e.is_random else e.config) for e in entries
    ]
    assert summary["leader_config"] == summary["rows"][0]["config"]
    # index.html: the config column of the ranking table
    page = (folder / "index.html").read_text()
    assert '<td class="l config" data-sort="tuned">tuned</td>' in page
    assert '<td class="l config" data-sort="floor">floor</td>' in page
    # the tuned entry's page names its tuning evidence and how to check it
    entry = (folder / "entries" / "baseline-gp-ucb-tuned.html").read_text()
    assert 'agents/<wbr>configs/<wbr>tuned/<wbr><span class="nw">gp-ucb.</span><wbr>json' in entry
    sha = board["subs"]["baseline-gp-ucb-tuned.json"]["agent"]["config_record"]["sha256"]
    assert sha in entry and "tuning evidence" in entry
    assert "tuning evidence" not in (folder / "entries" / "baseline-gp-ucb.html").read_text()


@BOARD
def test_a_tuned_reference_with_other_parameters_is_not_ranked(
    board: dict[str, Any], tmp_path: Path
) -> None:
    """The tuned file must run exactly the stored tuned parameters: the paper reference
    verified under the tuned file's name (a genuine, sealed record) is left out."""
    suite, folder = _copy(board, tmp_path)
    (folder / "baseline-gp-ucb-tuned.json").write_text(
        (folder / "baseline-gp-ucb.json").read_text()
    )
    entries, notes = collect_entries(suite)
    assert "baseline-gp-ucb-tuned.json" not in {e.file for e in entries}
    assert any(n.startswith("baseline-gp-ucb-tuned.json: not ranked") for n in notes), notes


def _halve(sub: dict[str, Any], suite: Any) -> None:
    for r in sub["results"]:
        r["final_regret"] *= 0.5
        r["final_avg_regret"] = r["final_regret"] / T
        r["checkpoints"]["regret"] = [v * 0.5 for v in r["checkpoints"]["regret"]]
    sub["aggregates"] = aggregates(suite, sub["results"])


@BOARD
def test_edited_tuned_numbers_are_caught_like_any_other(
    board: dict[str, Any], tmp_path: Path
) -> None:
    """Halve the tuned reference's stored regrets: unsealed, the record is stale and not
    ranked; resealed (file and record), render (when its own hidden-seed numbers contradict
    it) or else CI's gate (a full re-run) rejects it, so it cannot land."""
    suite, folder = _copy(board, tmp_path)
    f = folder / "baseline-gp-ucb-tuned.json"
    sub = json.loads(f.read_text())
    _halve(sub, suite)
    f.write_text(json.dumps(sub))
    entries, notes = collect_entries(suite)
    assert f.name not in {e.file for e in entries}
    assert any(n.startswith(f"{f.name}: not ranked: stale") for n in notes), notes
    assert reference_current(suite, Reference("gp-ucb", "tuned"), sub) is not None
    # the gate passes an untouched tuned reference: its record is the suite's re-run
    ok, msgs = gate([board["folder"] / f.name], hidden=HIDDEN, root=board["root"], workers=2)
    assert ok, msgs
    # reseal file and record with the halved numbers
    _halve(sub["verification"], suite)
    sub["verification"]["submission_sha256"] = content_sha256(sub)
    sub["verification"]["record_sha256"] = record_sha256(sub["verification"])
    f.write_text(json.dumps(sub))
    status, _, why = record_status(sub, suite)
    if status == "verified":
        for mode in ("full", "public"):
            ok, msgs = gate([f], hidden=HIDDEN, root=folder.parents[1], workers=2, references=mode)
            assert not ok and "NOT REPRODUCED" in "\n".join(msgs), (mode, msgs)
    else:  # its own hidden-seed numbers contradict the halved public ones
        assert status == "stale" and "hidden" in why, why
        assert f.name not in {e.file for e in collect_entries(suite)[0]}


@BOARD
def test_gate_of_references_on_public_seeds_reruns_every_ranked_number(
    board: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``references="public"`` re-runs a reference on every public seed (no hidden draw);
    a file that is not one of the suite's references is still re-verified in full."""
    import importlib

    # (the package's `verify` is the function: take the module from the import system)
    V = importlib.import_module("hbo_envs.leaderboard.verify")
    ran: list[int] = []
    real = V.rerun_cells

    def counting(*args: Any, **kw: Any) -> Any:
        ran.append(len(args[2]))
        return real(*args, **kw)

    monkeypatch.setattr(V, "rerun_cells", counting)
    f = board["folder"] / "baseline-gp-ucb-tuned.json"
    ok, msgs = gate([f], hidden=HIDDEN, root=board["root"], references="public")
    assert ok and "a reference: all public seeds" in msgs[0], msgs
    assert ran == [len(SEEDS)]
    ran.clear()
    ok, _ = gate([f], hidden=HIDDEN, root=board["root"], references="full")
    assert ok and ran[0] == len(SEEDS) + HIDDEN
    # the same record under a submitter's file name is re-verified in full
    _, folder = _copy(board, tmp_path)
    other = folder / "my-gp-ucb.json"
    shutil.copy(folder / f.name, other)
    ran.clear()
    gate([other], hidden=HIDDEN, root=folder.parents[1], references="public")
    assert ran and ran[0] == len(SEEDS) + HIDDEN
    # one cell off by 1e-6 from its first checkpoint (resealed): rejected on public seeds
    sub = json.loads((folder / f.name).read_text())
    for block in (sub, sub["verification"]):
        r = next(r for r in block["results"] if r["seed"] == SEEDS[-1])
        r["checkpoints"]["regret"] = [v * (1 + 1e-6) for v in r["checkpoints"]["regret"]]
        r["final_regret"] = r["checkpoints"]["regret"][-1]
        r["final_avg_regret"] = r["final_regret"] / T
        block["aggregates"] = aggregates(load_suite("tiny-v0", folder.parents[1]), block["results"])
    del sub["verification"]["aggregates"]
    sub["verification"]["submission_sha256"] = content_sha256(sub)
    sub["verification"]["record_sha256"] = record_sha256(sub["verification"])
    (folder / f.name).write_text(json.dumps(sub))
    assert record_status(sub, load_suite("tiny-v0", folder.parents[1]))[0] == "verified"
    ok, msgs = gate([folder / f.name], hidden=HIDDEN, root=folder.parents[1], references="public")
    assert not ok and "NOT REPRODUCED on 1 of 6" in "\n".join(msgs), msgs
    with pytest.raises(ValueError, match="'references' parameter of gate"):
        gate([f], references="none")


# -- computing only what is new ----------------------------------------------------------------
@BOARD
def test_reference_current_says_why_a_reference_must_be_recomputed(
    board: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = board["suite"]
    subs = board["subs"]
    for ref in suite.references():
        assert reference_current(suite, ref, subs[ref.file]) is None, ref
    tuned = Reference("gp-ucb", "tuned")
    assert reference_current(suite, tuned, None) == "no file yet"
    # the paper file is not the tuned reference
    assert "parameters" in str(reference_current(suite, tuned, subs["baseline-gp-ucb.json"]))
    # a new tuning choice makes the stored tuned reference out of date (only it)
    import agents.configs

    real = agents.configs.config_params

    def retuned(name: str, config: str) -> dict[str, Any]:
        out = real(name, config)
        return {**out, "beta": 2 * out["beta"]} if config == "tuned" else out

    monkeypatch.setattr(agents.configs, "config_params", retuned)
    why = reference_current(suite, tuned, subs["baseline-gp-ucb-tuned.json"])
    assert why is not None and "tuned configuration" in why
    assert reference_current(suite, Reference("gp-ucb"), subs["baseline-gp-ucb.json"]) is None
    monkeypatch.undo()
    # another suite definition (a horizon) makes every reference stale
    other, _ = _copy(board, tmp_path)
    toml = other.folder / "suite.toml"
    toml.write_text(toml.read_text().replace(f"horizon = {T}", f"horizon = {T + 1}"))
    changed = load_suite("tiny-v0", other.folder.parent)
    assert all(
        reference_current(changed, r, subs[r.file]) is not None for r in changed.references()
    )


@BOARD
def test_a_changed_source_file_makes_exactly_its_dependents_out_of_date(
    board: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GP engine is not gp_ucb.py: the record's module hash would not see it changed,
    the recorded source closure does (and the random floor does not depend on it)."""
    import hbo_envs.harness.sources as src

    suite, subs = board["suite"], board["subs"]
    real = src.module_file_sha256
    monkeypatch.setattr(
        src, "module_file_sha256", lambda m: "0" * 64 if m == "agents.gp.engine" else real(m)
    )
    for ref in (Reference("gp-ucb"), Reference("gp-ucb", "tuned")):
        why = reference_current(suite, ref, subs[ref.file])
        assert why == "source changed since it was computed: agents.gp.engine", why
    assert reference_current(suite, Reference("random"), subs["baseline-random.json"]) is None
    monkeypatch.undo()
    # a record made before the sources were recorded is recomputed
    old = json.loads(json.dumps(subs["baseline-random.json"]))
    del old["verification"]["verifier"]["sources"]
    old["verification"]["record_sha256"] = record_sha256(old["verification"])
    assert record_status(old, suite)[0] == "verified"
    assert "older record" in str(reference_current(suite, Reference("random"), old))


@BOARD
def test_baselines_cli_skips_current_references_unless_forced(
    board: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, folder = _copy(board, tmp_path)
    root = str(folder.parents[1])
    f = folder / reference_file("gp-ucb", "tuned")
    before = f.read_bytes()
    (folder / "baseline-gp-ucb.json").unlink()
    args = ["leaderboard", "--root", root, "baselines", "tiny-v0", "--hidden-seeds", "7"]
    assert main([*args, "--agent", "gp-ucb"]) == 0
    out = capsys.readouterr().out
    assert "gp-ucb [tuned]: current, skipped" in out
    assert "gp-ucb [paper]: to compute: no file yet" in out
    assert f.read_bytes() == before  # not recomputed
    paper = load_submission(folder / "baseline-gp-ucb.json")
    assert reference_current(suite, Reference("gp-ucb"), paper) is None
    # the recomputed paper reference holds the same public numbers (fresh hidden seeds)
    assert paper["results"] == board["subs"]["baseline-gp-ucb.json"]["results"]
    assert main([*args, "--config", "tuned", "--force"]) == 0
    out = capsys.readouterr().out
    assert "gp-ucb [tuned]: verified" in out and "[paper]" not in out
    again = load_submission(f)
    assert again["results"] == board["subs"][f.name]["results"]
    assert (
        again["verification"]["hidden_seeds"]
        != board["subs"][f.name]["verification"]["hidden_seeds"]
    )


def test_results_differ_between_configurations_only_through_params() -> None:
    """The reference's params are the configuration's: ``Class(**params)`` in the sandbox
    builds the same agent as ``agents.make(name, config=...)``."""
    for name in ("gp-ucb", "tgp-ucb", "mom-gp-ucb"):
        ref = Reference(name, "tuned")
        cls = agents.registry.resolve(name)
        a, b = cls(**ref.params()), agents.make(name, config="tuned")
        assert {k: getattr(a, k) for k in ref.params()} == {k: getattr(b, k) for k in ref.params()}
        assert np.isfinite(list(ref.params().values())).all()
