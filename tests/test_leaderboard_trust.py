"""Issue 37: each attack on the leaderboard's trust model is a test here, run against a
temporary copy of a leaderboard (the tiny suite of ``test_leaderboard``): the oracle agent
that inverts its seed, resealed records and forged references (rejected by the gate), the
spy, the daemon, the memory hog of many children, the shadowed module, the memorizer.

The attack agents live in ``leaderboard_agents.py`` (importable by the sandbox's
unprivileged user from the checkout, and cheap to import: see its docstring); each escape
attempt is reported through the actions the agent plays (the verifier reads only action
indices from it), decoded from the regret increments.
"""

from __future__ import annotations

import copy
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from leaderboard_agents import ENVS, SPY_CHECKS, _try_read

from hbo_envs.harness.specs import agent_seed
from hbo_envs.leaderboard import load_suite, submit, verify, write_submission
from hbo_envs.leaderboard.entries import collect_entries
from hbo_envs.leaderboard.sandbox import (
    FULL,
    AgentProcess,
    SandboxLimits,
    isolation,
    module_source_sha256,
    resolve_module_file,
)
from hbo_envs.leaderboard.submission import aggregates, content_sha256, load_submission
from hbo_envs.leaderboard.verify import (
    FLAG_P,
    FLAG_P2,
    RerunCell,
    changed_submissions,
    fresh_seed_test,
    gate,
    make_reference,
    min_hidden_seeds,
    record_sha256,
    record_status,
    rerun_cells,
)

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2, 3, 4, 5)
T = 40
HIDDEN = 7

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
"""

needs_full = pytest.mark.skipif(
    isolation() != FULL, reason=f"the full sandbox needs root on Linux here: {isolation()}"
)
BOARD = pytest.mark.xdist_group("trust_board")


# -- agents ------------------------------------------------------------------------------------
# -- fixtures ----------------------------------------------------------------------------------
def _regrets(env_id: str, seed: int) -> np.ndarray:
    env = gym.make(env_id, horizon=T).unwrapped
    env.reset(seed=seed)
    return np.max(env.objective.values) - env.objective.values


def _played(out: Any, env_id: str, seed: int, n: int) -> list[int]:
    """Arms 0/1 played in the first ``n`` rounds, from the regret increments."""
    r = _regrets(env_id, seed)
    assert r[0] != r[1]
    inc = np.diff(np.concatenate([[0.0], out.regret[:n]]))
    return [int(np.isclose(x, r[1], rtol=0, atol=1e-12)) for x in inc]


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("trust")
    (root / "tiny-v0").mkdir()
    (root / "tiny-v0" / "suite.toml").write_text(TINY)
    suite = load_suite("tiny-v0", root)
    folder = root / "tiny-v0" / "submissions"
    ref, _ = make_reference(suite, "random", hidden=HIDDEN)
    write_submission(folder / "baseline-random.json", ref)
    sub = submit(
        suite, "leaderboard_agents:Greedy", display_name="greedy", workers=1, progress=False
    )
    rep = verify(sub, hidden=HIDDEN, root=root, record_to=folder / "greedy.json")
    assert rep.status == "verified", str(rep)
    return {"root": root, "suite": suite, "folder": folder, "greedy": sub}


def _copy(board: dict[str, Any], tmp_path: Path) -> tuple[Any, Path]:
    root = tmp_path / "b"
    shutil.copytree(board["root"], root)
    return load_suite("tiny-v0", root), root / "tiny-v0" / "submissions"


def _reseal(sub: dict[str, Any], edit: Any) -> dict[str, Any]:
    """An attacker's edit of a record's numbers, resealed: the file's results and
    aggregates made equal to the record's, every hash recomputed."""
    sub = copy.deepcopy(sub)
    rec = sub["verification"]
    edit(rec)
    sub["results"] = copy.deepcopy(rec["results"])
    for r in sub["results"]:
        r["final_regret"] = r["checkpoints"]["regret"][-1]
        r["final_avg_regret"] = r["final_regret"] / T
    for r in rec["results"]:
        r["final_regret"] = r["checkpoints"]["regret"][-1]
        r["final_avg_regret"] = r["final_regret"] / T
    return _seal(sub)


def _seal(sub: dict[str, Any]) -> dict[str, Any]:
    suite = load_suite("tiny-v0", _ROOT[0])
    sub["aggregates"] = aggregates(suite, sub["results"])
    rec = sub["verification"]
    rec["submission_sha256"] = content_sha256(sub)
    rec["record_sha256"] = record_sha256(rec)
    return sub


_ROOT: list[Path] = []


def _scale(factor: float, seeds: tuple[int, ...] | None = None) -> Any:
    def edit(rec: dict[str, Any]) -> None:
        for r in rec["results"]:
            if seeds is None or r["seed"] in seeds:
                r["checkpoints"]["regret"] = [v * factor for v in r["checkpoints"]["regret"]]

    return edit


# -- 1. the agent cannot learn the instance ---------------------------------------------------
def test_oracle_that_inverts_its_seed_wins_with_derived_seeds_and_loses_with_secret_ones() -> None:
    """Old scheme (the agent's seed a function of the env's): the oracle recovers the env
    seed and plays the optimum, zero regret. The verifier's hidden cells (a secret agent
    seed drawn independently): the same oracle cannot, and its regret is arm 0's."""
    env_seed = 3001  # within the oracle's search, as any seed is for a 32-bit search in C
    derived = RerunCell(ENVS[0], env_seed, horizon=5)
    secret = RerunCell(ENVS[0], env_seed, horizon=5, agent_seed=int.from_bytes(os.urandom(4)))
    old, new = rerun_cells("leaderboard_agents:SeedOracle", {}, [derived, secret])
    assert old.ok and new.ok, (old.error, new.error)
    assert old.regret[-1] == 0.0  # the attack works when the seed is derived
    r = _regrets(ENVS[0], env_seed)
    assert r[0] > 0 and new.regret[-1] == pytest.approx(5 * r[0])  # ... and not with a secret


@BOARD
def test_oracle_is_flagged_and_not_ranked(board: dict[str, Any], tmp_path: Path) -> None:
    suite, folder = _copy(board, tmp_path)
    sub = submit(
        suite, "leaderboard_agents:SeedOracle", display_name="oracle", workers=1, progress=False
    )
    assert all(r["final_regret"] == 0.0 for r in sub["results"])  # "perfect" on public seeds
    rep = verify(sub, hidden=HIDDEN, root=folder.parents[1], record_to=folder / "oracle.json")
    assert rep.status == "flagged", str(rep)
    # hidden cells: 63-bit env seeds, agent seeds drawn independently (not agent_seed(s))
    assert not set(rep.hidden_seeds) & set(SEEDS)
    assert rep.hidden.agent_seeds != [agent_seed(s) for s in rep.hidden_seeds]
    entries, notes = collect_entries(suite)
    assert "oracle" not in [e.name for e in entries]
    assert any(n.startswith("oracle.json: not ranked: flagged") for n in notes), notes


@pytest.mark.parametrize(
    "env_id", [*ENVS, "hbo/Corrupted-SE-Adaptive-v0", "hbo/HS-Forrester-SubRnd-v0"]
)
def test_the_problem_an_agent_sees_carries_no_seed_or_generator(env_id: str) -> None:
    import pickle

    env = gym.make(env_id, horizon=10).unwrapped
    seed = int.from_bytes(os.urandom(8)) >> 1
    env.reset(seed=seed)
    blob = pickle.dumps(env.problem, protocol=pickle.HIGHEST_PROTOCOL)
    for width in (8, 9):  # the seed as pickle writes a long, in any of its byte widths
        assert seed.to_bytes(width, "little", signed=True) not in blob
    assert str(seed).encode() not in blob

    def walk(x: Any, depth: int = 0) -> None:
        assert not isinstance(
            x, np.random.Generator | np.random.BitGenerator | np.random.SeedSequence
        ), type(x)
        if depth > 6:
            return
        if isinstance(x, dict):
            for v in x.values():
                walk(v, depth + 1)
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v, depth + 1)
        elif hasattr(x, "__dict__"):
            for v in vars(x).values():
                walk(v, depth + 1)

    walk(pickle.loads(blob))


# -- 2. ranked numbers are the suite's re-run: resealed records are rejected -------------------
@BOARD
@pytest.mark.parametrize(
    ("attack", "caught_by"),
    [
        ("regrets x0.5", "gate"),
        # zero public regret beside the record's genuine hidden R_T: its own numbers flag it
        ("zero regret", "render"),
        ("one seed x0.01", "gate"),
        ("forged random floor x3", "gate"),
    ],
)
def test_resealed_record_is_rejected(
    board: dict[str, Any], tmp_path: Path, attack: str, caught_by: str
) -> None:
    suite, folder = _copy(board, tmp_path)
    _ROOT[:] = [folder.parents[1]]
    name = "baseline-random.json" if "random" in attack else "greedy.json"
    edit = {
        "regrets x0.5": _scale(0.5),
        "zero regret": _scale(0.0),
        "one seed x0.01": _scale(0.01, (3,)),
        "forged random floor x3": _scale(3.0),
    }[attack]
    before = {e.file: e.score for e in collect_entries(suite)[0]}
    forged = _reseal(load_submission(folder / name), edit)
    write_submission(folder / name, forged)
    status, _, why = record_status(forged, suite)
    if caught_by == "render" or status == "stale":
        # its own hidden test disagrees: caught at render. For the gate's attacks this
        # depends on the secret hidden seeds the fixture's verification drew (a scaled record
        # can push its own permutation test past the flag), so either catch is a rejection.
        assert status == "stale" and "hidden" in why, why
        assert name not in {e.file for e in collect_entries(suite)[0]}
        return
    # the seal holds (anyone can recompute it) and the numbers would move the table ...
    assert status == "verified"
    after = {e.file: e.score for e in collect_entries(suite)[0]}
    assert after["greedy.json"] != before["greedy.json"]
    # ... so no record lands without the gate's full re-run, which rejects it
    ok, msgs = gate([folder / name], hidden=HIDDEN, root=folder.parents[1])
    assert not ok and "REJECTED" in msgs[0] and "NOT REPRODUCED" in "\n".join(msgs), msgs
    if attack == "regrets x0.5":  # the genuine file passes (checked once: a full re-run)
        ok, msgs = gate([board["folder"] / name], hidden=HIDDEN, root=board["root"])
        assert ok, msgs


@BOARD
def test_flagged_to_verified_edit_is_rejected(board: dict[str, Any], tmp_path: Path) -> None:
    """The memorizer's flagged record edited to "verified": stale at render when its own
    hidden numbers say flagged; with the hidden numbers forged too, the gate's fresh
    hidden draws flag it."""
    suite, folder = _copy(board, tmp_path)
    _ROOT[:] = [folder.parents[1]]
    sub = submit(
        suite, "leaderboard_agents:SeedOracle", display_name="memo", workers=1, progress=False
    )
    verify(sub, hidden=HIDDEN, root=folder.parents[1], record_to=folder / "memo.json")
    flagged = load_submission(folder / "memo.json")
    assert flagged["verification"]["status"] == "flagged"

    def relabel(rec: dict[str, Any]) -> None:
        rec["status"] = "verified"

    edited = _reseal(flagged, relabel)
    status, _, why = record_status(edited, suite)
    assert status == "stale" and "its hidden-seed results say flagged" in why, why

    def hide(rec: dict[str, Any]) -> None:  # hidden R_T copied from the public ones
        rec["status"] = "verified"
        k = rec["hidden_stages"][0]
        rec["hidden_stages"] = [k]
        rec["hidden_seeds"] = rec["hidden_seeds"][:k]
        rec["hidden_agent_seeds"] = rec["hidden_agent_seeds"][:k]
        for e in ENVS:
            pub = [r["checkpoints"]["regret"][-1] for r in rec["results"] if r["env_id"] == e]
            rec["hidden_results"][e] = [pub[i % len(pub)] for i in range(k)]

    forged = _reseal(flagged, hide)
    assert record_status(forged, suite)[0] == "verified"
    write_submission(folder / "memo.json", forged)
    ok, msgs = gate([folder / "memo.json"], hidden=HIDDEN, root=folder.parents[1])
    assert not ok and "the suite's re-run says flagged" in msgs[0], msgs


@BOARD
def test_gate_finds_every_changed_submission(board: dict[str, Any], tmp_path: Path) -> None:
    suite, folder = _copy(board, tmp_path)
    root = folder.parents[1]

    def git(*a: str) -> None:
        subprocess.run(["git", "-C", str(root), *a], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    assert changed_submissions("HEAD", root) == []
    sub = load_submission(folder / "greedy.json")
    sub["agent"]["display_name"] = "greedy-2"
    write_submission(folder / "greedy.json", sub)
    shutil.copy(folder / "baseline-random.json", folder / "new.json")
    assert changed_submissions("HEAD", root) == sorted(
        [(folder / "greedy.json").resolve(), (folder / "new.json").resolve()]
    )
    with pytest.raises(ValueError, match="is not a commit"):
        changed_submissions("no-such-rev", root)
    # the gate refuses too few hidden seeds before running anything
    with pytest.raises(ValueError, match=r"'hidden' parameter of gate must be .*Got 2"):
        gate([folder / "greedy.json"], hidden=2, root=root)


# -- 3. a sandbox that holds -------------------------------------------------------------------
@needs_full
def test_spy_escapes_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HBO_TEST_SECRET", "token")
    shared = Path(tempfile.mkdtemp(prefix="hbo-trust-"))  # world-readable, like a checkout
    try:
        shared.chmod(0o755)
        competitor = shared / "competitor.json"
        competitor.write_text("{}")
        competitor.chmod(0o666)  # even a world-writable file: the sandbox cannot reach it
        sock_path = shared / "host.sock"
        host = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        host.bind(str(sock_path))
        sock_path.chmod(0o777)
        host.listen(1)
        abstract = f"hbo-trust-{os.getpid()}"
        host2 = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        host2.bind("\0" + abstract)
        host2.listen(1)
        # the control case: the same checks in this (unsandboxed) process find the escapes
        targets = {
            "checkout_file": str(ROOT / "hbo_envs" / "leaderboard" / "verify.py"),
            "competitor": str(competitor),
            "unix_socket": str(sock_path),
            "abstract_socket": abstract,
        }
        here = {k: bool(c(targets)) for k, c in SPY_CHECKS.items()}
        assert here["privileges or capabilities"] and here["UNIX socket to the host"]
        assert here["writes into the checkout"] and here["corrupts a competitor's submission"]
        for p in Path("/tmp").glob(f"spy-{os.getpid()}"):
            p.unlink()
        n = len(SPY_CHECKS)
        out = rerun_cells("leaderboard_agents:Spy", targets, [RerunCell(ENVS[0], 0, horizon=n)])[0]
        assert out.ok, out.error
        bits = dict(zip(SPY_CHECKS, _played(out, ENVS[0], 0, n), strict=True))
        worked = [k for k, b in bits.items() if b and not k.startswith("control")]
        assert not worked, f"escapes that worked in the sandbox: {worked}"
        assert bits["control: private writable scratch"] == 1
        assert competitor.read_text() == "{}"
        host.close()
        host2.close()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _alive(marker: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit() and marker.encode() in _try_read(f"/proc/{d}/cmdline"):
            pids.append(int(d))
    return pids


@needs_full
def test_daemon_dies_with_the_verification() -> None:
    marker = f"{1000 + int.from_bytes(os.urandom(2))}.{os.getpid()}"  # `sleep` seconds
    with AgentProcess("leaderboard_agents:Daemon", {"marker": marker}) as ap:
        ap.episode(ENVS[0], seed=0, horizon=3)
        assert _alive(marker), "the daemon did not start (the test would prove nothing)"
    time.sleep(0.3)
    assert not _alive(marker), "a daemon forked by the agent outlived the verification"


@needs_full
def test_children_are_limited_in_total_memory_and_number() -> None:
    # each child (350 MiB more than the agent process it forks from) is under the
    # per-process limit; together they are over 1200 MiB
    limits = SandboxLimits(memory_mb=1200, wall_s=60)
    t0 = time.monotonic()
    out = rerun_cells(
        "leaderboard_agents:ManyChildren",
        {"mb": 350},
        [RerunCell(ENVS[0], 0, horizon=3)],
        limits=limits,
    )[0]
    assert not out.ok and "over the limit of 1200 MiB" in str(out.error), out.error
    assert time.monotonic() - t0 < 30  # killed, not waited for
    # a limit on processes: a fork bomb stops at RLIMIT_NPROC (a fork fails in the agent)
    bomb = rerun_cells(
        "leaderboard_agents:ForkBomb",
        {},
        [RerunCell(ENVS[0], 0, horizon=1)],
        limits=SandboxLimits(processes=16, wall_s=60),
    )[0]
    assert bomb.ok, bomb.error
    assert bomb.regret[0] == _regrets(ENVS[0], 0)[1]  # arm 1: a fork failed


def test_whole_verification_time_is_bounded() -> None:
    """``wall_s`` bounds the whole re-run, not each process: 6 cells of a 0.5 s/round agent
    under a 3 s limit stop at about 3 s, the cells left over reported."""
    cells = [RerunCell(ENVS[0], s, horizon=20) for s in range(6)]
    t0 = time.monotonic()
    out = rerun_cells(
        "leaderboard_agents:Sleeper", {}, cells, workers=2, limits=SandboxLimits(wall_s=3)
    )
    wall = time.monotonic() - t0
    assert all(not o.ok for o in out)
    assert wall < 3 + 8, wall  # the deadline, process start-up and kill
    assert "wall-clock limit of 3 s (the verification's whole time)" in str(out[0].error)
    assert all("wall-clock limit" in str(o.error) for o in out), [o.error for o in out]


# -- 4. the hash binds what ran, and the flag means something ----------------------------------
def _module_dir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="hbo-trust-mod-"))
    d.chmod(0o755)  # readable by the sandbox's user
    return d


AGENT_SRC = """
class Agent:
    name = "shadow"
    def reset(self, problem, *, seed=None):
        pass
    def act(self):
        return {arm}
    def update(self, action, reward):
        pass
"""


def test_shadowing_package_is_what_is_hashed_and_run() -> None:
    d = _module_dir()
    try:
        (d / "shadow_agent.py").write_text(AGENT_SRC.format(arm=0))
        (d / "shadow_agent").mkdir()
        (d / "shadow_agent" / "__init__.py").write_text(AGENT_SRC.format(arm=1))
        for p in (d / "shadow_agent", d / "shadow_agent" / "__init__.py", d / "shadow_agent.py"):
            p.chmod(0o755)
        # Python imports the package, not the module beside it: so does the hash
        path = [str(d)]
        assert resolve_module_file("shadow_agent", path) == d / "shadow_agent" / "__init__.py"
        sha, file = module_source_sha256("shadow_agent:Agent", path)
        assert file == str(d / "shadow_agent" / "__init__.py")
        with AgentProcess("shadow_agent:Agent", {}, sys_path=[str(d), *os.sys.path]) as ap:
            got = ap.episode(ENVS[0], seed=0, horizon=1)
        assert got[0] == _regrets(ENVS[0], 0)[1]  # the package's arm 1 ran
        # a process that imported another file than the pinned one is refused
        wrong = AgentProcess(
            "shadow_agent:Agent",
            {},
            sys_path=[str(d), *os.sys.path],
            module_file=str(d / "shadow_agent.py"),
        )
        with pytest.raises(Exception, match="not from the file whose hash was pinned"):
            with wrong:
                pass
        assert wrong.proc is None and wrong.private is None  # nothing left behind
    finally:
        shutil.rmtree(d, ignore_errors=True)


@BOARD
def test_module_changed_after_verification_is_not_ranked(
    board: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, folder = _copy(board, tmp_path)
    d = _module_dir()
    try:
        (d / "late_agent.py").write_text("from leaderboard_agents import Greedy as Agent\n")
        (d / "late_agent.py").chmod(0o644)
        monkeypatch.syspath_prepend(str(d))
        monkeypatch.setenv(
            "PYTHONPATH", os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])
        )
        sub = submit(suite, "late_agent:Agent", display_name="late", workers=1, progress=False)
        rep = verify(sub, hidden=HIDDEN, root=folder.parents[1], record_to=folder / "late.json")
        assert rep.status == "verified", str(rep)
        assert "late" in [e.name for e in collect_entries(suite)[0]]
        with open(d / "late_agent.py", "a") as f:
            f.write("Agent.act = lambda self: 0\n")  # changed after verification
        status, _, why = record_status(load_submission(folder / "late.json"), suite)
        assert status == "stale" and "not the one verified" in why
        entries, notes = collect_entries(suite)
        assert "late" not in [e.name for e in entries]
        assert any(n.startswith("late.json: not ranked: stale") for n in notes)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the seccomp filter is x86-64 only")
def test_the_seccomp_layer_alone_refuses_unix_sockets() -> None:
    # test_spy_escapes_fail checks the whole sandbox, where other layers also stop a UNIX
    # socket; this checks the seccomp filter by itself, in a fresh process (it is
    # irrevocable): AF_UNIX works before and fails with EACCES after, AF_INET still works
    code = (
        "import errno, socket\n"
        "from hbo_envs.leaderboard.sandbox import _deny_unix_sockets\n"
        "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()\n"
        "_deny_unix_sockets()\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "    print('UNIX socket allowed')\n"
        "except OSError as e:\n"
        "    print('refused', errno.errorcode[e.errno])\n"
        "socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()\n"
        "print('inet ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["refused EACCES", "inet ok"], out.stdout


def test_the_child_resolves_only_agent_classes() -> None:
    # the sandboxed child's own check, by itself (verify refuses these earlier, so the end
    # to end attack test passes without it): a function, a class without the Agent
    # methods and a standard-library path are refused before anything is called
    from hbo_envs.leaderboard.sandbox import _resolve

    assert _resolve("agents.gp.gp_ucb:GPUCB").__name__ == "GPUCB"
    with pytest.raises(ValueError, match=r"must name an agent class; it names a function"):
        _resolve("hbo_envs.validation:check_int")
    with pytest.raises(ValueError, match=r"lacks the Agent methods \['reset', 'act'"):
        _resolve("hbo_envs.leaderboard.sandbox:SandboxLimits")
    with pytest.raises(ValueError, match=r"names a standard-library module"):
        _resolve("os:system")


def test_minimum_hidden_seeds_against_a_hand_count() -> None:
    from math import comb

    for n in (3, 6, 10, 20):
        for alpha in (FLAG_P, FLAG_P2):
            m = min_hidden_seeds(n, alpha)
            assert 1 / comb(n + m, m) <= alpha / 10 < 1 / comb(n + m - 1, m - 1)
    # the docs' "--fresh-seeds 2" could reach p = 1/66 at best: refused
    assert min_hidden_seeds(10) == 4 and 1 / comb(12, 2) > FLAG_P / 10


@pytest.mark.parametrize(
    ("n", "alpha", "name"),
    [(0, FLAG_P, "n_public"), (-3, FLAG_P, "n_public"), (2.5, FLAG_P, "n_public"),
     (10, 0.0, "alpha"), (10, -0.1, "alpha"), (10, 1.0, "alpha"), (10, float("nan"), "alpha")],
)  # fmt: skip
def test_minimum_hidden_seeds_refuses_what_has_no_answer(n: Any, alpha: float, name: str) -> None:
    # no public seed, or a level of 0 or below, has no m (the search looped forever)
    with pytest.raises(ValueError, match=rf"'{name}' parameter of min_hidden_seeds must be"):
        min_hidden_seeds(n, alpha)


def test_two_stage_flag_rate_under_the_null_is_below_its_bound() -> None:
    """Genuine agents (public and hidden R_T exchangeable, envs correlated through the
    seed) are flagged at most FLAG_P2 of the time: each stage is an exact permutation test.
    400 simulated verifications with the first stage forced to reject (the worst case):
    the second, independent draw rejects at rate <= FLAG_P2 (0 expected; 3 allowed:
    P(Binomial(400, 0.001) > 3) < 1e-3)."""
    rng = np.random.default_rng(0)
    n, m2, envs = 10, min_hidden_seeds(10, FLAG_P2), 7
    rejections = 0
    for _ in range(400):
        common = rng.normal(size=(n + m2, 1))
        x = 0.7 * common + 0.3 * rng.normal(size=(n + m2, envs))
        pub = {e: list(x[:n, e]) for e in range(envs)}
        hid = {e: list(x[n:, e]) for e in range(envs)}
        rejections += fresh_seed_test(pub, hid)[1] < FLAG_P2
    assert rejections <= 3
