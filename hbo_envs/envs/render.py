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

__all__ = ["FIGSIZE", "DPI", "render_ansi", "render_rgb"]

FIGSIZE = (6.4, 4.0)
"""Figure size in inches of the ``"rgb_array"`` picture."""
DPI = 100
"""Dots per inch: the array is ``(400, 640, 3)``."""
ANSI_ROWS = 20
"""How many of the last rounds the ``"ansi"`` text lists."""


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


def render_rgb(env: Any) -> np.ndarray:
    """The picture of ``f`` over the candidate set, the played arms and the agent's band.

    1-D points: ``f`` against ``x``. 2-D: a heat map of ``f`` at the points. Higher-D (and
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
        sc = ax.scatter(points[:, 0], points[:, 1], c=f, s=18, marker="s", cmap="viridis")
        fig.colorbar(sc, ax=ax, label="f(x)")
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
