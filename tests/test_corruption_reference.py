"""Algorithms 1-3 of Bogunovic, Krause & Scarlett (2020) against naive references.

The references below are written straight from the paper: the posterior of every
instance/layer is solved from scratch with its ``t x t`` matrix every round
(:func:`test_agents_reference.naive_posterior`), the realized information gain with
``slogdet``, the intersected bounds (17)-(18) / (31)-(32) as a min/max over the stored
history of bounds, and the sets of potential maximizers by the recursion (33)-(34)
recomputed from scratch. The instance/layer draws and tie-breaks use one generator seeded
like the agent's, in the same order (one uniform per round, then a tie-break draw only
when scores tie). The agents must play identical actions, every round.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_agents_reference import naive_gamma, naive_posterior, tie_argmax

import agents
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem

LAM, DELTA = 1.0, 0.1


def problem(n=15, horizon=120, C=3.0, sup_f=1.0):
    X = np.linspace(0, 1, n)[:, None]
    k = SquaredExponential(0.2)
    return Problem(
        points=X, kernel_matrix=k(X), kernel=k, B=1.3, alpha=1.0, v=1.01, nu=0.04,
        sup_f=sup_f, horizon=horizon, C=C, meta={"B0": 1.2},
    )  # fmt: skip


def rewards(p, seed=3, corrupt=(2.0, 40)):
    """``y_t = f(x_t) + 0.2 xi_t``, minus ``corrupt[0]`` at the best arm during the first
    ``corrupt[1]`` rounds (a targeted attack, so detection can happen)."""
    rng = np.random.default_rng(seed)
    f = p.kernel_matrix @ rng.uniform(-1, 1, p.n)
    f /= np.abs(f).max()
    xi = rng.standard_normal(p.horizon)
    star = int(np.argmax(f))

    def reward(a, t):
        c = -corrupt[0] if (a == star and t <= corrupt[1]) else 0.0
        return float(f[a] + 0.2 * xi[t - 1] + c)

    return reward


def beta_lemma(p, gamma, log_term, extra, R):
    # eq. (7) + corruption term: B + R lam^{-1/2} sqrt(2(gamma + log)) + lam^{-1/2} extra
    return p.B + R / math.sqrt(LAM) * math.sqrt(2 * (gamma + log_term)) + extra / math.sqrt(LAM)


def run_agent(agent, p, reward, seed):
    agent.reset(p, seed=seed)
    acts = []
    for t in range(1, p.horizon + 1):
        a = agent.act()
        agent.update(a, reward(a, t))
        acts.append(a)
    return acts


# ------------------------------------------------------------------- Algorithm 1
def naive_alg1(p, reward, seed, C):
    K, rng, R = p.kernel_matrix, np.random.default_rng(seed), p.nu**0.5
    arms, ys, acts = [], [], []
    for t in range(1, p.horizon + 1):
        mean, var = naive_posterior(K, LAM, arms, ys)
        beta = beta_lemma(p, naive_gamma(K, LAM, arms), math.log(1 / DELTA), C, R)
        a = tie_argmax(mean[:, 0] + beta * np.sqrt(var), rng)  # eq. (13)
        arms.append(a)
        ys.append(reward(a, t))
        acts.append(a)
    return acts


@pytest.mark.parametrize("C", [0.0, 3.0])
def test_algorithm1_matches_the_naive_reference(C):
    p = problem(C=C)
    rw = rewards(p)
    assert run_agent(agents.make("gp-ucb-corruption"), p, rw, 7) == naive_alg1(p, rw, 7, C)


# ------------------------------------------------------------------- Algorithm 2
class NaiveInstance:
    """One instance: its data, and the history of its bounds for the intersections."""

    def __init__(self, p, beta_fn):
        self.p, self.beta_fn, self.arms, self.ys = p, beta_fn, [], []
        self.hist = []  # (mu, beta sigma) for t'_A = 1 .. t_A
        self.record()

    def record(self):
        K = self.p.kernel_matrix
        mean, var = naive_posterior(K, LAM, self.arms, self.ys)
        t_A = len(self.arms) + 1
        beta = self.beta_fn(t_A, naive_gamma(K, LAM, self.arms))
        self.hist.append((mean[:, 0], beta * np.sqrt(var)))

    def ucb_bar(self, a):  # eq. (17)
        return np.min([m + a * w for m, w in self.hist], axis=0)

    def lcb_bar(self, a):  # eq. (18)
        return np.max([m - a * w for m, w in self.hist], axis=0)

    def add(self, arm, y):
        self.arms.append(arm)
        self.ys.append(y)
        self.record()


def naive_alg2(p, reward, seed, C, B0, schedule, bf=None, bs=None):
    rng, R = np.random.default_rng(seed), p.nu**0.5
    log5 = math.log(5 / DELTA)
    s_extra = 3 + B0 * log5 if schedule == "theory" else 1.0
    F = NaiveInstance(p, bf or (lambda t, g: beta_lemma(p, g, log5, 0.0, R)))  # eq. (25)
    S = NaiveInstance(p, bs or (lambda t, g: beta_lemma(p, g, log5, s_extra, R)))  # eq. (26)
    valid, arms, ys, acts, switch = True, [], [], [], None
    for t in range(1, p.horizon + 1):
        if valid:
            if rng.random() < min(1.0, 1.0 / C if C > 0 else math.inf):  # line 4
                inst, a = S, tie_argmax(S.ucb_bar(2.0), rng)  # line 8, alpha = 2
            else:
                inst, a = F, tie_argmax(np.minimum(F.ucb_bar(1), S.ucb_bar(1)), rng)  # line 6
            y = reward(a, t)
            inst.add(a, y)  # lines 10-11
            if np.min(F.ucb_bar(1) - S.lcb_bar(1)) < 0:  # line 12, eq. (19)
                valid, switch = False, t
        else:  # lines 15-16: Algorithm 1 on all data, beta^(A1) with ln(5/delta)
            K = p.kernel_matrix
            mean, var = naive_posterior(K, LAM, arms, ys)
            beta = beta_lemma(p, naive_gamma(K, LAM, arms), log5, C, R)
            a = tie_argmax(mean[:, 0] + beta * np.sqrt(var), rng)
            y = reward(a, t)
        arms.append(a)
        ys.append(y)
        acts.append(a)
    return acts, switch


@pytest.mark.parametrize("schedule", ["theory", "experiment"])
def test_algorithm2_matches_the_naive_reference(schedule):
    p = problem(C=3.0)
    rw = rewards(p)
    agent = agents.make("fast-slow-gp-ucb", schedule=schedule)
    ref, _ = naive_alg2(p, rw, 11, 3.0, 1.2, schedule)
    assert run_agent(agent, p, rw, 11) == ref


def test_algorithm2_detection_and_switch_match_the_reference():
    """Narrow overridden widths make the test (19) fire; the switch round and every action
    after it (Algorithm 1 on all data) must agree."""
    p = problem(C=2.0, horizon=150)
    rw = rewards(p, corrupt=(2.5, 60))
    agent = agents.make("fast-slow-gp-ucb", beta_fast=0.3, beta_slow=0.6)
    ref, switch = naive_alg2(p, rw, 5, 2.0, 1.2, "experiment", lambda t, g: 0.3, lambda t, g: 0.6)
    assert switch is not None and switch < p.horizon - 20
    assert run_agent(agent, p, rw, 5) == ref
    assert agent.switched_at_ == switch and not agent.valid_


# ------------------------------------------------------------------- Algorithm 3
def naive_alg3(p, reward, seed, B0, schedule, alpha=2.0, beta=None):
    rng, R, T = np.random.default_rng(seed), p.nu**0.5, p.horizon
    L = math.ceil(math.log2(T))
    log_term = math.log(4 * (1 + math.log2(T)) / DELTA)  # eq. (35)
    extra = 3 + B0 * log_term if schedule == "theory" else 1.0
    fn = beta or (lambda t, g: beta_lemma(p, g, log_term, extra, R))
    layers = [NaiveInstance(p, fn) for _ in range(L)]

    def sets():  # eqs. (33)-(34), from scratch
        M = [None] * L
        for ell in reversed(range(L)):
            lay = layers[ell]
            own = lay.ucb_bar(1) >= np.max(lay.lcb_bar(1))
            M[ell] = own if ell == L - 1 else (M[ell + 1] & own)
        return M

    acts = []
    for t in range(1, T + 1):
        u, ell, acc = rng.random(), 0, 0.0  # layer ell+1 w.p. 2^-(ell+1); rest -> layer 1
        for i in range(L):
            acc += 0.5 ** (i + 1)
            if u < acc:
                ell = i
                break
        M = sets()
        learn = bool(M[ell].any())
        if not learn:  # lowest non-empty layer above
            ell = next((i for i in range(ell + 1, L) if M[i].any()), L - 1)
        mask = M[ell] if M[ell].any() else np.ones(p.n, bool)
        a = tie_argmax(np.where(mask, layers[ell].ucb_bar(alpha), -np.inf), rng)
        y = reward(a, t)
        if learn:
            layers[ell].add(a, y)
        acts.append(a)
    return acts


@pytest.mark.parametrize("schedule", ["theory", "experiment"])
def test_algorithm3_matches_the_naive_reference(schedule):
    p = problem(horizon=100)
    rw = rewards(p)
    agent = agents.make("fast-slow-gp-ucb-unknown", schedule=schedule)
    assert run_agent(agent, p, rw, 2) == naive_alg3(p, rw, 2, 1.2, schedule)


def test_algorithm3_set_eliminations_match_the_naive_reference():
    """A narrow overridden width makes the sets shrink (and some empty), so the set
    recursion and the fallback to a higher layer are exercised."""
    p = problem(horizon=160)
    rw = rewards(p, corrupt=(2.0, 30))
    agent = agents.make("fast-slow-gp-ucb-unknown", beta=0.25)
    assert run_agent(agent, p, rw, 4) == naive_alg3(p, rw, 4, 1.2, "x", beta=lambda t, g: 0.25)
    sizes = [int(m.sum()) for m in agent.sets_]
    assert sizes[0] < p.n and sizes[0] <= sizes[-1]


def test_algorithm3_sets_shrink_and_stay_nested():
    p = problem(horizon=300)
    rw = rewards(p)
    agent = agents.make("fast-slow-gp-ucb-unknown", beta=0.5)
    agent.reset(p, seed=0)
    prev = [m.copy() for m in agent.sets_]
    for t in range(1, p.horizon + 1):
        a = agent.act()
        agent.update(a, rw(a, t))
        for ell in range(agent.L_):
            assert not np.any(agent.sets_[ell] & ~prev[ell])  # property (i): never grows
            if ell + 1 < agent.L_:
                assert not np.any(agent.sets_[ell] & ~agent.sets_[ell + 1])  # property (ii)
        prev = [m.copy() for m in agent.sets_]
    assert agent.sets_[0].sum() < p.n  # something was eliminated


def test_layer_probabilities_are_two_to_the_minus_ell():
    from agents.corruption.fast_slow_unknown import layer_thresholds

    L, rng = 6, np.random.default_rng(0)
    u = rng.random(200_000)
    ell = np.searchsorted(layer_thresholds(L), u, side="right")
    ell[ell >= L] = 0
    freq = np.bincount(ell, minlength=L) / u.size
    expected = 0.5 ** np.arange(1, L + 1)
    expected[0] += 0.5**L
    # binomial standard error sqrt(p(1-p)/N); 5 sigma
    assert np.all(np.abs(freq - expected) <= 5 * np.sqrt(expected * (1 - expected) / u.size))


@pytest.mark.parametrize(
    "name", ["gp-ucb-corruption", "fast-slow-gp-ucb", "fast-slow-gp-ucb-unknown"]
)
def test_agents_survive_pickling_mid_run(name):
    """Workers of a parallel sweep may receive agents by pickle, mid-run."""
    import pickle

    p = problem(horizon=60)
    rw = rewards(p)
    agent = agents.make(name)
    agent.reset(p, seed=1)
    for t in range(1, 21):
        a = agent.act()
        agent.update(a, rw(a, t))
    clone = pickle.loads(pickle.dumps(agent))
    for t in range(21, 61):
        a = agent.act()
        assert clone.act() == a
        agent.update(a, rw(a, t))
        clone.update(a, rw(a, t))
    for x, y in zip(agent.posterior(), clone.posterior(), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("gp-ucb-corruption", {"C": -1.0}, "'C' parameter of GPUCBCorruption"),
        ("gp-ucb-corruption", {"C": float("nan")}, "'C' parameter"),
        ("fast-slow-gp-ucb", {"alpha": 0.5}, "'alpha' parameter of FastSlowGPUCB"),
        ("fast-slow-gp-ucb", {"B0": 0.0}, "'B0' parameter of FastSlowGPUCB"),
        ("fast-slow-gp-ucb", {"beta_slow": -1.0}, "'beta_slow' parameter"),
        ("fast-slow-gp-ucb-unknown", {"layers": 0}, "'layers' parameter"),
        ("fast-slow-gp-ucb-unknown", {"schedule": "paper"}, "'schedule' parameter"),
    ],
)
def test_bad_parameters_give_the_uniform_error_at_reset(name, params, message):
    agent = agents.make(name, **params)  # stored, not validated
    with pytest.raises(ValueError, match=message):
        agent.reset(problem(), seed=0)


def test_algorithm3_builds_no_engine_beside_its_layers():
    """The base class's all-data engine is not used by Algorithm 3: ``engine_`` is layer
    1's engine, and no further ``n x n`` posterior is allocated."""
    agent = agents.make("fast-slow-gp-ucb-unknown")
    agent.reset(problem(), seed=0)
    assert agent.engine_ is agent.layers_[0].engine


def test_algorithm3_refuses_more_layers_than_can_be_sampled():
    """Every layer owns an ``n x n`` engine: a huge ``layers`` gets the uniform error at
    reset instead of exhausting memory; the bound admits ``ceil(log2 T)`` for any T."""
    from agents.corruption.fast_slow_unknown import MAX_LAYERS

    with pytest.raises(ValueError, match=r"'layers' parameter .* \[1, 64\]. Got 1000000"):
        agents.make("fast-slow-gp-ucb-unknown", layers=10**6).reset(problem(), seed=0)
    agent = agents.make("fast-slow-gp-ucb-unknown", layers=MAX_LAYERS)
    agent.reset(problem(n=3), seed=0)
    assert agent.L_ == MAX_LAYERS


def test_fast_slow_names_its_own_width_overrides_when_B_is_missing():
    """A duck-typed problem with a non-finite B: the error names the parameters
    FastSlowGPUCB has (it has no ``beta``), and overriding all three widths suffices."""
    p = problem()
    object.__setattr__(p, "B", math.inf)
    msg = r"problem\.B.*Pass beta_fast=..., beta_slow=... and beta_fallback=... to"
    with pytest.raises(ValueError, match=msg):
        agents.make("fast-slow-gp-ucb", beta_fast=1.0, beta_slow=2.0).reset(p, seed=0)
    agent = agents.make("fast-slow-gp-ucb", beta_fast=1.0, beta_slow=2.0, beta_fallback=3.0)
    agent.reset(p, seed=0)
    agent.update(agent.act(), 0.5)
    assert agent.fast_.beta(2) == 1.0 and agent.slow_.beta(2) == 2.0 and agent.beta_(2) == 3.0
