"""The lower-bound construction of Chowdhury–Gopalan Thm. 2 (App. C): the bump ``h`` against
independent quadrature, RKHS norms from spectral densities against closed forms, the
family's separation and norm properties, the two-point channel by Monte Carlo, and the
lower-bound envs' construction, refusal of impossible constants and uniform draws."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import integrate, special, stats

import hbo_envs  # noqa: F401
from hbo_envs.channels import TwoPoint, make_channel
from hbo_envs.kernels import MAX_MATERN_NU, EmpiricalKernel, Matern, SquaredExponential
from hbo_envs.objectives.base import min_norm_interpolant_norm
from hbo_envs.objectives.lower_bound import (
    _bump_norm,
    bump_h,
    bump_zeta,
    lower_bound_exponent,
    lower_bound_family,
    rkhs_norm_radial,
)
from hbo_envs.validation import MAX_HORIZON

Z = 5.0  # Monte Carlo tolerance in standard errors (false failure ~6e-7)


def _H(p: float) -> float:
    return math.exp(-1.0 / (1.0 - p * p)) if p < 1.0 else 0.0


def _h_quadpack(r: float, dim: int) -> float:
    """``h`` by adaptive QUADPACK, written independently of the module (Hankel form)."""
    if r == 0.0:
        area = 2.0 * math.pi ** (dim / 2) / math.gamma(dim / 2)
        return (
            area * integrate.quad(lambda p: _H(p) * p ** (dim - 1), 0, 1)[0] / (2 * math.pi) ** dim
        )
    nu = dim / 2 - 1
    val = integrate.quad(
        lambda p: _H(p) * special.jv(nu, p * r) * p ** (dim / 2), 0, 1, limit=500, epsabs=1e-15
    )[0]
    return val * r ** (1 - dim / 2) / (2 * math.pi) ** (dim / 2)


# -- the bump -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_bump_h_matches_independent_quadrature(dim: int) -> None:
    rs = np.array([0.0, 0.3, 1.7, 4.0, 11.0, 37.0])
    ours = bump_h(rs, dim)
    ref = np.array([_h_quadpack(float(r), dim) for r in rs])
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-11 * ref[0])


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_h_is_maximal_at_zero_and_below_half_beyond_zeta(dim: int) -> None:
    z = bump_zeta(dim)
    h0 = float(bump_h(0.0, dim))
    r = np.arange(0.005, 60.0, 0.01)
    h = bump_h(r, dim)
    assert np.all(np.abs(h) < h0)  # h(0) is the maximum of |h|
    assert float(bump_h(z, dim)) == pytest.approx(0.5 * h0, rel=1e-10)
    assert np.all(h[r > z] < 0.5 * h0)  # h < h(0)/2 beyond zeta ...
    assert np.all(h[r < z - 1e-6] > 0.5 * h0)  # ... and zeta is the first crossing
    # in the sup-norm statement of App. C.1: ||x||_inf > zeta implies ||x||_2 > zeta
    pts = np.random.default_rng(0).uniform(-3 * z, 3 * z, size=(2000, dim))
    far = np.max(np.abs(pts), axis=1) > z
    assert np.all(bump_h(np.linalg.norm(pts[far], axis=1), dim) < 0.5 * h0)


# -- spectral densities and RKHS norms ------------------------------------------------------------
KERNELS = [SquaredExponential(0.3), Matern(0.3, 0.5), Matern(0.3, 1.5), Matern(0.3, 2.5)]


@pytest.mark.parametrize("k", KERNELS, ids=repr)
@pytest.mark.parametrize("dim", [1, 2])
def test_spectral_density_integrates_back_to_the_kernel(k, dim: int) -> None:
    # k(0) = (2π)^{-d} ∫ k̂ = (2π)^{-d} S_{d-1} ∫ k̂(ρ) ρ^{d-1} dρ = 1
    area = 2 * math.pi ** (dim / 2) / math.gamma(dim / 2)
    val = integrate.quad(
        lambda p: math.exp(float(k.log_spectral_density(p, dim))) * p ** (dim - 1), 0, np.inf
    )[0]
    assert area * val / (2 * math.pi) ** dim == pytest.approx(1.0, rel=1e-7)
    if dim == 1:  # k(r) = (1/π) ∫_0^∞ k̂(ω) cos(ω r) dω
        for r in (0.1, 0.4):
            v = integrate.quad(
                lambda p: math.exp(float(k.log_spectral_density(p, 1))),
                0,
                np.inf,
                weight="cos",
                wvar=r,
            )[0]
            assert v / math.pi == pytest.approx(float(k([[0.0]], [[r]])[0, 0]), rel=1e-6)


@pytest.mark.parametrize("dim", [1, 2])
@pytest.mark.parametrize("sigma, ell", [(0.3, 0.2), (0.5, 0.5), (1.0, 0.3)])
def test_rkhs_norm_of_a_gaussian_bump_matches_closed_form_se(dim, sigma, ell) -> None:
    # g = exp(-||x||²/(2σ²)), ĝ = (2πσ²)^{d/2} exp(-σ²ρ²/2); under SE(l), σ² > l²/2:
    # ||g||² = (σ²/l)^d / (2σ² - l²)^{d/2}
    k = SquaredExponential(ell)

    def log_ghat(r: np.ndarray) -> np.ndarray:
        return 0.5 * dim * np.log(2 * np.pi * sigma**2) - 0.5 * sigma**2 * r * r

    closed = math.sqrt((sigma**2 / ell) ** dim / (2 * sigma**2 - ell**2) ** (dim / 2))
    omega_max = 60.0 / math.sqrt(sigma**2 - ell**2 / 2)
    assert rkhs_norm_radial(log_ghat, k, dim, omega_max) == pytest.approx(closed, rel=1e-9)


def test_rkhs_norm_of_a_gaussian_bump_matches_closed_form_matern() -> None:
    # d = 1, Matérn-3/2: k̂ = c (a + ω²)^{-2}, a = 3/l², c = 2 sqrt(π) Γ(2) 3^{3/2} / (Γ(3/2) l³);
    # ||g||² = (1/π) ∫_0^∞ 2πσ² e^{-σ²ω²} (a + ω²)² / c dω, a Gaussian-moment polynomial.
    sigma, ell = 0.2, 0.4
    a = 3 / ell**2
    c = 2 * math.sqrt(math.pi) * 3**1.5 / (math.gamma(1.5) * ell**3)
    sp = math.sqrt(math.pi)
    moments = a * a * sp / (2 * sigma) + 2 * a * sp / (4 * sigma**3) + 3 * sp / (8 * sigma**5)
    closed = math.sqrt(2 * sigma**2 * moments / c)

    def log_ghat(r: np.ndarray) -> np.ndarray:
        return 0.5 * np.log(2 * np.pi * sigma**2) - 0.5 * sigma**2 * r * r

    assert rkhs_norm_radial(log_ghat, Matern(ell, 1.5), 1, 60 / sigma) == pytest.approx(
        closed, rel=1e-9
    )


# -- the family -----------------------------------------------------------------------------------
FAMILIES = [
    (SquaredExponential(0.1), 1, 1.0, 1000),
    (SquaredExponential(0.1), 1, 0.5, 4000),
    (Matern(0.1, 2.5), 1, 1.0, 1000),
    (Matern(0.1, 1.5), 1, 0.5, 500),
    (SquaredExponential(0.2), 2, 1.0, 2000),
]


@pytest.mark.parametrize("kernel, dim, alpha, T", FAMILIES, ids=str)
def test_family_maxima_separation_and_norm(kernel, dim, alpha, T) -> None:
    k = 3 if dim > 1 else 5
    fam = lower_bound_family(
        kernel, horizon=T, alpha=alpha, v=1.0, B=1.0, dim=dim, points_per_cell=k
    )
    D = fam.delta
    assert fam.M >= 2 and fam.values.shape == (fam.M, fam.n)
    opt = fam.values >= 2 * D - D  # Δ-optimal points of each f_j
    for j in range(fam.M):
        f = fam.values[j]
        c = fam.centre_index[j]
        assert f[c] == pytest.approx(2 * D, rel=1e-12)  # maximum 2Δ at its centre ...
        assert np.all(np.delete(f, c) < f[c])  # ... and nowhere else
        assert np.allclose(fam.points[c], fam.centres[j])
        assert np.all(np.abs(f) <= 2 * D * (1 + 1e-12))
    # no point is Δ-optimal for two functions of the family
    assert np.all(opt.sum(axis=0) <= 1)
    # g < Δ outside the cell (||x||_inf > w/2), on a fine grid of offsets
    off = np.linspace(-2 * fam.w, 2 * fam.w, 801)
    X = np.zeros((off.size, dim))
    X[:, 0] = off
    outside = np.abs(off) > fam.w / 2
    assert np.all(fam.g(X)[outside] < D)
    # the norm budget: ||g||_H <= B, and the minimum-norm interpolant of f_j on the candidate
    # set (an independent lower bound of ||f_j||_H <= ||g||_H) never exceeds the spectral
    # ||g||_H, and for an interior bump on these dense grids comes within 5% of it (so the
    # quadrature does not overstate the norm either)
    assert fam.rkhs_norm <= fam.B * (1 + 1e-12)
    interp = [
        min_norm_interpolant_norm(np.asarray(fam.kernel_matrix), fam.values[j])[0]
        for j in (0, fam.M // 2, fam.M - 1)
    ]
    assert max(interp) <= fam.rkhs_norm * (1 + 1e-6)
    assert max(interp) >= 0.95 * fam.rkhs_norm


@pytest.mark.parametrize("kernel, dim, alpha, T", FAMILIES[:4], ids=str)
def test_delta_and_grid_follow_the_theorem(kernel, dim, alpha, T) -> None:
    v, B = 1.0, 1.0
    fam = lower_bound_family(kernel, horizon=T, alpha=alpha, v=v, B=B, dim=dim)
    p = alpha / (1 + alpha)

    def target(m: int) -> float:
        return min(
            0.5 * (m**dim / T) ** p * v ** (1 / (1 + alpha)), 0.5 * 0.5**p * v ** (1 / (1 + alpha))
        )

    assert fam.delta == pytest.approx(target(fam.m), rel=1e-12)  # eq. (21), 4C² = 1
    h0 = float(bump_h(0.0, dim))
    norm_at = lambda m, d: 2 * d / h0 * _bump_norm(kernel, dim, 2 * fam.zeta * m)  # noqa: E731
    assert norm_at(fam.m, fam.delta) == pytest.approx(fam.rkhs_norm, rel=1e-10)
    if not fam.capped:  # the next finer grid would exceed the norm budget at its Δ
        assert norm_at(fam.m + 1, target(fam.m + 1)) > B


def test_construction_depends_on_horizon_as_the_theorem_says() -> None:
    se = SquaredExponential(0.1)
    a, b = (lower_bound_family(se, horizon=T, alpha=0.5) for T in (1000, 4000))
    if a.M == b.M:  # same grid: Δ ∝ T^{-α/(1+α)}
        assert b.delta / a.delta == pytest.approx(4 ** (-1 / 3), rel=1e-12)
    mat = [lower_bound_family(Matern(0.1, 2.5), horizon=T) for T in (250, 16000)]
    assert mat[1].M > mat[0].M  # Matérn: M grows polynomially in T


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"B": 1e-4}, "B"),
        ({"delta": 0.6}, "delta"),  # > ½ v^{1/(1+α)} = 0.5
        ({"delta": 0.3, "B": 0.01}, "delta"),  # norm of even two bumps above B
        ({"points_per_cell": 4}, "points_per_cell"),
        ({"dim": 4}, "dim"),
        ({"alpha": 0.0}, "alpha"),
        ({"v": -1.0}, "v"),
        ({"horizon": 0}, "horizon"),
        ({"max_points": 3}, "max_points"),
    ],
)
def test_impossible_constructions_are_refused(kwargs: dict, param: str) -> None:
    kw = {"horizon": 1000, **kwargs}
    with pytest.raises(ValueError, match=param):
        lower_bound_family(SquaredExponential(0.1), **kw)
    with pytest.raises(ValueError, match="kernel"):
        lower_bound_family(EmpiricalKernel(), horizon=100)


def test_given_delta_uses_the_finest_grid_the_budget_allows() -> None:
    se = SquaredExponential(0.1)
    fam = lower_bound_family(se, horizon=1000, delta=0.02)
    assert fam.delta == 0.02 and fam.delta_rule == "given" and fam.rkhs_norm <= 1.0
    h0 = float(bump_h(0.0, 1))
    assert 2 * 0.02 / h0 * _bump_norm(se, 1, 2 * fam.zeta * (fam.m + 1)) > 1.0


# -- the two-point channel ------------------------------------------------------------------------
@pytest.mark.parametrize("alpha, delta, v", [(1.0, 0.05, 1.0), (0.5, 0.1, 1.0), (0.7, 0.2, 2.0)])
def test_two_point_mean_and_moment_by_monte_carlo(alpha: float, delta: float, v: float) -> None:
    ch = TwoPoint(delta=delta, v=v, alpha=alpha)
    f = np.array([2 * delta, -0.7 * delta, 0.3 * delta, 0.0])
    m = ch.moments(f)
    assert m.v == pytest.approx(v, rel=1e-8)  # v|f|/(2Δ) at max|f| = 2Δ: exactly v
    a = (v / (2 * delta)) ** (1 / alpha)
    rng = np.random.default_rng(3)
    n = 160_000
    for i, fx in enumerate(f):
        y = np.array([ch.sample(float(fx), i, rng) for _ in range(n // 4)]) if i else None
        if y is None:  # the maximiser: the full sample
            y = np.array([ch.sample(float(fx), i, rng) for _ in range(n)])
        assert set(np.unique(y)) <= {0.0, math.copysign(a, fx) if fx else 0.0}
        se = y.std(ddof=1) / math.sqrt(y.size)
        assert abs(y.mean() - fx) <= Z * se + 1e-15  # E[y] = f(x)
        mom = np.abs(y) ** (1 + alpha)
        exact = v * abs(fx) / (2 * delta)
        se_m = mom.std(ddof=1) / math.sqrt(y.size)
        assert abs(mom.mean() - exact) <= Z * se_m + 1e-15  # E|y|^{1+α} = v|f|/(2Δ) <= v
        assert exact <= m.v
        cen = np.abs(y - fx) ** (1 + alpha)
        assert cen.mean() <= m.nu + Z * cen.std(ddof=1) / math.sqrt(y.size)


def test_two_point_central_moment_is_the_supremum() -> None:
    # Δ at the validity limit: a = 2Δ, so the sup of φ over |f| <= 2Δ sits at a/2 inside
    for alpha, v in ((1.0, 1.0), (0.5, 3.0)):
        limit = 0.5 * v ** (1 / (1 + alpha))
        for delta in (limit, 0.3 * limit):
            ch = TwoPoint(delta=delta, v=v, alpha=alpha)
            a = ch.magnitude
            s = np.linspace(0, 2 * delta, 200_001)
            phi = (s / a) * (a - s) ** (1 + alpha) + (1 - s / a) * s ** (1 + alpha)
            assert ch.moments(np.array([2 * delta])).nu == pytest.approx(phi.max(), rel=1e-8)


def test_two_point_refuses_invalid_constants() -> None:
    with pytest.raises(ValueError, match="'delta'"):
        TwoPoint(delta=0.51, v=1.0, alpha=1.0)  # > ½ v^{1/2}
    TwoPoint(delta=0.5, v=1.0, alpha=1.0)  # the limit itself is valid
    with pytest.raises(ValueError, match="'alpha'"):
        TwoPoint(delta=0.1, alpha=1.5)
    with pytest.raises(ValueError, match="max\\|f"):
        TwoPoint(delta=0.1).validate(np.array([0.25]))
    assert isinstance(make_channel({"name": "two_point", "delta": 0.1}), TwoPoint)


# -- the envs -------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["hbo/LowerBound-SE-v0", "hbo/LowerBound-Matern-v0"])
def test_env_reports_the_construction_and_draws_j_uniformly(env_id: str) -> None:
    env = gym.make(env_id, horizon=500, alpha=0.5).unwrapped
    fam = env.family
    p = env.problem
    assert p.alpha == 0.5 and p.v == pytest.approx(1.0, rel=1e-8) and p.B == fam.rkhs_norm <= 1
    c = p.meta["construction"]
    assert (
        c["M"] == fam.M
        and c["delta"] == fam.delta
        and c["maximizer_indices"] == list(fam.centre_index)
    )
    counts = np.zeros(fam.M)
    seeds = 40 * fam.M
    for s in range(seeds):
        env.reset(seed=s)
        j = int(np.argmax(env.objective.values))
        assert j in fam.centre_index
        counts[list(fam.centre_index).index(j)] += 1
    # uniform over the family: chi-square goodness of fit
    assert stats.chisquare(counts).pvalue > 1e-4
    # the theorem's rate: slope = the exponent
    t = np.array([1e3, 1e4])
    lb = env.regret_lower_bound(t)
    slope = np.diff(np.log(lb))[0] / np.log(10)
    if "Matern" in env_id:
        assert slope == pytest.approx(env.lower_bound_exponent, rel=1e-12)
    else:  # SE: t^{1/(1+α)} times a power of ln
        assert slope > env.lower_bound_exponent == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"kernel": "rbf"}, "kernel"),
        ({"alpha": 1.5}, "alpha"),
        ({"v": 0}, "v"),
        ({"B": -1}, "B"),
        ({"B": 1e-5}, "B"),
        ({"horizon": 0}, "horizon"),
        ({"horizon": 10**30}, "horizon"),  # above MAX_HORIZON, refused before building
        ({"dim": 0}, "dim"),
        ({"lengthscale": -0.1}, "lengthscale"),
        ({"matern_nu": 0.0, "kernel": "matern"}, "matern_nu"),
        ({"matern_nu": 1e9, "kernel": "matern"}, "matern_nu"),  # above MAX_MATERN_NU
        ({"matern_nu": float("nan")}, "matern_nu"),  # checked for SE too
        ({"points_per_cell": 2}, "points_per_cell"),
        ({"delta": 2.0}, "delta"),
        ({"objective_seed": -1}, "objective_seed"),
        ({"max_points": "many"}, "max_points"),
    ],
)
def test_env_rejects_bad_arguments(kwargs: dict, param: str) -> None:
    with pytest.raises(ValueError, match=f"'{param}'|{param}"):
        gym.make("hbo/LowerBound-SE-v0", **kwargs)


def test_exponents_of_the_theorem() -> None:
    assert lower_bound_exponent(SquaredExponential(0.1), 0.5) == pytest.approx(2 / 3)
    # Matérn: (ν + dα)/(ν(1+α) + dα) → 1/(1+α) as ν → ∞, up to the largest ν accepted
    # (MAX_MATERN_NU = 1e3: beyond it Matérn is SE and K_ν loses precision)
    gaps = [
        lower_bound_exponent(Matern(0.1, nu), 0.5) - 2 / 3
        for nu in (2.5, 10.0, 100.0, MAX_MATERN_NU)
    ]
    assert all(g > 0 for g in gaps) and gaps == sorted(gaps, reverse=True)
    assert gaps[-1] == pytest.approx((MAX_MATERN_NU + 0.5) / (1.5 * MAX_MATERN_NU + 0.5) - 2 / 3)
    assert gaps[-1] < 2e-4
    assert lower_bound_exponent(Matern(0.1, 2.5), 1.0, 2) == pytest.approx(4.5 / 7)


@pytest.mark.parametrize(
    "kwargs", [{"v": 1e-300}, {"horizon": MAX_HORIZON, "v": 1e-30}, {"delta": 1e-12}]
)
def test_moment_constants_stay_exact_at_extreme_scales(kwargs: dict) -> None:
    # 2Δ far below 1e-9: the channel must not round max|f| (the base class's cache key).
    # The horizon is capped at MAX_HORIZON = 1e9 (Δ ∝ T^{-α/(1+α)} alone gives only ~1e-4
    # there), so v = 1e-30 takes the T = 1e9 instance down to Δ ~ 1e-19.
    env = gym.make("hbo/LowerBound-SE-v0", **kwargs).unwrapped
    env.reset(seed=0)
    v = kwargs.get("v", 1.0)
    assert env.problem.v == pytest.approx(v, rel=1e-8)
    a = env.channel.magnitude
    s = min(2 * env.family.delta, a / 2)
    assert env.problem.nu == pytest.approx((s * (a - s) / a) * ((a - s) + s), rel=1e-8)
