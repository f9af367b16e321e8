"""Aggregate statistics: pure functions over ``(runs x tasks)`` arrays (rliable's habit).

- :func:`iqm` — interquartile mean: the mean of the middle 50% of all scores, trimming
  ``floor(n / 4)`` scores from each end (``scipy.stats.trim_mean(x, 0.25)``, as rliable).
- :func:`stratified_bootstrap_ci` — percentile confidence interval of any statistic by the
  stratified bootstrap: every task (column) resamples its own runs with replacement, so
  each bootstrap sample keeps the same number of runs per task.

>>> iqm([1.0, 2.0, 3.0, 100.0])
2.5
>>> lo, hi = stratified_bootstrap_ci([3.0, 3.0, 3.0], np.mean)
>>> (lo, hi)
(3.0, 3.0)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["bootstrap_mean_band", "fit_exponent", "iqm", "stratified_bootstrap_ci"]


def iqm(scores: np.ndarray | list[float]) -> float:
    """Interquartile mean of all entries of ``scores`` (NaNs are an error)."""
    x = np.sort(np.asarray(scores, dtype=float).ravel())
    n = x.size
    if n == 0:
        return float("nan")
    if np.isnan(x).any():
        raise ValueError("iqm: scores contain NaN.")
    cut = n // 4
    return float(x[cut : n - cut].mean())


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
    replicates (linear interpolation). Deterministic for a given ``seed``.
    """
    x = _as_runs_by_tasks(scores)
    if not 0 < confidence < 1:
        raise ValueError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r}.")
    rng = np.random.default_rng(seed)
    runs, tasks = x.shape
    idx = rng.integers(runs, size=(reps, runs, tasks))
    cols = np.arange(tasks)[None, None, :]
    samples = x[idx, cols]  # (reps, runs, tasks)
    if statistic is np.mean:
        stats = samples.reshape(reps, -1).mean(axis=1)
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

    def slope(mean: np.ndarray) -> float:
        ok = mean > 0
        if np.count_nonzero(ok) < 2 or np.ptp(lx[ok]) == 0:
            return float("nan")
        return float(np.polyfit(lx[ok], np.log(mean[ok]), 1)[0])

    p = slope(Ys.mean(axis=0))
    if not np.isfinite(p):
        return (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    runs = Ys.shape[0]
    idx = rng.integers(runs, size=(reps, runs))
    boot = np.array([slope(Ys[i].mean(axis=0)) for i in idx])
    boot = boot[np.isfinite(boot)]
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a]) if boot.size else (np.nan, np.nan)
    return p, float(lo), float(hi)
