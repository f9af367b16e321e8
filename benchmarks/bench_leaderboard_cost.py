"""Estimate what a suite's references cost to compute (``hbo-bench leaderboard baselines``)
and to re-verify (CI's ``hbo-bench leaderboard gate``) without running the suite.

Two measurements through the leaderboard's sandboxed re-run
(:func:`hbo_envs.leaderboard.verify.rerun_cells`, what ``make_reference`` and the gate run):

1. the *anchor* reference (default ``gp-ucb``, paper) on **every** env of the suite at
   ``--seeds`` seeds (default 1): its cost per seed of the whole suite, ``A``;
2. **every** reference of the suite (each agent in each configuration, ``paper`` and
   ``tuned``, and the random floor) on **one** env (``--env``) at the same seeds, references
   interleaved per seed: each one's cost relative to the anchor there, ``c_ref / c_anchor``.

The estimate of one reference's full verification (public + ``--hidden`` hidden seeds, on
``--workers`` workers) is ``A * (c_ref / c_anchor) * (n_public + hidden) / workers``: it
assumes a reference's cost relative to the anchor is the same on every env (it is not where
an agent's cost grows with the arms, e.g. ATA-Nystrom's dictionary: time on the env with the
most arms for an upper bound). Where the suite holds a record, its own
``verification.verifier.wall_s`` (a whole verification) is printed beside the estimate.

Run: ``python benchmarks/bench_leaderboard_cost.py tails-v0 --env hbo/Tails-SE2D-StudentT-v0``
(``--seeds``, ``--hidden 4``, ``--workers 2``, ``--anchor``, ``--agent NAME`` repeatable,
``--config paper|tuned``).
"""

from __future__ import annotations

import argparse
import json
import time

from hbo_envs.leaderboard import load_suite
from hbo_envs.leaderboard.submission import resolve_agent
from hbo_envs.leaderboard.suite import EnvEntry, Reference
from hbo_envs.leaderboard.verify import RerunCell, rerun_cells


def _time(ref: Reference, envs: list[EnvEntry], seeds: int) -> float:
    """Wall seconds of ``seeds`` cells of ``ref`` on each of ``envs`` (one sandboxed process,
    as one worker of a verification runs its share)."""
    cells = [
        RerunCell(e.id, s, e.horizon, dict(e.kwargs), (e.horizon,))
        for e in envs
        for s in range(seeds)
    ]
    t0 = time.perf_counter()
    out = rerun_cells(resolve_agent(ref.name)[0], ref.params(), cells)
    bad = [o.error for o in out if not o.ok]
    if bad:
        raise SystemExit(f"{ref.spec} failed: {bad[0]}")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--env", default=None, help="the env every reference runs on (default: first)")
    ap.add_argument("--seeds", type=int, default=1, help="seeds 0..k-1 of each timing")
    ap.add_argument("--hidden", type=int, default=4, help="hidden seeds of a verification")
    ap.add_argument("--workers", type=int, default=2, help="workers of a verification")
    ap.add_argument(
        "--anchor", default="gp-ucb", help="the reference timed on every env ('NAME[config=tuned]')"
    )
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
    name, _, cfg = args.anchor.partition("[config=")  # "gp-ucb" or "gp-ucb[config=tuned]"
    anchor = Reference(name, cfg.rstrip("]") or "paper")
    A = _time(anchor, list(suite.envs), args.seeds) / args.seeds
    here = {r.file: _time(r, [env], args.seeds) for r in refs}
    c_anchor = here.get(anchor.file) or _time(anchor, [env], args.seeds)
    seeds = len(suite.seeds) + args.hidden
    print(
        f"{suite.id}: {anchor.spec} takes {A:.1f} s per seed over its {len(suite.envs)} envs "
        f"({sum(e.horizon for e in suite.envs)} rounds); relative costs on {env.id} "
        f"(T = {env.horizon}); a verification runs {seeds} seeds on {args.workers} workers"
    )
    head = f"{'reference':40s} {'on env s':>9s} {'x anchor':>9s} {'estimate s':>11s}"
    print(f"{head} {'recorded s':>11s}")
    total = 0.0
    for r in refs:
        ratio = here[r.file] / c_anchor
        est = A * ratio * seeds / args.workers
        total += est
        f = suite.folder / "submissions" / r.file
        rec = "—"
        if f.is_file():
            ver = json.loads(f.read_text()).get("verification") or {}
            rec = str((ver.get("verifier") or {}).get("wall_s", "—"))
        print(f"{r.spec:40s} {here[r.file] / args.seeds:9.1f} {ratio:9.2f} {est:11.0f} {rec:>11s}")
    print(f"{'total (one baselines run = one full gate)':40s} {'':9s} {'':9s} {total:11.0f}")


if __name__ == "__main__":
    main()
