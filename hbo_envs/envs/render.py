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

from typing import Any

import numpy as np

__all__ = [
    "DPI",
    "FIGSIZE",
    "HEATMAP_BINS",
    "SCATTER_MAX_POINTS",
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


def render_rgb(env: Any) -> np.ndarray:
    """The picture of ``f`` over the candidate set, the played arms and the agent's band.

    1-D points: ``f`` against ``x``. 2-D: a heat map of ``f`` at the points (beyond
    :data:`SCATTER_MAX_POINTS` points, of its mean per cell, :func:`binned_mean`). Higher-D (and
    data sets): ``f`` by arm, arms sorted by ``f``, beside the cumulative regret trace.
    Played arms are marked (the last one in red); an attached agent's ``estimate ± width``
    is a shaded band (not drawn on the 2-D heat map, where it has no axis).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    f = np.asarray(env.objective.values, dtype=float)
    points = np.asarray(env.problem.points, dtype=float)
    trace = env._trace or []
    played = np.array([a for a, *_ in trace], dtype=int)
    band = _band(env)
    d = points.shape[1]
    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    canvas = FigureCanvasAgg(fig)
    title = f"{env.name}: round {len(trace)} of {env.horizon}"
    if d == 1:
        ax = fig.add_subplot(1, 1, 1)
        order = np.argsort(points[:, 0])
        x = points[order, 0]
        ax.plot(x, f[order], color="black", lw=1.5, label="f")
        if band is not None:
            est, w = band
            ax.plot(x, est[order], color="tab:blue", lw=1, label="agent estimate")
            ax.fill_between(x, (est - w)[order], (est + w)[order], color="tab:blue", alpha=0.2)
        if played.size:
            ax.plot(points[played, 0], f[played], "o", ms=3, color="tab:orange", label="played")
            ax.plot(points[played[-1], 0], f[played[-1]], "o", ms=6, color="red")
        ax.set_xlabel("x")
        ax.set_ylabel("f(x)")
        ax.legend(loc="best", fontsize=7)
    elif d == 2:
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
        if played.size:
            ax.plot(points[played, 0], points[played, 1], "x", ms=4, color="tab:orange")
            ax.plot(points[played[-1], 0], points[played[-1], 1], "o", ms=6, color="red")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
    else:
        ax = fig.add_subplot(1, 2, 1)
        order = np.argsort(f)
        rank = np.empty_like(order)
        rank[order] = np.arange(f.size)
        ax.plot(np.arange(f.size), f[order], color="black", lw=1.5, label="f (arms by f)")
        if band is not None:
            est, w = band
            ax.fill_between(
                np.arange(f.size), (est - w)[order], (est + w)[order], color="tab:blue", alpha=0.2
            )
            ax.plot(np.arange(f.size), est[order], color="tab:blue", lw=1, label="estimate")
        if played.size:
            ax.plot(rank[played], f[played], "o", ms=3, color="tab:orange", label="played")
            ax.plot(rank[played[-1]], f[played[-1]], "o", ms=6, color="red")
        ax.set_xlabel(f"arm, sorted by f (d = {d})")
        ax.set_ylabel("f")
        ax.legend(loc="best", fontsize=7)
        ax2 = fig.add_subplot(1, 2, 2)
        regret = np.array([r for _, _, r, _ in trace], dtype=float)
        ax2.plot(np.arange(1, regret.size + 1), np.cumsum(regret), color="tab:red")
        ax2.set_xlabel("round t")
        ax2.set_ylabel("cumulative regret")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
