"""The random floor, without exemptions, from the results archive (issue 20).

Every reference agent of every experiment in ``results/archive`` — ATA-GP-UCB included —
is compared with the ``random`` agent on paired seeds (the claims' rule,
:func:`hbo_envs.judging.rules.claims.decide_less`). A pair that does not beat it must have a
mechanism (:data:`hbo_envs.judging.rules.known_failures.CAUSES`), and every cause must match a
failing pair (a fixed pair leaves the table). The numbers are the ``reproduce`` cells: the
archive runs them with the harness's own cell runner and agent seeds, and a sample of
them is re-run here (actions exactly, numbers within the archive's tolerance).
``plotting_corruption.figure1_trace`` pictures the first rounds of the same cells (tested
below).
"""

from __future__ import annotations

import fnmatch

import pytest

from hbo_envs.judging import archive as A
from hbo_envs.judging.rules.floor import floor_failures
from hbo_envs.judging.rules.known_failures import CAUSES, MECHANISMS
from hbo_envs.registration import missing_data

#: The tests reading the archive's results share one worker, which computes them once.
ARCHIVE = pytest.mark.xdist_group("archive_results")


@pytest.fixture(scope="module")
def results(archive_results):
    res = archive_results  # publish.all_results(), once per test process (conftest)
    if all(r["records"].empty for r in res.values()):
        pytest.fail("results/archive holds no cells: run `hbo-bench archive build`")
    return res


@ARCHIVE
def test_every_floor_failure_has_a_mechanism_and_every_cause_a_failure(results) -> None:
    fails = floor_failures(results)
    unexplained = [
        f"{f.experiment}: {f.agent} on {f.env}: {f.measured}" for f in fails if not f.mechanism
    ]
    assert not unexplained, "floor failures without a mechanism:\n" + "\n".join(unexplained)
    used = {f.cause for f in fails}
    unused = [c for c in CAUSES if c not in used]
    assert not unused, f"causes that match no failing pair of the archive (fixed?): {unused}"
    assert {f.mechanism for f in fails} <= set(MECHANISMS)


@ARCHIVE
def test_the_floor_covers_every_reference_agent_of_every_experiment(results) -> None:
    """No exemptions: every agent that ran beside random is judged (ATA included)."""
    judged = 0
    for _name, res in results.items():
        rec = res["records"]
        if res["exp"].kind == "exponent" or rec.empty:
            continue
        for _env, g in rec.groupby("env_id"):
            agents_ = set(g["agent"])
            if "random" in agents_:
                judged += len(agents_) - 1
    assert judged > 0
    ata = [
        a
        for res in results.values()
        for a in set(res["records"]["agent"])
        if not res["records"].empty
        if fnmatch.fnmatchcase(a, "ata-gp-ucb-*")
    ]
    assert ata, "the archive has no ATA-GP-UCB cell: the floor would exempt it"


@pytest.mark.parametrize("name", ["bkc2020-fig1", "cg2019-fig1f", "cg2019-fig1d", "pl2024-table2"])
def test_a_sample_of_archive_cells_reruns(name: str) -> None:
    """Actions exactly, numbers within rtol 1e-9 (archive.check_rerun): on any x86-64 CPU."""
    exp = A.EXPERIMENTS[name]
    if missing := sorted({d for e in exp.envs if (d := missing_data(e))}):
        pytest.skip(f"{name}'s cells need the real data sets {missing} (../shared/data is absent)")
    if A.load(name).empty:
        pytest.fail(f"results/archive/{name} holds no cells: run `hbo-bench archive build {name}`")
    rep = A.verify([name], sample=2, seed=20, log=lambda *_: None)
    assert rep.checked and not rep.mismatches, rep.mismatches


def test_figure1_trace_pictures_the_first_rounds_of_the_harness_cell() -> None:
    from hbo_envs.harness.cell import run_cell
    from hbo_envs.harness.plotting_corruption import figure1_trace
    from hbo_envs.harness.specs import AgentSpec, CellSpec

    (trace,) = figure1_trace(agents=("gp-ucb-corruption",), rounds=40, seed=3)
    res = run_cell(CellSpec("hbo/Corrupted-Fig1-v0", AgentSpec("gp-ucb-corruption"), 3, horizon=40))
    assert res.status == "ok"
    assert trace.regret == float(res.records["regret"].iloc[-1])  # bit for bit
    assert trace.budget_used == float(res.records["corruption_used"].iloc[-1])
