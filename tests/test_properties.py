"""Property-based checks (hypothesis) of the env's input handling and the kernels."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hbo_envs  # noqa: F401
from hbo_envs.kernels import Matern, SquaredExponential
from hbo_envs.validation import check_real

ENV = gym.make("hbo/GPBandit-v0", horizon=10**9).unwrapped
ENV.reset(seed=0)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_integer_actions_accepted_iff_in_range(a: int) -> None:
    t = ENV._t
    if 0 <= a < ENV.action_space.n:
        _, r, _, _, info = ENV.step(a)
        assert np.isfinite(r) and ENV._t == t + 1 and info["regret"] >= 0
    else:
        with pytest.raises(ValueError, match="'action'"):
            ENV.step(a)
        assert ENV._t == t


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float_actions_always_refused(a: float) -> None:
    t = ENV._t
    with pytest.raises(TypeError, match="action"):
        ENV.step(a)
    assert ENV._t == t


@settings(max_examples=50, deadline=None)
@given(
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=1, max_value=4),
    st.floats(min_value=0.05, max_value=5.0),
    st.sampled_from([0.5, 1.5, 2.5, 0.8, 3.3]),
    st.integers(min_value=0, max_value=2**31),
)
def test_kernel_matrices_are_symmetric_psd_with_unit_diagonal(
    n: int, d: int, l: float, nu: float, seed: int
) -> None:
    X = np.random.default_rng(seed).normal(size=(n, d))
    for k in (SquaredExponential(l), Matern(l, nu)):
        K = k(X)
        np.testing.assert_allclose(K, K.T, atol=1e-12)
        np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-12)
        assert np.linalg.eigvalsh(K).min() > -1e-8
        assert np.all((K >= 0) & (K <= 1 + 1e-12))


@given(st.one_of(st.floats(allow_nan=True), st.booleans(), st.text(), st.none()))
def test_check_real_never_returns_an_invalid_value(x: object) -> None:
    try:
        y = check_real("Owner", "p", x, 0.0, 1.0, "right")
    except ValueError as e:
        assert "'p' parameter of Owner" in str(e) and "Got" in str(e)
    else:
        assert isinstance(y, float) and 0.0 < y <= 1.0
