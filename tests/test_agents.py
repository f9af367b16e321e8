"""Agents: registry, hand-computed cases, parameter validation, robustness."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem

K3 = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]])


def make_problem(K=K3, horizon=100, **consts):
    n = len(K)
    c = {"B": 1.0, "alpha": 1.0, "v": 4.0, "nu": 3.0, "sup_f": 1.0} | consts
    return Problem(
        points=np.arange(n, dtype=float)[:, None],
        kernel_matrix=np.asarray(K, dtype=float),
        kernel=SquaredExponential(1.0),
        horizon=horizon,
        **c,
    )


def small_problem(n=20, horizon=300, **consts):
    X = np.linspace(0, 1, n)[:, None]
    return make_problem(SquaredExponential(0.2)(X), horizon, **consts)


# ------------------------------------------------------------------------- registry
def test_available_lists_exactly_the_implemented_agents():
    assert agents.available() == (
        "gp-ucb",
        "tgp-ucb",
        "ata-gp-ucb-qff",
        "ata-gp-ucb-nystrom",
        "ca-tgp-ucb",
        "mom-gp-ucb",
        "gp-ucb-corruption",
        "fast-slow-gp-ucb",
        "fast-slow-gp-ucb-unknown",
        "random",
        "rcgp-ucb",
        "rcgp-ucb-adaptive",
        "ec-gp-ucb",
        "outlier-gp-ucb",
        "robust-ucb-trunc",
        "robust-ucb-mom",
    )
    for name in agents.available():
        agent = agents.make(name)
        assert agent.name == name
        assert isinstance(agent, agents.Agent)


def test_make_refuses_unknown_names_and_parameters():
    with pytest.raises(ValueError, match="The 'name' parameter of agents.make must be one of"):
        agents.make("ata-gp-ucb-qff-typo")
    with pytest.raises(TypeError):
        agents.make("tgp-ucb", not_a_parameter=1)


def test_register_adds_one_entry():
    from agents import registry

    registry.register("test-uniform", "agents.gp.gp_ucb:GPUCB", "test")
    try:
        assert agents.available()[-1] == "test-uniform"
        assert isinstance(agents.make("test-uniform"), agents.GPUCB)
        with pytest.raises(ValueError, match="already registered"):
            registry.register("test-uniform", "agents.gp.gp_ucb:GPUCB")
    finally:
        del registry._REGISTRY["test-uniform"]


def test_params_are_stored_not_validated_in_init():
    agent = agents.make("tgp-ucb", lam=-1.0, b=lambda t: t**0.25)
    assert agent.get_params()["lam"] == -1.0
    assert "TGPUCB(" in repr(agent)
    with pytest.raises(ValueError, match=r"The 'lam' parameter of TGPUCB must be a real number"):
        agent.reset(small_problem(), seed=0)


# ------------------------------------------------------------------ hand-computed cases
def test_tgp_ucb_truncation_indicators_on_a_crafted_sequence():
    # v = 4, alpha = 1: b_t = 2 t^{1/4} = 2, 2.378, 2.632, 2.828, 2.990.
    agent = agents.make("tgp-ucb")
    agent.reset(make_problem(), seed=0)
    ys = [2.0, 2.4, -2.6, -2.9, 2.95]
    for y in ys:
        agent.update(agent.act(), y)
    assert agent.truncated_ == [False, True, False, True, False]
    assert agent.engine_.sums.sum() == pytest.approx(2.0 - 2.6 + 2.95)


def test_tgp_ucb_constant_truncation_override():
    agent = agents.make("tgp-ucb", b=1.0, beta=0.0)
    agent.reset(make_problem(), seed=0)
    for y in [0.5, -1.0, 1.5, -7.0, 1e12]:
        agent.update(agent.act(), y)
    assert agent.truncated_ == [False, False, True, True, True]


@pytest.mark.parametrize(
    ("eps", "ys", "expected"),
    [
        # One arm, k = 1, lambda = 1: after t plays every weight is 1/(t+1), so
        # h = t^{1/(1+eps)}/(t+1), b_t = 1/(t+1): keep iff |y_t| <= t^{1/(1+eps)}.
        (1.0, [0.99, 1.5, -1.7, 1.99, 2.3, -2.4], [False, True, False, False, True, False]),
        (0.5, [0.99, 1.6, 2.0, -2.6], [False, True, False, True]),
    ],
)
def test_ca_tgp_ucb_truncation_indicators_on_a_crafted_sequence(eps, ys, expected):
    agent = agents.make("ca-tgp-ucb", epsilon=eps, schedule="theory")  # threshold as printed
    agent.reset(make_problem(K=[[1.0]]), seed=0)
    for y in ys:
        assert agent.act() == 0
        agent.update(0, y)
    assert agent.truncated_ == expected


def test_mom_median_of_means_on_a_tiny_case():
    lam, ell = 1.0, 4
    agent = agents.make("mom-gp-ucb", ell=ell, lam=lam)
    agent.reset(make_problem(horizon=9), seed=1)  # N = 2 episodes, 1 leftover round
    assert (agent.ell_, agent.N_) == (4, 2)
    a = agent.act()
    y1 = [5.0, -1.0, 2.0, 8.0]
    for y in y1:
        assert agent.act() == a
        agent.update(a, y)
    # One play per replicate: mu_j(x) = k(x, a) y_j / (1 + lambda); K >= 0 so the median
    # is k(x, a) * median(y)/2, and the median of 4 values is the mean of the middle two.
    est, _ = agent.posterior()
    np.testing.assert_allclose(est, K3[:, a] * ((2.0 + 5.0) / 2) / 2, rtol=1e-14)
    b = agent.act()
    y2 = [0.0, 10.0, 1.0, -3.0]
    for y in y2:
        agent.update(b, y)
    idx = [a, b]
    W = np.linalg.solve(K3[np.ix_(idx, idx)] + lam * np.eye(2), K3[idx, :])
    means = W.T @ np.array([y1, y2])  # (3 points, 4 replicates)
    est, width = agent.posterior()
    np.testing.assert_allclose(est, np.sort(means, axis=1)[:, 1:3].mean(axis=1), rtol=1e-12)
    # Leftover round: replay x_N, no update.
    assert agent.act() == b
    agent.update(b, 1e6)
    est2, width2 = agent.posterior()
    np.testing.assert_array_equal(est, est2)
    np.testing.assert_array_equal(width, width2)
    with pytest.raises(ValueError, match="arm of the current episode"):
        agent.update((b + 1) % 3, 0.0)


def test_mom_episode_length_and_count_follow_design():
    agent = agents.make("mom-gp-ucb", schedule="theory")
    agent.reset(small_problem(horizon=20_000), seed=0)
    ell = math.ceil(8 * math.log(2 * 20_000 / 0.1))
    assert (agent.ell_, agent.N_) == (ell, 20_000 // ell) == (104, 192)
    exp = agents.make("mom-gp-ucb")  # experiment set: unit constant, ceil(12.9)
    exp.reset(small_problem(horizon=20_000), seed=0)
    assert (exp.ell_, exp.N_) == (13, 1538)
    short = agents.make("mom-gp-ucb", schedule="theory")
    short.reset(small_problem(horizon=30), seed=0)  # ell > T: N = 0, replay the first choice
    assert short.N_ == 0
    a = short.act()
    for _ in range(30):
        short.update(a, 1.0)
        assert short.act() == a
    assert np.all(short.posterior()[0] == 0.0)


def test_gp_ucb_default_beta_uses_realized_information_gain():
    p = small_problem(nu=9.0)  # R = nu^{1/2} = 3
    agent = agents.make("gp-ucb", delta=0.5, schedule="theory")
    agent.reset(p, seed=0)
    assert agent._beta_t() == pytest.approx(1.0 + 3.0 * math.sqrt(2 * (1 + math.log(2))))
    agent.update(agent.act(), 0.3)
    gamma = 0.5 * math.log(2.0)  # one play, k = 1, lambda = 1
    assert agent._beta_t() == pytest.approx(1.0 + 3.0 * math.sqrt(2 * (gamma + 1 + math.log(2))))
    # experiment set: beta_t = sup_f sqrt(lambda) + R sqrt(ln t), lambda = 4
    exp = agents.make("gp-ucb", lam=4.0)
    exp.reset(small_problem(nu=9.0, sup_f=0.5), seed=0)
    assert exp._beta_t() == pytest.approx(0.5 * 2.0)
    exp.update(exp.act(), 0.3)
    assert exp._beta_t() == pytest.approx(0.5 * 2.0 + 3.0 * math.sqrt(math.log(2)))


def test_experiment_and_theory_schedules_use_sup_f_and_B():
    p = small_problem(B=5.0, sup_f=1.0)
    exp, theory = agents.make("tgp-ucb"), agents.make("tgp-ucb", schedule="theory")
    exp.reset(p, seed=0)
    theory.reset(p, seed=0)
    assert exp._beta_t() == pytest.approx(1.0)  # B sqrt(lambda) + b_1 sqrt(ln 1), B = sup_f
    assert theory._beta_t() == pytest.approx(5.0)  # B + 0 at t = 1, B = problem.B


# ------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "tgp-ucb",
            {"lam": 0.0},
            "The 'lam' parameter of TGPUCB must be a real number in (0.0, inf). Got 0.0 instead.",
        ),
        (
            "gp-ucb",
            {"schedule": "paper"},
            "The 'schedule' parameter of GPUCB must be one of 'experiment', 'theory'. "
            "Got 'paper' instead.",
        ),
        (
            "ca-tgp-ucb",
            {"delta": 1.5},
            "The 'delta' parameter of CATGPUCB must be a real number in (0.0, 1.0]. "
            "Got 1.5 instead.",
        ),
        (
            "ca-tgp-ucb",
            {"epsilon": 0.0},
            "The 'epsilon' parameter of CATGPUCB must be a real number in (0.0, 1.0]. "
            "Got 0.0 instead.",
        ),
        (
            "mom-gp-ucb",
            {"ell": 0},
            "The 'ell' parameter of MoMGPUCB must be an integer in [1, 300]. Got 0 instead.",
        ),
        ("mom-gp-ucb", {"delta_prime": -0.1}, "The 'delta_prime' parameter of MoMGPUCB"),
        (
            "tgp-ucb",
            {"b": "t**0.25"},
            "The 'b' parameter of TGPUCB must be None, a finite non-negative real number, "
            "or a callable",
        ),
        ("gp-ucb", {"beta": -1.0}, "The 'beta' parameter of GPUCB must be None, a finite"),
        ("gp-ucb", {"R": -2.0}, "The 'R' parameter of GPUCB must be a real number in [0.0, inf)"),
    ],
)
def test_bad_parameters_give_the_uniform_error(name, params, message):
    agent = agents.make(name, **params)
    with pytest.raises(ValueError) as err:
        agent.reset(small_problem(), seed=0)
    assert message in str(err.value)


def test_bad_schedule_values_runtime_inputs_and_seeds_are_refused():
    agent = agents.make("gp-ucb", beta=lambda t: math.nan)
    agent.reset(small_problem(), seed=0)
    with pytest.raises(ValueError, match="The 'beta' parameter of GPUCB must be a schedule"):
        agent.act()
    agent = agents.make("tgp-ucb")
    agent.reset(small_problem(), seed=0)
    with pytest.raises(ValueError, match="The 'action' parameter of TGPUCB"):
        agent.update(20, 1.0)
    with pytest.raises(ValueError, match="The 'reward' parameter of TGPUCB"):
        agent.update(0, math.inf)
    with pytest.raises(ValueError, match="The 'seed' parameter of TGPUCB"):
        agent.reset(small_problem(), seed=-1)


def test_missing_problem_constant_names_the_override():
    # Problem refuses non-finite constants; a duck-typed problem record (a third party's)
    # can still carry one, and the agent must name the override then.
    p = small_problem()
    object.__setattr__(p, "B", math.inf)
    with pytest.raises(ValueError, match=r"finite problem\.B.*beta=\.\.\."):
        agents.make("ca-tgp-ucb", schedule="theory").reset(p, seed=0)
    agent = agents.make("ca-tgp-ucb", beta=2.0)  # an override needs no B
    agent.reset(p, seed=0)
    agent.update(agent.act(), 1.0)


# ----------------------------------------------------------------------- robustness
def test_same_seed_same_actions_on_an_env():
    def rollout(name, seed):
        env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=150)
        env.reset(seed=seed)
        agent = agents.make(name)
        agent.reset(env.unwrapped.problem, seed=seed)
        acts = []
        for _ in range(150):
            a = agent.act()
            _, y, _, _, _ = env.step(a)
            agent.update(a, y)
            acts.append(a)
        return acts, agent.posterior()

    for name in agents.available():
        (a1, (m1, w1)), (a2, (m2, w2)) = rollout(name, 4), rollout(name, 4)
        assert a1 == a2
        np.testing.assert_array_equal(m1, m2)
        np.testing.assert_array_equal(w1, w2)


@pytest.mark.parametrize("name", ["gp-ucb", "tgp-ucb", "ca-tgp-ucb", "mom-gp-ucb"])
def test_extreme_rewards_over_1e5_rounds_stay_finite(name):
    T = 100_000
    p = small_problem(n=20, horizon=T)
    rng = np.random.default_rng(0)
    ys = rng.standard_t(1.2, T)
    kind = rng.integers(4, size=T)
    ys[kind == 0] = 1e12
    ys[kind == 1] = -1e12
    agent = agents.make(name)
    agent.reset(p, seed=0)
    for t, y in enumerate(ys.tolist()):
        agent.update(agent.act(), y)
        if t % 25_000 == 0:
            m, w = agent.posterior()
            assert np.all(np.isfinite(m)) and np.all(np.isfinite(w))
    m, w = agent.posterior()
    assert np.all(np.isfinite(m)) and np.all(np.isfinite(w)) and np.all(w >= 0)
    assert 0 <= agent.act() < p.n
    assert np.all(np.isfinite(agent.engine_.cov))


# --------------------------------------------------------------------------- doctests
@pytest.mark.parametrize(
    "module",
    [
        "agents",
        "agents.registry",
        "agents.schedules",
        "agents.checks",
        "agents.gp.engine",
        "agents.gp.gp_ucb",
        "agents.features.nystrom",
        "agents.features.qff",
        "agents.heavy_tailed.ata_gp_ucb",
        "agents.robust.rcgp_ucb",
        "agents.robust.ec_gp_ucb",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("name", ["gp-ucb", "tgp-ucb", "ca-tgp-ucb", "mom-gp-ucb"])
def test_agents_survive_pickling_mid_run(name):
    """Workers of a parallel sweep may receive agents by pickle."""
    import pickle

    agent = agents.make(name, ell=3) if name == "mom-gp-ucb" else agents.make(name)
    agent.reset(small_problem(), seed=1)
    for y in (0.5, -1.0, 2.0, 0.1):
        agent.update(agent.act(), y)
    clone = pickle.loads(pickle.dumps(agent))
    for y in (0.3, 1.5, -0.2):
        a = agent.act()
        assert clone.act() == a
        agent.update(a, y)
        clone.update(a, y)
    np.testing.assert_array_equal(clone.posterior()[0], agent.posterior()[0])
    np.testing.assert_array_equal(clone.posterior()[1], agent.posterior()[1])
