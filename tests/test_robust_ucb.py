"""Robust UCB of Bubeck, Cesa-Bianchi & Lugosi (2013), truncated-mean and median-of-means
variants (agents/baselines/robust_ucb.py): hand-computed estimates, every decision against
a naive re-implementation of the paper's formulas, parameter validation, and regret where
the theory says the policy must beat uniform play (few arms, long horizon, infinite
variance)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from agents.baselines.robust_ucb import RobustUCBMedianOfMeans, RobustUCBTruncated
from hbo_envs.channels import Contaminated
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem


def _problem(f, *, alpha=1.0, v=2.0, nu=1.0, horizon=1000) -> Problem:
    f = np.asarray(f, dtype=float)
    X = np.arange(f.size, dtype=float)[:, None]
    k = SquaredExponential(0.5)
    return Problem(
        X,
        k(X),
        k,
        B=1.0,
        alpha=alpha,
        v=v,
        nu=nu,
        sup_f=float(np.max(np.abs(f))),
        horizon=horizon,
    )


# ----------------------------------------------------------------- hand-computed cases
def test_truncated_mean_and_width_by_hand() -> None:
    # u = 2, alpha = 1 (p = 2). Arm 0 sees 0.5 then 1.0, then it is round t = 3:
    # thresholds (u r / log t^2)^{1/2} = sqrt(2 / 2.197) = 0.954 (r = 1), 1.349 (r = 2):
    # both count, mean 0.75; width 4 sqrt(2) sqrt(log 9 / 2) = 5.9290.
    agent = RobustUCBTruncated()
    agent.reset(_problem([0.0, 0.0], v=2.0), seed=0)
    agent.update(0, 0.5)
    agent.update(0, 1.0)
    est, w = agent.posterior()
    assert est[0] == pytest.approx(0.75, rel=1e-15)
    assert w[0] == pytest.approx(4 * math.sqrt(2) * math.sqrt(math.log(9) / 2), rel=1e-14)
    assert (est[1], w[1]) == (0.0, 0.0)  # never played: estimate 0, width sup_f = 0
    # a third reward 1.4 at round 3 (r = 3): threshold at t = 4 is sqrt(6 / log 16) = 1.471,
    # but r = 2's is sqrt(4 / log 16) = 1.201 and r = 1's 0.849: 0.5 and 1.0 still count
    agent.update(0, 1.4)
    assert agent.posterior()[0][0] == pytest.approx((0.5 + 1.0 + 1.4) / 3)
    # at t = 5 (after an update on arm 1): r = 3's threshold sqrt(6 / log 25) = 1.363 < 1.4
    agent.update(1, 0.0)
    assert agent.posterior()[0][0] == pytest.approx((0.5 + 1.0) / 3)
    assert agent.truncated_fraction() == pytest.approx(1 / 4)
    # a reward of 1e12 never counts after round 1
    agent.update(1, 1e12)
    assert agent.posterior()[0][1] == 0.0


def test_median_of_means_by_hand() -> None:
    # s = 6 at t = 7: k = floor(min(1 + 16 log 7, 3)) = 3 blocks of N = 2:
    # [1, 2], [10, 3], [4, 100] -> means 1.5, 6.5, 52 -> median 6.5.
    agent = RobustUCBMedianOfMeans()
    agent.reset(_problem([0.0, 0.0], nu=3.0, alpha=0.5), seed=0)
    for y in [1.0, 2.0, 10.0, 3.0, 4.0, 100.0]:
        agent.update(0, y)
    est, w = agent.posterior()
    assert est[0] == 6.5
    p = 1.5
    want = (12 * 3.0) ** (1 / p) * (16 * (0.125 + 2 * math.log(7)) / 6) ** (0.5 / p)
    assert w[0] == pytest.approx(want, rel=1e-14)
    # s = 7: N = floor(7/3) = 2, the 7th observation is not used yet
    agent.update(0, -1e9)
    assert agent.posterior()[0][0] == 6.5
    # one observation is its own estimate (k = 1)
    agent.update(1, 0.25)
    assert agent.posterior()[0][1] == 0.25
    assert RobustUCBMedianOfMeans.median_of_means(np.array([1.0, 2.0, 3.0, 10.0]), 2) == 4.0
    # k = 3, N = 2 on arm 0's 7 observations at t = 9: only the middle block's 2 count
    assert agent.dropped_fraction() == pytest.approx(1 - (2 + 1) / 8)


# ------------------------------------------------------------- the naive reference
def _reference(kind: str, obs: list[list[float]], t: int, p: float, eps: float, m: float, c=1.0):
    """Estimates and indices from the whole history, straight from the paper's formulas."""
    est, idx = [], []
    log_inv_delta = math.log(t**2)  # delta = t^{-2}
    for x in obs:
        s = len(x)
        if s == 0:
            est.append(0.0)
            idx.append(math.inf)
            continue
        if kind == "trunc":  # Lemma 1: (1/s) sum X_r 1{|X_r| <= (u r / log(1/delta))^{1/p}}
            mu = sum(y for r, y in enumerate(x, 1) if abs(y) <= (m * r / log_inv_delta) ** (1 / p))
            mu /= s
            width = 4 * m ** (1 / p) * (log_inv_delta / s) ** (eps / p)
        else:  # Lemma 2: k = floor(min(8 log(e^{1/8}/delta), s/2)), N = floor(s/k)
            L = math.log(math.exp(1 / 8) * t**2)
            k = max(1, math.floor(min(8 * L, s / 2)))
            N = s // k
            mu = float(np.median([np.mean(x[j * N : (j + 1) * N]) for j in range(k)]))
            width = (12 * m) ** (1 / p) * (16 * L / s) ** (eps / p)
        est.append(mu)
        idx.append(mu + c * width)
    return np.array(est), np.array(idx)


@pytest.mark.parametrize("kind", ["trunc", "mom"])
@pytest.mark.parametrize(("alpha", "scale"), [(1.0, 1.0), (0.3, 0.5)])
def test_every_decision_matches_the_papers_formulas(kind: str, alpha: float, scale: float) -> None:
    f = np.array([0.3, 1.0, -0.5, 0.8, 0.0])
    problem = _problem(f, alpha=alpha, v=2.5, nu=1.7, horizon=600)
    m = 2.5 if kind == "trunc" else 1.7
    name = {"trunc": "robust-ucb-trunc", "mom": "robust-ucb-mom"}[kind]
    agent = agents.make(name, width_scale=scale)
    agent.reset(problem, seed=3)
    rng = np.random.default_rng(11)
    obs: list[list[float]] = [[] for _ in f]
    p = 1 + alpha
    dropped = 0
    for t in range(1, 601):
        est_ref, idx = _reference(kind, obs, t, p, alpha, m, scale)
        a = agent.act()
        top = idx.max()
        if math.isinf(top):
            assert math.isinf(idx[a])  # an unplayed arm first
        else:
            assert idx[a] >= top - 1e-12 * (1 + abs(top)), (t, a, idx)
        est, w = agent.posterior()
        played = np.array([len(x) > 0 for x in obs])
        np.testing.assert_allclose(est[played], est_ref[played], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(
            (est + w)[played], idx[played], rtol=1e-12, atol=1e-13, err_msg=f"t={t}"
        )
        y = float(f[a] + 0.7 * rng.standard_t(1.3))
        if kind == "trunc" and t > 1:
            dropped += abs(y) > (m * len(obs[a]) / math.log(t**2)) ** (1 / p)
        obs[a].append(y)
        agent.update(a, y)
    if kind == "trunc":
        assert dropped > 10  # the truncation did fire
    assert len({len(x) for x in obs}) > 1  # and the policy did not play round robin


def test_ties_are_broken_by_the_agents_generator() -> None:
    firsts = set()
    for seed in range(20):
        agent = agents.make("robust-ucb-trunc")
        agent.reset(_problem(np.zeros(6)), seed=seed)
        order = []
        for _ in range(6):
            a = agent.act()
            order.append(a)
            agent.update(a, 0.0)
        assert sorted(order) == list(range(6))  # every arm once first
        firsts.add(order[0])
    assert len(firsts) > 3


# -------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("name", "params", "param"),
    [
        ("robust-ucb-trunc", {"u": -1.0}, "u"),
        ("robust-ucb-trunc", {"u": 0.0}, "u"),
        ("robust-ucb-trunc", {"u": float("nan")}, "u"),
        ("robust-ucb-mom", {"nu": float("inf")}, "nu"),
        ("robust-ucb-mom", {"nu": "3"}, "nu"),
        ("robust-ucb-mom", {"width_scale": -0.5}, "width_scale"),
        ("robust-ucb-trunc", {"width_scale": True}, "width_scale"),
    ],
)
def test_bad_parameters_are_refused_at_reset(name: str, params: dict, param: str) -> None:
    agent = agents.make(name, **params)
    assert agent.get_params()[param] is params[param]  # stored, not validated, in __init__
    with pytest.raises(ValueError, match=f"The '{param}' parameter of RobustUCB") as e:
        agent.reset(_problem([0.0, 1.0]), seed=0)
    assert "Got" in str(e.value)


def test_bad_seed_reward_and_action_are_refused() -> None:
    agent = agents.make("robust-ucb-mom")
    with pytest.raises(ValueError, match="'seed'"):
        agent.reset(_problem([0.0, 1.0]), seed=-1)
    agent.reset(_problem([0.0, 1.0]), seed=0)
    with pytest.raises(ValueError, match="'reward'"):
        agent.update(0, float("nan"))
    with pytest.raises(ValueError, match="'action'"):
        agent.update(2, 0.0)
    with pytest.raises(TypeError):
        agents.make("robust-ucb-trunc", nu=1.0)  # each variant has its own moment


BAD_REWARDS = [math.nan, math.inf, -math.inf, np.float32("nan"), np.array(math.inf), "x", None, 1j]


@pytest.mark.parametrize("name", ["robust-ucb-mom", "robust-ucb-trunc", "random", "gp-ucb"])
def test_bad_rewards_get_one_message_and_change_nothing(name: str) -> None:
    """The baselines and the GP agents check a reward with one implementation
    (``hbo_envs.validation.check_reward``): the same message for every bad value, the agent
    left as it was; the accepted forms are any real ``float()`` takes."""
    agent = agents.make(name)
    agent.reset(_problem([0.0, 1.0, 0.5]), seed=0)
    owner = type(agent).__name__
    for bad in BAD_REWARDS:
        with pytest.raises(ValueError) as e:
            agent.update(0, bad)
        assert str(e.value) == (
            f"The 'reward' parameter of {owner} must be a finite real number. Got {bad!r} instead."
        )
    fresh = agents.make(name)
    fresh.reset(_problem([0.0, 1.0, 0.5]), seed=0)
    for got, want in zip(agent.posterior(), fresh.posterior(), strict=True):
        np.testing.assert_array_equal(got, want)  # the refused rewards left no trace
    for good in (np.float32(0.5), np.array(0.25), 1, -2.0):
        agent.update(int(agent.act()), good)
        fresh.update(int(fresh.act()), float(good))
    for got, want in zip(agent.posterior(), fresh.posterior(), strict=True):
        np.testing.assert_array_equal(got, want)


BAD_SEEDS = [-1, np.int64(-3), True, np.bool_(False), 1.0, "0", [0]]


@pytest.mark.parametrize("name", ["robust-ucb-mom", "robust-ucb-trunc", "random", "gp-ucb"])
def test_bad_seeds_get_one_message(name: str) -> None:
    """The baselines and the GP agents check a seed with one implementation
    (``hbo_envs.validation.check_seed``): the same message for every bad value; None and
    non-negative Python or NumPy integers are accepted, and a NumPy integer seeds the same
    generator as the Python one."""
    agent = agents.make(name)
    owner = type(agent).__name__
    for bad in BAD_SEEDS:
        with pytest.raises(ValueError) as e:
            agent.reset(_problem([0.0, 1.0, 0.5]), seed=bad)
        assert str(e.value) == (
            f"The 'seed' parameter of {owner} must be None or a non-negative integer. "
            f"Got {bad!r} instead."
        )
    agent.reset(_problem([0.0, 1.0, 0.5]), seed=None)
    plays = []
    for seed in (7, np.int64(7), np.uint8(7)):
        agent.reset(_problem([0.0, 1.0, 0.5]), seed=seed)
        plays.append([int(agent.act()) for _ in range(1)] + [float(agent.rng_.random())])
    assert plays[0] == plays[1] == plays[2]


def test_moment_overrides_replace_the_problems() -> None:
    a = agents.make("robust-ucb-trunc", u=8.0)
    a.reset(_problem([0.0, 1.0], v=2.0), seed=0)
    a.update(0, 0.1)
    w = a.posterior()[1][0]
    b = agents.make("robust-ucb-trunc")
    b.reset(_problem([0.0, 1.0], v=8.0), seed=0)
    b.update(0, 0.1)
    assert w == b.posterior()[1][0]


# ------------------------------------------------------------------------ regret
def _run(name: str, ch, f: np.ndarray, T: int, seed: int) -> float:
    m = ch.moments(f)
    problem = Problem(
        np.arange(f.size, dtype=float)[:, None],
        np.eye(f.size),
        None,
        B=1.0,
        alpha=m.alpha,
        v=m.v,
        nu=m.nu,
        sup_f=float(np.max(np.abs(f))),
        horizon=T,
    )
    agent = agents.make(name)
    agent.reset(problem, seed=seed)
    rng = np.random.default_rng(1000 + seed)
    regret = 0.0
    for _ in range(T):
        a = agent.act()
        agent.update(a, ch.sample(float(f[a]), a, rng))
        regret += float(f.max() - f[a])
    return regret


@pytest.mark.parametrize("name", ["robust-ucb-trunc", "robust-ucb-mom"])
def test_beats_uniform_play_and_meets_proposition_1(name: str) -> None:
    """Three arms, gaps 2, T = 20000, Gaussian noise with 5% symmetric Pareto(1.8) outliers
    (infinite variance; alpha = 0.5). Proposition 1 bounds the expected regret by
    sum_i 2c (v/Delta_i)^{1/eps} log T + 5 Delta_i: with v = u, c = 4^{p/eps} (truncation)
    or v = 12 nu, c = 16 (MoM; log T read as log(e^{1/8} T^2)/2, the width's own log).
    Uniform play loses (4/3) T = 26667; measured (3 seeds): 646-662 (trunc), 1058-1086
    (MoM), against bounds of about 1040 and 2440."""
    ch = Contaminated(sigma=0.1, prob=0.05, outlier_shape=1.8, outlier_scale=1.0, alpha=0.5)
    f = np.array([1.0, -1.0, -1.0])
    T = 20_000
    m = ch.moments(f)
    eps, p = m.alpha, 1 + m.alpha
    if name == "robust-ucb-trunc":
        v, c, logT = m.v, 4 ** (p / eps), math.log(T)
    else:
        v, c, logT = 12 * m.nu, 16.0, (0.125 + 2 * math.log(T)) / 2
    bound = sum(2 * c * (v / d) ** (1 / eps) * logT + 5 * d for d in (2.0, 2.0))
    regrets = [_run(name, ch, f, T, seed) for seed in range(3)]
    uniform = T * float(f.max() - f.mean())
    assert np.mean(regrets) < bound, (regrets, bound)
    assert max(regrets) < 0.1 * uniform, (regrets, uniform)
