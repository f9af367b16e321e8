"""The issue-19 reproductions: the AttackRatio verdict rule on control inputs, and the
direct measurements (attack success, budget sweep) on a tiny budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hbo_envs.judging.experiments import EXPERIMENTS
from hbo_envs.judging.experiments.beyond import (
    AttackRatio,
    attack_success,
    budget_sweep,
    plot_budget_sweep,
)
from hbo_envs.judging.rules.claims import DOES_NOT, INCONCLUSIVE, REPRODUCES, evaluate_claims


def records(attacked, clean):
    rows = [("att", s, r) for s, r in enumerate(attacked)] + [
        ("clean", s, r) for s, r in enumerate(clean)
    ]
    return pd.DataFrame(
        {
            "env_id": [e for e, _, _ in rows],
            "agent": "gp-ucb",
            "seed": [s for _, s, _ in rows],
            "t": 50,
            "regret": [r for _, _, r in rows],
        }
    )


@pytest.mark.parametrize(
    "attacked, at_most, verdict",
    [
        ([30.0, 31, 29, 30.5, 29.5, 30], False, REPRODUCES),  # ratio ~3 >= 2
        ([12.0, 11, 12.5, 11.5, 12, 11], False, DOES_NOT),  # ratio ~1.2 < 2: the control
        ([20.0, 5, 35, 10, 30, 25], False, INCONCLUSIVE),  # straddles 2
        ([12.0, 11, 12.5, 11.5, 12, 11], True, REPRODUCES),  # the random-attack control claim
        ([30.0, 31, 29, 30.5, 29.5, 30], True, DOES_NOT),
    ],
)
def test_attack_ratio_verdicts(attacked, at_most, verdict):
    clean = [10.0, 10.2, 9.8, 10.1, 9.9, 10.0]
    claim = AttackRatio("x", "s", "gp-ucb", "att", "clean", 2.0, at_most)
    [v] = evaluate_claims([claim], records(attacked, clean))
    assert v.verdict == verdict, v.evidence
    [w] = evaluate_claims([claim], records(attacked[:5], clean[:5]))
    assert w.verdict == INCONCLUSIVE and "too few seeds" in w.rule


def test_experiments_are_registered_with_every_agent_against_random():
    import agents

    for name in ("hs2022-attacks", "ebk2025-forrester"):
        e = EXPERIMENTS[name]
        labels = {a.label for a in e.paper + e.extra}
        assert {"rcgp-ucb", "rcgp-ucb-adaptive", "ec-gp-ucb", "outlier-gp-ucb", "gp-ucb"} <= labels
        specs, skipped = e.agent_specs(available=set(agents.available()))
        assert not skipped
        floor = {c.a for c in e.claims if getattr(c, "b", None) == "random"}
        assert labels <= floor


def test_attack_success_and_budget_sweep_tiny(tmp_path):
    df = attack_success(["hbo/HS-Forrester-Clipping-v0"], ["random"], seeds=[0, 1], horizon=30)
    assert df["success_rate"].between(0, 1).all() and (df["cost"] >= 0).all()
    sw = budget_sweep("hbo/HS-Forrester-Clipping-v0", "C", [0.0, 2.0], ["gp-ucb"], [0], 30)
    assert sw.loc[sw["C"] == 0.0, "cost"].item() == 0.0
    assert 0.0 < sw.loc[sw["C"] == 2.0, "cost"].item() <= 2.0 + 1e-12
    plot_budget_sweep(sw, "C", str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").stat().st_size > 0
    assert np.isfinite(sw["regret"]).all()


def test_success_cli_writes_its_table(tmp_path, capsys):
    from hbo_envs.judging.experiments.beyond_cli import main

    main(["success", "--out", str(tmp_path), "--seeds", "1"])
    df = pd.read_csv(tmp_path / "attack_success.csv")
    assert len(df) == 6 and "success_rate" in capsys.readouterr().out
    clean = df[df["env_id"] == "hbo/HS-Forrester-None-v0"]
    assert clean["cost"].item() == 0.0
