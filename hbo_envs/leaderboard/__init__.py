"""Leaderboards: suites, submissions, validation, verification by re-running, rendering.

- :mod:`~hbo_envs.leaderboard.suite` — ``leaderboards/<suite>/suite.toml`` and env spec hashes,
- :mod:`~hbo_envs.leaderboard.submission` — the JSON format, :func:`submit`, the file's
  checks (:func:`~hbo_envs.leaderboard.submission.validate`); this package's
  :func:`validate` adds the check of its verification record
  (:func:`~hbo_envs.leaderboard.verify.validate_submission`),
- :mod:`~hbo_envs.leaderboard.verify` — :func:`verify` (re-runs submitted code, sandboxed by
  :mod:`~hbo_envs.leaderboard.sandbox`), :func:`audit`, :func:`rerun_cells`,
- :mod:`~hbo_envs.leaderboard.entries` — what a table ranks (only the suite's own numbers),
- :mod:`~hbo_envs.leaderboard.aggregate` — IQM + CI per env, normalized score, mean rank,
- :mod:`~hbo_envs.leaderboard.render` — which entries a suite ranks, and ``render_*`` entry points,
- :mod:`~hbo_envs.leaderboard.site` — the static site (jinja2 templates in ``templates/``):
  index, submit page, one page per suite, env and entry, ``results.csv``,
- :mod:`~hbo_envs.leaderboard.profiles` — IQM curves with CI bands, performance profiles,
  probability of improvement (rliable's definitions),
- :mod:`~hbo_envs.leaderboard.figures` — the matplotlib figures, as deterministic SVG,
- :mod:`~hbo_envs.leaderboard.cli` — ``hbo-bench leaderboard ...``.
"""

from hbo_envs.leaderboard.submission import (
    SUBMISSION_SCHEMA,
    ValidationReport,
    load_submission,
    submit,
    write_submission,
)
from hbo_envs.leaderboard.suite import Suite, SuiteError, list_suites, load_suite
from hbo_envs.leaderboard.verify import (
    RerunCell,
    SandboxLimits,
    VerificationReport,
    audit,
    rerun_cells,
    verify,
)
from hbo_envs.leaderboard.verify import validate_submission as validate

__all__ = [
    "SUBMISSION_SCHEMA",
    "RerunCell",
    "SandboxLimits",
    "audit",
    "rerun_cells",
    "Suite",
    "SuiteError",
    "ValidationReport",
    "VerificationReport",
    "list_suites",
    "load_submission",
    "load_suite",
    "submit",
    "validate",
    "verify",
    "write_submission",
]
