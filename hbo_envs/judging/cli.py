"""``hbo-bench archive build | verify | status | render``: the command line of the judging
layer, its top (it may import every layer below: :mod:`hbo_envs.judging`)."""

from __future__ import annotations

from typing import Any

from hbo_envs.harness.compare import DEFAULT_RTOL
from hbo_envs.judging import archive as A
from hbo_envs.judging import publish
from hbo_envs.judging.experiments import EXPERIMENTS

__all__ = ["run"]


def run(args: Any) -> int:
    """Dispatch ``hbo-bench archive ...``; returns the exit code."""
    cmd = args.archive_command
    if cmd == "build":
        counts = A.build(
            args.names,
            root=args.archive,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            batch=args.batch,
            max_cells=args.max_cells,
        )
        print(
            f"{counts['run']} cell(s) run ({counts['stale_rerun']} of them stale), "
            f"{counts['failed']} failed, {counts['skipped_done']} already archived"
            + (
                f"; {counts['undecidable']} claim verdict(s) cannot be decided at the archive's "
                "seed count (listed above)"
                if counts.get("undecidable")
                else ""
            )
        )
        return 1 if counts["failed"] else 0
    if cmd == "verify":
        rtol = DEFAULT_RTOL if args.rtol is None else args.rtol
        rep = A.verify(args.names, sample=args.sample, seed=args.seed, root=args.archive, rtol=rtol)
        print(
            f"{len(rep.checked)} cell(s) re-run, {len(rep.mismatches)} differ "
            f"(actions compared exactly, numbers within rtol {rep.rtol:g}); "
            f"{len(rep.within_tolerance)} equal within the tolerance but not bit for bit"
            + (f"; {len(rep.forks)} diverged after agreeing (a fork)" if rep.forks else "")
            + (f"; {rep.no_digest} without an archived action digest" if rep.no_digest else "")
            + (f"; {rep.stale_skipped} stale cell(s) not compared" if rep.stale_skipped else "")
        )
        for n, why in rep.skipped.items():
            print(f"  not re-run: {n}: {why}")
        for k, why in rep.mismatches.items():
            print(f"  DIFFERS {k}: {why}")
        for k, why in rep.forks.items():
            if k not in rep.mismatches:
                print(f"  DIVERGES (accepted: a fork on this CPU) {k}: {why}")
        return 0 if rep.ok else 1
    if cmd == "status":
        corrupt = 0
        for n in args.names or list(EXPERIMENTS):
            try:
                st = A.status(n, args.archive)
            except A.ArchiveIntegrityError as exc:  # a file does not match its checksum
                print(f"{n:20s} CORRUPT: {exc}")
                corrupt += 1
                continue
            except OSError as exc:  # a real-data experiment without its data
                print(f"{n:20s} cannot plan: {exc}")
                continue
            proto = A.protocol_used(EXPERIMENTS[n])
            what = "full protocol" if proto["full"] else f"reduced: {proto['reason']}"
            print(
                f"{n:20s} {len(st['done']):5d} archived {len(st['stale']):5d} stale "
                f"{len(st['missing']):5d} missing  ({what})"
            )
            for line in A.undecidable(n):
                print(f"  {n}: {line}")
        return 1 if corrupt else 0
    changed = publish.render_all(root=args.archive, check=args.check)
    for path in changed:
        print(f"{'differs' if args.check else 'wrote'}: {path}")
    if args.check and changed:
        print("run `hbo-bench archive render` to regenerate them")
        return 1
    return 0
