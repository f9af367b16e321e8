"""The Ray backend gives exactly the local backend's numbers (against a local Ray instance)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from hbo_envs.harness import AgentSpec, build_cells, evaluate, run_sweep

ray = pytest.importorskip("ray")
# One Ray instance at a time on the suite's two cores: this module and test_ray_cluster.py
# run on the same xdist worker, one after the other.
pytestmark = pytest.mark.xdist_group("ray")

TESTS = Path(__file__).resolve().parent
ENV_T = "hbo/RKHS-SE-StudentT-v0"
NUMBERS = ["env_id", "agent", "seed", "t", "regret", "avg_regret", "coverage", "corruption_used"]


@pytest.fixture(scope="module")
def local_ray():
    started = not ray.is_initialized()
    if started:
        # The workers find tests/fixtures_agents.py through PYTHONPATH, which the local
        # instance's raylet (and so each worker) inherits from this process at ray.init. A
        # runtime_env={"env_vars": ...} would do the same through Ray's runtime-env agent,
        # at ~2 CPU-s more per sweep (a setup process before every worker). One CPU: one
        # worker runs every cell in turn (each worker costs ~1 CPU-s to start), so the
        # comparison also covers cells that share a worker process.
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PYTHONPATH", str(TESTS), prepend=os.pathsep)
            ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def test_ray_and_local_backends_agree(local_ray, tmp_path: Path) -> None:
    agents = [AgentSpec("fixtures_agents:GreedyMean"), AgentSpec("fixtures_agents:Uniform")]
    try:
        import agents as reference

        if "gp-ucb" in reference.available():
            agents.append(AgentSpec("gp-ucb"))
    except ImportError:
        pass
    cells = build_cells([ENV_T], agents, 3, horizon=600)
    local = run_sweep(cells, workers=1, progress=False)
    remote = run_sweep(cells, backend="ray", out=tmp_path / "ray", progress=False)
    assert remote.ok and remote.ran == len(cells)
    pd.testing.assert_frame_equal(local.records[NUMBERS], remote.records[NUMBERS])
    meta = json.loads((tmp_path / "ray" / "meta.json").read_text())
    assert meta["backend"] == "ray" and meta["cells"]["ok"] == len(cells)
    # resuming on Ray skips the finished cells too
    again = run_sweep(cells, backend="ray", out=tmp_path / "ray", progress=False)
    assert (again.ran, again.skipped) == (0, len(cells))


def test_ray_failures_are_recorded_per_cell(local_ray) -> None:
    df = evaluate(
        "fixtures_agents:FailingAgent",
        "hbo/RKHS-SE-Spike-v0",
        seeds=2,
        horizon=20,
        backend="ray",
        on_error="record",
    )
    assert df.empty and len(df.attrs["failures"]) == 2
    assert "deliberate failure" in df.attrs["failures"][0]["traceback"]
