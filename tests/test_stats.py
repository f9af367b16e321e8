"""Statistical helpers of the harness against hand-computed answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hbo_envs.harness.stats import bootstrap_mean_band, iqm, stratified_bootstrap_ci
from hbo_envs.harness.summary import final_rows, summarize


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ([5.0], 5.0),  # n = 1: nothing trimmed
        ([1.0, 3.0], 2.0),  # n = 2: floor(2/4) = 0 trimmed
        ([1.0, 2.0, 3.0, 100.0], 2.5),  # n = 4: drop 1 and 100
        ([100.0, 1.0, 3.0, 2.0, 4.0], 3.0),  # n = 5: drop 1 each end -> mean(2, 3, 4)
        ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1000.0], 3.5),  # n = 8: drop 2 each end
    ],
)
def test_iqm_hand_values(x: list[float], expected: float) -> None:
    assert iqm(x) == pytest.approx(expected)


def test_iqm_matches_scipy_trim_mean() -> None:
    from scipy.stats import trim_mean

    x = np.random.default_rng(0).standard_t(2, size=(13, 3))
    assert iqm(x) == pytest.approx(trim_mean(x.ravel(), 0.25))


def test_iqm_rows_overwrites_only_an_array_it_may_own() -> None:
    """``overwrite=True`` sorts a C-contiguous float64 array in place (the same numbers as a
    copy); a list, a strided view or another dtype is copied and left as it was."""
    from hbo_envs.harness.stats import iqm_rows

    rng = np.random.default_rng(3)
    x = rng.standard_t(2, size=(4, 50, 9))
    want = np.array([[iqm(r) for r in block] for block in x])
    own = x.copy()
    assert np.array_equal(iqm_rows(own, overwrite=True), want)
    assert np.array_equal(own, np.sort(x, axis=-1))  # sorted in place, no copy
    for other in (x.tolist(), np.swapaxes(np.swapaxes(x, 1, 2).copy(), 1, 2), x.astype(np.float32)):
        before = np.array(other, copy=True)
        got = iqm_rows(other, overwrite=True)
        assert np.array_equal(np.asarray(other), before)  # untouched
        ref = np.array([[iqm(r) for r in block] for block in np.asarray(other, dtype=float)])
        assert np.array_equal(got, ref)


def test_iqm_refuses_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        iqm([1.0, np.nan])


def test_bootstrap_ci_of_a_constant_is_the_constant() -> None:
    assert stratified_bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)


def test_bootstrap_ci_two_points() -> None:
    # resampled means of {0, 1} are 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4:
    # the 2.5% and 97.5% quantiles are 0 and 1.
    assert stratified_bootstrap_ci([0.0, 1.0], reps=4000) == (0.0, 1.0)


def test_bootstrap_ci_binomial_quantiles() -> None:
    # x = (0, 0, 0, 1): a resampled mean is K/4, K ~ Bin(4, 1/4).
    # P(K = 0) = 0.316 > 0.025 -> lower = 0; P(K <= 2) = 0.949, P(K <= 3) = 0.996 -> upper 3/4.
    lo, hi = stratified_bootstrap_ci([0.0, 0.0, 0.0, 1.0], reps=20000)
    assert (lo, hi) == (0.0, 0.75)


def test_bootstrap_is_stratified_per_task() -> None:
    # task 2 is constant 10, task 1 resamples {0, 1}: overall mean in {5, 5.25, 5.5}.
    scores = np.array([[0.0, 10.0], [1.0, 10.0]])
    assert stratified_bootstrap_ci(scores, reps=4000) == (5.0, 5.5)
    # with a custom statistic every replicate keeps the (runs, tasks) shape
    shapes = set()

    def stat(s: np.ndarray) -> float:
        shapes.add(s.shape)
        return float(s[:, 1].mean())  # task 2 only: always 10

    assert stratified_bootstrap_ci(scores, stat, reps=50) == (10.0, 10.0)
    assert shapes == {(2, 2)}


def test_bootstrap_ci_is_deterministic_and_covers_the_mean() -> None:
    x = np.random.default_rng(1).normal(size=30)
    a = stratified_bootstrap_ci(x, seed=3)
    assert a == stratified_bootstrap_ci(x, seed=3)
    assert a[0] < x.mean() < a[1]
    # roughly mean +- 1.96 * sd / sqrt(n)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert a[1] - a[0] == pytest.approx(2 * half, rel=0.2)


def test_bootstrap_band_constant_and_ordered() -> None:
    c = np.tile(np.arange(5.0), (4, 1))
    mean, lo, hi = bootstrap_mean_band(c)
    np.testing.assert_array_equal(mean, np.arange(5.0))
    np.testing.assert_allclose(lo, np.arange(5.0))
    np.testing.assert_allclose(hi, np.arange(5.0))
    c = np.random.default_rng(0).normal(size=(10, 7))
    mean, lo, hi = bootstrap_mean_band(c)
    assert np.all(lo <= mean) and np.all(mean <= hi)


def _records() -> pd.DataFrame:
    rows = []
    for seed, R in enumerate([10.0, 20.0, 30.0, 100.0]):
        for t, frac in ((5, 0.5), (10, 1.0)):
            rows.append(
                {
                    "env_id": "e",
                    "agent": "a",
                    "seed": seed,
                    "t": t,
                    "regret": R * frac,
                    "avg_regret": R * frac / t,
                    "coverage": 1.0 if t == 10 else np.nan,
                    "corruption_used": 0.0,
                    "wall_time": 0.1 * t,
                    "agent_time": 0.05 * t,
                    "lower_bound": np.nan,
                }
            )
    return pd.DataFrame(rows)


def test_summary_hand_values() -> None:
    rec = _records()
    fin = final_rows(rec)
    assert fin["t"].tolist() == [10] * 4
    s = summarize(rec, {("e", "a"): 2}).iloc[0]
    assert s["n"] == 4 and s["failed"] == 2 and s["T"] == 10
    assert s["R_T_mean"] == pytest.approx(40.0)
    assert s["R_T_median"] == pytest.approx(25.0)
    assert s["R_T_iqm"] == pytest.approx(25.0)
    assert s["R_T_std"] == pytest.approx(np.std([10, 20, 30, 100], ddof=1))
    assert s["avg_R_T_mean"] == pytest.approx(4.0)
    assert s["R_T_ci_low"] < 40 < s["R_T_ci_high"]
    assert s["coverage_T"] == 1.0
    assert s["time_per_round_s"] == pytest.approx(0.1)
    assert s["time_per_cell_s"] == pytest.approx(1.0)


def test_summary_lists_pairs_that_only_failed() -> None:
    s = summarize(_records(), {("e", "b"): 3})
    row = s[s["agent"] == "b"].iloc[0]
    assert row["n"] == 0 and row["failed"] == 3 and np.isnan(row["R_T_mean"])


def test_format_ordering_marks_overlapping_cis() -> None:
    from hbo_envs.harness.summary import format_ordering

    s = pd.DataFrame(
        {
            "env_id": ["e"] * 3,
            "agent": ["slow", "best", "close"],
            "n": [3, 3, 3],
            "R_T_mean": [10.0, 1.0, 1.5],
            "R_T_ci_low": [9.0, 0.5, 1.2],
            "R_T_ci_high": [11.0, 1.4, 1.8],
        }
    )
    assert format_ordering(s) == "e: best ~ close < slow"


@pytest.mark.parametrize("shape", [(10,), (7, 5), (20, 13), (3, 1), (200,), (37, 29)])
def test_bootstrap_ci_of_the_iqm_equals_the_replicate_by_replicate_loop(shape) -> None:
    # stratified_bootstrap_ci sorts all replicates at once when the statistic is iqm; the
    # interval must be the one of calling iqm on every replicate, bit for bit.
    x = np.random.default_rng(len(shape) * 100 + shape[0]).standard_t(2, size=shape) * 1e3
    for seed in range(3):
        one_by_one = stratified_bootstrap_ci(x, lambda s: iqm(s), reps=400, seed=seed)
        assert stratified_bootstrap_ci(x, iqm, reps=400, seed=seed) == one_by_one
    with pytest.raises(ValueError, match="NaN"):
        stratified_bootstrap_ci(np.array([1.0, np.nan, 2.0]), iqm)


def test_fit_exponent_bootstrap_equals_polyfit_on_every_resample() -> None:
    # fit_exponent fits all bootstrap resamples in closed form at once; check it against
    # np.polyfit on each resample's mean curve (dropping non-positive means), as specified.
    from hbo_envs.harness.stats import fit_exponent

    rng = np.random.default_rng(7)
    x = np.array([5.0, 10.0, 40.0, 100.0, 400.0, 1000.0])
    Y = np.exp(rng.normal(size=(9, 1))) * x**0.7 * np.exp(0.2 * rng.normal(size=(9, 6)))
    Y[0, 0] = -50.0  # a resample whose mean at x[0] is not positive drops that point
    p, lo, hi = fit_exponent(x, Y, reps=300, seed=4)
    idx = np.random.default_rng(4).integers(9, size=(300, 9))

    def poly(mean):
        ok = mean > 0
        return np.polyfit(np.log(x[ok]), np.log(mean[ok]), 1)[0]

    boot = np.array([poly(Y[i].mean(axis=0)) for i in idx])
    want_lo, want_hi = np.quantile(boot, [0.025, 0.975])
    assert p == pytest.approx(poly(Y.mean(axis=0)), rel=1e-12)
    assert (lo, hi) == pytest.approx((want_lo, want_hi), rel=1e-12)
    assert np.isnan(fit_exponent([1.0, 2.0], [[-1.0, 1.0]])[0])  # one positive point


@pytest.mark.parametrize("runs", [5, 10, 14, 23])
def test_leaderboard_score_ci_equals_the_replicate_by_replicate_loop(runs) -> None:
    # score_with_ci evaluates every bootstrap replicate at once (stat.batched); the score
    # and its interval must be the replicate-by-replicate ones, bit for bit.
    from hbo_envs.leaderboard.aggregate import score_with_ci

    rng = np.random.default_rng(runs)
    x = np.abs(rng.standard_t(2, size=(runs, 6))) * 100
    ref = np.abs(rng.normal(size=6)) * 100 + 1

    def stat(s):
        return float(np.mean([1.0 - iqm(s[:, j]) / ref[j] for j in range(ref.size)]))

    want = (stat(x), *stratified_bootstrap_ci(x, stat, reps=300, seed=2))
    assert score_with_ci(x, ref, reps=300, seed=2) == want


def test_wilcoxon_p_is_scipys_number_and_vectorizes_the_permutation_case() -> None:
    """``wilcoxon_p`` gives exactly ``scipy.stats.wilcoxon(d, zero_method="wilcox").pvalue``
    on samples with ties and zeros (scipy's exact permutation branch, n <= 13, which this
    function vectorizes), without them (scipy's exact branch) and above 13 (asymptotic)."""
    from scipy.stats import wilcoxon

    from hbo_envs.harness.stats import WILCOXON_PERMUTATION_MAX_N, wilcoxon_p

    rng = np.random.default_rng(7)
    samples = [
        np.array([1.0, 1.0, -2.0, 0.0, 3.0]),  # a tie and a zero
        np.array([0.0, 0.0, 2.0]),
        np.array([-1.0, -1.0, -1.0, -1.0]),  # all tied, one side
        np.array([1e-300, -1e300, 2.5, -2.5, 0.0]),  # extremes
        np.array([2.0, -1.0, 3.5]),  # no ties: scipy's exact branch
    ]
    for n in (6, 9, WILCOXON_PERMUTATION_MAX_N, WILCOXON_PERMUTATION_MAX_N + 1, 20):
        samples.append(rng.integers(-3, 4, size=n).astype(float))  # ties and zeros
        samples.append(np.round(rng.normal(size=n), 1))
    permutation_cases = 0
    for d in samples:
        x = d[d != 0]
        permutation_cases += (np.unique(np.abs(x)).size < x.size or x.size < d.size) and (
            d.size <= WILCOXON_PERMUTATION_MAX_N
        )
        expected = float(wilcoxon(d, zero_method="wilcox").pvalue)
        assert wilcoxon_p(d) == expected, (d, wilcoxon_p(d), expected)
    assert permutation_cases >= 8  # the vectorized branch is what most cases test


@pytest.mark.parametrize("d", [[], [0.0, 0.0], [1.0, np.nan], [np.inf, 1.0]])
def test_wilcoxon_p_refuses_what_has_no_p_value(d: list[float]) -> None:
    from hbo_envs.harness.stats import wilcoxon_p

    with pytest.raises(ValueError, match="'d' parameter of wilcoxon_p"):
        wilcoxon_p(np.array(d))
