"""Aggregates beyond one score: IQM curves with CI bands, performance profiles and the
probability of improvement — pure functions over ``(runs x tasks)`` arrays.

The definitions are rliable's (Agarwal et al., "Deep Reinforcement Learning at the Edge of
the Statistical Precipice", NeurIPS 2021, Sec. 4 and Appendix A); rliable itself is not used
because it does not import next to this project's pins (``rliable`` 1.2 needs ``arch``, whose
7.2 release fails at import under pandas 3: ``deprecate_kwarg() missing 1 required positional
argument``). Higher scores are better here, as in rliable; pass ``-R_T`` or the normalized
score ``1 - R_T / IQM(random)`` (:func:`normalized_run_scores`) for regrets.

- :func:`iqm_band` — per time step, the IQM over runs of a curve and its percentile CI from
  the stratified bootstrap; one resampled set of runs serves every time step, so column ``k``
  is exactly :func:`~hbo_envs.harness.stats.stratified_bootstrap_ci` of ``curves[:, k]``.
- :func:`score_distribution` — the run-score distribution (rliable's performance profile),
  ``F(τ) = 1/(N M) Σ_m Σ_n 1[x_{n,m} > τ]`` for ``N`` runs on each of ``M`` tasks.
- :func:`probability_of_improvement` — ``P(X > Y) = 1/M Σ_m 1/(N K) Σ_i Σ_j S(x_{i,m},
  y_{j,m})`` with ``S(a, b) = 1`` if ``a > b``, ``1/2`` if ``a = b``, else 0 (the
  Mann–Whitney U statistic over ``N K`` per task, averaged over tasks).

>>> probability_of_improvement([[2.0], [3.0]], [[1.0], [3.0]])
0.625
>>> score_distribution([[0.1, 0.5], [0.9, 0.2]], [0.0, 0.3])
array([1. , 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hbo_envs.harness.stats import _as_runs_by_tasks, iqm_rows
from hbo_envs.validation import check_int, check_real

__all__ = [
    "iqm_band",
    "normalized_run_scores",
    "probability_of_improvement",
    "probability_of_improvement_ci",
    "score_distribution",
    "score_distribution_band",
]


#: Replicate values per block of time steps in :func:`iqm_band` (8 MB of float64).
_BAND_BLOCK = 1 << 20


def _check_boot(owner: str, confidence: float, reps: int) -> None:
    check_real(owner, "confidence", confidence, low=0.0, high=1.0, closed="neither")
    check_int(owner, "reps", reps, low=1)


def iqm_band(
    curves: np.ndarray | Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IQM over runs of ``curves`` (runs x time) and its stratified-bootstrap CI band.

    Each replicate resamples whole runs (a curve is one run) with replacement, drawn as
    ``rng.integers(runs, size=(reps, runs, 1))`` — the draw
    :func:`~hbo_envs.harness.stats.stratified_bootstrap_ci` makes for one task — so the band
    at every time step equals that function's CI of the IQM at that step, and the band of a
    cumulative quantity is coherent over time. Returns ``(iqm, lo, hi)``, each ``(time,)``.
    """
    _check_boot("iqm_band", confidence, reps)
    c = np.asarray(curves, dtype=float)
    if c.ndim != 2 or c.shape[0] == 0 or not np.isfinite(c).all():
        raise ValueError(
            f"The 'curves' parameter of iqm_band must be a finite (runs, time) array with at "
            f"least one run. Got shape {c.shape} instead."
        )
    rng = np.random.default_rng(seed)
    runs, T = c.shape
    idx = rng.integers(runs, size=(reps, runs, 1))[:, :, 0]
    # The replicates as (time, reps, runs), C-contiguous (np.take; a fancy index along
    # axis 1 would leave time the fastest axis and a sort along runs strided): iqm_rows
    # (the IQM of harness.stats) sorts them in place and averages along the last axis,
    # a block of time steps at a time so the replicates stay within ~8 MB
    cT = np.ascontiguousarray(c.T)
    boot = np.empty((T, reps))
    step = max(1, _BAND_BLOCK // (reps * runs))
    for t0 in range(0, T, step):
        block = np.take(cT[t0 : t0 + step], idx, axis=1)
        boot[t0 : t0 + step] = iqm_rows(block, overwrite=True)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a], axis=1)
    return iqm_rows(c.T), lo, hi


def normalized_run_scores(
    runs_by_env: np.ndarray | Sequence[Sequence[float]], random_iqm: Sequence[float]
) -> np.ndarray:
    """Per run and env ``1 - R_T / IQM_e(random)`` — the leaderboard's normalized score
    (:mod:`hbo_envs.leaderboard.aggregate`) before it is averaged: 0 is uniform play, 1 zero
    regret. ``runs_by_env`` is ``(seeds, envs)``; ``random_iqm`` the reference per env."""
    x = _as_runs_by_tasks(runs_by_env)
    ref = np.asarray(random_iqm, dtype=float)
    if ref.shape != (x.shape[1],) or not (np.isfinite(ref).all() and (ref > 0).all()):
        raise ValueError(
            f"The 'random_iqm' parameter of normalized_run_scores must hold {x.shape[1]} "
            f"positive finite values (one per env). Got {ref.tolist()!r} instead."
        )
    return 1.0 - x / ref[None, :]


def score_distribution(
    scores: np.ndarray | Sequence[Sequence[float]], taus: np.ndarray | Sequence[float]
) -> np.ndarray:
    """rliable's run-score distribution: the fraction of all ``(run, task)`` scores above
    each threshold, ``F(τ) = mean 1[x > τ]`` (Agarwal et al. 2021, Eq. (A.1))."""
    x = _as_runs_by_tasks(scores)
    t = np.asarray(taus, dtype=float).ravel()
    return (x.reshape(-1)[None, :] > t[:, None]).mean(axis=1)


def score_distribution_band(
    scores: np.ndarray | Sequence[Sequence[float]],
    taus: np.ndarray | Sequence[float],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`score_distribution` and its stratified-bootstrap CI band (each task resamples
    its own runs; the same replicates serve every threshold). Returns ``(F, lo, hi)``."""
    _check_boot("score_distribution_band", confidence, reps)
    x = _as_runs_by_tasks(scores)
    t = np.asarray(taus, dtype=float).ravel()
    rng = np.random.default_rng(seed)
    runs, tasks = x.shape
    idx = rng.integers(runs, size=(reps, runs, tasks))
    # Replicate r holds run j of task m c[r, j, m] times, so its fraction above tau is
    # sum_jm c[r, j, m] 1[x_jm > tau] / (runs tasks): one product instead of comparing
    # reps x taus x runs x tasks values. The sums are integers, exact in floating point, so
    # the fractions are those of the direct count (np.mean of the booleans) bit for bit.
    c = _draw_counts(np.swapaxes(idx, 1, 2), runs)  # (reps, tasks, runs)
    above = (x.T[:, :, None] > t[None, None, :]).reshape(tasks * runs, -1)
    boot = (c.reshape(reps, -1) @ above) / (runs * tasks)  # (reps, taus)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    return score_distribution(x, t), lo, hi


def _draw_counts(idx: np.ndarray, size: int) -> np.ndarray:
    """How many times each of ``size`` items is drawn in every row of ``idx`` (the last
    axis): an array of the shape of ``idx`` with its last axis ``size`` long, as floats."""
    rows = idx.reshape(-1, idx.shape[-1])
    flat = (np.arange(rows.shape[0])[:, None] * size + rows).ravel()
    counts = np.bincount(flat, minlength=rows.shape[0] * size)
    return counts.reshape(*idx.shape[:-1], size).astype(float)


def _pair_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``S(x_i, y_j)`` per task: ``(tasks, N, K)`` of 1, 1/2, 0."""
    a, b = x.T[:, :, None], y.T[:, None, :]
    return (a > b) + 0.5 * (a == b)


def _check_pair(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            "The 'scores_y' parameter of probability_of_improvement must have as many tasks "
            f"(columns) as scores_x ({x.shape[1]}). Got {y.shape[1]} instead."
        )


def probability_of_improvement(
    scores_x: np.ndarray | Sequence[Sequence[float]],
    scores_y: np.ndarray | Sequence[Sequence[float]],
) -> float:
    """``P(X > Y)``: per task the probability that a run of X scores above a run of Y (ties
    count 1/2), averaged over tasks (Agarwal et al. 2021, Sec. 4.3; rliable's
    ``metrics.probability_of_improvement``). Runs of X and Y are not paired."""
    x, y = _as_runs_by_tasks(scores_x), _as_runs_by_tasks(scores_y)
    _check_pair(x, y)
    return float(_pair_matrix(x, y).mean(axis=(1, 2)).mean())


def probability_of_improvement_ci(
    scores_x: np.ndarray | Sequence[Sequence[float]],
    scores_y: np.ndarray | Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """:func:`probability_of_improvement` and its percentile CI by the stratified bootstrap:
    every replicate resamples, per task, the runs of X and (independently) of Y."""
    _check_boot("probability_of_improvement_ci", confidence, reps)
    x, y = _as_runs_by_tasks(scores_x), _as_runs_by_tasks(scores_y)
    _check_pair(x, y)
    s = _pair_matrix(x, y)  # (tasks, N, K)
    tasks, n, k = s.shape
    rng = np.random.default_rng(seed)
    ix = rng.integers(n, size=(reps, tasks, n))
    iy = rng.integers(k, size=(reps, tasks, k))
    # A replicate's mean of S over its resampled pairs is cx^T S cy / (N K) with cx, cy the
    # times each run was drawn; S is 0, 1/2 or 1 and the counts integers, so the sums are
    # exact and the means those of the N x K gathered values bit for bit, without them.
    pair_sums = np.einsum("rtn,tnk,rtk->rt", _draw_counts(ix, n), s, _draw_counts(iy, k))
    boot = (pair_sums / (n * k)).mean(axis=1)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return float(s.mean(axis=(1, 2)).mean()), float(lo), float(hi)
