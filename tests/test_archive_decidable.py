"""Every claim of the archive can be decided at the seed count the archive runs, and a
build says so when one cannot (issue 38: bad input is reported at ``archive build``, not
left as a silent "inconclusive"); the published counts keep paper claims and suite checks
apart."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from hbo_envs.harness.stats import MIN_PAIRED_SEEDS
from hbo_envs.judging import archive, publish
from hbo_envs.judging.experiments import EXPERIMENTS
from hbo_envs.judging.rules.claims import (
    PAPER,
    SUITE,
    Verdict,
    below_random,
    evaluate_claims,
    less,
)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_claim_can_decide_at_the_archive_seed_count(name: str) -> None:
    assert archive.undecidable(name) == []


def test_too_few_seeds_are_reported_at_build(tmp_path, monkeypatch) -> None:
    """Park–Lee at 5 seeds: every claim on its envs is named, with the agents' seed counts,
    before the build runs anything (max_cells=0 runs nothing)."""
    fewer = dataclasses.replace(archive.BUDGETS["pl2024-fig1"], seeds=MIN_PAIRED_SEEDS - 1)
    monkeypatch.setitem(archive.BUDGETS, "pl2024-fig1", fewer)
    lines = archive.undecidable("pl2024-fig1")
    assert lines and all("too few seeds" in x and ": 5;" in x for x in lines)
    assert any(x.startswith("GP-UCB: cumulative regret grows linearly [") for x in lines)
    logged: list[str] = []
    counts = archive.build(["pl2024-fig1"], root=tmp_path / "a", max_cells=0, log=logged.append)
    assert counts["undecidable"] == len(lines) and counts["run"] == 0
    assert sum("cannot decide, too few seeds" in x for x in logged) == len(lines)
    # and at the archive's own budget, none
    monkeypatch.setitem(archive.BUDGETS, "pl2024-fig1", dataclasses.replace(fewer, seeds=None))
    assert archive.undecidable("pl2024-fig1") == []


def test_a_pair_with_fewer_seeds_is_named() -> None:
    """A ``fewer`` entry cutting one agent below the minimum names that agent only."""
    b = archive.BUDGETS["pl2024-fig1"]
    cut = dataclasses.replace(b, fewer=(("mom-gp-ucb", "hbo/RKHS1D-", 4, "test"),))
    old = archive.BUDGETS["pl2024-fig1"]
    archive.BUDGETS["pl2024-fig1"] = cut
    try:
        lines = archive.undecidable("pl2024-fig1")
    finally:
        archive.BUDGETS["pl2024-fig1"] = old
    assert lines and all("mom-gp-ucb on hbo/RKHS1D-" in x for x in lines)
    assert all("RKHS1D" in x.split("[")[-1] for x in lines)


def test_budgets_run_the_full_protocols_that_fit() -> None:
    """Issue 38 item 3: Fig. 1(e) at 10 seeds, Fig. 1(f) at 50, the lower bound at >= 20
    seeds over its horizon ladder, Park–Lee at its 10 seeds with every pair run; the one
    remaining reduction (Park–Lee 5D at T = 300) states its measured cost."""
    used = {n: archive.protocol_used(e) for n, e in EXPERIMENTS.items()}
    assert used["cg2019-fig1e"]["seeds"] == 10 and used["cg2019-fig1e"]["full"]
    assert used["cg2019-fig1f"]["seeds"] == 50 and used["cg2019-fig1f"]["full"]
    lb = used["cg2019-lower-bound"]
    assert lb["seeds"] >= 20 and len(lb["ladder"]) >= 5 and lb["full"]
    for n in ("pl2024-fig1", "pl2024-table1"):
        assert used[n]["seeds"] == 10 and used[n]["fewer"] == []
        assert "CPU seconds" in used[n]["reason"] and "T = 300" in used[n]["reason"]
    # tails-v0-estimators runs ATA-Nyström on 6 of its 12 seeds, the cost stated
    (few,) = used["tails-v0-estimators"]["fewer"]
    assert few["agent"] == "ata-gp-ucb-nystrom*" and few["seeds"] >= 6
    assert "CPU hour" in few["why"]
    reduced = {n for n, u in used.items() if not u["full"]}
    assert reduced == {"pl2024-fig1", "pl2024-table1", "tails-v0-estimators"}


def _rec(env: str, **agents: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"env_id": env, "agent": a, "seed": s, "t": 10, "regret": r}
            for a, rs in agents.items()
            for s, r in enumerate(rs)
        ]
    )


def test_counts_keep_paper_claims_and_suite_checks_apart() -> None:
    rec = _rec("e", a=[1.0, 1.1, 0.9, 1.0, 1.2, 1.1], b=[5.0] * 5 + [5.5], random=[3.0] * 6)
    vs = evaluate_claims([less("a", "b"), below_random("a"), below_random("b")], rec)
    assert [v.family for v in vs] == [PAPER, SUITE, SUITE]
    assert publish.counts(vs, PAPER) == {
        "reproduces": 1,
        "does not reproduce": 0,
        "inconclusive": 0,
        "not run": 0,
    }
    assert publish.counts(vs, SUITE)["reproduces"] == 1
    assert publish.counts(vs, SUITE)["does not reproduce"] == 1
    tally = publish._split_tally(vs)
    assert tally == "paper claims: 1 reproduces; suite checks: 1 reproduces, 1 does not reproduce"
    # the comparison says whether each agent beats uniform play
    assert "a beats uniform play, b loses to uniform play" in vs[0].evidence
    line = publish.multiplicity_line(vs)
    assert "1 paper-claim verdicts" in line and "1 of them survive" in line


def test_holm_marks_decisions_that_chance_could_explain() -> None:
    """Twenty decided paper claims at p = 2/64 each (6 seeds of one sign): each is decided
    at 5%, none survives Holm over the family of 20 (20 x 0.03125 > 0.05)."""
    rows = []
    for k in range(20):
        rows += _rec(f"e{k}", a=[1.0] * 5 + [1.5], b=[2.0] * 6).to_dict("records")
    vs = evaluate_claims([less("a", "b")], pd.DataFrame(rows))
    assert {v.verdict for v in vs} == {"reproduces"} and all(v.p == 2 / 64 for v in vs)
    assert all(v.p_holm == pytest.approx(min(1.0, 20 * 2 / 64)) for v in vs)
    assert "0 of them survive" in publish.multiplicity_line(vs)
    page_rows = publish._verdict_table("x", vs)
    assert all("(not kept)" in r for r in page_rows[2:])
    assert isinstance(vs[0], Verdict)
