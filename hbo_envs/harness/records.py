"""The tidy per-round record table: its schema and its down-sampling for long horizons.

One row per ``(env_id, agent, seed, t)`` with ``t`` in the *record grid* of the cell:

======================  =======  ================================================================
column                  dtype    meaning
======================  =======  ================================================================
``env_id``              str      registered env id
``agent``               str      agent label (see :mod:`hbo_envs.harness.specs`)
``seed``                int      cell seed (env seed; the agent's seed is derived from it)
``t``                   int      rounds played so far, ``1 .. T``
``regret``              float    cumulative regret ``R_t = sum_{s<=t} (f* - f(x_s))``
``avg_regret``          float    time-average regret ``R_t / t``
``coverage``            float    fraction of points with ``|estimate - f| <= width`` after
                                 round ``t`` (agents with ``posterior()``, at the coverage
                                 checkpoints only; NaN elsewhere)
``coverage_sigma``      float    the same for the band ``estimate +- sigma`` with ``sigma`` the
                                 agent's optional ``posterior_sd()`` (Chowdhury–Gopalan Fig. 1f
                                 plots ``mu_T +- sigma_T``); NaN without it
``altered``             float    share of the rewards received by round ``t`` that the agent's
                                 robust estimator altered (truncated, or dropped by a
                                 median), from its optional ``diagnostics()``
                                 (:mod:`agents.protocol`), at the coverage checkpoints and
                                 ``T``; NaN elsewhere, for agents without it, and in
                                 tables written before the column existed
``corruption_used``     float    the env's running corruption budget used
``wall_time``           float    seconds since the cell started (agent + env + bookkeeping,
                                 excluding the coverage diagnostic; a batched cell: its
                                 share, the batch's divided by its runs)
``agent_time``          float    seconds spent inside the agent's ``reset/act/update``
                                 (a batched cell: its share of the batch's)
``lower_bound``         float    the env's regret lower-bound rate at ``t`` when it provides
                                 one (``env.unwrapped.regret_lower_bound(t)``), else NaN
======================  =======  ================================================================

Down-sampling (:func:`record_grid`). A cell with horizon ``T <= 2 * resolution + 100``
records every round. Longer cells record the union of: every round up to 100; ``resolution``
rounds evenly spaced on ``[1, T]``; ``resolution`` rounds log-spaced on ``[1, T]``; the
coverage checkpoints; and ``T`` itself. Cumulative quantities are exact at every recorded
round (they are accumulated every round, only the *rows* are thinned), so the final
round ``R_T`` is always exact and both linear- and log-axis plots are smooth. With the
default ``resolution = 200`` a cell has at most ~500 rows whatever ``T``.

Coverage checkpoints (:func:`coverage_grid`): ``k`` rounds log-spaced on ``[1, T]``
(rounded, de-duplicated) plus ``T``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "OPTIONAL_COLUMNS",
    "ROUND_KEY",
    "SUMMARY_COLUMNS",
    "coverage_grid",
    "empty_records",
    "record_grid",
    "unique_rounds",
]

COLUMNS: dict[str, str] = {
    "env_id": "string",
    "agent": "string",
    "seed": "int64",
    "t": "int64",
    "regret": "float64",
    "avg_regret": "float64",
    "coverage": "float64",
    "coverage_sigma": "float64",
    "altered": "float64",
    "corruption_used": "float64",
    "wall_time": "float64",
    "agent_time": "float64",
    "lower_bound": "float64",
}

#: Columns of the per ``env x agent`` summary (see :mod:`hbo_envs.harness.summary`).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "env_id",
    "agent",
    "n",
    "failed",
    "T",
    "R_T_mean",
    "R_T_std",
    "R_T_median",
    "R_T_iqm",
    "R_T_ci_low",
    "R_T_ci_high",
    "avg_R_T_mean",
    "avg_R_T_std",
    "avg_R_T_median",
    "avg_R_T_iqm",
    "avg_R_T_ci_low",
    "avg_R_T_ci_high",
    "coverage_T",
    "time_per_round_s",
    "time_per_cell_s",
    "time_per_cell_std_s",
)

_DENSE_HEAD = 100


def coverage_grid(horizon: int, k: int) -> np.ndarray:
    """``k`` log-spaced rounds in ``[1, horizon]`` plus ``horizon`` (sorted, unique)."""
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    g = np.unique(np.rint(np.geomspace(1, horizon, num=k)).astype(np.int64))
    return np.union1d(g, [horizon]).astype(np.int64)


def record_grid(horizon: int, resolution: int = 200, extra: np.ndarray | None = None) -> np.ndarray:
    """Rounds at which a cell of horizon ``horizon`` records a row (sorted, unique, 1-based).

    Always contains ``horizon``. See the module docstring for the scheme.
    """
    T = int(horizon)
    if T <= 2 * resolution + _DENSE_HEAD:
        return np.arange(1, T + 1, dtype=np.int64)
    parts = [
        np.arange(1, _DENSE_HEAD + 1),
        np.rint(np.linspace(1, T, num=resolution)),
        np.rint(np.geomspace(1, T, num=resolution)),
        [T],
    ]
    if extra is not None:
        parts.append(np.asarray(extra))
    g = np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]))
    return g[(g >= 1) & (g <= T)]


def empty_records() -> pd.DataFrame:
    """An empty record table with the documented columns and dtypes."""
    return pd.DataFrame({c: pd.Series(dtype=d) for c, d in COLUMNS.items()})


#: Columns added after tables were first written: a table without one reads it as NaN.
OPTIONAL_COLUMNS: tuple[str, ...] = ("coverage_sigma", "altered")


def coerce(df: pd.DataFrame) -> pd.DataFrame:
    """Order columns and set the documented dtypes (a missing :data:`OPTIONAL_COLUMNS`
    entry, from a table written before it existed, is NaN)."""
    missing = [c for c in OPTIONAL_COLUMNS if c not in df.columns]
    if missing:
        df = df.assign(**{c: np.nan for c in missing})
    return df[list(COLUMNS)].astype(COLUMNS)


#: The columns that name one recorded round of one cell (one row of a record table).
ROUND_KEY = ("env_id", "agent", "seed", "t")


def unique_rounds(records: pd.DataFrame, what: str = "the records") -> pd.DataFrame:
    """``records`` with a fresh ``0 .. n-1`` index, once no round of a cell occurs twice.

    A record table's index carries nothing (``pd.concat`` keeps its frames' indexes, so
    its labels repeat), so it is dropped: every aggregate works on positions. A repeated
    :data:`ROUND_KEY` is the same cell twice, e.g. ``pd.concat([a, b])`` of two runs of
    the same seeds; no statistic over seeds may count it once per copy, so it is a clear
    error naming the cells (keep one copy, or give the other run's agents other labels).

    >>> df = pd.DataFrame({"env_id": "e", "agent": "a", "seed": [0, 1], "t": 5})
    >>> unique_rounds(pd.concat([df, df.assign(seed=[2, 3])])).index.tolist()
    [0, 1, 2, 3]
    >>> unique_rounds(pd.concat([df, df]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the records hold 2 cell(s) more than once (env e, agent a, seed 0; ...
    """
    missing = [c for c in ROUND_KEY if c not in records.columns]
    if missing:
        raise ValueError(
            f"{what} lack the column(s) {missing}; a record table has "
            f"{list(ROUND_KEY)} (hbo_envs.harness.records.COLUMNS)."
        )
    records = records.reset_index(drop=True)
    dup = records.duplicated(list(ROUND_KEY), keep=False).to_numpy()
    if dup.any():
        cells = records.loc[dup, ["env_id", "agent", "seed"]].drop_duplicates()
        names = [f"env {e}, agent {a}, seed {s}" for e, a, s in cells.itertuples(index=False)]
        raise ValueError(
            f"{what} hold {len(names)} cell(s) more than once ({'; '.join(names[:3])}"
            + ("; ..." if len(names) > 3 else "")
            + f"): the same (env_id, agent, seed, t) in {int(dup.sum())} rows, e.g. from "
            "pd.concat of two runs of the same seeds. Each seed must count once: keep one "
            f"copy (records.drop_duplicates({list(ROUND_KEY)})) or give one run's agents "
            "other labels."
        )
    return records
