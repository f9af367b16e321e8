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

__all__ = [
    "LINESTYLES",
    "CONFIG_STYLES",
    "PALETTE",
    "RANDOM_COLOR",
    "RANDOM_STYLE",
    "Panel",
    "Series",
    "curves_svg",
    "entry_style",
    "profile_svg",
]

#: Entry colours, in the order entries get them: Tableau's 10 without its grey (the random
#: floor's), then 7 darker hues. Every pair is at least 27 apart in CIE L*a*b* (Delta E 1976;
#: a test checks it), so no two entries of a 16-entry table share a colour.
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
    "#0b2f6b",
    "#7a0b17",
    "#00542a",
    "#4b1a7a",
    "#b35806",
    "#000000",
    "#6b6b00",
)
#: Entry line styles (matplotlib dash specs), cycled with the colours: solid, dashed,
#: dotted, dash-dot. The darker hues start one style later than their light counterparts
#: (entry ``k`` and ``k + 9`` differ in style), so similar colours never share a style.
LINESTYLES: tuple[str | tuple[float, tuple[float, ...]], ...] = (
    "-",
    (0, (5.0, 2.0)),
    (0, (1.2, 1.6)),
    (0, (7.0, 2.0, 1.5, 2.0)),
)
#: A reference's configuration as a line style: its paper and tuned rows share the agent's
#: colour (hbo_envs.leaderboard.site.suite_data) and differ in dash.
CONFIG_STYLES: dict[str, str | tuple[float, tuple[float, ...]]] = {
    "paper": LINESTYLES[0],
    "tuned": LINESTYLES[1],
}
RANDOM_COLOR = "#7f7f7f"
#: The random floor: grey, thicker, dash-dot-dot (no entry uses it).
RANDOM_STYLE: tuple[float, tuple[float, ...]] = (0, (4.0, 1.5, 1.0, 1.5, 1.0, 1.5))


def entry_style(k: int) -> tuple[str, str | tuple[float, tuple[float, ...]]]:
    """Colour and line style of the ``k``-th entry (0-based, random floor excluded): the
    colour distinct for ``k < len(PALETTE)``, the (colour, style) pair for ``k < 64``.

    >>> entry_style(0), entry_style(1)[1], entry_style(16)[0] == entry_style(0)[0]
    (('#1f77b4', '-'), (0, (5.0, 2.0)), True)
    >>> entry_style(16)[1] != entry_style(0)[1]
    True
    """
    n, m = len(PALETTE), len(LINESTYLES)
    return PALETTE[k % n], LINESTYLES[(k + k // n) % m]


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
    linestyle: str | tuple[float, tuple[float, ...]] = "-"
    linewidth: float = 1.4


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
    ax.fill_between(s.x, s.lo, s.hi, color=s.color, alpha=0.12, linewidth=0)
    ax.plot(s.x, s.y, color=s.color, linewidth=s.linewidth, linestyle=s.linestyle, label=s.label)


#: Legend geometry, in points (font size 9): handle and gaps around each entry, the average
#: width of a character of DejaVu Sans, the height of one text line.
_LEGEND_FONT = 9.0
_HANDLE_PT = (2.4 + 0.6 + 1.0) * _LEGEND_FONT  # handlelength + handletextpad + columnspacing
_CHAR_PT = 5.3
_LINE_IN = 0.19


def _legend_layout(
    series: Sequence[Series], width_in: float, ncol: int
) -> tuple[list[str], int, float]:
    """Labels wrapped (at hyphens first) to the width a legend column has, the number of
    columns, and the height the legend needs (inches): labels are never cut by the figure's
    edge, whatever their length."""
    import textwrap

    ncol = max(1, min(ncol, len(series)))
    col_pt = (width_in * 72.0 - 12.0) / ncol - _HANDLE_PT
    chars = max(8, int(col_pt / _CHAR_PT))
    labels = [textwrap.fill(s.label, chars, break_on_hyphens=True) for s in series]
    nrows = (len(labels) + ncol - 1) // ncol  # matplotlib fills the columns first
    lines = sum(
        max(
            labels[c * nrows + r].count("\n") + 1
            for c in range(ncol)
            if c * nrows + r < len(labels)
        )
        for r in range(nrows)
    )
    return labels, ncol, 0.12 + _LINE_IN * lines


def _legend(fig: Figure, series: Sequence[Series], labels: Sequence[str], ncol: int) -> None:
    handles = [
        Line2D([], [], color=s.color, linewidth=s.linewidth + 0.4, linestyle=s.linestyle)
        for s in series
    ]
    fig.legend(
        handles,
        list(labels),
        loc="lower center",
        ncol=ncol,
        frameon=False,
        fontsize=_LEGEND_FONT,
        handlelength=2.4,
        handletextpad=0.6,
        columnspacing=1.0,
        borderaxespad=0.3,
    )


def curves_svg(
    panels: Sequence[Panel],
    *,
    title: str,
    xlabel: str = "round t",
    ylabel: str = "IQM of R_t",
    cols: int = 3,
    panel_size: tuple[float, float] = (3.6, 2.6),
    legend_cols: int = 4,
) -> str:
    """Small multiples (``cols`` per row) of IQM curves with CI bands and one shared legend
    (the series of the first panel, which every panel shares) in ``legend_cols`` columns."""
    with matplotlib.rc_context(_RC):
        cols = max(1, min(cols, len(panels)))
        rows = (len(panels) + cols - 1) // cols
        w, h = panel_size
        labels, ncol, legend_h = _legend_layout(panels[0].series, w * cols, legend_cols)
        title_h = 0.2 * (title.count("\n") + 1)
        fig = Figure(figsize=(w * cols, h * rows + 0.15 + title_h + legend_h))
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
        _legend(fig, panels[0].series, labels, ncol)
        fig.tight_layout(rect=(0, legend_h / fig.get_figheight(), 1, 1))
        return to_svg(fig)


def profile_svg(
    series: Sequence[Series],
    *,
    title: str,
    size: tuple[float, float] = (7.2, 3.4),
    legend_cols: int = 3,
) -> str:
    """Performance profiles: the fraction of runs with normalized score above τ, with bands
    (axes of ``size`` inches, the legend below in ``legend_cols`` columns)."""
    with matplotlib.rc_context(_RC):
        labels, ncol, legend_h = _legend_layout(series, size[0], legend_cols)
        fig = Figure(figsize=(size[0], size[1] + legend_h))
        ax = fig.subplots()
        for s in series:
            ax.fill_between(s.x, s.lo, s.hi, color=s.color, alpha=0.12, linewidth=0, step="post")
            ax.step(
                s.x,
                s.y,
                where="post",
                color=s.color,
                linewidth=s.linewidth,
                linestyle=s.linestyle,
            )
        ax.set_xlabel("normalized score τ  (0 = uniform play, 1 = zero regret)")
        ax.set_ylabel("fraction of runs with score > τ")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, color="#e5e5e5", linewidth=0.6)
        ax.set_title(title)
        _legend(fig, series, labels, ncol)
        fig.tight_layout(rect=(0, legend_h / fig.get_figheight(), 1, 1))
        return to_svg(fig)
