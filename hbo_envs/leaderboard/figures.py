"""Leaderboard figures drawn with matplotlib, written as deterministic SVG text.

Plotting only (the numbers come from :mod:`~hbo_envs.leaderboard.profiles`): a curve is a
:class:`Series` — an IQM line and its CI band — and a figure is one or more panels of them.
The SVG is reproducible byte for byte for a given matplotlib version: a fixed
``svg.hashsalt`` (element ids), no ``Date``/``Creator`` metadata, text kept as text
(``svg.fonttype = "none"``, so no glyph paths that depend on the font files found). No
pyplot: figures are :class:`matplotlib.figure.Figure` objects, so rendering needs no display
and leaves no global figure state behind.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.lines import Line2D

__all__ = ["PALETTE", "RANDOM_COLOR", "Panel", "Series", "curves_svg", "profile_svg"]

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#393b79",
)
RANDOM_COLOR = "#7f7f7f"

_RC = {
    "svg.hashsalt": "hbo-bench-leaderboard",
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": False,
}
_NO_AUTOLAYOUT = {"figure.autolayout": False, "figure.constrained_layout.use": False}


@dataclass(frozen=True)
class Series:
    """One line with its band: ``y`` (e.g. the IQM) and ``lo``/``hi`` (its CI) over ``x``."""

    label: str
    color: str
    x: np.ndarray
    y: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    dashed: bool = False


@dataclass(frozen=True)
class Panel:
    """One axes: a title and the series drawn in it."""

    title: str
    series: tuple[Series, ...]


def to_svg(fig: Figure) -> str:
    """The figure as SVG text, identical for identical inputs (see the module docstring).

    ``Figure.tight_layout`` leaves a placeholder layout engine on the figure, and
    ``savefig`` runs a full draw (rendering disabled) before the real one for any figure
    with an engine: a second pass over every tick and text, for nothing once the layout
    is done. The placeholder is removed first, so the figure is drawn once (the same
    bytes: the layout was fixed by ``tight_layout``)."""
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        # None: no engine at all ("none" would set a new placeholder), whatever the rc says
        with matplotlib.rc_context(_NO_AUTOLAYOUT):
            fig.set_layout_engine(None)
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def _draw(ax: Axes, s: Series) -> None:
    ax.fill_between(s.x, s.lo, s.hi, color=s.color, alpha=0.15, linewidth=0)
    ax.plot(
        s.x, s.y, color=s.color, linewidth=1.4, linestyle="--" if s.dashed else "-", label=s.label
    )


def _legend(fig: Figure, series: Sequence[Series], ncol: int) -> None:
    handles = [
        Line2D([], [], color=s.color, linewidth=2, linestyle="--" if s.dashed else "-")
        for s in series
    ]
    fig.legend(
        handles,
        [s.label for s in series],
        loc="lower center",
        ncol=ncol,
        frameon=False,
        fontsize=9,
    )


def curves_svg(
    panels: Sequence[Panel],
    *,
    title: str,
    xlabel: str = "round t",
    ylabel: str = "IQM of R_t",
    cols: int = 3,
    panel_size: tuple[float, float] = (3.6, 2.6),
) -> str:
    """Small multiples (``cols`` per row) of IQM curves with CI bands and one shared legend
    (the series of the first panel, which every panel shares)."""
    with matplotlib.rc_context(_RC):
        cols = max(1, min(cols, len(panels)))
        rows = (len(panels) + cols - 1) // cols
        legend_rows = (len(panels[0].series) + 3) // 4
        w, h = panel_size
        fig = Figure(figsize=(w * cols, h * rows + 0.35 + 0.25 * legend_rows))
        axes = fig.subplots(rows, cols, squeeze=False)
        for k, ax in enumerate(axes.ravel()):
            if k >= len(panels):
                ax.set_visible(False)
                continue
            p = panels[k]
            for s in p.series:
                _draw(ax, s)
            ax.set_title(p.title)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(True, color="#e5e5e5", linewidth=0.6)
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=min(0.0, float(min(np.min(s.lo) for s in p.series))))
        fig.suptitle(title, fontsize=10)
        _legend(fig, panels[0].series, ncol=min(4, len(panels[0].series)))
        bottom = (0.3 + 0.25 * legend_rows) / fig.get_figheight()
        fig.tight_layout(rect=(0, bottom, 1, 1))
        return to_svg(fig)


def profile_svg(series: Sequence[Series], *, title: str) -> str:
    """Performance profiles: the fraction of runs with normalized score above τ, with bands."""
    with matplotlib.rc_context(_RC):
        legend_rows = (len(series) + 3) // 4
        fig = Figure(figsize=(7.2, 3.4 + 0.25 * legend_rows))
        ax = fig.subplots()
        for s in series:
            ax.fill_between(s.x, s.lo, s.hi, color=s.color, alpha=0.15, linewidth=0, step="post")
            ax.step(
                s.x,
                s.y,
                where="post",
                color=s.color,
                linewidth=1.4,
                linestyle="--" if s.dashed else "-",
            )
        ax.set_xlabel("normalized score τ  (0 = uniform play, 1 = zero regret)")
        ax.set_ylabel("fraction of runs with score > τ")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, color="#e5e5e5", linewidth=0.6)
        ax.set_title(title)
        _legend(fig, series, ncol=min(4, len(series)))
        fig.tight_layout(rect=(0, (0.3 + 0.25 * legend_rows) / fig.get_figheight(), 1, 1))
        return to_svg(fig)
