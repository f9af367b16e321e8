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


# ---------------------------------------------------------------- played-set representation
def naive_hetero_posterior(K, arms, Y, noise):
    """The heteroscedastic posterior by a t x t solve: mu = k_t^T (K_t + N)^{-1} Y,
    sigma^2 = k(x,x) - k_t^T (K_t + N)^{-1} k_t, gamma = 1/2 ln det(I + N^{-1/2} K_t N^{-1/2})."""
    arms = np.asarray(arms, dtype=int)
    Y = np.asarray(Y, dtype=float).reshape(len(arms), -1)
    N = np.diag(np.asarray(noise, dtype=float))
    Kt = K[np.ix_(arms, arms)]
    kt = K[:, arms]
    W = np.linalg.solve(Kt + N, kt.T)
    mean = W.T @ Y
    var = np.diag(K) - np.einsum("ij,ji->i", kt, W)
    s = 1.0 / np.sqrt(np.diag(N))
    gamma = 0.5 * np.linalg.slogdet(np.eye(len(arms)) + s[:, None] * Kt * s[None, :])[1]
    return mean, var, gamma


@pytest.mark.parametrize("rep", ["arms", "played"])
def test_hand_computed_heteroscedastic_posterior(rep):
    # Arms 0 and 2 uncorrelated, lambda = 1; noise 0.5 at arm 0, the default 1 at arm 2.
    eng = GPPosteriorEngine(K3, lam=1.0, representation=rep)
    eng.observe(0, 1.0, noise_var=0.5)
    eng.observe(2, -1.0)
    # K_t + N = diag(1.5, 2): mu = k(x, x0) / 1.5 - k(x, x2) / 2.
    np.testing.assert_allclose(eng.mean[:, 0], [2 / 3, 1 / 12, -0.5], rtol=1e-14)
    np.testing.assert_allclose(eng.variance(), [1 / 3, 17 / 24, 0.5], rtol=1e-14)
    assert eng.info_gain == pytest.approx(0.5 * math.log(3.0 * 2.0), rel=1e-14)
    eng.observe(0, 3.0, noise_var=2.0)
    # Arm 0: precision 1/0.5 + 1/2 = 2.5 (effective noise 0.4), weighted mean
    # (1/0.5 + 3/2) / 2.5 = 1.4: mu(x0) = 1.4 / 1.4 = 1, mu(x1) = 0.5 - 0.25.
    np.testing.assert_allclose(eng.mean[:, 0], [1.0, 0.25, -0.5], rtol=1e-14)
    np.testing.assert_allclose(eng.variance(), [2 / 7, 39 / 56, 0.5], rtol=1e-14)
    # det(I + K_SS P) with P = diag(2.5, 1), K_SS = I: 3.5 * 2.
    assert eng.info_gain == pytest.approx(0.5 * math.log(7.0), rel=1e-14)
    np.testing.assert_allclose(eng.precision, [2.5, 0.0, 1.0])  # lambda sum 1/s2
    np.testing.assert_allclose(eng.sums[:, 0], [3.5, 0.0, -1.0])  # lambda sum y/s2
    assert list(eng.counts) == [2, 0, 1]
    mean, _, gamma = eng.rederive()
    np.testing.assert_allclose(mean[:, 0], [1.0, 0.25, -0.5], rtol=1e-13)
    assert gamma == pytest.approx(0.5 * math.log(7.0), rel=1e-13)


@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_played_set_equals_arm_space_and_naive_heteroscedastic(lam):
    """Both representations against each other and the t x t solve: mean, variance,
    information gain, gain() and covariance columns, with repeats, several reward
    sequences, per-observation noise and a played-set block that has to grow."""
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(60, 2))
    K = SquaredExponential(0.3)(X)  # numerically singular: the downdates are stressed
    arms_eng = GPPosteriorEngine(K, lam=lam, n_outputs=2, refresh_every=0, representation="arms")
    played = GPPosteriorEngine(
        K, lam=lam, n_outputs=2, refresh_every=0, representation="played", max_arms=3
    )
    assert played.representation == "played" and arms_eng.representation == "arms"
    arms, Y, noise = [], [], []
    for t in range(240):
        a = int(rng.integers(10)) if t % 4 else int(rng.integers(60))
        y = rng.standard_t(2.0, size=2)
        s2 = float(rng.uniform(0.05, 3.0)) if t % 3 == 0 else None
        arms.append(a)
        Y.append(y)
        noise.append(lam if s2 is None else s2)
        arms_eng.observe(a, y, noise_var=s2)
        played.observe(a, y, noise_var=s2)
        if t in (40, 239):
            mean, var, gamma = naive_hetero_posterior(K, arms, Y, noise)
            scale = np.abs(mean).max()
            for eng in (arms_eng, played):
                np.testing.assert_allclose(eng.mean, mean, rtol=0, atol=1e-9 * scale)
                np.testing.assert_allclose(eng.variance(), var, rtol=0, atol=1e-9)
                assert eng.info_gain == pytest.approx(gamma, rel=1e-9)
    for arm in (arms[-1], 59, 0):
        np.testing.assert_allclose(played.gain(arm), arms_eng.gain(arm), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        played.covariance_columns([3, 50]), arms_eng.cov[:, [3, 50]], rtol=0, atol=1e-9
    )
    assert sorted(played.played.tolist()) == arms_eng.played.tolist()
    # Re-derivation from (precision, sums) in the played set: the variance diagonal.
    mean_r, var_r, gamma_r = played.rederive()
    np.testing.assert_allclose(mean_r, played.mean, rtol=0, atol=1e-9 * np.abs(mean_r).max())
    np.testing.assert_allclose(var_r, played.variance(), rtol=0, atol=1e-9)
    assert gamma_r == pytest.approx(played.info_gain, rel=1e-9)


def test_played_set_refresh_and_long_run_stay_exact():
    """2000 rounds of mostly repeated plays (rank-one downdates of the factor every
    round), with periodic refresh: still equal to the arm-space engine."""
    rng = np.random.default_rng(2)
    K = SquaredExponential(0.2)(np.linspace(0, 1, 40)[:, None])
    a = GPPosteriorEngine(K, lam=1.0, representation="arms", refresh_every=0)
    b = GPPosteriorEngine(K, lam=1.0, representation="played", refresh_every=333)
    for _ in range(2000):
        arm = int(rng.integers(12, 16)) if rng.random() < 0.9 else int(rng.integers(40))
        y = 10.0 * float(rng.standard_t(1.5))
        a.observe(arm, y)
        b.observe(arm, y)
    scale = np.abs(a.mean).max()
    np.testing.assert_allclose(b.mean, a.mean, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(b.variance(), a.variance(), rtol=0, atol=1e-9)
    assert b.info_gain == pytest.approx(a.info_gain, rel=1e-9)


def _exact_mean(K, lam, precision, sums):
    """``K[:, S] A^{-1} (sums_S / precision_S)``, ``A = K_SS + lam diag(1 / precision_S)``,
    solved with three steps of iterative refinement on extended-precision residuals, so
    it is accurate far below the engines' rounding even when ``A`` is ill-conditioned."""
    S = np.flatnonzero(precision)
    A = K[np.ix_(S, S)] + np.diag(lam / precision[S])
    b = sums[S] / precision[S][:, None]
    w = np.linalg.solve(A, b)
    Ae, be = A.astype(np.longdouble), b.astype(np.longdouble)
    for _ in range(3):
        w = w + np.linalg.solve(A, (be - Ae @ w.astype(np.longdouble)).astype(float))
    return (K[:, S].astype(np.longdouble) @ w.astype(np.longdouble)).astype(float)


def test_played_set_is_as_accurate_as_arm_space_at_small_lambda():
    """lambda = 1e-6, 3000 rounds of mostly repeated plays: every play at a hot arm is a
    downdate of the factor of an ill-conditioned K_SS + Lambda (Lambda_ii = lambda / n_i).
    The played-set means stay as close to the exact posterior as the arm-space engine's,
    because the factor is refactored and the means re-derived every PLAYED_RESTORE_EVERY
    downdates (without it the downdates' rounding builds up to 3e-6 of max |mean| here,
    250 times the arm-space error)."""
    from agents.gp.engine import PLAYED_RESTORE_EVERY

    rng = np.random.default_rng(1)
    n, lam, T = 40, 1e-6, 3000
    K = SquaredExponential(0.2)(rng.uniform(size=(n, 1)))
    a = GPPosteriorEngine(K, lam=lam, n_outputs=2, representation="arms")
    b = GPPosteriorEngine(K, lam=lam, n_outputs=2, representation="played")
    hot = rng.integers(0, n, size=5)
    for _ in range(T):
        arm = int(hot[rng.integers(5)]) if rng.random() < 0.8 else int(rng.integers(n))
        y = rng.standard_t(2.5, size=2)
        a.observe(arm, y)
        b.observe(arm, y)
    assert b._downdates < PLAYED_RESTORE_EVERY and b.refactorizations == 0
    exact = _exact_mean(K, lam, b.precision, b.sums)
    scale = np.abs(exact).max()
    err_arms = np.abs(a.mean - exact).max() / scale
    err_played = np.abs(b.mean - exact).max() / scale
    assert err_arms < 1e-7  # what the arm-space engine achieves on this problem
    assert err_played < 10 * err_arms, (err_played, err_arms)
    np.testing.assert_allclose(b.variance(), a.variance(), rtol=0, atol=1e-10)


def test_restore_re_derives_the_mean_and_changes_nothing_else():
    """_restore at lambda = 1: the factor and the means from the statistics, equal to
    the incremental state to rounding; counts, t and the information gain untouched."""
    rng = np.random.default_rng(7)
    K = Matern(0.3, 1.5)(rng.uniform(size=(30, 2)))
    eng = GPPosteriorEngine(K, lam=1.0, representation="played", refresh_every=0)
    for _ in range(40):  # fewer downdates than PLAYED_RESTORE_EVERY: no restore yet
        eng.observe(int(rng.integers(8)), float(rng.normal()))
    assert 0 < eng._downdates
    before = (eng.mean.copy(), eng.variance().copy(), eng.info_gain, eng.t, eng.counts.copy())
    L = eng._L[: eng.m, : eng.m].copy()
    eng._restore()
    assert eng._downdates == 0 and eng.refactorizations == 0  # not counted as a fallback
    np.testing.assert_allclose(eng._L[: eng.m, : eng.m], L, rtol=0, atol=1e-12)
    np.testing.assert_allclose(eng.mean, before[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(eng.variance(), before[1])
    assert (eng.info_gain, eng.t) == before[2:4] and np.array_equal(eng.counts, before[4])


def test_auto_representation_is_chosen_by_n():
    from agents.gp.engine import ARM_SPACE_MAX_N

    small = GPPosteriorEngine(K3, lam=1.0)
    assert small.representation == "arms" and hasattr(small, "cov")
    n = ARM_SPACE_MAX_N + 1
    X = np.linspace(0.0, 1.0, n)[:, None]
    from hbo_envs.kernels import LazyKernelMatrix
    from hbo_envs.problem import Problem

    k = SquaredExponential(0.1)
    p = Problem(
        X, LazyKernelMatrix(k, X), k, B=1.0, alpha=1.0, v=2.0, nu=1.0, sup_f=1.0, horizon=50
    )
    big = GPPosteriorEngine(p, lam=1.0)
    assert big.representation == "played" and not hasattr(big, "cov")
    assert big._G.shape == (n, 50)  # |S| <= horizon columns reserved
    big.observe(n // 2, 1.0)
    # One observation at x_a: mu(x) = k(x, x_a) y / (1 + 1), sigma^2 = 1 - k(x, x_a)^2 / 2.
    kcol = k(X, X[[n // 2]])[:, 0]
    np.testing.assert_allclose(big.mean[:, 0], kcol / 2.0, rtol=1e-14)
    np.testing.assert_allclose(big.variance(), 1.0 - kcol**2 / 2.0, rtol=1e-14)


def test_bad_representation_and_noise_var_are_refused():
    with pytest.raises(ValueError, match="representation.*'auto', 'arms', 'played'.*'dense'"):
        GPPosteriorEngine(K3, lam=1.0, representation="dense")
    for rep in ("arms", "played"):
        eng = GPPosteriorEngine(K3, lam=1.0, representation=rep)
        for bad in (0.0, -1.0, math.nan, -math.inf, "x"):
            with pytest.raises(ValueError, match="noise_var"):
                eng.observe(0, 1.0, noise_var=bad)
        assert eng.t == 0 and np.all(eng.mean == 0)  # nothing changed
        # An infinite noise variance is the limit of no information (a zero RCGP weight).
        eng.observe(0, 1e300, noise_var=math.inf)
        assert eng.t == 1 and np.all(eng.mean == 0) and np.all(eng.variance() == np.diag(K3))


def test_sizes_beyond_memory_are_refused_before_allocating(monkeypatch):
    from hbo_envs.memory import MemoryLimitError

    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(10**6))  # 1 MB
    K = SquaredExponential(0.2)(np.linspace(0, 1, 300)[:, None])  # arm space: 2 x 720 kB
    with pytest.raises(MemoryLimitError, match=r"n=300 needs an estimated 1\.4 MB.*played"):
        GPPosteriorEngine(K, lam=1.0, representation="arms")
    with pytest.raises(MemoryLimitError, match=r"max_arms=300 needs an estimated"):
        GPPosteriorEngine(K, lam=1.0, representation="played")
    eng = GPPosteriorEngine(K, lam=1.0, representation="played", max_arms=20)
    assert eng._G.shape == (300, 20)


def test_played_set_refactors_when_an_update_of_the_factor_fails(monkeypatch):
    """If rounding makes a downdate (or a new row) of the Cholesky factor indefinite, the
    engine refactors K_SS + Lambda from scratch: the posterior stays exact."""
    rng = np.random.default_rng(4)
    K = SquaredExponential(0.3)(rng.uniform(size=(30, 1)))
    a = GPPosteriorEngine(K, lam=0.5, representation="arms", refresh_every=0)
    b = GPPosteriorEngine(K, lam=0.5, representation="played", refresh_every=0)
    monkeypatch.setattr(GPPosteriorEngine, "_downdate", lambda self, j, v: False)
    for _ in range(150):
        arm, y = int(rng.integers(30)), float(rng.normal())
        s2 = float(rng.uniform(0.1, 2.0))
        a.observe(arm, y, noise_var=s2)
        b.observe(arm, y, noise_var=s2)
    assert b.refactorizations > 0  # every repeated play went through the fallback
    np.testing.assert_allclose(b.mean, a.mean, rtol=0, atol=1e-9 * np.abs(a.mean).max())
    np.testing.assert_allclose(b.variance(), a.variance(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("representation", ["arms", "played"])
def test_from_statistics_equals_observing_each_arm(representation):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(40, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.2)
    lam = 0.6
    seq = GPPosteriorEngine(K, lam, representation=representation)
    prec, sums, cnt = np.zeros(40), np.zeros(40), np.zeros(40, dtype=np.int64)
    for _ in range(150):
        a = int(rng.integers(25))  # arms 25..39 never played
        y, s2 = float(rng.standard_t(3)), float(rng.uniform(0.2, 3.0))
        seq.observe(a, y, noise_var=s2)
        prec[a] += lam / s2
        sums[a] += lam * y / s2
        cnt[a] += 1
    one = GPPosteriorEngine.from_statistics(
        K, lam, prec, sums, counts=cnt, representation=representation
    )
    assert one.t == seq.t == 150 and np.array_equal(one.counts, seq.counts)
    np.testing.assert_allclose(one.mean, seq.mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(one.variance(), seq.variance(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(one.info_gain, seq.info_gain, rtol=1e-10)
    np.testing.assert_allclose(one.precision, seq.precision, rtol=1e-12)
    # the engine goes on observing from there like the sequential one
    one.observe(30, 1.5)
    seq.observe(30, 1.5)
    np.testing.assert_allclose(one.mean, seq.mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(one.variance(), seq.variance(), rtol=0, atol=1e-10)


def test_from_statistics_refuses_inconsistent_statistics():
    K = np.eye(3)
    with pytest.raises(ValueError, match=r"precision must have shape \(3,\)"):
        GPPosteriorEngine.from_statistics(K, 1.0, np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="finite and >= 0"):
        GPPosteriorEngine.from_statistics(K, 1.0, np.array([1.0, -1.0, 0.0]), np.zeros(3))
    with pytest.raises(ValueError, match="0 where precision is 0"):
        GPPosteriorEngine.from_statistics(K, 1.0, np.array([1.0, 0.0, 0.0]), np.ones(3))
    with pytest.raises(ValueError, match="positive exactly where precision is"):
        GPPosteriorEngine.from_statistics(
            K, 1.0, np.array([1.0, 0.0, 0.0]), np.zeros(3), counts=np.array([1, 1, 0])
        )
    empty = GPPosteriorEngine.from_statistics(K, 1.0, np.zeros(3), np.zeros(3))
    assert empty.t == 0 and np.array_equal(empty.variance(), np.ones(3))


def _posterior_from_statistics(K, lam, prec, sums):
    """The naive formulas: one observation ``sums_a / prec_a`` with noise ``lam / prec_a``
    at every arm ``a`` with data; ``numpy.linalg.solve`` on ``K_SS + Lambda``."""
    S = np.flatnonzero(prec > 0)
    if S.size == 0:
        return np.zeros(K.shape[0]), np.diagonal(K).copy()
    A = K[np.ix_(S, S)] + np.diag(lam / prec[S])
    KS = K[:, S]
    mean = KS @ np.linalg.solve(A, sums[S] / prec[S])
    var = np.diagonal(K) - np.einsum("is,si->i", KS, np.linalg.solve(A, KS.T))
    return mean, var


@pytest.mark.parametrize("representation", ["arms", "played"])
def test_set_statistics_in_place_equals_a_new_engine_and_the_formulas(representation):
    """One engine re-conditioned on changing statistics (arms appear, arms drop to zero
    precision, the held set outgrows ``max_arms``) gives, each time, the posterior of the
    naive formulas and of a new engine (``from_statistics``): bit for bit on the arm space,
    to rounding on the played set (whose arms stay in order of first appearance); and it
    goes on observing from there."""
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(30, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.3)
    lam = 0.4
    eng = GPPosteriorEngine(K, lam, representation=representation, max_arms=2)
    arms_seen = []
    for _ in range(8):
        prec = np.zeros(30)
        held = rng.choice(30, size=int(rng.integers(3, 12)), replace=False)
        prec[held] = rng.uniform(0.2, 5.0, size=held.size)
        sums = np.where(prec > 0, rng.standard_normal(30) * prec, 0.0)
        cnt = np.where(prec > 0, rng.integers(1, 9, size=30), 0)
        eng.set_statistics(prec, sums, counts=cnt)
        new = GPPosteriorEngine.from_statistics(
            K, lam, prec, sums, counts=cnt, representation=representation
        )
        mean, var = _posterior_from_statistics(K, lam, prec, sums)
        np.testing.assert_allclose(eng.mean[:, 0], mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(eng.variance(), np.maximum(var, 0), rtol=0, atol=1e-10)
        assert eng.t == new.t == int(cnt.sum())
        if representation == "arms":
            assert np.array_equal(eng.mean, new.mean) and np.array_equal(eng.cov, new.cov)
            assert eng.info_gain == new.info_gain
        else:
            assert sorted(eng.played.tolist()) == sorted(held.tolist())
            np.testing.assert_allclose(eng.mean, new.mean, rtol=0, atol=1e-12)
            np.testing.assert_allclose(eng.info_gain, new.info_gain, rtol=1e-12)
        arms_seen.append(set(held.tolist()))
    assert any(a - b for a, b in zip(arms_seen, arms_seen[1:], strict=False))  # arms left
    # the engine goes on observing from the statistics like the formulas say
    a = int(np.flatnonzero(prec)[0])
    eng.observe(a, 0.7)
    eng.observe(29 if prec[29] == 0 else 28, -0.3)
    prec2, sums2 = prec.copy(), sums.copy()
    prec2[a] += 1.0
    sums2[a] += 0.7
    b = 29 if prec[29] == 0 else 28
    prec2[b] += 1.0
    sums2[b] += -0.3
    mean, var = _posterior_from_statistics(K, lam, prec2, sums2)
    np.testing.assert_allclose(eng.mean[:, 0], mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(eng.variance(), np.maximum(var, 0), rtol=0, atol=1e-10)
    # no data: back to the prior
    eng.set_statistics(np.zeros(30), np.zeros(30))
    assert eng.t == 0 and eng.info_gain == 0.0 and not eng.mean.any()
    assert np.array_equal(eng.variance(), np.diagonal(K))


@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_move_statistics_follows_the_formulas_through_small_moves(lam):
    """``move_statistics`` (rank-one moves of the arms whose statistics changed) gives the
    posterior of the naive formulas and of ``set_statistics`` at every step of a walk whose
    steps move a few arms up and down (downdates included), add arms, shift only sums, and
    now and then move many arms or drop an arm (the re-derivation): mean and variance to
    1e-10, information gain to 1e-10, over more moves than ``MOVE_REFRESH_EVERY``."""
    from agents.gp.engine import MOVE_REFRESH_EVERY

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(25, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.3)
    eng = GPPosteriorEngine(K, lam)
    prec, sums = np.zeros(25), np.zeros(25)
    moves = 0
    for step in range(300):
        prec, sums = prec.copy(), sums.copy()
        if step % 50 == 49:  # many arms at once
            arms = rng.choice(25, size=15, replace=False)
        elif step % 37 == 36 and np.count_nonzero(prec) > 3:  # an arm leaves
            arms = rng.choice(np.flatnonzero(prec), size=1)
            prec[arms], sums[arms] = 0.0, 0.0
            arms = arms[:0]
        else:
            arms = rng.choice(25, size=int(rng.integers(1, 4)), replace=False)
        for a in arms.tolist():
            if step % 3 == 0 and prec[a] > 0:  # only the sum moves
                sums[a] += rng.normal()
            else:
                prec[a] = max(prec[a] + rng.uniform(-0.4, 1.0), 0.0)
                sums[a] = rng.normal() * prec[a] if prec[a] > 0 else 0.0
        cnt = (prec > 0).astype(np.int64)
        moves += eng.move_statistics(prec, sums, counts=cnt)
        mean, var = _posterior_from_statistics(K, lam, prec, sums)
        np.testing.assert_allclose(eng.mean[:, 0], mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(eng.variance(), np.maximum(var, 0), rtol=0, atol=1e-10)
        ref = GPPosteriorEngine.from_statistics(K, lam, prec, sums, counts=cnt)
        assert abs(eng.info_gain - ref.info_gain) < 1e-10
        assert eng.t == int(cnt.sum()) and np.array_equal(eng.precision, prec)
    assert moves > 2 * MOVE_REFRESH_EVERY  # the rank-one path ran, past re-derivations
    # it refuses what set_statistics refuses
    with pytest.raises(ValueError, match="move_statistics: precision must be finite"):
        eng.move_statistics(np.full(25, -1.0), np.zeros(25))


@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_a_joint_move_equals_the_rank_one_moves_and_keeps_their_guard(lam, monkeypatch):
    """``MOVE_JOINT_MIN`` or more arms moved at once (one rank-``k`` Woodbury change) give
    the posterior of the same moves made one arm at a time, and of the naive formulas, to
    1e-12 — mean, covariance, information gain — with arms gaining and losing information
    in one move; a joint move in which an arm would lose more than half of its information
    re-derives (returns 0) as the rank-one guard does."""
    import agents.gp.engine as engine_mod

    k = engine_mod.MOVE_JOINT_MIN
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(8 * k, 2))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.3)
    prec = np.where(rng.uniform(size=8 * k) < 0.7, rng.uniform(1.0, 4.0, 8 * k), 0.0)
    sums = rng.normal(size=8 * k) * prec
    assert np.count_nonzero(prec) >= 4 * k  # k <= |S| / 4: moved, not re-derived
    joint = GPPosteriorEngine.from_statistics(K, lam, prec, sums)
    single = GPPosteriorEngine.from_statistics(K, lam, prec, sums)
    for _ in range(engine_mod.MOVE_REFRESH_EVERY // k):  # no re-derivation on either
        prec, sums = prec.copy(), sums.copy()
        arms = rng.choice(np.flatnonzero(prec), size=k, replace=False)
        prec[arms] *= rng.uniform(0.8, 1.5, k)  # up and down, within the guard
        sums[arms] += rng.normal(size=k)
        cnt = (prec > 0).astype(np.int64)
        assert joint.move_statistics(prec, sums, counts=cnt) == k
        monkeypatch.setattr(engine_mod, "MOVE_JOINT_MIN", 10**9)
        assert single.move_statistics(prec, sums, counts=cnt) == k
        monkeypatch.undo()
        mean, var = _posterior_from_statistics(K, lam, prec, sums)
        for eng in (joint, single):
            np.testing.assert_allclose(eng.mean[:, 0], mean, rtol=0, atol=1e-12)
            np.testing.assert_allclose(eng.variance(), np.maximum(var, 0), rtol=0, atol=1e-12)
        np.testing.assert_allclose(joint.cov, single.cov, rtol=0, atol=1e-12)
        assert abs(joint.info_gain - single.info_gain) < 1e-12
    # an arm losing nearly all of its information in a joint move: re-derived
    prec = prec.copy()
    held = np.flatnonzero(prec)
    own = prec[held] * joint.variance()[held] / lam  # the share of its own data, p c_aa / lam
    a = int(held[np.argmax(own)])
    others = held[held != a][: k - 1]
    q = (1e-3 - 1.0) * prec[a] / lam
    assert 1.0 + q * joint.variance()[a] < 0.5  # the rank-one guard would re-derive
    prec[a] *= 1e-3
    prec[others] *= 1.1
    assert joint.move_statistics(prec, sums, counts=(prec > 0).astype(np.int64)) == 0
    mean, var = _posterior_from_statistics(K, lam, prec, sums)
    np.testing.assert_allclose(joint.mean[:, 0], mean, rtol=0, atol=1e-12)


@pytest.mark.parametrize("representation", ["arms", "played"])
def test_a_lambda_below_the_kernels_rounding_is_a_clear_error_naming_lam(representation):
    """Issue 37 item 8: ``lam = 1e-300`` on close arms (``K_SS`` numerically singular) made
    the Cholesky factor of the played arms fail deep in scipy; the engine now says which
    parameter and what is allowed. (At ``lam = 1e-6`` the same walk is fine.)"""
    X = np.linspace(0, 1, 400)[:, None]
    K = np.exp(-((X - X.T) ** 2) / (2 * 0.2**2))
    prec = np.zeros(400)
    prec[::10] = 3.0
    sums = prec * 0.5
    with pytest.raises(ValueError, match=r"lam = 1e-300 is too small .* e.g. lam >= \d"):
        GPPosteriorEngine.from_statistics(K, 1e-300, prec, sums, representation=representation)
    eng = GPPosteriorEngine.from_statistics(K, 1e-6, prec, sums, representation=representation)
    assert np.all(np.isfinite(eng.mean))


def test_set_statistics_refuses_bad_statistics_and_a_batched_engine():
    K = np.eye(3)
    eng = GPPosteriorEngine(K, 1.0)
    with pytest.raises(ValueError, match=r"set_statistics: precision must have shape \(3,\)"):
        eng.set_statistics(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="0 where precision is 0"):
        eng.set_statistics(np.array([1.0, 0.0, 0.0]), np.ones(3))
    # a played set that would not fit is refused before the engine changes
    from hbo_envs.memory import MemoryLimitError

    played = GPPosteriorEngine(K, 1.0, representation="played", max_arms=1)
    played.set_statistics(np.array([1.0, 0.0, 0.0]), np.array([0.5, 0.0, 0.0]))
    before = (played.mean.copy(), played.variance().copy(), played.precision.copy(), played.t)

    def refuse(cap: int) -> None:
        raise MemoryLimitError("GPPosteriorEngine: max_arms too large")

    played._check_played_memory = refuse
    with pytest.raises(MemoryLimitError):
        played.set_statistics(np.ones(3), np.zeros(3))
    after = (played.mean, played.variance(), played.precision, played.t)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    from agents.gp.engine import EngineBatch

    engines = [GPPosteriorEngine(K, 1.0), GPPosteriorEngine(K, 1.0)]
    EngineBatch(engines)
    with pytest.raises(ValueError, match="in an EngineBatch"):
        engines[0].set_statistics(np.ones(3), np.zeros(3))


def test_auto_representation_uses_the_horizon_only_for_large_n():
    from agents.gp.engine import PLAYED_MIN_N, auto_representation

    assert auto_representation(5000, 60) == "played"  # |S| <= 60: O(n |S|), not n^2
    assert auto_representation(5000, 1250) == "played"
    assert auto_representation(5000, 1251) == "arms"
    assert auto_representation(5000, None) == "arms"
    # below PLAYED_MIN_N the arm space is kept whatever T (every small registered env)
    assert auto_representation(PLAYED_MIN_N - 1, 1) == "arms"
    assert auto_representation(PLAYED_MIN_N, PLAYED_MIN_N // 4) == "played"
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(PLAYED_MIN_N, 2))
    k = SquaredExponential(0.3)
    from hbo_envs.problem import Problem

    p = Problem(X, k(X), k, B=1.0, alpha=1.0, v=2.0, nu=1.0, sup_f=1.0, horizon=40)
    eng = GPPosteriorEngine(p, lam=1.0)
    assert eng.representation == "played" and eng._G.shape == (PLAYED_MIN_N, 40)
    ref = GPPosteriorEngine(p, lam=1.0, representation="arms")
    for a in rng.integers(PLAYED_MIN_N, size=40):
        y = float(rng.standard_normal())
        eng.observe(int(a), y)
        ref.observe(int(a), y)
    np.testing.assert_allclose(eng.mean, ref.mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(eng.variance(), ref.variance(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("small", [True, False])
def test_a_small_re_derivation_runs_on_one_blas_thread(monkeypatch, small):
    """hbo_envs.blas: below SMALL_BLAS_WORK multiply-adds the engine's re-derivation runs on
    one BLAS thread whatever the caller set (on two threads a 100-arm re-derivation ran
    tens of times slower), above it on the caller's threads; the result is the same bits."""
    from threadpoolctl import threadpool_info, threadpool_limits

    import hbo_envs.blas as hb

    n, m = 60, 20  # n^2 |S| = 72 000 multiply-adds
    if not small:
        monkeypatch.setattr(hb, "SMALL_BLAS_WORK", 1e3)
    X = np.linspace(0, 1, n)[:, None]
    eng = GPPosteriorEngine(SquaredExponential(0.05)(X), 1.0, representation="arms")
    arms = np.random.default_rng(0).choice(n, size=m, replace=False)
    prec = np.zeros(n)
    prec[arms] = 2.0
    sums = np.zeros(n)
    sums[arms] = np.arange(m, dtype=float)
    eng.set_statistics(prec, sums, (prec > 0).astype(np.int64))
    seen = []
    cholesky = eng._cholesky

    def spy(A):
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return cholesky(A)

    eng._cholesky = spy
    with threadpool_limits(limits=1):
        one = eng.rederive()
    with threadpool_limits(limits=2):
        two = eng.rederive()
    assert seen[0] == {1}
    assert seen[1] == ({1} if small else {2})
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)


def test_inside_one_blas_thread_the_guard_changes_nothing():
    """hbo_envs.blas: inside an open one_blas_thread (a harness cell) small_blas is a
    context that touches no pool (asking OpenBLAS for its thread count in the loop cost
    microseconds a call), and the pools are one thread wide; outside, a small call is
    limited and a large one is not."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from hbo_envs.blas import SMALL_BLAS_WORK, one_blas_thread, small_blas

    def widths():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    with threadpool_limits(limits=2):
        with one_blas_thread():
            assert widths() == {1}
            guard = small_blas(10.0)
            assert type(guard).__name__ == "nullcontext"
        with small_blas(10.0):
            assert widths() == {1}
        assert widths() == {2}
        with small_blas(SMALL_BLAS_WORK):
            assert widths() == {2}
