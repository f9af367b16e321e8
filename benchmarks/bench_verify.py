"""Cost of leaderboard verification: the sandboxed re-run beside the in-process harness.

Prints, in one run:

- for a few (agent, env) cells, the wall time of one episode run in-process by the harness
  (:func:`hbo_envs.harness.run_cell`, what ``submit`` does) and the same episode re-run by
  the verifier (:func:`hbo_envs.leaderboard.rerun_cells`: a sandboxed agent process, env in
  the verifier, one pipe round trip per round), the start-up cost of a sandboxed process,
  and whether the two regret curves are bit-identical;
- per committed suite, the wall time of each reference's full verification (every public
  and hidden seed of every env) as recorded in ``verification.verifier.wall_s`` of its
  ``submissions/baseline-*.json``, with the load average of this machine now (the records
  were written under the load stated in ``docs/leaderboard-trust.md``).

Run: ``python benchmarks/bench_verify.py`` (``--quick``: fewer cells). Not a test: timings
depend on the machine and its load; compare the columns.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from hbo_envs.harness import AgentSpec, build_cells, run_cell
from hbo_envs.leaderboard import RerunCell, rerun_cells
from hbo_envs.leaderboard.submission import resolve_agent
from hbo_envs.leaderboard.suite import leaderboards_root, list_suites


def side_by_side(cells: list[tuple[str, str, int]]) -> None:
    print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'agent':12s} {'env':34s} {'T':>5s} {'harness s':>10s} {'sandbox s':>10s} equal")
    for agent, env, T in cells:
        spec = build_cells([env], [AgentSpec(agent)], [0], horizon=T, resolution=T)[0]
        t0 = time.perf_counter()
        res = run_cell(spec)
        t_h = time.perf_counter() - t0
        want = res.records.sort_values("t")["regret"].to_numpy()
        t0 = time.perf_counter()
        out = rerun_cells(resolve_agent(agent)[0], {}, [RerunCell(env, 0, horizon=T)])[0]
        t_s = time.perf_counter() - t0
        same = out.ok and np.array_equal(want, out.regret)
        print(f"{agent:12s} {env:34s} {T:5d} {t_h:10.2f} {t_s:10.2f} {same}")
    t0 = time.perf_counter()
    rerun_cells(resolve_agent("random")[0], {}, [RerunCell("hbo/RKHS-SE-Spike-v0", 0, horizon=1)])
    print(f"sandboxed process start-up + 1-round episode: {time.perf_counter() - t0:.2f} s")
    start_and_close()


def start_and_close(reps: int = 5) -> None:
    """Start and close of one sandboxed agent process (min of ``reps``), and beside it the
    normal interpreter exit the child made before (a fresh ``python -I`` with the child's
    imports, timed from its ``exit`` to its end): the child now leaves with ``os._exit``
    once its output is flushed, and ``close`` waited for that teardown at every agent."""
    import subprocess
    import sys

    from hbo_envs.leaderboard.sandbox import AgentProcess

    starts, closes = [], []
    for _ in range(reps):
        proc = AgentProcess("agents.baselines.uniform:RandomAgent", {})
        t0 = time.perf_counter()
        proc.start()
        starts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        proc.close()
        closes.append(time.perf_counter() - t0)
    code = (
        "import sys, time; from agents.checks import check_agent; import agents; "
        "print(time.perf_counter(), flush=True); sys.exit(0)"
    )
    teardown = []
    for _ in range(reps):
        p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
        teardown.append(time.perf_counter() - float(p.stdout.split()[-1]))
    print(
        f"sandboxed process: start {min(starts):.3f} s, close {min(closes):.3f} s "
        f"(os._exit); a normal interpreter exit with the child's imports: "
        f"{min(teardown):.3f} s (min of {reps})"
    )


def recorded_costs() -> None:
    root = leaderboards_root()
    for sid in list_suites(root):
        rows = []
        for p in sorted((root / sid / "submissions").glob("baseline-*.json")):
            rec = (json.loads(p.read_text()).get("verification") or {}).get("verifier") or {}
            if "wall_s" in rec:
                rows.append((p.stem.removeprefix("baseline-"), rec["wall_s"], rec.get("workers")))
        if not rows:
            print(f"{sid}: no reference records")
            continue
        total = sum(r[1] for r in rows)
        print(f"{sid}: full verification of {len(rows)} references: {total:.0f} s in all")
        for name, wall, workers in rows:
            print(f"  {name:28s} {wall:8.1f} s  ({workers} workers)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cells = [("gp-ucb", "hbo/RKHS-SE-StudentT-v0", 5000), ("random", "hbo/RKHS-SE-Spike-v0", 1000)]
    if not args.quick:
        cells += [
            ("tgp-ucb", "hbo/RKHS1D-SymPareto-eps02-v0", 1000),
            ("gp-ucb", "hbo/Corrupted-SE-Adaptive-v0", 1000),
        ]
    side_by_side(cells)
    recorded_costs()


main()
