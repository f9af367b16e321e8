"""Figures from record tables (plotting only; everything it shows is computed elsewhere).

- :func:`plot_regret` — one panel column per env, titled with the paper panel it
  reproduces (``Park–Lee 2024, Fig. 1b``, from the env registry); top row the cumulative
  regret ``R_t``, bottom row the time-average regret ``R_t / t``, rounds from ``t = 1``;
  per agent the mean over seeds with a band that the legend names: ``band="ci"`` (default)
  the 95% bootstrap CI of the mean (:func:`hbo_envs.harness.stats.bootstrap_mean_band`),
  ``band="std"`` mean ± one standard deviation over seeds (what the papers' figures
  plot). The uniform-random floor (agent ``random``) is drawn in black, dashed; the env's
  lower-bound rate (dotted) where the records carry one.
- :func:`plot_confidence` — Chowdhury–Gopalan Fig. 1(f): per agent, ``f`` and the final
  confidence set ``estimate +- width`` averaged over seeds.

Figures are built with :class:`matplotlib.figure.Figure` (no pyplot, no GUI backend) and
saved in every requested format (``.png``, ``.svg``, ``.pdf``).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.figure import Figure

from hbo_envs.harness.records import ROUND_KEY, unique_rounds
from hbo_envs.harness.stats import bootstrap_mean_band

__all__ = ["panel_name", "plot_confidence", "plot_regret"]

_LABELS = {"regret": "cumulative regret $R_t$", "avg_regret": "time-average regret $R_t/t$"}
_BANDS = {
    "ci": "band: 95% bootstrap CI of the mean over seeds",
    "std": "band: mean ± 1 std over seeds (as the papers plot)",
}
RANDOM = "random"


def panel_name(env_id: str) -> str:
    """``"<paper panel>: <env>"`` from the env registry (just the env if it has none).

    >>> panel_name("hbo/Griewank2D-SymPareto-eps02-v0")
    'Park–Lee 2024, Fig. 1b: Griewank2D-SymPareto-eps02-v0'
    """
    from hbo_envs.registration import ENV_SPECS

    short = env_id.removeprefix("hbo/")
    paper = next((e.paper for e in ENV_SPECS if e.id == env_id), "")
    return f"{paper}: {short}" if paper else short


TITLE_CHARS = 58
"""Longest line of a panel title of :func:`plot_regret` (9 pt on a 4.2 in wide panel):
longer names (e.g. Han–Scarlett's "<paper>, <attack> attack (note §2, §4): <env>") are
wrapped, so that neighbouring titles do not run into each other."""


def _band(c: np.ndarray, band: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if band == "ci":
        return bootstrap_mean_band(c)
    mean, sd = c.mean(axis=0), c.std(axis=0, ddof=1) if c.shape[0] > 1 else np.zeros(c.shape[1])
    return mean, mean - sd, mean + sd


def _save(fig: Figure, paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    out = []
    for p in paths:
        p = Path(p)
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p, dpi=130, bbox_inches="tight")
        out.append(p)
    return out


def _curves(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """``(t, runs x t array)`` on the rounds every seed recorded.

    The seeds x rounds table of ``g.pivot_table(index="seed", columns="t", values=metric,
    aggfunc="first").dropna(axis=1)``, built with two ``np.unique`` calls when every
    ``(seed, t)`` has one value and none is NaN (the records a sweep writes): the same
    arrays at a fraction of pandas' cost (a figure with many panels called it hundreds of
    times). Anything else takes the pivot table itself. A ``(seed, t)`` recorded twice (the
    same cell twice, e.g. concatenated runs) is refused, never averaged or picked."""
    v = g[metric].to_numpy(dtype=float)
    seeds, si = np.unique(g["seed"].to_numpy(), return_inverse=True)
    ts, ti = np.unique(g["t"].to_numpy(), return_inverse=True)
    cell = si * ts.size + ti
    if np.unique(cell).size != cell.size:  # the same cell twice: raises, naming it
        unique_rounds(g.reindex(columns=list(ROUND_KEY), fill_value=""))
    if np.isnan(v).any():
        piv = g.pivot_table(index="seed", columns="t", values=metric, aggfunc="first")
        piv = piv.dropna(axis=1)
        return piv.columns.to_numpy(dtype=float), piv.to_numpy(dtype=float)
    table = np.full(seeds.size * ts.size, np.nan)
    table[cell] = v
    table = table.reshape(seeds.size, ts.size)
    full = ~np.isnan(table).any(axis=0)
    return ts[full].astype(float), table[:, full]


def plot_regret(
    records: pd.DataFrame,
    paths: Sequence[str | os.PathLike[str]],
    *,
    metrics: Sequence[str] = ("regret", "avg_regret"),
    title: str | None = None,
    envs: Sequence[str] | None = None,
    agents: Sequence[str] | None = None,
    logy_avg: bool = False,
    max_cols: int = 3,
    band: str = "ci",
) -> list[Path]:
    """Mean and a band (``band="ci"``: 95% bootstrap CI of the mean; ``"std"``: ± 1 std) of
    ``R_t`` and ``R_t/t`` over ``t``; per env a column of panels (one per metric), at most
    ``max_cols`` envs per row of the figure."""
    if records.empty:
        raise ValueError("plot_regret: the record table is empty (no finished cells).")
    if band not in _BANDS:
        raise ValueError(
            f"The 'band' parameter of plot_regret must be one of 'ci', 'std'. Got {band!r} instead."
        )
    envs = list(envs or dict.fromkeys(records["env_id"]))
    agents = list(agents or dict.fromkeys(records["agent"]))
    colors = {a: f"C{i % 10}" for i, a in enumerate(agents)}
    nm = len(metrics)
    ncol = min(len(envs), max_cols)
    env_rows = -(-len(envs) // ncol)
    fig = Figure(figsize=(4.2 * ncol + 0.4, 3.0 * nm * env_rows + 0.8), layout="constrained")
    axes = np.atleast_2d(fig.subplots(nm * env_rows, ncol, squeeze=False))
    for ax in axes.ravel()[len(envs) * nm :]:
        ax.set_visible(False)
    for k, env in enumerate(envs):
        ge = records[records["env_id"] == env]
        er, j = divmod(k, ncol)
        for i, metric in enumerate(metrics):
            ax = axes[er * nm + i, j]
            for a in agents:
                g = ge[ge["agent"] == a]
                if g.empty:
                    continue
                t, c = _curves(g, metric)
                mean, lo, hi = _band(c, band)
                floor = a == RANDOM
                color = "k" if floor else colors[a]
                label = f"{a}{' (floor)' if floor else ''} (n={c.shape[0]})"
                ax.plot(t, mean, color=color, lw=1.6, ls="--" if floor else "-", label=label)
                ax.fill_between(t, lo, hi, color=color, alpha=0.12 if floor else 0.2, lw=0)
            lb = ge.dropna(subset=["lower_bound"])
            if not lb.empty:
                lbt = lb.groupby("t")["lower_bound"].first()
                y = lbt.to_numpy() if metric == "regret" else lbt.to_numpy() / lbt.index
                ax.plot(lbt.index, y, "k:", lw=1.2, label="lower-bound rate")
            ax.set_xlabel("round t")
            ax.set_xlim(left=1)  # rounds are 1-based
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=True))
            ax.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))  # 20k, not 20000
            if j == 0:
                ax.set_ylabel(_LABELS.get(metric, metric))
            if i == 0 or nm * env_rows > nm:
                ax.set_title(
                    textwrap.fill(panel_name(env), TITLE_CHARS, break_on_hyphens=False),
                    fontsize=9,
                )
            if metric == "avg_regret" and logy_avg:
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
    handles: list = []
    labels: list[str] = []
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    handles.append(_band_patch())
    labels.append(_BANDS[band])
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4), fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    return _save(fig, paths)


def _band_patch() -> Any:
    """A grey legend patch for the band's meaning."""
    from matplotlib.patches import Patch

    return Patch(color="0.5", alpha=0.3, lw=0)


def plot_confidence(
    snapshots: pd.DataFrame,
    paths: Sequence[str | os.PathLike[str]],
    *,
    title: str | None = None,
    agents: Sequence[str] | None = None,
) -> list[Path]:
    """``f`` and the final ``estimate +- width`` (averaged over seeds): a row per env, a
    column per agent."""
    if snapshots is None or snapshots.empty:
        raise ValueError("plot_confidence: no posterior snapshots in the results.")
    agents = list(agents or dict.fromkeys(snapshots["agent"]))
    envs = list(dict.fromkeys(snapshots["env_id"]))
    fig = Figure(figsize=(4.6 * len(agents), 3.6 * len(envs)), layout="constrained")
    grid = fig.subplots(len(envs), len(agents), squeeze=False)
    for row, env_id in zip(grid, envs, strict=True):
        for ax, a in zip(row, agents, strict=True):
            g = snapshots[(snapshots["agent"] == a) & (snapshots["env_id"] == env_id)]
            if g.empty:
                ax.set_visible(False)
                continue
            m = g.groupby("point")[["x", "f", "estimate", "width"]].mean().sort_values("x")
            n = g["seed"].nunique()
            err = (g["estimate"] - g["f"]).abs()
            cover = float(np.mean(err <= g["width"]))
            max_err = float(err.groupby(g["seed"]).max().mean())
            ax.plot(m["x"], m["f"], "k-", lw=1.8, label="f")
            ax.plot(m["x"], m["estimate"], "C0-", lw=1.4, label="mean estimate $\\mu_T$")
            ax.fill_between(
                m["x"],
                m["estimate"] - m["width"],
                m["estimate"] + m["width"],
                color="C0",
                alpha=0.25,
                lw=0,
                label="$\\mu_T \\pm$ width",
            )
            ax.set_title(
                f"{env_id}\n{a}\n(n={n}, coverage {cover:.2f}, "
                f"mean over seeds of max|est - f| {max_err:.2f})",
                fontsize=9,
            )
            ax.set_xlabel("x")
            ax.grid(alpha=0.3)
    axes = grid.ravel()
    axes[0].legend(fontsize=8, loc="best")
    if title:
        fig.suptitle(title, fontsize=11)
    return _save(fig, paths)
