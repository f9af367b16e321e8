"""Leaderboards: suites, submission schema, validate (tampering), verify (re-runs), render.

A tiny suite (2 envs, T = 60, 6 seeds) in a temporary folder carries the end-to-end tests;
the committed ``leaderboards/`` is checked for valid, verified baselines and an up-to-date
render.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agents
from hbo_envs.cli import main
from hbo_envs.harness.specs import agent_seed
from hbo_envs.leaderboard import load_suite, submit, validate, verify, write_submission
from hbo_envs.leaderboard.aggregate import mean_ranks, per_env_aggregate
from hbo_envs.leaderboard.render import collect_entries, render_all, render_suite
from hbo_envs.leaderboard.submission import aggregates, content_sha256
from hbo_envs.leaderboard.suite import SuiteError, list_suites

ROOT = Path(__file__).resolve().parents[1]
BOARDS = ROOT / "leaderboards"
ENVS = ("hbo/RKHS-SE-StudentT-v0", "hbo/Griewank2D-SymPareto-eps08-v0")
SEEDS = (0, 1, 2, 3, 4, 5)
T = 60

TINY = f"""
[suite]
name = "tiny"
version = 0
title = "Tiny test suite"
description = "Two envs, T = {T}."
horizon = {T}
seeds = {list(SEEDS)}
checkpoints = 8

[aggregation]
confidence = 0.95
bootstrap_reps = 200
bootstrap_seed = 0

[[envs]]
id = "{ENVS[0]}"

[[envs]]
id = "{ENVS[1]}"
kwargs = {{}}
"""


# -- third-party agents (a genuine submitter's code, importable as test_leaderboard:...) -------
class KernelUCB:
    """Naive kernel UCB from the problem's kernel matrix (a plausible third-party agent):
    ``mu = k_t^T (K_t + lam I)^{-1} y``, ``sd^2 = k(x,x) - k_t^T (K_t + lam I)^{-1} k_t``, play
    ``argmax mu + c sd`` (first round: a random arm from the seeded generator)."""

    name = "kernel-ucb"

    def __init__(self, c: float = 1.0, lam: float = 1.0) -> None:
        self.c, self.lam = c, lam

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.K = np.asarray(problem.kernel_matrix)
        self.n = problem.n
        self.x: list[int] = []
        self.y: list[float] = []

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.x:
            return np.zeros(self.n), self.c * np.sqrt(np.diag(self.K))
        kt = self.K[:, self.x]
        A = self.K[np.ix_(self.x, self.x)] + self.lam * np.eye(len(self.x))
        mu = kt @ np.linalg.solve(A, np.asarray(self.y))
        var = np.diag(self.K) - np.einsum("ij,ji->i", kt, np.linalg.solve(A, kt.T))
        return mu, self.c * np.sqrt(np.maximum(var, 0.0))

    def act(self) -> int:
        if not self.x:
            return int(self.rng.integers(self.n))
        mu, w = self.posterior()
        return int(np.argmax(mu + w))

    def update(self, action: int, reward: float) -> None:
        self.x.append(int(action))
        self.y.append(float(reward))


class FirstArm:
    """Always plays arm 0 (typically worse than uniform play)."""

    name = "first-arm"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        pass

    def act(self) -> int:
        return 0

    def update(self, action: int, reward: float) -> None:
        pass


class Unseeded(KernelUCB):
    """Ignores its seed: cannot reproduce its own results."""

    name = "unseeded"

    def act(self) -> int:
        mu, w = self.posterior()
        noise = np.random.default_rng().normal(scale=0.5, size=self.n)  # unseeded!
        return int(np.argmax(mu + w + noise))


#: (problem name, agent seed) -> optimal arm, for the public seeds only (filled by a fixture)
ORACLE: dict[tuple[str, int], int] = {}


class PublicSeedOracle:
    """Plays the optimum on the public seeds it memorized, arm 0 elsewhere (a cheat)."""

    name = "public-seed-oracle"

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.arm = ORACLE.get((problem.name, int(seed or 0)), 0)

    def act(self) -> int:
        return self.arm

    def update(self, action: int, reward: float) -> None:
        pass


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny leaderboard with three genuine submissions: random, kernel-ucb, first-arm."""
    root = tmp_path_factory.mktemp("boards")
    (root / "tiny-v0").mkdir()
    (root / "tiny-v0" / "suite.toml").write_text(TINY)
    suite = load_suite("tiny-v0", root)
    subs = {}
    for agent, name in (
        ("random", None),
        ("test_leaderboard:KernelUCB", "kernel-ucb"),
        ("test_leaderboard:FirstArm", "first-arm"),
    ):
        sub = submit(suite, agent, display_name=name, workers=1, progress=False)
        subs[sub["agent"]["display_name"]] = sub
        write_submission(
            root / "tiny-v0" / "submissions" / f"{sub['agent']['display_name']}.json", sub
        )
    return {"root": root, "suite": suite, "subs": subs}


def _fresh(sub: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(sub)


# -- suites -----------------------------------------------------------------------------------
def test_repo_suites_parse_and_unavailable_suites_are_reported_not_raised() -> None:
    ids = list_suites(BOARDS)
    assert {"heavy-tailed-v0", "corrupted-v0", "real-data-v0"} <= set(ids)
    ht = load_suite("heavy-tailed-v0", BOARDS)
    assert ht.unavailable_reason() is None
    assert all(e.startswith("hbo/") and re.search(r"-v\d+$", e) for e in ht.env_ids)
    for sid in ("corrupted-v0", "real-data-v0"):
        s = load_suite(sid, BOARDS)
        for env_id, why in s.availability().items():  # never raises, whatever is installed
            if env_id not in gym.registry:
                assert "not registered" in why


def test_unknown_suite_and_bad_suite_file(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="Unknown suite 'nope-v0'.*heavy-tailed-v0"):
        load_suite("nope-v0", BOARDS)
    (tmp_path / "x-v0").mkdir()
    (tmp_path / "x-v0" / "suite.toml").write_text(
        TINY.replace('name = "tiny"', 'name = "x"').replace("seeds = [0,", "seeds = [1, 1,")
    )
    with pytest.raises(SuiteError, match="lists a seed twice"):
        load_suite("x-v0", tmp_path)
    (tmp_path / "y-v0").mkdir()
    (tmp_path / "y-v0" / "suite.toml").write_text(TINY)
    with pytest.raises(SuiteError, match="must equal its folder name"):
        load_suite("y-v0", tmp_path)


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("confidence = 0.95", "confidence = 1.5", "confidence"),
        ("bootstrap_reps = 200", "bootstrap_reps = 0", "bootstrap_reps"),
        ("bootstrap_seed = 0", "bootstrap_seed = -1", "bootstrap_seed"),
        ("checkpoints = 8", "checkpoints = 0", "checkpoints"),
        ("checkpoints = 8", 'checkpoints = "8"', "checkpoints"),
    ],
)
def test_bad_aggregation_settings_are_refused_when_the_suite_loads(
    tmp_path: Path, old: str, new: str, name: str
) -> None:
    (tmp_path / "tiny-v0").mkdir()
    assert old in TINY
    (tmp_path / "tiny-v0" / "suite.toml").write_text(TINY.replace(old, new))
    with pytest.raises(SuiteError, match=f"'{name}' parameter"):
        load_suite("tiny-v0", tmp_path)


def test_unavailable_suite_is_refused_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "tiny-v0").mkdir()
    (tmp_path / "tiny-v0" / "suite.toml").write_text(
        TINY.replace(ENVS[1], "hbo/Corrupted-Nowhere-v0")
    )
    suite = load_suite("tiny-v0", tmp_path)
    assert "not registered" in suite.availability()["hbo/Corrupted-Nowhere-v0"]
    with pytest.raises(SuiteError, match="unavailable here: hbo/Corrupted-Nowhere-v0"):
        submit(suite, "random", workers=1)
    # rendering a suite with no submissions works (a page that says so)
    render_suite(suite)
    assert "No submissions yet" in (tmp_path / "tiny-v0" / "README.md").read_text()
    assert main(["leaderboard", "--root", str(tmp_path), "baselines", "tiny-v0"]) == 2


# -- aggregates -------------------------------------------------------------------------------
def test_aggregates_against_hand_computation() -> None:
    x = [5.0, 1.0, 3.0, 100.0, 2.0, 4.0, 6.0, 0.0]
    a = per_env_aggregate(x, horizon=10, reps=500)
    assert a["iqm"] == pytest.approx(np.mean([2.0, 3.0, 4.0, 5.0]))  # drop 2 from each end
    assert a["avg_iqm"] == pytest.approx(0.35)
    assert a["ci_low"] <= a["iqm"] <= a["ci_high"]
    ranks = mean_ranks({"a": {"e1": 1.0, "e2": 5.0}, "b": {"e1": 2.0, "e2": 5.0}})
    assert ranks == {"a": 1.25, "b": 1.75}


# -- submit -> validate -> verify -> render ---------------------------------------------------
def test_genuine_submissions_validate(board: dict[str, Any]) -> None:
    for sub in board["subs"].values():
        rep = validate(sub, suite=board["suite"])
        assert rep.ok, str(rep)
    s = board["subs"]["kernel-ucb"]
    assert s["agent"]["import_path"] == "test_leaderboard:KernelUCB"
    assert re.fullmatch(r"[0-9a-f]{64}", s["agent"]["code"]["source_sha256"])
    assert {(r["env_id"], r["seed"]) for r in s["results"]} == {(e, x) for e in ENVS for x in SEEDS}
    # the curve is R_t: the last checkpoint is T and R_T
    r = s["results"][0]
    assert r["checkpoints"]["t"][-1] == T and r["checkpoints"]["regret"][-1] == r["final_regret"]


def test_submission_matches_the_harness(board: dict[str, Any]) -> None:
    import hbo_envs.harness as H

    df = H.evaluate(KernelUCB, ENVS[0], seeds=list(SEEDS), horizon=T, workers=1)
    want = df[df["t"] == T].set_index("seed")["regret"]
    got = {
        r["seed"]: r["final_regret"]
        for r in board["subs"]["kernel-ucb"]["results"]
        if r["env_id"] == ENVS[0]
    }
    assert got == {s: float(want[s]) for s in SEEDS}


def _edit_regret(sub: dict[str, Any], suite: Any, consistent: bool) -> dict[str, Any]:
    """Halve R_T of one (env, seed); ``consistent`` also recomputes the aggregates."""
    s = _fresh(sub)
    r = next(r for r in s["results"] if r["env_id"] == ENVS[0] and r["seed"] == 2)
    r["final_regret"] *= 0.5
    r["final_avg_regret"] = r["final_regret"] / T
    r["checkpoints"]["regret"] = [min(v, r["final_regret"]) for v in r["checkpoints"]["regret"]]
    if consistent:
        s["aggregates"] = aggregates(suite, s["results"])
    return s


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        ("edited_regret", r"aggregates: per_env\['hbo/RKHS-SE-StudentT-v0'\]\.iqm .* give"),
        ("removed_seed", r"'hbo/RKHS-SE-StudentT-v0' is missing seed\(s\) \[3\]"),
        ("duplicate_seed", r"seed 1 on 'hbo/RKHS-SE-StudentT-v0' appears 2 times"),
        (
            "wrong_env_version",
            r"'hbo/RKHS-SE-StudentT-v1' is not an env of suite .*wrong env version",
        ),
        ("changed_env_kwargs", r"'hbo/RKHS-SE-StudentT-v0' kwargs \{'noise': 'pareto'\} differ"),
        ("forged_aggregate", r"per_env\['hbo/Griewank2D-SymPareto-eps08-v0'\]\.ci_high = 1\.0"),
        ("forged_spec_hash", r"spec hash of 'hbo/RKHS-SE-StudentT-v0' .* does not match"),
        ("other_suite_definition", r"definition of 'tiny-v0' changed"),
        ("not_monotone", r"non-decreasing"),
        ("schema", r"schema: at agent: 'import_path' is a required property"),
    ],
)
def test_tampered_submission_is_rejected(board: dict[str, Any], tamper: str, message: str) -> None:
    s = _fresh(board["subs"]["kernel-ucb"])
    e0 = ENVS[0]
    if tamper == "edited_regret":
        s = _edit_regret(s, board["suite"], consistent=False)
    elif tamper == "removed_seed":
        s["results"] = [r for r in s["results"] if not (r["env_id"] == e0 and r["seed"] == 3)]
    elif tamper == "duplicate_seed":
        s["results"].append(copy.deepcopy(next(r for r in s["results"] if r["seed"] == 1)))
    elif tamper == "wrong_env_version":
        v1 = e0.replace("-v0", "-v1")
        s["envs"][v1] = s["envs"].pop(e0)
        for r in s["results"]:
            if r["env_id"] == e0:
                r["env_id"] = v1
    elif tamper == "changed_env_kwargs":
        s["envs"][e0]["kwargs"] = {"noise": "pareto"}
    elif tamper == "forged_aggregate":
        s["aggregates"]["per_env"][ENVS[1]]["ci_high"] = 1.0
    elif tamper == "forged_spec_hash":
        s["envs"][e0]["spec_hash"] = "0" * 64
    elif tamper == "other_suite_definition":
        s["suite"]["sha256"] = "f" * 64
    elif tamper == "not_monotone":
        r = s["results"][0]
        r["checkpoints"]["regret"][1] = r["checkpoints"]["regret"][0] - 1.0
    elif tamper == "schema":
        del s["agent"]["import_path"]
    rep = validate(s, suite=board["suite"])
    assert not rep.ok
    assert any(re.search(message, e) for e in rep.errors), rep.errors


def test_validate_never_imports_the_agent(board: dict[str, Any]) -> None:
    s = _fresh(board["subs"]["kernel-ucb"])
    s["agent"]["import_path"] = "module_that_does_not_exist_xyz:Agent"
    s["agent"]["display_name"] = "ghost"
    assert validate(s, suite=board["suite"]).ok  # nothing imported, nothing run


def test_consistently_edited_regret_passes_validate_but_fails_verify(
    board: dict[str, Any],
) -> None:
    s = _edit_regret(board["subs"]["kernel-ucb"], board["suite"], consistent=True)
    s["agent"]["code"]["source_sha256"] = "0" * 64
    assert validate(s, suite=board["suite"]).ok
    rep = verify(s, sample=len(SEEDS), fresh=0, root=board["root"], workers=1)
    assert rep.status == "failed"
    text = str(rep)
    assert "NOT REPRODUCED" in text and "hbo/RKHS-SE-StudentT-v0 seed 2" in text
    assert "is not the submitted one" in text


def test_genuine_submission_verifies_and_records(board: dict[str, Any], tmp_path: Path) -> None:
    s = board["subs"]["kernel-ucb"]
    out = tmp_path / "sub.json"
    rep = verify(s, sample=2, fresh=3, seed=123, root=board["root"], workers=1, record_to=out)
    assert rep.status == "verified", str(rep)
    assert "is not the submitted one" not in str(rep)  # same module file
    assert len(rep.sample_seeds) == 2 and set(rep.sample_seeds) <= set(SEEDS)
    assert len(rep.fresh_seeds) == 3 and not set(rep.fresh_seeds) & set(SEEDS)
    rec = json.loads(out.read_text())["verification"]
    assert rec["status"] == "verified" and rec["submission_sha256"] == content_sha256(s)
    # an edit after verification makes the recorded verification stale
    edited = json.loads(out.read_text())
    edited["agent"]["display_name"] = "renamed"
    rep2 = validate(edited, suite=board["suite"])
    assert rep2.ok and any("changed after it was verified" in w for w in rep2.warnings)
    from hbo_envs.leaderboard.render import _status

    assert _status(json.loads(out.read_text()))[0] == "verified"
    assert _status(edited)[0] == "stale"
    # same verification seed -> same seeds chosen
    again = verify(s, sample=2, fresh=3, seed=123, root=board["root"], workers=1)
    assert (again.sample_seeds, again.fresh_seeds) == (rep.sample_seeds, rep.fresh_seeds)


def test_non_deterministic_agent_fails_verification(board: dict[str, Any]) -> None:
    s = submit(board["suite"], "test_leaderboard:Unseeded", workers=1, progress=False)
    assert validate(s, suite=board["suite"]).ok  # the numbers look fine ...
    rep = verify(s, sample=3, fresh=0, root=board["root"], workers=1)
    assert rep.status == "failed"  # ... but they do not come back
    assert "does not give the same results under the same seed" in str(rep)


def test_public_seed_overfitting_is_flagged(board: dict[str, Any]) -> None:
    suite = board["suite"]
    for env_id in ENVS:
        env = gym.make(env_id, horizon=T).unwrapped
        for s in SEEDS:
            env.reset(seed=s)
            ORACLE[(env.problem.name, agent_seed(s))] = int(np.argmax(env.objective.values))
    sub = submit(suite, "test_leaderboard:PublicSeedOracle", workers=1, progress=False)
    assert all(r["final_regret"] == 0.0 for r in sub["results"])  # perfect on public seeds
    rep = verify(sub, sample=1, fresh=4, seed=7, root=board["root"], workers=1)
    assert rep.status == "flagged", str(rep)
    assert rep.fresh_p_value is not None and rep.fresh_p_value < 0.01


def test_render_ranks_the_third_party_agent(board: dict[str, Any]) -> None:
    suite = board["suite"]
    paths = render_suite(suite)
    assert {"README.md", "regret.svg", "index.html"} <= {p.name for p in paths}

    # expected order from a naive computation: score = mean_e 1 - IQM(agent)/IQM(random)
    def naive_iqm(x: list[float]) -> float:
        x = sorted(x)
        k = len(x) // 4
        return float(np.mean(x[k : len(x) - k]))

    def fin(sub: dict[str, Any], e: str) -> list[float]:
        return [r["final_regret"] for r in sub["results"] if r["env_id"] == e]

    rnd = board["subs"]["random"]
    score = {
        name: np.mean([1 - naive_iqm(fin(sub, e)) / naive_iqm(fin(rnd, e)) for e in ENVS])
        for name, sub in board["subs"].items()
    }
    assert score["random"] == 0.0
    assert score["kernel-ucb"] > 0  # it learns
    expected = sorted(score, key=lambda n: -score[n])
    entries, notes = collect_entries(suite)
    assert not notes
    assert [e.name for e in entries] == expected
    assert [e.score for e in entries] == pytest.approx([score[n] for n in expected])
    readme = (suite.folder / "README.md").read_text()
    rows = [ln for ln in readme.splitlines() if re.match(r"\| \d+ \| `", ln)]
    assert [re.search(r"`([^`]+)`", r).group(1) for r in rows] == expected
    page = (suite.folder / "index.html").read_text()
    assert page.count('<tr class="entry">') == 3
    assert "<script src" not in page and "http" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


def test_cli_submit_validate_verify_render(
    board: dict[str, Any], tmp_path: Path, capsys: Any
) -> None:
    root = tmp_path / "b"
    shutil.copytree(board["root"], root)
    out = root / "tiny-v0" / "submissions" / "cli.json"
    args = ["leaderboard", "--root", str(root)]
    assert (
        main(
            [
                *args,
                "submit",
                "--suite",
                "tiny-v0",
                "--agent",
                "test_leaderboard:KernelUCB",
                "--param",
                "c=0.5",
                "--name",
                "ucb-c0.5",
                "--out",
                str(out),
                "--workers",
                "1",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["agent"]["params"] == {"c": 0.5}
    assert main([*args, "validate", str(out)]) == 0
    assert (
        main(
            [
                *args,
                "verify",
                str(out),
                "--sample",
                "1",
                "--fresh-seeds",
                "1",
                "--seed",
                "3",
                "--workers",
                "1",
                "--record",
            ]
        )
        == 0
    )
    assert main([*args, "render"]) == 0
    txt = capsys.readouterr().out
    assert "valid" in txt and "verified" in txt and "index.html" in txt
    assert "ucb-c0.5" in (root / "tiny-v0" / "README.md").read_text()
    assert (root / "index.html").exists()
    bad = json.loads(out.read_text())
    bad["results"].pop()
    out.write_text(json.dumps(bad))
    assert main([*args, "validate", str(out)]) == 1
    assert "missing seed" in capsys.readouterr().out
    assert main([*args, "submit", "--suite", "tiny-v0", "--agent", "nope", "--out", "x.json"]) == 2
    err = capsys.readouterr().err
    assert "The 'agent' parameter must be 'module:Class' or a registered name" in err
    bad_name = ["--agent", "random", "--name", "a|b", "--out", str(tmp_path / "x.json")]
    assert main([*args, "submit", "--suite", "tiny-v0", *bad_name]) == 2
    assert "The 'display_name' parameter of submit must be 1 to 80" in capsys.readouterr().err


# -- the committed leaderboards ---------------------------------------------------------------
def test_every_reference_agent_has_a_verified_baseline() -> None:
    suite = load_suite("heavy-tailed-v0", BOARDS)
    entries, notes = collect_entries(suite)
    assert not notes, notes
    by_agent = {e.sub["agent"]["registered_name"]: e for e in entries}
    names, _ = suite.baseline_names()
    assert "random" in names
    missing = [n for n in names if n not in by_agent]
    assert not missing, f"no baseline for {missing}: run hbo-bench leaderboard baselines"
    for n in names:
        assert by_agent[n].status == "verified", (n, by_agent[n].status)
    assert by_agent["random"].score == 0.0


@pytest.mark.parametrize("agent", ["random", "tgp-ucb"])
def test_committed_baselines_reproduce(agent: str) -> None:
    path = BOARDS / "heavy-tailed-v0" / "submissions" / f"baseline-{agent}.json"
    rep = verify(path, sample=1, fresh=0, seed=0, root=BOARDS, workers=1)
    assert rep.status == "verified", str(rep)


def test_committed_render_is_up_to_date(tmp_path: Path) -> None:
    copy_root = tmp_path / "leaderboards"
    shutil.copytree(BOARDS, copy_root)
    render_all(copy_root)
    stale = []
    for p in sorted(copy_root.rglob("*")):
        if p.suffix in (".md", ".html", ".svg"):
            rel = p.relative_to(copy_root)
            committed = BOARDS / rel
            if not committed.exists() or committed.read_text() != p.read_text():
                stale.append(str(rel))
    assert not stale, f"stale renders {stale}: run hbo-bench leaderboard render"
    assert agents.available()  # the baselines' agent list comes from the registry
