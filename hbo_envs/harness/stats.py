"""Aggregate statistics: pure functions over ``(runs x tasks)`` arrays (rliable's habit).

- :func:`iqm` — interquartile mean: the mean of the middle 50% of all scores, trimming
  ``floor(n / 4)`` scores from each end (``scipy.stats.trim_mean(x, 0.25)``, as rliable).
- :func:`stratified_bootstrap_ci` — percentile confidence interval of any statistic by the
  stratified bootstrap: every task (column) resamples its own runs with replacement, so
  each bootstrap sample keeps the same number of runs per task.
- :func:`paired_comparison` — two agents on the same seeds: the mean per-seed difference,
  its paired-bootstrap CI and the Wilcoxon signed-rank p-value (the claims' comparison rule).

>>> iqm([1.0, 2.0, 3.0, 100.0])
2.5
>>> lo, hi = stratified_bootstrap_ci([3.0, 3.0, 3.0], np.mean)
>>> (lo, hi)
(3.0, 3.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PairedComparison",
    "bootstrap_mean_band",
    "fit_exponent",
    "iqm",
    "paired_comparison",
    "stratified_bootstrap_ci",
]


def iqm(scores: np.ndarray | list[float]) -> float:
    """Interquartile mean of all entries of ``scores`` (NaNs are an error): the mean of
    the sorted entries without the lowest and the highest ``n // 4``."""
    x = np.asarray(scores, dtype=float).ravel()
    if x.size == 0:
        return float("nan")
    return float(iqm_rows(x)[()])


def iqm_rows(x: np.ndarray) -> np.ndarray:
    """:func:`iqm` of every row of ``x`` (shape ``(..., n)``, ``n >= 1``): one sort, and
    the middle half of each row averaged along the contiguous last axis (numpy sums it
    pairwise, as a 1-D mean), so a row gives the same number alone or in a batch."""
    rows = np.sort(np.asarray(x, dtype=float), axis=-1)
    if np.isnan(rows).any():
        raise ValueError("iqm: scores contain NaN.")
    n = rows.shape[-1]
    cut = n // 4
    return np.ascontiguousarray(rows[..., cut : n - cut]).mean(axis=-1)


def _as_runs_by_tasks(scores: np.ndarray | list[float]) -> np.ndarray:
    x = np.asarray(scores, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(
            f"scores must be a non-empty (runs,) or (runs, tasks) array; got {x.shape}."
        )
    return x


def stratified_bootstrap_ci(
    scores: np.ndarray | list[float],
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic`` over a ``(runs, tasks)`` score array.

    Each replicate draws, for every task independently, ``runs`` indices with replacement
    and evaluates ``statistic`` on the resampled ``(runs, tasks)`` array (the statistic
    sees the whole array; ``np.mean`` and :func:`iqm` aggregate over all entries). The
    interval is the ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles of the
    replicates (linear interpolation). Deterministic for a given ``seed``. A statistic
    with a ``batched`` attribute (a function of the ``(reps, runs, tasks)`` array of all
    replicates giving the ``reps`` values) is evaluated through it, in one call; it must
    give the numbers ``statistic`` gives replicate by replicate.
    """
    x = _as_runs_by_tasks(scores)
    if not 0 < confidence < 1:
        raise ValueError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r}.")
    rng = np.random.default_rng(seed)
    runs, tasks = x.shape
    idx = rng.integers(runs, size=(reps, runs, tasks))
    cols = np.arange(tasks)[None, None, :]
    samples = x[idx, cols]  # (reps, runs, tasks)
    batched = getattr(statistic, "batched", None)
    if statistic is np.mean:
        stats = samples.reshape(reps, -1).mean(axis=1)
    elif statistic is iqm:  # iqm of every replicate in one sort (the same numbers)
        stats = iqm_rows(samples.reshape(reps, -1))
    elif callable(batched):  # the statistic of every replicate at once (same numbers)
        stats = np.asarray(batched(samples), dtype=float)
    else:
        stats = np.array([statistic(s) for s in samples])
    a = (1 - confidence) / 2
    lo, hi = np.quantile(stats, [a, 1 - a])
    return float(lo), float(hi)


def bootstrap_mean_band(
    curves: np.ndarray, *, confidence: float = 0.95, reps: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and percentile-bootstrap CI band of ``curves`` (runs x time), per time step.

    The same resampled runs are used at every time step (a whole curve is one run), so
    the band of a cumulative quantity stays coherent over time.
    """
    c = np.asarray(curves, dtype=float)
    if c.ndim != 2 or c.shape[0] == 0:
        raise ValueError(f"curves must be a (runs, time) array; got {c.shape}.")
    rng = np.random.default_rng(seed)
    runs = c.shape[0]
    idx = rng.integers(runs, size=(reps, runs))
    counts = np.zeros((reps, runs))
    np.add.at(counts, (np.arange(reps)[:, None], idx), 1.0)
    boot = counts @ c / runs  # (reps, time): the mean of each resampled set of curves
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    return c.mean(axis=0), lo, hi


def _log_slopes(lx: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``log means[k]`` on ``lx`` for every row ``k`` (the points
    where the mean is positive; NaN with fewer than two distinct ``lx`` among them):
    ``sum w (lx - lx_bar)(ly - ly_bar) / sum w (lx - lx_bar)^2`` with ``w`` the mask of
    positive means and the bars their ``w``-weighted averages, for all rows at once."""
    ok = means > 0
    w = ok.astype(float)
    ly = np.log(np.where(ok, means, 1.0))
    nw = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * lx).sum(axis=1) / nw
        my = (w * ly).sum(axis=1) / nw
        dx = (lx[None, :] - mx[:, None]) * w
        sxx = (dx * dx).sum(axis=1)
        slope = (dx * (ly - my[:, None])).sum(axis=1) / sxx
    spread = np.where(ok, lx[None, :], -np.inf).max(axis=1) - np.where(ok, lx[None, :], np.inf).min(
        axis=1
    )
    return np.where((nw >= 2) & (spread > 0), slope, np.nan)


def fit_exponent(
    x: np.ndarray | list[float],
    Y: np.ndarray | list[list[float]],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Growth exponent ``p`` of ``Y ~ c x^p`` with a bootstrap CI over runs.

    ``Y`` has shape ``(runs, len(x))`` (e.g. the cumulative regret ``R_t`` of each seed at
    the rounds ``x``, or ``R_T`` of each seed at several horizons ``T``). ``p`` is the
    least-squares slope of ``log mean_runs(Y)`` on ``log x`` (the log of the mean curve,
    so a run with zero regret does not break the fit); the interval is the percentile
    bootstrap over runs (whole rows resampled with replacement). Points where the mean
    is not positive are dropped; fewer than two left gives ``(nan, nan, nan)``.

    >>> t = np.array([10.0, 100.0, 1000.0])
    >>> p, lo, hi = fit_exponent(t, [2 * t**0.5, 3 * t**0.5])
    >>> round(p, 6), round(lo, 6), round(hi, 6)
    (0.5, 0.5, 0.5)
    """
    xs = np.asarray(x, dtype=float)
    Ys = np.asarray(Y, dtype=float)
    if Ys.ndim == 1:
        Ys = Ys[None, :]
    if xs.ndim != 1 or Ys.ndim != 2 or Ys.shape[1] != xs.size or Ys.shape[0] == 0:
        raise ValueError(
            f"fit_exponent: x must be 1-D and Y (runs, len(x)); got x {xs.shape}, Y {Ys.shape}."
        )
    if not (np.isfinite(xs).all() and (xs > 0).all()):
        raise ValueError("fit_exponent: x must be finite and positive.")
    if not np.isfinite(Ys).all():
        raise ValueError("fit_exponent: Y contains NaN or infinite values.")
    lx = np.log(xs)
    p = float(_log_slopes(lx, Ys.mean(axis=0)[None, :])[0])
    if not np.isfinite(p):
        return (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    runs = Ys.shape[0]
    idx = rng.integers(runs, size=(reps, runs))
    boot = np.empty(reps)
    step = max(1, 2**22 // max(Ys.size, 1))  # resampled curves of ~32 MB at a time
    for k in range(0, reps, step):  # the mean curve of each resample, summed in seed order
        boot[k : k + step] = _log_slopes(lx, Ys[idx[k : k + step]].mean(axis=1))
    boot = boot[np.isfinite(boot)]
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a]) if boot.size else (np.nan, np.nan)
    return p, float(lo), float(hi)


@dataclass(frozen=True)
class PairedComparison:
    """Agent ``a`` vs agent ``b`` on the seeds both finished (same seed = same f, same
    noise): per-seed differences ``d_s = a_s - b_s`` (see :func:`paired_comparison`)."""

    n: int
    mean_a: float
    mean_b: float
    diff: float  # mean of d_s (the effect size, in the metric's units)
    lo: float  # percentile paired-bootstrap CI of the mean difference
    hi: float
    wilcoxon_p: float  # two-sided Wilcoxon signed-rank p-value of d (NaN when undefined)
    deterministic: bool  # n >= 2 and every seed gave the same a and the same b

    @property
    def rel(self) -> float:
        """The effect relative to ``b``: ``diff / |mean_b|`` (NaN when ``mean_b == 0``)."""
        return self.diff / abs(self.mean_b) if self.mean_b != 0 else float("nan")


def paired_comparison(
    a: np.ndarray | list[float],
    b: np.ndarray | list[float],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> PairedComparison:
    """Compare paired scores ``a[s]``, ``b[s]`` (the same seeds, in the same order).

    The effect is the mean per-seed difference ``mean(a - b)``; its CI is the percentile
    bootstrap over seeds of the differences (:func:`stratified_bootstrap_ci` on ``d``:
    each replicate resamples whole seeds, so a seed's pair stays together), and the
    two-sided Wilcoxon signed-rank test on ``d`` (``scipy.stats.wilcoxon``, zero
    differences dropped) is reported beside it. When every seed gave the same ``a`` and the
    same ``b`` (a deterministic env and agents) the comparison is one run: ``deterministic``
    is set and the CI is the point itself.

    >>> c = paired_comparison([1.0, 2.0, 3.0, 4.0], [2.0, 3.1, 3.9, 5.2])
    >>> round(c.diff, 3), c.hi < 0, c.deterministic
    (-1.05, True, False)
    """
    xa = np.asarray(a, dtype=float).ravel()
    xb = np.asarray(b, dtype=float).ravel()
    if xa.shape != xb.shape or xa.size == 0:
        raise ValueError(
            f"paired_comparison needs two non-empty score arrays of the same length; got "
            f"{xa.size} and {xb.size}."
        )
    d = xa - xb
    diff = float(d.mean())
    deterministic = xa.size >= 2 and np.ptp(xa) == 0 and np.ptp(xb) == 0
    if deterministic or xa.size == 1:
        lo = hi = diff
    else:
        lo, hi = stratified_bootstrap_ci(d, confidence=confidence, reps=reps, seed=seed)
    p = float("nan")
    if np.count_nonzero(d) >= 1 and not deterministic:
        from scipy.stats import wilcoxon

        p = float(wilcoxon(d, zero_method="wilcox").pvalue)
    return PairedComparison(
        int(xa.size), float(xa.mean()), float(xb.mean()), diff, lo, hi, p, bool(deterministic)
    )
