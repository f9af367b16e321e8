"""``hbo-bench reproduce`` for an experiment over a ladder of horizons
(:class:`~hbo_envs.judging.experiments.ExponentExperiment`): run the sweep, print the
measured exponents beside the theory, draw them, judge the claims, write ``summary.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hbo_envs.harness.specs import AgentSpec
from hbo_envs.harness.store import write_json
from hbo_envs.judging.experiments._core import ExponentExperiment
from hbo_envs.judging.rules.claims import evaluate_claims, format_verdicts, verdict_records
from hbo_envs.judging.rules.exponent import (
    exponent_table,
    format_exponent_table,
    format_regret_by_horizon,
    plot_exponents,
    run_exponent_sweep,
    theory_exponents,
)

__all__ = ["reproduce_exponent"]


def reproduce_exponent(
    exp: ExponentExperiment,
    args: Any,
    specs: Sequence[AgentSpec],
    skipped: Sequence[str],
    seeds: int | Sequence[int] | None = None,
) -> int:
    """``hbo-bench reproduce`` for an :class:`ExponentExperiment` (called by the CLI).

    ``seeds`` is the CLI's ``--seeds`` list or ``--n-seeds`` count (None: the experiment's).
    """
    if args.horizon is not None:
        raise ValueError(
            f"--horizon does not apply to {exp.name}: it runs the ladder T = "
            f"{', '.join(map(str, exp.horizons))} (--quick: "
            f"{', '.join(map(str, exp.quick_horizons))})."
        )
    smoke = bool(getattr(args, "smoke", False))
    if seeds is None:
        seeds = 1 if smoke else exp.quick_seeds if args.quick else exp.seeds
    n_seeds = seeds if isinstance(seeds, int) else len(seeds)
    if smoke:
        horizons = exp.smoke_horizons
    else:
        horizons = exp.quick_horizons if args.quick else exp.horizons
    out = Path(
        args.out or f"results/{exp.name}{'-smoke' if smoke else '-quick' if args.quick else ''}"
    )
    print(f"{exp.title}\n  {exp.citation}\n  protocol: {exp.protocol}")
    print(
        f"  running{' (quick)' if args.quick else ''}: {n_seeds} seeds, T = "
        + ", ".join(map(str, horizons))
        + "; envs: "
        + ", ".join(v.label for v in exp.variants)
        + "; agents: "
        + ", ".join(s.label for s in specs)
    )
    if skipped:
        print(f"  skipped (not available yet): {', '.join(skipped)}")
    meta = {
        "experiment": {
            "name": exp.name,
            "title": exp.title,
            "quick": bool(args.quick),
            "smoke": smoke,
        }
    }
    execution = {  # the CLI's execution options, as ``run_sweep`` takes them
        "backend": args.backend,
        "workers": args.workers,
        "progress": False if args.no_progress else None,
        "fresh": args.fresh,
        "address": args.address,
    }
    sweep = run_exponent_sweep(
        exp.variants, specs, seeds, horizons, out=out, meta=meta, **execution
    )
    print(f"\n{sweep.ran} cell(s) run, {sweep.skipped} already finished; results in {out}")
    theory = {v.label: theory_exponents(v, horizons[-1]) for v in exp.variants}
    table = exponent_table(sweep.final, theory)
    print("\n" + format_regret_by_horizon(sweep.final))
    print(
        "\nGrowth exponent of R_T over T (log-log least squares of the mean over seeds, 95% "
        "bootstrap CI over seeds), beside Theorem 2's lower-bound exponent and TGP-UCB's "
        "upper-bound exponent (2+α)/(2(1+α)); R_T/(TΔ) at the largest T (the proof gives "
        "E[R_T] >= TΔ up to unknown constants):"
    )
    print(format_exponent_table(table))
    if not sweep.final.empty:
        title = exp.title + (" [quick]" if args.quick else "")
        for p in plot_exponents(
            sweep.final, [out / f"exponents.{f}" for f in args.format], table=table, title=title
        ):
            print(f"wrote {p}")
        sweep.final.to_csv(out / "final.csv", index=False)
        table.to_csv(out / "exponents.csv", index=False)
    verdicts = evaluate_claims(exp.claims, sweep.final, [v.label for v in exp.variants])
    print("\nThe paper's claims, with the measured verdicts and the rule that decided each:")
    print(format_verdicts(verdicts))
    write_json(
        out / "summary.json",
        {
            "experiment": {**meta["experiment"], "citation": exp.citation, "skipped": skipped},
            "seeds": seeds,
            "horizons": list(horizons),
            "exponents": json.loads(table.to_json(orient="records")),
            "verdicts": verdict_records(verdicts),
        },
    )
    print(f"wrote {out / 'summary.json'}")
    for f in sweep.failures:
        print(f"  failed: {f.get('run_name', '')} [{f['variant']}, T={f['horizon']}]: {f['error']}")
    return 1 if sweep.failures else 0
