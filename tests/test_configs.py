"""``paper`` and ``tuned`` configurations (issue 35 item 1): a stored, schema-checked
record per reference agent whose choice is what its evidence's median picks, usable by
``agents.make(name, config=...)`` and the harness's ``name[config=tuned]``; the
truncation-scale knob of TGP/CA-TGP/ATA does what its docstring says."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import agents
from agents.configs import (
    MIN_TUNING_SEED,
    check_record,
    config_params,
    tuned_agents,
    tuned_record,
)
from hbo_envs.harness.specs import parse_agent
from hbo_envs.harness.tuning import FAMILIES, SEARCH_SPACES, TUNING_SEED_BASE
from hbo_envs.kernels import SquaredExponential
from hbo_envs.problem import Problem

REFERENCE = tuple(a for a in agents.available() if a != "random")


def _problem(K, horizon=100, **consts):
    c = {"B": 1.0, "alpha": 1.0, "v": 4.0, "nu": 3.0, "sup_f": 1.0} | consts
    return Problem(
        points=np.arange(len(K), dtype=float)[:, None],
        kernel_matrix=np.asarray(K, dtype=float),
        kernel=SquaredExponential(1.0),
        horizon=horizon,
        **c,
    )


def test_every_reference_agent_has_a_declared_space_and_a_tuned_record() -> None:
    assert set(SEARCH_SPACES) == set(REFERENCE)
    assert set(tuned_agents()) == set(REFERENCE)
    assert MIN_TUNING_SEED == TUNING_SEED_BASE
    for name in REFERENCE:
        rec = tuned_record(name)
        fam = FAMILIES[rec["family"]]
        assert rec["agent"] == name
        assert rec["space"] == SEARCH_SPACES[name].to_dict(), name
        assert [p["params"] for p in rec["grid"]] == SEARCH_SPACES[name].points(), name
        assert rec["horizon"] == fam.horizon and rec["seeds"] == fam.seed_list()
        assert rec["envs"] == [[e, dict(kw)] for e, kw in fam.envs]


@pytest.mark.parametrize("name", REFERENCE)
def test_stored_choice_is_what_the_evidence_median_picks(name: str) -> None:
    rec = tuned_record(name)
    medians = [
        float(np.median([r["R_T"] / r["uniform_R_T"] for r in g["runs"]])) for g in rec["grid"]
    ]
    assert medians == pytest.approx([g["median_ratio"] for g in rec["grid"]], rel=1e-12)
    best = int(np.argmin(medians))  # numpy's argmin returns the first minimum: ties
    assert rec["chosen"] == rec["grid"][best]["params"]
    assert config_params(name, "tuned") == rec["chosen"]
    assert config_params(name, "paper") == {}


def test_make_with_a_config_and_the_spec_syntax() -> None:
    chosen = tuned_record("tgp-ucb")["chosen"]
    a = agents.make("tgp-ucb", config="tuned")
    assert a.beta == chosen["beta"] and a.truncation_scale == chosen["truncation_scale"]
    assert agents.make("tgp-ucb", config="tuned", beta=7.0).beta == 7.0  # params override
    assert agents.make("tgp-ucb").beta is None  # paper: the published schedule
    spec = parse_agent("mom-gp-ucb[config=tuned]")
    assert spec.label == "mom-gp-ucb[config=tuned]"
    built = spec.build()
    assert (built.beta, built.ell) == (
        tuned_record("mom-gp-ucb")["chosen"]["beta"],
        tuned_record("mom-gp-ucb")["chosen"]["ell"],
    )
    assert isinstance(built.ell, int)
    with pytest.raises(ValueError, match=r"'config' parameter of agents.make.*'paper'"):
        agents.make("gp-ucb", config="best")
    with pytest.raises(ValueError, match=r"'config' parameter of agents.make.*tuned record"):
        agents.make("random", config="tuned")


def _record() -> dict:
    return copy.deepcopy(tuned_record("robust-ucb-trunc"))


@pytest.mark.parametrize(
    ("field", "tamper"),
    [
        (
            "chosen",
            lambda r: (
                r.update(chosen=r["grid"][-1]["params"])
                if r["chosen"] != r["grid"][-1]["params"]
                else r.update(chosen=r["grid"][0]["params"])
            ),
        ),
        ("grid", lambda r: r["grid"][0].update(median_ratio=r["grid"][0]["median_ratio"] + 1)),
        ("grid", lambda r: r["grid"][1]["runs"].pop()),
        ("seeds", lambda r: r.update(seeds=[5, *r["seeds"][1:]])),
        ("seeds", lambda r: r.update(seeds=[r["seeds"][0]] * len(r["seeds"]))),
        ("record", lambda r: r.pop("envs")),
    ],
)
def test_a_tampered_record_is_refused_naming_the_field(field, tamper) -> None:
    rec = _record()
    check_record(rec)
    tamper(rec)
    with pytest.raises(ValueError, match=f"'{field}' parameter of tuned record"):
        check_record(rec)


def test_stored_records_are_plain_sorted_json() -> None:
    from importlib import resources

    folder = resources.files("agents.configs").joinpath("tuned")
    for name in REFERENCE:
        text = folder.joinpath(f"{name}.json").read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n"


# -- the truncation_scale knob ------------------------------------------------------------
def test_tgp_truncation_scale_multiplies_the_level_only() -> None:
    # v = 4, alpha = 1: b_t = 2 t^{1/4}; at c = 0.5 the level is t^{1/4} =
    # 1, 1.189, 1.316, 1.414, 1.495 (the published level would keep all five).
    agent = agents.make("tgp-ucb", truncation_scale=0.5)
    paper = agents.make("tgp-ucb")
    K = [[1.0, 0.5, 0.2], [0.5, 1.0, 0.5], [0.2, 0.5, 1.0]]
    agent.reset(_problem(K), seed=0)
    paper.reset(_problem(K), seed=0)
    ys = [0.99, 1.2, -1.3, -1.5, 1.49]
    for y in ys:
        agent.update(agent.act(), y)
    assert agent.truncated_ == [False, True, False, True, False]
    assert [agent.beta_(t) for t in (1, 5, 50)] == [paper.beta_(t) for t in (1, 5, 50)]


def test_ca_tgp_truncation_scale_multiplies_the_threshold() -> None:
    # one arm, k = 1, lambda = 1, theory set (h_scale 1): keep iff |y_t| <= c t^{1/(1+eps)};
    # eps = 1, c = 2: levels 2, 2.83, 3.46, 4.
    agent = agents.make("ca-tgp-ucb", epsilon=1.0, schedule="theory", truncation_scale=2.0)
    agent.reset(_problem([[1.0]]), seed=0)
    for y in [1.99, 2.9, -3.4, 4.1]:
        agent.update(agent.act(), y)
    assert agent.truncated_ == [False, True, False, True]


@pytest.mark.parametrize("name", ["ata-gp-ucb-qff", "ata-gp-ucb-nystrom"])
def test_ata_truncation_scale_zero_limit_truncates_everything(name: str) -> None:
    X = np.linspace(0, 1, 8)[:, None]
    p = Problem(
        points=X,
        kernel_matrix=SquaredExponential(0.3)(X),
        kernel=SquaredExponential(0.3),
        B=1.0,
        alpha=1.0,
        v=4.0,
        nu=3.0,
        sup_f=1.0,
        horizon=50,
    )
    means = {}
    for c in (1e-9, 1.0):
        agent = agents.make(name, truncation_scale=c, beta=1.0)
        agent.reset(p, seed=0)
        for y in [0.5, -0.3, 0.8, 0.2]:
            agent.update(agent.act(), y)
        means[c] = np.abs(agent.mean_).max()
    # (round-off of the orthonormal factors: 1e-17, not a kept reward)
    assert means[1e-9] < 1e-12 and means[1.0] > 0.1


@pytest.mark.parametrize("name", ["tgp-ucb", "ca-tgp-ucb", "ata-gp-ucb-qff"])
@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan"), True])
def test_bad_truncation_scale_is_refused_naming_it(name: str, bad) -> None:
    agent = agents.make(name, truncation_scale=bad)
    K = [[1.0, 0.5], [0.5, 1.0]]
    with pytest.raises(ValueError, match=r"'truncation_scale' parameter of .* must be a real"):
        agent.reset(_problem(K), seed=0)


def test_the_docs_table_of_tuned_choices_is_generated_from_the_records() -> None:
    import re
    from pathlib import Path

    from agents.configs import tuned_table_markdown

    page = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text("utf-8")
    block = re.search(r"<!-- tuned:table:begin -->\n(.*?)<!-- tuned:table:end -->", page, re.S)
    assert block is not None
    assert block.group(1) == tuned_table_markdown(), (
        "regenerate: python -c 'import agents.configs as c; c.render_docs()'"
    )
    table = tuned_table_markdown()
    for name in REFERENCE:
        (row,) = [r for r in table.splitlines() if r.startswith(f"| {name} |")]
        rec = tuned_record(name)
        assert f"{rec['chosen'][next(iter(rec['chosen']))]:g}" in row


def test_edge_choices_are_flagged() -> None:
    from agents.configs import edge_params

    rec = {
        "space": {
            "axes": [
                {"param": "beta", "values": [0.1, 0.5, 1.0]},
                {"param": "ell", "values": [1, 3, 5]},
            ]
        },
        "chosen": {"beta": 0.5, "ell": 1},
    }
    assert edge_params(rec) == ["ell"]
    tied = {
        "space": {"param": "b", "values": [1.0, 2.0], "tied": ["c"]},
        "chosen": {"b": 2.0, "c": 2.0},
    }
    assert edge_params(tied) == ["b", "c"]
    assert edge_params({"space": {"param": "b", "values": [1.0]}, "chosen": {"b": 1.0}}) == []
    assert (
        edge_params({"space": {"param": "b", "values": [1.0, 2.0, 3.0]}, "chosen": {"b": 2.0}})
        == []
    )
