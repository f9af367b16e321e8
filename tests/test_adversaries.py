"""Adversaries and corrupted envs (Bogunovic, Krause & Scarlett 2020).

Property tests (hypothesis): whatever the adversary, the objective, the history and the
information model, the env never lets ``sum_t charge_t`` exceed ``C`` nor ``|c_t|`` exceed
``B_0``; the charge is ``max_x |c_t(x)|`` (paper) or ``|c_t(x_t)|`` (targeted).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hbo_envs  # noqa: F401
from hbo_envs.adversaries import (
    ADVERSARIES,
    Adversary,
    AdversaryView,
    CorruptionLedger,
    DecoyAdversary,
    make_adversary,
)
from hbo_envs.envs.corrupted import FIG1_F_LOCAL, FIG1_F_STAR, CorruptedEnv, figure1_objective

CORRUPTED_IDS = [i for i in hbo_envs.ENV_IDS if i.startswith("hbo/Corrupted-")]


class Greedy(Adversary):
    """A user adversary that asks for far too much: +-10 B0 everywhere, every round."""

    name = "greedy"

    def propose(self, view: AdversaryView) -> np.ndarray:
        return np.full(view.f.size, 10.0 * view.B0 * (1 if view.t % 2 else -1))


ADVERSARY_SPECS = [
    "none",
    "region",
    {"name": "region", "radius": 0.5, "fraction": 2.0},
    "adaptive",
    {"name": "adaptive", "gap": 1.0, "magnitude": 5.0},
    "decoy",
    {"name": "decoy", "margin": 3.0},
    "random_sign",
    {"name": "random_sign", "magnitude": 4.0, "prob": 0.7},
    Greedy(),
]


@settings(max_examples=60, deadline=None)
@given(
    adv=st.sampled_from(range(len(ADVERSARY_SPECS))),
    model=st.sampled_from(["paper", "targeted"]),
    C=st.floats(0.0, 6.0),
    B0=st.one_of(st.none(), st.floats(0.05, 3.0)),
    seed=st.integers(0, 2**31 - 1),
    actions=st.lists(st.integers(0, 99), min_size=1, max_size=80),
)
def test_budget_and_per_round_bound_are_never_exceeded(adv, model, C, B0, seed, actions):
    env = CorruptedEnv(
        "random-rkhs", "gaussian", ADVERSARY_SPECS[adv], C=C, B0=B0, info_model=model,
        horizon=len(actions),
    )  # fmt: skip
    env.reset(seed=seed)
    b0 = env.B0_
    spent, prev_used = 0.0, 0.0
    for a in actions:
        _, _, _, _, info = env.step(a)
        c = info["corruption"]
        assert abs(c) <= b0 + 1e-12  # |c_t| <= B0
        charge = info["corruption_used"] - prev_used
        assert charge >= -1e-15 and abs(c) <= charge + 1e-12  # c_t(x_t) is paid for
        spent += charge
        prev_used = info["corruption_used"]
        assert info["corruption_used"] <= C + 1e-12  # sum_t max_x |c_t(x)| <= C
    assert spent <= C + 1e-12
    # the env's history is the adversary's: c_s(x_s) as applied
    assert len(env._corruptions) == len(actions)


@settings(max_examples=40, deadline=None)
@given(
    C=st.floats(0.0, 5.0),
    B0=st.floats(0.01, 2.0),
    model=st.sampled_from(["paper", "targeted"]),
    requests=st.lists(
        st.tuples(st.lists(st.floats(-1e6, 1e6), min_size=5, max_size=5), st.integers(0, 4)),
        max_size=30,
    ),
)
def test_ledger_charges_exactly_the_rule_of_the_information_model(C, B0, model, requests):
    led = CorruptionLedger(C, B0, model)
    total = 0.0
    for c, a in requests:
        c = np.asarray(c)
        before = led.used
        value = led.charge(c, a)
        clipped = np.clip(c, -B0, B0)
        want = float(np.max(np.abs(clipped))) if model == "paper" else abs(float(clipped[a]))
        charge = led.used - before
        assert charge == pytest.approx(min(want, C - before), abs=1e-12)
        assert abs(value) <= min(B0, abs(clipped[a])) + 1e-15
        assert math.copysign(1, value) == math.copysign(1, clipped[a]) or value == 0
        total += charge
    assert total <= C + 1e-12 and led.used <= C


def test_clip_is_recorded_when_the_budget_runs_out():
    env = gym.make("hbo/Corrupted-Fig1-v0", horizon=100).unwrapped
    env.reset(seed=0)
    star = env.objective.argmax
    corr = [env.step(star)[4] for _ in range(12)]
    # -f*/3 per sampled round until 3.5 is spent: 9 full rounds, then the 0.05 remainder.
    c = np.array([i["corruption"] for i in corr])
    np.testing.assert_allclose(c[:9], -FIG1_F_STAR / 3, rtol=1e-12)
    assert c[9] == pytest.approx(-(3.5 - 9 * FIG1_F_STAR / 3), abs=1e-12)
    assert np.all(c[10:] == 0)
    assert corr[-1]["corruption_used"] == 3.5
    assert corr[-1]["corruption_clipped"] == pytest.approx(FIG1_F_STAR / 3 - c[9] * -1, abs=1e-12)


def test_figure1_objective_has_the_papers_optima():
    obj = figure1_objective()
    f = obj.values
    assert obj.f_star == pytest.approx(FIG1_F_STAR, abs=1e-12)
    x0 = int(np.argmin(np.abs(obj.points[:, 0] - 0.25)))
    assert f[x0] == pytest.approx(FIG1_F_LOCAL, abs=1e-9)
    assert f[x0] >= f[x0 - 1] and f[x0] >= f[x0 + 1]  # a local maximum on the grid
    assert f[obj.argmax] > f[x0] + 0.4 and obj.points[obj.argmax, 0] == pytest.approx(0.75)
    # exact RKHS norm of the kernel sum: sqrt(a^T K_c a)
    a = np.asarray(obj.params["coeffs"])
    Kc = obj.kernel(np.asarray(obj.params["centers"]))
    assert obj.B == pytest.approx(float(np.sqrt(a @ Kc @ a)), rel=1e-12)


def test_paper_model_charges_every_round_and_hides_x_t():
    seen = []

    class Spy(Adversary):
        name = "spy"

        def propose(self, view):
            seen.append(view.action)
            c = np.zeros(view.f.size)
            c[0] = -0.1
            return c

    env = CorruptedEnv(
        figure1_objective(), "gaussian", Spy(), C=1.0, info_model="paper", horizon=20
    )
    env.reset(seed=1)
    infos = [env.step(100)[4] for _ in range(5)]  # never plays point 0
    assert seen == [None] * 5
    assert [i["corruption"] for i in infos] == [0.0] * 5  # c_t(x_t) = 0 at x_t = 100
    assert infos[-1]["corruption_used"] == pytest.approx(0.5)  # but max_x |c_t| is charged


def test_adversaries_do_what_they_say():
    obj = figure1_objective()
    f, X = obj.values, obj.points
    star = obj.argmax
    rng = np.random.default_rng(0)
    # region: -f*/3 within 0.1 of x*, 0 elsewhere
    c = make_adversary("region").new_episode(f, X, 1.15, rng)
    near = np.abs(X[:, 0] - 0.75) <= 0.1
    np.testing.assert_allclose(c[near], -FIG1_F_STAR / 3)
    assert np.all(c[~near] == 0)
    # decoy: the local maximum x0 = 0.25 is lifted above f* by the margin
    dec = DecoyAdversary(radius=0.05, margin=0.1)
    x0 = dec.decoy(f, X)
    assert X[x0, 0] == pytest.approx(0.25)
    c = dec.new_episode(f, X, 1.15, rng)
    assert f[x0] + c[x0] == pytest.approx(FIG1_F_STAR + 0.1)
    assert c[star] == 0
    # adaptive (targeted): only near-optimal x_t are pushed down
    adv = make_adversary({"name": "adaptive", "gap": 0.05})
    st_ = adv.new_episode(f, X, 1.15, rng)

    def view(action, actions=()):
        return AdversaryView(f, X, 1, list(actions), [], [], action, 3.0, 1.15, st_, rng)

    assert adv.propose(view(star))[star] < 0
    assert adv.propose(view(x0)) is None
    # adaptive (paper model): corrupts the near-optimal points already played, nothing else
    assert adv.propose(view(None)) is None
    c = adv.propose(view(None, [star]))
    assert c[star] < 0 and np.count_nonzero(c) == 1


def test_random_sign_is_fair():
    env = gym.make("hbo/Corrupted-SE-RandomSign-v0", C=1e6, horizon=4000).unwrapped
    env.reset(seed=3)
    c = np.array([env.step(t % 100)[4]["corruption"] for t in range(4000)])
    assert np.all(np.abs(c) == pytest.approx(1 / 3))  # B0 / 3 with B0 = max|f| = 1
    # mean of 4000 Rademacher signs: standard error 1/sqrt(4000); 5 sigma
    assert abs(np.mean(np.sign(c))) < 5 / math.sqrt(4000)


@pytest.mark.parametrize("env_id", CORRUPTED_IDS)
def test_corrupted_envs_report_budget_and_corruption(env_id):
    env = gym.make(env_id, horizon=300)
    env.reset(seed=2)
    u = env.unwrapped
    assert u.problem.C == u.C and u.problem.meta["B0"] == pytest.approx(u.problem.sup_f)
    used = 0.0
    for t in range(300):
        _, y, _, _, info = env.step(int((37 * t) % env.action_space.n))
        assert info["corruption_used"] >= used and set(info) >= {"corruption", "corruption_clipped"}
        used = info["corruption_used"]
    assert (used > 0) == ("None" not in env_id)
    unknown = gym.make(env_id, known_budget=False).unwrapped
    assert unknown.problem.C is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"C": -1.0}, "'C' parameter of .* must be a real number in \\[0.0, inf\\). Got -1.0"),
        ({"C": float("nan")}, "'C' parameter .* Got nan"),
        ({"C": float("inf")}, "'C' parameter .* Got inf"),
        ({"B0": 0.0}, "'B0' parameter .* must be a real number in \\(0.0, inf\\). Got 0.0"),
        ({"B0": -2}, "'B0' parameter .* Got -2"),
        ({"info_model": "oracle"}, "'info_model' parameter .* 'paper', 'targeted'. Got 'oracle'"),
        ({"adversary": "evil"}, "'adversary' parameter must be .*'region'.* Got 'evil'"),
        ({"adversary": {"name": "region", "radius": -1}}, "'radius' parameter of RegionAdversary"),
        ({"adversary": {"name": "random_sign", "prob": 0}}, "'prob' parameter"),
        ({"known_budget": "yes"}, "'known_budget' parameter"),
    ],
)
def test_bad_settings_are_refused_at_make(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("hbo/Corrupted-SE-Region-v0", **kwargs)


def test_adversaries_compose_with_any_channel_and_objective():
    env = CorruptedEnv(
        {"name": "chowdhury-gopalan", "kernel": "matern"},
        {"name": "student_t", "df": 3.0},
        "decoy",
        C=2.0,
        horizon=50,
    )
    env.reset(seed=0)
    assert env.problem.v == pytest.approx(4.0) and env.problem.C == 2.0
    assert {"adaptive", "decoy", "none", "random_sign", "region"} <= set(ADVERSARIES)


@pytest.mark.parametrize(
    "module",
    [
        "hbo_envs.adversaries",
        "hbo_envs.adversaries.base",
        "hbo_envs.envs.corrupted",
        "hbo_envs.harness.plotting_corruption",
        "agents.corruption.gp_ucb_corruption",
        "agents.corruption.fast_slow",
        "agents.corruption.fast_slow_unknown",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    res = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert res.failed == 0 and res.attempted > 0


def test_figure1_objective_records_the_lengthscale_it_used():
    obj = figure1_objective(lengthscale=0.08)
    assert obj.params["lengthscale"] == 0.08
    assert figure1_objective().params["lengthscale"] == 0.1


@pytest.mark.parametrize(
    "spec, match",
    [
        ({"name": "region", "radus": 0.1}, r"adversary 'region' has no parameter 'radus'.*radius"),
        ({"name": ["region"]}, r"'adversary' parameter must be"),
    ],
)
def test_make_adversary_refuses_unknown_params_and_bad_names(spec, match):
    with pytest.raises(ValueError, match=match):
        make_adversary(spec)
