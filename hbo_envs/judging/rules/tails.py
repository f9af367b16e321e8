"""The ``tails-v0`` criterion: does the heavy tail itself break GP-UCB on an env?

Issue 35 item 4 admits an env to ``tails-v0`` only when tuned GP-UCB's ``R_T`` under the
env's heavy-tailed noise is at least ``factor = 2`` times its ``R_T`` on the same env (same
objective draws, same seeds) under Gaussian noise of the same interquartile range
(:func:`hbo_envs.channels.quantiles.gaussian_twin`), **and** the two 95% confidence
intervals are apart: with ``m``, ``s`` the mean and sample standard deviation over ``k``
seeds, ``CI = m +- z s / sqrt(k)``, ``z = 1.96``; apart means ``lo_heavy > hi_gauss``. This
is ``robust-v0``'s rule (tests/test_robust_suite.py) with the Gaussian twin as control.

``statistic="iqm"`` decides the same rule on the leaderboards' own metric instead: the
interquartile mean over seeds with its 95% stratified-bootstrap CI
(:func:`hbo_envs.harness.stats.stratified_bootstrap_ci`, 2000 replicates, seed 0). Tuned
GP-UCB sometimes commits to a wrong peak under Gaussian noise too (a bimodal ``R_T``:
most seeds near 0, a few near ``T gap``); the mean and its normal CI are dominated by those
seeds, the IQM is not.

>>> v = tail_breaks([10.0, 12.0, 11.0], [4.0, 5.0, 6.0])
>>> v.passes, round(v.ratio, 3)
(True, 2.2)
>>> tail_breaks([10.0, 30.0, 1.0], [4.0, 5.0, 6.0]).passes  # 2.7x, but the CIs overlap
False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hbo_envs.harness.stats import iqm, stratified_bootstrap_ci
from hbo_envs.validation import check_choice, check_real, param_error

__all__ = ["TailBreak", "mean_ci", "tail_breaks"]


@dataclass(frozen=True)
class TailBreak:
    """The measured criterion: both means and CIs, their ratio, and the verdict."""

    heavy_mean: float
    heavy_ci: tuple[float, float]
    gauss_mean: float
    gauss_ci: tuple[float, float]
    ratio: float
    passes: bool


def mean_ci(x: Sequence[float], z: float = 1.96, name: str = "x") -> tuple[float, float, float]:
    """``(m, m - z s/sqrt(k), m + z s/sqrt(k))`` over ``k >= 2`` finite values."""
    a = np.asarray(x, dtype=float) if not isinstance(x, str | bytes) else np.asarray([])
    if a.ndim != 1 or a.size < 2 or not np.all(np.isfinite(a)):
        raise param_error("tail_breaks", name, "a sequence of at least 2 finite R_T values", x)
    m = float(a.mean())
    h = z * float(a.std(ddof=1)) / math.sqrt(a.size)
    return m, m - h, m + h


def tail_breaks(
    heavy: Sequence[float],
    gaussian: Sequence[float],
    *,
    factor: float = 2.0,
    z: float = 1.96,
    statistic: str = "mean",
) -> TailBreak:
    """Decide the criterion from per-seed ``R_T`` under the heavy tail and its twin
    (``statistic``: ``"mean"`` with ``m +- z s/sqrt(k)``, or ``"iqm"`` with its 95%
    stratified-bootstrap CI; ``z`` is used by ``"mean"`` only)."""
    factor = check_real("tail_breaks", "factor", factor, 1.0, None, "left")
    z = check_real("tail_breaks", "z", z, 0.0, None, "neither")
    check_choice("tail_breaks", "statistic", statistic, ("mean", "iqm"))
    mh, lo_h, hi_h = mean_ci(heavy, z, "heavy")
    mg, lo_g, hi_g = mean_ci(gaussian, z, "gaussian")
    if statistic == "iqm":
        mh, (lo_h, hi_h) = iqm(heavy), stratified_bootstrap_ci(heavy, iqm)
        mg, (lo_g, hi_g) = iqm(gaussian), stratified_bootstrap_ci(gaussian, iqm)
    ratio = mh / mg if mg > 0 else math.inf
    return TailBreak(mh, (lo_h, hi_h), mg, (lo_g, hi_g), ratio, mh >= factor * mg and lo_h > hi_g)
