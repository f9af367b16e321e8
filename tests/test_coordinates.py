"""Coordinates in, coordinates out (hbo_envs.coordinates), the runnable examples, and the
BoTorch agent example through the harness and a leaderboard validate."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import hbo_envs
from agents import check_agent
from hbo_envs.coordinates import AskTellAgent, CoordinateBandit, nearest_index
from hbo_envs.registration import missing_data

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module", params=list(hbo_envs.ENV_IDS))
def env_id(request: pytest.FixtureRequest) -> str:
    if need := missing_data(request.param):
        pytest.skip(f"{request.param} needs the {need!r} data set (hbo-bench data fetch {need})")
    return request.param


def test_nearest_index_by_hand() -> None:
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert [nearest_index(pts, p) for p in pts] == [0, 1, 2, 3]  # exact
    assert nearest_index(pts, [0.4, 0.45]) == 0
    assert nearest_index(pts, [0.9, 0.6]) == 3
    assert nearest_index(pts, [0.5, 0.5]) == 0  # a four-way tie: the lowest index
    one_d = np.array([[0.0], [0.5], [1.0]])
    assert nearest_index(one_d, 0.7) == 1 and nearest_index(one_d, [0.8]) == 2


@pytest.mark.parametrize("bad", [[0.1], [0.1, 0.2, 0.3], [np.nan, 0.0], "ab", None, [True, 0]])
def test_nearest_index_refuses_points_outside_the_domain_shape(bad: object) -> None:
    pts = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"'x' parameter .* shape \(2,\)"):
        nearest_index(pts, bad)


def test_coordinate_bandit_states_the_optimum_like_botorch(env_id: str) -> None:
    bench = CoordinateBandit(env_id, horizon=30).reset(seed=2)
    u = bench.env
    pts, f = u.problem.points, u.objective.values
    assert bench.bounds.shape == (2, bench.dim) and bench.dim == pts.shape[1]
    assert np.array_equal(bench.bounds[0], pts.min(axis=0))
    assert np.array_equal(bench.bounds[1], pts.max(axis=0))
    assert bench.optimal_value == pytest.approx(float(np.max(f)), abs=0)
    # f(x*) equals the stated optimum, and beats random points (BoTorch's test habit)
    for x_star in bench.optimizers:
        x, _ = bench.evaluate(x_star)
        assert tuple(x) == x_star
        if "best" in bench.last_info:  # StockPicking: f changes every round (no fixed f*)
            continue
        assert bench.last_info["regret"] == 0.0
        assert bench.last_info["f"] == bench.optimal_value
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.uniform(bench.bounds[0], bench.bounds[1])
        played, _ = bench.evaluate(x)
        i = int(np.argmin(((pts - x) ** 2).sum(axis=1)))  # the naive nearest
        assert np.array_equal(played, pts[i])
        assert bench.last_info["f"] <= bench.last_info.get("best", bench.optimal_value)


def test_coordinate_bandit_bad_input() -> None:
    with pytest.raises(ValueError, match="'env' parameter of CoordinateBandit"):
        CoordinateBandit("hbo/NoSuch-v0")
    env = gym.make("hbo/GPBandit-v0")
    with pytest.raises(ValueError, match="'make_kwargs' parameter"):
        CoordinateBandit(env, horizon=3)
    with pytest.raises(ValueError, match="'env' parameter"):
        CoordinateBandit(gym.make("CartPole-v1"))
    bench = CoordinateBandit(env).reset(seed=0)
    with pytest.raises(ValueError, match="'x' parameter of CoordinateBandit"):
        bench.evaluate([0.1, 0.2])


class _Grid:
    """Ask/tell optimiser: walks the bounds' diagonal; remembers what it was told."""

    def __init__(self, problem, bounds, seed):
        self.bounds, self.k, self.told = bounds, 0, []
        self.rng = np.random.default_rng(seed)

    def ask(self):
        self.k += 1
        w = (self.k % 7) / 6
        return self.bounds[0] + w * (self.bounds[1] - self.bounds[0]) + self.rng.normal(0, 1e-3)

    def tell(self, x, y):
        self.told.append((np.asarray(x), y))


def test_ask_tell_agent_plays_the_nearest_and_tells_the_played_point() -> None:
    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=10).unwrapped
    env.reset(seed=0)
    agent = AskTellAgent(_Grid, name="grid")
    check_agent(agent, env.problem, rounds=10)
    agent.reset(env.problem, seed=1)
    pts = env.problem.points
    for _ in range(10):
        a = agent.act()
        asked = agent.optimizer.bounds[0] + (agent.optimizer.k % 7) / 6 * np.ptp(pts, axis=0)
        assert abs(pts[a, 0] - asked[0]) <= 0.5 / 99 + 2e-3  # within half a grid step
        _, y, _, _, _ = env.step(a)
        agent.update(a, y)
        assert np.array_equal(agent.optimizer.told[-1][0], pts[a])
        assert agent.optimizer.told[-1][1] == y


def test_ask_tell_agent_bad_input() -> None:
    with pytest.raises(ValueError, match="'factory' parameter"):
        AskTellAgent(3)
    with pytest.raises(ValueError, match="'name' parameter"):
        AskTellAgent(_Grid, name="")
    problem = gym.make("hbo/GPBandit-v0").unwrapped.problem
    with pytest.raises(ValueError, match="'factory' parameter.*ask"):
        AskTellAgent(lambda p, b, s: object()).reset(problem, seed=0)


def test_example_ask_tell_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "ask_tell.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "asked the optimizer, regret 0.0" in out.stdout
    assert "jitter-search mean R_T" in out.stdout


def _botorch_or_skip() -> None:
    try:
        importlib.import_module("botorch")
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI must run the BoTorch example: install the extra, .[botorch]")
        pytest.skip("botorch is not installed (pip install -e '.[botorch]'); CI runs this test")


SUITE = """
[suite]
name = "botorch-smoke"
version = 0
horizon = 32
seeds = [0]
checkpoints = 4
[[envs]]
id = "hbo/RKHS-SE-StudentT-v0"
[aggregation]
bootstrap_reps = 50
"""


def test_botorch_agent_through_harness_and_leaderboard_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _botorch_or_skip()
    import torch

    from hbo_envs.harness import evaluate
    from hbo_envs.leaderboard import load_suite, submit, validate

    monkeypatch.syspath_prepend(str(EXAMPLES))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        from botorch_agent import BoTorchUCB

        check_agent(BoTorchUCB(), rounds=6)
        df = evaluate(BoTorchUCB(), "hbo/GPBandit-v0", seeds=[0], horizon=8, workers=1)
        assert len(df) and np.isfinite(df["regret"]).all() and df["coverage"].notna().any()
        (tmp_path / "botorch-smoke-v0").mkdir()
        (tmp_path / "botorch-smoke-v0" / "suite.toml").write_text(SUITE)
        suite = load_suite("botorch-smoke-v0", root=tmp_path)
        sub = submit(suite, "botorch_agent:BoTorchUCB", {"beta": 4.0}, root=tmp_path, workers=1)
        report = validate(sub, suite=suite)
        assert report.ok, str(report)
    finally:
        torch.set_num_threads(threads)


class _Recorder:
    """Ask/tell optimiser that asks off-grid points (and every third time a candidate exactly)
    and records what ``tell`` receives, with the ``asked`` keyword."""

    def __init__(self, problem, bounds, seed):
        self.points = np.asarray(problem.points, dtype=float)
        self.rng = np.random.default_rng(seed)
        self.bounds, self.asks, self.told = bounds, [], []

    def ask(self):
        if len(self.asks) % 3 == 2:
            x = self.points[self.rng.integers(len(self.points))].copy()  # a candidate
        else:
            x = self.rng.uniform(self.bounds[0], self.bounds[1])
        self.asks.append(np.array(x))
        return x

    def tell(self, x, y, *, asked):
        self.told.append((np.array(x), y, np.array(asked)))


def test_ask_tell_agent_tells_the_played_point_and_the_asked_one() -> None:
    env = gym.make("hbo/Griewank2D-SymPareto-eps02-v0", horizon=12).unwrapped
    env.reset(seed=0)
    agent = AskTellAgent(_Recorder, name="recorder")
    agent.reset(env.problem, seed=4)
    pts = env.problem.points
    differ = 0
    for t in range(12):
        a = agent.act()
        _, y, _, _, _ = env.step(a)
        agent.update(a, y)
        x, told_y, asked = agent.optimizer.told[-1]
        assert np.array_equal(asked, agent.optimizer.asks[t])  # exactly what ask() returned
        assert np.array_equal(x, pts[a]) and told_y == y  # the payoff goes with the played x
        naive = int(np.argmin(((pts - asked) ** 2).sum(axis=1)))
        assert a == naive
        if t % 3 == 2:
            assert np.array_equal(x, asked)  # a candidate asked is a candidate played
        differ += not np.array_equal(x, asked)
    assert differ == 8  # every off-grid ask: the optimiser learns that x_played != x_asked


def _optuna_or_skip() -> None:
    try:
        importlib.import_module("optuna")
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI must run the Optuna example: install the extra, .[optuna]")
        pytest.skip("optuna is not installed (pip install -e '.[optuna]'); CI runs this test")


def _optuna_agent(monkeypatch: pytest.MonkeyPatch) -> object:
    _optuna_or_skip()
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("optuna_agent")


def test_optuna_tpe_study_holds_the_played_points_with_their_payoffs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mod = _optuna_agent(monkeypatch)
    from optuna.trial import TrialState

    env = gym.make("hbo/Griewank2D-SymPareto-eps02-v0", horizon=15).unwrapped
    env.reset(seed=1)
    agent = mod.OptunaTPE(n_startup_trials=4)
    check_agent(agent, env.problem, rounds=6)
    agent.reset(env.problem, seed=3)
    pts = env.problem.points
    played, asked_all = [], []
    for _ in range(15):
        a = agent.act()
        asked_all.append(agent.asked.copy())
        _, y, _, _, _ = env.step(a)
        agent.update(a, y)
        played.append((tuple(pts[a]), y))
    trials = agent.optimizer.study.get_trials(deepcopy=False)
    done = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [t for t in trials if t.state == TrialState.FAIL]
    # the completed trials are exactly the played candidates with their payoffs, in order
    assert [((t.params["x0"], t.params["x1"]), t.value) for t in done] == played
    # a failed trial for every asked point that was not played (none is told a payoff)
    off_grid = [x for x, (p, _) in zip(asked_all, played, strict=True) if tuple(x) != p]
    assert len(failed) == len(off_grid) > 0
    assert [(t.params["x0"], t.params["x1"]) for t in failed] == [tuple(x) for x in off_grid]


def test_optuna_tpe_same_seed_same_actions_and_bad_params_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mod = _optuna_agent(monkeypatch)
    problem = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=20).unwrapped.problem

    def actions(seed: int) -> list[int]:
        agent = mod.OptunaTPE(n_startup_trials=3)
        agent.reset(problem, seed=seed)
        out = []
        for t in range(12):
            a = agent.act()
            agent.update(a, float(np.sin(7.0 * problem.points[a, 0]) + 0.1 * t))
            out.append(a)
        return out

    assert actions(5) == actions(5)
    assert actions(5) != actions(6)
    for bad in ({"n_startup_trials": -1}, {"n_startup_trials": 2.5}, {"multivariate": "yes"}):
        with pytest.raises(ValueError, match=f"'{next(iter(bad))}' parameter of OptunaTPE"):
            mod.OptunaTPE(**bad)


def test_optuna_tpe_through_the_cli_and_a_leaderboard_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The module-level class as the docs show it: ``hbo-bench run --agent
    optuna_agent:OptunaTPE[...]`` and a leaderboard ``submit`` + ``validate``."""
    _optuna_agent(monkeypatch)
    from hbo_envs.cli import main
    from hbo_envs.leaderboard import load_suite, submit, validate

    out = tmp_path / "runs"
    argv = ["run", "--env", "hbo/RKHS-SE-StudentT-v0"]
    argv += ["--agent", "optuna_agent:OptunaTPE[n_startup_trials=3]", "--seeds", "0-1"]
    argv += ["--horizon", "12", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    assert "OptunaTPE[n_startup_trials=3] 2 12 " in capsys.readouterr().out  # 2 seeds, T=12
    (tmp_path / "lb" / "botorch-smoke-v0").mkdir(parents=True)
    (tmp_path / "lb" / "botorch-smoke-v0" / "suite.toml").write_text(SUITE)
    suite = load_suite("botorch-smoke-v0", root=tmp_path / "lb")
    sub = submit(
        suite, "optuna_agent:OptunaTPE", {"n_startup_trials": 4}, root=tmp_path / "lb", workers=1
    )
    report = validate(sub, suite=suite)
    assert report.ok, str(report)


def test_example_optuna_agent_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    _optuna_or_skip()
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "optuna_agent.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "optuna-tpe   mean R_T (T = 30, 2 seeds)" in out.stdout
