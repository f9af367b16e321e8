"""Claims and verdicts (hbo_envs.judging.rules.claims) on hand-made records, and the growth
exponent fit (hbo_envs.harness.stats.fit_exponent) against known power laws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hbo_envs.harness.stats import fit_exponent, paired_comparison, stratified_bootstrap_ci
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_RUN,
    REPRODUCES,
    RULE_DETERMINISTIC,
    RULE_EXPONENT,
    RULE_GROWTH,
    RULE_PAIRED,
    RULE_TOO_FEW,
    Claim,
    ClaimContext,
    Verdict,
    below_random,
    evaluate_claims,
    exponent_at_least,
    exponent_equals,
    format_verdicts,
    less,
    linear,
    lowest,
    sublinear,
)


def finals(env: str, **per_agent: list[float]) -> pd.DataFrame:
    rows = [
        {"env_id": env, "agent": a, "seed": s, "t": 100, "regret": r}
        for a, rs in per_agent.items()
        for s, r in enumerate(rs)
    ]
    return pd.DataFrame(rows)


def curves(env: str, agent: str, p: float, seeds: int = 8, T: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(seeds)
    t = np.unique(np.geomspace(1, T, 60).astype(int))
    rows = []
    for s in range(seeds):
        c = 2.0 * (1 + 0.05 * rng.standard_normal())
        for ti, r in zip(t, c * t**p, strict=True):
            rows.append({"env_id": env, "agent": agent, "seed": s, "t": int(ti), "regret": r})
    return pd.DataFrame(rows)


def _naive_sign_flip(d: list[float]) -> tuple[float, float, float]:
    """The textbook exact sign-flip test, written out: the two-sided p-value over all 2^n
    sign vectors, and Hartigan's interval from every non-empty subset mean (the m-th
    smallest and largest, m = floor(0.025 * 2^n))."""
    from itertools import combinations, product

    x = np.asarray(d, dtype=float)
    n = x.size
    stats = [abs(float(np.dot(e, x))) for e in product((1.0, -1.0), repeat=n)]
    p = sum(t >= abs(x.sum()) - 1e-12 for t in stats) / 2**n
    means = sorted(
        float(np.mean(x[list(c)])) for k in range(1, n + 1) for c in combinations(range(n), k)
    )
    m = int(0.025 * 2**n)
    return p, means[m - 1], means[-m]


def test_less_three_verdicts_from_the_paired_differences() -> None:
    a, b = [1.0, 1.2, 0.8, 1.1, 0.9, 1.3, 1.0], [5.0, 5.5, 4.5, 5.2, 4.9, 5.1, 6.0]
    c = [0.5, 3.0, 1.0, 2.5, 0.2, 4.0, 0.7]
    rec = finals("e", a=a, b=b, c=c)
    (v,) = evaluate_claims([less("a", "b")], rec)
    assert v.verdict == REPRODUCES and v.env == "e" and v.rule == RULE_PAIRED
    pc = paired_comparison(a, b)
    assert pc.diff == pytest.approx(np.mean(np.subtract(a, b)))
    assert f"[{pc.lo:.4g}, {pc.hi:.4g}]" in v.evidence and "n = 7 paired seeds" in v.evidence
    p, lo, hi = _naive_sign_flip(list(np.subtract(a, b)))  # an independent implementation
    assert (pc.p, pc.lo, pc.hi) == pytest.approx((p, lo, hi))
    assert evaluate_claims([less("b", "a")], rec)[0].verdict == DOES_NOT  # the failing control
    assert evaluate_claims([less("a", "c")], rec)[0].verdict == INCONCLUSIVE
    # five seeds cannot decide, however large the effect: said as such
    (w,) = evaluate_claims([less("a", "b")], rec[rec["seed"] < 5])
    assert w.verdict == INCONCLUSIVE and w.rule == RULE_TOO_FEW and "too few seeds" in w.rule


def test_pairing_decides_where_unpaired_cis_overlap() -> None:
    """Seed-to-seed spread shared by both agents (same f, same noise) hides a consistent
    difference from unpaired CIs; the paired rule sees it, and its control fails."""
    base = [1.0, 4.0, 9.0, 2.0, 7.0, 3.0, 8.0, 5.0]
    a = [x - 0.5 for x in base]
    rec = finals("e", a=a, b=base)
    ea, eb = stratified_bootstrap_ci(a), stratified_bootstrap_ci(base)
    assert ea[1] > eb[0]  # the per-agent CIs overlap
    (v,) = evaluate_claims([less("a", "b")], rec)
    assert v.verdict == REPRODUCES and "-0.5 [-0.5, -0.5]" in v.evidence
    assert evaluate_claims([less("b", "a")], rec)[0].verdict == DOES_NOT
    from scipy.stats import wilcoxon

    p = wilcoxon(np.subtract(a, base)).pvalue
    assert f"Wilcoxon p = {p:.2g}" in v.evidence


def test_pairs_only_seeds_both_agents_finished() -> None:
    rows = finals("e", a=[1.0, 2.0, 3.0], b=[1.5, 2.5, 3.5])
    rows = rows[~((rows["agent"] == "a") & (rows["seed"] == 0))]  # a lost seed 0
    (v,) = evaluate_claims([less("a", "b")], rows)
    assert "n = 2 paired seeds" in v.evidence and "a 2.5 vs b 3" in v.evidence
    assert v.rule == RULE_TOO_FEW


def _naive_paired(final: pd.DataFrame, env: str, a: str, b: str, col: str):
    """The pairing written with pandas masks: each agent's rows on ``env``, NaN scores
    dropped, the common seeds in ascending order, then paired_comparison."""
    f = final[final["env_id"] == env]
    sa = f[f["agent"] == a].set_index("seed")[col].dropna()
    sb = f[f["agent"] == b].set_index("seed")[col].dropna()
    common = sa.index.intersection(sb.index).sort_values()
    if len(common) == 0:
        return None
    return paired_comparison(sa.loc[common].to_numpy(), sb.loc[common].to_numpy())


def test_scores_and_pairs_equal_a_mask_over_the_final_rows() -> None:
    """ClaimContext finds each (env, agent)'s rows once and caches pairs: on shuffled records
    with lost seeds, NaN scores and agents that never ran, every score, ``ran`` and pair
    equals the pandas-mask reference exactly, and a repeated question gives the same answer."""
    rng = np.random.default_rng(7)
    rows = []
    for env in ("e1", "e2"):
        for agent in ("a", "b", "random"):
            for s in rng.permutation(12)[: rng.integers(0, 12)]:
                r = float(rng.standard_t(2) ** 2)
                cov = float("nan") if rng.random() < 0.2 else float(rng.random())
                rows.append(
                    {"env_id": env, "agent": agent, "seed": int(s), "t": 100, "regret": r}
                    | {"coverage": cov}
                )
    rec = pd.DataFrame(rows).sample(frac=1.0, random_state=3)
    ctx = ClaimContext(rec)
    f = ctx.final
    assert not f.empty
    for env in ("e1", "e2", "absent"):
        for a in ("a", "b", "random", "never"):
            mask = (f["env_id"] == env) & (f["agent"] == a)
            assert ctx.ran(env, a) == bool(mask.any())
            np.testing.assert_array_equal(ctx.scores(env, a), f[mask]["regret"].to_numpy())
            np.testing.assert_array_equal(
                ctx.scores(env, a, "miss"), 1.0 - f[mask]["coverage"].to_numpy()
            )
            for b in ("a", "b", "random"):
                f2 = f.assign(miss=1.0 - f["coverage"])
                for metric, col in (("regret", "regret"), ("miss", "miss")):
                    want = _naive_paired(f2, env, a, b, col)
                    assert ctx.paired(env, a, b, metric) == want
                    assert ctx.paired(env, a, b, metric) == want  # from the cache


def test_deterministic_cells_are_one_run_not_a_zero_width_ci() -> None:
    rec = finals("e", catgp=[19.12] * 5, tgp=[18.47] * 5)
    (v,) = evaluate_claims([less("tgp", "catgp")], rec)
    assert v.verdict == REPRODUCES and v.rule == RULE_DETERMINISTIC
    assert "one run: 5 identical seeds" in v.evidence and "[" not in v.evidence
    (w,) = evaluate_claims([less("catgp", "tgp")], rec)
    assert w.verdict == DOES_NOT and w.rule == RULE_DETERMINISTIC
    (u,) = evaluate_claims([less("tgp", "catgp")], finals("e", catgp=[19.12], tgp=[18.47]))
    assert u.verdict == INCONCLUSIVE and u.rule == RULE_TOO_FEW  # one stochastic seed


def test_avg_regret_metric_divides_by_T() -> None:
    rec = finals("e", a=[10.0, 10.0], b=[20.0, 20.0])
    ctx = ClaimContext(rec)
    np.testing.assert_allclose(ctx.scores("e", "a", "avg_regret"), [0.1, 0.1])
    with pytest.raises(ValueError, match="metric"):
        less("a", "b", metric="R_T")


def test_claims_over_every_env_and_missing_agents_are_not_run() -> None:
    six = [1.0, 1.1, 0.9, 1.2, 1.0, 1.05]
    rec = pd.concat([finals("e1", a=six, random=[3.0 + x for x in six]), finals("e2", a=six)])
    vs = evaluate_claims([below_random("a")], rec, envs=["e1", "e2", "e3"])
    assert [(v.env, v.verdict) for v in vs] == [
        ("e1", REPRODUCES),
        ("e2", NOT_RUN),
        ("e3", NOT_RUN),
    ]
    assert "random" in vs[1].evidence and "a, random" in vs[2].evidence


def test_lowest_needs_every_comparison() -> None:
    rec = finals(
        "e",
        a=[1.0, 1.1, 0.9, 1.0, 1.2, 0.8],
        b=[5.0, 5.1, 4.9, 5.2, 4.8, 5.0],
        c=[9.0, 9.1, 8.9, 9.2, 9.0, 8.8],
        d=[1.0, 3.0, 0.5, 0.7, 2.0, 0.6],
    )
    assert evaluate_claims([lowest("a", among=["b", "c"])], rec)[0].verdict == REPRODUCES
    assert evaluate_claims([lowest("a")], rec)[0].verdict == INCONCLUSIVE  # d overlaps
    assert evaluate_claims([lowest("b", among=["a", "c"])], rec)[0].verdict == DOES_NOT
    assert evaluate_claims([lowest("a", among=["zzz"])], rec)[0].verdict == NOT_RUN
    v = evaluate_claims([lowest("a", among=["b", "c"])], rec)[0]
    assert "vs b (reproduces)" in v.evidence and v.rule == RULE_PAIRED


def test_growth_claims_on_known_power_laws() -> None:
    rec = pd.concat([curves("e", "lin", 1.0), curves("e", "sqrt", 0.5)])
    assert evaluate_claims([linear("lin")], rec)[0].verdict == REPRODUCES
    assert evaluate_claims([sublinear("lin")], rec)[0].verdict == DOES_NOT
    assert evaluate_claims([sublinear("sqrt")], rec)[0].verdict == REPRODUCES
    assert evaluate_claims([linear("sqrt")], rec)[0].verdict == DOES_NOT
    assert evaluate_claims([sublinear("sqrt")], rec)[0].rule == RULE_GROWTH


def test_a_linear_curve_that_slows_early_is_not_sublinear() -> None:
    """Per-round regret slowing from 0.9 to 0.3 over the first T/8 and then flat: its
    exponent over [0.1 T, T] is far below 0.9 (the former rule said "sublinear"); the
    growth rule says linear, and "R_T/T decreasing" does not reproduce."""
    T = 4000
    t = np.unique(np.rint(np.geomspace(1, T, 60)).astype(int))
    s = np.arange(1, T + 1)
    mean = np.cumsum(np.where(s < T / 8, 0.9 - 0.6 * s / (T / 8), 0.3))[t - 1]
    rng = np.random.default_rng(4)
    rows = [
        {"env_id": "e", "agent": "slow", "seed": k, "t": int(ti), "regret": float(r)}
        for k in range(8)
        for ti, r in zip(t, mean * (1 + 0.02 * rng.standard_normal()), strict=True)
    ]
    rec = pd.DataFrame(rows)
    tt, Y = ClaimContext(rec).curves("e", "slow")
    keep = tt >= 0.1 * T
    assert fit_exponent(tt[keep], Y[:, keep])[2] < 0.9
    (v,) = evaluate_claims([sublinear("slow", text="R_T/T decreasing")], rec)
    assert v.verdict == DOES_NOT and v.rule == RULE_GROWTH
    assert evaluate_claims([linear("slow")], rec)[0].verdict == REPRODUCES
    # noisy late rates whose mean change is slightly negative but not decisively so: not
    # "falling" (the interval holds 0), and decisively above a t^0.9 curve's: still linear
    delta = [-0.01, 0.008, -0.012, 0.009, -0.011, 0.01, -0.009, 0.004]
    t2 = t[t > T / 2]
    noisy = rec.copy()
    for k, dk in enumerate(delta):
        late = (noisy["seed"] == k) & (noisy["t"] > T / 2)
        noisy.loc[late, "regret"] += dk * (noisy.loc[late, "t"] - T / 2)
    assert t2.size and np.mean(delta) < 0
    (w,) = evaluate_claims([sublinear("slow")], noisy)
    assert w.verdict == DOES_NOT and "p = " in w.evidence


def test_exponent_bounds_are_decided_by_the_interval_not_the_point() -> None:
    """Per-seed exponents 0.5 + 0.02 z_s: the sign-flip interval of their mean decides."""
    rng = np.random.default_rng(2)
    t = np.unique(np.geomspace(10, 1000, 30).astype(int))
    slopes = 0.5 + 0.02 * rng.standard_normal(8)
    rec = pd.DataFrame(
        [
            {"env_id": "e", "agent": "x", "seed": k, "t": int(ti), "regret": 2.0 * ti**p}
            for k, p in enumerate(slopes)
            for ti in t
        ]
    )
    _, lo, hi = _naive_sign_flip(list(slopes - slopes.mean()))
    lo, hi = slopes.mean() + lo, slopes.mean() + hi  # the interval of the mean exponent
    at_least = lambda b: evaluate_claims([exponent_at_least("x", b)], rec)[0]  # noqa: E731
    assert at_least(lo - 0.005).verdict == REPRODUCES
    assert at_least(lo - 0.005).rule == RULE_EXPONENT
    assert at_least(hi + 0.005).verdict == DOES_NOT  # the failing control: below the bound
    assert at_least(float(slopes.mean())).verdict == INCONCLUSIVE  # the point decides nothing
    eq = lambda v, tol: evaluate_claims([exponent_equals("x", v, tol=tol)], rec)[0]  # noqa: E731
    assert eq(0.5, 0.05).verdict == REPRODUCES
    assert eq(0.7, 0.05).verdict == DOES_NOT  # the failing control
    assert eq(float(slopes.mean()), (hi - lo) / 4).verdict == INCONCLUSIVE
    assert eq(0.5, 0.05).family == "suite"  # an instance check, not a paper claim


def test_zero_regret_beats_every_lower_bound() -> None:
    """A policy that knows the optimum has R_t = 0: no exponent, below every c t^p."""
    rec = curves("e", "oracle", 0.5).assign(regret=0.0)
    for claim, want in (
        (exponent_at_least("oracle", 0.5), DOES_NOT),
        (exponent_equals("oracle", 0.5), DOES_NOT),
        (linear("oracle"), DOES_NOT),
        (sublinear("oracle"), REPRODUCES),
    ):
        (v,) = evaluate_claims([claim], rec)
        assert v.verdict == want and "R = 0 at every recorded round" in v.evidence


@pytest.mark.parametrize("p", [0.25, 0.5, 0.75, 1.0])
def test_fit_exponent_recovers_power_laws_and_its_ci_covers(p: float) -> None:
    rng = np.random.default_rng(1)
    x = np.geomspace(100, 10_000, 20)
    Y = np.array([3.0 * x**p * np.exp(0.05 * rng.standard_normal(x.size)) for _ in range(20)])
    est, lo, hi = fit_exponent(x, Y)
    assert abs(est - p) < 0.02 and lo <= p <= hi and hi - lo < 0.05


def test_fit_exponent_refuses_bad_shapes_and_values() -> None:
    with pytest.raises(ValueError, match="runs, len"):
        fit_exponent([1.0, 2.0], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="positive"):
        fit_exponent([0.0, 2.0], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        fit_exponent([1.0, 2.0], [[1.0, np.nan]])
    assert np.isnan(fit_exponent([1.0, 2.0], [[0.0, 0.0]])[0])


def test_custom_claim_and_formatting() -> None:
    class AlwaysInconclusive(Claim):
        def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
            return [
                self._verdict(env, INCONCLUSIVE, f"{len(ctx.agents)} agents") for env in ctx.envs
            ]

    rec = finals("e", a=[1.0, 1.1, 0.9, 1.0, 1.2, 1.1], b=[5.0, 5.1, 4.9, 5.2, 5.0, 5.3])
    claims = [AlwaysInconclusive("custom", "Fig. 9"), less("a", "b", text="a beats b")]
    vs = evaluate_claims(claims, rec)
    assert vs[0] == Verdict("custom", "e", INCONCLUSIVE, "2 agents", "Fig. 9")
    assert "[rule: " + RULE_PAIRED + "]" in format_verdicts(vs)
    text = format_verdicts(vs)
    assert "a beats b [e]" in text and "paper claims: 1 reproduces, 1 inconclusive" in text
    assert "Holm-adjusted p = " in text
    floor = format_verdicts(evaluate_claims([below_random("a")], finals("e", a=[1.0] * 6)))
    assert "suite checks: 1 not run" in floor and "paper claims" not in floor
    assert format_verdicts([]) == "(no claims stated for this experiment)"


def test_miss_metric_compares_one_minus_final_coverage():
    """CG Fig. 1(f)'s claim is judged on 1 - coverage_T of the last round of each seed."""
    rows = []
    for a, cov in (("trunc", [1.0] * 6), ("raw", [0.8, 0.7, 0.9, 0.75, 0.85, 0.6])):
        for s, c in enumerate(cov):
            rows += [
                {"env_id": "e", "agent": a, "seed": s, "t": 5, "regret": 1.0, "coverage": 0.0},
                {"env_id": "e", "agent": a, "seed": s, "t": 10, "regret": 2.0, "coverage": c},
            ]
    rec = pd.DataFrame(rows)
    ctx = ClaimContext(rec)
    np.testing.assert_allclose(ctx.scores("e", "raw", "miss"), [0.2, 0.3, 0.1, 0.25, 0.15, 0.4])
    assert [v.verdict for v in evaluate_claims([less("trunc", "raw", metric="miss")], rec)] == [
        REPRODUCES
    ]
    assert [v.verdict for v in evaluate_claims([less("raw", "trunc", metric="miss")], rec)] == [
        DOES_NOT
    ]
