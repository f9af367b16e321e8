"""Aggregates over record tables ignore the index and count each seed once (issue 38 item 5).

``pd.concat([a, b])`` keeps its frames' indexes, so labels repeat. Before, ``summarize``
of two frames of disjoint seeds still worked, but ``final_rows``' ``idxmax`` + ``.loc`` on
repeated labels returned every row with that label (a seed counted once per frame: n 3 ->
6 and a narrower CI), and a frame concatenated with a copy of itself was summarized as
twice the seeds. Now the index is ignored everywhere and a cell held twice is refused.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hbo_envs.harness import summarize
from hbo_envs.harness.records import coerce, unique_rounds
from hbo_envs.harness.summary import final_rows
from hbo_envs.judging.rules.claims import ClaimContext, evaluate_claims, less
from hbo_envs.judging.rules.exponent import exponent_table, format_regret_by_horizon


def _records(env: str, agent: str, seeds: range, T: int, drift: float) -> pd.DataFrame:
    """Hand-made records: R_t = cumulative sum of per-round regrets drawn per seed."""
    frames = []
    for s in seeds:
        rng = np.random.default_rng(1000 + s)
        r = np.cumsum(drift + rng.uniform(0.0, 1.0, T))
        t = np.arange(1, T + 1)
        frames.append(
            pd.DataFrame(
                {
                    "env_id": env,
                    "agent": agent,
                    "seed": s,
                    "t": t,
                    "regret": r,
                    "avg_regret": r / t,
                    "coverage": np.nan,
                    "corruption_used": 0.0,
                    "wall_time": t * 1e-3,
                    "agent_time": t * 5e-4,
                    "lower_bound": np.nan,
                }
            )
        )
    return coerce(pd.concat(frames, ignore_index=True))


def _assert_same_summary(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        a.sort_values(["env_id", "agent"], ignore_index=True),
        b.sort_values(["env_id", "agent"], ignore_index=True),
    )


def test_concatenated_frames_of_disjoint_seeds_count_each_seed_once() -> None:
    a = _records("e", "random", range(0, 3), 30, 0.5)
    b = _records("e", "random", range(3, 6), 30, 0.5)
    assert a.index.equals(b.index)  # every label repeats in the concatenation
    glued = pd.concat([a, b])
    s = summarize(glued)
    assert s["n"].tolist() == [6]
    _assert_same_summary(s, summarize(pd.concat([a, b], ignore_index=True)))
    # the mean over seeds is the mean of the six final regrets, each counted once
    finals = [
        float(x.loc[(x["seed"] == k) & (x["t"] == 30), "regret"].iloc[0])
        for x in (a, b)
        for k in set(x["seed"])
    ]
    assert len(finals) == 6
    assert s["R_T_mean"].iloc[0] == pytest.approx(np.mean(finals), rel=1e-12)


def test_concatenated_frames_of_other_agents_summarize_as_each_alone() -> None:
    a = _records("e", "gp-ucb", range(3), 40, 0.1)
    b = _records("e", "random", range(3), 40, 0.5)
    glued = pd.concat([a, b])
    s = summarize(glued)
    assert s["n"].tolist() == [3, 3]
    _assert_same_summary(s, pd.concat([summarize(a), summarize(b)], ignore_index=True))


def test_final_rows_ignores_repeated_labels() -> None:
    a = _records("e", "x", range(2), 10, 0.0)
    b = _records("e", "y", range(2), 10, 0.0)
    fin = final_rows(pd.concat([a, b]))
    # one row per (env, agent, seed), each at t = T; the old idxmax + .loc gave 8 rows
    assert len(fin) == 4 and (fin["t"] == 10).all()
    assert fin[["agent", "seed"]].values.tolist() == [["x", 0], ["x", 1], ["y", 0], ["y", 1]]
    # a shuffled index (labels out of order and repeated) gives the same rows
    shuffled = pd.concat([a, b]).sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(final_rows(shuffled), fin)


def test_a_cell_held_twice_is_refused_by_every_aggregate() -> None:
    a = _records("e", "random", range(3), 30, 0.5)
    twice = pd.concat([a, a])
    msg = r"hold 3 cell\(s\) more than once \(env e, agent random, seed 0"
    with pytest.raises(ValueError, match=msg):
        summarize(twice)
    with pytest.raises(ValueError, match=msg):
        final_rows(twice)
    with pytest.raises(ValueError, match=msg):
        ClaimContext(twice)
    fin = final_rows(a)
    with pytest.raises(ValueError, match="the final rows hold 3 cell"):
        exponent_table(pd.concat([fin, fin]).assign(delta=np.nan))
    with pytest.raises(ValueError, match="the final rows hold 3 cell"):
        format_regret_by_horizon(pd.concat([fin, fin]))
    # the same seed of a second run (other numbers) is refused just the same
    other = _records("e", "random", range(1), 30, 0.9)
    with pytest.raises(ValueError, match=r"hold 1 cell\(s\)"):
        summarize(pd.concat([a, other]))


def test_plots_refuse_a_cell_held_twice(tmp_path) -> None:
    from hbo_envs.harness.plotting import plot_regret

    a = _records("hbo/RKHS-SE-StudentT-v0", "random", range(2), 20, 0.5)
    plot_regret(pd.concat([a, a.assign(seed=a["seed"] + 2)]), [tmp_path / "ok.png"])
    with pytest.raises(ValueError, match="more than once"):
        plot_regret(pd.concat([a, a]), [tmp_path / "bad.png"])


def test_paired_claims_on_concatenated_frames_equal_those_on_one_frame() -> None:
    a = _records("e", "gp-ucb", range(8), 50, 0.0)
    b = _records("e", "random", range(8), 50, 0.6)
    claim = less("gp-ucb", "random", text="below uniform play")
    (v1,) = evaluate_claims([claim], pd.concat([a, b]), ["e"])
    (v2,) = evaluate_claims([claim], pd.concat([a, b], ignore_index=True), ["e"])
    assert repr(v1) == repr(v2)  # repr: the verdicts hold NaN fields (NaN != NaN)
    assert v1.verdict == "reproduces" and "n = 8" in v1.evidence


def test_unique_rounds_names_a_missing_key_column() -> None:
    with pytest.raises(ValueError, match=r"lack the column\(s\) \['seed'\]"):
        unique_rounds(pd.DataFrame({"env_id": ["e"], "agent": ["a"], "t": [1]}))
