"""Seeds in one process (issue 21, item 5): batched runs are bit-identical to single runs.

A batch of seeds (:func:`hbo_envs.harness.cell.run_batch`, :mod:`agents.batch`) must give
exactly the numbers of running each seed alone: regret at every recorded round, coverage,
the final posterior, every agent's actions. Equality here is ``==`` on float64, not a
tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from agents import make
from agents.batch import (
    BATCH_CACHE_BYTES,
    BATCH_MIN_WORK,
    BATCHED,
    MAX_BATCH,
    GPUCBBatch,
    LoopBatch,
    batch_sizes,
    make_batch,
    max_batch,
)
from agents.gp.base import TIE_RTOL, argmax_rows
from agents.gp.engine import EngineBatch, GPPosteriorEngine
from agents.gp.gp_ucb import GPUCB
from hbo_envs.harness import evaluate
from hbo_envs.harness.cell import run_batch, run_cell
from hbo_envs.harness.runner import build_cells, plan_tasks
from hbo_envs.harness.specs import AgentSpec
from hbo_envs.judging.experiments import EXPERIMENTS

TIMING = ["wall_time", "agent_time"]

HEAVY = "hbo/RKHS-SE-StudentT-v0"
CORRUPTED = "hbo/Corrupted-SE-Adaptive-v0"


def _cells(env, agent, seeds, horizon, **kw):
    spec = agent if isinstance(agent, AgentSpec) else AgentSpec(agent)
    return build_cells([env], [spec], seeds, horizon=horizon, **kw)


def _same(one, batch):
    assert [r.status for r in one] == ["ok"] * len(one), [r.error for r in one]
    assert [r.status for r in batch] == ["ok"] * len(batch), [r.error for r in batch]
    for a, b in zip(one, batch, strict=True):
        assert a.spec == b.spec
        pd.testing.assert_frame_equal(
            a.records.drop(columns=TIMING), b.records.drop(columns=TIMING), check_exact=True
        )
        assert (a.snapshot is None) == (b.snapshot is None)
        if a.snapshot is not None:
            pd.testing.assert_frame_equal(a.snapshot, b.snapshot, check_exact=True)
        assert a.info["R_T"] == b.info["R_T"]
        assert a.info["actions_sha256"] == b.info["actions_sha256"]  # the same arms, too
        assert a.info["actions_prefix"] == b.info["actions_prefix"]


@pytest.mark.parametrize(
    "env, agent",
    [
        (HEAVY, "random"),
        (HEAVY, "gp-ucb"),
        (HEAVY, AgentSpec("gp-ucb", {"schedule": "theory"})),  # beta_t reads info_gain
        (HEAVY, "tgp-ucb"),
        (HEAVY, "ca-tgp-ucb"),
        (CORRUPTED, "gp-ucb-corruption"),
        (CORRUPTED, "tgp-ucb"),
    ],
    ids=str,
)
def test_batched_cells_equal_single_cells_bit_for_bit(env, agent):
    cells = _cells(env, agent, range(5), 400, snapshot=True, coverage_points=8)
    batch = run_batch(cells)
    assert all(r.info["batched"] == len(cells) for r in batch)
    _same([run_cell(c) for c in cells], batch)


def test_every_batched_agent_is_tested_above():
    tested = {"random", "gp-ucb", "tgp-ucb", "ca-tgp-ucb", "gp-ucb-corruption"}
    assert {make(n).__class__ for n in tested} == set(BATCHED)


def test_unbatchable_agents_run_alone_with_the_same_numbers():
    # MoM-GP-UCB observes only at the end of an episode: not batched, same result.
    cells = _cells(HEAVY, "mom-gp-ucb", range(3), 200)
    batch = run_batch(cells)
    assert all("batched" not in r.info for r in batch)
    _same([run_cell(c) for c in cells], batch)


def test_run_batch_refuses_cells_that_differ_in_more_than_the_seed():
    cells = _cells(HEAVY, "gp-ucb", [0], 50) + _cells(HEAVY, "tgp-ucb", [1], 50)
    with pytest.raises(ValueError, match="differ only in their seed"):
        run_batch(cells)


def test_a_failing_seed_fails_alone_and_the_others_keep_their_numbers(monkeypatch):
    cells = _cells(HEAVY, "gp-ucb", range(4), 120)
    expected = [run_cell(c) for c in cells]
    reset, observe = GPUCB.reset, GPUCB._observe

    def tagged_reset(self, problem, *, seed=None):
        self._test_seed = seed
        reset(self, problem, seed=seed)

    from hbo_envs.harness.specs import agent_seed

    bad = agent_seed(2)

    def failing_observe(self, arm, reward):
        if self._test_seed == bad and self.t_ == 50:
            raise RuntimeError("boom at round 50")
        observe(self, arm, reward)

    monkeypatch.setattr(GPUCB, "reset", tagged_reset)
    monkeypatch.setattr(GPUCB, "_observe", failing_observe)
    got = run_batch(cells)
    assert [r.status for r in got] == ["ok", "ok", "failed", "ok"]
    assert "boom at round 50" in got[2].error and "Traceback" in got[2].error
    _same([expected[i] for i in (0, 1, 3)], [got[i] for i in (0, 1, 3)])


def test_evaluate_with_and_without_batches_on_two_workers_agree():
    kw = dict(seeds=6, horizon=300, workers=2, progress=False)
    a = evaluate("tgp-ucb", HEAVY, batch=True, **kw)
    b = evaluate("tgp-ucb", HEAVY, batch=False, **kw)
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING), check_exact=True)


def test_batched_timing_is_each_runs_share():
    cells = _cells(HEAVY, "gp-ucb", range(4), 300)
    res = run_batch(cells)
    shares = [r.records["agent_time"].iloc[-1] for r in res]
    assert len(set(shares)) == 1 and shares[0] > 0  # one batch, split evenly
    assert all(r.info["agent_time_s"] == shares[0] for r in res)
    assert all(0 < r.info["wall_time_s"] < 60 for r in res)


# ---------------------------------------------------------------- task planning
def test_plan_tasks_batches_what_can_batch_and_keeps_the_rest_one_cell_a_task():
    least, _ = batch_sizes(100)  # HEAVY has 100 arms
    cells = build_cells(
        [HEAVY],
        [AgentSpec("gp-ucb"), AgentSpec("ata-gp-ucb-qff"), AgentSpec("random")],
        range(least + 2),
        horizon=50,
    )
    tasks = plan_tasks(cells, workers=2)
    kinds = [(t[0].agent.label, len(t)) for t in tasks]
    k = least + 2
    assert kinds == [("gp-ucb", k)] + [("ata-gp-ucb-qff", 1)] * k + [("random", k)]
    assert sorted(c.run_name for t in tasks for c in t) == sorted(c.run_name for c in cells)
    assert [len(t) for t in plan_tasks(cells, workers=2, batch=False)] == [1] * (3 * k)


def test_plan_tasks_splits_a_lone_batch_over_the_workers_and_respects_the_sizes(monkeypatch):
    import agents.batch as B

    cells = _cells(HEAVY, "gp-ucb", range(10), 50)
    monkeypatch.setattr(B, "BATCH_MIN_WORK", 200)  # at least 2 runs a batch at n = 100
    assert [len(t) for t in plan_tasks(cells, workers=1)] == [10]
    assert [len(t) for t in plan_tasks(cells, workers=2)] == [5, 5]
    assert [len(t) for t in plan_tasks(cells, workers=3)] == [4, 4, 2]
    many = _cells(HEAVY, "gp-ucb", range(MAX_BATCH + 6), 50)
    assert [len(t) for t in plan_tasks(many, workers=1)] == [MAX_BATCH, 6]
    # at least 5 runs: the pieces of 4 and 2 for three workers run one cell a task, and
    # the last piece of MAX_BATCH + 3 runs (3) too; the numbers are the same either way
    monkeypatch.setattr(B, "BATCH_MIN_WORK", 500)
    assert [len(t) for t in plan_tasks(cells, workers=2)] == [5, 5]
    assert [len(t) for t in plan_tasks(cells, workers=3)] == [1] * 10
    more = _cells(HEAVY, "gp-ucb", range(MAX_BATCH + 3), 50)
    assert [len(t) for t in plan_tasks(more, workers=1)] == [MAX_BATCH, 1, 1, 1]
    # the default: below BATCH_MIN_WORK / n runs (the quick start's pieces) no batch
    monkeypatch.undo()
    least, _ = batch_sizes(100)
    few = _cells(HEAVY, "gp-ucb", range(least - 1), 50)
    assert [len(t) for t in plan_tasks(few, workers=1)] == [1] * (least - 1)
    assert [len(t) for t in plan_tasks(_cells(HEAVY, "gp-ucb", range(least), 50), 1)] == [least]


def test_batch_sizes_follow_the_work_per_call_and_the_cache():
    for n in (1, 50, 100, 201, 400, 625, 1000, 5000):
        least, most = batch_sizes(n)
        assert least == max(2, math.ceil(BATCH_MIN_WORK / n))  # fewer arms: more runs
        assert 1 <= most <= max_batch(n)
        assert most == 1 or 24.0 * n * n * most <= BATCH_CACHE_BYTES
    assert batch_sizes(100) == (10, MAX_BATCH)
    assert batch_sizes(625)[1] < max_batch(625)  # the cache, not memory, caps it
    assert batch_sizes(5000)[0] > batch_sizes(5000)[1]  # no batch pays (nor fits)
    for bad in (0, -3, 2.5, True, "100"):
        with pytest.raises(ValueError, match=r"'n' parameter of batch_sizes.*integer in \[1"):
            batch_sizes(bad)
        with pytest.raises(ValueError, match=r"'n' parameter of max_batch"):
            max_batch(bad)


def test_max_batch_bounds_the_stacked_covariances():
    assert max_batch(100) == MAX_BATCH
    assert max_batch(5000) == 1  # Park-Lee's 5-D Griewank: 200 MB a covariance
    for n in (100, 1000, 2000, 3000):
        assert 24.0 * n * n * max_batch(n) <= 2**28 or max_batch(n) == 1


def test_runtime_experiments_run_unbatched():
    assert EXPERIMENTS["pl2024-table1"].batches is False  # compares agent seconds
    assert EXPERIMENTS["cg2019-fig1a"].batches is True


# ---------------------------------------------------------------- engine and argmax
def _engines(K, B, **kw):
    return [GPPosteriorEngine(K, 0.7, **kw) for _ in range(B)]


@pytest.mark.parametrize("r", [1, 3])
def test_engine_batch_equals_separate_engines_through_refreshes(r):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.1)
    B = 4
    alone = _engines(K, B, n_outputs=r, refresh_every=17)
    stacked = _engines(K, B, n_outputs=r, refresh_every=17)
    batch = EngineBatch(stacked)
    for _ in range(60):
        arms = rng.integers(30, size=B)
        ys = rng.standard_t(2, size=(B, r))
        for b in range(B):
            y = float(ys[b, 0]) if r == 1 else ys[b]
            alone[b].observe(int(arms[b]), y)
            stacked[b].observe(int(arms[b]), y)
        batch.flush()
        assert np.array_equal(batch.std(), np.stack([e.std() for e in alone]))
    for a, s in zip(alone, stacked, strict=True):
        assert np.array_equal(a.cov, s.cov) and np.array_equal(a.mean, s.mean)
        assert np.array_equal(a.sums, s.sums) and np.array_equal(a.counts, s.counts)
        assert a.info_gain == s.info_gain and a.t == s.t == 60
    batch.release()
    stacked[0].observe(3, 1.0 if r == 1 else np.ones(r))  # directly again, own arrays
    assert stacked[0].t == 61 and stacked[1].t == 60


def test_engine_batch_refuses_what_it_cannot_stack_or_apply():
    K = np.eye(3)
    with pytest.raises(ValueError, match="at least one engine"):
        EngineBatch([])
    with pytest.raises(ValueError, match="one shape"):
        EngineBatch([GPPosteriorEngine(K, 1.0), GPPosteriorEngine(np.eye(4), 1.0)])
    e = _engines(K, 2)
    with pytest.raises(ValueError, match="same engine twice"):
        EngineBatch([e[0], e[0]])
    batch = EngineBatch(e)
    with pytest.raises(ValueError, match="noise_var=0.5"):
        e[0].observe(0, 1.0, noise_var=0.5)
    e[0].observe(0, 1.0)
    with pytest.raises(RuntimeError, match="observed twice"):
        e[0].observe(1, 1.0)
    with pytest.raises(RuntimeError, match=r"engines \[1\] queued no observation"):
        batch.flush()


def test_argmax_rows_breaks_ties_with_each_rows_own_generator():
    scores = np.array(
        [[0.0, 1.0, 1.0 - TIE_RTOL / 2, 0.2], [3.0, 2.0, 1.0, 0.0], [5.0, 5.0, 5.0, 5.0]]
    )
    seeds = (1, 2, 3)
    rows = argmax_rows(scores, [np.random.default_rng(s) for s in seeds], "t", 1)
    alone = [
        argmax_rows(scores[b : b + 1], [np.random.default_rng(s)], "t", 1)[0]
        for b, s in enumerate(seeds)
    ]
    assert rows.tolist() == alone
    assert rows[0] in (1, 2) and rows[1] == 0
    counts = np.bincount(
        [argmax_rows(scores[2:], [np.random.default_rng(s)], "t", 1)[0] for s in range(400)],
        minlength=4,
    )
    assert counts.min() > 60  # uniform over the four tied arms (expected 100 each)
    with pytest.raises(FloatingPointError, match="non-finite acquisition score nan at round 7"):
        argmax_rows(np.array([[0.0, 1.0], [math.nan, 0.0]]), [None, None], "t", 7)


def test_single_run_argmax_is_argmax_rows_of_one_row():
    """The single-run fast path (``GPUCBAgent._argmax``, a scalar argmax) picks what
    :func:`argmax_rows` picks for the one row and leaves the generator in the same state,
    on rows with no tie, near-ties inside and outside ``TIE_RTOL`` and all-equal rows."""
    agent = GPUCB()
    gen = np.random.default_rng(0)
    for k in range(300):
        row = np.round(gen.normal(size=12), 1)  # many exact ties
        if k % 3 == 0:
            row[gen.integers(12)] = row.max() * (1.0 - TIE_RTOL / 4)  # tied within rtol
        if k % 5 == 0:
            row[gen.integers(12)] = row.max() - 1e-9  # not tied
        if k % 7 == 0:
            row[:] = 2.5
        agent.rng_, agent.t_ = np.random.default_rng(k), 1
        ref_rng = np.random.default_rng(k)
        assert agent._argmax(row) == argmax_rows(row[None, :], [ref_rng], "t", 1)[0]
        assert agent.rng_.bit_generator.state == ref_rng.bit_generator.state
    with pytest.raises(FloatingPointError, match="non-finite acquisition score inf at round 4"):
        agent.t_ = 4
        agent._argmax(np.array([0.0, math.inf]))


def test_make_batch_picks_the_batch_or_declines():
    from hbo_envs.kernels import SquaredExponential
    from hbo_envs.problem import Problem

    X = np.linspace(0, 1, 6)[:, None]
    p = Problem(
        points=X,
        kernel_matrix=SquaredExponential(0.2)(X),
        kernel=SquaredExponential(0.2),
        B=1,
        alpha=1,
        v=4,
        nu=3,
        sup_f=1,
        horizon=10,
    )

    def reset(name, k=3):
        out = [make(name) for _ in range(k)]
        for s, a in enumerate(out):
            a.reset(p, seed=s)
        return out

    assert isinstance(make_batch(reset("gp-ucb")), GPUCBBatch)
    assert isinstance(make_batch(reset("random")), LoopBatch)
    assert make_batch(reset("mom-gp-ucb")) is None
    assert make_batch(reset("gp-ucb", 1)) is None
    assert make_batch(reset("gp-ucb", 1) + reset("tgp-ucb", 1)) is None

    class Sub(GPUCB):
        pass

    subs = [Sub() for _ in range(2)]
    for s, a in enumerate(subs):
        a.reset(p, seed=s)
    assert make_batch(subs) is None  # a subclass may change act(): never batched


def test_a_bad_reward_in_a_batch_raises_that_runs_own_error():
    from hbo_envs.harness.cell import make_env

    problem = make_env(HEAVY, 20, {}).unwrapped.problem
    runs = [make("gp-ucb") for _ in range(3)]
    for s, a in enumerate(runs):
        a.reset(problem, seed=s)
    batch = make_batch(runs)
    actions = batch.act()
    with pytest.raises(ValueError, match="'reward'.*nan"):
        batch.update(actions, np.array([1.0, math.nan, 1.0]))


def test_cli_no_batch_gives_the_same_regret(tmp_path, capsys):
    # in this process through main(argv), what the console script runs (a fresh
    # interpreter per run only added ~1 s of imports each)
    from hbo_envs.cli import main

    def run(*extra):
        out = tmp_path / ("a" if extra else "b")
        args = ["run", "--env", HEAVY, "--agent", "gp-ucb", "--seeds", "0-3", "--horizon", "100"]
        args += ["--workers", "1", "--out", str(out), "--no-progress", *extra]
        assert main(args) == 0, capsys.readouterr().err
        return pd.read_parquet(out / "records.parquet").drop(columns=TIMING)

    pd.testing.assert_frame_equal(run("--no-batch"), run(), check_exact=True)


def test_an_agent_instance_is_never_batched_with_itself():
    from agents.baselines.uniform import RandomAgent

    kw = dict(seeds=3, horizon=80, workers=1, progress=False)
    shared = evaluate(RandomAgent(), HEAVY, batch=True, **kw)
    alone = evaluate(RandomAgent(), HEAVY, batch=False, **kw)
    pd.testing.assert_frame_equal(
        shared.drop(columns=TIMING), alone.drop(columns=TIMING), check_exact=True
    )
    same = make("random")
    assert make_batch([same, same]) is None


def test_batch_update_and_run_batch_name_bad_shapes_and_empty_input():
    from hbo_envs.harness.cell import make_env

    problem = make_env(HEAVY, 20, {}).unwrapped.problem
    for name in ("gp-ucb", "random"):
        runs = [make(name) for _ in range(3)]
        for s, a in enumerate(runs):
            a.reset(problem, seed=s)
        batch = make_batch(runs)
        actions = batch.act()
        with pytest.raises(ValueError, match=r"one entry per run, shape \(3,\); got shapes"):
            batch.update(actions[:2], np.ones(2))
        with pytest.raises(ValueError, match=r"got shapes \(3,\) and \(3, 1\)"):
            batch.update(actions, np.ones((3, 1)))
    with pytest.raises(ValueError, match="at least one cell; got none"):
        run_batch([])
