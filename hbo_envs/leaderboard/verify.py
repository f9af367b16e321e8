"""Verification: the suite re-runs a submission's agent and records what *it* computed.

Trust model (``docs/leaderboard-trust.md``): a leaderboard ranks only numbers the suite
computed itself. :func:`verify`

1. validates the file (:func:`~hbo_envs.leaderboard.submission.validate`: nothing is
   imported or run);
2. re-runs the agent with :func:`rerun_cells` — in a separate, resource-limited process
   (:mod:`~hbo_envs.leaderboard.sandbox`) that must resolve the import path to an agent
   class passing :func:`agents.check_agent` — on **every** public seed of every env, and on
   ``hidden`` seeds per env drawn at verification time (outside the public seeds);
3. compares the submitted checkpoints of every public seed with the re-run (relative
   tolerance ``rtol`` in ``(0, 1e-6]``, default 1e-9: another CPU's BLAS kernel changes
   last bits; a trajectory that agrees and then departs is a *fork*, reported and accepted
   for at most ``max(1, cells // 100)`` cells, since the record ranks the re-run; see
   :func:`_compare`);
4. tests the hidden seeds against the public ones (:func:`fresh_seed_test`, an exact
   permutation test over seeds of the summed per-env ranks of the hidden seeds' regret);
   ``p < 0.01`` flags the submission (tuned to, or memorizing, the public seeds);
5. writes a **verification record** (:func:`make_record`) into the file: the verifier's own
   results on the public seeds (the only numbers a leaderboard ranks), its hidden-seed
   ``R_T``, the agent's source hash (computed by the verifier from the module file), the
   suite and env spec hashes, the hash of the submission it verified and the verifying
   run's metadata, sealed by ``record_sha256``. :func:`record_status` re-checks all of it:
   an edit of the submission or of the record after verification reads as ``stale``.

Statuses: ``verified`` (reproduced, not flagged), ``flagged`` (reproduced, hidden seeds
outside the public distribution), ``failed`` (not reproduced, or the agent was refused,
crashed or broke a limit), ``invalid`` (validation failed; nothing was run).

:func:`rerun_cells` is the re-run-and-compare core shared with the results archive.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hbo_envs.harness.compare import (
    DEFAULT_RTOL,
    check_rtol,
    compare_trajectory,
    fork_limit,
)
from hbo_envs.leaderboard.sandbox import (
    AgentProcess,
    SandboxError,
    SandboxLimits,
    module_source_sha256,
)
from hbo_envs.leaderboard.submission import (
    ValidationReport,
    aggregates,
    check_results,
    content_sha256,
    json_sha256,
    load_submission,
    submission_body,
    validate,
    write_submission,
)
from hbo_envs.leaderboard.suite import Suite, env_spec_hash

__all__ = [
    "RECORD_FORMAT",
    "RerunCell",
    "RerunOutcome",
    "SandboxLimits",
    "VerificationReport",
    "fresh_seed_test",
    "make_record",
    "record_sha256",
    "record_status",
    "rerun_cells",
    "validate_submission",
    "verify",
]

FLAG_P = 0.01
RECORD_FORMAT = 2
RANKED = ("verified", "flagged")


# -- the re-run core (shared with the results archive) ----------------------------------------
@dataclass(frozen=True)
class RerunCell:
    """One ``(env, seed)`` episode to re-run: ``gym.make(env_id, horizon=horizon,
    **env_kwargs)`` reset with ``seed`` (the agent with ``agent_seed(seed)``, as the harness
    does); ``rounds`` are the rounds ``t`` at which ``R_t`` is returned (None: all)."""

    env_id: str
    seed: int
    horizon: int | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    rounds: tuple[int, ...] | None = None


@dataclass
class RerunOutcome:
    """``regret`` (``R_t`` at the cell's rounds) when ``ok``, else ``error``."""

    cell: RerunCell
    regret: np.ndarray | None = None
    error: str | None = None
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def rerun_cells(
    import_path: str,
    params: Mapping[str, Any],
    cells: Sequence[RerunCell],
    *,
    workers: int = 1,
    limits: SandboxLimits | None = None,
) -> list[RerunOutcome]:
    """Re-run ``import_path(**params)`` on ``cells`` in sandboxed agent processes.

    ``workers`` processes (each its own sandbox, see :mod:`~hbo_envs.leaderboard.sandbox`)
    share the cells; the envs and the regret accounting run in this process. Returns one
    :class:`RerunOutcome` per cell, in order; a cell whose agent was refused, crashed or
    broke a limit has ``error`` set (the process is restarted for the next cell). The
    regret equals :func:`hbo_envs.harness.run_cell`'s bit for bit (one BLAS thread on both
    sides), so comparing with ``np.array_equal`` checks a stored cell exactly.

    >>> out = rerun_cells("agents.baselines.uniform:RandomAgent", {},
    ...                   [RerunCell("hbo/RKHS-SE-Spike-v0", 0, horizon=30, rounds=(10, 30))])
    >>> out[0].ok, out[0].regret.shape
    (True, (2,))
    """
    from hbo_envs.validation import check_int

    workers = check_int("rerun_cells", "workers", workers, 1, 64)
    limits = limits or SandboxLimits()
    results: list[RerunOutcome | None] = [None] * len(cells)
    groups = [list(range(len(cells)))[k::workers] for k in range(workers)]

    def run_group(idx: list[int]) -> None:
        ap: AgentProcess | None = None
        refused: str | None = None
        try:
            for i in idx:
                c = cells[i]
                t0 = time.perf_counter()
                if refused is not None:  # the class was refused: it will be every time
                    results[i] = RerunOutcome(c, None, refused, 0.0)
                    continue
                try:
                    if ap is None:
                        ap = AgentProcess(import_path, dict(params), limits=limits)
                        try:
                            ap.start()
                        except SandboxError as exc:
                            refused = f"refused before any episode: {exc}"
                            raise SandboxError(refused) from None
                    reg = ap.episode(
                        c.env_id,
                        seed=int(c.seed),
                        horizon=c.horizon,
                        env_kwargs=dict(c.env_kwargs),
                        rounds=None if c.rounds is None else list(c.rounds),
                    )
                    results[i] = RerunOutcome(c, reg, None, time.perf_counter() - t0)
                except SandboxError as exc:
                    results[i] = RerunOutcome(c, None, str(exc), time.perf_counter() - t0)
                    if ap is not None:
                        ap.close()
                    ap = None
        finally:
            if ap is not None:
                ap.close()

    live = [g for g in groups if g]
    if len(live) == 1:
        run_group(live[0])
    else:
        with ThreadPoolExecutor(len(live)) as pool:
            list(pool.map(run_group, live))
    return [r for r in results if r is not None]


# -- the hidden-seed test ----------------------------------------------------------------------
def fresh_seed_test(
    submitted: Mapping[str, list[float]], fresh: Mapping[str, list[float]]
) -> tuple[float, float]:
    """Exact permutation test of "hidden seeds have larger regret": ``(T, p)``.

    Seeds are the exchangeable units (one seed draws the objective and noise of every env,
    so envs are *not* independent strata). Per env, rank the ``n`` public and ``m`` hidden
    ``R_T`` together (ties share the average rank); ``T`` is the sum over envs of the
    hidden seeds' ranks. ``p`` is the share of the ``C(n+m, m)`` ways of calling ``m`` of
    the ``n + m`` seeds "hidden" whose ``T`` is at least the observed one (every way when
    there are at most 20000, else 20000 drawn with a fixed seed). ``m = 4`` hidden seeds
    with ``n = 10`` public ones reach ``p = 1/1001``; ``m = 2`` cannot go below ``1/66``.

    One hidden value 2.5 beside public 1, 2, 3: rank 3 of 4; ranks 3 and 4 are at least
    3, so ``p = 2/4``:

    >>> fresh_seed_test({"e": [1.0, 2.0, 3.0]}, {"e": [2.5]})
    (3.0, 0.5)
    """
    from itertools import combinations
    from math import comb

    from scipy.stats import rankdata

    envs = [e for e in fresh if len(fresh[e]) and len(submitted[e])]
    if not envs:
        return float("nan"), float("nan")
    n, m = len(submitted[envs[0]]), len(fresh[envs[0]])
    if any(len(submitted[e]) != n or len(fresh[e]) != m for e in envs):
        raise ValueError("fresh_seed_test needs the same public and hidden seeds on every env.")
    ranks = np.array(
        [rankdata(np.concatenate([submitted[e], fresh[e]]), method="average") for e in envs]
    ).sum(axis=0)  # per seed (public first, then hidden): its rank summed over envs
    observed = float(ranks[n:].sum())
    total = comb(n + m, m)
    if total <= 20000:
        stats = np.array([ranks[list(c)].sum() for c in combinations(range(n + m), m)])
    else:
        rng = np.random.default_rng(0)
        stats = np.array([ranks[rng.permutation(n + m)[:m]].sum() for _ in range(20000)])
    p = float(np.mean(stats >= observed - 1e-9))
    return observed, p


# -- records -----------------------------------------------------------------------------------
def record_sha256(record: Mapping[str, Any]) -> str:
    """SHA-256 of a verification record without its ``record_sha256`` (canonical JSON)."""
    return json_sha256(record, without="record_sha256")


def _verifier_meta() -> dict[str, Any]:
    from hbo_envs.harness.store import git_revision, package_versions

    return {
        "packages": package_versions(),
        "hbo_bench_git": git_revision(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def make_record(
    sub: Mapping[str, Any],
    suite: Suite,
    *,
    status: str,
    messages: list[str],
    results: list[dict[str, Any]],
    hidden_seeds: list[int],
    hidden_results: dict[str, list[float]],
    source_sha256: str | None,
    p_value: float | None,
    verification_seed: int | None,
    run: Mapping[str, Any],
) -> dict[str, Any]:
    """The verification record (module docstring), sealed by ``record_sha256``."""
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "status": status,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "messages": list(messages),
        "submission_sha256": content_sha256(sub),
        "suite": {"id": suite.id, "sha256": suite.sha256},
        "env_spec_hashes": {e.id: env_spec_hash(e.id, e.kwargs, e.horizon) for e in suite.envs},
        "agent": {
            "import_path": sub["agent"]["import_path"],
            "params": sub["agent"]["params"],
            "source_sha256": source_sha256,
        },
        "seeds": list(suite.seeds),
        "results": results,
        "hidden_seeds": list(hidden_seeds),
        "hidden_results": hidden_results,
        "fresh_p_value": p_value,
        "verification_seed": verification_seed,
        "verifier": {**_verifier_meta(), **dict(run)},
    }
    rec["record_sha256"] = record_sha256(rec)
    return rec


def record_status(sub: Mapping[str, Any], suite: Suite | None = None) -> tuple[str, str, str]:
    """``(status, date, why)`` of a submission's verification record.

    ``unverified`` without a record; ``stale`` when the record or the submission was
    edited after verification, the record belongs to another file, or (with ``suite``)
    the suite definition, an env spec hash or the record's results no longer match; else
    the recorded status (only ``verified`` and ``flagged`` are ranked).
    """
    rec = sub.get("verification")
    if not rec:
        return "unverified", "", "never verified"
    if not isinstance(rec, Mapping) or rec.get("format") != RECORD_FORMAT:
        return "unverified", "", "no verification record of the current format"
    date = str(rec.get("date", ""))[:10]
    if rec.get("record_sha256") != record_sha256(rec):
        return "stale", date, "the verification record was edited after it was written"
    if rec.get("submission_sha256") != content_sha256(sub):
        return "stale", date, "the submission changed after it was verified"
    agent = sub["agent"] if isinstance(sub.get("agent"), Mapping) else {}
    ra = rec.get("agent") if isinstance(rec.get("agent"), Mapping) else {}
    if ra.get("import_path") != agent.get("import_path") or ra.get("params") != agent.get("params"):
        return "stale", date, "the record verified another agent"
    if suite is not None:
        if rec.get("suite") != {"id": suite.id, "sha256": suite.sha256}:
            return "stale", date, "the suite definition changed since verification"
        hashes = rec.get("env_spec_hashes")
        for e in suite.envs:
            if not isinstance(hashes, Mapping) or hashes.get(e.id) != env_spec_hash(
                e.id, e.kwargs, e.horizon
            ):
                return "stale", date, f"the env {e.id!r} changed since verification"
    status = str(rec.get("status"))
    if status not in RANKED:  # a failed verification records no results to rank
        return ("failed" if status == "failed" else "unverified"), date, ""
    if suite is not None:
        problems = check_results(rec.get("results"), suite)
        if problems:
            return "stale", date, "the record's results are malformed: " + problems[0]
    return status, date, ""


# -- verify ------------------------------------------------------------------------------------
@dataclass
class VerificationReport:
    """What :func:`verify` found; ``record`` is the block it writes into the file."""

    status: str  # "verified" | "flagged" | "failed" | "invalid"
    messages: list[str] = field(default_factory=list)
    hidden_seeds: list[int] = field(default_factory=list)
    fresh_p_value: float | None = None
    hidden_results: dict[str, list[float]] = field(default_factory=dict)
    verification_seed: int | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    record: dict[str, Any] | None = None
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "verified"

    @property
    def fresh_seeds(self) -> list[int]:
        return self.hidden_seeds

    def __str__(self) -> str:
        return "\n".join([f"status: {self.status}", *self.messages])


def validate_submission(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    suite: Suite | None = None,
    root: str | os.PathLike[str] | None = None,
) -> ValidationReport:
    """:func:`~hbo_envs.leaderboard.submission.validate`, plus a warning when the file's
    verification record does not apply (:func:`record_status` says ``stale`` or
    ``unverified``). The record check lives here, above the submission module, so that
    module imports nothing of this one (``hbo-bench leaderboard validate`` runs this)."""
    if not isinstance(sub, Mapping):
        try:
            sub = load_submission(sub)
        except ValueError:
            return validate(sub, suite=suite, root=root)  # reports why it cannot be read
    rep = validate(sub, suite=suite, root=root)
    if rep.ok and sub.get("verification") is not None:
        status, _, why = record_status(sub, rep.suite)
        if status in ("stale", "unverified"):
            rep.warnings.append(
                f"verification: {why}; the recorded verification does not apply (it is not "
                "ranked; run verify again)."
            )
    return rep


def _draw_hidden(suite: Suite, hidden: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    public = set(suite.seeds)
    out: list[int] = []
    while len(out) < hidden:
        s = int(rng.integers(2**20, 2**31))
        if s not in public and s not in out:
            out.append(s)
    return out


def suite_rerun(
    suite: Suite,
    import_path: str,
    params: Mapping[str, Any],
    hidden_seeds: list[int],
    *,
    workers: int = 1,
    limits: SandboxLimits | None = None,
) -> tuple[list[dict[str, Any]], dict[str, list[float]], list[str]]:
    """Re-run on every env at the public and hidden seeds: ``(public results in the
    submission format, hidden R_T per env, errors)``."""
    cells = [
        RerunCell(e.id, s, e.horizon, dict(e.kwargs), tuple(suite.checkpoint_rounds(e.horizon)))
        for e in suite.envs
        for s in (*suite.seeds, *hidden_seeds)
    ]
    outs = rerun_cells(import_path, params, cells, workers=workers, limits=limits)
    errors = [f"{o.cell.env_id} seed {o.cell.seed}: {o.error}" for o in outs if not o.ok]
    results, hidden = [], {e.id: [] for e in suite.envs}
    public = set(suite.seeds)
    for o in outs:
        if not o.ok:
            continue
        c, vals = o.cell, [float(v) for v in o.regret]
        if c.seed in public:
            results.append(
                {
                    "env_id": c.env_id,
                    "seed": int(c.seed),
                    "final_regret": vals[-1],
                    "final_avg_regret": vals[-1] / suite.env(c.env_id).horizon,
                    "checkpoints": {"t": list(c.rounds or ()), "regret": vals},
                }
            )
        else:
            hidden[c.env_id].append(vals[-1])
    return results, hidden, errors


def verify(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    hidden: int = 4,
    seed: int | None = None,
    rtol: float = DEFAULT_RTOL,
    root: str | os.PathLike[str] | None = None,
    workers: int = 1,
    limits: SandboxLimits | None = None,
    record_to: str | os.PathLike[str] | None = None,
) -> VerificationReport:
    """Re-run a submission's agent on every seed of its suite (see the module docstring).

    ``hidden`` seeds per env are drawn from ``seed`` (default: OS entropy, reported).
    ``record_to`` writes the submission with its verification record to that file.
    Runs submitted code, in sandboxed processes (:class:`SandboxLimits`).
    """
    from hbo_envs.validation import check_int

    hidden = check_int("verify", "hidden", hidden, 0, 1000)
    rtol = check_rtol("verify", rtol)
    if seed is not None:
        seed = check_int("verify", "seed", seed, 0)
    if not isinstance(sub, Mapping):
        sub = load_submission(sub)
    val = validate(sub, root=root)
    if not val.ok:
        return VerificationReport("invalid", ["the submission is invalid:", *val.errors])
    suite = val.suite
    assert suite is not None
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    hidden_seeds = _draw_hidden(suite, hidden, seed)
    rep = VerificationReport("verified", hidden_seeds=hidden_seeds, verification_seed=seed)
    agent = sub["agent"]
    try:
        here, _ = module_source_sha256(agent["import_path"])
    except ValueError as exc:
        here = None
        rep.status = "failed"
        rep.messages.append(f"the agent cannot be found here: {exc}")
    if here is not None and here != agent["code"].get("source_sha256"):
        rep.messages.append(
            f"note: the module of {agent['import_path']} here (sha256 {here[:12]}…) is not "
            f"the submitted one ({str(agent['code'].get('source_sha256'))[:12]}…); verifying "
            "the code installed here."
        )
    t0 = time.perf_counter()
    if rep.status != "failed":
        got, hid, errors = suite_rerun(
            suite,
            agent["import_path"],
            agent["params"],
            hidden_seeds,
            workers=workers,
            limits=limits,
        )
        rep.results, rep.hidden_results = got, hid
        if errors:
            rep.status = "failed"
            rep.messages.append(
                f"the agent {agent['import_path']} could not be re-run on {len(errors)} "
                f"cell(s); first: {errors[0]}"
            )
        else:
            _compare(sub, suite, got, rtol, rep)
            _hidden_test(sub, suite, hid, rep)
    rep.wall_s = time.perf_counter() - t0
    limits = limits or SandboxLimits()
    rep.record = make_record(
        sub,
        suite,
        status=rep.status,
        messages=rep.messages,
        results=rep.results if rep.status in RANKED else [],
        hidden_seeds=hidden_seeds,
        hidden_results=rep.hidden_results if rep.status in RANKED else {},
        source_sha256=here,
        p_value=rep.fresh_p_value,
        verification_seed=seed,
        run={"workers": workers, "wall_s": round(rep.wall_s, 1), "sandbox": limits.describe()},
    )
    if record_to is not None:
        out = dict(sub)
        out["verification"] = rep.record
        write_submission(record_to, out)
    return rep


def _compare(
    sub: Mapping[str, Any],
    suite: Suite,
    got: list[dict[str, Any]],
    rtol: float,
    rep: VerificationReport,
) -> None:
    """The submitted ``R_t`` checkpoints against the re-run's, cell by cell
    (:func:`hbo_envs.harness.compare.compare_trajectory`): within ``rtol`` passes (another
    CPU's BLAS kernel changes last bits); a cell that departs at its first checkpoint is
    not this agent's run; a *fork* (agrees, then departs: the trajectory diverged on this
    CPU) is reported and accepted up to :func:`~hbo_envs.harness.compare.fork_limit`
    cells, since the record holds and ranks the verifier's re-run, never the submitted
    numbers."""
    submitted = {(r["env_id"], r["seed"]): r for r in sub["results"]}
    bad, forks, within = [], [], 0
    for r in got:
        a, b = submitted[(r["env_id"], r["seed"])]["checkpoints"], r["checkpoints"]
        c = compare_trajectory(b["regret"], a["regret"], rtol)
        within += c.kind == "within"
        if c.agrees:
            continue
        k = int(c.index or 0)
        t, x, y = a["t"][k], a["regret"][k], b["regret"][k]
        where = f"{r['env_id']} seed {r['seed']}"
        if c.kind == "fork":
            forks.append(
                f"{where}: the trajectory diverges at t = {t} (checkpoint {k + 1} of "
                f"{len(a['t'])}; equal within rtol {rtol:g} before): submitted R_t = {x!r}, "
                f"the re-run gives {y!r}"
            )
        else:
            bad.append(
                f"{where}: submitted R_t = {x!r} at t = {t}, the re-run gives {y!r} (differs "
                "from the first checkpoint)"
            )
    n = len(suite.envs) * len(suite.seeds)
    if len(forks) > fork_limit(n):
        bad += forks
        forks = []
    if bad:
        rep.status = "failed"
        rep.messages.append(
            f"NOT REPRODUCED on {len(bad)} of {n} (env, seed) pairs — the agent does not give "
            "the same results under the same seed (draw all randomness from a generator "
            "seeded in reset(seed=...)), or the submitted numbers were not produced by this "
            "code:"
        )
        rep.messages += [f"  {m}" for m in bad[:20]]
    else:
        rep.messages.append(
            f"reproduced: all {len(suite.seeds)} public seeds on all {len(suite.envs)} envs "
            f"match the submission (rtol {rtol:g}; {within} equal within it, not bit for "
            "bit)."
        )
    if forks:
        rep.messages.append(
            f"{len(forks)} trajectory fork(s) accepted (at most {fork_limit(n)} of {n} "
            "cells; the record ranks the verifier's re-run of them):"
        )
        rep.messages += [f"  {m}" for m in forks]


def _hidden_test(
    sub: Mapping[str, Any], suite: Suite, hid: dict[str, list[float]], rep: VerificationReport
) -> None:
    if not rep.hidden_seeds:
        return
    # the verifier's own public-seed numbers (equal to the submitted ones once reproduced)
    subm = {
        e.id: [r["final_regret"] for r in rep.results if r["env_id"] == e.id] for e in suite.envs
    }
    z, p = fresh_seed_test(subm, hid)
    rep.fresh_p_value = p
    seeds = rep.hidden_seeds
    outside = [
        f"{e} seed {s}: R_T = {v:.4g} (public range {min(subm[e]):.4g}–{max(subm[e]):.4g})"
        for e in hid
        for s, v in zip(seeds, hid[e], strict=True)
        if not min(subm[e]) <= v <= max(subm[e])
    ]
    if p < FLAG_P:
        if rep.status == "verified":
            rep.status = "flagged"
        rep.messages.append(
            f"FLAGGED: on hidden seeds {seeds} the regret is larger than on the public "
            f"seeds (summed rank {z:g}, permutation p = {p:.2g} < {FLAG_P}); "
            "results may be tuned to the public seeds."
        )
    else:
        rep.messages.append(
            f"hidden seeds {seeds}: consistent with the public-seed distribution "
            f"(permutation p = {p:.2g})."
        )
    rep.messages += [f"  outside the public range: {m}" for m in outside]


def ranked_view(sub: Mapping[str, Any], suite: Suite) -> dict[str, Any]:
    """The submission as a leaderboard shows it: the submitter's agent and provenance, the
    *verifier's* results (from the record) and aggregates recomputed from them."""
    rec = sub["verification"]
    view = dict(sub)
    view["results"] = rec["results"]
    view["aggregates"] = aggregates(suite, rec["results"])
    return view


def make_reference(
    suite: Suite,
    name: str,
    *,
    hidden: int = 4,
    seed: int | None = None,
    workers: int = 1,
    limits: SandboxLimits | None = None,
) -> tuple[dict[str, Any], VerificationReport]:
    """The suite's own entry for reference agent ``name`` (registered, default parameters):
    one sandboxed run on every public and ``hidden`` seeds, written as a submission whose
    results *are* the verifier's and whose record says so (``submit`` + ``verify`` in one
    run, half the cost). Raises ``ValueError`` when ``name`` is not a reference of ``suite``.
    """
    from hbo_envs.harness.store import git_revision
    from hbo_envs.leaderboard.submission import resolve_agent

    names, _ = suite.baseline_names()
    if name not in names:
        raise ValueError(
            f"The 'name' parameter of make_reference must be a reference agent of suite "
            f"{suite.id!r} ({', '.join(names)}). Got {name!r} instead."
        )
    reason = suite.unavailable_reason()
    if reason:
        raise ValueError(f"Suite {suite.id!r} is unavailable here: {reason}.")
    import_path, _ = resolve_agent(name)
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    hidden_seeds = _draw_hidden(suite, hidden, seed)
    source, source_file = module_source_sha256(import_path)
    t0 = time.perf_counter()
    got, hid, errors = suite_rerun(
        suite, import_path, {}, hidden_seeds, workers=workers, limits=limits
    )
    wall = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{name} could not be run on {len(errors)} cell(s); first: {errors[0]}")
    rev = git_revision()
    agent = {
        "display_name": name,
        "import_path": import_path,
        "params": {},
        "registered_name": name,
        "code": {
            "revision": rev["revision"] if rev else None,
            "dirty": rev["dirty"] if rev else None,
            "source_sha256": source,
            "source_file": "/".join(Path(source_file).parts[-3:]),
        },
    }
    sub = submission_body(suite, agent, got, backend="sandbox", git=rev)
    rep = VerificationReport(
        "verified",
        hidden_seeds=hidden_seeds,
        verification_seed=seed,
        results=got,
        hidden_results=hid,
        wall_s=wall,
    )
    rep.messages.append(
        f"reference agent of the suite: computed by the suite itself on all {len(suite.seeds)} "
        f"public seeds and {len(hidden_seeds)} hidden seed(s) of {len(suite.envs)} envs."
    )
    _hidden_test(sub, suite, hid, rep)
    limits = limits or SandboxLimits()
    rep.record = make_record(
        sub,
        suite,
        status=rep.status,
        messages=rep.messages,
        results=got,
        hidden_seeds=hidden_seeds,
        hidden_results=hid,
        source_sha256=source,
        p_value=rep.fresh_p_value,
        verification_seed=seed,
        run={
            "workers": workers,
            "wall_s": round(wall, 1),
            "sandbox": limits.describe(),
            "reference": name,
        },
    )
    sub["verification"] = rep.record
    return sub, rep


def audit(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    cells: int = 2,
    seed: int | None = None,
    root: str | os.PathLike[str] | None = None,
    workers: int = 1,
    limits: SandboxLimits | None = None,
    rtol: float = DEFAULT_RTOL,
) -> tuple[bool, list[str]]:
    """Re-run ``cells`` random ``(env, public seed)`` cells of a *verification record* and
    compare them with the record's results: ``(ok, messages)``. Numbers agree within
    ``rtol`` (in ``(0, 1e-6]``; another CPU's BLAS kernel changes last bits); a cell that
    agrees and then departs is a trajectory fork, reported and accepted for at most
    :func:`~hbo_envs.harness.compare.fork_limit` cells of the sample (one), as verify
    accepts it; a cell that differs from its first checkpoint fails.

    :func:`record_status` proves a record is sealed and bound to its submission, but anyone
    can recompute a hash; an audit proves the sealed numbers are what the agent produces.
    A record whose results were edited and resealed fails it (for a tampered cell in the
    sample: with ``k`` of ``N`` cells tampered the chance to miss all of them is
    ``C(N-k, cells) / C(N, cells)``; ``cells=N`` checks everything).
    """
    from hbo_envs.validation import check_int

    cells = check_int("audit", "cells", cells, 1)
    rtol = check_rtol("audit", rtol)
    if not isinstance(sub, Mapping):
        sub = load_submission(sub)
    val = validate(sub, root=root)
    if not val.ok:
        return False, ["the submission is invalid:", *val.errors]
    suite = val.suite
    assert suite is not None
    status, _, why = record_status(sub, suite)
    if status not in RANKED:
        return False, [f"no ranked verification record to audit: {status} {why}".strip()]
    rec = sub["verification"]
    rng = np.random.default_rng(seed)
    pairs = [(r["env_id"], r["seed"]) for r in rec["results"]]
    pick = sorted(
        (pairs[i] for i in rng.choice(len(pairs), size=min(cells, len(pairs)), replace=False)),
        key=lambda p: (p[0], p[1]),
    )
    by = {(r["env_id"], r["seed"]): r for r in rec["results"]}
    todo = [
        RerunCell(
            e,
            s,
            suite.env(e).horizon,
            dict(suite.env(e).kwargs),
            tuple(by[(e, s)]["checkpoints"]["t"]),
        )
        for e, s in pick
    ]
    outs = rerun_cells(
        rec["agent"]["import_path"], rec["agent"]["params"], todo, workers=workers, limits=limits
    )
    msgs, ok, forks = [], True, 0
    for o in outs:
        want = np.asarray(by[(o.cell.env_id, o.cell.seed)]["checkpoints"]["regret"], dtype=float)
        where = f"{o.cell.env_id} seed {o.cell.seed}"
        if not o.ok:
            ok = False
            msgs.append(f"{where}: could not be re-run: {o.error}")
            continue
        c = compare_trajectory(o.regret, want, rtol)
        if c.kind == "identical":
            msgs.append(f"{where}: identical to the record (bit for bit)")
        elif c.kind == "within":
            msgs.append(
                f"{where}: equal to the record within rtol {rtol:g} (largest relative "
                f"difference {c.largest:.2g})"
            )
        else:
            k = int(c.index or 0)
            t, x, y = o.cell.rounds[k], want[k], float(o.regret[k])
            forks += c.kind == "fork"
            if c.kind == "fork" and forks <= fork_limit(len(outs)):
                msgs.append(
                    f"{where}: the trajectory diverges at t = {t} (equal within rtol "
                    f"{rtol:g} before; the record says R_t = {x!r}, the re-run gives {y!r}): "
                    "a fork, accepted"
                )
            else:
                ok = False
                msgs.append(
                    f"{where}: the record says R_t = {x!r} at t = {t}, the re-run gives "
                    f"{y!r}: the record does not hold this agent's numbers"
                )
    return ok, msgs
