"""The picture of Bogunovic, Krause & Scarlett (2020) Figure 1 (plotting and its trace).

:func:`figure1_trace` runs each agent for the first ``rounds`` rounds of a corrupted env
(one seed) and records the points it chose, which of them were corrupted, and its
confidence band ``estimate +- width`` (``agent.posterior()``) after the last round.
:func:`plot_figure1` draws, left to right: ``f`` with ``x*``, ``x_0`` and the corruption
region (the figure's left panel), then one panel per agent with its chosen points
(corrupted ones marked) and its band — GP-UCB beside the corruption-aware agents (the
figure's middle and right panels).

>>> traces = figure1_trace(agents=("gp-ucb", "gp-ucb-corruption"), rounds=5, seed=0)
>>> [t.agent for t in traces], traces[0].actions.shape
(['gp-ucb', 'gp-ucb-corruption'], (5,))
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = ["Figure1Trace", "figure1_trace", "plot_figure1", "plot_figure1_experiment"]


@dataclass
class Figure1Trace:
    """One agent's first rounds on a corrupted env (see :func:`figure1_trace`)."""

    agent: str
    x: np.ndarray  # candidate points (first coordinate)
    f: np.ndarray
    corruption: np.ndarray  # the adversary's c(.) at reset when it is a fixed function, else 0
    actions: np.ndarray
    corrupted: np.ndarray  # bool per round: c_t(x_t) != 0
    estimate: np.ndarray
    width: np.ndarray
    regret: float  # R_t after the rounds shown
    budget_used: float


def figure1_trace(
    env_id: str = "hbo/Corrupted-Fig1-v0",
    agents: Sequence[Any] = ("gp-ucb", "gp-ucb-corruption", "fast-slow-gp-ucb"),
    *,
    rounds: int = 50,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> list[Figure1Trace]:
    """Run each agent (a registered name or an agent object) for ``rounds`` rounds.

    Seeded exactly as the harness's cell runner seeds cell ``seed``
    (:func:`hbo_envs.harness.cell.run_cell`: the env built by
    :func:`~hbo_envs.harness.cell.make_env` and reset with ``seed``, the agent reset with
    :func:`~hbo_envs.harness.specs.agent_seed`), so the pictured rounds are the first
    rounds of the ``reproduce`` cell with horizon ``rounds`` (tested: same regret, bit for
    bit).
    """
    import agents as agent_registry
    import hbo_envs  # noqa: F401  (registers the envs)
    from hbo_envs.harness.cell import make_env
    from hbo_envs.harness.specs import agent_seed

    out = []
    for spec in agents:
        agent = agent_registry.make(spec) if isinstance(spec, str) else spec
        env = make_env(env_id, max(int(rounds), 1), dict(env_kwargs or {})).unwrapped
        env.reset(seed=int(seed))
        agent.reset(env.problem, seed=agent_seed(int(seed)))
        state = getattr(env, "_adv_state", None)
        shape = np.asarray(env.objective.values).shape
        corr = np.asarray(state, dtype=float) if isinstance(state, np.ndarray) else np.zeros(shape)
        acts, hit, R, info = [], [], 0.0, {"corruption_used": 0.0}
        for _ in range(int(rounds)):
            a = agent.act()
            _, y, _, _, info = env.step(a)
            agent.update(a, y)
            acts.append(a)
            hit.append(info["corruption"] != 0.0)
            R += info["regret"]
        est, width = agent.posterior()
        out.append(
            Figure1Trace(
                getattr(agent, "name", str(spec)),
                np.asarray(env.problem.points[:, 0]),
                np.asarray(env.objective.values, dtype=float),
                corr,
                np.asarray(acts, dtype=int),
                np.asarray(hit, dtype=bool),
                np.asarray(est, dtype=float),
                np.asarray(width, dtype=float),
                R,
                float(info["corruption_used"]),
            )
        )
    return out


def plot_figure1(
    traces: Sequence[Figure1Trace],
    paths: Sequence[str | os.PathLike[str]],
    *,
    title: str | None = None,
) -> list[Path]:
    """Draw the Figure 1 panels (see the module docstring) and save them to ``paths``."""
    k = len(traces)
    fig = Figure(figsize=(3.6 * (k + 1), 3.2))
    axes = fig.subplots(1, k + 1, sharey=True)
    t0 = traces[0]
    x, f = t0.x, t0.f
    star = int(np.argmax(f))
    ax = axes[0]
    ax.plot(x, f, color="k", lw=1.5, label="f")
    region = t0.corruption != 0
    if region.any():
        ax.fill_between(x, f.min() - 0.2, f.max() + 0.3, where=region, color="tab:red",
                        alpha=0.12, label="corrupted region")  # fmt: skip
        ax.plot(x, f + t0.corruption, color="tab:red", lw=1, ls=":", label="f + c")
    ax.plot(x[star], f[star], "k*", ms=11, label=f"x*: f = {f[star]:.2f}")
    ax.set_title("objective and attack")
    ax.legend(fontsize=7, loc="lower left")
    for ax, tr in zip(axes[1:], traces, strict=True):
        lo, hi = tr.estimate - tr.width, tr.estimate + tr.width
        ax.plot(x, tr.f, color="k", lw=1)
        ax.fill_between(x, lo, hi, color="tab:blue", alpha=0.2, label="estimate ± width")
        ax.plot(x, tr.estimate, color="tab:blue", lw=1)
        xa = x[tr.actions]
        fa = tr.f[tr.actions]
        ax.plot(xa[~tr.corrupted], fa[~tr.corrupted], "o", ms=4, color="tab:green",
                label="chosen")  # fmt: skip
        if tr.corrupted.any():
            ax.plot(xa[tr.corrupted], fa[tr.corrupted], "x", ms=6, color="tab:red",
                    label="chosen, corrupted")  # fmt: skip
        ax.set_title(f"{tr.agent}: first {tr.actions.size} rounds\nR = {tr.regret:.1f}, "
                     f"budget used {tr.budget_used:.2f}", fontsize=9)  # fmt: skip
        ax.set_ylim(min(f.min(), 0) - 0.6, f.max() + 0.8)
        ax.legend(fontsize=7, loc="lower left")
    for ax in axes:
        ax.set_xlabel("x")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    from hbo_envs.harness.plotting import _save

    return _save(fig, paths)


def plot_figure1_experiment(
    exp: Any, paths: Sequence[str | os.PathLike[str]], *, seed: int = 0, rounds: int = 50
) -> list[Path]:
    """The picture of an experiment of ``kind="corruption"``: its first env, its paper
    agents, ``rounds`` rounds of seed ``seed``."""
    built = [a.build() for a in exp.paper]
    traces = figure1_trace(exp.envs[0], built, rounds=rounds, seed=seed)
    return plot_figure1(traces, paths, title=f"{exp.title} (seed {seed})")
