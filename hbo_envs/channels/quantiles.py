"""Exact noise quartiles of the symmetric additive channels, and their Gaussian twin.

``tails-v0`` (issue 35 item 4) keeps an env only where the heavy tail itself hurts GP-UCB:
its ``R_T`` is compared with the ``R_T`` on the same env under Gaussian noise of the **same
interquartile range** (the same bulk, without the tail). For a noise ``eta`` symmetric
about 0, ``IQR = 2 F^{-1}(3/4)``; the Gaussian twin has ``sigma = IQR / (2 Phi^{-1}(3/4))``
(``2 Phi^{-1}(3/4) = 1.3489...``). Per channel (``eta = y - f(x)``):

- ``gaussian(sigma)``: ``F^{-1}(3/4) = sigma Phi^{-1}(3/4)``;
- ``student_t(df, scale)``: ``scale t_df^{-1}(3/4)`` (scipy's ``stdtrit``);
- ``signed_pareto(shape, scale)``: ``eta = zeta z``, ``z >= scale`` Pareto, so
  ``P(eta <= q) = 1/2 + P(z <= q)/2`` and ``F^{-1}(3/4)`` is the median of ``z``,
  ``scale 2^{1/shape}``;
- ``stable(stability, scale)``: ``scale`` times the quartile of ``levy_stable(a, 0)``;
- ``contaminated``: the root in ``q`` of ``(1-p) Phi(q/sigma) + p G(q) = 3/4`` (``G`` the
  outlier's CDF), by Brent's method to ``1e-13`` relative.

>>> from hbo_envs.channels import make_channel
>>> round(noise_iqr(make_channel({"name": "gaussian", "sigma": 1.0})), 6)
1.34898
>>> twin = gaussian_twin(make_channel({"name": "signed_pareto", "shape": 2.0, "scale": 0.1}))
>>> round(twin.sigma, 6)  # 2 * 0.1 * 2^{1/2} / 1.34898
0.209672
"""

from __future__ import annotations

import math

from scipy import optimize, special, stats

from hbo_envs.channels.base import RewardChannel
from hbo_envs.channels.contaminated import Contaminated
from hbo_envs.channels.gaussian import Gaussian
from hbo_envs.channels.signed_pareto import SignedPareto
from hbo_envs.channels.stable import SymmetricStable
from hbo_envs.channels.student_t import StudentT
from hbo_envs.validation import param_error

__all__ = ["GAUSS_IQR", "gaussian_twin", "noise_cdf", "noise_iqr"]

GAUSS_IQR = 2.0 * float(special.ndtri(0.75))
"""IQR of a standard normal, ``2 Phi^{-1}(3/4)``."""

_SUPPORTED = "a gaussian, student_t, signed_pareto, stable or contaminated channel"


def noise_cdf(channel: RewardChannel, x: float) -> float:
    """``P(eta <= x)`` of the channel's additive noise ``eta = y - f(x)``."""
    if isinstance(channel, Gaussian):
        return float(special.ndtr(x / channel.sigma))
    if isinstance(channel, StudentT):
        return float(special.stdtr(channel.df, x / channel.scale))
    if isinstance(channel, SignedPareto):
        z = abs(x)
        tail = 0.5 * (channel.scale / z) ** channel.shape if z >= channel.scale else 0.5
        return 1.0 - tail if x >= 0 else tail
    if isinstance(channel, SymmetricStable):
        return float(stats.levy_stable(channel.stability, 0.0).cdf(x / channel.scale))
    if isinstance(channel, Contaminated):
        p = channel.prob
        out = channel.outlier_channel()
        return (1.0 - p) * noise_cdf(channel.gaussian(), x) + p * noise_cdf(out, x)
    raise param_error("noise_cdf", "channel", _SUPPORTED, channel)


def noise_iqr(channel: RewardChannel) -> float:
    """The interquartile range ``2 F^{-1}(3/4)`` of the channel's (symmetric) noise."""
    if isinstance(channel, Gaussian):
        q = channel.sigma * GAUSS_IQR / 2.0
    elif isinstance(channel, StudentT):
        q = channel.scale * float(special.stdtrit(channel.df, 0.75))
    elif isinstance(channel, SignedPareto):
        q = channel.scale * 2.0 ** (1.0 / channel.shape)
    elif isinstance(channel, SymmetricStable):
        q = channel.scale * float(stats.levy_stable(channel.stability, 0.0).ppf(0.75))
    elif isinstance(channel, Contaminated):
        hi = channel.sigma
        while noise_cdf(channel, hi) < 0.75:
            hi *= 2.0
        q = optimize.brentq(
            lambda x: noise_cdf(channel, x) - 0.75, 0.0, hi, xtol=1e-300, rtol=1e-13
        )
    else:
        raise param_error("noise_iqr", "channel", _SUPPORTED, channel)
    if not (math.isfinite(q) and q > 0):  # pragma: no cover - every branch is positive
        raise ValueError(f"noise_iqr: quartile {q!r} of {channel!r} is not positive.")
    return 2.0 * float(q)


def gaussian_twin(channel: RewardChannel) -> Gaussian:
    """Gaussian noise with the channel's interquartile range (and its ``alpha``)."""
    return Gaussian(sigma=noise_iqr(channel) / GAUSS_IQR, alpha=channel.alpha)
