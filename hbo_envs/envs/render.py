"""Pictures and text of a bandit episode: the ``"ansi"`` and ``"rgb_array"`` render modes.

:meth:`hbo_envs.envs.GPBanditEnv.render` calls these. Figures are drawn with matplotlib's
Agg canvas directly (no ``pyplot``: no global figure state, safe in any thread or worker)
and returned as Gymnasium's ``(H, W, 3)`` ``uint8`` array.

>>> import gymnasium as gym, hbo_envs
>>> env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=3, render_mode="ansi")
>>> _ = env.reset(seed=0)
>>> _ = env.step(10)
>>> print(env.render().splitlines()[0])
round  arm  x                     reward     regret  corruption used
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

__all__ = [
    "DPI",
    "FIGSIZE",
    "BAND_REACH",
    "HEATMAP_BINS",
    "SCATTER_MAX_POINTS",
    "TRACE_COLUMNS",
    "binned_mean",
    "render_ansi",
    "render_rgb",
]

FIGSIZE = (6.4, 4.0)
"""Figure size in inches of the ``"rgb_array"`` picture."""
DPI = 100
"""Dots per inch: the array is ``(400, 640, 3)``."""
ANSI_ROWS = 20
"""How many of the last rounds the ``"ansi"`` text lists."""
SCATTER_MAX_POINTS = 20_000
"""Up to this many 2-D points the heat map draws every point as a marker; beyond, it draws
the mean of ``f`` over the points in each cell of a :data:`HEATMAP_BINS` grid: Agg pays for
every marker, though at that density they cover each other (``benchmarks/bench_envs.py``
prints both pictures' frame cost at ``10^5`` arms)."""
HEATMAP_BINS = 160
"""Cells per axis of the binned heat map (about 3 pixels each)."""
TRACE_COLUMNS = 1024
"""The cumulative-regret trace is drawn through the first and last round of each of this many
equal columns of its x axis (more columns than the panel has pixels): the same line up to
anti-aliasing at its edges, since the trace never decreases (:func:`_thin_monotone`), and a
frame no longer pays for every round played (``tests/test_gymnasium.py``)."""
BAND_REACH = 1.5
"""How far beyond ``f``'s range the ``f(x)`` axis follows an attached agent's band, in
spans of ``f`` (a wide band early in a run would otherwise shrink ``f`` to a line; the band
is clipped there)."""


def _fmt_x(x: np.ndarray) -> str:
    txt = "(" + ", ".join(f"{v:.3g}" for v in x[:3]) + (", ..." if x.size > 3 else "") + ")"
    return txt[:20]


def render_ansi(env: Any) -> str:
    """The text picture: a header, then ``round arm x reward regret corruption-used`` rows."""
    head = f"{'round':>5}  {'arm':>3}  {'x':<20} {'reward':>10} {'regret':>10}  corruption used"
    trace = env._trace or []
    if not trace:
        return head + "\n" + ("(no round played yet; call reset() then step())") + "\n"
    first = len(trace) - min(len(trace), ANSI_ROWS)
    lines = [head]
    points = env.problem.points
    for t in range(first, len(trace)):
        a, y, regret, used = trace[t]
        lines.append(
            f"{t + 1:>5}  {a:>3}  {_fmt_x(points[a]):<20} {y:>10.4g} {regret:>10.4g}  {used:.4g}"
        )
    return "\n".join(lines) + "\n"


def _band(env: Any) -> tuple[np.ndarray, np.ndarray] | None:
    agent = getattr(env, "agent", None)
    if agent is None:
        return None
    try:
        est, width = agent.posterior()
    except Exception:  # noqa: BLE001 - an agent before its first reset has no posterior
        return None
    est = np.asarray(est, dtype=float).reshape(-1)
    width = np.asarray(width, dtype=float).reshape(-1)
    n = env.problem.n
    if est.shape != (n,) or width.shape != (n,):
        return None
    return est, width


def binned_mean(
    points: np.ndarray, f: np.ndarray, bins: int
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """The mean of ``f`` over the 2-D ``points`` in each cell of a ``bins x bins`` grid on
    their bounding box, ``NaN`` where a cell holds no point: ``(M, extent)`` with
    ``M[i, j]`` the cell ``i`` along ``x1`` and ``j`` along ``x2`` and
    ``extent = (x1 min, x1 max, x2 min, x2 max)``. ``O(n)``.

    >>> M, ext = binned_mean(np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0]]),
    ...                      np.array([1.0, 3.0, 5.0]), 2)
    >>> M
    array([[ 2., nan],
           [nan,  5.]])
    """
    lo, hi = points.min(axis=0), points.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)  # a degenerate axis: one cell wide
    rng = [(float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1]))]
    tot, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=bins, range=rng, weights=f)
    cnt, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=bins, range=rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(cnt > 0, tot / cnt, np.nan)
    return M, (rng[0][0], rng[0][1], rng[1][0], rng[1][1])


def _nice_up(v: float) -> float:
    """The smallest of ``1, 2, 5 x 10^k`` at or above ``v > 0``."""
    k = 10.0 ** math.floor(math.log10(v))
    return next(m * k for m in (1.0, 2.0, 5.0, 10.0) if m * k >= v * (1 - 1e-12))


def _nice_range(lo: float, hi: float) -> tuple[float, float]:
    """``[lo, hi]`` widened by 5 % a side and snapped outward to a grid of ``step`` =
    half the decade of its span: limits that stay put while the data move within a step,
    so a reused figure keeps its ticks and layout (:class:`_Picture`)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = -1.0, 1.0
    lo, hi = max(lo, -1e300), min(hi, 1e300)  # a span that stays finite
    span = hi - lo
    if span <= 1e-12 * max(abs(lo), abs(hi), 1e-300):
        span = max(abs(hi), 1.0)
        lo, hi = lo - span / 2, hi + span / 2
    pad = 0.05 * span
    step = 10.0 ** math.floor(math.log10(span + 2 * pad)) / 2
    return math.floor((lo - pad) / step) * step, math.ceil((hi + pad) / step) * step


def _thin_monotone(n: int, xmax: float, columns: int = TRACE_COLUMNS) -> np.ndarray:
    """Indices of the points ``x = 1..n`` of a non-decreasing sequence to draw it in
    ``columns`` equal columns of the x axis ``[0, xmax]``: the first and last point of each
    column (all ``n`` when ``n <= 2 columns``). Between columns the thinned line has the
    original's segments; within one, the original rises from the column's first value to its
    last, which is the one segment drawn, less than a column wide. ``O(columns)``, whatever
    ``n``: column ``k`` holds ``x`` in ``(b_k, b_{k+1}]`` with ``b_k = floor(k X / columns)``
    (``X = max(ceil(xmax), n)``), so its ends come from the boundaries alone.

    >>> _thin_monotone(10, 10.0, columns=2).tolist()   # columns (0, 5] and (5, 10]
    [0, 4, 5, 9]
    """
    if n <= 2 * columns:
        return np.arange(n)
    b = np.arange(columns + 1, dtype=np.int64) * max(int(math.ceil(xmax)), n) // columns
    first, last = b[:-1] + 1, np.minimum(b[1:], n)  # each column's first and last x
    full = first <= last  # the columns up to x = n that hold a point
    return np.unique(np.concatenate([first[full], last[full]])) - 1


def _band_polygon(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The closed outline of the region between ``lo`` and ``hi`` over ``x``."""
    return np.concatenate([np.column_stack([x, hi]), np.column_stack([x[::-1], lo[::-1]])])


_SUBPLOTPARS = ("left", "right", "bottom", "top", "wspace", "hspace")

#: Legend corners tried, in order of preference, and the share of the axes each covers.
_CORNERS = (("upper right", 1.0, 1.0), ("upper left", 0.0, 1.0), ("lower right", 1.0, 0.0),
            ("lower left", 0.0, 0.0))  # fmt: skip
_LEGEND_BOX = (0.32, 0.3)


def _legend_corner(xy: list[tuple[np.ndarray, np.ndarray]], xlim, ylim) -> str:
    """The corner of the axes whose ``_LEGEND_BOX`` holds the fewest of the points ``xy``
    (ties: the first of :data:`_CORNERS`): what ``loc="best"`` does, at the cost of a count
    instead of a search over every vertex of every line at each draw."""
    best, fewest = _CORNERS[0][0], None
    w, h = _LEGEND_BOX
    for name, cx, cy in _CORNERS:
        inside = 0
        for x, y in xy:
            u = (x - xlim[0]) / (xlim[1] - xlim[0])
            v = (y - ylim[0]) / (ylim[1] - ylim[0])
            inside += int(np.count_nonzero((np.abs(u - cx) <= w) & (np.abs(v - cy) <= h)))
        if fewest is None or inside < fewest:
            best, fewest = name, inside
    return best


class _Picture:
    """One env's ``rgb_array`` figure, kept between the frames of an episode (``render_rgb``).

    Two layers. The static one, drawn once and kept as pixels, holds what the state does not
    move: the axes with their ticks and labels, the heat map and its colour bar. The
    dynamic one is drawn over it every frame: ``f``, the agent's band and estimate, the
    played arms, the regret trace, the legend and the title. Axis limits are a function of
    the state (``f``'s range and the agent's estimate, snapped outward by
    :func:`_nice_range`; the regret trace to the next ``1, 2, 5 x 10^k`` by
    :func:`_nice_up`), so they move in steps; only then is the figure laid out
    (``tight_layout``) and the static layer drawn again. A frame is therefore the static
    pixels plus a few artists, and a figure built afresh for the same state (after
    ``deepcopy``, pickling or in another process) gives the same pixels: the picture depends
    on the env's state, not on the frames drawn before.
    """

    def __init__(self, env: Any, key: tuple, band: tuple[np.ndarray, np.ndarray] | None) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.key = key
        f = np.asarray(env.objective.values, dtype=float)
        points = np.asarray(env.problem.points, dtype=float)
        self.f, self.points, self.d = f, points, points.shape[1]
        self.fig = fig = Figure(figsize=FIGSIZE, dpi=DPI)
        self.canvas = FigureCanvasAgg(fig)
        # tight_layout adjusts from the subplot parameters it finds, so it starts from these
        # every time: the layout of given limits is then that of a new figure.
        self.subplotpars = {k: getattr(fig.subplotpars, k) for k in _SUBPLOTPARS}
        self.layout: tuple | None = None
        self.background: Any = None
        self.trace: list | None = None  # the env's trace list read so far (_read_trace)
        self.seen = 0
        self.est = self.band = self.regret = self.legend = None
        dynamic: list[Any] = []  # drawn every frame, in this order (the z-order of a draw)
        if self.d == 2:
            ax = fig.add_subplot(1, 1, 1)
            if f.size <= SCATTER_MAX_POINTS:
                sc = ax.scatter(points[:, 0], points[:, 1], c=f, s=18, marker="s", cmap="viridis")
                fig.colorbar(sc, ax=ax, label="f(x)")
            else:
                M, extent = binned_mean(points, f, HEATMAP_BINS)
                im = ax.imshow(
                    np.ma.masked_invalid(M.T), origin="lower", extent=extent, aspect="auto",
                    cmap="viridis", interpolation="nearest",
                )  # fmt: skip
                fig.colorbar(im, ax=ax, label=f"f(x), mean over each of {HEATMAP_BINS}^2 cells")
            ax.autoscale_view()
            ax.set_autoscale_on(False)  # the markers never move the heat map's limits
            self.played = ax.plot([], [], "x", ms=4, color="tab:orange")[0]
            ax.set_xlabel("x1")
            ax.set_ylabel("x2")
        else:
            ax = fig.add_subplot(1, 1, 1) if self.d == 1 else fig.add_subplot(1, 2, 1)
            if self.d == 1:
                order = np.argsort(points[:, 0])
                self.x = points[order, 0]
                label, xlabel, ylabel = "f", "x", "f(x)"
            else:
                order = np.argsort(f)
                self.rank = np.empty_like(order)
                self.rank[order] = np.arange(f.size)
                self.x = np.arange(f.size, dtype=float)
                label, xlabel, ylabel = "f (arms by f)", f"arm, sorted by f (d = {self.d})", "f"
            self.order, self.fx = order, f[order]
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if band is not None:
                self.band = ax.fill_between(
                    self.x, self.fx, self.fx, color="tab:blue", alpha=0.2, label="estimate ± width"
                )
                dynamic.append(self.band)
            dynamic.append(ax.plot(self.x, self.fx, color="black", lw=1.5, label=label)[0])
            keys = [dynamic[-1]]  # the legend's entries, in this order
            if band is not None:
                name = "agent estimate" if self.d == 1 else "estimate"
                self.est = ax.plot(self.x, self.fx, color="tab:blue", lw=1, label=name)[0]
                dynamic.append(self.est)
                keys += [self.est, self.band]
            self.played = ax.plot([], [], "o", ms=3, color="tab:orange", label="played")[0]
            keys.append(self.played)
            ax.set_xlim(*self._x_margins(self.x))
            ax.set_autoscale_on(False)
            self.f_range = (float(f.min()), float(f.max()))
            if self.d > 2:
                ax2 = fig.add_subplot(1, 2, 2)
                self.regret = ax2.plot([], [], color="tab:red")[0]
                ax2.set_xlabel("round t")
                ax2.set_ylabel("cumulative regret")
                ax2.set_autoscale_on(False)
                self.ax2 = ax2
        dynamic.append(self.played)
        self.last = ax.plot([], [], "o", ms=6, color="red")[0]
        dynamic.append(self.last)
        if self.d != 2:
            self.legend = ax.legend(handles=keys, loc="upper right", fontsize=7)
            dynamic.append(self.legend)
        if self.regret is not None:
            dynamic.append(self.regret)
        self.title = fig.suptitle("", fontsize=9)
        dynamic.append(self.title)
        for artist in dynamic:
            artist.set_animated(True)  # left out of canvas.draw(), the static layer
        self.dynamic, self.ax = dynamic, ax

    @staticmethod
    def _x_margins(x: np.ndarray) -> tuple[float, float]:
        lo, hi = float(x.min()), float(x.max())
        pad = 0.05 * (hi - lo) if hi > lo else 0.5
        return lo - pad, hi + pad

    def _read_trace(self, trace: list) -> tuple[np.ndarray, np.ndarray]:
        """The arms played so far, each once in the order first played, and the cumulative
        regret (a view of a buffer grown by doubling), brought up to date with the rounds
        since the last frame (all of them after a reset): O(new rounds + distinct arms) a
        frame, not O(t). One marker per arm: a replayed arm's marker would be drawn on
        itself. The regret trace is drawn thinned (:data:`TRACE_COLUMNS`)."""
        if trace is not self.trace or len(trace) < self.seen:
            self.trace, self.seen, self.cum_total = trace, 0, 0.0
            self.is_played = np.zeros(self.f.size, dtype=bool)
            self.arms: list[int] = []
            self.cum = np.empty(64)
        if len(trace) > self.cum.size:
            self.cum = np.concatenate([self.cum, np.empty(max(len(trace), 2 * self.cum.size))])
        for t, (a, _, regret, _) in enumerate(trace[self.seen :], self.seen):
            if not self.is_played[a]:
                self.is_played[a] = True
                self.arms.append(a)
            self.cum_total += regret
            self.cum[t] = self.cum_total
        self.seen = len(trace)
        return np.array(self.arms, dtype=np.int64), self.cum[: self.seen]

    def frame(self, env: Any, band: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
        """The ``(H, W, 3)`` picture of the env's current state."""
        trace = env._trace or []
        played, cum = self._read_trace(trace)
        if trace:  # the last arm played, drawn in red
            played = np.append(played[played != trace[-1][0]], trace[-1][0])
        f, points, ax = self.f, self.points, self.ax
        if self.d == 2:
            self.played.set_data(points[played, 0], points[played, 1])
            last = (points[played[-1:], 0], points[played[-1:], 1])
        else:
            xs = points[played, 0] if self.d == 1 else self.rank[played].astype(float)
            self.played.set_data(xs, f[played])
            last = (xs[-1:], f[played[-1:]])
            lo, hi = self.f_range
            shown = [(self.x, self.fx)]
            if self.est is not None and band is not None:
                est, w = (np.asarray(v, dtype=float)[self.order] for v in band)
                with np.errstate(invalid="ignore", over="ignore"):
                    ends = np.concatenate([est, est - np.abs(w), est + np.abs(w)])
                ends = ends[np.isfinite(ends)]
                if ends.size:  # the band too, up to BAND_REACH spans of f beyond f's range
                    reach = BAND_REACH * max(hi - lo, 1e-12 * max(abs(lo), abs(hi)), 1e-300)
                    lo = max(min(lo, float(ends.min())), lo - reach)
                    hi = min(max(hi, float(ends.max())), hi + reach)
            ylim = _nice_range(lo, hi)
            if self.est is not None and band is not None:
                # Finite and within a span of the axes: the part beyond is clipped anyway,
                # and Agg refuses paths with coordinates of ~1e300.
                span = ylim[1] - ylim[0]
                clip = (ylim[0] - span, ylim[1] + span)
                est = np.clip(np.nan_to_num(est, nan=0.0), *clip)
                w = np.nan_to_num(np.abs(w), nan=0.0, posinf=2 * span)
                self.est.set_ydata(est)
                self.band.set_verts(
                    [_band_polygon(self.x, np.clip(est - w, *clip), np.clip(est + w, *clip))]
                )
                shown.append((self.x, est))
            ax.set_ylim(*ylim)
            shown.append((xs, f[played]))
            self.legend.set_loc(_legend_corner(shown, ax.get_xlim(), ylim))
            if self.regret is not None:
                xmax = _nice_up(max(cum.size, 1))
                # cumulative regret never decreases; TRACE_COLUMNS read now, as set
                keep = _thin_monotone(cum.size, xmax, TRACE_COLUMNS)
                self.regret.set_data(keep + 1.0, cum[keep])
                top = float(cum[-1]) if cum.size and np.isfinite(cum[-1]) else 0.0
                self.ax2.set_xlim(0, xmax)
                self.ax2.set_ylim(0, _nice_up(max(top, 1e-3)))
        self.last.set_data(*last)
        self.title.set_text(f"{env.name}: round {len(trace)} of {env.horizon}")
        layout = tuple(a.get_xlim() + a.get_ylim() for a in self.fig.axes)
        if layout != self.layout or self.background is None:
            # the tick labels changed: lay the figure out again, redraw the static layer
            self.fig.subplots_adjust(**self.subplotpars)
            self.fig.tight_layout()
            self.canvas.draw()
            self.background = self.canvas.copy_from_bbox(self.fig.bbox)
            self.layout = layout
        else:
            self.canvas.restore_region(self.background)
        renderer = self.canvas.get_renderer()
        for artist in self.dynamic:
            artist.draw(renderer)
        return np.asarray(self.canvas.buffer_rgba())[..., :3].copy()


#: The figure of each env drawn in ``rgb_array`` mode, dropped with the env (weakly held,
#: so pickling or copying an env never meets a figure).
_PICTURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def render_rgb(env: Any) -> np.ndarray:
    """The picture of ``f`` over the candidate set, the played arms and the agent's band.

    1-D points: ``f`` against ``x``. 2-D: a heat map of ``f`` at the points (beyond
    :data:`SCATTER_MAX_POINTS` points, of its mean per cell, :func:`binned_mean`). Higher-D (and
    data sets): ``f`` by arm, arms sorted by ``f``, beside the cumulative regret trace.
    Played arms are marked (the last one in red); an attached agent's ``estimate ± width``
    is a shaded band (not drawn on the 2-D heat map, where it has no axis).

    Axis limits follow the state in steps (``f``'s range and the agent's estimate, snapped
    outward; the regret trace to the next ``1, 2, 5 x 10^k``), so the frames of a video
    keep their scale, and the figure is kept between frames of an episode
    (:class:`_Picture`): a frame costs one draw, not a new figure and its layout
    (``benchmarks/bench_envs.py`` prints both). The pixels depend on the state only.
    """
    band = _band(env)
    key = (
        env.objective,
        getattr(env, "agent", None),
        band is None,
        FIGSIZE,
        DPI,
        SCATTER_MAX_POINTS,
        HEATMAP_BINS,
    )
    pic = _PICTURES.get(env)
    # the same objective and agent objects (a reset that redraws f makes a new one)
    if (
        pic is None
        or not (pic.key[0] is key[0] and pic.key[1] is key[1])
        or (pic.key[2:] != key[2:])
    ):
        pic = _PICTURES[env] = _Picture(env, key, band)
    return pic.frame(env, band)
