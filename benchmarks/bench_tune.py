"""Cost of ``hbo-bench tune`` for one agent and one family, beside the cost of its cells.

Prints, in one run:

- how many harness cells the tuning costs (points x envs x seeds) and its wall time;
- side by side, the wall time of the same cells run directly through
  ``hbo_envs.harness.evaluate`` (one call per point and env, the same seeds and horizon):
  the tuning's overhead is the difference (uniform-play normalisers, the record);
- the number of cells of the family's full protocol (``--seeds 8 --horizon 1000`` on
  ``tails`` times it).

Run: ``python benchmarks/bench_tune.py`` (``--agent``, ``--family``, ``--seeds``,
``--horizon``; ``--quick`` for a smoke run). Not a test: timings depend on the machine;
compare the columns, not absolute numbers.
"""

from __future__ import annotations

import argparse
import platform
import time

from hbo_envs.harness.runner import evaluate
from hbo_envs.harness.tuning import FAMILIES, default_space, tune, tuning_seeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="gp-ucb")
    ap.add_argument("--family", default="tails", choices=sorted(FAMILIES))
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--horizon", type=int, default=500)
    ap.add_argument("--quick", action="store_true", help="1 seed, T = 50")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.horizon = 1, 50
    fam = FAMILIES[args.family]
    space = default_space(args.agent)
    cells = len(space.values) * len(fam.envs) * args.seeds
    print(
        f"{platform.processor() or platform.machine()}; agent {args.agent}, family "
        f"{fam.name}: {len(space.values)} points x {len(fam.envs)} envs x {args.seeds} seeds "
        f"= {cells} cells of T = {args.horizon}"
    )

    t0 = time.perf_counter()
    tune(args.agent, fam, seeds=args.seeds, horizon=args.horizon)
    t_tune = time.perf_counter() - t0

    seeds = tuning_seeds(args.seeds)
    t0 = time.perf_counter()
    for point in space.points():
        for env_id, kw in fam.envs:
            evaluate(
                args.agent,
                env_id,
                seeds=seeds,
                horizon=args.horizon,
                env_kwargs=kw or None,
                agent_params=point,
                workers=1,
                progress=False,
            )
    t_cells = time.perf_counter() - t0

    print(f"{'':24s}{'wall s':>10s}{'s / cell':>10s}")
    print(f"{'hbo-bench tune':24s}{t_tune:10.2f}{t_tune / cells:10.3f}")
    print(f"{'the cells alone':24s}{t_cells:10.2f}{t_cells / cells:10.3f}")
    full = len(space.values) * len(fam.envs) * fam.seeds
    print(
        f"the family's full protocol is {full} cells of T = {fam.horizon} "
        f"(--seeds {fam.seeds} --horizon {fam.horizon} times it)"
    )


if __name__ == "__main__":
    main()
