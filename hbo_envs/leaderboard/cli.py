"""``hbo-bench leaderboard ...``: submit, validate, verify, render, baselines, list, schema.

Examples::

    hbo-bench leaderboard list
    hbo-bench leaderboard submit --suite heavy-tailed-v0 --agent mypkg.mod:MyAgent \\
        --param lr=0.1 --name my-agent --out my-agent.json --workers 2
    hbo-bench leaderboard validate my-agent.json           # never runs submitted code
    hbo-bench leaderboard verify my-agent.json --sample 2 --fresh-seeds 2 --record
    hbo-bench leaderboard render heavy-tailed-v0           # README.md, regret.svg, index.html
    hbo-bench leaderboard baselines heavy-tailed-v0        # every reference agent, verified

Exit status: 0 on success (``validate``: valid; ``verify``: verified), 1 when a submission
is invalid / not verified / flagged, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_parser", "run"]


def _exec(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=int, default=None, help="processes (1: in-process)")
    p.add_argument("--address", default=None, help="Ray address")


def add_parser(sub: Any) -> None:
    """Add the ``leaderboard`` command to the ``hbo-bench`` subparsers ``sub``."""
    lb = sub.add_parser("leaderboard", help="suites, submissions, verification, rankings")
    lb.add_argument("--root", default=None, help="leaderboards folder (default: the repo's)")
    c = lb.add_subparsers(dest="lb_command", required=True)

    s = c.add_parser("submit", help="run an agent on a suite and write a submission file")
    s.add_argument("--suite", required=True)
    s.add_argument("--agent", required=True, help="module:Class (or a registered name)")
    s.add_argument("--param", action="append", default=[], help="k=v (JSON value), repeatable")
    s.add_argument("--name", default=None, help="display name (default: the agent's label)")
    s.add_argument("--out", required=True, help="submission JSON file to write")
    s.add_argument("--work-dir", default=None, help="resumable results directory for the runs")
    _exec(s)

    v = c.add_parser("validate", help="check submission files (never runs their code)")
    v.add_argument("files", nargs="+")

    r = c.add_parser("verify", help="re-run a submission's agent (RUNS SUBMITTED CODE)")
    r.add_argument("file")
    r.add_argument("--sample", type=int, default=2, help="submitted seeds to re-run")
    r.add_argument("--fresh-seeds", type=int, default=2, help="fresh seeds to run")
    r.add_argument("--seed", type=int, default=None, help="seed for choosing the seeds")
    r.add_argument("--rtol", type=float, default=1e-9)
    r.add_argument("--record", action="store_true", help="write the outcome into the file")
    _exec(r)

    d = c.add_parser("render", help="write the README table, plot and HTML pages")
    d.add_argument("suites", nargs="*", help="suite ids (default: all)")

    b = c.add_parser("baselines", help="submit + verify every available reference agent")
    b.add_argument("suite")
    b.add_argument("--agent", action="append", default=None, help="only these (repeatable)")
    b.add_argument("--sample", type=int, default=2)
    b.add_argument("--fresh-seeds", type=int, default=2)
    _exec(b)

    c.add_parser("list", help="suites, their availability here and their submissions")
    c.add_parser("schema", help="print the submission JSON schema")


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
    from hbo_envs.leaderboard import validate

    bad = 0
    for f in args.files:
        rep = validate(f, root=args.root)
        print(f"{f}: {'valid' if rep.ok else 'INVALID'}")
        for line in str(rep).splitlines() if str(rep) != "ok" else []:
            print(f"  {line}")
        bad += not rep.ok
    return 1 if bad else 0


def _verify(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import verify

    rep = verify(
        args.file,
        sample=args.sample,
        fresh=args.fresh_seeds,
        seed=args.seed,
        rtol=args.rtol,
        root=args.root,
        backend=args.backend,
        workers=args.workers,
        address=args.address,
        record_to=args.file if args.record else None,
    )
    print(f"{args.file}: {rep.status} (verification seed {rep.verification_seed})")
    for m in rep.messages:
        print(f"  {m}")
    return 0 if rep.ok else 1


def _render(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard.render import render_index, render_suite
    from hbo_envs.leaderboard.suite import SuiteError, list_suites

    names = args.suites or list_suites(args.root)
    for s in names:
        try:
            for p in render_suite(s, args.root):
                print(f"wrote {p}")
        except SuiteError as exc:
            if args.suites:
                raise
            print(f"skipped {s}: {exc}")
    print(f"wrote {render_index(args.root)}")
    return 0


def _baselines(args: argparse.Namespace) -> int:
    from hbo_envs.leaderboard import load_suite, submit, verify, write_submission
    from hbo_envs.leaderboard.render import render_index, render_suite

    suite = load_suite(args.suite, args.root)
    reason = suite.unavailable_reason()
    if reason:
        raise ValueError(f"Suite {suite.id!r} is unavailable here: {reason}.")
    names, missing = suite.baseline_names()
    if args.agent:
        names = [n for n in names if n in args.agent]
    if missing:
        print(f"not available on this installation (no baseline): {', '.join(missing)}")
    status = 0
    for name in names:
        out = suite.folder / "submissions" / f"baseline-{name}.json"
        print(f"{name}: submitting ...", flush=True)
        try:
            sub = submit(
                suite, name, backend=args.backend, workers=args.workers, address=args.address
            )
        except (RuntimeError, ValueError) as exc:  # e.g. an agent that refuses these problems
            print(f"{name}: NO BASELINE, the runs failed: {str(exc).splitlines()[0]}")
            print(f"  (add {name!r} to [baselines] exclude in suite.toml if it cannot run here)")
            status = 1
            continue
        write_submission(out, sub)
        rep = verify(
            sub,
            sample=args.sample,
            fresh=args.fresh_seeds,
            root=args.root,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            record_to=out,
        )
        print(f"{name}: {rep.status} -> {out}")
        for m in rep.messages:
            print(f"  {m}")
        status |= not rep.ok
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
    "render": _render,
    "baselines": _baselines,
    "list": _list,
    "schema": _schema,
}
