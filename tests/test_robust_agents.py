"""The robust agents of issue 19 against naive re-implementations of their formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import agents
from agents.robust.outlier_gp_ucb import (
    CHORD_EXPLICIT_AFTER,
    OutlierGPUCB,
    flag_outliers,
    student_t_laplace,
)
from agents.robust.rcgp_ucb import RCGPUCBAdaptive, pimq_weight_terms
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem

NEW = ("rcgp-ucb", "rcgp-ucb-adaptive", "ec-gp-ucb", "outlier-gp-ucb")


def problem(n=12, horizon=60, C=None):
    X = np.linspace(0, 1, n)[:, None]
    k = SquaredExponential(0.2)
    return Problem(
        points=X,
        kernel_matrix=k(X),
        kernel=k,
        B=1.5,
        alpha=1,
        v=1.01,
        nu=0.01,
        sup_f=1,
        horizon=horizon,
        C=C,
    )


def naive_rcgp(K, arms, ys, centres, L, c, s2):
    """Note §2–§3 verbatim: w = (s/sqrt2)(1+e^2/c^2)^-1/2, J = s^2/(2w^2),
    m_w = s^2 d/dy log w^2 (by central finite differences), t x t solve."""
    ys = np.asarray(ys, float)

    def logw2(y, g):
        e = max(abs(y - g) - L, 0.0)
        w = math.sqrt(s2 / 2) * (1 + e * e / (c * c)) ** -0.5
        return math.log(w * w)

    J = []
    mw = []
    for y, g in zip(ys, centres, strict=True):
        e = max(abs(y - g) - L, 0.0)
        w = math.sqrt(s2 / 2) * (1 + e * e / (c * c)) ** -0.5
        J.append(s2 / (2 * w * w))
        h = 1e-6
        mw.append(s2 * (logw2(y + h, g) - logw2(y - h, g)) / (2 * h))
    Kt = K[np.ix_(arms, arms)] + s2 * np.diag(J)
    kx = K[:, arms]
    mu = kx @ np.linalg.solve(Kt, ys - np.array(mw))
    var = np.diag(K) - np.einsum("ij,ji->i", kx, np.linalg.solve(Kt, kx.T))
    return mu, var


def test_scalar_pimq_terms_equal_the_vectorised_ones_bit_for_bit():
    from agents.robust.rcgp_ucb import _pimq_scalar

    rng = np.random.default_rng(0)
    r = np.concatenate(
        [rng.standard_t(2, 2000) * 3, [0.0, -0.0, 0.5, -0.5, 1e300, -1e300, 5e-324, 0.5 + 1e-16]]
    )
    for L, c, s2 in ((0.5, 2.0, 0.3), (0.0, 1e-3, 1.0), (1.0, 1e200, 2.0)):
        with np.errstate(over="ignore"):
            J, sh = pimq_weight_terms(r, L, c, s2)
        one = np.array([_pimq_scalar(float(x), L, c, s2) for x in r])
        assert np.array_equal(one[:, 0], J) and np.array_equal(one[:, 1], sh)


def test_pimq_terms_match_the_definition_and_survive_1e300():
    J, sh = pimq_weight_terms(np.array([0.2, -2.5, 1e300]), L=0.5, c=2.0, sigma2=0.3)
    assert J[0] == 1.0 and sh[0] == 0.0  # inside the plateau: the GP exactly
    assert J[1] == pytest.approx(1 + 2.0**2 / 4.0)
    assert sh[1] == pytest.approx(-2 * 0.3 * (-1) * 2.0 / (4.0 + 4.0))
    assert math.isinf(J[2]) and abs(sh[2]) < 1e-299


@pytest.mark.parametrize("lam", [1.0, 0.3])
def test_rcgp_ucb_posterior_matches_naive_rcgp(lam):
    p = problem()
    agent = agents.make("rcgp-ucb", lam=lam, L=0.4, c=0.7, beta=2.0)
    agent.reset(p, seed=0)
    arms = [1, 5, 5, 9, 3, 5]
    ys = [0.1, 2.5, -0.3, -4.0, 0.35, 1e6]
    for a, y in zip(arms, ys, strict=True):
        agent.update(a, y)
    mu, var = naive_rcgp(p.kernel_matrix, arms, ys, [0.0] * len(ys), 0.4, 0.7, lam)
    m, w = agent.posterior()
    np.testing.assert_allclose(m, mu, atol=1e-8)
    np.testing.assert_allclose(w, 2.0 * np.sqrt(np.maximum(var, 0)), atol=1e-8)


def test_rcgp_ucb_plays_exactly_as_gp_ucb_inside_the_plateau():
    p = problem()
    rng = np.random.default_rng(1)
    f = np.sin(6 * p.points[:, 0])
    a1, a2 = agents.make("gp-ucb"), agents.make("rcgp-ucb", L=100.0)
    a1.reset(p, seed=3)
    a2.reset(p, seed=3)
    for _ in range(40):
        x1, x2 = a1.act(), a2.act()
        assert x1 == x2
        y = f[x1] + 0.1 * rng.standard_normal()
        a1.update(x1, y)
        a2.update(x2, y)
    np.testing.assert_allclose(a1.posterior()[0], a2.posterior()[0], atol=1e-12)


def test_a2_uses_the_lagged_anchor_mean_as_centre():
    p = problem()
    agent = agents.make("rcgp-ucb-adaptive", L=0.3, L_anchor=0.5, c=0.5, beta=1.0)
    agent.reset(p, seed=0)
    arms = [2, 7, 7, 4, 2, 10]
    ys = [0.4, 1.5, 0.2, -0.9, 30.0, 0.1]
    for a, y in zip(arms, ys, strict=True):
        agent.update(a, y)
    K = p.kernel_matrix
    # anchor: FC-RCGP (centre 0, L_A) on all but the newest observation
    muA, _ = naive_rcgp(K, arms[:-1], ys[:-1], [0.0] * 5, 0.5, 0.5, 1.0)
    mu, var = naive_rcgp(K, arms, ys, muA[arms], 0.3, 0.5, 1.0)
    m, w = agent.posterior()
    np.testing.assert_allclose(m, mu, atol=1e-8)
    np.testing.assert_allclose(w, np.sqrt(np.maximum(var, 0)), atol=1e-8)


def test_ec_gp_ucb_width_is_beta_plus_eps_sqrt_t_over_sqrt_lambda():
    p = problem(C=6.0, horizon=60)
    agent = agents.make("ec-gp-ucb", lam=0.25, beta=1.5)  # epsilon = C / T = 0.1
    ref = agents.make("gp-ucb", lam=0.25, beta=1.5)
    agent.reset(p, seed=0)
    ref.reset(p, seed=0)
    for a, y in ((0, 0.3), (4, -0.2), (4, 0.1)):
        agent.update(a, y)
        ref.update(a, y)
    t = 4
    m, w = agent.posterior()
    mr, wr = ref.posterior()
    np.testing.assert_array_equal(m, mr)
    np.testing.assert_allclose(w, wr / 1.5 * (1.5 + 0.1 * math.sqrt(t) / math.sqrt(0.25)))


def test_student_t_laplace_mode_is_the_map_and_flags_the_outlier():
    rng = np.random.default_rng(0)
    K = SquaredExponential(0.3)(np.linspace(0, 1, 6)[:, None])
    idx = np.array([0, 1, 1, 2, 3, 4, 5, 5, 2])
    y = np.sin(3 * idx / 5.0) + 0.05 * rng.standard_normal(idx.size)
    y[4] += 40.0  # one gross outlier
    nu, s = 4.0, 0.1
    f_hat, var = student_t_laplace(K + 1e-10 * np.eye(6), idx, y, nu, s)

    def neg_log_post(f):
        r = y - f[idx]
        ll = np.sum(stats.t.logpdf(r / s, nu))
        return -(ll - 0.5 * f @ np.linalg.solve(K + 1e-10 * np.eye(6), f))

    from scipy.optimize import minimize

    ref = minimize(neg_log_post, np.zeros(6), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(f_hat, ref.x, atol=1e-4)
    flags = flag_outliers(y, f_hat[idx], np.sqrt(var[idx] + s * s * nu / (nu - 2)), nu, 0.05)
    assert flags.tolist() == [i == 4 for i in range(idx.size)]
    assert float(stats.t.ppf(0.975, 4)) == pytest.approx(2.7764451, rel=1e-6)


def test_student_t_laplace_newton_steps_reach_the_fisher_mode_in_fewer_steps():
    """The agent's iteration (observed curvature floored at the Fisher information, warm
    start) reaches the mode of the reference Fisher scoring from a cold start (to 1e-9),
    with the same variances, in fewer steps; with 5% gross outliers (curvature below the
    floor at them), the model's scale above the noise's (as the agent's default scale on
    Student-t(3) noise: Fisher scoring then overshoots) and a warm start from a perturbed
    mode."""
    from unittest import mock

    from agents.robust import outlier_gp_ucb as mod

    rng = np.random.default_rng(1)
    K = SquaredExponential(0.2)(np.linspace(0, 1, 30)[:, None]) + 1e-8 * np.eye(30)
    idx = rng.integers(0, 30, 3000)
    y = np.sin(6 * idx / 30) + 0.3 * rng.standard_t(3, idx.size)
    y[rng.random(idx.size) < 0.05] += 25.0
    real = mod.lapack.dpotrs
    calls: list[int] = []

    def count(*a, **k):  # one dpotrs per step of the iteration
        calls.append(1)
        return real(*a, **k)

    steps, out = {}, {}
    for key in ("fisher", "newton", "warm"):
        kw = {} if key == "fisher" else {"newton": True}
        if key == "warm":
            kw["f0"] = out["fisher"][0] + 1e-3 * rng.standard_normal(30)
        calls.clear()
        with mock.patch.object(mod.lapack, "dpotrs", count):
            out[key] = student_t_laplace(K, idx, y, 4.0, 0.6, iters=500, **kw)
        steps[key] = len(calls)
    for key in ("newton", "warm"):
        np.testing.assert_allclose(out[key][0], out["fisher"][0], rtol=0, atol=1e-9)
        np.testing.assert_array_equal(out[key][1], out["fisher"][1])
    assert steps["warm"] < steps["newton"] < steps["fisher"] / 2, steps


def test_outlier_gp_ucb_drops_flagged_points_from_its_gp():
    p = problem(n=10)
    agent = agents.make("outlier-gp-ucb", n_init=4, n_schedule=1, beta=1.0)
    agent.reset(p, seed=0)
    f = np.cos(4 * p.points[:, 0])
    plan = [0, 3, 6, 9, 3, 6]
    for i, a in enumerate(plan):
        agent.update(a, f[a] + (1e6 if i == 4 else 0.0))
    assert agent.outliers_.tolist() == [False] * 4 + [True, False]
    clean = agents.make("gp-ucb", beta=1.0)
    clean.reset(p, seed=0)
    for i, a in enumerate(plan):
        if i != 4:
            clean.update(a, f[a])
    np.testing.assert_allclose(agent.posterior()[0], clean.posterior()[0], atol=1e-10)


@pytest.mark.parametrize(
    "name, bad",
    [
        ("rcgp-ucb", {"L": -1.0}),
        ("rcgp-ucb", {"c": 0.0}),
        ("rcgp-ucb-adaptive", {"L_anchor": float("nan")}),
        ("ec-gp-ucb", {"epsilon": -0.1}),
        ("outlier-gp-ucb", {"nu": 2.0}),
        ("outlier-gp-ucb", {"alpha": 1.0}),
        # issue 37 item 8's fuzz findings: a diagnosis schedule no run can reach, and
        # Student-t scales whose square or reciprocal square overflows
        ("outlier-gp-ucb", {"n_init": 2**64}),
        ("outlier-gp-ucb", {"n_schedule": 2**64}),
        ("outlier-gp-ucb", {"R": 1e300}),
        ("outlier-gp-ucb", {"R": 1e-300}),
        ("outlier-gp-ucb", {"scale": 1e300}),
        ("outlier-gp-ucb", {"scale": 1e-300}),
    ],
)
def test_bad_parameters_are_refused_naming_them(name, bad):
    cls = agents.registry.resolve(name)
    key = next(iter(bad))
    agent = cls(**bad)
    with pytest.raises(ValueError, match=f"'{key}' parameter of {cls.__name__}"):
        agent.reset(problem(), seed=0)


@pytest.mark.parametrize("name", NEW)
def test_huge_corruptions_keep_outputs_finite(name):
    agent = agents.make(name)
    agent.reset(problem(), seed=0)
    for i in range(25):
        a = agent.act()
        agent.update(a, 1e15 if i % 5 == 0 else 0.1)
    m, w = agent.posterior()
    assert np.all(np.isfinite(m)) and np.all(np.isfinite(w))


# --------------------------------------------------------------------------------------
# The flat-cost refits (issue 21) against the previous implementations, transcribed
# verbatim in benchmarks/bench_robust.py: a fresh engine fed one aggregated observation
# per played arm, every weight recomputed over all t observations (RCGP-A2); np.unique
# and Python lists (outlier).


def _previous():
    """The previous implementations, kept verbatim in ``benchmarks/bench_robust.py`` (the
    benchmark times them beside the new ones)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_robust import PreviousOutlierGPUCB, PreviousRCGPAdaptive

    return PreviousRCGPAdaptive, PreviousOutlierGPUCB


def _lockstep(new, old, env_id, rounds, seed, check_every=25):
    """Run both agents on one env trajectory; assert equal actions every round and equal
    posteriors (to rounding) every ``check_every`` rounds."""
    import gymnasium as gym

    import hbo_envs  # noqa: F401

    env = gym.make(env_id, horizon=rounds).unwrapped
    env.reset(seed=seed)
    new.reset(env.problem, seed=seed)
    old.reset(env.problem, seed=seed)
    for t in range(rounds):
        a = new.act()
        assert a == old.act(), f"round {t}"
        _, y, _, _, _ = env.step(a)
        new.update(a, y)
        old.update(a, y)
        if t % check_every == 0 or t == rounds - 1:
            (m1, w1), (m2, w2) = new.posterior(), old.posterior()
            np.testing.assert_allclose(m1, m2, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(w1, w2, rtol=1e-9, atol=1e-9)
    return new, old


@pytest.mark.parametrize(
    "env_id, seed",
    [("hbo/RKHS-SE-StudentT-v0", 0), ("hbo/Frequency-SE-v0", 1), ("hbo/Frequency-SE-v0", 2)],
)
def test_rcgp_adaptive_flat_refit_plays_as_the_previous_implementation(env_id, seed):
    _lockstep(RCGPUCBAdaptive(), _previous()[0](), env_id, 400, seed)


def test_rcgp_adaptive_flat_refit_with_many_outside_the_plateau():
    # a narrow plateau puts most residuals outside it, and corruptions of +-1e12 beyond the
    # core bound: both paths of PlateauRewards, merges included
    p = problem(n=15, horizon=300)
    rng = np.random.default_rng(5)
    f = np.sin(5 * p.points[:, 0])
    new = RCGPUCBAdaptive(L=0.05, L_anchor=0.1, c=0.3, beta=1.0)
    old = _previous()[0](L=0.05, L_anchor=0.1, c=0.3, beta=1.0)
    new.reset(p, seed=0)
    old.reset(p, seed=0)
    for t in range(300):
        a = new.act()
        assert a == old.act()
        y = f[a] + 0.1 * rng.standard_t(2)
        if t % 37 == 5:
            y = (-1e12, 1e12)[t % 2]
        new.update(a, y)
        old.update(a, y)
    (m1, w1), (m2, w2) = new.posterior(), old.posterior()
    np.testing.assert_allclose(m1, m2, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(w1, w2, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "env_id, seed", [("hbo/RKHS-SE-StudentT-v0", 0), ("hbo/Frequency-SE-v0", 1)]
)
def test_outlier_gp_ucb_flat_bookkeeping_plays_as_the_previous_implementation(env_id, seed):
    new, old = _lockstep(OutlierGPUCB(), _previous()[1](), env_id, 300, seed)
    assert np.array_equal(new.outliers_, old.outliers_)


def test_plateau_rewards_split_is_exact_at_the_boundaries():
    # count/sum inside [g - L, g + L] from the sorted main rewards, every other reward
    # returned for individual weighting: together they are every reward exactly once, and
    # what is counted inside is inside (rewards on the boundary may go either way).
    from agents.robust.rcgp_ucb import PlateauRewards

    rng = np.random.default_rng(2)
    n, L = 6, 0.5
    rw = PlateauRewards(n, bound=10.0)
    arms = rng.integers(0, n - 1, 400)  # arm n - 1 never played
    ys = rng.normal(size=400) * 0.6
    ys[::50] = 1e12  # beyond the bound
    centre = rng.normal(size=n) * 0.3
    ys[1::40] = centre[arms[1::40]] + L  # exactly on the boundary
    ys[2::40] = centre[arms[2::40]] - L
    for a, y in zip(arms, ys, strict=True):
        rw.add(int(a), float(y))
    cnt, tot, oa, oy = rw.statistics(centre, L)
    inside = np.abs(ys - centre[arms]) <= L
    np.testing.assert_array_equal(
        cnt + np.bincount(oa, minlength=n), np.bincount(arms, minlength=n)
    )
    ref = np.bincount(arms, weights=np.where(inside, ys, 0.0), minlength=n)
    in_out = np.bincount(oa, weights=np.where(np.abs(oy - centre[oa]) <= L, oy, 0.0), minlength=n)
    np.testing.assert_allclose(tot + in_out, ref, atol=1e-12)
    assert cnt[n - 1] == 0 and tot[n - 1] == 0.0
    assert np.count_nonzero(oy == 1e12) == np.count_nonzero(ys == 1e12)


@pytest.mark.parametrize(
    ("n", "bound", "name"),
    [(0, 1.0, "n"), (2.5, 1.0, "n"), (True, 1.0, "n"), (3, 0.0, "bound"), (3, -1.0, "bound"),
     (3, float("nan"), "bound"), (3, 1e-320, "bound"), (3, True, "bound"), (3, "10", "bound")],
)  # fmt: skip
def test_plateau_rewards_refuses_bad_arguments_at_construction(n, bound, name):
    # 1e-320: 0.25 / bound overflows to inf, so every key would be NaN or inf.
    from agents.robust.rcgp_ucb import PlateauRewards

    with pytest.raises(ValueError, match=rf"'{name}' parameter of PlateauRewards must be"):
        PlateauRewards(n, bound)


def test_plateau_rewards_with_an_infinite_bound_weights_every_reward_individually():
    # bound = inf (the agent's value when its constants overflow): nothing is certain to
    # lie in a window, so every reward comes back for individual weighting, none lost.
    from agents.robust.rcgp_ucb import PlateauRewards

    rw = PlateauRewards(3, math.inf)
    ys = np.random.default_rng(0).normal(size=200)
    for i, y in enumerate(ys.tolist()):
        rw.add(i % 2, y)
    cnt, tot, arms, out = rw.statistics(np.zeros(3), 1.0)
    assert rw._key.size > 0 and cnt.sum() == 0 and tot.sum() == 0.0
    np.testing.assert_array_equal(np.sort(out), np.sort(ys))


def test_plateau_rewards_refuses_an_n_that_cannot_fit_before_allocating(monkeypatch):
    from agents.robust.rcgp_ucb import PlateauRewards
    from hbo_envs.memory import MemoryLimitError

    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(10**6))
    with pytest.raises(MemoryLimitError, match=r"PlateauRewards: n=10000000000 needs an "
                       r"estimated 240.0 GB"):  # fmt: skip
        PlateauRewards(10**10, 1.0)


# --------------------------------------------------------------------------------------
# issue 39 item 1: outlier-gp-ucb's diagnosis without a pass over the t observations


def _direct_scores(ys, f, nu, s):
    """Score and curvature of one arm's Student-t likelihood, term by term."""
    c = nu * s * s
    r = np.asarray(ys) - f
    g = (nu + 1) * np.sum(r / (c + r * r))
    h = (nu + 1) * np.sum((c - r * r) / (c + r * r) ** 2)
    return g, h, (nu + 1) * np.sum(1.0 / np.sqrt(c + r * r))  # last: the terms' size


@pytest.mark.parametrize("nu, s", [(4.0, 0.6), (2.5, 3.0), (30.0, 0.05)])
def test_student_t_scores_from_moments_equal_the_direct_sums(nu, s):
    # Taylor moments of the Cauchy sum about each arm's centre, against the sums over the
    # rewards, at latent values near the centre (no re-centring) and far from it
    # (re-centred from the stored rewards), with corruptions of 1e12 among the rewards.
    from agents.robust.outlier_gp_ucb import StudentTScores
    from agents.robust.rcgp_ucb import PlateauRewards

    rng = np.random.default_rng(3)
    n = 7
    rw = PlateauRewards(n, bound=50.0)
    sc = StudentTScores(n, nu, s, rw)
    arms = rng.integers(0, n - 1, 600)  # arm n - 1 never played
    ys = np.sin(arms) + s * rng.standard_t(3, 600)
    ys[::97] = 1e12
    S = np.arange(n - 1)
    for i, (a, y) in enumerate(zip(arms.tolist(), ys.tolist(), strict=True)):
        rw.add(a, y)
        sc.add(a, y)
        if i in (50, 300):  # centres move with the data: later adds use the new centres
            sc.derivatives(S, np.sin(S) + rng.normal(size=S.size))
    for shift, recentres in ((0.2 * sc.reach, False), (40.0 * sc.reach, True)):
        f = sc._centre[S] + shift * rng.uniform(-1, 1, S.size)
        before = sc.recentred
        g, h = sc.derivatives(S, f)
        assert (sc.recentred > before) == recentres
        for j, a in enumerate(S.tolist()):
            g0, h0, size = _direct_scores(ys[arms == a], f[j], nu, s)
            assert abs(g[j] - g0) <= 1e-13 * size
            assert abs(h[j] - h0) <= 1e-13 * size / math.sqrt(nu * s * s)


def test_student_t_scores_cache_follows_each_reward_bit_for_bit():
    # the moments cached for the arms S are updated column by column as rewards arrive
    # (no rebuild per diagnosis): after every add they equal a fresh cache's exactly, and
    # the score without curvature equals the first element of derivatives() exactly
    from agents.robust.outlier_gp_ucb import StudentTScores
    from agents.robust.rcgp_ucb import PlateauRewards

    rng = np.random.default_rng(7)
    n = 6
    rw = PlateauRewards(n, bound=50.0)
    sc = StudentTScores(n, 4.0, 0.5, rw)
    fresh = StudentTScores(n, 4.0, 0.5, rw)
    S = np.array([0, 2, 3, 5])
    for i in range(300):
        a = int(rng.integers(0, n))  # arms 1 and 4 are outside S
        y = float(np.cos(a) + 0.5 * rng.standard_t(3))
        rw.add(a, y)
        for s in (sc, fresh):
            s.add(a, y)
        if i % 7 == 0:
            f = np.cos(S) + 0.01 * rng.normal(size=S.size)
            if i % 2:
                sc.derivatives(S, f)  # the curvature column cache too
            fresh._cache = None  # rebuilt from the moments: the reference
            fresh._slot[:] = -1
            fresh._centre[:] = sc._centre
            fresh._re[:] = sc._re
            g, h = fresh.derivatives(S, f)
            assert np.array_equal(sc.score(S, f), g)
            g2, h2 = sc.derivatives(S, f)
            assert np.array_equal(g2, g) and np.array_equal(h2, h)
            for k in (2, 3):
                assert np.array_equal(sc._cache[k], fresh._cache[k])


def test_student_t_scores_refuse_an_order_below_3():
    from agents.robust.outlier_gp_ucb import StudentTScores

    with pytest.raises(ValueError, match=r"'order' parameter of StudentTScores must be"):
        StudentTScores(3, 4.0, 1.0, rewards=None, order=2)


def test_outlier_chord_matrix_is_the_laplace_covariance():
    # once a factorisation keeps serving, the mode search forms A = K - V^T V explicitly:
    # it equals (K^-1 + W')^-1 (a direct solve), a step with it equals the step by
    # triangular solves on the factor, and a chord step from the mode stays at the mode
    from scipy.linalg import cho_solve

    p = problem(n=15, horizon=400)
    agent = OutlierGPUCB(scale=0.3)
    agent.reset(p, seed=0)
    rng = np.random.default_rng(1)
    f = np.sin(5 * p.points[:, 0])
    formed = None
    for t in range(400):
        a = agent.act()
        agent.update(a, float(f[a] + 0.3 * rng.standard_t(3)))
        if agent._factor is not None and agent._factor[3] is not None:
            formed = t
            break
    assert formed is not None  # the chord keeps a factor for several steps within 400 rounds
    Li, swp, Wp, A, uses = agent._factor
    K = agent._K_SS
    assert uses > CHORD_EXPLICIT_AFTER and np.isfinite(A).all() and Wp.size == K.shape[0] >= 5
    want = np.linalg.solve(np.eye(K.shape[0]) + K * Wp[None, :], K)  # (I + K W')^-1 K
    np.testing.assert_allclose(A, want, rtol=1e-7, atol=1e-9 * np.abs(want).max(), equal_nan=False)
    b = rng.normal(size=K.shape[0])
    by_solves = K @ (b - swp * cho_solve((np.tril(Li), True), swp * (K @ b)))
    np.testing.assert_allclose(A @ b, by_solves, rtol=1e-10, atol=1e-12 * np.abs(by_solves).max())
    S = agent._S
    mode, _ = agent._mode_search(agent._mode[S].copy(), agent._rewards.count[S] * agent._w_obs)
    g = agent._scores.score(S, mode)
    Li, swp, Wp, A, _ = agent._factor
    b = Wp * mode + g  # one chord step from the mode, in whichever form the factor is at
    step = K @ (b - swp * cho_solve((np.tril(Li), True), swp * (K @ b))) if A is None else A @ b
    np.testing.assert_allclose(step, mode, atol=1e-9)
    # the mode: K^-1 f = g(f), i.e. f = K g(f)
    np.testing.assert_allclose(K @ g, mode, atol=1e-8)


def test_plateau_rewards_per_arm_windows_and_arm_values():
    from agents.robust.rcgp_ucb import PlateauRewards

    rng = np.random.default_rng(4)
    n = 5
    rw = PlateauRewards(n, bound=5.0)
    arms = rng.integers(0, n, 700)
    ys = rng.normal(size=700)
    ys[::60] = -1e9
    for a, y in zip(arms.tolist(), ys.tolist(), strict=True):
        rw.add(a, y)
    centre, half = rng.normal(size=n) * 0.2, rng.uniform(0.1, 1.5, n)
    cnt, tot, oa, oy = rw.statistics(centre, half)
    inside = np.abs(ys - centre[arms]) <= half[arms]
    assert np.all(np.abs(oy[np.abs(oy - centre[oa]) < half[oa]] - centre[oa][
        np.abs(oy - centre[oa]) < half[oa]]) >= 0)  # fmt: skip
    ref_cnt = np.bincount(arms[inside], minlength=n)
    out_in = np.abs(oy - centre[oa]) <= half[oa]
    np.testing.assert_array_equal(cnt + np.bincount(oa[out_in], minlength=n), ref_cnt)
    ref_sum = np.bincount(arms[inside], weights=ys[inside], minlength=n)
    got = tot + np.bincount(oa[out_in], weights=oy[out_in], minlength=n)
    np.testing.assert_allclose(got, ref_sum, atol=1e-12)
    for sel in ([0], [1, 3], list(range(n))):
        owner, vals = rw.arm_values(np.array(sel))
        for a in sel:
            np.testing.assert_array_equal(np.sort(vals[owner == a]), np.sort(ys[arms == a]))


def _corrupted_lockstep(new, old, p, rounds, seed, corrupt_every=23):
    rng = np.random.default_rng(seed)
    f = np.sin(5 * p.points[:, 0])
    new.reset(p, seed=seed)
    old.reset(p, seed=seed)
    for t in range(rounds):
        a = new.act()
        assert a == old.act(), f"round {t}"
        y = f[a] + 0.3 * rng.standard_t(3)
        if t % corrupt_every == 7:
            y += (-1.0, 1.0)[t % 2] * 10.0 ** rng.uniform(0.5, 12)
        new.update(a, y)
        old.update(a, y)
    np.testing.assert_array_equal(new.outliers_, old.outliers_)
    # both GPs hold the inliers to the rounding of the largest one (a corruption held as
    # an inlier until the next diagnosis counts: eps |y| either way)
    size = 1.0 + np.max(np.abs(np.asarray(old._ys)[~old.outliers_]))
    (m1, w1), (m2, w2) = new.posterior(), old.posterior()
    np.testing.assert_allclose(m1, m2, rtol=1e-9, atol=1e-9 * size)
    np.testing.assert_allclose(w1, w2, rtol=1e-9, atol=1e-9)
    return new


@pytest.mark.parametrize(
    "kw",
    [
        {"scale": 0.3},  # the noise's scale: the Fisher engine, few re-centrings
        {"scale": 0.15},  # half of it: re-centring often
        {"scale": 1e-3, "n_schedule": 1},  # 1 / w_obs < 1e-3 k(x, x): variance per diagnosis
        {"alpha": 0.4, "nu": 3.0},  # many flagged rewards: the individual-test path
    ],
)
def test_outlier_gp_ucb_matches_the_cold_refit_under_corruptions(kw):
    # the flat diagnosis (moments, chord mode search from the last mode, Fisher engine,
    # window searches) against the previous implementation (a cold Fisher-scoring refit
    # over every observation each diagnosis, np.unique, flags by flag_outliers). With a
    # Student-t scale well below the noise the posterior has several modes and a warm
    # start may track another one than a cold start (the class docstring): the scales here
    # are the noise's and half of it.
    p = problem(n=15, horizon=400)
    new = _corrupted_lockstep(OutlierGPUCB(**kw), _previous()[1](**kw), p, 400, 2)
    if "n_schedule" in kw:
        assert new._fisher is None
    if kw.get("scale") == 0.15:
        assert new._scores.recentred > 100
    if "alpha" in kw:
        assert new.outliers_.sum() > 400 // 23  # more than the corruptions


def test_outlier_gp_ucb_coarse_mode_refines_when_a_flag_is_ambiguous(monkeypatch):
    # a coarse mode 1e5 times looser than the default: rewards near a window edge make
    # the diagnosis refine the mode to 1e-10, and the masks stay the cold refit's
    import agents.robust.outlier_gp_ucb as mod

    monkeypatch.setattr(mod, "MODE_TOL_COARSE", 1e-2)
    p = problem(n=15, horizon=400)
    new = _corrupted_lockstep(OutlierGPUCB(scale=0.3), _previous()[1](scale=0.3), p, 400, 3)
    assert new.mode_refinements > 10


def test_outlier_gp_ucb_mode_search_reuses_its_factor_late_in_a_run():
    # the chord iteration factors I + W'^1/2 K W'^1/2 less than once per diagnosis (the
    # previous floored Newton: about 5 times) and re-centres the moments rarely once the
    # modes settle: no O(t) work per round
    import gymnasium as gym

    import hbo_envs  # noqa: F401

    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=1500).unwrapped
    env.reset(seed=0)
    agent = OutlierGPUCB()
    agent.reset(env.problem, seed=0)
    marks = {}
    for t in range(1500):
        a = agent.act()
        _, y, _, _, _ = env.step(a)
        agent.update(a, y)
        if t in (999, 1499):
            marks[t] = (agent.newton_factorizations, agent._scores.recentred)
    diagnoses = 500 // agent.n_schedule_
    assert marks[1499][0] - marks[999][0] < diagnoses, marks
    assert marks[1499][1] - marks[999][1] < diagnoses / 4, marks


def test_student_t_scores_refuse_an_n_that_cannot_fit_before_allocating(monkeypatch):
    from agents.robust.outlier_gp_ucb import StudentTScores
    from hbo_envs.memory import MemoryLimitError

    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(10**6))
    with pytest.raises(MemoryLimitError, match=r"StudentTScores: n=10000000000 needs an "
                       r"estimated 1.0 TB"):  # fmt: skip
        StudentTScores(10**10, 4.0, 1.0, rewards=None)


@pytest.mark.parametrize("name", ["rcgp-ucb-adaptive", "outlier-gp-ucb"])
def test_actions_and_posterior_do_not_depend_on_the_blas_thread_count(name, monkeypatch):
    """docs/agents.md ("Your own loop: one BLAS thread"): the harness runs these two agents
    on one BLAS thread, a plain script on the default of one per core, and the two must
    play the same arms with the same posterior. Their small BLAS-3 calls are guarded onto
    one thread (hbo_envs.blas), so the guard is switched off here: the calls really go to
    the pool. A short lengthscale spreads the plays over a few dozen arms, so the
    re-derivations (counted) and factorisations are large enough for OpenBLAS to hand them
    to its second thread; with two cores that thread's CPU time is checked too."""
    import os
    import time

    from threadpoolctl import threadpool_limits

    import hbo_envs.blas

    monkeypatch.setattr(hbo_envs.blas, "SMALL_BLAS_WORK", 0.0)  # no call is "small"

    n, T = 100, 400
    X = np.linspace(0, 1, n)[:, None]
    k = SquaredExponential(0.05)
    p = Problem(
        points=X, kernel_matrix=k(X), kernel=k, B=1.5, alpha=1, v=1.01, nu=0.01, sup_f=1,
        horizon=T,
    )  # fmt: skip
    f = np.sin(6 * X[:, 0])
    noise = 0.3 * np.random.default_rng(3).standard_t(2.0, size=T)

    def run(threads):
        agent = agents.make(name)
        agent.reset(p, seed=1)
        eng = agent.engine_
        refreshes = []
        refresh = eng.refresh

        def counted():
            refreshes.append(eng.t)
            refresh()

        eng.refresh = counted
        arms = []
        cpu, main = time.process_time(), time.thread_time()
        with threadpool_limits(limits=threads):
            for t in range(T):
                a = agent.act()
                agent.update(a, f[a] + noise[t])
                arms.append(a)
        helpers = (time.process_time() - cpu) - (time.thread_time() - main)
        return arms, agent.posterior(), len(refreshes), helpers

    arms1, (m1, w1), _, _ = run(1)
    arms2, (m2, w2), refreshed, helpers = run(2)
    assert arms1 == arms2
    assert np.array_equal(m1, m2) and np.array_equal(w1, w2)
    if name == "rcgp-ucb-adaptive":
        assert refreshed > 0  # the re-derivation ran on two threads
    if (os.cpu_count() or 1) >= 2:
        assert helpers > 0.0  # the BLAS pool's other thread did work


def test_outlier_diagnosis_runs_on_one_blas_thread():
    """hbo_envs.blas.small_blas: a diagnosis (its O(|S|^3) factorisations) runs on one
    BLAS thread whatever the caller set, while its work is small."""
    from threadpoolctl import threadpool_info, threadpool_limits

    p = problem(n=30, horizon=60)
    agent = OutlierGPUCB()
    agent.reset(p, seed=0)
    seen = []
    diagnose = agent._diagnose

    def spy():
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return diagnose()

    agent._diagnose = spy
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=2):
        for _ in range(40):
            a = agent.act()
            agent.update(a, float(rng.standard_t(3.0)))
        after = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    assert len(seen) >= 10 and all(s == {1} for s in seen)
    assert after == {2}  # restored after each diagnosis
