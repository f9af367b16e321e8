"""Statistics of real payoff data: the Kolmogorov–Smirnov test against a Gaussian.

Chowdhury–Gopalan (2019) §6 justify the real-data experiments by a KS test: "the null
hypothesis of stock prices following a Gaussian distribution is rejected against the
favor of a heavy-tailed distribution" (and likewise for each light sensor). The real-data
envs report these statistics through :func:`ks_gaussian` (never typed-in numbers).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> ks_gaussian(rng.standard_normal(5000)).statistic < 0.02
True
>>> ks_gaussian(rng.standard_t(1.5, 5000)).pvalue < 1e-6
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

__all__ = ["KSResult", "ks_gaussian"]


class KSResult(NamedTuple):
    """``statistic`` D = sup_x |F_n(x) - Phi((x - m)/s)| and its ``pvalue``."""

    statistic: float
    pvalue: float


def ks_gaussian(x: np.ndarray) -> KSResult:
    """One-sample KS test of ``x`` against the Gaussian with ``x``'s mean and std.

    ``D = sup_x |F_n(x) - Phi((x - mean)/std)|`` (``scipy.stats.kstest``). As in the paper the
    Gaussian's parameters are estimated from the same sample, so the p-value is
    conservative (a Lilliefors correction would only make it smaller).
    """
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 3 or not np.all(np.isfinite(x)):
        raise ValueError(
            f"The 'x' parameter of ks_gaussian must be >= 3 finite samples. Got {x.size} "
            "samples instead."
        )
    s = float(np.std(x, ddof=1))
    if s == 0:
        return KSResult(1.0, 0.0)
    r = stats.kstest(x, "norm", args=(float(np.mean(x)), s))
    return KSResult(float(r.statistic), float(r.pvalue))
