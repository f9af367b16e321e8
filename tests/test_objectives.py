"""Objectives and kernels: values, optima and RKHS norms checked against independent,
naive computations (math-module loops), never against the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hbo_envs.kernels import Matern, SquaredExponential, make_kernel
from hbo_envs.objectives import (
    RKHSFunction,
    chowdhury_gopalan_synthetic,
    griewank,
    griewank_2d,
    min_norm_interpolant_norm,
    park_lee_rkhs1d,
    random_rkhs,
)


def _se(x: np.ndarray, y: np.ndarray, l: float) -> float:
    return math.exp(-sum((a - b) ** 2 for a, b in zip(x, y, strict=True)) / (2 * l * l))


def _matern52(x: np.ndarray, y: np.ndarray, l: float) -> float:
    r = math.sqrt(sum((a - b) ** 2 for a, b in zip(x, y, strict=True))) / l
    s = math.sqrt(5) * r
    return (1 + s + s * s / 3) * math.exp(-s)


def test_kernels_against_pointwise_formulas() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    K = SquaredExponential(0.7)(X, Y)
    M = Matern(0.7, 2.5)(X, Y)
    for i in range(6):
        for j in range(4):
            assert K[i, j] == pytest.approx(_se(X[i], Y[j], 0.7), rel=1e-12)
            assert M[i, j] == pytest.approx(_matern52(X[i], Y[j], 0.7), rel=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [SquaredExponential(0.7), Matern(0.3, 0.5), Matern(0.3, 1.5), Matern(0.3, 2.5)],
    ids=repr,
)
def test_in_place_kernels_equal_the_textbook_expressions_bit_for_bit(kernel) -> None:
    """The kernels compute in place (no temporaries); every number must equal the plain
    array expression's, or every env's constants and every archived run would move."""
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(300, 3)), rng.normal(size=(70, 3))
    d2 = cdist(X, Y, "sqeuclidean")
    ell = kernel.lengthscale
    if isinstance(kernel, SquaredExponential):
        want = np.exp(-0.5 * d2 / ell**2)
    else:
        r = np.sqrt(d2) / ell
        s = np.sqrt(2 * kernel.nu) * r
        want = {
            0.5: lambda: np.exp(-r),
            1.5: lambda: (1.0 + s) * np.exp(-s),
            2.5: lambda: (1.0 + s + s * s / 3.0) * np.exp(-s),
        }[kernel.nu]()
    assert np.array_equal(kernel(X, Y), want)
    assert np.array_equal(kernel(X), kernel(X, X))  # Y = None: the same fresh buffer path


def test_general_matern_agrees_with_closed_forms_and_limits() -> None:
    X = np.linspace(0, 2, 15)[:, None]
    for nu in (0.5, 1.5, 2.5):
        closed = Matern(0.4, nu)(X)
        bessel = Matern(0.4, nu * (1 + 1e-10))(X)  # general-nu path through scipy.kv
        np.testing.assert_allclose(bessel, closed, atol=1e-8)
    # nu -> infinity tends to the SE kernel
    np.testing.assert_allclose(Matern(0.4, 200.0)(X), SquaredExponential(0.4)(X), atol=5e-3)
    assert np.allclose(np.diag(Matern(0.4, 0.8)(X)), 1.0)


def test_kernel_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="'lengthscale'"):
        SquaredExponential(0.0)
    with pytest.raises(ValueError, match="'nu'"):
        Matern(1.0, -1.0)
    with pytest.raises(ValueError, match="kernel"):
        make_kernel("periodic")


def test_rkhs_norm_against_independent_double_sum() -> None:
    rng = np.random.default_rng(4)
    centers = rng.uniform(0, 1, size=(12, 2))
    a = rng.uniform(-1, 1, size=12)
    f = RKHSFunction(SquaredExponential(0.3), centers, a)
    q = sum(a[i] * a[j] * _se(centers[i], centers[j], 0.3) for i in range(12) for j in range(12))
    assert f.rkhs_norm() == pytest.approx(math.sqrt(q), rel=1e-12)
    assert f.scaled(-2.5).rkhs_norm() == pytest.approx(2.5 * math.sqrt(q), rel=1e-12)


@pytest.mark.parametrize("kernel", ["se", "matern"])
@pytest.mark.parametrize("coeffs", ["symmetric", "positive"])
def test_chowdhury_gopalan_objective(kernel: str, coeffs: str) -> None:
    obj = chowdhury_gopalan_synthetic(np.random.default_rng(7), kernel=kernel, coeffs=coeffs)
    assert obj.n == 100 and np.allclose(obj.points[:, 0], np.linspace(0, 1, 100))
    # values recomputed pointwise from the recorded centers and coefficients
    c = np.array(obj.params["centers"])
    a = np.array(obj.params["coeffs"])
    k = _se if kernel == "se" else _matern52
    vals = [sum(a[i] * k(x, c[i], 0.2) for i in range(len(a))) for x in obj.points]
    np.testing.assert_allclose(obj.values, vals, rtol=1e-10, atol=1e-12)
    assert max(abs(v) for v in vals) == pytest.approx(1.0, rel=1e-12)  # max|f| = 1
    # f* and its maximiser by brute force
    best = max(range(100), key=lambda i: vals[i])
    assert obj.argmax == best and obj.f_star == pytest.approx(vals[best], rel=1e-12)
    # exact norm, and the minimum-norm interpolant on the grid can only be smaller
    q = sum(a[i] * a[j] * k(c[i], c[j], 0.2) for i in range(len(a)) for j in range(len(a)))
    assert obj.B == pytest.approx(math.sqrt(q), rel=1e-9)
    if coeffs == "positive":
        assert np.all(obj.values > 0)


def test_min_norm_interpolant_is_below_the_true_norm_and_interpolates() -> None:
    rng = np.random.default_rng(1)
    pts = np.linspace(0, 1, 25)[:, None]
    k = Matern(0.2, 1.5)
    f = RKHSFunction(k, rng.uniform(0, 1, size=(5, 1)), rng.normal(size=5))
    K = k(pts)
    B_min, jitter = min_norm_interpolant_norm(K, f(pts))
    assert jitter == 0.0
    assert B_min <= f.rkhs_norm() + 1e-12
    c = np.linalg.solve(K, f(pts))
    np.testing.assert_allclose(K @ c, f(pts), atol=1e-10)
    assert B_min == pytest.approx(math.sqrt(c @ K @ c), rel=1e-8)


def test_park_lee_rkhs1d_matches_the_papers_recipe() -> None:
    obj = park_lee_rkhs1d(np.random.default_rng(0))
    assert obj.n == 1000 and obj.points[0, 0] == -10 and obj.points[-1, 0] == 10
    a = np.array(obj.params["coeffs"])
    c = np.array(obj.params["centers"])
    assert len(a) == 10
    x = obj.points[333]
    assert obj.values[333] == pytest.approx(sum(a[i] * _se(x, c[i], 1.0) for i in range(10)))
    assert obj.argmax == int(np.argmax(obj.values))


def test_griewank_values_optimum_and_norm() -> None:
    assert float(griewank(np.zeros((1, 5)))[0]) == 0.0
    obj = griewank_2d()
    assert obj.n == 400
    x = obj.points[57]
    ref = 1 + (x[0] ** 2 + x[1] ** 2) / 4000 - math.cos(x[0]) * math.cos(x[1] / math.sqrt(2))
    assert obj.values[57] == pytest.approx(-ref, rel=1e-12)  # maximise -Griewank
    assert obj.f_star == max(obj.values) and obj.f_star < 0  # 0 is not on the 20x20 grid
    K = SquaredExponential(1.0)(obj.points)
    B = math.sqrt(obj.values @ np.linalg.solve(K, obj.values))
    assert obj.kernel_jitter == 0.0 and obj.B == pytest.approx(B, rel=1e-6)


def test_random_rkhs_in_higher_dimension() -> None:
    obj = random_rkhs(np.random.default_rng(2), {"name": "se", "lengthscale": 0.5}, 50, dim=3)
    assert obj.points.shape == (50, 3) and obj.sup_f == pytest.approx(1.0)
    with pytest.raises(ValueError, match="'dim'"):
        random_rkhs(np.random.default_rng(2), dim=0)
