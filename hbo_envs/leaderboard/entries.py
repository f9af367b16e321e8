"""Leaderboard entries: which submissions a suite's table shows, with which numbers, in
which order (:func:`collect_entries`, the function every rendered page is built from).

Trust model (``docs/leaderboard-trust.md``): a table ranks only numbers the suite computed.

- An entry is ranked only when its file validates and carries a verification record that
  :func:`~hbo_envs.leaderboard.verify.record_status` accepts (sealed, bound to this very
  submission, the current suite definition and env spec hashes, the agent's module as
  ``import`` resolves it here, a status that follows from its own hidden-seed numbers)
  with status ``verified``. A ``flagged`` entry (two independent hidden draws both found
  it worse than on the public seeds) is not ranked. Everything else is left out with a
  note saying why. The numbers of a record are the suite's because
  :func:`~hbo_envs.leaderboard.verify.gate` re-runs every submission file a change adds
  or edits, in full, before it lands (anyone can recompute a seal).
- The numbers of an entry are the **verifier's**: ``Entry.sub`` is the submission with its
  ``results`` replaced by the record's and its ``aggregates`` recomputed from them
  (``Entry.submitted`` is the file as submitted, whose numbers were only compared).
- The references belong to the suite: the entry of reference agent ``name`` in
  configuration ``paper`` is the file ``submissions/baseline-<name>.json`` running the
  registered class with default parameters, in configuration ``tuned`` the file
  ``submissions/baseline-<name>-tuned.json`` running it with the stored tuned parameters
  (:class:`~hbo_envs.leaderboard.suite.Reference`; ``[baselines] configs`` of the suite says
  which configurations it ranks); the score's zero is the ``random`` reference and nothing
  else (another file of the random agent is an ordinary entry and cannot move a score). A
  display name whose normalized form
  (:func:`~hbo_envs.leaderboard.submission.normalize_name`) equals a reference's or an
  earlier file's is left out.

Ranking: by the normalized score (mean over envs of ``1 - IQM(agent) / IQM(random)``,
see :mod:`~hbo_envs.leaderboard.aggregate`), then by mean rank, then by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hbo_envs.leaderboard.aggregate import mean_ranks, normalized_scores, score_with_ci
from hbo_envs.leaderboard.submission import (
    load_submission,
    normalize_name,
    safe_name_problem,
    validate,
)
from hbo_envs.leaderboard.suite import Reference, Suite

__all__ = ["Entry", "collect_entries", "reference_file"]


def reference_file(name: str, config: str = "paper") -> str:
    """File name of the suite's entry for reference agent ``name`` in ``config``.

    >>> reference_file("tgp-ucb"), reference_file("tgp-ucb", "tuned")
    ('baseline-tgp-ucb.json', 'baseline-tgp-ucb-tuned.json')
    """
    return Reference(name, config).file


@dataclass
class Entry:
    """One ranked submission of a suite's table.

    ``sub`` is what the table shows (the verifier's results and aggregates, the submitted
    agent and provenance); ``submitted`` the file as submitted; ``record`` its verification
    record (``record["date"]`` the verification time, ``record["hidden_seeds"]`` /
    ``record["hidden_results"]`` the hidden-seed runs, ``record["verifier"]`` the verifying
    run's machine, packages, sandbox limits and wall time); ``reference`` the reference
    agent name when this is one of the suite's own entries, else None, and ``config`` its
    configuration (``"paper"`` or ``"tuned"``; None for a submitter's entry).
    """

    file: str
    sub: dict[str, Any]
    status: str  # verification: verified | flagged
    date: str
    score: float = float("nan")
    score_lo: float = float("nan")
    score_hi: float = float("nan")
    mean_rank: float = float("nan")
    rank: int = 0
    submitted: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    reference: str | None = None
    config: str | None = None

    @property
    def name(self) -> str:
        return str(self.sub["agent"]["display_name"])

    @property
    def is_random(self) -> bool:
        """The suite's ``random`` reference (the score's 0)."""
        return self.reference == "random"

    def iqm(self, env_id: str) -> dict[str, float]:
        return self.sub["aggregates"]["per_env"][env_id]


def _status(sub: dict[str, Any], suite: Suite | None = None) -> tuple[str, str]:
    """``(status, date)`` of the submission's verification record (see
    :func:`~hbo_envs.leaderboard.verify.record_status`)."""
    from hbo_envs.leaderboard.verify import record_status

    status, date, _ = record_status(sub, suite)
    return status, date


def collect_entries(suite: Suite, *, quiet: bool = False) -> tuple[list[Entry], list[str]]:
    """Ranked entries of ``suite`` (module docstring), and a note for each file left out."""
    from hbo_envs.leaderboard.verify import RANKED, ranked_view, record_status, reference_of

    folder = suite.folder / "submissions"
    candidates: list[Entry] = []
    notes: list[str] = []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        why = safe_name_problem(p.stem)
        if why:  # the stem names the entry's page: same safe set as display names
            notes.append(f"{p.name}: not ranked: the file name {p.stem!r} {why}")
            continue
        try:
            sub = load_submission(p)
        except ValueError as exc:
            notes.append(f"{p.name}: {exc}")
            continue
        rep = validate(sub, suite=suite)
        if not rep.ok:
            notes.append(f"{p.name}: invalid: " + "; ".join(rep.errors[:3]))
            continue
        status, date, why = record_status(sub, suite)
        if status not in RANKED:
            notes.append(f"{p.name}: not ranked: {status}" + (f" ({why})" if why else ""))
            continue
        ref = reference_of(suite, p.name, sub)
        if p.name.startswith("baseline-") and ref is None:
            notes.append(
                f"{p.name}: not ranked: 'baseline-*' files are the suite's reference entries "
                "(a registered reference agent with the parameters of its configuration, "
                "paper or tuned, in a configuration the suite ranks)"
            )
            continue
        candidates.append(
            Entry(
                p.name,
                ranked_view(sub, suite),
                status,
                date,
                submitted=sub,
                record=dict(sub["verification"]),
                reference=ref.name if ref else None,
                config=ref.config if ref else None,
            )
        )
    # unique normalized display names: references first, then files in name order
    taken: dict[str, str] = {}
    entries: list[Entry] = []
    for e in sorted(candidates, key=lambda e: (e.reference is None, e.file)):
        key = normalize_name(e.name)
        if key in taken:
            notes.append(
                f"{e.file}: not ranked: its display name {e.name!r} is the name of "
                f"{taken[key]} (names must differ after Unicode NFKC normalization and "
                "case folding)"
            )
            continue
        taken[key] = e.file
        entries.append(e)
    _rank(suite, entries)
    return entries, notes


def _rank(suite: Suite, entries: list[Entry]) -> None:
    envs = suite.env_ids
    ranks = mean_ranks({e.file: {x: e.iqm(x)["iqm"] for x in envs} for e in entries})
    refs = [e for e in entries if e.is_random]
    ref = {x: refs[0].iqm(x)["iqm"] for x in envs} if refs else {}
    for e in entries:
        e.mean_rank = ranks[e.file]
        if ref and all(
            np.isfinite(list(normalized_scores({x: e.iqm(x)["iqm"] for x in envs}, ref).values()))
        ):
            runs = np.array(
                [[r["final_regret"] for r in e.sub["results"] if r["env_id"] == x] for x in envs]
            ).T
            e.score, e.score_lo, e.score_hi = score_with_ci(
                runs,
                [ref[x] for x in envs],
                confidence=suite.confidence,
                reps=suite.bootstrap_reps,
                seed=suite.bootstrap_seed,
            )
    entries.sort(
        key=lambda e: (
            -e.score if np.isfinite(e.score) else np.inf,
            e.mean_rank if np.isfinite(e.mean_rank) else np.inf,
            e.name,
            e.file,
        )
    )
    for i, e in enumerate(entries, 1):
        e.rank = i
