"""The ``hbo-bench`` command line: run, summary, plot, reproduce, list.

Examples::

    hbo-bench run --env hbo/RKHS-SE-StudentT-v0 --agent tgp-ucb --agent gp-ucb \\
        --seeds 0-19 --horizon 20000 --out runs/fig1a
    hbo-bench run --env hbo/GPBandit-v0 --agent 'mypkg.agents:MyAgent[lr=0.1]' \\
        --seeds 0-9 --backend ray --out runs/mine
    hbo-bench summary runs/fig1a
    hbo-bench plot runs/fig1a --format png svg
    hbo-bench reproduce cg2019-fig1a --quick
    hbo-bench list

Exit status: 0 when every cell finished, 1 when some cell failed (a failure summary is
printed; rerunning the same command retries only unfinished cells), 2 on a usage error
(a bad option or value: the message names it, the value and what is allowed) or a
file-system fault (the message names the path and the fix), 130 when interrupted
(finished cells are kept; rerun to resume).

Seeds have one syntax in every subcommand: ``--seeds 0-19,25`` (a list of ranges) or
``--n-seeds 20`` (seeds 0..19).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

log = logging.getLogger("hbo_envs.cli")

#: Loggers the ``--verbose`` / ``--quiet`` options set (the two packages' roots).
LOGGERS = ("hbo_envs", "agents")


def _version() -> str:
    from hbo_envs import __version__

    return __version__


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A StreamHandler on whatever ``sys.stderr`` is when a record is emitted (so a
    redirected or captured stderr gets the log, not the stream of the first call)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _configure_logging(verbose: int, quiet: bool) -> None:
    """``logging`` for the two packages: WARNING by default, ``-v`` INFO, ``-vv`` DEBUG,
    ``--quiet`` ERROR; one stderr handler (added once, so ``main`` can be called again)."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO)[min(verbose, 1)]
    if verbose >= 2:
        level = logging.DEBUG
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(level)
        # a logging.config.dictConfig earlier in the process (another tool run in-process)
        # disables every logger that existed then; the flags asked for these logs
        for child in [name] + [
            n for n in logging.root.manager.loggerDict if n.startswith(name + ".")
        ]:
            logging.getLogger(child).disabled = False
        if not any(getattr(h, "_hbo_cli", False) for h in logger.handlers):
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter("hbo-bench: %(levelname)s: %(message)s"))
            handler._hbo_cli = True  # type: ignore[attr-defined]
            logger.addHandler(handler)


_BACKEND_HELP = "where cells run: local processes or a Ray cluster (default: local)"


def _add_exec_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("local", "ray"), default="local", help=_BACKEND_HELP)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local: processes (default: CPU count; 1 runs in-process); ray: max tasks in flight",
    )
    p.add_argument("--address", default=None, help="Ray address (default: $RAY_ADDRESS or local)")
    p.add_argument("--fresh", action="store_true", help="discard existing results in --out")
    p.add_argument(
        "--no-batch",
        action="store_true",
        help="run every seed alone (default, local backend: the seeds of an agent that "
        "allows it run as one vectorized batch where enough of them make it pay, at least "
        "ceil(1000 / arms), with bit-identical numbers; agent_time is then each run's "
        "share of the batch's)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress output (default: a bar on a TTY, otherwise a progress line every "
        "$HBO_PROGRESS_INTERVAL seconds on stderr)",
    )


def _add_seed_options(g: Any, default: str) -> None:
    """The one seed syntax of every subcommand: ``--seeds 0-19,25`` or ``--n-seeds N``."""
    g.add_argument(
        "--seeds",
        default=None,
        help=f"seeds, e.g. '0-19' or '0,3,7-8' (default {default}; at most 100000)",
    )
    g.add_argument("--n-seeds", type=int, default=None, help="seeds 0 .. N-1")


def _seed_arg(args: argparse.Namespace) -> Any:
    """``--seeds`` (a range/list) or ``--n-seeds`` (a count); None when neither is given."""
    from hbo_envs.harness import parse_seeds
    from hbo_envs.harness.specs import MAX_SEEDS

    if args.n_seeds is not None:
        if not 1 <= args.n_seeds <= MAX_SEEDS:
            raise UsageError(
                f"--n-seeds must be an integer in [1, {MAX_SEEDS}]. Got {args.n_seeds}."
            )
        return args.n_seeds
    if args.seeds is not None:
        return parse_seeds(args.seeds)
    return None


def _lb_exec(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("local", "ray"), default="local", help=_BACKEND_HELP)
    p.add_argument("--workers", type=int, default=None, help="processes (1: in-process)")
    p.add_argument("--address", default=None, help="Ray address")


def _lb_sandbox(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, default=1, help="sandboxed agent processes")
    p.add_argument(
        "--time-limit", type=float, default=7200.0, help="wall seconds of the whole re-run"
    )
    p.add_argument(
        "--memory-mb", type=int, default=4096, help="total memory of the agent's processes"
    )


def _add_leaderboard_parser(sub: Any) -> None:
    """Add the ``leaderboard`` command to the ``hbo-bench`` subparsers ``sub``."""
    lb = sub.add_parser("leaderboard", help="suites, submissions, verification, rankings")
    lb.add_argument("--root", default=None, help="leaderboards folder (default: the repo's)")
    c = lb.add_subparsers(dest="lb_command", required=True)

    s = c.add_parser("submit", help="run an agent on a suite and write a submission file")
    s.add_argument("--suite", required=True, help="suite id (hbo-bench leaderboard list)")
    s.add_argument("--agent", required=True, help="module:Class (or a registered name)")
    s.add_argument("--param", action="append", default=[], help="k=v (JSON value), repeatable")
    s.add_argument("--name", default=None, help="display name (default: the agent's label)")
    s.add_argument("--out", required=True, help="submission JSON file to write")
    s.add_argument("--work-dir", default=None, help="resumable results directory for the runs")
    _lb_exec(s)

    v = c.add_parser("validate", help="check submission files (never runs their code)")
    v.add_argument("files", nargs="+", help="submission JSON files")

    r = c.add_parser("verify", help="re-run a submission's agent (RUNS SUBMITTED CODE)")
    r.add_argument("file", help="submission JSON file")
    r.add_argument(
        "--hidden-seeds", "--fresh-seeds", type=int, default=4, help="hidden seeds per env"
    )
    r.add_argument(
        "--rtol",
        type=float,
        default=1e-9,
        help="relative tolerance of the public-seed comparison, in (0, 1e-6] (default 1e-9)",
    )
    r.add_argument("--record", action="store_true", help="write the record into the file")
    _lb_sandbox(r)

    a = c.add_parser("audit", help="re-run sample cells of a verification record (RUNS CODE)")
    a.add_argument("files", nargs="+", help="verified submission JSON files")
    a.add_argument("--cells", type=int, default=2, help="cells to re-run per file")
    a.add_argument("--seed", type=int, default=None, help="seed for choosing the cells")
    _lb_sandbox(a)

    g = c.add_parser("gate", help="re-verify changed submission files in full (RUNS CODE; CI)")
    g.add_argument("files", nargs="*", help="submission files (besides --since's)")
    g.add_argument("--since", default=None, help="git revision: every file changed since it")
    g.add_argument("--hidden-seeds", type=int, default=4, help="hidden seeds per env")
    g.add_argument(
        "--references",
        choices=("full", "public"),
        default="full",
        help="'public': re-run the suites' own reference files on every public seed without a "
        "fresh hidden draw (submitters' files are always re-verified in full)",
    )
    _lb_sandbox(g)

    d = c.add_parser("render", help="write the README table, plot and HTML pages")
    d.add_argument("suites", nargs="*", help="suite ids (default: all)")
    d.add_argument(
        "--repository",
        default=None,
        metavar="URL",
        help="https URL of the repository the entry pages link agent code into "
        "(default: [site] repository of leaderboards/site.toml, else "
        "https://github.com/hbo-bench/hbo-bench)",
    )

    b = c.add_parser("baselines", help="compute the suite's own reference entries")
    b.add_argument("suites", nargs="+", metavar="suite", help="suite ids (one or more)")
    b.add_argument("--agent", action="append", default=None, help="only these (repeatable)")
    b.add_argument(
        "--config",
        action="append",
        choices=("paper", "tuned"),
        default=None,
        help="only references in this configuration (repeatable; default: the suite's "
        "[baselines] configs)",
    )
    b.add_argument(
        "--force",
        action="store_true",
        help="recompute references whose stored file is current (same suite, env spec "
        "hashes, agent module and configuration)",
    )
    b.add_argument("--hidden-seeds", type=int, default=4, help="hidden seeds per env")
    _lb_sandbox(b)

    c.add_parser("list", help="suites, their availability here and their submissions")
    c.add_parser("schema", help="print the submission JSON schema")


def _add_archive_parser(sub: Any) -> None:
    """``hbo-bench archive build|verify|status|render`` (see the module docstring)."""
    p = sub.add_parser("archive", help="build, verify and publish the results archive")
    asub = p.add_subparsers(dest="archive_command", required=True)
    b = asub.add_parser("build", help="run the archive's missing and stale cells (resumable)")
    b.add_argument("names", nargs="*", help="experiments (default: all, see reproduce --list)")
    b.add_argument("--max-cells", type=int, default=None, help="stop after this many cells")
    b.add_argument("--batch", type=int, default=40, help="cells merged into the archive at once")
    v = asub.add_parser(
        "verify", help="re-run a random sample of cells: actions exactly, numbers within rtol"
    )
    v.add_argument("names", nargs="*", help="experiments (default: all)")
    v.add_argument("--sample", type=int, default=3, help="cells per experiment")
    v.add_argument("--seed", type=int, default=None, help="fix the random draw of cells")
    v.add_argument(
        "--rtol",
        type=float,
        default=None,
        help="relative tolerance of the numbers, in (0, 1e-6] (default 1e-9); actions are "
        "compared exactly",
    )
    s = asub.add_parser("status", help="archived / stale / missing cells per experiment")
    s.add_argument("names", nargs="*", help="experiments (default: all)")
    r = asub.add_parser("render", help="regenerate every published block from the archive")
    r.add_argument("--check", action="store_true", help="only check; exit 1 if a block differs")
    for q in (b, v, s, r):
        q.add_argument("--archive", default=None, help="archive directory (results/archive)")
    b.add_argument("--backend", choices=("local", "ray"), default="local", help=_BACKEND_HELP)
    b.add_argument("--workers", type=int, default=None, help="local processes / Ray tasks")
    b.add_argument("--address", default=None, help="Ray address (default $RAY_ADDRESS)")


def _add_tune_parser(sub: Any) -> None:
    """``hbo-bench tune AGENT --family FAMILY`` (issue 35; :mod:`hbo_envs.harness.tuning`)."""
    t = sub.add_parser("tune", help="tune an agent's width on a tuning family")
    t.add_argument("agent", help="a registered agent name or an import string module:Class")
    t.add_argument("--family", required=True, help="a tuning family (cg-synthetic, tails)")
    t.add_argument("--param", default=None, help="the parameter to search (default: declared)")
    t.add_argument("--values", default=None, help="comma-separated values, with --param")
    t.add_argument("--seeds", type=int, default=None, help="tuning seeds (default: family's)")
    t.add_argument("--horizon", type=int, default=None, help="rounds (default: family's)")
    t.add_argument("--workers", type=int, default=1, help="local processes")
    t.add_argument("--out", default=None, help="evidence file (results/tuning/A--F.json)")


_FORMATS = ("png", "svg", "pdf")
_FORMAT_HELP = "figure formats, one or more of png, svg, pdf (default: png)"


def _add_logging_options(p: argparse.ArgumentParser, depth: int) -> None:
    """``-v/--verbose`` and ``-q/--quiet`` on parser ``p`` (the top parser is depth 0, each
    subcommand one deeper). argparse copies a subcommand's values over its parent's, so every
    depth counts into its own ``dest``; :func:`_loudness` adds them up: ``hbo-bench -v run
    ... -v`` is ``-vv``."""
    g = p.add_argument_group("logging (anywhere on the line)")
    g.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        dest=f"_verbose{depth}",
        help="log more on stderr (-v: INFO, what is run and where; -vv: DEBUG; default: WARNING)",
    )
    g.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        dest=f"_quiet{depth}",
        help="log only errors on stderr, and no progress output",
    )


def _subparsers(p: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers of ``p``'s subcommands (one level down; aliases once)."""
    out: list[argparse.ArgumentParser] = []
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if all(child is not q for q in out):
                    out.append(child)
    return out


def _add_logging_everywhere(p: argparse.ArgumentParser, depth: int = 0) -> None:
    _add_logging_options(p, depth)
    for child in _subparsers(p):
        _add_logging_everywhere(child, depth + 1)


def _loudness(args: argparse.Namespace) -> tuple[int, bool]:
    """``(verbose count, quiet)`` summed over every depth of the command line."""
    ns = vars(args)
    verbose = sum(v for k, v in ns.items() if k.startswith("_verbose"))
    quiet = any(v for k, v in ns.items() if k.startswith("_quiet"))
    for k in [k for k in ns if k.startswith(("_verbose", "_quiet"))]:
        delattr(args, k)
    return verbose, quiet


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="hbo-bench",
        description="Benchmark bandit agents on heavy-tailed / corrupted kernelized bandits.",
    )
    from hbo_envs import __version__

    ap.add_argument(
        "--version",
        action="version",
        version=f"hbo-bench {__version__}",
        help="print the version and exit",
    )
    sub = ap.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run envs x agents x seeds and write results")
    r.add_argument("--env", action="append", required=True, help="env id (repeatable)")
    r.add_argument(
        "--agent",
        action="append",
        required=True,
        help="registered name or module:Class, optionally with [key=value,...] (repeatable)",
    )
    g = r.add_mutually_exclusive_group()
    _add_seed_options(g, "0-4")
    r.add_argument("--horizon", type=int, default=None, help="rounds T (default: env's)")
    r.add_argument("--env-kwargs", default=None, help="JSON dict passed to gym.make")
    r.add_argument("--out", required=True, help="results directory (resumable)")
    r.add_argument(
        "--resolution",
        type=int,
        default=200,
        help="rows per cell for long horizons (see hbo_envs.harness.records)",
    )
    r.add_argument(
        "--coverage-points",
        type=int,
        default=20,
        help="log-spaced rounds with the coverage diagnostic",
    )
    r.add_argument("--plot", action="store_true", help="also write DIR/regret.png")
    _add_exec_options(r)

    s = sub.add_parser("summary", help="print the regret table of a results directory")
    s.add_argument("dir", help="results directory (the --out of a run)")
    s.add_argument(
        "--format",
        choices=("table", "csv", "markdown", "runtime"),
        default="table",
        help="output: an aligned table (default), CSV, Markdown or the runtime table",
    )

    p = sub.add_parser("plot", help="plot mean ± CI of R_t and R_t/t (one panel per env)")
    p.add_argument("dir", help="results directory (the --out of a run)")
    p.add_argument("--out", default=None, help="output path without extension (default DIR/regret)")
    p.add_argument("--format", nargs="+", default=["png"], choices=_FORMATS, help=_FORMAT_HELP)
    p.add_argument("--title", default=None, help="figure title (default: none)")
    p.add_argument("--logy", action="store_true", help="log scale for R_t/t")

    q = sub.add_parser("reproduce", help="run a named paper experiment")
    q.add_argument("name", nargs="?", help="experiment name (see --list)")
    q.add_argument("--list", action="store_true", help="list experiments")
    q.add_argument("--quick", action="store_true", help="small faithful version (~1 minute)")
    q.add_argument(
        "--smoke",
        action="store_true",
        help="1 seed, a few dozen rounds: checks that the experiment runs end to end (CI)",
    )
    q.add_argument(
        "--out", default=None, help="results directory (default results/NAME[-quick|-smoke])"
    )
    q.add_argument("--paper-only", action="store_true", help="only the agents the paper shows")
    _add_seed_options(q.add_mutually_exclusive_group(), "the experiment's")
    q.add_argument("--horizon", type=int, default=None, help="override T for every env")
    q.add_argument("--format", nargs="+", default=["png"], choices=_FORMATS, help=_FORMAT_HELP)
    _add_exec_options(q)

    sub.add_parser("list", help="list envs, agents and experiments")
    from data_scripts.cli import add_data_parser  # hbo-bench data fetch|import|list

    add_data_parser(sub)
    _add_leaderboard_parser(sub)
    _add_archive_parser(sub)
    _add_tune_parser(sub)
    _add_logging_everywhere(ap)
    return ap


class UsageError(Exception):
    pass


def _print_failures(failures: list[dict[str, Any]]) -> None:
    if not failures:
        return
    print(f"\n{len(failures)} cell(s) FAILED:", file=sys.stderr)
    for f in failures:
        print(f"  {f['run_name']}: {f['error']}", file=sys.stderr)
    print(
        "Tracebacks are in <out>/cells/<run>.json; rerun the same command to retry them.",
        file=sys.stderr,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from hbo_envs.harness import build_cells, format_table, parse_agent, parse_seeds, run_sweep

    seeds = _seed_arg(args)
    if seeds is None:
        seeds = parse_seeds("0-4")
    env_kwargs = {}
    if args.env_kwargs:
        try:
            env_kwargs = json.loads(args.env_kwargs)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--env-kwargs must be a JSON object: {exc}") from None
        if not isinstance(env_kwargs, dict):
            raise UsageError(f"--env-kwargs must be a JSON object. Got {args.env_kwargs!r}.")
    specs = [parse_agent(a) for a in args.agent]
    cells = build_cells(
        args.env,
        specs,
        seeds,
        horizon=args.horizon,
        env_kwargs=env_kwargs,
        resolution=args.resolution,
        coverage_points=args.coverage_points,
    )
    n_seeds = seeds if isinstance(seeds, int) else len(seeds)
    log.info(
        "run: %d cell(s) = %d env(s) x %d agent(s) x %d seed(s), horizon %s, into %s "
        "(backend %s, workers %s%s)",
        len(cells),
        len(args.env),
        len(specs),
        n_seeds,
        args.horizon if args.horizon is not None else "the env's",
        args.out,
        args.backend,
        args.workers if args.workers is not None else "default",
        ", fresh" if args.fresh else "",
    )
    res = run_sweep(
        cells,
        out=args.out,
        backend=args.backend,
        workers=args.workers,
        progress=False if args.no_progress else None,
        fresh=args.fresh,
        address=args.address,
        batch=not args.no_batch,
    )
    log.info("run: %d ran, %d already finished, %d failed", res.ran, res.skipped, len(res.failures))
    print(f"{res.ran} cell(s) run, {res.skipped} already finished; results in {args.out}")
    print(format_table(res.summary))
    if args.plot and not res.records.empty:
        from hbo_envs.harness.plotting import plot_regret

        for p in plot_regret(res.records, [Path(args.out) / "regret.png"]):
            print(f"wrote {p}")
    _print_failures(res.failures)
    return 1 if res.failures else 0


def _load(dir_: str) -> tuple[Any, Any]:
    from hbo_envs.harness import ResultStore, summarize

    store = ResultStore(dir_)
    if not store.root.is_dir():
        raise UsageError(f"No results directory {dir_!r}.")
    if not (store.cells.is_dir() or (store.root / "records.parquet").exists()):
        raise UsageError(
            f"{dir_!r} is not a results directory (it has neither cells/ nor "
            "records.parquet); pass the --out directory of an hbo-bench run."
        )
    records = store.load_records()
    log.info("read %s: %d record row(s)", store.root, len(records))
    sp = store.root / "summary.parquet"
    if sp.exists():
        from hbo_envs.harness.store import read_table_file

        summary = read_table_file(sp)
    else:
        failed: dict[tuple[str, str], int] = {}
        for st in store.cell_statuses():
            if st.get("status") != "ok":
                key = (st.get("env_id", "?"), st.get("agent", "?"))
                failed[key] = failed.get(key, 0) + 1
        summary = summarize(records, failed)
    return records, summary


def _cmd_summary(args: argparse.Namespace) -> int:
    from hbo_envs.harness import format_table

    _, summary = _load(args.dir)
    if args.format == "csv":
        summary.to_csv(sys.stdout, index=False)
    elif args.format == "markdown":
        print(summary.to_markdown(index=False, floatfmt=".6g"))  # needs tabulate (a dependency)
    else:
        print(format_table(summary, runtime=args.format == "runtime"))
    return 0


def _plot_dir(
    dir_: str, out: str | None, formats: Sequence[str], title: str | None, logy: bool = False
) -> list[Path]:
    from hbo_envs.harness import ResultStore
    from hbo_envs.harness.plotting import plot_confidence, plot_regret

    records, _ = _load(dir_)
    if records.empty:
        raise UsageError(f"No finished cells in {dir_!r}; nothing to plot.")
    base = Path(out) if out else Path(dir_) / "regret"
    written = plot_regret(
        records, [base.with_suffix(f".{f}") for f in formats], title=title, logy_avg=logy
    )
    snaps = ResultStore(dir_).collect_snapshots()
    if snaps is not None:
        cbase = base.with_name("confidence")
        written += plot_confidence(
            snaps, [cbase.with_suffix(f".{f}") for f in formats], title=title
        )
    return written


def _cmd_plot(args: argparse.Namespace) -> int:
    for p in _plot_dir(args.dir, args.out, args.format, args.title, args.logy):
        print(f"wrote {p}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from hbo_envs.harness import build_cells, format_table, run_sweep
    from hbo_envs.harness.plotting import plot_confidence, plot_regret
    from hbo_envs.harness.store import write_json
    from hbo_envs.judging.experiments import EXPERIMENTS
    from hbo_envs.judging.rules.claims import evaluate_claims, format_verdicts, verdict_records

    if args.list or not args.name:
        for name, e in EXPERIMENTS.items():
            print(f"{name:16s} {e.title}")
        return 0 if args.list else 2
    if args.name not in EXPERIMENTS:
        raise UsageError(
            f"Unknown experiment {args.name!r}. Known: {', '.join(EXPERIMENTS)} "
            "(hbo-bench reproduce --list)."
        )
    exp = EXPERIMENTS[args.name]
    specs, skipped = exp.agent_specs(paper_only=args.paper_only)
    if not specs:
        raise UsageError(
            f"None of the agents of {exp.name} is available ({', '.join(skipped)}); "
            "is the 'agents' package installed?"
        )
    if exp.kind == "exponent":  # a ladder of horizons: hbo_envs.judging.experiments.reproduce
        from hbo_envs.judging.experiments.reproduce import reproduce_exponent

        return reproduce_exponent(exp, args, specs, skipped, _seed_arg(args))
    seeds = _seed_arg(args)
    if seeds is None:
        seeds = 1 if args.smoke else exp.quick_seeds if args.quick else exp.seeds
    n_seeds = seeds if isinstance(seeds, int) else len(seeds)

    def horizon(env: str) -> int | None:
        if args.horizon is not None:
            return args.horizon
        return exp.horizon_for(env, args.quick, smoke=args.smoke)

    suffix = "-smoke" if args.smoke else "-quick" if args.quick else ""
    out = Path(args.out or f"results/{exp.name}{suffix}")
    print(f"{exp.title}\n  {exp.citation}\n  protocol: {exp.protocol}")
    scale = f"{n_seeds} seeds, T = " + ", ".join(str(horizon(e) or "env default") for e in exp.envs)
    print(
        f"  running{suffix.replace('-', ' (') + ')' if suffix else ''}: {scale}; agents: "
        + ", ".join(s.label for s in specs)
    )
    if args.quick and exp.quick_note and _seed_arg(args) is None and args.horizon is None:
        print(f"  quick configuration: {exp.quick_note}")
    if skipped:
        print(f"  skipped (not available yet): {', '.join(skipped)}")
    excluded = [str(x) for x in exp.exclusions(specs)]
    for x in excluded:
        print(f"  not run: {x}")
    cells = []
    for env in exp.envs:
        cells += build_cells(
            [env],
            exp.specs_for(env, specs),
            seeds,
            horizon=horizon(env),
            env_kwargs=exp.kwargs_for(env),
            snapshot=exp.snapshot,
        )
    log.info(
        "reproduce %s: %d cell(s) into %s (backend %s, workers %s)",
        exp.name,
        len(cells),
        out,
        args.backend,
        args.workers if args.workers is not None else "default",
    )
    meta = {
        "experiment": {
            "name": exp.name,
            "title": exp.title,
            "citation": exp.citation,
            "protocol": exp.protocol,
            "quick": bool(args.quick),
            "smoke": bool(args.smoke),
            "seeds_override": None if args.seeds is None and args.n_seeds is None else seeds,
            "horizon_override": args.horizon,
            "expect": exp.expect,
            "skipped_agents": skipped,
            "excluded": excluded,
        }
    }
    res = run_sweep(
        cells,
        out=out,
        backend=args.backend,
        workers=args.workers,
        progress=False if args.no_progress else None,
        fresh=args.fresh,
        meta=meta,
        address=args.address,
        batch=exp.batches and not args.no_batch,
    )
    print(f"\n{res.ran} cell(s) run, {res.skipped} already finished; results in {out}")
    print(format_table(res.summary, runtime=exp.kind == "runtime"))
    if exp.kind == "runtime":
        print("\n" + format_table(res.summary))
    if not res.records.empty:
        title = exp.title + (" [smoke]" if args.smoke else " [quick]" if args.quick else "")
        metrics = (
            ("avg_regret", "regret") if exp.metric == "avg_regret" else ("regret", "avg_regret")
        )
        paths = []
        # regret.png: our band (95% bootstrap CI of the mean); regret_std.png: the papers'
        # band (mean +- 1 std over seeds), drawn only when some agent has two seeds or more
        # on some env: with one seed (--smoke, --n-seeds 1) it would be regret.png again
        # with a band of width 0.
        spread = bool((res.records.groupby(["env_id", "agent"])["seed"].nunique() > 1).any())
        bands = (("ci", "regret"), ("std", "regret_std")) if spread else (("ci", "regret"),)
        for band, stem in bands:
            paths += plot_regret(
                res.records,
                [out / f"{stem}.{f}" for f in args.format],
                title=title,
                metrics=metrics,
                envs=list(exp.envs),
                band=band,
            )
        if exp.kind == "confidence" and res.snapshots is not None:
            paths += plot_confidence(
                res.snapshots, [out / f"confidence.{f}" for f in args.format], title=title
            )
        if exp.kind == "corruption":  # Bogunovic et al. Fig. 1: first 50 rounds and bands
            from hbo_envs.harness.plotting_corruption import plot_figure1_experiment

            paths += plot_figure1_experiment(exp, [out / f"figure1.{f}" for f in args.format])
        for p in paths:
            print(f"wrote {p}")
        if not spread:
            print("regret_std: not drawn (one seed per agent: no spread over seeds to show)")
    if not res.summary.empty:
        from hbo_envs.harness.summary import format_ordering

        print("\nMeasured ordering by mean R_T ('<': 95% CIs apart, '~': CIs overlap):")
        print(format_ordering(res.summary))
    verdicts = evaluate_claims(exp.claims, res.records, list(exp.envs), res.summary)
    print("\nThe paper's claims, with the measured verdicts and the rule that decided each:")
    print(format_verdicts(verdicts))
    write_json(
        out / "summary.json",
        {
            "experiment": meta["experiment"],
            "seeds": seeds if isinstance(seeds, int) else list(seeds),
            "horizons": {e: horizon(e) for e in exp.envs},
            "verdicts": verdict_records(verdicts),
            "summary": json.loads(res.summary.to_json(orient="records")),
        },
    )
    print(f"wrote {out / 'summary.json'}")
    _print_failures(res.failures)
    return 1 if res.failures else 0


def _cmd_list(args: argparse.Namespace) -> int:
    import hbo_envs
    from hbo_envs.judging.experiments import EXPERIMENTS, available_agent_names

    print("envs:\n  " + "\n  ".join(hbo_envs.ENV_IDS))
    names = sorted(available_agent_names())
    print("agents:\n  " + ("\n  ".join(names) if names else "(none registered)"))
    print("experiments:\n  " + "\n  ".join(f"{n:16s} {e.title}" for n, e in EXPERIMENTS.items()))
    return 0


_COMMANDS = {
    "run": _cmd_run,
    "summary": _cmd_summary,
    "plot": _cmd_plot,
    "reproduce": _cmd_reproduce,
    "list": _cmd_list,
    "data": lambda args: (
        _check_data_root(args) or __import__("data_scripts.cli", fromlist=["run"]).run(args)
    ),
    "leaderboard": lambda args: _check_leaderboard_root(args) or _leaderboard_cli().run(args),
    "archive": lambda args: (
        _check_archive_args(args) or __import__("hbo_envs.judging.cli", fromlist=["run"]).run(args)
    ),
    "tune": lambda args: __import__("hbo_envs.harness.tuning", fromlist=["run"]).run(args),
}


def _check_data_root(args: argparse.Namespace) -> None:
    """``data list --root DIR`` lists a directory that must exist (``fetch``/``import``
    create it)."""
    if args.data_command == "list" and args.root is not None and not Path(args.root).is_dir():
        raise UsageError(
            f"--root {args.root}: no such directory (the data directory; `hbo-bench data "
            "fetch NAME --root DIR` creates it)."
        )


def _check_leaderboard_root(args: argparse.Namespace) -> None:
    """The leaderboards folder must exist (and hold a suite, for ``list``/``render``): a
    mistyped ``--root`` is an error, not an empty listing with exit status 0."""
    if args.lb_command == "schema":
        return
    from hbo_envs.leaderboard.suite import leaderboards_root, list_suites

    root = leaderboards_root(args.root)
    given = f"--root {args.root}" if args.root is not None else f"the leaderboards folder {root}"
    log.info("leaderboards folder: %s", root)
    if not root.is_dir():
        raise UsageError(
            f"{given}: no such directory. Pass --root DIR (or set $HBO_LEADERBOARDS) to a "
            "leaderboards folder: one sub-folder per suite, each with a suite.toml."
        )
    if args.lb_command in ("list", "render") and not list_suites(root):
        raise UsageError(
            f"{given}: no suite in it (a suite is a sub-folder with a suite.toml). Pass "
            "--root DIR to a leaderboards folder."
        )


def _check_archive_args(args: argparse.Namespace) -> None:
    """``--archive`` must be a directory (``build`` may create it) and every experiment name
    known: errors naming the value, not a KeyError or a silent exit status 0."""
    from hbo_envs.judging.experiments import EXPERIMENTS

    unknown = [n for n in getattr(args, "names", None) or [] if n not in EXPERIMENTS]
    if unknown:
        raise UsageError(
            f"Unknown experiment {unknown[0]!r}. Known: {', '.join(EXPERIMENTS)} "
            "(hbo-bench reproduce --list)."
        )
    if args.archive is None:
        return
    path = Path(args.archive)
    log.info("archive: %s", path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--archive {path}: not a directory (pass the archive's folder).")
    if not path.exists() and args.archive_command != "build":
        raise UsageError(
            f"--archive {path}: no such directory (`hbo-bench archive build --archive DIR` "
            "creates an archive)."
        )


def _leaderboard_cli() -> Any:
    from hbo_envs.leaderboard import cli

    return cli


def _own_dirs() -> tuple[str, ...]:
    """The folders of hbo-bench's own packages (found without importing them)."""
    import importlib.util

    out = []
    for m in ("hbo_envs", "agents", "data_scripts"):
        spec = importlib.util.find_spec(m)
        if spec is not None and spec.origin:
            out.append(str(Path(spec.origin).resolve().parent))
    return tuple(out)


def _is_usage_error(exc: BaseException) -> bool:
    """A usage error (exit status 2) is a :class:`UsageError` or a ``ValueError`` /
    ``TypeError`` that hbo-bench raised on purpose: the innermost frame of its traceback
    is a ``raise`` statement in hbo-bench's own code (the uniform parameter errors, a bad
    suite or submission). The same exception types coming from inside numpy, pandas, an
    agent's arithmetic or a wrong call are bugs (exit status 1, with the traceback)."""
    import linecache

    if isinstance(exc, UsageError):
        return True
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not str(Path(code.co_filename).resolve()).startswith(_own_dirs()):
        return False
    return linecache.getline(code.co_filename, tb.tb_lineno).strip().startswith("raise")


def _log_context(args: argparse.Namespace) -> None:
    """INFO: what runs (version, Python, the key libraries) and the data directory."""
    if not log.isEnabledFor(logging.INFO):
        return
    import platform
    from importlib import metadata

    from hbo_envs.data.paths import ENV_VAR, data_dir

    libs = []
    for dist in ("numpy", "gymnasium"):
        try:
            libs.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:  # pragma: no cover - dependencies
            libs.append(f"{dist} ?")
    log.info(
        "hbo-bench %s on Python %s (%s); command: %s",
        _version(),
        platform.python_version(),
        ", ".join(libs),
        args.command,
    )
    log.info("data directory: %s (set %s to change it)", data_dir(), ENV_VAR)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hbo-bench`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.verbose, args.quiet = _loudness(args)
    if args.verbose and args.quiet:
        parser.error("argument -q/--quiet: not allowed with argument -v/--verbose")
    _configure_logging(args.verbose, args.quiet)
    if args.quiet and hasattr(args, "no_progress"):
        args.no_progress = True
    log.debug("hbo-bench %s: %s", _version(), " ".join(sys.argv[1:] if argv is None else argv))
    _log_context(args)
    try:
        return _COMMANDS[args.command](args)
    except (UsageError, ValueError, TypeError) as exc:
        if not _is_usage_error(exc):
            import traceback

            traceback.print_exc()
            print(
                f"hbo-bench: internal error: {type(exc).__name__}: {exc} (a bug, not a usage "
                "error: please report it with the traceback above)",
                file=sys.stderr,
            )
            return 1
        print(f"hbo-bench: error: {exc}", file=sys.stderr)
        return 2
    except ConnectionError as exc:  # e.g. an unreachable --address
        print(f"hbo-bench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `hbo-bench list | head`: stop quietly, like any filter
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # file-system faults: one line naming the path and the fix
        from hbo_envs.harness.store import ResultsDirError, fs_error

        if isinstance(exc, ResultsDirError):
            msg = exc.strerror
        elif exc.filename is not None:
            msg = fs_error(Path(exc.filename), exc, "write").strerror
        else:
            msg = str(exc)
        print(f"hbo-bench: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "\nhbo-bench: interrupted; finished cells are saved, rerun the same command to resume.",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
