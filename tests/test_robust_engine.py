"""The engine's per-observation noise (``observe(arm, y, noise_var=...)``) used by RCGP-UCB."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.gp.engine import GPPosteriorEngine


def test_heteroscedastic_posterior_matches_hand_computation():
    # K = [[1, .5], [.5, 1]], y = (2 at arm 0, noise 1), (1 at arm 1, noise 3):
    # (K + diag(1, 3))^{-1} = [[4, -.5], [-.5, 2]] / 7.75, so by hand
    # mu = K (K + V)^{-1} y = (32/31, 19/31), sigma^2 = diag(K - K (K+V)^{-1} K) = (15/31, 21/31).
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    eng = GPPosteriorEngine(K, lam=1.0)
    eng.observe(0, 2.0)  # default noise = lam = 1
    eng.observe(1, 1.0, noise_var=3.0)
    np.testing.assert_allclose(eng.mean[:, 0], [32 / 31, 19 / 31], rtol=1e-14)
    np.testing.assert_allclose(eng.variance(), [15 / 31, 21 / 31], rtol=1e-14)
    # information gain (1/2) ln det(I + V^{-1/2} K V^{-1/2}) = (1/2) ln(7.75 / 3)
    assert eng.info_gain == pytest.approx(0.5 * math.log(7.75 / 3.0), rel=1e-14)


def test_repeated_heteroscedastic_observations_rederive_and_naive_agree():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(6, 1))
    K = np.exp(-0.5 * (X - X.T) ** 2 / 0.3**2)
    arms = [0, 2, 2, 5, 0, 2, 3]
    ys = rng.normal(size=len(arms))
    vs = [0.5, 2.0, 0.1, 1.0, 7.0, 1.0, 1e6]
    eng = GPPosteriorEngine(K, lam=1.0)
    for a, y, v in zip(arms, ys, vs, strict=True):
        eng.observe(a, y, noise_var=v)
    # naive t x t heteroscedastic posterior
    Kt = K[np.ix_(arms, arms)] + np.diag(vs)
    kx = K[:, arms]
    mu = kx @ np.linalg.solve(Kt, ys)
    var = np.diag(K) - np.einsum("ij,ji->i", kx, np.linalg.solve(Kt, kx.T))
    np.testing.assert_allclose(eng.mean[:, 0], mu, atol=1e-12)
    np.testing.assert_allclose(eng.variance(), var, atol=1e-12)
    mean, cov, gamma = eng.rederive()
    np.testing.assert_allclose(mean[:, 0], mu, atol=1e-12)
    np.testing.assert_allclose(np.diag(cov), var, atol=1e-12)
    sign, logdet = np.linalg.slogdet(
        np.eye(len(arms)) + kx[arms] / np.sqrt(vs)[:, None] / np.sqrt(vs)
    )
    assert gamma == pytest.approx(0.5 * logdet, rel=1e-12)
    assert eng.info_gain == pytest.approx(0.5 * logdet, rel=1e-12)


def test_default_noise_var_is_bit_identical_to_no_argument():
    K = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.4], [0.1, 0.4, 1.0]])
    a, b = GPPosteriorEngine(K, 0.5), GPPosteriorEngine(K, 0.5)
    for arm, y in ((0, 1.0), (2, -0.3), (0, 0.7)):
        a.observe(arm, y)
        b.observe(arm, y, noise_var=0.5)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.cov, b.cov)
    assert a.info_gain == b.info_gain


def test_infinite_noise_is_no_information_and_bad_noise_refused():
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    eng = GPPosteriorEngine(K, 1.0)
    eng.observe(0, 1e300, noise_var=math.inf)
    assert np.all(eng.mean == 0) and np.array_equal(eng.cov, K) and eng.t == 1
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="noise_var"):
            eng.observe(0, 1.0, noise_var=bad)
