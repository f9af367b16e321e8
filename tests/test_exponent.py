"""Regret-exponent estimates over a ladder of horizons (hbo_envs.judging.rules.exponent), the
exponent_at_least claim, and the cg2019-lower-bound reproduction's wiring (real CLI, tiny
budget)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import hbo_envs.judging.experiments as X
from hbo_envs.cli import main
from hbo_envs.harness.specs import AgentSpec
from hbo_envs.judging.experiments import ExponentExperiment
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    REPRODUCES,
    evaluate_claims,
    exponent_at_least,
)
from hbo_envs.judging.rules.exponent import (
    EnvVariant,
    exponent_table,
    run_exponent_sweep,
)


def _final(p: float, noise: float, seeds: int = 12, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    T = np.array([250, 500, 1000, 2000, 4000])
    rows = []
    for s in range(seeds):
        c = rng.uniform(1, 2)
        for t in T:
            rows.append(
                {
                    "env_id": "e",
                    "agent": "a",
                    "seed": s,
                    "t": t,
                    "regret": c * t**p * np.exp(noise * rng.standard_normal()),
                    "delta": 0.1,
                }
            )
    return pd.DataFrame(rows)


def test_exponent_table_recovers_a_known_exponent_with_a_calibrated_interval() -> None:
    covered = 0
    for rep in range(20):
        tab = exponent_table(_final(0.6, 0.1, seed=rep))
        r = tab.iloc[0]
        assert r["n"] == 12 and r["T_min"] == 250 and r["T_max"] == 4000
        assert r["ci_low"] <= r["exponent"] <= r["ci_high"]
        covered += r["ci_low"] <= 0.6 <= r["ci_high"]
    assert covered >= 15  # a 95% interval (percentile bootstrap, 12 seeds): >= 75% of 20


def test_exponent_at_least_verdicts() -> None:
    fin = _final(0.6, 0.02)
    v = lambda b: evaluate_claims([exponent_at_least("a", b, env="e")], fin)[0]  # noqa: E731
    assert v(0.5).verdict == REPRODUCES  # CI above the bound
    assert v(0.6).verdict == INCONCLUSIVE  # bound inside the CI: consistent, not evidence
    assert v(0.7).verdict == DOES_NOT and "R_T over T" in v(0.7).evidence


def test_random_play_on_a_lower_bound_env_has_the_exact_expected_regret() -> None:
    # Uniform play: E[R_T | j] = T (2Δ - mean_i f_j(x_i)), Var = T var_i(f_j).
    import gymnasium as gym

    var = EnvVariant("lb", "hbo/LowerBound-SE-v0", {"alpha": 0.5})
    horizons = (50, 100, 200)
    sw = run_exponent_sweep([var], [AgentSpec("random")], 6, horizons, workers=1, progress=False)
    fin = sw.final
    assert sw.failures == [] and len(fin) == 3 * 6
    assert set(fin["t"]) == set(horizons) and set(fin["env_id"]) == {"lb"}
    for T in horizons:
        env = gym.make(var.env_id, horizon=T, **var.kwargs).unwrapped
        assert fin.loc[fin["t"] == T, "delta"].iloc[0] == env.family.delta
        mean = sd2 = 0.0
        for s in range(6):
            env.reset(seed=s)
            f = env.objective.values
            mean += T * (f.max() - f.mean())
            sd2 += T * f.var()
        got = fin.loc[fin["t"] == T, "regret"].sum()
        assert abs(got - mean) <= 5 * np.sqrt(sd2)
        lb = fin.loc[fin["t"] == T, "lower_bound"].to_numpy()
        np.testing.assert_allclose(lb, float(env.regret_lower_bound(T)), rtol=1e-6)


def test_experiment_ladder_is_validated() -> None:
    kw = dict(
        name="x",
        title="x",
        citation="x",
        protocol="x",
        envs=("hbo/LowerBound-SE-v0",),
        paper=(AgentSpec("random"),),
        seeds=2,
        horizon=80,
        quick_seeds=2,
        quick_horizon=80,
        variants=(EnvVariant("lb", "hbo/LowerBound-SE-v0"),),
    )
    with pytest.raises(ValueError, match="horizons"):
        ExponentExperiment(**kw, horizons=(20, 80), quick_horizons=(20, 40, 80))
    with pytest.raises(ValueError, match="quick_horizons"):
        ExponentExperiment(**kw, horizons=(20, 40, 80), quick_horizons=(40, 20, 80))


def test_registered_lower_bound_experiment_claims_every_agent_and_env() -> None:
    e = X.EXPERIMENTS["cg2019-lower-bound"]
    assert e.kind == "exponent" and len(e.variants) == 4
    bounds = {(c.env, c.a): c.threshold for c in e.claims}
    assert bounds[("hbo/LowerBound-SE-v0[alpha=1]", "tgp-ucb")] == pytest.approx(0.5)
    assert bounds[("hbo/LowerBound-SE-v0[alpha=0.5]", "random")] == pytest.approx(2 / 3)
    kinds = {(c.a == "random", c.kind) for c in e.claims}
    assert kinds == {(False, "at_least"), (True, "equals")}  # uniform play: the scale
    assert bounds[("hbo/LowerBound-Matern-v0[alpha=1]", "gp-ucb")] == pytest.approx(3.5 / 6)
    assert len(bounds) == 4 * 6


def test_reproduce_exponent_cli_smoke(tmp_path, capsys, monkeypatch) -> None:
    var = EnvVariant("hbo/LowerBound-SE-v0[alpha=1]", "hbo/LowerBound-SE-v0", {"alpha": 1.0})
    exp = ExponentExperiment(
        name="tiny-lb",
        title="tiny",
        citation="test",
        protocol="test",
        envs=(var.env_id,),
        paper=(AgentSpec("tgp-ucb"),),
        seeds=3,
        horizon=80,
        quick_seeds=3,
        quick_horizon=80,
        variants=(var,),
        horizons=(20, 40, 80),
        quick_horizons=(20, 40, 80),
        claims=(
            exponent_at_least("tgp-ucb", 0.5, env=var.label),
            exponent_at_least("random", 0.5, env=var.label),
        ),
    )
    monkeypatch.setitem(X.EXPERIMENTS, "tiny-lb", exp)
    out = tmp_path / "o"
    argv = ["reproduce", "tiny-lb", "--out", str(out), "--workers", "1", "--no-progress"]
    rc = main([*argv, "--format", "png"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "measured exponent" in text and "tgp-ucb" in text and "random" in text
    summary = json.loads((out / "summary.json").read_text())
    assert {r["agent"] for r in summary["exponents"]} == {"tgp-ucb", "random"}
    assert len(summary["verdicts"]) == 2 and (out / "exponents.png").exists()
    # resumable: a second run skips every cell
    main([*argv, "--format", "png"])
    assert "0 cell(s) run, 18 already finished" in capsys.readouterr().out
    assert main(["reproduce", "tiny-lb", "--horizon", "100"]) == 2


def test_no_lower_bound_claim_holds_for_a_policy_that_reads_the_bump() -> None:
    """The control of issue 20: a cheat with R_T = 0, run through the harness's own cell
    runner, is judged as beating the bound by every claim of cg2019-lower-bound."""
    import dataclasses

    from hbo_envs.judging.experiments.lower_bound import BumpPeeker

    e = X.EXPERIMENTS["cg2019-lower-bound"]
    cheat = AgentSpec(BumpPeeker, label="cheat")
    sw = run_exponent_sweep(e.variants, [cheat], 2, (50, 100, 200), workers=1, progress=False)
    assert not sw.failures and (sw.final["regret"] == 0).all()
    claims = [dataclasses.replace(c, a="cheat") for c in e.claims]
    verdicts = evaluate_claims(claims, sw.final, [v.label for v in e.variants])
    assert len(verdicts) == len(e.claims) == 24
    assert {v.verdict for v in verdicts} == {DOES_NOT}


def test_lower_bound_instance_check_fails_for_an_env_whose_gap_does_not_shrink() -> None:
    """Uniform play with R_T ∝ T (a Δ that does not shrink with T) fails the instance check."""
    e = X.EXPERIMENTS["cg2019-lower-bound"]
    (check,) = [c for c in e.claims if c.a == "random" and c.env.endswith("SE-v0[alpha=1]")]
    T = [300, 600, 1200, 2400]
    fin = pd.DataFrame(
        [
            {
                "env_id": check.env,
                "agent": "random",
                "seed": s,
                "t": t,
                "regret": 0.1 * t * (1 + s / 50),
            }
            for s in range(6)
            for t in T
        ]
    )
    (v,) = evaluate_claims([check], fin)
    assert v.verdict == DOES_NOT and "1.000" in v.evidence


@pytest.mark.parametrize(
    "first",
    [
        "hbo_envs.judging.rules.exponent",
        "hbo_envs.judging.experiments.lower_bound",
        "hbo_envs.judging.experiments.reproduce",
    ],
)
def test_any_exponent_module_imports_first_in_a_fresh_interpreter(first):
    # exponent.py and the lower-bound experiments used to import each other's types;
    # importing either one first in a fresh process met a half-initialised module.
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", f"import {first}"], check=True, capture_output=True)
