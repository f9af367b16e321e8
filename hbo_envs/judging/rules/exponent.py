"""Regret-exponent estimates: how ``R_T`` grows with the horizon ``T``.

A regret bound ``R_T = Θ(T^p)`` is a statement about a sequence of horizons, and for the
lower-bound environments (:class:`~hbo_envs.envs.lower_bound.LowerBoundEnv`) the instance
itself depends on ``T``. So the exponent is measured the way the theorems state it: run
every agent on the env built for each horizon ``T`` of a ladder (same seeds at every
``T``), fit each seed's ``R_T ~ c T^p`` by log-log least squares
(:func:`~hbo_envs.harness.stats.per_seed_exponents`), and report their mean with the exact
sign-flip test's 95% interval (:func:`~hbo_envs.harness.stats.sign_flip`): the statistic
and the interval the exponent claims decide on.

- :func:`run_exponent_sweep` — ``variants x horizons x agents x seeds``; one resumable
  results directory per ``(variant, T)`` (``<out>/<variant>/T<T>``), and one table of final
  rows (``env_id`` = the variant's label, ``t = T``, ``regret = R_T``) for the claims
  (:func:`~hbo_envs.judging.rules.claims.exponent_at_least`) and :func:`exponent_table`.
- :func:`exponent_table` — measured exponent ``[95% CI]`` per variant and agent, beside the
  theoretical ones: the env's lower-bound exponent (``env.lower_bound_exponent``; Theorem 2
  of Chowdhury–Gopalan: ``1/(1+α)`` for SE) and TGP-UCB's upper-bound exponent
  ``(2+α)/(2(1+α))`` (their Theorem 1, up to the ``γ_T`` factor).
- :class:`EnvVariant` — a registered env with keyword arguments under its own label (the
  unit an exponent is fitted on); :class:`~hbo_envs.judging.experiments.ExponentExperiment`
  lists them, and :func:`hbo_envs.judging.experiments.reproduce.reproduce_exponent` is
  ``hbo-bench reproduce`` for experiments of ``kind="exponent"``.

>>> import pandas as pd
>>> T = [100, 200, 400, 800]
>>> final = pd.DataFrame({
...     "env_id": "e", "agent": "a", "seed": [s for s in range(6) for _ in T], "t": T * 6,
...     "regret": [(s + 2) * t**0.5 for s in range(6) for t in T]})
>>> exponent_table(final)[["env_id", "agent", "exponent", "ci_low", "ci_high"]].round(6)
  env_id agent  exponent  ci_low  ci_high
0      e     a       0.5     0.5      0.5
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from hbo_envs.harness.records import unique_rounds
from hbo_envs.harness.runner import build_cells, run_sweep
from hbo_envs.harness.specs import AgentSpec, slug
from hbo_envs.harness.stats import per_seed_exponents, sign_flip, stratified_bootstrap_ci
from hbo_envs.harness.summary import final_rows

__all__ = [
    "EnvVariant",
    "ExponentSweep",
    "exponent_table",
    "format_exponent_table",
    "format_regret_by_horizon",
    "plot_exponents",
    "run_exponent_sweep",
    "theory_exponents",
    "variant_env",
]


@dataclass(frozen=True)
class EnvVariant:
    """A registered env with keyword arguments, under its own label (e.g. ``α = 0.5``)."""

    label: str
    env_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ExponentSweep:
    """What :func:`run_exponent_sweep` returns."""

    final: pd.DataFrame
    failures: list[dict[str, Any]]
    ran: int
    skipped: int


def variant_env(variant: EnvVariant, horizon: int) -> Any:
    """The unwrapped env of ``variant`` built for horizon ``T`` (its instance may depend on
    ``T``, e.g. the lower-bound construction's ``Δ``)."""
    return gym.make(variant.env_id, horizon=int(horizon), **dict(variant.kwargs)).unwrapped


def run_exponent_sweep(
    variants: Sequence[EnvVariant],
    agents: Sequence[AgentSpec],
    seeds: int | Sequence[int],
    horizons: Sequence[int],
    *,
    out: str | Path | None = None,
    backend: str = "local",
    workers: int | None = None,
    progress: bool | None = None,
    fresh: bool = False,
    meta: Mapping[str, Any] | None = None,
    address: str | None = None,
) -> ExponentSweep:
    """Run every agent on every variant at every horizon; return the final rows.

    ``final`` has one row per ``(variant, agent, seed, T)``: ``env_id`` (the variant's
    label), ``agent``, ``seed``, ``t`` (= ``T``), ``regret`` (``R_T``), ``avg_regret``,
    ``lower_bound`` (the env's rate at ``T``, if any) and ``delta`` (the construction's
    ``Δ`` for envs with a ``family``, else NaN). With ``out``, each ``(variant, T)`` has its
    own resumable results directory ``<out>/<slug(label)>/T<T>``.
    """
    frames, failures = [], []
    ran = skipped = 0
    for var in variants:
        for T in horizons:
            cells = build_cells(
                [var.env_id], list(agents), seeds, horizon=int(T), env_kwargs=dict(var.kwargs)
            )
            sub = None if out is None else Path(out) / slug(var.label) / f"T{int(T)}"
            m = {**dict(meta or {}), "variant": var.label, "horizon": int(T)}
            res = run_sweep(
                cells,
                out=sub,
                backend=backend,
                workers=workers,
                progress=progress,
                fresh=fresh,
                meta=m,
                address=address,
            )
            ran, skipped = ran + res.ran, skipped + res.skipped
            failures += [{**f, "variant": var.label, "horizon": int(T)} for f in res.failures]
            fin = final_rows(res.records)
            if fin.empty:
                continue
            fam = getattr(variant_env(var, T), "family", None)
            fin = fin.assign(env_id=var.label, delta=float(fam.delta) if fam else math.nan)
            frames.append(fin)
    cols = ["env_id", "agent", "seed", "t", "regret", "avg_regret", "lower_bound", "delta"]
    final = pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
    return ExponentSweep(final, failures, ran, skipped)


def theory_exponents(variant: EnvVariant, horizon: int = 1000) -> dict[str, float]:
    """The theoretical exponents for a variant: ``lower_bound`` (the env's, NaN if it has
    none) and ``tgp_ucb_upper`` = ``(2+α)/(2(1+α))`` (Chowdhury–Gopalan Thm. 1, ``γ_T``
    factor aside) at the env's ``α``."""
    env = variant_env(variant, horizon)
    a = float(env.problem.alpha)
    return {
        "lower_bound": float(getattr(env, "lower_bound_exponent", math.nan)),
        "tgp_ucb_upper": (2.0 + a) / (2.0 * (1.0 + a)),
    }


def exponent_table(
    final: pd.DataFrame, theory: Mapping[str, Mapping[str, float]] | None = None
) -> pd.DataFrame:
    """Measured growth exponent of ``R_T`` over ``T`` per ``(env_id, agent)``.

    Columns: ``env_id``, ``agent``, ``n`` (seeds finished at every ``T``), ``T_min``,
    ``T_max``, ``exponent`` (the mean of the seeds' own least-squares exponents of ``R_T``
    on ``T``, the statistic the exponent claims test), ``ci_low``, ``ci_high`` (the exact
    sign-flip test's 95% interval of that mean: infinite below 6 seeds, where the test
    cannot decide),
    ``ratio_T_max`` (mean ``R_T / (T Δ)`` at the largest ``T``: Theorem 2's proof gives
    ``E[R_T] >= T Δ`` up to its constants), and the ``theory`` entries of the env.
    """
    final = unique_rounds(final, "the final rows")  # one row per (variant, agent, seed, T)
    rows = []
    for (env, agent), g in final.groupby(["env_id", "agent"], sort=False):
        piv = g.pivot_table(index="seed", columns="t", values="regret", aggfunc="first").dropna()
        t = piv.columns.to_numpy(dtype=float)
        Y = piv.to_numpy(dtype=float)
        p, lo, hi = (math.nan,) * 3
        if t.size >= 2 and Y.size:
            slopes = per_seed_exponents(t, Y)
            slopes = slopes[np.isfinite(slopes)]
            if slopes.size:
                r = sign_flip(slopes - slopes.mean())
                p, lo, hi = float(slopes.mean()), slopes.mean() + r.lo, slopes.mean() + r.hi
        top = g[g["t"] == g["t"].max()]
        d = top["delta"].to_numpy(dtype=float) if "delta" in top else np.array([math.nan])
        ratio = float(np.mean(top["regret"].to_numpy(dtype=float) / (top["t"] * d)))
        row = {
            "env_id": env,
            "agent": agent,
            "n": int(Y.shape[0]),
            "T_min": int(t.min()) if t.size else 0,
            "T_max": int(t.max()) if t.size else 0,
            "exponent": p,
            "ci_low": lo,
            "ci_high": hi,
            "ratio_T_max": ratio,
        }
        row.update(dict((theory or {}).get(env, {})))
        rows.append(row)
    return pd.DataFrame(rows)


def format_exponent_table(table: pd.DataFrame) -> str:
    """Plain-text rendering: measured exponent [CI] beside the theoretical exponents."""
    if table.empty:
        return "(no finished runs)"
    lines = [
        f"  {'env':34s} {'agent':24s} {'measured exponent [95% CI]':28s} "
        f"{'lower bd':>8s} {'TGP-UCB up':>10s} {'R_T/(TΔ)':>9s}"
    ]
    for r in table.itertuples(index=False):
        meas = f"{r.exponent:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
        lb = getattr(r, "lower_bound", math.nan)
        ub = getattr(r, "tgp_ucb_upper", math.nan)
        lines.append(
            f"  {r.env_id:34s} {r.agent:24s} {meas:28s} {lb:8.3f} {ub:10.3f} {r.ratio_T_max:9.3f}"
        )
    return "\n".join(lines)


def format_regret_by_horizon(final: pd.DataFrame) -> str:
    """Mean ``R_T`` [95% bootstrap CI] per ``(env, agent)`` and horizon ``T``."""
    final = unique_rounds(final, "the final rows")
    if final.empty:
        return "(no finished runs)"
    out = []
    for env, ge in final.groupby("env_id", sort=False):
        Ts = sorted(ge["t"].unique())
        out.append(f"  {env}: mean R_T [95% CI] over seeds")
        out.append(f"    {'agent':24s} " + " ".join(f"{'T=' + str(int(T)):>22s}" for T in Ts))
        for agent, g in ge.groupby("agent", sort=False):
            cells = []
            for T in Ts:
                x = g.loc[g["t"] == T, "regret"].to_numpy(dtype=float)
                if x.size == 0:
                    cells.append(f"{'-':>22s}")
                    continue
                lo, hi = stratified_bootstrap_ci(x)
                cells.append(f"{f'{x.mean():.4g} [{lo:.4g}, {hi:.4g}]':>22s}")
            out.append(f"    {agent:24s} " + " ".join(cells))
    return "\n".join(out)


def plot_exponents(
    final: pd.DataFrame,
    paths: Sequence[str | Path],
    *,
    table: pd.DataFrame | None = None,
    title: str | None = None,
) -> list[Path]:
    """Log-log ``R_T`` vs ``T`` (mean ± 95% CI over seeds), one panel per variant, with the
    env's rate (dashed; Theorem 2's constant is unknown and set to 1: compare slopes)."""
    # matplotlib (and the harness's figure module, which imports it) only when a figure is
    # drawn: the archive's commands read this module without drawing
    from matplotlib import ticker
    from matplotlib.figure import Figure

    from hbo_envs.harness.plotting import _save

    final = unique_rounds(final, "the final rows")
    envs = list(dict.fromkeys(final["env_id"]))
    agents = list(dict.fromkeys(final["agent"]))
    colors = {a: f"C{i % 10}" for i, a in enumerate(agents)}
    ncol = min(len(envs), 2)
    nrow = -(-len(envs) // ncol)
    fig = Figure(figsize=(5.0 * ncol + 0.4, 3.6 * nrow + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrow, ncol, squeeze=False)).ravel()
    for ax in axes[len(envs) :]:
        ax.set_visible(False)
    for ax, env in zip(axes, envs, strict=False):
        ge = final[final["env_id"] == env]
        for a in agents:
            g = ge[ge["agent"] == a]
            if g.empty:
                continue
            Ts = np.array(sorted(g["t"].unique()), dtype=float)
            mean, lo, hi = [], [], []
            for T in Ts:
                x = g.loc[g["t"] == T, "regret"].to_numpy(dtype=float)
                c = stratified_bootstrap_ci(x)
                mean.append(x.mean())
                lo.append(c[0])
                hi.append(c[1])
            label = a
            if table is not None and not table.empty:
                r = table[(table["env_id"] == env) & (table["agent"] == a)]
                if len(r):
                    label = f"{a} (slope {float(r['exponent'].iloc[0]):.3f})"
            ax.plot(Ts, mean, "o-", color=colors[a], lw=1.4, ms=3, label=label)
            ax.fill_between(Ts, lo, hi, color=colors[a], alpha=0.2, lw=0)
        lb = ge.dropna(subset=["lower_bound"]).groupby("t")["lower_bound"].first()
        if not lb.empty:
            ax.plot(lb.index, lb.to_numpy(), "k--", lw=1.2, label="Thm. 2 rate (constant = 1)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        Ts_all = sorted(ge["t"].unique())
        ax.set_xticks(Ts_all)
        ax.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("horizon T")
        ax.set_ylabel("R_T")
        ax.set_title(env.removeprefix("hbo/"), fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=11)
    return _save(fig, paths)
