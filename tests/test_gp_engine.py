"""The exact GP posterior engine: hand-computed posteriors, naive t x t reference,
sufficient-statistics re-derivation, long-run stability and extreme rewards."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.gp.engine import GPPosteriorEngine
from hbo_envs.kernels import Matern, SquaredExponential

K3 = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]])


def naive_posterior(K, lam, arms, Y):
    """mu_t = k_t^T (K_t + lam I)^{-1} Y_t, sigma_t^2 = k(x,x) - k_t^T (K_t + lam I)^{-1} k_t,
    gamma_t = 1/2 ln det(I + K_t / lam), by solving the t x t system from scratch."""
    arms = np.asarray(arms, dtype=int)
    Y = np.asarray(Y, dtype=float).reshape(len(arms), -1)
    if len(arms) == 0:
        return np.zeros((len(K), Y.shape[1])), np.diag(K).copy(), 0.0
    Kt = K[np.ix_(arms, arms)]
    kt = K[:, arms]  # (n, t): row x is k_t(x)^T
    A = Kt + lam * np.eye(len(arms))
    W = np.linalg.solve(A, kt.T)  # (t, n): column x is (K_t + lam I)^{-1} k_t(x)
    mean = W.T @ Y
    var = np.diag(K) - np.einsum("ij,ji->i", kt, W)
    gamma = 0.5 * np.linalg.slogdet(np.eye(len(arms)) + Kt / lam)[1]
    return mean, var, gamma


def test_hand_computed_three_point_posterior():
    # Arms 0 and 2 are uncorrelated (k = 0), arm 1 sees both with k = 0.5; lambda = 1.
    eng = GPPosteriorEngine(K3, lam=1.0)
    eng.observe(0, 1.0)
    eng.observe(2, -1.0)
    # K_t + I = 2 I: mu(x) = (k(x, x0) - k(x, x2)) / 2, sigma^2(x) = 1 - |k_t(x)|^2 / 2.
    np.testing.assert_allclose(eng.mean[:, 0], [0.5, 0.0, -0.5], atol=1e-15)
    np.testing.assert_allclose(eng.variance(), [0.5, 0.75, 0.5], atol=1e-15)
    assert eng.info_gain == pytest.approx(math.log(2.0), abs=1e-15)  # 1/2 ln det(2 I_2)
    eng.observe(0, 3.0)
    # Arm 0 now has two plays (mean 2, noise 1/2), arm 2 one play (-1, noise 1):
    # mu(x0) = 2 / 1.5, mu(x1) = 0.5 * 2 / 1.5 - 0.5 * 1 / 2, mu(x2) = -1/2.
    np.testing.assert_allclose(eng.mean[:, 0], [4 / 3, 5 / 12, -0.5], rtol=1e-14)
    # sigma^2(x0) = 1 - 1/1.5, sigma^2(x1) = 1 - 0.25/1.5 - 0.25/2, sigma^2(x2) = 1/2.
    np.testing.assert_allclose(eng.variance(), [1 / 3, 17 / 24, 0.5], rtol=1e-14)
    # 1/2 ln det(I_3 + K_3) = 1/2 ln det(I + D^{1/2} K_SS D^{1/2}) = 1/2 ln(3 * 2).
    assert eng.info_gain == pytest.approx(0.5 * math.log(6.0), rel=1e-14)
    assert eng.t == 3 and list(eng.counts) == [2, 0, 1]


@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_matches_naive_reference_with_several_reward_sequences(lam):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(25, 2))
    K = Matern(0.3, 2.5)(X)
    eng = GPPosteriorEngine(K, lam=lam, n_outputs=3, refresh_every=0)
    arms, Y = [], []
    for t in range(120):
        a = int(rng.integers(8)) if t % 3 else int(rng.integers(25))  # many repeats
        y = rng.standard_t(2.0, size=3)
        arms.append(a)
        Y.append(y)
        eng.observe(a, y)
        if t % 17 == 0 or t == 119:
            mean, var, gamma = naive_posterior(K, lam, arms, Y)
            np.testing.assert_allclose(eng.mean, mean, rtol=1e-9, atol=1e-9 * np.abs(mean).max())
            np.testing.assert_allclose(eng.variance(), var, rtol=1e-9, atol=1e-12)
            assert eng.info_gain == pytest.approx(gamma, rel=1e-10)


def test_gain_is_the_weight_vector_of_the_new_observation():
    """(K_t + lam I)^{-1} k_t(x) has entry Sigma_t(x_tau, x) / lam for observation tau."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(12, 1))
    K = SquaredExponential(0.3)(X)
    lam = 0.7
    eng = GPPosteriorEngine(K, lam=lam)
    arms = [int(a) for a in rng.integers(12, size=30)]
    for a in arms[:-1]:
        eng.observe(a, 0.0)
    a_t = arms[-1]
    g = eng.gain(a_t)
    Kt = K[np.ix_(arms, arms)]
    w = np.linalg.solve(Kt + lam * np.eye(len(arms)), K[arms, a_t])  # weights in mu(x_t)
    np.testing.assert_allclose(w, g[arms], rtol=1e-10, atol=1e-13)


def test_rederive_from_sufficient_statistics_matches_naive():
    rng = np.random.default_rng(11)
    K = SquaredExponential(0.2)(np.linspace(0, 1, 30)[:, None])  # numerically singular K
    eng = GPPosteriorEngine(K, lam=1.0, refresh_every=0)
    arms = rng.integers(30, size=200)
    ys = rng.normal(size=200)
    for a, y in zip(arms, ys, strict=True):
        eng.observe(int(a), y)
    mean, cov, gamma = eng.rederive()
    m_ref, v_ref, g_ref = naive_posterior(K, 1.0, arms, ys)
    np.testing.assert_allclose(mean, m_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(np.diag(cov), v_ref, rtol=1e-9, atol=1e-12)
    assert gamma == pytest.approx(g_ref, rel=1e-11)


def test_incremental_updates_do_not_drift_over_1e5_rounds():
    """No refresh at all: after 10^5 rank-one updates (mostly repeats of a few arms, the
    UCB regime) the state equals the one re-derived from sufficient statistics."""
    rng = np.random.default_rng(0)
    K = SquaredExponential(0.2)(np.linspace(0, 1, 30)[:, None])
    eng = GPPosteriorEngine(K, lam=1.0, refresh_every=0)
    T = 100_000
    arms = np.where(rng.random(T) < 0.95, rng.integers(12, 16, T), rng.integers(0, 30, T))
    ys = 10.0 * rng.standard_t(1.5, T)
    for a, y in zip(arms.tolist(), ys.tolist(), strict=True):
        eng.observe(a, y)
    mean, cov, gamma = eng.rederive()
    scale = np.abs(mean).max()
    np.testing.assert_allclose(eng.mean, mean, rtol=0, atol=1e-9 * scale)
    var_inc, var_ref = np.diag(eng.cov), np.diag(cov)
    assert np.all(var_inc > 0)
    np.testing.assert_allclose(var_inc, var_ref, rtol=1e-6)
    np.testing.assert_allclose(eng.cov, cov, rtol=0, atol=1e-12)
    assert eng.info_gain == pytest.approx(gamma, rel=1e-9)


def test_periodic_refresh_keeps_state_equal_to_incremental():
    rng = np.random.default_rng(1)
    K = SquaredExponential(0.25)(rng.uniform(size=(20, 1)))
    a = GPPosteriorEngine(K, lam=0.5, refresh_every=37)
    b = GPPosteriorEngine(K, lam=0.5, refresh_every=0)
    for _ in range(500):
        arm, y = int(rng.integers(20)), float(rng.normal())
        a.observe(arm, y)
        b.observe(arm, y)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.cov, b.cov, rtol=0, atol=1e-12)
    assert a.info_gain == pytest.approx(b.info_gain, rel=1e-12)


def test_extreme_rewards_stay_finite():
    K = SquaredExponential(0.2)(np.linspace(0, 1, 15)[:, None])
    eng = GPPosteriorEngine(K, lam=1.0, n_outputs=2, refresh_every=250)
    rng = np.random.default_rng(2)
    for t in range(2000):
        sign = 1.0 if rng.random() < 0.5 else -1.0
        eng.observe(int(rng.integers(15)), [sign * 1e12, -sign * 1e12 if t % 7 else 0.3])
    assert np.all(np.isfinite(eng.mean)) and np.all(np.isfinite(eng.cov))
    assert np.all(eng.variance() >= 0) and math.isfinite(eng.info_gain)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="lam"):
        GPPosteriorEngine(K3, lam=0.0)
    with pytest.raises(ValueError, match="square"):
        GPPosteriorEngine(np.ones((2, 3)), lam=1.0)
    eng = GPPosteriorEngine(K3, lam=1.0, n_outputs=2)
    with pytest.raises(ValueError, match="2 reward"):
        eng.observe(0, 1.0)
