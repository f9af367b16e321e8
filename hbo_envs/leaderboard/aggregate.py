"""Aggregates of a leaderboard: across seeds (per env) and across envs (per submission).

Across seeds (stored in a submission, recomputed by validation), for every env with
``R_T^{(s)}`` the final cumulative regret of seed ``s``:

- ``iqm``: the interquartile mean of ``R_T`` (:func:`hbo_envs.harness.stats.iqm`),
- ``ci_low``/``ci_high``: its percentile CI by the stratified bootstrap
  (:func:`hbo_envs.harness.stats.stratified_bootstrap_ci`, the suite's confidence, reps
  and seed, so the numbers are reproducible to the last digit),
- ``mean``, ``median``, ``avg_iqm`` (IQM of ``R_T / T``), ``n``.

Across envs (computed when a table is rendered, because they compare submissions):

- **normalized score** of env ``e``: ``1 - IQM_e(agent) / IQM_e(random)``, where
  ``IQM_e(random)`` is the IQM of the suite's verified ``random`` baseline. Uniform play
  scores 0, the best possible agent (zero regret: it plays the optimum every round)
  scores 1, worse than uniform is negative. The **score** of a submission is the mean over
  envs; its CI is the stratified bootstrap of that mean (each env resamples its own seeds;
  the random reference is held fixed).
- **mean rank**: the agent's rank by ``IQM_e`` among the table's submissions on each env
  (1 = lowest regret, ties share the average rank), averaged over envs.

>>> a = per_env_aggregate([1.0, 2.0, 3.0, 4.0], horizon=10, reps=200)
>>> a["iqm"], a["mean"], a["avg_iqm"]
(2.5, 2.5, 0.25)
>>> normalized_scores({"e": 25.0}, {"e": 100.0})
{'e': 0.75}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import rankdata

from hbo_envs.harness.stats import iqm, iqm_rows, stratified_bootstrap_ci

__all__ = [
    "mean_ranks",
    "normalized_scores",
    "per_env_aggregate",
    "score_with_ci",
]


def per_env_aggregate(
    final_regrets: Sequence[float],
    *,
    horizon: int,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """IQM of ``R_T`` over seeds with its stratified-bootstrap CI, and companions."""
    x = np.asarray(final_regrets, dtype=float)
    lo, hi = stratified_bootstrap_ci(x, iqm, confidence=confidence, reps=reps, seed=seed)
    return {
        "n": int(x.size),
        "iqm": iqm(x),
        "ci_low": lo,
        "ci_high": hi,
        "mean": float(x.mean()),
        "median": float(np.median(x)),
        "avg_iqm": iqm(x / float(horizon)),
    }


def normalized_scores(
    agent_iqm: Mapping[str, float], random_iqm: Mapping[str, float]
) -> dict[str, float]:
    """Per env ``1 - IQM(agent) / IQM(random)`` (NaN where the reference is missing or 0)."""
    out = {}
    for e, v in agent_iqm.items():
        ref = random_iqm.get(e, float("nan"))
        out[e] = float(1.0 - v / ref) if np.isfinite(ref) and ref > 0 else float("nan")
    return out


def score_with_ci(
    runs_by_env: np.ndarray,
    random_iqm: Sequence[float],
    *,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean normalized score over envs and its stratified-bootstrap CI.

    ``runs_by_env`` is the ``(seeds, envs)`` array of ``R_T``; ``random_iqm`` the random
    reference per env (same order).
    """
    x = np.asarray(runs_by_env, dtype=float)
    ref = np.asarray(random_iqm, dtype=float)
    if x.ndim != 2 or x.shape[1] != ref.size:
        raise ValueError(
            f"runs_by_env must be (seeds, {ref.size}) to match random_iqm; got {x.shape}."
        )

    def stat(s: np.ndarray) -> float:
        return float(np.mean([1.0 - iqm(s[:, j]) / ref[j] for j in range(ref.size)]))

    def every_replicate(samples: np.ndarray) -> np.ndarray:
        # stat() of each (runs, envs) replicate: iqm per env along a contiguous runs axis,
        # then the mean over envs along a contiguous axis (the same sums as stat's)
        iq = iqm_rows(np.array(np.swapaxes(samples, 1, 2), order="C"), overwrite=True)
        return np.ascontiguousarray(1.0 - iq / ref[None, :]).mean(axis=1)

    stat.batched = every_replicate  # type: ignore[attr-defined]
    lo, hi = stratified_bootstrap_ci(x, stat, confidence=confidence, reps=reps, seed=seed)
    return stat(x), lo, hi


def mean_ranks(iqms: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """``{submission: {env: IQM}}`` -> mean over envs of the rank by IQM (1 = best)."""
    subs = list(iqms)
    envs = sorted({e for v in iqms.values() for e in v})
    if not subs or not envs:
        return {s: float("nan") for s in subs}
    ranks = np.zeros((len(subs), len(envs)))
    for j, e in enumerate(envs):
        col = np.array([iqms[s].get(e, np.inf) for s in subs], dtype=float)
        ranks[:, j] = rankdata(col, method="average")
    return {s: float(ranks[i].mean()) for i, s in enumerate(subs)}
