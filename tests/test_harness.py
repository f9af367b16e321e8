"""The harness's Python API: agent specs, seeding, records, failures, resumption, registry."""

from __future__ import annotations

import json
import pickle
import sys

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from fixtures_agents import CountingUniform, FailingAgent, GreedyMean, Uniform

import hbo_envs  # noqa: F401
from hbo_envs.harness import (
    COLUMNS,
    AgentSpec,
    CellFailure,
    CellSpec,
    agent_seed,
    build_cells,
    coverage_grid,
    evaluate,
    parse_agent,
    parse_seeds,
    record_grid,
    run_cell,
    run_sweep,
)
from hbo_envs.harness.specs import slug
from hbo_envs.judging.experiments import EXPERIMENTS, LogT, PowerT

ENV = "hbo/RKHS-SE-Spike-v0"  # fixed f, cheap to build
ENV_T = "hbo/RKHS-SE-StudentT-v0"


# -- specs ---------------------------------------------------------------------------------
def test_labels_and_cli_agent_syntax() -> None:
    assert AgentSpec("gp-ucb").label == "gp-ucb"
    assert AgentSpec("tgp-ucb", {"schedule": "theory", "delta": 0.05}).label == (
        "tgp-ucb[delta=0.05,schedule=theory]"
    )
    assert AgentSpec("gp-ucb", {"beta": LogT(), "b": PowerT(0.25)}).label == (
        "gp-ucb[b=t^1/4,beta=ln t]"
    )
    assert AgentSpec(GreedyMean).label == "greedy-mean"
    assert AgentSpec(GreedyMean, {"explore": 2}).label == "greedy-mean[explore=2]"
    assert AgentSpec("fixtures_agents:Uniform").label == "uniform"
    assert AgentSpec(Uniform()).kind == "instance"
    assert AgentSpec("x", label="mine").label == "mine"
    spec = parse_agent("tgp-ucb[schedule=theory,delta=0.05,flag=true]")
    assert spec.source == "tgp-ucb"
    assert spec.params == {"schedule": "theory", "delta": 0.05, "flag": True}
    assert parse_agent("fixtures_agents:GreedyMean[explore=3]").params == {"explore": 3}
    with pytest.raises(ValueError, match="key=value"):
        parse_agent("gp-ucb[oops]")
    with pytest.raises(ValueError, match="instance"):
        AgentSpec(Uniform(), {"x": 1})
    with pytest.raises(ValueError, match="cannot be imported"):
        AgentSpec("no_such_module_xyz:Agent").build()


def test_parse_seeds() -> None:
    assert parse_seeds("0-4") == (0, 1, 2, 3, 4)
    assert parse_seeds("3,0,7-8,3") == (3, 0, 7, 8)
    for bad in ("", "a", "5-2", "-1"):
        with pytest.raises(ValueError, match="seeds"):
            parse_seeds(bad)


def test_run_names_are_predictable_and_file_safe() -> None:
    spec = CellSpec(ENV, AgentSpec("gp-ucb", {"beta": LogT()}), 3)
    assert spec.run_name == "hbo/RKHS-SE-Spike-v0__gp-ucb[beta=ln t]__3"
    assert spec.file_stem == "hbo_RKHS-SE-Spike-v0__gp-ucb[beta=ln_t]__3"
    assert slug("a/b c:d") == "a_b_c_d"


def test_agent_seed_is_a_distinct_stream() -> None:
    seeds = [agent_seed(s) for s in range(100)]
    assert len(set(seeds)) == 100 and all(a != s for a, s in zip(seeds, range(100), strict=True))
    assert agent_seed(7) == agent_seed(7)


def test_experiment_params_pickle_and_compare() -> None:
    assert pickle.loads(pickle.dumps(PowerT(0.25))) == PowerT(0.25)
    assert LogT()(1) == 0.0 and LogT()(np.e**2) == pytest.approx(2.0)
    assert PowerT(0.25)(16) == pytest.approx(2.0)


# -- records ---------------------------------------------------------------------------------
def test_record_grid_small_and_large() -> None:
    np.testing.assert_array_equal(record_grid(300), np.arange(1, 301))
    g = record_grid(20_000)
    assert g[0] == 1 and g[-1] == 20_000 and np.all(np.diff(g) > 0)
    assert set(range(1, 101)) <= set(g.tolist())
    assert g.size <= 500
    c = coverage_grid(20_000, 20)
    assert c[-1] == 20_000 and c[0] == 1 and c.size <= 21
    assert set(c.tolist()) <= set(record_grid(20_000, extra=c).tolist())


# -- cells ---------------------------------------------------------------------------------
def _manual_regret(env_id: str, agent, seed: int, horizon: int) -> tuple[float, list[float]]:
    env = gym.make(env_id, horizon=horizon)
    env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=agent_seed(seed))
    total, cums = 0.0, []
    for _ in range(horizon):
        a = agent.act()
        _, r, _, _, info = env.step(a)
        agent.update(a, r)
        total += info["regret"]
        cums.append(total)
    return total, cums


def test_cell_matches_a_hand_written_rollout() -> None:
    res = run_cell(CellSpec(ENV_T, AgentSpec(GreedyMean), seed=4, horizon=250))
    assert res.status == "ok"
    df = res.records
    assert list(df.columns) == list(COLUMNS)
    assert df["t"].tolist() == list(range(1, 251))  # short horizon: every round
    total, cums = _manual_regret(ENV_T, GreedyMean(), 4, 250)
    np.testing.assert_allclose(df["regret"].to_numpy(), cums, rtol=0, atol=1e-9)
    np.testing.assert_allclose(df["avg_regret"], df["regret"] / df["t"])
    assert res.info["R_T"] == pytest.approx(total)
    assert np.all(np.diff(df["wall_time"]) >= 0) and np.all(df["agent_time"] <= df["wall_time"])
    assert df["lower_bound"].isna().all()


def test_coverage_only_at_checkpoints_and_only_with_posterior() -> None:
    spec = CellSpec(ENV, AgentSpec(GreedyMean), 0, horizon=200, coverage_points=5)
    df = run_cell(spec).records
    at = set(coverage_grid(200, 5).tolist())
    cov = df.set_index("t")["coverage"]
    assert set(cov.dropna().index) == at
    assert ((cov.dropna() >= 0) & (cov.dropna() <= 1)).all()
    df2 = run_cell(CellSpec(ENV, AgentSpec(Uniform), 0, horizon=50)).records
    assert df2["coverage"].isna().all()


def test_agent_sees_only_the_problem() -> None:
    seen = {}

    class Spy(Uniform):
        name = "spy"

        def reset(self, problem, *, seed=None):
            seen["problem"] = problem
            seen["seed"] = seed
            super().reset(problem, seed=seed)

        def update(self, action, reward):
            seen.setdefault("rewards", []).append((type(action), type(reward)))

    run_cell(CellSpec(ENV, AgentSpec(Spy()), 5, horizon=10))
    assert isinstance(seen["problem"], hbo_envs.Problem)
    assert seen["seed"] == agent_seed(5)
    assert {r for _, r in seen["rewards"]} == {float}


def test_failing_agent_fails_its_cell_with_traceback() -> None:
    res = run_cell(CellSpec(ENV, AgentSpec(FailingAgent, {"fail_at": 3}), 0, horizon=20))
    assert res.status == "failed" and res.records is None
    assert "deliberate failure at round 3" in res.error
    assert "Traceback" in res.error and res.info["error_type"] == "RuntimeError"


# -- evaluate / sweeps ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "agent", [GreedyMean, GreedyMean(), "fixtures_agents:GreedyMean", lambda: GreedyMean()]
)
def test_evaluate_accepts_every_agent_form(agent) -> None:
    df = evaluate(agent, ENV, seeds=[0, 2], horizon=60, workers=1)
    assert sorted(df["seed"].unique()) == [0, 2]
    assert df.groupby("seed")["t"].max().tolist() == [60, 60]
    ref = evaluate(GreedyMean, ENV, seeds=[0, 2], horizon=60, workers=1)
    np.testing.assert_array_equal(df["regret"].to_numpy(), ref["regret"].to_numpy())


def test_evaluate_is_deterministic_across_processes() -> None:
    a = evaluate("fixtures_agents:GreedyMean", ENV_T, seeds=3, horizon=120, workers=1)
    b = evaluate("fixtures_agents:GreedyMean", ENV_T, seeds=3, horizon=120, workers=2)
    cols = ["env_id", "agent", "seed", "t", "regret", "avg_regret", "coverage"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_evaluate_raises_or_records_failures() -> None:
    with pytest.raises(CellFailure, match="deliberate failure"):
        evaluate(FailingAgent, ENV, seeds=2, horizon=10, workers=1)
    df = evaluate(FailingAgent, ENV, seeds=2, horizon=10, workers=1, on_error="record")
    assert df.empty and len(df.attrs["failures"]) == 2


def test_sweep_resume_and_fingerprint(tmp_path, monkeypatch) -> None:
    counter = tmp_path / "count.txt"
    monkeypatch.setenv("HBO_TEST_COUNTER", str(counter))
    cells = build_cells([ENV], [AgentSpec(CountingUniform)], 3, horizon=30)
    r1 = run_sweep(cells, out=tmp_path / "out", workers=1, progress=False)
    assert (r1.ran, r1.skipped) == (3, 0)
    assert len(counter.read_text().split()) == 1 + 3  # run_sweep validates the agent once
    r2 = run_sweep(cells, out=tmp_path / "out", workers=1, progress=False)
    assert (r2.ran, r2.skipped) == (0, 3)
    assert len(counter.read_text().split()) == 1 + 3  # nothing re-ran, nothing validated
    pd.testing.assert_frame_equal(r1.records, r2.records)
    more = build_cells([ENV], [AgentSpec(CountingUniform)], 5, horizon=30)
    r3 = run_sweep(more, out=tmp_path / "out", workers=1, progress=False)
    assert (r3.ran, r3.skipped) == (2, 3)
    other = build_cells([ENV], [AgentSpec(CountingUniform)], 3, horizon=31)
    with pytest.raises(ValueError, match="different configuration"):
        run_sweep(other, out=tmp_path / "out", workers=1, progress=False)
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["cells"] == {"total": 5, "ok": 5, "failed": 0, "skipped_as_finished": 3}


def test_failed_cells_are_retried_on_resume(tmp_path) -> None:
    bad = build_cells([ENV], [AgentSpec(FailingAgent, label="flaky")], 2, horizon=10)
    r1 = run_sweep(bad, out=tmp_path, workers=1, progress=False)
    assert len(r1.failures) == 2 and r1.records.empty
    st = json.loads(next((tmp_path / "cells").glob("*.json")).read_text())
    assert st["status"] == "failed" and "deliberate failure" in st["traceback"]
    # failed cells are not "finished": a fixed agent under the same label reruns them
    good = build_cells([ENV], [AgentSpec(Uniform, label="flaky")], 2, horizon=10)
    r2 = run_sweep(good, out=tmp_path, workers=1, progress=False)
    assert (r2.ran, r2.skipped, len(r2.failures)) == (2, 0, 0)
    # ... whereas a finished cell with another configuration is never silently replaced
    with pytest.raises(ValueError, match="different configuration"):
        run_sweep(bad[:1], out=tmp_path, workers=1, progress=False)


def test_build_cells_validates() -> None:
    with pytest.raises(ValueError, match="not registered"):
        build_cells(["hbo/Nope-v0"], [AgentSpec(Uniform)], 1)
    with pytest.raises(ValueError, match="distinct"):
        build_cells([ENV], [AgentSpec(Uniform), AgentSpec("fixtures_agents:Uniform")], 1)
    with pytest.raises(ValueError, match="seeds"):
        build_cells([ENV], [AgentSpec(Uniform)], [])


# -- real agents and the experiment registry -----------------------------------------------
def test_registered_agents_run_in_the_harness() -> None:
    agents = pytest.importorskip("agents")
    for name in agents.available():
        df = evaluate(name, ENV_T, seeds=1, horizon=40, workers=1)
        assert df["t"].max() == 40 and np.isfinite(df["regret"]).all()


def test_experiment_registry_is_consistent() -> None:
    for name, e in EXPERIMENTS.items():
        assert e.name == name
        for env in e.envs:
            assert env in hbo_envs.ENV_IDS
        labels = [a.label for a in e.paper + e.extra]
        assert len(labels) == len(set(labels))
        assert e.quick_seeds <= e.seeds
        for a in e.paper + e.extra:
            pickle.dumps(a)  # runs on process pools and Ray
        assert e.kind in ("regret", "confidence", "runtime", "corruption", "exponent")
        assert e.metric in ("regret", "avg_regret")
    specs, skipped = EXPERIMENTS["cg2019-fig1a"].agent_specs(available={"tgp-ucb"})
    assert [s.label for s in specs] == ["tgp-ucb", "tgp-ucb[config=tuned]"]  # and its tuned row
    assert "ata-gp-ucb-qff" in skipped and "gp-ucb" in skipped
    fig1f = EXPERIMENTS["cg2019-fig1f"]
    assert fig1f.snapshot and {a.source for a in fig1f.paper} <= {"gp-ucb", "tgp-ucb"}


def test_plot_curves_are_the_pivot_table_of_the_records() -> None:
    """plotting._curves (two np.unique calls on a sweep's records) gives exactly, bit for
    bit, the seeds x rounds pivot table it replaced, also when seeds recorded different
    rounds or a value is NaN (those take the pivot table); a repeated (seed, t), the same
    cell twice, is refused (the pivot table silently kept the first)."""
    from hbo_envs.harness.plotting import _curves

    def pivot(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
        piv = g.pivot_table(index="seed", columns="t", values=metric, aggfunc="first")
        piv = piv.dropna(axis=1)
        return piv.columns.to_numpy(dtype=float), piv.to_numpy(dtype=float)

    rng = np.random.default_rng(0)
    swept = evaluate(Uniform, "hbo/RKHS-SE-Spike-v0", seeds=[3, 0, 7], horizon=700, workers=1)
    ragged = pd.DataFrame(
        {"seed": [2, 0, 0, 1, 1, 1, 2], "t": [1, 2, 1, 3, 1, 2, 3], "regret": rng.random(7)}
    )
    cases = [
        swept,
        swept.sample(frac=1.0, random_state=1),  # any row order
        swept[~((swept["seed"] == 7) & (swept["t"] == 700))],  # a round one seed lacks
        ragged,
        ragged.astype({"regret": "float32"}),
        ragged.assign(regret=[0.5, np.nan, 1, 2, 3, 4, 5]),
    ]
    for g in cases:
        for metric in ("regret", "avg_regret") if "avg_regret" in g else ("regret",):
            (t1, c1), (t2, c2) = _curves(g, metric), pivot(g, metric)
            assert (t1.dtype, c1.dtype, t1.shape, c1.shape) == (
                t2.dtype,
                c2.dtype,
                t2.shape,
                c2.shape,
            )
            assert t1.tobytes() == t2.tobytes() and c1.tobytes() == c2.tobytes()
    t, c = _curves(swept, "regret")
    assert c.shape == (3, len(t)) and t[-1] == 700
    with pytest.raises(ValueError, match=r"hold 3 cell\(s\) more than once \(env , agent , seed 2"):
        _curves(pd.concat([ragged, ragged.assign(regret=-1.0)]), "regret")


def test_env_lower_bound_hook_reaches_records_and_plot(tmp_path) -> None:
    from hbo_envs.envs.chowdhury_gopalan import TruncationDemoEnv
    from hbo_envs.harness.plotting import plot_regret

    class WithLowerBound(TruncationDemoEnv):
        def regret_lower_bound(self, t):
            return 0.1 * np.asarray(t, dtype=float) ** 0.5

    if "hbotest/LowerBound-v0" not in gym.registry:
        gym.register(id="hbotest/LowerBound-v0", entry_point=WithLowerBound)
    df = evaluate(Uniform, "hbotest/LowerBound-v0", seeds=2, horizon=40, workers=1)
    np.testing.assert_allclose(df["lower_bound"], 0.1 * np.sqrt(df["t"]))
    (png,) = plot_regret(df, [tmp_path / "lb.png"])
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize("bad", ["soon", "0", "-2", "nan", "inf"])
def test_a_bad_progress_interval_is_an_error_naming_it_before_any_cell_runs(
    bad, tmp_path, monkeypatch
) -> None:
    """$HBO_PROGRESS_INTERVAL used to fall back to 5 s silently on a bad value."""
    monkeypatch.setenv("HBO_PROGRESS_INTERVAL", bad)
    cells = build_cells([ENV], [AgentSpec(Uniform)], 1, horizon=20)
    with pytest.raises(ValueError, match=f"HBO_PROGRESS_INTERVAL.*positive.*{bad!r}"):
        run_sweep(cells, out=tmp_path / "r", workers=1)
    assert not (tmp_path / "r").exists()  # nothing ran, nothing written
    monkeypatch.setenv("HBO_PROGRESS_INTERVAL", "0.5")
    assert run_sweep(cells, out=tmp_path / "r", workers=1).ran == 1


#: An agent module whose import takes ``_SLOW_IMPORT_S`` (a submitted module doing work at
#: import, or the first import of the ``agents`` package in a fresh worker).
_SLOW_IMPORT_S = 0.4
_SLOW_MODULE = f"""
import time

time.sleep({_SLOW_IMPORT_S})
from agents.baselines.uniform import RandomAgent as SlowImportAgent  # batchable: its type
"""


@pytest.mark.parametrize("batched", [False, True])
def test_an_agents_import_is_not_charged_to_its_first_cell(tmp_path, monkeypatch, batched):
    """A cell's agent seconds are the agent's own work: the harness imports the agent's code
    (``AgentSpec.load``) before its clock starts, so the first cell a process runs does not
    carry a one-time import (a 50-round GP-UCB cell recorded 33 ms, 480 us a round, of
    importing ``agents`` in a fresh worker). The explicit label keeps the spec from
    importing the module when it is made, as a spec unpickled in a worker does not."""
    from hbo_envs.harness.cell import run_batch

    name = f"slow_import_{'batched' if batched else 'single'}"
    (tmp_path / f"{name}.py").write_text(_SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    agent = AgentSpec(f"{name}:SlowImportAgent", label="slow-import")
    specs = [CellSpec("hbo/RKHS-SE-StudentT-v0", agent, seed, horizon=20) for seed in (0, 1)]
    results = run_batch(specs) if batched else [run_cell(specs[0])]
    assert name in sys.modules  # the cell did import it
    for res in results:
        assert res.status == "ok", res.error
        assert res.info.get("batched", 1) == len(results)  # the batched path did run
        assert res.info["agent_time_s"] < _SLOW_IMPORT_S / 4
