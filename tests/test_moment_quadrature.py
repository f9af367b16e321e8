"""The moment quadrature (``hbo_envs.channels.moments.abs_moment``) and the grid of ``c``.

About 0.3% of normalised objective draws have ``max|f| = 1 + a few ulps``. The grid once
rounded those up to ``c = 1.000000001``, a hair beyond the signed-Pareto channels' kink at
``c = scale``, where a ~1e-20 piece of the quadrature, computed with cancellation, could not
reach its relative tolerance and scipy warned; near a Student-t moment's limit the far tail
lay beyond scipy's accurate quantiles and the quadrature hit its subdivision limit. Here:
the grid snaps those ulps to the grid point; no channel of a registered env, nor the near-limit
channels, warns at any ``c`` of a sweep (ulps and multiples of ``1e-9`` off 1 and off the
kinks, the registered envs' own ``max|f|``); and the values equal 30-digit references
(``tests/moment_references.py``) to ``1e-10`` beyond the channels' ``1e-9`` margin, never
below them.
"""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from moment_references import pareto_abs_moment, student_t_abs_moment

import hbo_envs  # noqa: F401  (registers the envs)
from hbo_envs.channels import Contaminated, RewardChannel, SignedPareto, StudentT
from hbo_envs.channels.base import GRID_SNAP, moment_grid
from hbo_envs.data.paths import DataNotFoundError

ULP = 2.0**-52
MARGIN = 1e-9  # the channels' relative safety margin on v (RewardChannel.moments)

# Near a Student-t moment's limit (p / df -> 1) and the signed-Pareto kink at c = scale.
NEAR_LIMIT = [
    StudentT(df=1.05, scale=0.7, alpha=0.02),
    StudentT(df=2.05, scale=1.0, alpha=1.0),
    StudentT(df=1.2, scale=0.7, alpha=0.1),
    SignedPareto(shape=1.3, scale=1.0, alpha=0.2),
    SignedPareto(shape=1.8, scale=0.1, alpha=0.5),
]


def _ulps_above(x: float, k: int) -> float:
    for _ in range(k):
        x = float(np.nextafter(x, np.inf))
    return x


def test_moment_grid_snaps_a_few_ulps_and_rounds_everything_else_up() -> None:
    # a normalised objective lands up to a few ulps off 1: c = 1, not 1.000000001
    for k in range(17):
        assert moment_grid(_ulps_above(1.0, k)) == 1.0, k
        assert moment_grid(float(np.nextafter(1.0, 0.0)) - k * ULP / 2) == 1.0, k
    assert moment_grid(_ulps_above(1.0, 17)) == 1.000000001  # beyond GRID_SNAP
    # relative: the same few ulps at any magnitude; grid points themselves stay put
    for g in (0.7, 56.95773671, 1234.5, 1e-6):
        assert moment_grid(g) == g
        assert moment_grid(g * (1 + 8 * ULP)) == g
        assert moment_grid(g + 3e-10) == pytest.approx(g + 1e-9, rel=1e-15)
    # everything else rounds up to the next multiple of 1e-9 (hand-computed)
    assert moment_grid(0.0) == 0.0
    assert moment_grid(1e-20) == 1e-9
    assert moment_grid(1.0000000015) == 1.000000002
    assert moment_grid(1.000000001) == 1.000000001
    rng = np.random.default_rng(3)
    for x in rng.uniform(0.0, 60.0, 2000):
        c = moment_grid(float(x))
        assert c >= x * (1 - GRID_SNAP)  # never below x but for the snapped ulps
        assert c - x < 1e-9 + 1e-15 * x
        assert abs(c * 1e9 - round(c * 1e9)) < 1e-6 * max(1.0, c)  # on the grid


def test_normalised_objectives_hit_the_cache_at_c_1() -> None:
    """Draws whose max|f| is a few ulps above 1 get the constants of c = 1 exactly."""
    env = gym.make("hbo/Tails-SE2D-Contaminated-v0", horizon=10).unwrapped
    at_one = env.channel.moments_at(1.0)
    above = 0
    for seed in range(60):
        env.reset(seed=seed)
        x = float(np.max(np.abs(env.objective.values)))
        assert abs(x - 1.0) <= 8 * ULP  # normalised (the draws this test is about)
        above += x > 1.0
        assert (env.problem.v, env.problem.nu) == (at_one.v, at_one.nu), seed
    assert above >= 5  # the sweep does reach max|f| above 1


def _registered_channels() -> dict[str, tuple[RewardChannel, set[float]]]:
    """Every registered env's channel with the ``max|f|`` of its first objective draws."""
    out: dict[str, tuple[RewardChannel, set[float]]] = {}
    for env_id in sorted(k for k in gym.registry if k.startswith("hbo/")):
        try:
            env = gym.make(env_id).unwrapped
        except DataNotFoundError:
            continue  # real-data envs (empirical channels, below) without their data
        ch = env.channel
        if type(ch).moments_at is RewardChannel.moments_at:
            continue  # empirical channels: sample moments of their data, no quadrature
        cs = out.setdefault(repr(ch), (ch, set()))[1]
        for seed in range(3):
            env.reset(seed=seed)
            cs.add(float(np.max(np.abs(env.objective.values))))
    return out


def _sweep(ch: RewardChannel, own: set[float]) -> list[float]:
    """c off 1 by ulps and by multiples of 1e-9, the same off each kink c = scale, and the
    env's own max|f| (raw and on the grid)."""
    kinks = {1.0}
    for name in ("scale", "outlier_scale"):
        if isinstance(getattr(ch, name, None), float):
            kinks.add(getattr(ch, name))
    cs = {0.0, 0.5, *own, *(moment_grid(x) for x in own)}
    for s in kinks:
        cs |= {s, *(_ulps_above(s, k) for k in (1, 6, 17))}
        cs |= {s + k * 1e-9 for k in (1, 2, 1000)} | {s * (1 + 1e-12)}
    return sorted(cs)


def test_no_channel_warns_anywhere_in_the_sweep() -> None:
    channels = _registered_channels()
    assert any(isinstance(ch, Contaminated) for ch, _ in channels.values())
    assert any(
        isinstance(ch, SignedPareto) or isinstance(ch, StudentT) for ch, _ in channels.values()
    )
    cases = [(ch, _sweep(ch, own)) for ch, own in channels.values()]
    cases += [(ch, _sweep(ch, {1.0})) for ch in NEAR_LIMIT]
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's IntegrationWarning (and any other) fails
        for ch, cs in cases:
            for c in cs:
                m = ch.moments_at(c)
                assert all(math.isfinite(x) for x in (m.v, m.nu)), (ch, c)
                n += 1
    assert n > 350


def test_references_reproduce_closed_forms() -> None:
    """The 30-digit references against what they must give (hand-derived)."""
    # Student-t at p = 2: E(c + T)^2 = c^2 + df/(df - 2); df = 2.05 is the case whose far
    # tail defeated scipy's quantile
    for df, c in ((3.0, 1.0), (2.05, 0.8), (2.05, 0.0)):
        assert student_t_abs_moment(df, c, 1.0, 2.0) == pytest.approx(
            c * c + df / (df - 2), rel=1e-14
        )
    # Student-t at c = 0: the closed-form nu of StudentT
    for df, p in ((1.05, 1.02), (1.3, 1.2), (3.0, 1.5)):
        assert student_t_abs_moment(df, 0.0, 0.7, p) == pytest.approx(
            StudentT(df=df, scale=0.7, alpha=p - 1).moments_at(0.0).nu, rel=1e-13
        )
    # Pareto(a) on [1, inf) at p = 1: E(c + Z) = c + a/(a - 1); E|c - Z| = E Z - c + 2 E(c - Z)^+
    # with E(c - Z)^+ = c - 1 - (1 - c^{1-a})/(a - 1) for c > 1
    a = 2.5
    for c in (0.3, 2.0):
        assert pareto_abs_moment(a, c, 1.0, 1.0) == pytest.approx(c + a / (a - 1), rel=1e-14)
    c = 3.0
    plus = c - 1 - (1 - c ** (1 - a)) / (a - 1)
    assert pareto_abs_moment(a, c, -1.0, 1.0) == pytest.approx(
        a / (a - 1) - c + 2 * plus, rel=1e-14
    )
    # and E Z^p = a / (a - p), the signed-Pareto nu
    assert pareto_abs_moment(1.8, 0.0, 1.0, 1.5) == pytest.approx(6.0, rel=1e-14)


def _reference_v(ch: RewardChannel, c: float) -> float:
    p = 1.0 + ch.alpha
    if isinstance(ch, StudentT):
        return student_t_abs_moment(ch.df, c, ch.scale, p)
    assert isinstance(ch, SignedPareto)
    s, a = ch.scale, ch.shape
    return 0.5 * (pareto_abs_moment(a, c, s, p) + pareto_abs_moment(a, c, -s, p))


@pytest.mark.parametrize("ch", NEAR_LIMIT, ids=repr)
def test_v_equals_the_30_digit_reference(ch: RewardChannel) -> None:
    """On and next to 1 and the kink ``c = scale`` (ulps, 1e-9 above), and elsewhere: ref <= v,
    and v exceeds ref by the 1e-9 margin plus at most 1e-10 (the quadrature's error bound)."""
    cs = {0.0, 0.5, 0.8, 1.2, 10.0}
    for s in (1.0, ch.scale):
        cs |= {s, _ulps_above(s, 6), s + 1e-9, s + 2e-9}
    for c in sorted(cs):
        v, ref = ch.moments_at(c).v, _reference_v(ch, c)
        assert v >= ref, (c, v, ref)
        assert v / ref - 1.0 - MARGIN <= 1e-10, (c, v, ref)
