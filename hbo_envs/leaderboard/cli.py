"""``hbo-bench leaderboard ...``: submit, validate, verify, render, baselines, list, schema.

Examples::

    hbo-bench leaderboard list
    hbo-bench leaderboard submit --suite heavy-tailed-v0 --agent mypkg.mod:MyAgent \\
        --param lr=0.1 --name my-agent --out my-agent.json --workers 2
    hbo-bench leaderboard validate my-agent.json           # never runs submitted code
    hbo-bench leaderboard verify my-agent.json --workers 2 --record   # RUNS SUBMITTED CODE
    hbo-bench leaderboard audit my-agent.json --cells 3    # re-run 3 recorded cells
    hbo-bench leaderboard gate --since origin/main --workers 2  # CI: re-run changed files
    hbo-bench leaderboard render heavy-tailed-v0           # README.md, regret.svg, index.html
    hbo-bench leaderboard baselines heavy-tailed-v0 corrupted-v0 --workers 2  # references
    hbo-bench leaderboard baselines tails-v0 --config tuned --agent gp-ucb --force

``verify`` re-runs the agent on every public seed and ``--hidden-seeds`` secret hidden ones
per env, in a sandbox (``--time-limit``: wall seconds of the whole run; ``--memory-mb``: total
memory of all the agent's processes); ``baselines`` computes the suite's own reference entries
(one sandboxed run each, per configuration ``paper`` / ``tuned`` of ``[baselines] configs``),
skipping those whose stored file is current (``reference_current``) unless ``--force``;
``gate`` re-verifies, in full, every submission file changed since a
revision and fails when a ``verified`` record is not the suite's own re-run (CI runs it).

Exit status: 0 on success (``validate``: valid; ``verify``: verified), 1 when a submission
is invalid / not verified / flagged, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["run"]


def _limits(args: argparse.Namespace) -> Any:
    from hbo_envs.leaderboard.sandbox import SandboxLimits

    return SandboxLimits(wall_s=args.time_limit, memory_mb=args.memory_mb)


def _params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for it in items:
        k, eq, v = it.partition("=")
        if not eq or not k.strip():
            raise ValueError(f"The '--param' value must look like key=value. Got {it!r} instead.")
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def run(args: argparse.Namespace) -> int:
    """Dispatch ``hbo-bench leaderboard <command>``."""
    return _HANDLERS[args.lb_command](args)


def _submit(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import submit, write_submission

    sub = submit(
        args.suite,
        args.agent,
        _params(args.param),
        display_name=args.name,
        root=args.root,
        backend=args.backend,
        workers=args.workers,
        address=args.address,
        work_dir=args.work_dir,
    )
    write_submission(args.out, sub)
    print(f"wrote {args.out} ({sub['agent']['display_name']} on {sub['suite']['id']})")
    for e, a in sub["aggregates"]["per_env"].items():
        print(f"  {e:36s} IQM R_T = {a['iqm']:.4g} [{a['ci_low']:.4g}, {a['ci_high']:.4g}]")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard.verify import validate_submission

    bad = 0
    for f in args.files:
        rep = validate_submission(f, root=args.root)
        print(f"{f}: {'valid' if rep.ok else 'INVALID'}")
        for line in str(rep).splitlines() if str(rep) != "ok" else []:
            print(f"  {line}")
        bad += not rep.ok
    return 1 if bad else 0


def _verify(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import verify

    rep = verify(
        args.file,
        hidden=args.hidden_seeds,
        rtol=args.rtol,
        root=args.root,
        workers=args.workers,
        limits=_limits(args),
        record_to=args.file if args.record else None,
    )
    print(f"{args.file}: {rep.status} ({len(rep.hidden_seeds)} secret hidden seeds)")
    for m in rep.messages:
        print(f"  {m}")
    if rep.status != "invalid":
        print(f"  re-run wall time {rep.wall_s:.1f} s with {args.workers} worker(s)")
    return 0 if rep.ok else 1


def _audit(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard.verify import audit

    bad = 0
    for f in args.files:
        ok, msgs = audit(
            f,
            cells=args.cells,
            seed=args.seed,
            root=args.root,
            workers=args.workers,
            limits=_limits(args),
        )
        print(f"{f}: {'record reproduced' if ok else 'AUDIT FAILED'}")
        for m in msgs:
            print(f"  {m}")
        bad += not ok
    return 1 if bad else 0


def _gate(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard.verify import changed_submissions, gate

    files = list(args.files)
    if args.since is not None:
        files += [str(p) for p in changed_submissions(args.since, args.root)]
    if not files:
        print("gate: no submission file changed" + (f" since {args.since}" if args.since else ""))
        return 0
    ok, msgs = gate(
        files,
        hidden=args.hidden_seeds,
        root=args.root,
        workers=args.workers,
        limits=_limits(args),
        references=args.references,
    )
    for m in msgs:
        print(m)
    print("gate: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def _render(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard.render import render_index, render_suite
    from hbo_envs.leaderboard.suite import SuiteError, list_suites

    names = args.suites or list_suites(args.root)
    for s in names:
        try:
            for p in render_suite(s, args.root, repository=args.repository):
                print(f"wrote {p}")
        except SuiteError as exc:
            if args.suites:
                raise
            print(f"skipped {s}: {exc}")
    print(f"wrote {render_index(args.root)}")
    return 0


def _baselines(args: argparse.Namespace) -> int:
    status = 0
    for sid in args.suites:
        status |= _baselines_of(sid, args)
    return status


def _baselines_of(sid: str, args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import load_submission, load_suite, write_submission
    from hbo_envs.leaderboard.render import render_index, render_suite
    from hbo_envs.leaderboard.verify import make_reference, reference_current

    suite = load_suite(sid, args.root)
    reason = suite.unavailable_reason()
    if reason:
        raise ValueError(f"Suite {suite.id!r} is unavailable here: {reason}.")
    names, missing = suite.baseline_names()
    refs = suite.references()
    if args.agent:
        unknown = [a for a in args.agent if a not in names]
        if unknown:
            raise ValueError(
                f"The '--agent' values must be reference agents of {suite.id!r} "
                f"({', '.join(names)}). Got {unknown!r} instead."
            )
        refs = [r for r in refs if r.name in args.agent]
    if args.config:
        refs = [r for r in refs if r.config in args.config]
    if missing:
        print(f"not available on this installation (no baseline): {', '.join(missing)}")
    status = 0
    limits = _limits(args)
    for ref in refs:
        out = suite.folder / "submissions" / ref.file
        label = f"{ref.name} [{ref.config}]"
        if not args.force:
            try:
                old = load_submission(out) if out.is_file() else None
            except ValueError as exc:
                old, why = None, f"the file cannot be read: {exc}"
            else:
                why = reference_current(suite, ref, old)
            if why is None:
                print(f"{label}: current, skipped ({out.name}; --force recomputes it)")
                continue
            print(f"{label}: to compute: {why}")
        print(f"{label}: running on {len(suite.envs)} envs ...", flush=True)
        try:
            sub, rep = make_reference(
                suite,
                ref.name,
                config=ref.config,
                hidden=args.hidden_seeds,
                workers=args.workers,
                limits=limits,
            )
        except RuntimeError as exc:  # e.g. an agent that refuses these problems
            print(f"{label}: NO BASELINE, the runs failed: {str(exc).splitlines()[0]}")
            print(f"  (add {ref.name!r} to [baselines] exclude in suite.toml if it cannot run")
            print("  here)")
            status = 1
            continue
        write_submission(out, sub)
        print(f"{label}: {rep.status} in {rep.wall_s:.1f} s -> {out}")
        for m in rep.messages:
            print(f"  {m}")
        status |= rep.status not in ("verified", "flagged")
    for p in render_suite(suite):
        print(f"wrote {p}")
    print(f"wrote {render_index(args.root)}")
    return 1 if status else 0


def _list(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import list_suites, load_suite

    for sid in list_suites(args.root):
        s = load_suite(sid, args.root)
        subs = s.folder / "submissions"
        n = len(list(subs.glob("*.json"))) if subs.is_dir() else 0
        reason = s.unavailable_reason()
        state = "available" if not reason else "UNAVAILABLE"
        print(f"{sid:20s} {state:12s} {len(s.envs)} envs, {n} submission file(s)  {s.title}")
        for e, why in s.availability().items():
            if why:
                print(f"    {e}: {why}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import SUBMISSION_SCHEMA

    print(json.dumps(SUBMISSION_SCHEMA, indent=2))
    return 0


_HANDLERS = {
    "submit": _submit,
    "validate": _validate,
    "verify": _verify,
    "audit": _audit,
    "gate": _gate,
    "render": _render,
    "baselines": _baselines,
    "list": _list,
    "schema": _schema,
}
