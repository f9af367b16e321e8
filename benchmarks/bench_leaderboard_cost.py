"""Estimate what a suite's references cost to compute (``hbo-bench leaderboard baselines``)
and to re-verify (CI's ``hbo-bench leaderboard gate``), from one env at a few seeds.

Every reference of the suite (each agent in each configuration, ``paper`` and ``tuned``, and
the random floor) runs ``--seeds`` cells of one env through the leaderboard's sandboxed
re-run (:func:`hbo_envs.leaderboard.verify.rerun_cells`, what ``make_reference`` and the gate
run), references interleaved per seed. The estimate scales the median cell time by the
suite's rounds per seed relative to that env (``sum_e T_e / T_env``: cost per round is taken
as the env's, so an env with more arms than the timed one costs more than estimated), by the
seeds of a verification (public + ``--hidden`` hidden) and divides by ``--workers``::

    estimate = median cell time * (sum_e T_e / T_env) * (n_public + hidden) / workers

Run: ``python benchmarks/bench_leaderboard_cost.py tails-v0 --env hbo/Tails-SE2D-StudentT-v0``
(``--seeds 1``, ``--hidden 4``, ``--workers 2``, ``--agent NAME`` repeatable,
``--config paper|tuned``). Compare with the committed records' own
``verification.verifier.wall_s`` (a whole verification with 2 workers) where they exist:
the script prints them side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from hbo_envs.leaderboard import load_suite
from hbo_envs.leaderboard.submission import resolve_agent
from hbo_envs.leaderboard.verify import RerunCell, rerun_cells


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--env", default=None, help="the env to time (default: the suite's first)")
    ap.add_argument("--seeds", type=int, default=1, help="cells per reference (seeds 0..k-1)")
    ap.add_argument("--hidden", type=int, default=4, help="hidden seeds of a verification")
    ap.add_argument("--workers", type=int, default=2, help="workers of a verification")
    ap.add_argument("--agent", action="append", default=None, help="only these (repeatable)")
    ap.add_argument("--config", choices=("paper", "tuned"), default=None)
    args = ap.parse_args(argv)
    suite = load_suite(args.suite)
    env = suite.env(args.env) if args.env else suite.envs[0]
    refs = [
        r
        for r in suite.references()
        if (not args.agent or r.name in args.agent) and (not args.config or r.config == args.config)
    ]
    times: dict[str, list[float]] = {r.file: [] for r in refs}
    for seed in range(args.seeds):
        for r in refs:
            cell = RerunCell(env.id, seed, env.horizon, dict(env.kwargs), (env.horizon,))
            t0 = time.perf_counter()
            out = rerun_cells(resolve_agent(r.name)[0], r.params(), [cell])
            times[r.file].append(time.perf_counter() - t0)
            if not out[0].ok:
                raise SystemExit(f"{r.spec} failed on {env.id}: {out[0].error}")
    scale = sum(e.horizon for e in suite.envs) / env.horizon
    seeds = len(suite.seeds) + args.hidden
    print(
        f"{suite.id}: timed on {env.id} (T = {env.horizon}), {args.seeds} seed(s); the suite "
        f"has {len(suite.envs)} envs, {sum(e.horizon for e in suite.envs)} rounds per seed "
        f"(x{scale:.2f} this env), {seeds} seeds per verification, {args.workers} workers"
    )
    print(f"{'reference':40s} {'cell s':>8s} {'estimate s':>11s} {'recorded s':>11s}")
    total = 0.0
    for r in refs:
        cell = statistics.median(times[r.file])
        est = cell * scale * seeds / args.workers
        total += est
        f = suite.folder / "submissions" / r.file
        rec = "—"
        if f.is_file():
            wall = json.loads(f.read_text()).get("verification", {}) or {}
            rec = str((wall.get("verifier") or {}).get("wall_s", "—"))
        print(f"{r.spec:40s} {cell:8.1f} {est:11.0f} {rec:>11s}")
    print(f"{'total (one baselines run = one full gate)':40s} {'':8s} {total:11.0f}")


if __name__ == "__main__":
    main()
