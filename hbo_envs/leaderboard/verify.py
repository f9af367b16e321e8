"""Verification of a submission by re-running its agent (this *runs submitted code*).

:func:`verify` first validates the file, then imports ``agent.import_path`` and runs
``Class(**params)`` through the harness on

1. ``sample`` of the submission's seeds (every env): every checkpoint must be reproduced
   (relative and absolute tolerance ``rtol``, default 1e-9; the harness is deterministic
   per seed, so an honest agent reproduces to the last bit on the same platform);
2. ``fresh`` seeds drawn at verification time (outside the public seeds): their ``R_T`` are
   compared with the submitted ones by a stratified one-sided rank-sum test — for each env
   the Mann–Whitney statistic ``U_e`` of "fresh regret > submitted regret", summed over
   envs, ``z = (ΣU_e − Σ m n / 2) / sqrt(Σ m n (m + n + 1) / 12)`` (m fresh, n submitted
   seeds). ``p = 1 − Φ(z) < 0.01`` flags the submission: its public-seed results look
   better than its behaviour on unseen seeds (tuned to, or memorized, the public seeds).

Statuses: ``verified`` (reproduced, not flagged), ``flagged`` (reproduced, but the fresh
seeds are outside the submission's distribution), ``failed`` (not reproduced, or the agent
could not be built or crashed), ``invalid`` (validation failed; nothing was run).

Run verification of untrusted submissions in a sandbox (a container or VM without
credentials or network): it imports and executes the submitted code.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import mannwhitneyu, norm

from hbo_envs.leaderboard.submission import (
    _code_provenance,
    content_sha256,
    load_submission,
    run_suite,
    validate,
    write_submission,
)

__all__ = ["VerificationReport", "fresh_seed_test", "verify"]

FLAG_P = 0.01


@dataclass
class VerificationReport:
    """What :func:`verify` found; :meth:`record` is the block it writes into the file."""

    status: str  # "verified" | "flagged" | "failed" | "invalid"
    messages: list[str] = field(default_factory=list)
    sample_seeds: list[int] = field(default_factory=list)
    fresh_seeds: list[int] = field(default_factory=list)
    fresh_p_value: float | None = None
    fresh_results: dict[str, list[float]] = field(default_factory=dict)
    verification_seed: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "verified"

    def __str__(self) -> str:
        return "\n".join([f"status: {self.status}", *self.messages])

    def record(self, sub: Mapping[str, Any]) -> dict[str, Any]:
        from hbo_envs.harness.store import git_revision, package_versions

        return {
            "status": self.status,
            "date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
            "messages": self.messages,
            "sample_seeds": self.sample_seeds,
            "fresh_seeds": self.fresh_seeds,
            "fresh_results": self.fresh_results,
            "fresh_p_value": self.fresh_p_value,
            "verification_seed": self.verification_seed,
            "verifier": {"packages": package_versions(), "hbo_bench_git": git_revision()},
            "submission_sha256": content_sha256(sub),
        }


def fresh_seed_test(
    submitted: Mapping[str, list[float]], fresh: Mapping[str, list[float]]
) -> tuple[float, float]:
    """Stratified one-sided rank-sum test (module docstring): ``(z, p)``.

    One fresh value above 2 of 3 submitted ones: ``U = 2``, mean ``1.5``, variance
    ``1 * 3 * 5 / 12 = 1.25``, ``z = 0.5 / sqrt(1.25)``:

    >>> z, p = fresh_seed_test({"e": [1.0, 2.0, 3.0]}, {"e": [2.5]})
    >>> round(z, 3), round(p, 3)
    (0.447, 0.327)
    """
    u_sum = mean = var = 0.0
    for e, f in fresh.items():
        s = submitted[e]
        m, n = len(f), len(s)
        if m == 0 or n == 0:
            continue
        u_sum += float(mannwhitneyu(f, s, alternative="greater", method="asymptotic").statistic)
        mean += m * n / 2
        var += m * n * (m + n + 1) / 12
    if var == 0:
        return float("nan"), float("nan")
    z = (u_sum - mean) / math.sqrt(var)
    return float(z), float(norm.sf(z))


def verify(
    sub: Mapping[str, Any] | str | os.PathLike[str],
    *,
    sample: int = 2,
    fresh: int = 2,
    seed: int | None = None,
    rtol: float = 1e-9,
    root: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    record_to: str | os.PathLike[str] | None = None,
) -> VerificationReport:
    """Re-run a submission's agent (see the module docstring). Runs submitted code.

    ``seed`` makes the choice of sampled and fresh seeds reproducible (default: drawn from
    OS entropy and reported). ``record_to`` writes the verification block into that file.
    """
    from hbo_envs.validation import check_int, check_real

    sample = check_int("verify", "sample", sample, 0)
    fresh = check_int("verify", "fresh", fresh, 0)
    rtol = check_real("verify", "rtol", rtol, 0, closed="left")
    if sample + fresh == 0:
        raise ValueError("verify: at least one of 'sample' and 'fresh' must be positive.")
    if not isinstance(sub, Mapping):
        sub = load_submission(sub)
    val = validate(sub, root=root)
    if not val.ok:
        return VerificationReport("invalid", ["the submission is invalid:", *val.errors])
    suite = val.suite
    assert suite is not None
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    sample = min(sample, len(suite.seeds))
    samp = sorted(int(s) for s in rng.choice(suite.seeds, size=sample, replace=False))
    public = set(suite.seeds)
    fresh_seeds: list[int] = []
    while len(fresh_seeds) < fresh:
        s = int(rng.integers(2**20, 2**31))
        if s not in public and s not in fresh_seeds:
            fresh_seeds.append(s)
    rep = VerificationReport(
        "verified", sample_seeds=samp, fresh_seeds=fresh_seeds, verification_seed=seed
    )
    agent = sub["agent"]
    try:
        here = _code_provenance(agent["import_path"]).get("source_sha256")
    except ValueError as exc:
        rep.status = "failed"
        rep.messages.append(f"the agent cannot be imported here: {exc}")
        return _finish(rep, sub, record_to)
    if here != agent["code"].get("source_sha256"):
        rep.messages.append(
            f"note: the module of {agent['import_path']} here (sha256 {str(here)[:12]}…) is not "
            f"the submitted one ({str(agent['code'].get('source_sha256'))[:12]}…); verifying "
            "the code installed here."
        )
    try:
        got = run_suite(
            suite,
            agent["import_path"],
            agent["params"],
            samp + fresh_seeds,
            backend=backend,
            workers=workers,
            address=address,
        )
    except Exception as exc:  # noqa: BLE001 - any failure of submitted code fails verification
        rep.status = "failed"
        rep.messages.append(
            f"the agent {agent['import_path']} could not be re-run: {type(exc).__name__}: {exc}"
        )
        return _finish(rep, sub, record_to)

    submitted = {(r["env_id"], r["seed"]): r for r in sub["results"]}
    rerun = {(r["env_id"], r["seed"]): r for r in got}
    bad = []
    for e in suite.envs:
        for s in samp:
            a, b = submitted[(e.id, s)]["checkpoints"], rerun[(e.id, s)]["checkpoints"]
            diff = [
                (t, x, y)
                for t, x, y in zip(a["t"], a["regret"], b["regret"], strict=True)
                if not math.isclose(x, y, rel_tol=rtol, abs_tol=rtol)
            ]
            if diff:
                t, x, y = diff[0]
                bad.append(
                    f"{e.id} seed {s}: submitted R_t = {x!r} at t = {t}, the re-run gives "
                    f"{y!r} ({len(diff)} of {len(a['t'])} checkpoints differ)"
                )
    if bad:
        rep.status = "failed"
        rep.messages.append(
            f"NOT REPRODUCED on {len(bad)} of {len(suite.envs) * len(samp)} re-run (env, seed) "
            "pairs — the agent does not give the same results under the same seed (draw all "
            "randomness from a generator seeded in reset(seed=...)), or the submitted numbers "
            "were not produced by this code:"
        )
        rep.messages += [f"  {m}" for m in bad]
    elif samp:
        rep.messages.append(
            f"reproduced: seeds {samp} on all {len(suite.envs)} envs match the submission "
            f"(rtol {rtol:g})."
        )
    if fresh_seeds:
        subm = {
            e.id: [submitted[(e.id, s)]["final_regret"] for s in suite.seeds] for e in suite.envs
        }
        frs = {e.id: [rerun[(e.id, s)]["final_regret"] for s in fresh_seeds] for e in suite.envs}
        rep.fresh_results = frs
        z, p = fresh_seed_test(subm, frs)
        rep.fresh_p_value = p
        outside = [
            f"{e} seed {s}: R_T = {v:.4g} (submitted range {min(subm[e]):.4g}–{max(subm[e]):.4g})"
            for e in frs
            for s, v in zip(fresh_seeds, frs[e], strict=True)
            if not min(subm[e]) <= v <= max(subm[e])
        ]
        if p < FLAG_P:
            if rep.status == "verified":
                rep.status = "flagged"
            rep.messages.append(
                f"FLAGGED: on fresh seeds {fresh_seeds} the regret is larger than on the "
                f"public seeds (stratified rank-sum z = {z:.2f}, one-sided p = {p:.2g} < "
                f"{FLAG_P}); results may be tuned to the public seeds."
            )
        else:
            rep.messages.append(
                f"fresh seeds {fresh_seeds}: consistent with the submitted distribution "
                f"(one-sided p = {p:.2g})."
            )
        rep.messages += [f"  outside the submitted range: {m}" for m in outside]
    return _finish(rep, sub, record_to)


def _finish(
    rep: VerificationReport, sub: Mapping[str, Any], record_to: str | os.PathLike[str] | None
) -> VerificationReport:
    if record_to is not None:
        out = dict(sub)
        out["verification"] = rep.record(sub)
        write_submission(record_to, out)
    return rep
