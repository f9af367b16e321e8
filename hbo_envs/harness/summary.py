"""The per ``env x agent`` summary of a record table, and its text rendering.

Columns (:data:`hbo_envs.harness.records.SUMMARY_COLUMNS`): ``n`` finished seeds,
``failed`` failed cells, ``T`` the horizon; for the final cumulative regret ``R_T`` and the
time-average regret ``avg_R_T = R_T / T`` across seeds: ``mean``, ``std`` (ddof=1),
``median``, ``iqm`` and the 95% stratified-bootstrap CI of the mean (``ci_low``,
``ci_high``; 2000 replicates, fixed seed, so a summary is reproducible); ``coverage_T``
the mean confidence coverage at ``T`` (NaN for agents without ``posterior()``);
``time_per_round_s`` the mean wall time per round, ``time_per_cell_s`` /
``time_per_cell_std_s`` the mean and std of a cell's loop time (as in Park–Lee Table 1).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from hbo_envs.harness.records import SUMMARY_COLUMNS, unique_rounds
from hbo_envs.harness.stats import iqm, stratified_bootstrap_ci

__all__ = ["final_rows", "format_ordering", "format_table", "summarize"]


def final_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The last recorded round (``t = T``) of every ``(env_id, agent, seed)``.

    The index of ``records`` is ignored (concatenated frames repeat labels); a cell that
    occurs twice is an error (:func:`~hbo_envs.harness.records.unique_rounds`)."""
    records = unique_rounds(records)
    if records.empty:
        return records
    pos = records.groupby(["env_id", "agent", "seed"], sort=True)["t"].idxmax()
    return records.iloc[pos.to_numpy()].reset_index(drop=True)


def _stats(prefix: str, x: np.ndarray) -> dict[str, float]:
    lo, hi = stratified_bootstrap_ci(x) if x.size else (np.nan, np.nan)
    return {
        f"{prefix}_mean": float(np.mean(x)) if x.size else np.nan,
        f"{prefix}_std": float(np.std(x, ddof=1)) if x.size > 1 else np.nan,
        f"{prefix}_median": float(np.median(x)) if x.size else np.nan,
        f"{prefix}_iqm": iqm(x) if x.size else np.nan,
        f"{prefix}_ci_low": lo,
        f"{prefix}_ci_high": hi,
    }


def summarize(
    records: pd.DataFrame, failed: Mapping[tuple[str, str], int] | None = None
) -> pd.DataFrame:
    """One row per ``(env_id, agent)``; ``failed`` counts failed cells per pair.

    Each seed counts once: ``records`` that hold a cell twice (``pd.concat`` of two runs of
    the same seeds) are refused, and their index is ignored (:func:`final_rows`)."""
    failed = dict(failed or {})
    fin = final_rows(records)
    bad = fin[~np.isfinite(fin["regret"].to_numpy(dtype=float))] if not fin.empty else fin
    if not bad.empty:
        names = [f"{r.env_id}__{r.agent}__{r.seed}" for r in bad.itertuples()]
        raise ValueError(
            f"{len(names)} cell(s) have a non-finite final regret, so no statistic over "
            f"seeds can be computed: {', '.join(names[:5])}"
            + (" ..." if len(names) > 5 else "")
            + ". Their record files are corrupt or were edited; delete those cells' files "
            "in <out>/cells/ and rerun the same command to recompute them."
        )
    rows = []
    keys = sorted(
        set(map(tuple, fin[["env_id", "agent"]].drop_duplicates().to_numpy().tolist()))
        | set(failed)
    )
    for env_id, agent in keys:
        g = fin[(fin["env_id"] == env_id) & (fin["agent"] == agent)]
        T = g["t"].to_numpy()
        R = g["regret"].to_numpy(dtype=float)
        wall = g["wall_time"].to_numpy(dtype=float)
        cov = g["coverage"].to_numpy(dtype=float)
        row = {
            "env_id": env_id,
            "agent": agent,
            "n": int(len(g)),
            "failed": int(failed.get((env_id, agent), 0)),
            "T": int(T.max()) if T.size else 0,
            **_stats("R_T", R),
            **_stats("avg_R_T", R / T if T.size else R),
            "coverage_T": float(np.nanmean(cov)) if np.isfinite(cov).any() else np.nan,
            "time_per_round_s": float(np.mean(wall / T)) if T.size else np.nan,
            "time_per_cell_s": float(np.mean(wall)) if T.size else np.nan,
            "time_per_cell_std_s": float(np.std(wall, ddof=1)) if T.size > 1 else np.nan,
        }
        rows.append(row)
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def format_table(summary: pd.DataFrame, *, runtime: bool = False) -> str:
    """A plain-text regret table (or a runtime table, Park–Lee Table 1 style)."""
    if summary.empty:
        return "(no finished cells)"
    if runtime:
        piv = summary.assign(
            cell=[
                f"{m:.2f}s (± {s:.2f})" if np.isfinite(s) else f"{m:.2f}s"
                for m, s in zip(
                    summary["time_per_cell_s"], summary["time_per_cell_std_s"], strict=True
                )
            ]
        ).pivot(index="env_id", columns="agent", values="cell")
        return piv.fillna("-").to_string()
    df = pd.DataFrame(
        {
            "env": summary["env_id"],
            "agent": summary["agent"],
            "n": summary["n"].astype(str)
            + np.where(summary["failed"] > 0, "+" + summary["failed"].astype(str) + "F", ""),
            "T": summary["T"],
            "R_T mean [95% CI]": [
                f"{m:.1f} [{lo:.1f}, {hi:.1f}]"
                for m, lo, hi in zip(
                    summary["R_T_mean"], summary["R_T_ci_low"], summary["R_T_ci_high"], strict=True
                )
            ],
            "R_T IQM": summary["R_T_iqm"].map(lambda v: f"{v:.1f}"),
            "R_T/T mean ± std": [
                f"{m:.4f} ± {s:.4f}" if np.isfinite(s) else f"{m:.4f}"
                for m, s in zip(summary["avg_R_T_mean"], summary["avg_R_T_std"], strict=True)
            ],
            "coverage_T": summary["coverage_T"].map(
                lambda v: "-" if not np.isfinite(v) else f"{v:.2f}"
            ),
            "µs/round": (summary["time_per_round_s"] * 1e6).map(lambda v: f"{v:.1f}"),
        }
    )
    return df.to_string(index=False)


def format_ordering(summary: pd.DataFrame) -> str:
    """Per env, the agents from lowest to highest mean ``R_T``.

    ``<`` separates agents whose 95% bootstrap CIs of the mean do not overlap, ``~``
    agents whose CIs overlap (not distinguishable at this number of seeds):
    ``gp-ucb < ca-tgp-ucb < tgp-ucb ~ mom-gp-ucb``.
    """
    lines = []
    for env_id, g in summary[summary["n"] > 0].groupby("env_id", sort=False):
        g = g.sort_values("R_T_mean")
        parts = [str(g["agent"].iloc[0])]
        for prev, cur in zip(g.iloc[:-1].itertuples(), g.iloc[1:].itertuples(), strict=True):
            sep = "<" if cur.R_T_ci_low > prev.R_T_ci_high else "~"
            parts.append(f"{sep} {cur.agent}")
        lines.append(f"{env_id}: " + " ".join(parts))
    return "\n".join(lines)
