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
import secrets
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
from hbo_envs.harness.tuning import TUNING_SEED_BASE
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
from hbo_envs.leaderboard.suite import Reference, Suite, env_spec_hash

__all__ = [
    "RECORD_FORMAT",
    "RerunCell",
    "RerunOutcome",
    "SandboxLimits",
    "VerificationReport",
    "fresh_seed_test",
    "make_record",
    "make_reference",
    "reference_current",
    "reference_of",
    "reference_sources",
    "record_sha256",
    "record_status",
    "rerun_cells",
    "validate_submission",
    "verify",
    "gate",
    "changed_submissions",
    "min_hidden_seeds",
    "HiddenDraw",
]

#: Level of the first hidden-seed test (screening) and of the confirming second one: an
#: entry is flagged only when a second, independent draw of hidden seeds also rejects.
FLAG_P = 0.01
FLAG_P2 = 0.001
RECORD_FORMAT = 2
#: Record statuses that are well-formed results (a flagged one is kept, not ranked).
RESULTS = ("verified", "flagged")
#: What a table ranks.
RANKED = ("verified",)


def min_hidden_seeds(n_public: int, alpha: float = FLAG_P) -> int:
    """Fewest hidden seeds ``m`` for which the hidden-seed test can reach ``alpha / 10``:
    the smallest ``m`` with ``1 / C(n + m, m) <= alpha / 10`` (an agent that fails on
    every hidden seed then gets ``p = 1 / C(n + m, m)``, a tenth of the level, so ties or
    a partial memorizer still fall below it). 4 for the committed suites' 10 public seeds
    (``p >= 1/1001``; with 2, ``p >= 1/66`` could never flag at 0.01 with margin).

    >>> min_hidden_seeds(10), min_hidden_seeds(10, FLAG_P2), min_hidden_seeds(6)
    (4, 7, 7)

    ``n_public`` must be an integer ``>= 1`` and ``alpha`` a level in ``(0, 1)``: with no
    public seed, or at level 0, no ``m`` exists.
    """
    from math import comb

    from hbo_envs.validation import check_int, check_real

    n_public = check_int("min_hidden_seeds", "n_public", n_public, 1)
    alpha = check_real("min_hidden_seeds", "alpha", alpha, 0.0, 1.0, "neither")
    m = 1
    while comb(n_public + m, m) * alpha < 10:
        m += 1
    return m


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
    #: the agent's seed (None: the harness's ``agent_seed(seed)``; hidden cells: secret)
    agent_seed: int | None = None


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
    deadline = time.monotonic() + float(limits.wall_s)  # of the whole re-run
    try:
        _, module_file = module_source_sha256(import_path)
    except ValueError:
        module_file = None  # the child then fails to import it and says why
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
                if time.monotonic() >= deadline:
                    results[i] = RerunOutcome(
                        c, None, f"over the re-run's wall-clock limit of {limits.wall_s:g} s"
                    )
                    continue
                try:
                    if ap is None:
                        ap = AgentProcess(
                            import_path,
                            dict(params),
                            limits=limits,
                            deadline=deadline,
                            module_file=module_file,
                        )
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
                        agent_seed=c.agent_seed,
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
    there are at most 200000, else ``(1 + k) / 20001`` for ``k`` of 20000 drawn with a fixed
    seed). ``m = 4`` hidden seeds
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
    if total <= 200_000:
        idx = np.fromiter(
            (i for c in combinations(range(n + m), m) for i in c), np.intp, total * m
        ).reshape(total, m)
        stats = ranks[idx].sum(axis=1)
    else:
        rng = np.random.default_rng(0)
        stats = np.array([ranks[rng.permutation(n + m)[:m]].sum() for _ in range(20000)])
        # the observed labeling counts as one of the draws: a valid p, never 0
        return observed, float((1 + np.sum(stats >= observed - 1e-9)) / (1 + stats.size))
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
    hidden: HiddenDraw,
    source_sha256: str | None,
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
        "hidden_seeds": list(hidden.seeds),
        "hidden_agent_seeds": list(hidden.agent_seeds),
        "hidden_stages": list(hidden.stages),
        "hidden_results": hidden.results if status in RESULTS else {},
        "fresh_p_value": hidden.p_values[-1] if hidden.p_values else None,
        "fresh_p_values": list(hidden.p_values),
        "verifier": {**_verifier_meta(), **dict(run)},
    }
    rec["record_sha256"] = record_sha256(rec)
    return rec


def _hidden_verdict(rec: Mapping[str, Any], suite: Suite) -> str | None:
    """Why the record's status does not follow from its own numbers (None when it does):
    the hidden-seed test is recomputed from the record's public and hidden ``R_T`` (stage
    sizes ``hidden_stages``; a record without them has one stage), at least
    :func:`min_hidden_seeds` seeds in the first stage, ``flagged`` exactly when every
    stage's ``p`` is below its level and ``verified`` exactly when not."""
    seeds = rec.get("hidden_seeds")
    hid = rec.get("hidden_results")
    if not isinstance(seeds, list) or not isinstance(hid, Mapping):
        return "the record has no hidden-seed results"
    stages = rec.get("hidden_stages", [len(seeds)])
    if (
        not isinstance(stages, list)
        or not all(isinstance(k, int) and k > 0 for k in stages)
        or sum(stages) != len(seeds)
        or not 1 <= len(stages) <= 2
    ):
        return "the record's hidden-seed stages are malformed"
    need = min_hidden_seeds(len(suite.seeds))
    if stages[0] < need:
        return (
            f"{stages[0]} hidden seed(s) cannot give a meaningful test with "
            f"{len(suite.seeds)} public seeds (at least {need})"
        )
    pub = {
        e.id: [r["final_regret"] for r in rec["results"] if r["env_id"] == e.id] for e in suite.envs
    }
    if any(not isinstance(hid.get(e.id), list) or len(hid[e.id]) != len(seeds) for e in suite.envs):
        return "the record's hidden results do not cover its hidden seeds"
    lo, rejected = 0, []
    for k, alpha in zip(stages, (FLAG_P, FLAG_P2), strict=False):
        _, p = fresh_seed_test(pub, {e: v[lo : lo + k] for e, v in hid.items()})
        rejected.append(p < alpha)
        lo += k
    if "hidden_stages" in rec:  # a second draw runs exactly when the first rejects
        if rejected[0] != (len(stages) == 2):
            return "the record's hidden draws do not follow the two-stage rule"
    flagged = all(rejected)
    if (rec.get("status") == "flagged") != flagged:
        return (
            f"the record says {rec.get('status')!r} but its hidden-seed results say "
            f"{'flagged' if flagged else 'verified'}"
        )
    return None


def record_status(
    sub: Mapping[str, Any], suite: Suite | None = None, *, check_source: bool = True
) -> tuple[str, str, str]:
    """``(status, date, why)`` of a submission's verification record.

    ``unverified`` without a record; ``stale`` when the record or the submission was
    edited after verification, the record belongs to another file, (with ``suite``) the
    suite definition, an env spec hash or the record's results no longer match or its
    status does not follow from its hidden-seed numbers, or (``check_source``) the agent's
    module here — resolved as ``import`` resolves it — is not the file whose hash was
    verified; else the recorded status (only ``verified`` is ranked).

    A seal anyone can recompute proves nothing against someone who can commit the file:
    the numbers of a record are the suite's only because ``hbo-bench leaderboard gate``
    re-runs every changed file in full before it lands (:func:`gate`).
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
    if status not in RESULTS:  # a failed verification records no results to rank
        return ("failed" if status == "failed" else "unverified"), date, ""
    if check_source:
        try:
            here, _ = module_source_sha256(str(ra.get("import_path")))
        except ValueError as exc:
            return "stale", date, f"the agent's module cannot be checked here: {exc}"
        if here != ra.get("source_sha256"):
            return (
                "stale",
                date,
                (
                    "the agent's module here is not the one verified (sha256 "
                    f"{here[:12]}… here, {str(ra.get('source_sha256'))[:12]}… verified)"
                ),
            )
    if suite is not None:
        problems = check_results(rec.get("results"), suite)
        if problems:
            return "stale", date, "the record's results are malformed: " + problems[0]
        why = _hidden_verdict(rec, suite)
        if why:
            return "stale", date, why
    return status, date, ""


# -- verify ------------------------------------------------------------------------------------
@dataclass
class HiddenDraw:
    """The hidden seeds of one verification, drawn from the OS's secret entropy
    (:mod:`secrets`) at verification time: env seeds (below the tuning seeds, 2**40,
    outside the public seeds) and, independently, the agent's seed for each (so the agent
    cannot recover the env's seed from its own); ``stages`` their split into the first and
    the confirming draw; ``results`` the verifier's ``R_T`` per env, aligned with ``seeds``."""

    seeds: list[int] = field(default_factory=list)
    agent_seeds: list[int] = field(default_factory=list)
    stages: list[int] = field(default_factory=list)
    results: dict[str, list[float]] = field(default_factory=dict)
    p_values: list[float] = field(default_factory=list)

    def draw(self, suite: Suite, m: int) -> tuple[list[int], list[int]]:
        public = set(suite.seeds)
        seeds: list[int] = []
        while len(seeds) < m:
            # below the tuning seeds (hbo_envs.harness.tuning): no hidden instance is ever a
            # tuning instance, and 2**40 values leave nothing to memorize
            s = secrets.randbelow(TUNING_SEED_BASE)
            if s not in public and s not in seeds and s not in self.seeds:
                seeds.append(s)
        agent = [secrets.randbits(32) for _ in seeds]
        self.seeds += seeds
        self.agent_seeds += agent
        self.stages.append(m)
        return seeds, agent


@dataclass
class VerificationReport:
    """What :func:`verify` found; ``record`` is the block it writes into the file."""

    status: str  # "verified" | "flagged" | "failed" | "invalid"
    messages: list[str] = field(default_factory=list)
    hidden: HiddenDraw = field(default_factory=HiddenDraw)
    results: list[dict[str, Any]] = field(default_factory=list)
    record: dict[str, Any] | None = None
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "verified"

    @property
    def hidden_seeds(self) -> list[int]:
        return self.hidden.seeds

    @property
    def hidden_results(self) -> dict[str, list[float]]:
        return self.hidden.results

    @property
    def fresh_p_value(self) -> float | None:
        return self.hidden.p_values[-1] if self.hidden.p_values else None

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


def _cells(
    suite: Suite, seeds: Sequence[int], agent_seeds: Sequence[int | None]
) -> list[RerunCell]:
    return [
        RerunCell(
            e.id,
            s,
            e.horizon,
            dict(e.kwargs),
            tuple(suite.checkpoint_rounds(e.horizon)),
            agent_seed=a,
        )
        for e in suite.envs
        for s, a in zip(seeds, agent_seeds, strict=True)
    ]


def suite_rerun(
    suite: Suite,
    import_path: str,
    params: Mapping[str, Any],
    hidden: HiddenDraw,
    m: int,
    *,
    workers: int = 1,
    limits: SandboxLimits | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Re-run on every env at the public seeds and ``m`` hidden seeds newly drawn into
    ``hidden`` (its ``results`` get their ``R_T``): ``(public results in the submission
    format, errors)``."""
    seeds, agent_seeds = hidden.draw(suite, m)
    cells = _cells(suite, suite.seeds, [None] * len(suite.seeds)) + _cells(
        suite, seeds, agent_seeds
    )
    outs = rerun_cells(import_path, params, cells, workers=workers, limits=limits)
    errors = [
        f"{o.cell.env_id} {'hidden seed' if o.cell.agent_seed is not None else 'seed'} "
        f"{o.cell.seed if o.cell.agent_seed is None else '#' + str(seeds.index(o.cell.seed))}: "
        f"{o.error}"
        for o in outs
        if not o.ok
    ]
    results = []
    for e in suite.envs:
        hidden.results.setdefault(e.id, [])
    for o in outs:
        if not o.ok:
            continue
        c, vals = o.cell, [float(v) for v in o.regret]
        if c.agent_seed is None:
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
            hidden.results[c.env_id].append(vals[-1])
    return results, errors


def _run_and_test(
    suite: Suite,
    import_path: str,
    params: Mapping[str, Any],
    hidden: int,
    rep: VerificationReport,
    *,
    workers: int,
    limits: SandboxLimits | None,
    before_test: Any = None,
) -> None:
    """Public seeds + the first hidden draw; the hidden-seed test; a confirming second
    draw only when the first rejects (see :func:`_hidden_test`)."""
    got, errors = suite_rerun(
        suite, import_path, params, rep.hidden, hidden, workers=workers, limits=limits
    )
    rep.results = got
    if errors:
        rep.status = "failed"
        rep.messages.append(
            f"the agent {import_path} could not be re-run on {len(errors)} cell(s); first: "
            f"{errors[0]}"
        )
        return
    if before_test is not None:
        before_test()
    if rep.status == "failed":
        return
    if _hidden_test(suite, rep, 0, FLAG_P):
        m2 = max(hidden, min_hidden_seeds(len(suite.seeds), FLAG_P2))
        _, errors = suite_rerun(
            suite, import_path, params, rep.hidden, m2, workers=workers, limits=limits
        )
        if errors:
            rep.status = "failed"
            rep.messages.append(f"the second hidden draw could not be run; first: {errors[0]}")
            return
        if _hidden_test(suite, rep, 1, FLAG_P2) and rep.status == "verified":
            rep.status = "flagged"


def verify(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    hidden: int = 4,
    rtol: float = DEFAULT_RTOL,
    root: str | os.PathLike[str] | None = None,
    workers: int = 1,
    limits: SandboxLimits | None = None,
    record_to: str | os.PathLike[str] | None = None,
) -> VerificationReport:
    """Re-run a submission's agent on every seed of its suite (see the module docstring).

    ``hidden`` seeds per env (at least :func:`min_hidden_seeds`) are drawn from the OS's
    secret entropy, env and agent seeds independently; when the hidden-seed test rejects
    at :data:`FLAG_P`, a second, independent draw of ``max(hidden,
    min_hidden_seeds(n, FLAG_P2))`` seeds must reject at :data:`FLAG_P2` too before the
    entry is flagged. ``record_to`` writes the submission with its verification record to
    that file. Runs submitted code, in sandboxed processes (:class:`SandboxLimits`; its
    ``wall_s`` bounds each of the two runs).
    """
    from hbo_envs.validation import check_int

    rtol = check_rtol("verify", rtol)
    if not isinstance(sub, Mapping):
        sub = load_submission(sub)
    val = validate(sub, root=root)
    if not val.ok:
        return VerificationReport("invalid", ["the submission is invalid:", *val.errors])
    suite = val.suite
    assert suite is not None
    need = min_hidden_seeds(len(suite.seeds))
    hidden = check_int("verify", "hidden", hidden, need, 1000)
    rep = VerificationReport("verified")
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
        _run_and_test(
            suite,
            agent["import_path"],
            agent["params"],
            hidden,
            rep,
            workers=workers,
            limits=limits,
            before_test=lambda: _compare(sub, suite, rep.results, rtol, rep),
        )
    rep.wall_s = time.perf_counter() - t0
    limits = limits or SandboxLimits()
    rep.record = make_record(
        sub,
        suite,
        status=rep.status,
        messages=rep.messages,
        results=rep.results if rep.status in RESULTS else [],
        hidden=rep.hidden,
        source_sha256=here,
        run={"workers": workers, "wall_s": round(rep.wall_s, 1), "sandbox": limits.describe()},
    )
    if record_to is not None:
        out = dict(sub)
        out["verification"] = rep.record
        write_submission(record_to, out)
    return rep


def _hidden_test(suite: Suite, rep: VerificationReport, stage: int, alpha: float) -> bool:
    """Test hidden draw ``stage`` (0 or 1) against the public seeds at level ``alpha``;
    True when it rejects. Each stage is an exact permutation test
    (:func:`fresh_seed_test`), so a genuine agent is flagged (both stages reject) with
    probability at most ``FLAG_P2`` whatever the first stage does."""
    h = rep.hidden
    lo = sum(h.stages[:stage])
    k = h.stages[stage]
    hid = {e: v[lo : lo + k] for e, v in h.results.items()}
    # the verifier's own public-seed numbers (equal to the submitted ones once reproduced)
    subm = {
        e.id: [r["final_regret"] for r in rep.results if r["env_id"] == e.id] for e in suite.envs
    }
    z, p = fresh_seed_test(subm, hid)
    h.p_values.append(p)
    which = ("first", "second (confirming)")[stage]
    if p < alpha:
        rep.messages.append(
            f"{which} hidden draw ({k} seeds): the regret is larger than on the public seeds "
            f"(summed rank {z:g}, permutation p = {p:.2g} < {alpha})"
            + (": drawing a second, independent set" if stage == 0 else ": FLAGGED")
            + ("; results may be tuned to the public seeds." if stage == 1 else ".")
        )
        return True
    rep.messages.append(
        f"{which} hidden draw ({k} seeds): consistent with the public-seed distribution "
        f"(permutation p = {p:.2g})."
    )
    outside = [
        f"{e} hidden seed #{lo + i}: R_T = {v:.4g} (public range {min(subm[e]):.4g}–"
        f"{max(subm[e]):.4g})"
        for e in hid
        for i, v in enumerate(hid[e])
        if not min(subm[e]) <= v <= max(subm[e])
    ]
    rep.messages += [f"  outside the public range: {m}" for m in outside[:10]]
    return False


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
    config: str = "paper",
    hidden: int = 4,
    workers: int = 1,
    limits: SandboxLimits | None = None,
) -> tuple[dict[str, Any], VerificationReport]:
    """The suite's own entry for reference agent ``name`` in configuration ``config``
    (``"paper"``: the registered class with default parameters; ``"tuned"``: with the
    stored tuned parameters, :class:`~hbo_envs.leaderboard.suite.Reference`): one
    sandboxed run on every public and ``hidden`` secret seeds (and the confirming draw
    when the first rejects, as :func:`verify`), written as a submission whose results
    *are* the verifier's and whose record says so (``submit`` + ``verify`` in one run,
    half the cost). Raises ``ValueError`` when ``(name, config)`` is not a reference of
    ``suite``.
    """
    from hbo_envs.harness.store import git_revision
    from hbo_envs.leaderboard.submission import resolve_agent
    from hbo_envs.validation import check_int

    refs = suite.references()
    ref = next((r for r in refs if (r.name, r.config) == (name, config)), None)
    if ref is None:
        names = sorted({r.name for r in refs})
        if name not in names:
            raise ValueError(
                f"The 'name' parameter of make_reference must be a reference agent of suite "
                f"{suite.id!r} ({', '.join(names)}). Got {name!r} instead."
            )
        have = [r.config for r in refs if r.name == name]
        raise ValueError(
            f"The 'config' parameter of make_reference must be a configuration suite "
            f"{suite.id!r} ranks {name!r} in ({', '.join(have)}). Got {config!r} instead."
        )
    hidden = check_int("make_reference", "hidden", hidden, min_hidden_seeds(len(suite.seeds)))
    reason = suite.unavailable_reason()
    if reason:
        raise ValueError(f"Suite {suite.id!r} is unavailable here: {reason}.")
    import_path, _ = resolve_agent(name)
    params = ref.params()
    source, source_file = module_source_sha256(import_path)
    code = reference_sources(suite, import_path)
    rep = VerificationReport("verified")
    t0 = time.perf_counter()
    _run_and_test(suite, import_path, params, hidden, rep, workers=workers, limits=limits)
    wall = rep.wall_s = time.perf_counter() - t0
    if rep.status == "failed":
        raise RuntimeError(f"{ref.spec} could not be run: {rep.messages[-1]}")
    rev = git_revision()
    agent: dict[str, Any] = {
        "display_name": ref.display_name,
        "import_path": import_path,
        "params": params,
        "registered_name": name,
        "config": config,
        "code": {
            "revision": rev["revision"] if rev else None,
            "dirty": rev["dirty"] if rev else None,
            "source_sha256": source,
            "source_file": "/".join(Path(source_file).parts[-3:]),
        },
    }
    cfg = ref.config_record()
    if cfg is not None:  # the tuning evidence the parameters were chosen by
        agent["config_record"] = cfg
    sub = submission_body(suite, agent, rep.results, backend="sandbox", git=rev)
    rep.messages.insert(
        0,
        f"reference agent of the suite ({config} configuration): computed by the suite itself "
        f"on all {len(suite.seeds)} public seeds and {len(rep.hidden.seeds)} secret hidden "
        f"seed(s) of {len(suite.envs)} envs.",
    )
    limits = limits or SandboxLimits()
    rep.record = make_record(
        sub,
        suite,
        status=rep.status,
        messages=rep.messages,
        results=rep.results,
        hidden=rep.hidden,
        source_sha256=source,
        run={
            "workers": workers,
            "wall_s": round(wall, 1),
            "sandbox": limits.describe(),
            "reference": name,
            "config": config,
            "sources": code,
        },
    )
    sub["verification"] = rep.record
    return sub, rep


def reference_of(suite: Suite, file: str, sub: Mapping[str, Any]) -> Reference | None:
    """The suite's reference that submission file ``file`` (its name) holds: the name is a
    reference's file and ``sub`` runs that reference's registered class with exactly that
    configuration's parameters (else None; a ``baseline-*`` file that is not one is not
    ranked, :func:`~hbo_envs.leaderboard.entries.collect_entries`)."""
    from hbo_envs.leaderboard.submission import resolve_agent

    for ref in suite.references():
        if file == ref.file:
            a = sub.get("agent") or {}
            if (
                a.get("import_path") == resolve_agent(ref.name)[0]
                and a.get("params") == ref.params()
            ):
                return ref
            return None
    return None


def reference_sources(suite: Suite, import_path: str) -> dict[str, str]:
    """``{module: sha256}`` of every source file a reference's numbers on ``suite`` depend
    on: the agent class's module and the ``agents`` modules it reaches (the GP engine,
    schedules, ...; :func:`hbo_envs.harness.sources.agent_source_hashes`) and each env's
    module with its objectives, channels, adversaries and kernels
    (:func:`~hbo_envs.harness.sources.env_source_hashes`), as the results archive hashes a
    cell. Imports the agent's module: for the suite's own (registered) agents only."""
    from hbo_envs.harness.sources import agent_source_hashes, env_source_hashes

    out = agent_source_hashes(import_path.partition(":")[0])
    for e in suite.envs:
        out.update(env_source_hashes(e.id))
    return dict(sorted(out.items()))


def reference_current(suite: Suite, ref: Reference, sub: Mapping[str, Any] | None) -> str | None:
    """Why the stored file ``sub`` of reference ``ref`` must be computed again, or None
    when it is current: it validates, its verification record holds results that
    :func:`record_status` accepts for this suite (sealed, bound to the file, the suite
    definition, every env spec hash and the agent's module as it is here), it runs
    ``ref``'s registered class with exactly ``ref``'s configuration (the tuned parameters
    stored now), and every source file its numbers depend on (:func:`reference_sources`,
    recorded when it was made) is unchanged. ``hbo-bench leaderboard baselines`` skips
    current references unless forced; CI's gate re-runs every file anyway."""
    from hbo_envs.leaderboard.submission import resolve_agent

    if sub is None:
        return "no file yet"
    val = validate(sub, suite=suite)
    if not val.ok:
        return "the file is invalid: " + "; ".join(val.errors[:2])
    status, _, why = record_status(sub, suite)
    if status not in RESULTS:
        return f"its record is {status}" + (f" ({why})" if why else "")
    a, run = sub["agent"], sub["verification"].get("verifier", {})
    if a["import_path"] != resolve_agent(ref.name)[0]:
        return f"it runs {a['import_path']}, not the class registered as {ref.name!r}"
    if a["params"] != ref.params():
        return (
            f"its parameters {a['params']!r} are not the {ref.config} configuration's "
            f"{ref.params()!r}"
        )
    if a.get("display_name") != ref.display_name:
        return f"its display name {a.get('display_name')!r} is not {ref.display_name!r}"
    if run.get("reference") != ref.name or run.get("config", "paper") != ref.config:
        return "its record was not made as this reference"
    then = run.get("sources")
    if not isinstance(then, Mapping):
        return "its record does not list the source files it depends on (an older record)"
    now = reference_sources(suite, a["import_path"])
    changed = sorted(m for m in set(now) | set(then) if now.get(m) != then.get(m))
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return "source changed since it was computed: " + ", ".join(changed[:3]) + more
    return None


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
    if status not in RESULTS:
        return False, [f"no verification record with results to audit: {status} {why}".strip()]
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


# -- the gate: what lets a record land --------------------------------------------------------
def changed_submissions(since: str, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Submission files under ``root`` (default: the repository's ``leaderboards/``) that
    differ from git revision ``since`` (added, modified, renamed, or untracked); raises
    ``ValueError`` when ``since`` is not a revision of the repository."""
    import subprocess

    from hbo_envs.leaderboard.suite import leaderboards_root

    base = leaderboards_root(root).resolve()

    def git(*args: str) -> str:
        res = subprocess.run(
            ["git", "-C", str(base), *args], capture_output=True, text=True, timeout=120
        )
        if res.returncode != 0:
            raise ValueError(f"git {' '.join(args)} failed in {base}: {res.stderr.strip()[:300]}")
        return res.stdout

    try:
        git("rev-parse", "--verify", "--quiet", f"{since}^{{commit}}")
    except ValueError:
        raise ValueError(
            f"The 'since' revision {since!r} is not a commit of the repository at {base}."
        ) from None
    top = Path(git("rev-parse", "--show-toplevel").strip())
    names = git("diff", "--name-only", "--diff-filter=ACMRT", since, "--", str(base)).split("\n")
    names += git("ls-files", "--others", "--exclude-standard", "--", str(base)).split("\n")
    out = set()
    for n in names:
        p = top / n if n else None
        if p is not None and p.suffix == ".json" and p.parent.name == "submissions" and p.is_file():
            out.add(p)
    return sorted(out)


GATE_REFERENCES = ("full", "public")
"""How :func:`gate` re-runs the suites' own reference files: ``"full"`` like any file,
``"public"`` on every public seed only (see :func:`gate`)."""


def gate(
    files: Sequence[str | os.PathLike[str]],
    *,
    hidden: int = 4,
    root: str | os.PathLike[str] | None = None,
    workers: int = 1,
    limits: SandboxLimits | None = None,
    rtol: float = 1e-9,
    references: str = "full",
) -> tuple[bool, list[str]]:
    """What lets a submission file land: for each file whose record says ``verified`` (the
    only status a table ranks), re-verify it **in full** — every public seed, and fresh
    secret hidden seeds — and require the record's public results to be the re-run's and
    the re-run's status to be ``verified``. ``(ok, messages)``.

    A sealed record proves nothing against someone who can commit the file (anyone can
    recompute its hashes), so CI runs this on every submission file a change adds or
    edits (:func:`changed_submissions`), references and the random floor included; a
    resealed record (numbers scaled, zeroed, a flag removed, a forged reference) fails
    here and does not land. Files without a ``verified`` record are not ranked and pass.

    ``references="public"`` re-runs a suite's *own* reference files
    (:func:`reference_of`: ``baseline-<name>[-tuned].json`` running the registered class
    with exactly its configuration's parameters) on every public seed, comparing every
    checkpoint with the record (every number a table ranks), without the fresh hidden draw
    (about 30% of a full verification with 10 public and 4 hidden seeds). What that leaves
    to the record: its hidden-seed numbers, made by the suite's own ``baselines`` run, which
    :func:`record_status` re-checks against the status at every render, but which a
    resealed record could fake to turn a flagged reference verified. A reference is
    registered code of this repository whose ``tuned`` parameters were chosen on tuning
    seeds no test uses, so it has nothing to memorize; submitters' files are always
    re-verified in full.
    """
    from hbo_envs.validation import check_choice, check_int

    check_choice("gate", "references", references, GATE_REFERENCES)
    ok, msgs = True, []
    for f in files:
        name = str(f)
        try:
            sub = load_submission(f)
        except ValueError as exc:
            ok = False
            msgs.append(f"{name}: cannot be read: {exc}")
            continue
        val = validate(sub, root=root)
        if not val.ok:
            ok = False
            msgs.append(f"{name}: invalid: " + "; ".join(val.errors[:3]))
            continue
        suite = val.suite
        assert suite is not None
        check_int("gate", "hidden", hidden, min_hidden_seeds(len(suite.seeds)), 1000)
        status, _, why = record_status(sub, suite)
        if status != "verified":
            msgs.append(f"{name}: not ranked ({status}{': ' + why if why else ''}); not re-run")
            continue
        rec = sub["verification"]
        claim = {**sub, "results": rec["results"]}  # the numbers a table would rank
        rep = VerificationReport("verified")
        if references == "public" and reference_of(suite, Path(name).name, sub) is not None:
            got, errors = suite_rerun(
                suite,
                rec["agent"]["import_path"],
                rec["agent"]["params"],
                HiddenDraw(),
                0,
                workers=workers,
                limits=limits,
            )
            rep.results = got
            if errors:
                rep.status = "failed"
                rep.messages.append(f"could not be re-run on {len(errors)} cell(s): {errors[0]}")
            else:
                _compare(claim, suite, got, rtol, rep)
            ok &= _gate_lines(
                name,
                rep,
                "a reference: all public seeds; its recorded hidden-seed test stands",
                msgs,
            )
            continue
        _run_and_test(
            suite,
            rec["agent"]["import_path"],
            rec["agent"]["params"],
            hidden,
            rep,
            workers=workers,
            limits=limits,
            before_test=lambda claim=claim, suite=suite, rep=rep: _compare(
                claim, suite, rep.results, rtol, rep
            ),
        )
        ok &= _gate_lines(name, rep, "all public seeds, fresh hidden seeds", msgs)
    return ok, msgs


def _gate_lines(name: str, rep: Any, how: str, msgs: list[str]) -> bool:
    """Append the gate's lines for one file to ``msgs``; whether it was verified."""
    if rep.status != "verified":
        msgs.append(f"{name}: REJECTED: the suite's re-run says {rep.status}:")
        msgs += [f"  {m}" for m in rep.messages]
        return False
    msgs.append(f"{name}: the record is the suite's re-run ({how})")
    return True
