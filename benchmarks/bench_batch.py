"""Seeds in one process: Chowdhury–Gopalan's full Fig. 1(a) protocol, batched vs one seed a task.

Prints, in one run:

1. **Per agent, one process** (BLAS on one thread): the seconds to run the protocol's
   seeds of each batchable agent one after another (:func:`run_cell` per seed, today's
   per-seed loop) and as one batch (:func:`run_batch`), their ratio, and whether the
   regret of every seed is bit-identical.
2. **The whole protocol** (``hbo-bench reproduce cg2019-fig1a``'s cells: 20 seeds x
   2*10^4 rounds, the seven agents TGP-UCB, ATA-GP-UCB-QFF, ATA-GP-UCB-Nyström, GP-UCB,
   CA-TGP-UCB, MoM-GP-UCB and the uniform-random floor) on ``--workers`` processes
   (default 2), wall-clock seconds with ``batch=False`` (every cell a task: today's
   per-seed loop) and ``batch=True``, and whether the two give identical regret.
   ATA-GP-UCB and MoM-GP-UCB are not batched (:data:`agents.batch.BATCHED`); they run
   one seed a task beside the batches, on the other worker.

3. **Batch sizes** (``--sizes`` alone): for GP-UCB on problems of 100 to 625 arms, one
   process, the seconds of ``B`` seeds one by one and as one batch, for ``B`` from 2 to 16,
   beside the ``(least, most)`` runs the harness plans a batch with
   (:func:`agents.batch.batch_sizes`): where the measured speed-up crosses 1 is what
   ``BATCH_MIN_WORK`` and ``BATCH_CACHE_BYTES`` encode.

``--quick``: 4 seeds x 2000 rounds (a smoke run; with ``--sizes``, 300 rounds). Not a
test: timings depend on the machine and its load; compare the columns of one run. The
issue's target is section 2's batched wall time <= 120 s on 2 cores.

Run: ``python benchmarks/bench_batch.py [--quick] [--workers 2] [--batched-only | --sizes]``
(``--batched-only``: section 2's batched run alone, the issue's measurement).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import hbo_envs  # noqa: F401  (registers the envs)
from agents.batch import BATCHED
from hbo_envs.harness.cell import run_batch, run_cell
from hbo_envs.harness.runner import build_cells, run_sweep
from hbo_envs.judging.experiments import EXPERIMENTS


def _cells(seeds: int, horizon: int) -> list:
    exp = EXPERIMENTS["cg2019-fig1a"]
    specs, _ = exp.agent_specs()
    # The protocol: the seven agents of the paper's figure and the suite's extras
    # (and the floor), not the tuned rows the experiment also runs.
    seven = {a.label for a in exp.paper + exp.extra} | {"random"}
    specs = [s for s in specs if s.label in seven]
    return build_cells(list(exp.envs), specs, range(seeds), horizon=horizon)


def _final(records: pd.DataFrame) -> pd.Series:
    last = records.sort_values("t").groupby(["agent", "seed"])["regret"].last()
    return last.sort_index()


def per_agent(seeds: int, horizon: int) -> None:
    print(f"\n1. one process, {seeds} seeds x {horizon} rounds, per batchable agent")
    print(f"{'agent':14s} {'per-seed loop s':>16s} {'batch s':>8s} {'speed-up':>9s}  identical")
    cells = _cells(seeds, horizon)
    with threadpool_limits(1):
        for label in dict.fromkeys(c.agent.label for c in cells):
            group = [c for c in cells if c.agent.label == label]
            if type(group[0].agent.build()) not in BATCHED:
                continue
            t0 = time.perf_counter()
            one = [run_cell(c) for c in group]
            t1 = time.perf_counter()
            bat = run_batch(group)
            t2 = time.perf_counter()
            same = all(
                np.array_equal(a.records["regret"], b.records["regret"])
                for a, b in zip(one, bat, strict=True)
            )
            print(
                f"{label:14s} {t1 - t0:16.2f} {t2 - t1:8.2f} {(t1 - t0) / (t2 - t1):8.2f}x  {same}"
            )


def protocol(seeds: int, horizon: int, workers: int, modes: tuple[bool, ...]) -> None:
    cells = _cells(seeds, horizon)
    agents_ = sorted({c.agent.label for c in cells})
    print(
        f"\n2. the protocol: {len(cells)} cells ({len(agents_)} agents x {seeds} seeds x "
        f"{horizon} rounds), {workers} workers"
    )
    # Start the workers and build the env in them first: neither mode pays for that below.
    run_sweep(_cells(1, 10), workers=workers, progress=False, batch=False)
    out = {}
    for batch in modes:
        t0 = time.perf_counter()
        res = run_sweep(cells, workers=workers, progress=False, batch=batch)
        wall = time.perf_counter() - t0
        if res.failures:
            raise SystemExit(f"{len(res.failures)} cells failed: {res.failures[0]['traceback']}")
        out[batch] = (wall, _final(res.records))
        print(f"   batch={batch!s:5s}: {wall:7.1f} s wall")
    if len(out) == 2:
        same = out[False][1].equals(out[True][1])
        print(f"   speed-up {out[False][0] / out[True][0]:.2f}x; final regret identical: {same}")


#: Problems of section 3: (env id, number of arms).
SIZE_ENVS = (
    ("hbo/RKHS-SE-StudentT-v0", 100),
    ("hbo/Corrupted-Fig1-v0", 201),
    ("hbo/Griewank2D-SymPareto-eps02-v0", 400),
    ("hbo/HS-Branin-None-v0", 625),
)


def sizes(horizon: int) -> None:
    from agents.batch import batch_sizes
    from hbo_envs.harness.specs import AgentSpec

    print(f"\n3. batch sizes: GP-UCB, {horizon} rounds, one process (best of 3)")
    print(f"{'env':36s} {'n':>4s} {'planned':>8s} {'B':>3s} {'one by one s':>13s} "
          f"{'batch s':>8s} {'speed-up':>9s}")  # fmt: skip
    with threadpool_limits(1):
        for env_id, n in SIZE_ENVS:
            least, most = batch_sizes(n)
            for B in (2, 4, 8, 16):
                cells = build_cells([env_id], [AgentSpec("gp-ucb")], range(B), horizon=horizon)
                one = bat = float("inf")
                for _ in range(3):
                    t0 = time.perf_counter()
                    for c in cells:
                        run_cell(c)
                    t1 = time.perf_counter()
                    run_batch(cells)
                    t2 = time.perf_counter()
                    one, bat = min(one, t1 - t0), min(bat, t2 - t1)
                planned = "batch" if least <= B <= most else "apart"
                print(
                    f"{env_id:36s} {n:4d} {planned:>8s} {B:3d} {one:13.2f} {bat:8.2f} "
                    f"{one / bat:8.2f}x"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4 seeds x 2000 rounds")
    ap.add_argument("--workers", type=int, default=2)
    only = ap.add_mutually_exclusive_group()
    only.add_argument(
        "--batched-only",
        action="store_true",
        help="section 2 only, batched only (the issue's target: the protocol's wall time)",
    )
    only.add_argument(
        "--sizes", action="store_true", help="section 3 only: the speed-up per batch size and n"
    )
    args = ap.parse_args()
    if args.workers < 1:
        ap.error(f"--workers must be >= 1; got {args.workers}")
    seeds, horizon = (4, 2000) if args.quick else (20, 20_000)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.sizes:
        sizes(300 if args.quick else 2000)
        return
    if args.batched_only:
        protocol(seeds, horizon, args.workers, (True,))
        return
    per_agent(seeds, horizon)
    protocol(seeds, horizon, args.workers, (False, True))


if __name__ == "__main__":
    main()
