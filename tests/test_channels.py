"""Reward channels: moment constants against Monte Carlo, closed forms and independent
quadrature; samplers against their distributions; refusal of invalid parameters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hbo_envs.channels import (
    Gaussian,
    Pareto,
    RewardChannel,
    Spike,
    StudentT,
    SymmetricPareto,
    make_channel,
)
from hbo_envs.channels.moments import abs_moment
from hbo_envs.channels.spike import SpikeState

Z = 5.0  # tolerance in standard errors: a false failure has probability ~6e-7
F = np.array([1.0, 0.3, 0.05])  # max |f| = 1 at index 0; positive for the Pareto channel

# Configurations where the Monte Carlo estimators of E[y] and E|y|^{1+alpha} have finite
# variance (the tail index exceeds 2(1+alpha)), so a CLT tolerance is valid.
FINITE_VARIANCE = [
    Gaussian(sigma=0.7, alpha=1.0),
    Gaussian(sigma=2.0, alpha=0.5),
    StudentT(df=7.0, alpha=1.0),
    StudentT(df=5.0, scale=0.5, alpha=0.5),
    Pareto(shape=5.0, alpha=1.0),
    SymmetricPareto(epsilon=0.5, shape=3.5, scale=0.5),
    Spike(magnitude=10.0, alpha=1.0),
]


def _draws(ch: RewardChannel, index: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    state = SpikeState(0, None) if isinstance(ch, Spike) else None  # the spike sits at index 0
    return np.array([ch.sample(F[index], index, rng, state) for _ in range(n)])


def _within(samples: np.ndarray, target: float) -> tuple[float, float]:
    est = float(samples.mean())
    se = float(samples.std(ddof=1) / np.sqrt(samples.size))
    return est, se


@pytest.mark.parametrize("ch", FINITE_VARIANCE, ids=repr)
def test_monte_carlo_mean_and_moment_bounds(ch: RewardChannel) -> None:
    m = ch.moments(F)
    p = 1.0 + m.alpha
    y = _draws(ch, 0, 200_000, seed=11)
    est, se = _within(y, F[0])
    assert abs(est - F[0]) <= Z * se, (est, se)  # E[y] = f(x)
    raw, se_raw = _within(np.abs(y) ** p, m.v)
    assert raw <= m.v + Z * se_raw  # v bounds E|y|^{1+alpha} ...
    assert abs(raw - m.v) <= Z * se_raw  # ... and is tight at argmax |f|
    cen, se_cen = _within(np.abs(y - F[0]) ** p, m.nu)
    assert abs(cen - m.nu) <= Z * se_cen  # nu = E|eta|^{1+alpha}
    # at a point with smaller |f| the raw moment is smaller still (sup over x at max|f|)
    y2 = _draws(ch, 1, 50_000, seed=12)
    raw2, se2 = _within(np.abs(y2) ** p, m.v)
    assert raw2 <= m.v + Z * se2
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(y2))


def test_student_t_paper_constants() -> None:
    m = StudentT(df=3.0, alpha=1.0).moments(np.array([1.0, -0.4]))
    # Chowdhury–Gopalan §6: v = B^2 + 3 with B = max|f| = 1; nu = Var(t_3) = 3
    assert 4.0 <= m.v <= 4.0 * (1 + 1e-8)
    assert m.nu == pytest.approx(3.0, rel=1e-12)
    # general alpha: closed-form central moment against scipy's own integration
    m2 = StudentT(df=3.0, alpha=0.5).moments(np.array([0.8]))
    t3 = stats.t(3)
    assert m2.nu == pytest.approx(t3.expect(lambda x: abs(x) ** 1.5), rel=1e-7)
    assert m2.v == pytest.approx(t3.expect(lambda x: abs(0.8 + x) ** 1.5, limit=500), rel=1e-6)


def test_pareto_paper_constants() -> None:
    ch = Pareto(shape=2.0, alpha=0.9)
    m = ch.moments(np.array([1.0, 0.2]))
    # Chowdhury–Gopalan §6: v = B^{1+alpha} / (2^alpha (1 - alpha)) with B = 1
    assert 1.0 / (2**0.9 * 0.1) <= m.v <= 1.0 / (2**0.9 * 0.1) * (1 + 1e-8)
    z = stats.pareto(2.0, scale=0.5)
    ref = z.expect(lambda x: abs(x - 1.0) ** 1.9, limit=1000, epsabs=1e-13, epsrel=1e-12)
    assert m.nu == pytest.approx(ref, rel=1e-6)
    assert m.nu >= ref * (1 - 1e-9)


@pytest.mark.parametrize("eps", [0.2, 0.8])
def test_symmetric_pareto_paper_constants(eps: float) -> None:
    ch = SymmetricPareto(epsilon=eps)
    a = 1 + eps + 0.01
    assert ch.shape == pytest.approx(a)
    m = ch.moments(np.array([-2.0, 1.0]))
    z = stats.pareto(a, scale=1.0)
    mean = a / (a - 1)
    p = 1 + eps
    kw = {"limit": 2000, "epsabs": 0.0, "epsrel": 1e-10}
    nu_ref = z.expect(lambda x: abs(x - mean) ** p, **kw)
    v_ref = 0.5 * (
        z.expect(lambda x: abs(2.0 + x - mean) ** p, **kw)
        + z.expect(lambda x: abs(2.0 - x + mean) ** p, **kw)
    )
    assert m.nu == pytest.approx(nu_ref, rel=1e-5)
    assert m.v == pytest.approx(v_ref, rel=1e-5)


def test_abs_moment_against_closed_forms() -> None:
    for a, s, p in [(2.0, 0.5, 1.9), (1.21, 1.0, 1.2), (4.0, 2.0, 3.0)]:
        exact = a * s**p / (a - p)  # E z^p of a Pareto(a, s)
        got = abs_moment(stats.pareto(a, scale=s), 0.0, 1.0, p, upper_tail=a)
        assert got == pytest.approx(exact, rel=1e-8) and got >= exact
    got = abs_moment(stats.norm(), 0.7, 1.3, 2.0)
    assert 2.18 <= got <= 2.18 * (1 + 1e-8)  # an upper bound, tight to 1e-8
    with pytest.raises(ValueError, match="infinite"):
        abs_moment(stats.t(2), 0.0, 1.0, 2.0, lower_tail=2, upper_tail=2)


# Every distribution the channels integrate over (student_t, gaussian, pareto,
# symmetric_pareto), with parameters off the defaults as well.
QUANTILE_DISTS = [
    stats.t(3.0),
    stats.t(1.7),
    stats.norm(),
    stats.pareto(2.0),
    stats.pareto(1.21, scale=0.37),
    stats.pareto(4.0, loc=-0.5, scale=2.0),
]


@pytest.mark.parametrize("dist", QUANTILE_DISTS, ids=lambda d: f"{d.dist.name}{d.args}{d.kwds}")
def test_fast_quantiles_equal_scipys_public_methods_bit_for_bit(dist) -> None:
    from hbo_envs.channels.moments import _quantiles

    ppf, isf = _quantiles(dist)
    # the quadrature's nodes (down to the 1e-100 floor, TAIL_FLOOR) and beyond, up to 1/2
    qs = np.concatenate([np.geomspace(1e-200, 0.5, 300), np.linspace(1e-3, 0.5, 200)])
    for q in qs:
        q = float(q)
        assert ppf(q) == float(dist.ppf(q)) and isf(q) == float(dist.isf(q)), q


def test_moment_constants_unchanged_by_the_fast_quantiles(monkeypatch) -> None:
    """The channels' constants with the fast quantiles equal, bit for bit, those computed
    through ``dist.ppf``/``dist.isf`` (so no env's constants, spec hash or archived number
    moved when the fast path came in)."""
    from hbo_envs.channels import moments

    channels = [StudentT(), Pareto(), SymmetricPareto(), Gaussian(sigma=0.7, alpha=0.5)]
    fast = [ch.moments_at(c) for ch, c in zip(channels, (1.0, 0.83, 2.5, 1.0), strict=True)]
    monkeypatch.setattr(moments, "_quantiles", moments.public_quantiles)
    slow = [ch.moments_at(c) for ch, c in zip(channels, (1.0, 0.83, 2.5, 1.0), strict=True)]
    assert fast == slow


def test_abs_moment_takes_any_distribution_with_ppf_and_isf() -> None:
    """An object that is not a frozen scipy distribution gets its own ppf/isf called."""

    class Wrapped:
        def __init__(self, d) -> None:
            self.d = d

        def ppf(self, q):
            return self.d.ppf(q)

        def isf(self, q):
            return self.d.isf(q)

        def cdf(self, x):
            return self.d.cdf(x)

        def sf(self, x):
            return self.d.sf(x)

    d = stats.pareto(2.5, scale=0.5)
    want = abs_moment(d, 0.3, 1.0, 1.5, upper_tail=2.5)
    assert abs_moment(Wrapped(d), 0.3, 1.0, 1.5, upper_tail=2.5) == want


def _ks(samples: np.ndarray, cdf) -> float:
    return stats.kstest(samples, cdf).pvalue


def test_heavy_tailed_samplers_follow_their_distributions() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    y = np.array([Pareto(2.0, 0.9).sample(0.6, 0, rng) for _ in range(n)])
    assert _ks(y, stats.pareto(2.0, scale=0.3).cdf) > 1e-4  # scale f/2, mean f
    t = np.array([StudentT(3.0).sample(0.25, 0, rng) for _ in range(n)])
    assert _ks(t - 0.25, stats.t(3).cdf) > 1e-4
    ch = SymmetricPareto(0.2)
    eta = np.array([ch.sample(0.0, 0, rng) for _ in range(n)])
    z = stats.pareto(ch.shape, scale=1.0)
    m = ch.z_mean

    def cdf(x: np.ndarray) -> np.ndarray:  # eta = +-(z - m) with probability 1/2 each
        return 0.5 * z.cdf(x + m) + 0.5 * z.sf(m - x)

    assert _ks(eta, cdf) > 1e-4
    assert abs(np.median(eta)) < 0.1  # symmetric around 0


def test_moments_attained_at_max_abs_f() -> None:
    for ch in (StudentT(3.0), SymmetricPareto(0.8), Gaussian(), Spike()):
        small, big = ch.moments(np.array([0.5])), ch.moments(np.array([-1.5]))
        assert small.v < big.v
        assert small.nu == big.nu


@pytest.mark.parametrize(
    "factory, param",
    [
        (lambda: StudentT(df=2.0, alpha=1.0), "df"),
        (lambda: StudentT(df=1.4, alpha=0.5), "df"),
        (lambda: StudentT(df=3.0, alpha=1.5), "alpha"),
        (lambda: StudentT(df=3.0, scale=-1.0), "scale"),
        (lambda: StudentT(df=float("nan")), "df"),
        (lambda: Pareto(shape=1.9, alpha=0.9), "shape"),
        (lambda: Pareto(shape=2.0, alpha=0.0), "alpha"),
        (lambda: SymmetricPareto(epsilon=0.0), "epsilon"),
        (lambda: SymmetricPareto(epsilon=0.5, shape=1.5), "shape"),
        (lambda: SymmetricPareto(epsilon=0.5, scale=0.0), "scale"),
        (lambda: Gaussian(sigma=-0.1), "sigma"),
        (lambda: Gaussian(alpha=True), "alpha"),
        (lambda: Spike(magnitude=0.0), "magnitude"),
        (lambda: Spike(sign="sometimes"), "sign"),
        (lambda: make_channel({"name": "levy"}), "channel"),
    ],
)
def test_invalid_parameters_are_refused_clearly(factory, param: str) -> None:
    with pytest.raises(ValueError, match=f"'{param}'") as e:
        factory()
    assert "Got" in str(e.value) or "channel" in str(e.value)


def test_pareto_refuses_nonpositive_f() -> None:
    with pytest.raises(ValueError, match="f\\(x\\) > 0"):
        Pareto().moments(np.array([1.0, 0.0]))


def test_error_message_names_range_and_value() -> None:
    with pytest.raises(ValueError) as e:
        StudentT(df=2.0, alpha=1.0)
    msg = str(e.value)
    assert "StudentT" in msg and "> 1 + alpha = 2.0" in msg and "Got 2.0" in msg
