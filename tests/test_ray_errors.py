"""The Ray backend's connection checks and node-loss retries, with stand-ins for the cluster.

A second Ray cannot be installed next to the first, so a version mismatch is simulated by
handing the check the metadata a cluster of another version would store; the comparison
itself is Ray's. Node loss is a stand-in ``ray`` whose tasks die with Ray's own system
exceptions. (The real two-node cluster is ``tests/test_ray_cluster.py``.)
"""

from __future__ import annotations

import socket
import time
from itertools import count
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from ray._private.utils import compute_version_info  # noqa: E402

from hbo_envs.harness import AgentSpec, build_cells  # noqa: E402
from hbo_envs.harness import ray_backend as rb  # noqa: E402
from hbo_envs.harness.cell import run_cell  # noqa: E402

TESTS = Path(__file__).resolve().parent
RAY_V, PY_V = compute_version_info()
TIMES = ["wall_time", "agent_time"]  # measured, not computed


def other(version: str) -> str:
    """A version that differs from ``version`` in its last component."""
    head, _, last = version.rpartition(".")
    return f"{head}.{int(last) + 1}"


@pytest.fixture(autouse=True)
def no_token_mode_switch(monkeypatch):
    """The checks here never switch this test process into Ray's token mode."""
    monkeypatch.setattr(rb, "_enable_token_mode", lambda: None)


@pytest.fixture
def listening():
    """A loopback port that accepts TCP connections (and never speaks Ray)."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        yield f"127.0.0.1:{srv.getsockname()[1]}"


# -- versions -----------------------------------------------------------------------------
def test_same_versions_pass() -> None:
    rb.check_versions({"ray_version": RAY_V, "python_version": PY_V}, "h:1")
    rb.check_versions({}, "h:1")  # a head that stored nothing: left to ray.init


def test_ray_version_mismatch_is_one_line_naming_both_and_the_fix() -> None:
    cluster = {"ray_version": other(RAY_V), "python_version": PY_V}
    with pytest.raises(rb.RayConnectionError) as ei:
        rb.check_versions(cluster, "10.0.0.1:6379")
    msg = str(ei.value)
    assert "\n" not in msg
    assert f"runs Ray {other(RAY_V)} on Python {PY_V}" in msg
    assert f"this driver Ray {RAY_V} on Python {PY_V}" in msg
    assert f"pip install 'ray=={other(RAY_V)}'" in msg and "'10.0.0.1:6379'" in msg


def test_python_mismatch_follows_rays_rule(monkeypatch) -> None:
    cluster = {"ray_version": RAY_V, "python_version": other(PY_V)}  # patch level differs
    monkeypatch.delenv("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", raising=False)
    with pytest.raises(rb.RayConnectionError, match=f"on Python {other(PY_V)}"):
        rb.check_versions(cluster, "h:1")
    monkeypatch.setenv("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "minor")
    rb.check_versions(cluster, "h:1")  # Ray accepts it at minor level: so do we


def test_probe_reads_the_clusters_versions(monkeypatch, listening) -> None:
    seen = []

    def stand_in(addr: str) -> dict:
        seen.append(addr)
        return {"ray_version": "2.9.3", "python_version": PY_V}

    monkeypatch.setattr(rb, "_cluster_metadata", stand_in)
    with pytest.raises(rb.RayConnectionError, match="runs Ray 2.9.3"):
        rb.probe_cluster(listening)
    assert seen == [listening]


# -- tokens and wrong ports ---------------------------------------------------------------
def test_refused_token_is_named(monkeypatch, listening) -> None:
    def refuse(addr: str) -> dict:
        raise ray.exceptions.AuthenticationError("RPC error: InvalidAuthToken")

    monkeypatch.setattr(rb, "_cluster_metadata", refuse)
    monkeypatch.setattr(rb, "token_available", lambda: False)
    with pytest.raises(rb.RayConnectionError, match="has none. Fix: export RAY_AUTH_TOKEN"):
        rb.probe_cluster(listening)
    monkeypatch.setattr(rb, "token_available", lambda: True)
    with pytest.raises(rb.RayConnectionError, match="refused this driver's authentication"):
        rb.probe_cluster(listening)


def test_token_available_reads_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ray/auth_token here
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    try:
        assert rb.token_available() is False
        monkeypatch.setenv("RAY_AUTH_TOKEN", "abc123")
        assert rb.token_available() is True
    finally:
        monkeypatch.undo()
        rb.token_available()  # leave Ray's token cache as the environment is


def test_silent_port_fails_within_the_probe_timeout(monkeypatch, listening) -> None:
    def hang(addr: str) -> dict:
        time.sleep(30)
        return {}

    monkeypatch.setattr(rb, "_cluster_metadata", hang)
    t0 = time.monotonic()
    with pytest.raises(rb.RayConnectionError, match="did not answer as a Ray head"):
        rb.probe_cluster(listening, timeout=0.5)
    assert time.monotonic() - t0 < 10


def test_nothing_listening_fails_fast() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(rb.RayConnectionError, match="Cannot reach the Ray cluster"):
        rb.probe_cluster(f"127.0.0.1:{port}")


def test_auto_is_checked_as_the_address_it_resolves_to(monkeypatch, listening) -> None:
    def refuse(addr: str) -> dict:
        raise ray.exceptions.AuthenticationError("RPC error: InvalidAuthToken")

    monkeypatch.setattr(rb, "_cluster_metadata", refuse)
    monkeypatch.setattr(rb, "token_available", lambda: False)
    monkeypatch.setattr(rb, "_resolve_auto", lambda: listening)
    with pytest.raises(rb.RayConnectionError, match=f"'{listening}' requires an auth"):
        rb.probe_cluster("auto")
    monkeypatch.setattr(rb, "_resolve_auto", lambda: None)  # no cluster: ray.init says so
    assert rb.probe_cluster("auto") == {}


def test_bad_ports_are_refused() -> None:
    with pytest.raises(ValueError, match="port in \\[1, 65535\\]"):
        rb.probe_cluster("127.0.0.1:0")


# -- node loss ----------------------------------------------------------------------------
class StandInRay:
    """Just enough of ``ray`` for :func:`run_on_ray`: attempt ``k`` of a cell follows
    ``script[(seed, k)]`` (an exception to raise, else the real result)."""

    exceptions = ray.exceptions

    def __init__(self, script: dict) -> None:
        self.script = script
        self.attempts: dict[int, int] = {}
        self.refs = count()
        self.jobs: dict[int, tuple] = {}
        self.cancelled: list[int] = []

    def is_initialized(self) -> bool:
        return True

    def remote(self, **_kw):
        outer = self

        class Task:
            def __init__(self, fn) -> None:
                self.fn = fn

            def remote(self, spec):
                k = outer.attempts.get(spec.seed, 0) + 1
                outer.attempts[spec.seed] = k
                ref = next(outer.refs)
                outer.jobs[ref] = (self.fn, spec, k)
                return ref

        return Task

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        fn, spec, k = self.jobs.pop(ref)
        outcome = self.script.get((spec.seed, k))
        if outcome is not None:
            raise outcome
        return fn(spec)

    def cancel(self, ref, force=False):
        self.cancelled.append(ref)


@pytest.fixture
def cells():
    return build_cells(["hbo/RKHS-SE-Spike-v0"], [AgentSpec("random")], [0, 1, 2, 3], horizon=30)


def test_lost_cells_are_retried_once_each_and_named(monkeypatch, capsys, cells) -> None:
    rex = ray.exceptions
    script = {
        (1, 1): rex.NodeDiedError("node 7 died"),
        (2, 1): rex.WorkerCrashedError(),
        (2, 2): rex.WorkerCrashedError(),
    }
    fake = StandInRay(script)
    monkeypatch.setattr(rb, "_ray", lambda: fake)
    out = {r.spec.seed: r for r in rb.run_on_ray(cells)}
    assert sorted(out) == [0, 1, 2, 3]  # each cell exactly once
    assert all(r.status == "ok" for r in out.values())
    assert fake.attempts == {0: 1, 1: 2, 2: 3, 3: 1}
    assert out[1].info["ray_attempts"] == 2 and out[2].info["ray_attempts"] == 3
    assert out[1].info["ray_retried_after"] == ["NodeDiedError: node 7 died"]
    assert "ray_attempts" not in out[0].info
    for seed in (0, 1, 2, 3):  # the retried results are the cell's own numbers
        ref = run_cell(cells[seed]).records.drop(columns=TIMES)
        assert out[seed].records.drop(columns=TIMES).equals(ref)
    err = capsys.readouterr().err
    assert f"cell {cells[1].run_name} was lost (NodeDiedError: node 7 died); retrying" in err
    assert "(attempt 3 of 3)" in err
    summary = [ln for ln in err.splitlines() if "were retried" in ln]
    assert summary == [
        f"hbo-bench: ray: 2 cell(s) were retried after their worker or node was lost: "
        f"{', '.join(sorted([cells[1].run_name, cells[2].run_name]))}"
    ]


def test_a_cell_lost_every_time_fails_alone(monkeypatch, capsys, cells) -> None:
    rex = ray.exceptions
    script = {(0, k): rex.WorkerCrashedError() for k in range(1, rb.MAX_ATTEMPTS + 2)}
    fake = StandInRay(script)
    monkeypatch.setattr(rb, "_ray", lambda: fake)
    out = {r.spec.seed: r for r in rb.run_on_ray(cells)}
    assert fake.attempts[0] == rb.MAX_ATTEMPTS
    assert out[0].status == "failed" and out[0].info["ray_attempts"] == rb.MAX_ATTEMPTS
    assert "WorkerCrashedError" in out[0].error
    assert [out[s].status for s in (1, 2, 3)] == ["ok"] * 3


def test_a_task_error_is_not_retried(monkeypatch, cells) -> None:
    err = ray.exceptions.RayTaskError("run_cell", "Traceback ...", ValueError("bad"))
    fake = StandInRay({(3, 1): err})
    monkeypatch.setattr(rb, "_ray", lambda: fake)
    out = {r.spec.seed: r for r in rb.run_on_ray(cells, workers=2)}
    assert fake.attempts[3] == 1 and out[3].status == "failed"
    assert "ray_attempts" not in out[3].info


def test_hbo_bench_missing_on_a_worker_names_the_fix(monkeypatch, cells) -> None:
    cause = ModuleNotFoundError("No module named 'hbo_envs'")
    tb = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'hbo_envs'"
    err = ray.exceptions.RayTaskError("run_cell", tb, cause).as_instanceof_cause()
    fake = StandInRay({(0, 1): err})
    monkeypatch.setattr(rb, "_ray", lambda: fake)
    out = {r.spec.seed: r for r in rb.run_on_ray(cells)}
    assert out[0].status == "failed" and fake.attempts[0] == 1
    assert "hbo-bench is not installed on that node" in out[0].error
    assert "pip install 'hbo-bench[ray]'" in out[0].error
    assert out[1].status == "ok"


def test_timeouts_come_from_the_environment_and_bad_values_are_named(monkeypatch) -> None:
    monkeypatch.delenv("HBO_RAY_PROBE_TIMEOUT", raising=False)
    assert rb.seconds_from_env("HBO_RAY_PROBE_TIMEOUT", 20.0) == 20.0
    monkeypatch.setenv("HBO_RAY_PROBE_TIMEOUT", "2.5")
    assert rb.seconds_from_env("HBO_RAY_PROBE_TIMEOUT", 20.0) == 2.5
    for bad in ("0", "-1", "nan", "inf", "soon"):
        monkeypatch.setenv("HBO_RAY_PROBE_TIMEOUT", bad)
        with pytest.raises(ValueError, match=f"HBO_RAY_PROBE_TIMEOUT .*got '{bad}'"):
            rb.seconds_from_env("HBO_RAY_PROBE_TIMEOUT", 20.0)
