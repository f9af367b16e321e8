"""The hbo-bench harness: evaluate any agent on any env over many seeds.

- :func:`evaluate` — one agent on one env over seeds -> tidy record table (pandas).
- :func:`run_sweep` / :func:`build_cells` — ``envs x agents x seeds`` with a resumable
  results directory, locally or on Ray.
- :mod:`~hbo_envs.harness.records` (schema, down-sampling), :mod:`~hbo_envs.harness.summary`
  (regret tables), :mod:`~hbo_envs.harness.stats` (IQM, stratified bootstrap, growth
  exponents), :mod:`~hbo_envs.harness.plotting` (figures), :mod:`~hbo_envs.harness.store`
  (files on disk), :mod:`~hbo_envs.harness.ray_backend` (Ray).

What decides and publishes — the papers' experiments, the claim rules, the exponent fits,
the known failures, the results archive and the generated pages — is the judging layer,
:mod:`hbo_envs.judging`, built on this package; nothing here imports it (CI checks).

The CLI ``hbo-bench`` (:mod:`hbo_envs.cli`) is a thin layer over these.
"""

from hbo_envs.harness.cell import CellResult, run_cell
from hbo_envs.harness.records import COLUMNS, SUMMARY_COLUMNS, coverage_grid, record_grid
from hbo_envs.harness.runner import CellFailure, SweepResult, build_cells, evaluate, run_sweep
from hbo_envs.harness.specs import AgentSpec, CellSpec, agent_seed, parse_agent, parse_seeds
from hbo_envs.harness.stats import fit_exponent, iqm, stratified_bootstrap_ci
from hbo_envs.harness.store import ResultStore
from hbo_envs.harness.summary import format_ordering, format_table, summarize

__all__ = [
    "COLUMNS",
    "SUMMARY_COLUMNS",
    "AgentSpec",
    "CellFailure",
    "CellResult",
    "CellSpec",
    "ResultStore",
    "SweepResult",
    "agent_seed",
    "build_cells",
    "coverage_grid",
    "evaluate",
    "fit_exponent",
    "format_ordering",
    "format_table",
    "iqm",
    "parse_agent",
    "parse_seeds",
    "record_grid",
    "run_cell",
    "run_sweep",
    "stratified_bootstrap_ci",
    "summarize",
]
