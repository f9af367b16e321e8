"""Channels whose tails bite (issue 35): Student-t with ``df`` in (1, 2], the symmetric
Pareto law, Gaussian noise with heavy-tailed outliers, symmetric alpha-stable noise.

Every constant is checked three ways: against an independent computation (closed form, or
scipy's own integration of the density: ``dist.expect``, ``levy_stable.pdf``; for
Student-t a 30-digit one, ``tests/moment_references.py``), against
Monte Carlo, and by the refusal of a moment that does not exist.

Monte Carlo under infinite variance. Each of these laws has tail index ``a <= 2``, so for
any ``p = 1 + alpha > 1`` the plain Monte Carlo mean of ``|eta|^p`` has *infinite*
variance (finite only if ``2p < a``): a CLT tolerance would be meaningless. The tests split
the moment at a level ``M``::

    E|c + eta|^p = E[|c + eta|^p 1{|eta| <= M}] + E[|c + eta|^p 1{|eta| > M}].

The first term is bounded by ``(|c| + M)^p``, so its Monte Carlo mean has finite variance
and a 5-standard-error tolerance is valid; the second is computed independently of the
channel's code (scipy's integration of the density over ``|x| > M``, or the Pareto tail in
closed form). The test asserts that the channel's ``v`` (``nu``) minus the independent tail
equals the Monte Carlo mean of the body. ``M`` is chosen so that the body carries most of
the moment (the printed fractions in the parametrisation), so most of each constant is
checked by simulation. The mean ``E[y] = f(x)`` is checked the same way: by symmetry
``E[eta 1{|eta| <= M}] = 0``, a finite-variance statement.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from moment_references import student_t_abs_moment
from scipy import integrate, stats

import hbo_envs  # noqa: F401  (registers the envs)
from hbo_envs.channels import (
    Contaminated,
    Gaussian,
    RewardChannel,
    SignedPareto,
    StudentT,
    SymmetricStable,
    make_channel,
)
from hbo_envs.channels.stable import stable_abs_moment, stable_central_moment

Z = 5.0  # tolerance in standard errors (a false failure has probability ~6e-7 per check)
N_MC = 200_000


def _levy(a: float, scale: float):
    return stats.levy_stable(a, 0.0, scale=scale)


def _sym_pareto_pdf(a: float, s: float):
    return lambda x: 0.5 * a * s**a * abs(x) ** (-a - 1.0) if abs(x) >= s else 0.0


def _outlier_dist(ch: Contaminated):
    if ch.outlier == "student_t":
        return stats.t(ch.outlier_shape, scale=ch.outlier_scale)
    return None


def _tail(ch: RewardChannel, c: float, p: float, M: float) -> float:
    """``E[|c + eta|^p 1{|eta| > M}]``, independently of the channel's code."""
    kw = {"limit": 1000, "epsabs": 0.0, "epsrel": 1e-10}

    def density_tail(pdf) -> float:
        def g(x: float) -> float:
            return abs(c + x) ** p * pdf(x)

        return integrate.quad(g, M, np.inf, **kw)[0] + integrate.quad(g, -np.inf, -M, **kw)[0]

    if isinstance(ch, StudentT):
        d = stats.t(ch.df, scale=ch.scale)
        return d.expect(lambda x: abs(c + x) ** p, lb=M, **kw) + d.expect(
            lambda x: abs(c + x) ** p, ub=-M, **kw
        )
    if isinstance(ch, SignedPareto):
        return density_tail(_sym_pareto_pdf(ch.shape, ch.scale))
    if isinstance(ch, SymmetricStable):
        # scipy's levy_stable pdf/sf are not reliable this far out (they disagree with each
        # other by tens of percent at 60 scale units): use the density of |X| from the
        # first two terms of the Bergstrom tail series, P(|X| > x) = (2/pi) [Gamma(a)
        # sin(pi a/2) x^{-a} - Gamma(2a)/2 sin(pi a) x^{-2a}] + O(x^{-3a}) (relative error
        # ~ (M/scale)^{-2a} < 1e-5 at M = 50 scale).
        a, s = ch.stability, ch.scale
        k1 = 2 / math.pi * math.gamma(a) * math.sin(math.pi * a / 2)
        k2 = -2 / math.pi * math.gamma(2 * a) / 2 * math.sin(math.pi * a)

        def g(x: float) -> float:  # density of |eta| at x (eta = s X)
            u = x / s
            dens = (k1 * a * u ** (-a - 1) + k2 * 2 * a * u ** (-2 * a - 1)) / s
            return 0.5 * (abs(c + x) ** p + abs(c - x) ** p) * dens

        return integrate.quad(g, M, np.inf, **kw)[0]
    if isinstance(ch, Contaminated):
        g = stats.norm(scale=ch.sigma)
        gt = g.expect(lambda x: abs(c + x) ** p, lb=M, **kw) + g.expect(
            lambda x: abs(c + x) ** p, ub=-M, **kw
        )
        od = _outlier_dist(ch)
        if od is None:
            ot = density_tail(_sym_pareto_pdf(ch.outlier_shape, ch.outlier_scale))
        else:
            ot = od.expect(lambda x: abs(c + x) ** p, lb=M, **kw) + od.expect(
                lambda x: abs(c + x) ** p, ub=-M, **kw
            )
        return (1 - ch.prob) * gt + ch.prob * ot
    raise TypeError(ch)


# (channel, truncation level M): infinite variance everywhere (tail index <= 2)
HEAVY = [
    (StudentT(df=1.5, scale=1.0, alpha=0.3), 30.0),
    (StudentT(df=2.0, scale=0.5, alpha=0.6), 30.0),
    (SignedPareto(shape=1.8, scale=0.1, alpha=0.5), 20.0),
    (SignedPareto(shape=1.3, scale=0.2, alpha=0.1), 50.0),
    (Contaminated(sigma=0.1, prob=0.05, outlier_shape=1.5, outlier_scale=1.0, alpha=0.3), 30.0),
    (Contaminated(0.2, 0.1, "student_t", 1.8, 0.5, alpha=0.5), 30.0),
    (SymmetricStable(stability=1.5, scale=0.1, alpha=0.3), 5.0),
    (SymmetricStable(stability=1.8, scale=0.5, alpha=0.6), 25.0),
]
F0 = 0.8  # max |f| of the test objective


def _draws(ch: RewardChannel, f_x: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([ch.sample(f_x, 0, rng) for _ in range(n)])


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


@pytest.mark.parametrize(
    ("ch", "M"), HEAVY, ids=lambda x: repr(x) if not isinstance(x, float) else f"M={x}"
)
def test_truncated_monte_carlo_matches_v_and_nu(ch: RewardChannel, M: float) -> None:
    m = ch.moments(np.array([F0, -0.3, 0.1]))
    p = 1.0 + m.alpha
    y = _draws(ch, F0, N_MC, seed=7)
    eta = y - F0
    body = np.abs(eta) <= M
    assert 0.9 < body.mean() < 1.0  # the body is most of the mass, the tail is not empty
    # E[eta 1{|eta| <= M}] = 0 by symmetry (so E[y] = f(x))
    est, se = _mean_se(np.where(body, eta, 0.0))
    assert abs(est) <= Z * se, (est, se)
    for const, shift in ((m.nu, 0.0), (m.v, F0)):
        tail = _tail(ch, shift, p, M)
        assert 0.0 < tail < const
        est, se = _mean_se(np.where(body, np.abs(shift + eta) ** p, 0.0))
        assert abs(est - (const - tail)) <= Z * se, (const, tail, est, se)
        assert (const - tail) / const > 0.3  # the simulation checks a large part of it


def test_student_t_moments_exact_for_df_in_1_2() -> None:
    """df in (1, 2] is allowed when 1 + alpha < df; the closed-form nu and the quadrature v
    equal a 30-digit integration of the density (``tests/moment_references.py``; scipy's own
    ``dist.expect`` is good to ~1e-6 only near the limit, and warns there), v from above by
    the 1e-9 margin plus at most 1e-10."""
    for df, alpha in [(1.5, 0.3), (2.0, 0.9), (1.2, 0.1), (1.05, 0.02)]:
        ch = StudentT(df=df, scale=0.7, alpha=alpha)
        m = ch.moments(np.array([F0, 0.2]))
        p = 1 + alpha
        assert m.nu == pytest.approx(student_t_abs_moment(df, 0.0, 0.7, p), rel=1e-13)
        v_ref = student_t_abs_moment(df, F0, 0.7, p)
        assert v_ref <= m.v <= v_ref * (1 + 1e-9 + 1e-10)


def test_student_t_near_the_moment_limit_is_not_underestimated() -> None:
    """Hand-computed: at alpha = 1, v = E(c + T)^2 = c^2 + df/(df - 2). At df = 2.05 about
    a third of E T^2 lies at quantiles below 1e-150, where scipy's stdtrit fails; the
    quantile quadrature alone gave 41.5656 for 41.64 (0.18% short)."""
    for df in (2.05, 2.1, 2.5, 3.0):
        m = StudentT(df=df, alpha=1.0).moments(np.array([F0, -0.2]))
        exact = F0**2 + df / (df - 2)
        assert exact <= m.v <= exact * (1 + 1e-8), (df, m.v, exact)
        assert m.nu == pytest.approx(df / (df - 2), rel=1e-12)


def test_signed_pareto_constants() -> None:
    ch = SignedPareto(shape=1.8, scale=0.1, alpha=0.5)
    m = ch.moments(np.array([F0, -0.1]))
    a, s, p = 1.8, 0.1, 1.5
    # hand-computed: nu = a s^p / (a - p) = 1.8 * 0.1^1.5 / 0.3
    assert m.nu == pytest.approx(6.0 * 0.1**1.5, rel=1e-9) and m.nu >= 6.0 * 0.1**1.5
    z = stats.pareto(a, scale=s)
    kw = {"limit": 2000, "epsabs": 0.0, "epsrel": 1e-11}
    v_ref = 0.5 * (
        z.expect(lambda x, p=p: abs(F0 + x) ** p, **kw)
        + z.expect(lambda x, p=p: abs(F0 - x) ** p, **kw)
    )
    assert m.v == pytest.approx(v_ref, rel=1e-7)


def test_contaminated_constants_are_the_mixture_of_independent_integrals() -> None:
    kw = {"limit": 2000, "epsabs": 0.0, "epsrel": 1e-11}
    for ch in (
        Contaminated(sigma=0.1, prob=0.05, outlier_shape=1.5, outlier_scale=1.0, alpha=0.3),
        Contaminated(0.2, 0.1, "student_t", 1.8, 0.5, alpha=0.5),
    ):
        m = ch.moments(np.array([F0, 0.0]))
        p, q = 1 + ch.alpha, ch.prob
        g = stats.norm(scale=ch.sigma)
        if ch.outlier == "student_t":
            o = stats.t(ch.outlier_shape, scale=ch.outlier_scale)
            o_nu = o.expect(lambda x, p=p: abs(x) ** p, **kw)
            o_v = o.expect(lambda x, p=p: abs(F0 + x) ** p, **kw)
        else:
            z = stats.pareto(ch.outlier_shape, scale=ch.outlier_scale)
            o_nu = z.expect(lambda x, p=p: x**p, **kw)
            o_v = 0.5 * (
                z.expect(lambda x, p=p: abs(F0 + x) ** p, **kw)
                + z.expect(lambda x, p=p: abs(F0 - x) ** p, **kw)
            )
        nu = (1 - q) * g.expect(lambda x, p=p: abs(x) ** p, **kw) + q * o_nu
        v = (1 - q) * g.expect(lambda x, p=p: abs(F0 + x) ** p, **kw) + q * o_v
        assert m.nu == pytest.approx(nu, rel=1e-7)
        assert m.v == pytest.approx(v, rel=1e-7)
    # prob = 0 is the Gaussian channel, prob = 1 the outlier alone
    g = Contaminated(sigma=0.3, prob=0.0, alpha=0.4).moments_at(F0)
    assert (g.v, g.nu) == (
        Gaussian(0.3, 0.4).moments_at(F0).v,
        Gaussian(0.3, 0.4).moments_at(F0).nu,
    )
    o = Contaminated(prob=1.0, outlier_shape=1.6, outlier_scale=0.4, alpha=0.4).moments_at(F0)
    assert o.v == SignedPareto(1.6, 0.4, 0.4).moments_at(F0).v


def _levy_moment(a: float, b: float, p: float) -> float:
    """``E|b + X|^p`` by quadrature of scipy's ``levy_stable`` density (independent of the
    channel's code): composite 16-point Gauss-Legendre on panels geometric in ``|x|`` up to
    ``1e4`` (breakpoints at 0 and at the kink ``-b``; scipy's pdf is vectorised), plus the
    two-term Bergstrom tail beyond ``1e4`` (relative error ~1e-4^{2a}, below 1e-10)."""
    d = _levy(a, 1.0)
    X = 1e4
    edges = np.concatenate([[0.0], np.geomspace(1e-3, X, 22)])
    grid = np.unique(np.concatenate([-edges, edges, [-b]]))
    g, w = np.polynomial.legendre.leggauss(16)
    lo, hi = grid[:-1, None], grid[1:, None]
    x = ((hi - lo) * (g + 1) / 2 + lo).ravel()
    wx = ((hi - lo) * w / 2).ravel()
    body = float(np.sum(np.abs(b + x) ** p * d.pdf(x) * wx))
    k1 = 2 / math.pi * math.gamma(a) * math.sin(math.pi * a / 2)
    k2 = -1 / math.pi * math.gamma(2 * a) * math.sin(math.pi * a)
    tail = k1 * a * X ** (p - a) / (a - p) + k2 * 2 * a * X ** (p - 2 * a) / (2 * a - p)
    return body + tail


@pytest.mark.parametrize(
    ("a", "p", "b"),
    [(1.5, 1.2, 0.0), (1.5, 1.2, 0.6), (1.8, 1.5, 3.0)],
)
def test_stable_moments_against_scipy_levy_stable_density(a: float, p: float, b: float) -> None:
    """The closed form E|X|^p = 2^p G((1+p)/2) G(1-p/a) / (G(1-p/2) sqrt(pi)) and the
    characteristic-function quadrature of E|b + X|^p (both branches: b <= 1 and b > 1)
    against scipy's own density (whose accuracy is ~1e-8)."""
    ref = _levy_moment(a, b, p)
    got = stable_abs_moment(a, b, p)
    assert got == pytest.approx(ref, rel=1e-7)
    if b == 0.0:
        assert stable_central_moment(a, p) == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize(("a", "b"), [(1.5, 0.0), (1.5, 0.5), (1.8, 3.0), (1.3, 20.0)])
def test_stable_moment_formulas_against_plain_monte_carlo(a: float, b: float) -> None:
    """At an order p' < a/2 the plain Monte Carlo mean of |b + X|^{p'} has finite variance,
    so the closed form and both characteristic-function branches meet a CLT tolerance."""
    p = 0.45 * a
    x = _draws(SymmetricStable(stability=a, scale=1.0, alpha=0.01), 0.0, N_MC, seed=11)
    est, se = _mean_se(np.abs(b + x) ** p)
    assert abs(est - stable_abs_moment(a, b, p)) <= Z * se, (est, se)


def test_stable_closed_form_limits_and_bounds() -> None:
    # hand-computed at p = 1: 2 Gamma(1) Gamma(1 - 1/a) / (Gamma(1/2) sqrt(pi))
    # = 2 Gamma(1 - 1/a) / pi
    for a in (1.2, 1.5, 1.9):
        assert stable_central_moment(a, 1.0) == pytest.approx(2 * math.gamma(1 - 1 / a) / math.pi)
    # Jensen and Minkowski: |b|^p <= E|b + X|^p <= (|b| + (E|X|^p)^{1/p})^p
    for a, p in [(1.5, 1.2), (1.9, 1.3), (1.3, 1.1)]:
        m = stable_central_moment(a, p)
        prev = m
        for b in [1e-6, 0.3, 0.999, 1.0, 1.001, 2.0, 10.0, 1e3, 1e6, 1e9]:
            got = stable_abs_moment(a, b, p)
            assert b**p <= got <= (b + m ** (1 / p)) ** p, (a, p, b, got)
            assert got >= prev * (1 - 1e-9)  # increasing in |b| (even and convex)
            prev = got
    with pytest.raises(ValueError, match="infinite"):
        stable_abs_moment(1.5, 0.3, 1.5)


def test_stable_sampler_is_scipys_levy_stable() -> None:
    """Chambers–Mallows–Stuck with the env's generator draws scipy's ``levy_stable(a, 0,
    scale)`` (S1; for beta = 0 the S0 parameterisation is the same law)."""
    ch = SymmetricStable(stability=1.5, scale=0.3, alpha=0.2)
    x = _draws(ch, 0.0, 3000, seed=5)
    d = _levy(1.5, 0.3)
    assert stats.kstest(x, d.cdf).pvalue > 1e-4
    s0 = stats.levy_stable(1.5, 0.0, scale=0.3)
    s0.dist.parameterization = "S0"
    try:
        np.testing.assert_allclose(s0.cdf([-1.0, 0.2, 2.0]), d.cdf([-1.0, 0.2, 2.0]), rtol=1e-6)
    finally:
        s0.dist.parameterization = "S1"
    # not another scale: the same draws against scale 0.3 * 1.5 fail
    assert stats.kstest(x, _levy(1.5, 0.45).cdf).pvalue < 1e-4


def test_other_samplers_follow_their_distributions() -> None:
    n = 20_000
    sp = SignedPareto(shape=1.8, scale=0.1, alpha=0.5)
    x = _draws(sp, 0.0, n, seed=1)
    z = stats.pareto(1.8, scale=0.1)
    assert stats.kstest(x, lambda t: 0.5 * z.sf(-t) + 0.5 * z.cdf(t)).pvalue > 1e-4
    assert np.all(np.abs(x) >= 0.1)
    ch = Contaminated(sigma=0.1, prob=0.2, outlier_shape=1.5, outlier_scale=1.0, alpha=0.3)
    y = _draws(ch, 0.0, n, seed=2)
    g = stats.norm(scale=0.1)
    zz = stats.pareto(1.5, scale=1.0)

    def mix(t):
        return 0.8 * g.cdf(t) + 0.2 * (0.5 * zz.sf(-t) + 0.5 * zz.cdf(t))

    assert stats.kstest(y, mix).pvalue > 1e-4
    ct = Contaminated(0.1, 0.2, "student_t", 1.5, 2.0, alpha=0.3)
    y = _draws(ct, 0.0, n, seed=3)
    tt = stats.t(1.5, scale=2.0)
    assert stats.kstest(y, lambda t: 0.8 * g.cdf(t) + 0.2 * tt.cdf(t)).pvalue > 1e-4
    t15 = _draws(StudentT(df=1.5, alpha=0.3), 0.25, n, seed=4)
    assert stats.kstest(t15 - 0.25, stats.t(1.5).cdf).pvalue > 1e-4


@pytest.mark.parametrize(
    ("factory", "param", "allowed"),
    [
        (lambda: StudentT(df=1.5, alpha=0.5), "df", "> 1 + alpha = 1.5"),
        (lambda: StudentT(df=1.0, alpha=0.01), "df", "> 1 + alpha"),
        (lambda: SignedPareto(shape=1.4, alpha=0.5), "shape", "> 1 + alpha = 1.5"),
        (lambda: SignedPareto(scale=0.0), "scale", "(0.0, 1e+100]"),
        (lambda: SymmetricStable(stability=2.0, alpha=0.5), "stability", "(1.0, 2.0)"),
        (lambda: SymmetricStable(stability=1.2, alpha=0.3), "stability", "> 1 + alpha = 1.3"),
        (lambda: SymmetricStable(stability=1.5, alpha=0.0), "alpha", "(0.0, 1.0]"),
        (lambda: SymmetricStable(scale=float("inf")), "scale", "(0.0, 1e+100]"),
        (lambda: Contaminated(outlier_shape=1.2, alpha=0.3), "outlier_shape", "> 1 + alpha"),
        (lambda: Contaminated(prob=1.5), "prob", "[0.0, 1.0]"),
        (lambda: Contaminated(outlier="cauchy"), "outlier", "'signed_pareto', 'student_t'"),
        (lambda: Contaminated(sigma=-1.0), "sigma", "[0.0, 1e+100]"),
        (lambda: Contaminated(outlier_scale=0.0), "outlier_scale", "(0.0, 1e+100]"),
        (
            lambda: Contaminated(outlier="student_t", outlier_scale=-2.0),
            "outlier_scale",
            "(0.0, 1e+100]",
        ),
    ],
)
def test_missing_moments_and_bad_parameters_are_refused(factory, param, allowed) -> None:
    with pytest.raises(ValueError) as e:
        factory()
    msg = str(e.value)
    owner = msg.split(" parameter of ")[1].split(" must ")[0]
    assert f"'{param}'" in msg and allowed in msg and "Got" in msg, msg
    assert owner in {"StudentT", "SignedPareto", "SymmetricStable", "Contaminated"}, msg
    if "Contaminated" in factory.__code__.co_names:
        assert owner == "Contaminated", msg


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "signed_pareto", "shape": 1.8, "scale": 0.1, "alpha": 0.5},
        {"name": "contaminated", "prob": 0.05, "outlier_shape": 1.5, "alpha": 0.3},
        {"name": "stable", "stability": 1.5, "scale": 0.1, "alpha": 0.3},
        {"name": "student_t", "df": 1.5, "alpha": 0.3},
    ],
    ids=lambda s: s["name"],
)
def test_gpbandit_takes_the_new_channels(spec) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make("hbo/GPBandit-v0", channel=spec, horizon=30)
    check_env(env.unwrapped)
    env.reset(seed=3)
    p = env.unwrapped.problem
    m = make_channel(spec).moments(env.unwrapped.objective.values)
    assert (p.alpha, p.v, p.nu) == (m.alpha, m.v, m.nu)
    ys = [env.step(a % p.n)[1] for a in range(30)]
    env.reset(seed=3)
    assert ys == [env.step(a % p.n)[1] for a in range(30)]  # seeded
    assert all(math.isfinite(y) for y in ys)


def test_new_channels_attain_v_at_max_abs_f() -> None:
    for ch in (SignedPareto(), Contaminated(), SymmetricStable(), StudentT(1.5, alpha=0.3)):
        small, big = ch.moments(np.array([0.5])), ch.moments(np.array([-1.5]))
        assert small.v < big.v and small.nu == big.nu
