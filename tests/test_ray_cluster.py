"""A real two-node Ray cluster on loopback (separate ``ray start`` processes, token auth on).

One sweep through ``hbo-bench run --backend ray --address host:port`` loses its worker node
(all its processes, killed at once while one of its workers runs a cell): it finishes on
the head, every cell once, the retried cells named, and every number equal to the local
backend's. A second sweep loses its driver (killed by pid): rerunning the same command
redoes nothing finished. Then the one-line errors: no token, a wrong token, a port that is
not a Ray head. Every process started here is stopped by pid (:class:`LoopbackCluster`),
also when an assertion fails.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ray")
# One Ray instance at a time (test_ray.py starts a local one): same xdist worker, in turn.
pytestmark = pytest.mark.xdist_group("ray")
if sys.platform != "linux":  # pragma: no cover
    pytest.skip("the loopback cluster finds raylets in /proc (Linux)", allow_module_level=True)

from hbo_envs.harness.ray_local_cluster import LoopbackCluster  # noqa: E402
from hbo_envs.harness.store import ResultStore  # noqa: E402

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# Seconds each sleepy cell holds its CPU, so a kill lands mid-cell. Half a second is enough
# since kill_node kills the node's workers with its raylet: a worker outliving its raylet
# could still deliver its cell (the cell was then not lost and the test failed).
SLEEP = 0.5
SWEEP = [
    "--env",
    "hbo/RKHS-SE-StudentT-v0",
    "--agent",
    f"fixtures_agents:SleepyUniform[sleep={SLEEP}]",
    "--agent",
    "gp-ucb",
    "--seeds",
    "0-5",
    "--horizon",
    "150",
]
N_CELLS = 12
TIMEOUT = 240.0  # seconds any one sweep may take under load before the test fails
NUMBERS = ["env_id", "agent", "seed", "t", "regret", "avg_regret", "coverage", "corruption_used"]


def hbo_bench(*args: str) -> list[str]:
    return [sys.executable, "-m", "hbo_envs.cli", *args]


def wait_until(cond, timeout: float, what: str, poll: float = 0.1):
    """Poll ``cond()`` until truthy (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(poll)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}")


def finished(out: Path) -> dict[str, bytes]:
    """``cell file -> JSON bytes`` of the cells written as ok so far."""
    res = {}
    for p in sorted((out / "cells").glob("*.json")):
        try:
            b = p.read_bytes()
            if json.loads(b).get("status") == "ok":
                res[p.name] = b
        except (OSError, ValueError):
            continue  # being written
    return res


def records(out: Path) -> pd.DataFrame:
    df = ResultStore(out).collect_records()
    return df.sort_values(["env_id", "agent", "seed", "t"], ignore_index=True)


class Driver:
    """An ``hbo-bench`` process, killed by pid when the test ends early."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self.fh = open(log, "wb")
        self.p = subprocess.Popen(
            args, env=env, stdout=self.fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    def wait(self, timeout: float = TIMEOUT) -> tuple[int, str]:
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"hbo-bench did not finish in {timeout:g} s:\n{self.text()[-3000:]}")
        self.fh.close()
        return rc, self.text()

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
            self.p.wait(30)
        self.fh.close()


@pytest.fixture(scope="module")
def cluster_and_local(tmp_path_factory):
    """The cluster, and the same sweep on the local backend (the reference numbers), run
    while the cluster starts. One local worker: the numbers do not depend on the number
    of workers (test_harness.test_evaluate_is_deterministic_across_processes), and a
    second pool process only competed with the starting cluster for the two cores."""
    local = tmp_path_factory.mktemp("local")
    ref = Driver(
        hbo_bench("run", *SWEEP, "--workers", "1", "--out", str(local / "out")),
        dict(os.environ, PYTHONPATH=str(TESTS)),
        local / "run.log",
    )
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    cl = LoopbackCluster(nodes=2, cpus_per_node=1, env=env)
    drivers: list[Driver] = [ref]
    cl.drivers = drivers
    try:
        cl.start(timeout=180)
        yield cl, ref
    finally:
        for d in drivers:
            d.kill()
        survivors = cl.stop()
    assert survivors == []  # every process the cluster started is gone


@pytest.fixture(scope="module")
def cluster(cluster_and_local) -> LoopbackCluster:
    return cluster_and_local[0]


@pytest.fixture(scope="module")
def local_out(cluster_and_local) -> Path:
    ref = cluster_and_local[1]
    rc, text = ref.wait()
    assert rc == 0, text[-3000:]
    return ref.log.parent / "out"


def start_driver(cl: LoopbackCluster, out: Path, log: Path, *extra: str) -> Driver:
    args = hbo_bench("run", *SWEEP, "--backend", "ray", "--address", cl.address, *extra)
    d = Driver(args + ["--out", str(out)], cl.driver_env(), log)
    cl.drivers.append(d)
    return d


def test_worker_node_lost_mid_sweep(cluster, local_out, tmp_path) -> None:
    out = tmp_path / "ray"
    d = start_driver(cluster, out, tmp_path / "run.log")
    # kill the worker node while one of its workers is inside a cell
    busy = wait_until(lambda: cluster.running_tasks(1), TIMEOUT, "a cell on the worker node")
    assert busy
    cluster.kill_node(1)
    assert len(finished(out)) < N_CELLS  # the kill did land mid-sweep
    rc, text = d.wait()
    assert rc == 0, text[-3000:]
    # every cell exactly once, all ok, finished without the worker node
    done = finished(out)
    assert len(list((out / "cells").glob("*.json"))) == N_CELLS == len(done)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["cells"] == {
        "total": N_CELLS,
        "ok": N_CELLS,
        "failed": 0,
        "skipped_as_finished": 0,
    }
    # the output names the retried cells; their JSON records why
    retried = {
        json.loads(b)["run_name"]: json.loads(b) for b in done.values() if b"ray_attempts" in b
    }
    assert retried, text[-3000:]
    for name, st in retried.items():
        assert st["ray_attempts"] >= 2 and len(st["ray_retried_after"]) == st["ray_attempts"] - 1
        assert f"cell {name} was lost" in text
    summary = [ln for ln in text.splitlines() if "were retried after" in ln]
    assert len(summary) == 1 and all(n in summary[0] for n in retried), text[-3000:]
    # bit for bit the local backend's numbers
    pd.testing.assert_frame_equal(records(local_out)[NUMBERS], records(out)[NUMBERS])


def test_driver_lost_mid_sweep_resumes_without_redoing(cluster, local_out, tmp_path) -> None:
    out = tmp_path / "ray"
    d = start_driver(cluster, out, tmp_path / "run1.log")
    wait_until(lambda: len(finished(out)) >= 2, TIMEOUT, "two finished cells")
    d.kill()  # SIGKILL: no cleanup, as when the driver's machine dies
    before = finished(out)
    assert 2 <= len(before) < N_CELLS
    d2 = start_driver(cluster, out, tmp_path / "run2.log")
    rc, text = d2.wait()
    assert rc == 0, text[-3000:]
    assert f"{N_CELLS - len(before)} cell(s) run, {len(before)} already finished" in text
    after = finished(out)
    assert len(after) == N_CELLS
    assert all(after[k] == v for k, v in before.items())  # not one finished cell redone
    pd.testing.assert_frame_equal(records(local_out)[NUMBERS], records(out)[NUMBERS])


def test_connection_errors_are_one_line_naming_the_fix(cluster, tmp_path) -> None:
    """No token, a wrong token, a port that is no Ray head: exit 2, one error line naming
    the fix, in bounded time (the three drivers run at once)."""
    import socket

    from hbo_envs.harness.ray_backend import CONNECT_TIMEOUT, PROBE_TIMEOUT

    with socket.socket() as srv:  # listens, never speaks Ray
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        silent = f"127.0.0.1:{srv.getsockname()[1]}"
        cases = {
            "none": (cluster.address, cluster.driver_env(token=False)),
            "wrong": (cluster.address, dict(cluster.driver_env(), RAY_AUTH_TOKEN="not-it")),
            "silent": (silent, dict(cluster.driver_env(), HBO_RAY_PROBE_TIMEOUT="3")),
        }
        t0 = time.monotonic()
        runs = {}
        for k, (addr, env) in cases.items():
            args = hbo_bench("run", *SWEEP, "--backend", "ray", "--address", addr)
            runs[k] = Driver(args + ["--out", str(tmp_path / k)], env, tmp_path / f"{k}.log")
            cluster.drivers.append(runs[k])
        msgs = {}
        for k, d in runs.items():
            rc, text = d.wait()
            errors = [ln for ln in text.splitlines() if ln.startswith("hbo-bench: error:")]
            assert rc == 2 and len(errors) == 1, text[-3000:]
            msgs[k] = errors[0]
        took = time.monotonic() - t0
    assert "requires an authentication token and this driver has none" in msgs["none"]
    assert "export RAY_AUTH_TOKEN" in msgs["none"] and cluster.address in msgs["none"]
    assert "refused this driver's authentication token" in msgs["wrong"]
    assert "RAY_AUTH_TOKEN" in msgs["wrong"]
    assert "did not answer as a Ray head" in msgs["silent"] and silent in msgs["silent"]
    assert "within 3 s" in msgs["silent"]  # HBO_RAY_PROBE_TIMEOUT reached the driver
    assert "--address" in msgs["silent"]
    # bounded: the probes' timeouts plus the CLI's start-up (generous under load)
    assert took < CONNECT_TIMEOUT + PROBE_TIMEOUT + 90
    assert not [p for k in cases for p in (tmp_path / k).glob("cells/*.json")]  # no cell ran


def doc_lines(prefix: str) -> list[list[str]]:
    import shlex

    doc = (ROOT / "docs" / "cluster.md").read_text()
    return [shlex.split(ln) for ln in doc.splitlines() if ln.startswith(prefix)]


def test_recipe_commands_are_the_ones_run_here() -> None:
    """docs/cluster.md's ray start / hbo-bench / token lines are what this file runs."""
    cl = LoopbackCluster(nodes=2, cpus_per_node=8)
    try:
        loopback = {"10.0.0.1": "127.0.0.1", "10.0.0.2": "127.0.0.1", "6379": str(cl.port)}
        starts = doc_lines("ray start ")
        assert len(starts) == 2
        for i, line in enumerate(starts):
            doc = [loopback.get(w, w).replace("10.0.0.1:6379", cl.address) for w in line[1:]]
            assert doc == cl.recipe_command(i)
            assert cl.start_command(i)[: len(doc)] == doc
        node, driver = cl.node_env(), cl.driver_env()
    finally:
        cl.stop()
    exports = doc_lines("export RAY_AUTH")
    assert ["export", "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=<token>"] in exports
    assert ["export", "RAY_AUTH_TOKEN=<token>"] in exports
    assert node["RAY_AUTH_MODE"] == "token" and node["RAY_AUTH_TOKEN"] == cl.token
    assert "RAY_AUTH_MODE" not in driver and driver["RAY_AUTH_TOKEN"] == cl.token
    from hbo_envs.cli import _parser

    (run,) = doc_lines("hbo-bench run ")
    args = _parser().parse_args(run[1:])
    assert (args.backend, args.address) == ("ray", "10.0.0.1:6379")
    doc = (ROOT / "docs" / "cluster.md").read_text()
    example = doc.split("```python\n", 1)[1].split("```", 1)[0]
    compile(example, "docs/cluster.md", "exec")
    assert "LoopbackCluster(nodes=2" in example and "cl.driver_env()" in example
