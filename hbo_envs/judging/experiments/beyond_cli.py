"""Command line of the issue-19 direct measurements (:mod:`.beyond`).

``python -m hbo_envs.judging.experiments.beyond_cli success --out DIR`` — Han–Scarlett's
success rate and attack cost for GP-UCB on Forrester under each attack;
``python -m hbo_envs.judging.experiments.beyond_cli sweep --out DIR`` — each agent's
``R_T`` against the budget (CSV + PNG per env).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hbo_envs.judging.experiments.beyond import (
    HS_ATTACKS,
    HS_CLEAN,
    HS_RANDOM,
    SWEEP_AGENTS,
    SWEEPS,
    attack_success,
    budget_sweep,
    plot_budget_sweep,
)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m hbo_envs.judging.experiments.beyond_cli {success,sweep} --out DIR``."""
    from pathlib import Path

    p = argparse.ArgumentParser(prog="python -m hbo_envs.judging.experiments.beyond_cli")
    p.add_argument("what", choices=("success", "sweep"))
    p.add_argument("--out", required=True)
    p.add_argument("--seeds", type=int, default=5)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.what == "success":
        df = attack_success(
            [HS_CLEAN, *HS_ATTACKS.values(), HS_RANDOM], ("gp-ucb",), range(args.seeds)
        )
        df.to_csv(out / "attack_success.csv", index=False)
        print(df.groupby("env_id")[["success_rate", "cost", "regret"]].mean().to_string())
        return
    for env_id, (param, values) in SWEEPS.items():
        df = budget_sweep(env_id, param, values, SWEEP_AGENTS, range(args.seeds))
        stem = env_id.split("/")[1]
        df.to_csv(out / f"sweep_{stem}.csv", index=False)
        plot_budget_sweep(df, param, str(out / f"sweep_{stem}.png"))
        print(df.groupby([param, "agent"], sort=False)["regret"].mean().unstack().to_string())


if __name__ == "__main__":
    main()
