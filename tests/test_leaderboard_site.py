"""The leaderboard site without a browser: the aggregates behind the pages (against hand
computations and naive re-implementations of rliable's definitions), number formatting,
determinism, and that the committed site is what the data gives."""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from hbo_envs.harness.stats import iqm, stratified_bootstrap_ci
from hbo_envs.leaderboard.profiles import (
    iqm_band,
    normalized_run_scores,
    probability_of_improvement,
    probability_of_improvement_ci,
    score_distribution,
    score_distribution_band,
)
from hbo_envs.leaderboard.render import collect_entries, render_suite
from hbo_envs.leaderboard.site import _verdict, fmt_sig, suite_data
from hbo_envs.leaderboard.suite import load_suite

BOARDS = Path(__file__).resolve().parents[1] / "leaderboards"
SUITE = "corrupted-v0"  # the committed suite with the most entries


# -- formatting ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("x", "text"),
    [
        (10312.63, "10310"),
        (9741.2, "9741"),
        (919.279, "919.3"),
        (0.20998, "0.2100"),
        (0.000123456, "0.0001235"),
        (5.0, "5.000"),
        (9.9996, "10.00"),
        (123456789.0, "123500000"),
        (-2.5, "-2.500"),
        (0.0, "0"),
        (float("nan"), "n/a"),
        (float("inf"), "n/a"),
        (None, "n/a"),
    ],
)
def test_fmt_sig_has_four_significant_figures_and_no_exponent(x: Any, text: str) -> None:
    assert fmt_sig(x) == text


# -- aggregates ------------------------------------------------------------------------------
@pytest.mark.parametrize("module", ["profiles", "site"])
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    mod = importlib.import_module(f"hbo_envs.leaderboard.{module}")
    res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
    assert res.attempted >= 1


def test_probability_of_improvement_by_hand() -> None:
    # task 0: pairs (2,1) (2,3) (3,1) (3,3) -> 1 + 0 + 1 + 1/2 = 2.5 of 4
    # task 1: x = (0, 0) never above y = (1, 5) -> 0
    x = [[2.0, 0.0], [3.0, 0.0]]
    y = [[1.0, 1.0], [3.0, 5.0]]
    assert probability_of_improvement(x, y) == pytest.approx((0.625 + 0.0) / 2)
    assert probability_of_improvement(y, x) == pytest.approx((0.375 + 1.0) / 2)
    assert probability_of_improvement(x, x) == 0.5  # ties count half


def test_probability_of_improvement_is_the_mann_whitney_statistic() -> None:
    # rliable: per task U / (n m) with scipy's Mann-Whitney U, averaged over tasks
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(7, 4)), 1)  # rounding makes ties
    y = np.round(rng.normal(0.3, size=(5, 4)), 1)
    naive = np.mean([mannwhitneyu(x[:, m], y[:, m]).statistic / (7 * 5) for m in range(4)])
    assert probability_of_improvement(x, y) == pytest.approx(naive, abs=1e-12)


def test_probability_of_improvement_ci_is_the_stratified_bootstrap() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(5, 3))
    p, lo, hi = probability_of_improvement_ci(x, y, reps=300, seed=9)
    # naive: the same draws, one replicate at a time through the plain function
    r = np.random.default_rng(9)
    ix = r.integers(6, size=(300, 3, 6))
    iy = r.integers(5, size=(300, 3, 5))
    boot = [
        probability_of_improvement(
            np.stack([x[ix[k, m], m] for m in range(3)], axis=1),
            np.stack([y[iy[k, m], m] for m in range(3)], axis=1),
        )
        for k in range(300)
    ]
    assert p == probability_of_improvement(x, y)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])), abs=1e-12)
    assert lo <= p <= hi


def test_score_distribution_by_hand() -> None:
    s = [[0.1, 0.5], [0.9, 0.2]]
    # above 0: all 4; above 0.3: 0.5 and 0.9; above 0.9: none (strict)
    assert score_distribution(s, [0.0, 0.3, 0.9]).tolist() == [1.0, 0.5, 0.0]
    f, lo, hi = score_distribution_band(s, np.linspace(-1, 1, 21), reps=200)
    assert np.all(np.diff(f) <= 0)  # a survival function
    assert np.all(lo <= hi) and np.all((lo >= 0) & (hi <= 1))
    assert f[0] == lo[0] == hi[0] == 1.0  # every score is above -1 in every replicate


def test_iqm_band_equals_the_stratified_bootstrap_at_every_step() -> None:
    rng = np.random.default_rng(5)
    curves = np.cumsum(rng.pareto(1.5, size=(9, 12)), axis=1)
    y, lo, hi = iqm_band(curves, reps=400, seed=2)
    for k in range(12):
        assert y[k] == pytest.approx(iqm(curves[:, k]), rel=1e-12)
        ref = stratified_bootstrap_ci(curves[:, k], iqm, reps=400, seed=2)
        assert (lo[k], hi[k]) == pytest.approx(ref, rel=1e-12)
    assert np.all(np.diff(lo) >= 0)  # one resample per curve: the band of R_t is monotone


def test_normalized_run_scores() -> None:
    s = normalized_run_scores([[50.0, 0.0], [100.0, 30.0]], [100.0, 20.0])
    assert s.tolist() == [[0.5, 1.0], [0.0, -0.5]]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: iqm_band([[1.0, 2.0]], confidence=1.5), "'confidence' parameter of iqm_band"),
        (lambda: iqm_band([[1.0, np.nan]]), "'curves' parameter of iqm_band"),
        (lambda: score_distribution_band([[1.0]], [0.0], reps=0), "'reps' parameter"),
        (
            lambda: probability_of_improvement([[1.0, 2.0]], [[1.0]]),
            "'scores_y' parameter of probability_of_improvement",
        ),
        (lambda: normalized_run_scores([[1.0]], [0.0]), "'random_iqm' parameter"),
    ],
)
def test_bad_input_names_the_parameter(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


# -- the rendered site -----------------------------------------------------------------------
# One render of the committed site serves every test here (conftest.rendered_leaderboards,
# read-only; render_all wrote SUITE's folder with render_suite), on one xdist worker.
RENDERED = pytest.mark.xdist_group("rendered_leaderboards")


@pytest.fixture(scope="module")
def site(rendered_leaderboards: Path) -> dict[str, Any]:
    root = rendered_leaderboards
    suite = load_suite(SUITE, root)
    entries, notes = collect_entries(suite)
    assert not notes and len(entries) >= 3
    return {"root": root, "suite": suite, "entries": entries, "data": suite_data(suite, entries)}


def _subs(site: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e.file: e.sub for e in site["entries"]}


@RENDERED
def test_rendering_twice_gives_the_same_bytes(site: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "again"
    shutil.copytree(site["root"], other)
    render_suite(load_suite(SUITE, other))
    folder = site["suite"].folder
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert len(files) > 20
    for rel in files:
        assert (other / SUITE / rel).read_bytes() == (folder / rel).read_bytes(), rel
    svg = (folder / "regret.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg  # no date, no version
    # withdrawn submissions take their pages with them (two entries are left, so that the
    # two renders below cost ~1 s each instead of ~4 s of the full suite)
    subs = other / SUITE / "submissions"
    keep = {"baseline-random.json", "baseline-gp-ucb.json"}
    for p in subs.glob("*.json"):
        if p.name not in keep:
            p.unlink()
    assert (other / SUITE / "entries" / "baseline-tgp-ucb.html").exists()
    render_suite(load_suite(SUITE, other))
    pages = sorted(p.stem for p in (other / SUITE / "entries").glob("*.html"))
    assert pages == sorted(p.stem for p in (other / SUITE / "submissions").glob("*.json"))
    assert "baseline-tgp-ucb" not in pages
    # without the random floor nothing has a score: no profiles, and the page says why
    (other / SUITE / "submissions" / "baseline-random.json").unlink()
    render_suite(load_suite(SUITE, other))
    assert not (other / SUITE / "profiles.svg").exists()
    assert (other / SUITE / "regret.svg").exists()
    assert "No entry has a score yet" in (other / SUITE / "index.html").read_text()


@RENDERED
def test_results_csv_holds_every_run_and_its_hash_is_on_the_page(site: dict[str, Any]) -> None:
    folder = site["suite"].folder
    text = (folder / "results.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    subs = _subs(site)
    expected = {
        (f, r["env_id"], r["seed"]): r["final_regret"]
        for f, sub in subs.items()
        for r in sub["results"]
    }
    got = {(r["file"], r["env_id"], int(r["seed"])): float(r["final_regret"]) for r in rows}
    assert got == expected
    page = (folder / "index.html").read_text()
    assert hashlib.sha256(text.encode()).hexdigest() in page
    for f in subs:  # every submission file's hash on its entry page
        entry = (folder / "entries" / f.replace(".json", ".html")).read_text()
        digest = hashlib.sha256((folder / "submissions" / f).read_bytes()).hexdigest()
        assert f"sha256 <code>{digest}</code>" in entry


@RENDERED
def test_probability_of_improvement_on_the_page_matches_a_naive_computation(
    site: dict[str, Any],
) -> None:
    # naive: the random floor's IQM per env from the file, then rliable's P(X > Y) on R_T
    subs, suite = _subs(site), site["suite"]
    rnd = next(e for e in site["entries"] if e.is_random)

    def fin(sub: dict[str, Any], env: str) -> list[float]:
        return [r["final_regret"] for r in sub["results"] if r["env_id"] == env]

    data = site["data"]
    page = (suite.folder / "index.html").read_text()
    for v in data.entries:
        if v.is_random:
            continue
        p = np.mean(
            [
                np.mean(
                    [
                        1.0 if a < b else 0.5 if a == b else 0.0
                        for a in fin(subs[v.file], x)
                        for b in fin(rnd.sub, x)
                    ]
                )
                for x in suite.env_ids
            ]
        )
        assert v.poi_random is not None and v.poi_random[0] == pytest.approx(p, abs=1e-12)
        assert f"{p:.3f}" in page


@RENDERED
def test_the_sentence_under_the_table_says_whether_first_place_is_separated(
    site: dict[str, Any],
) -> None:
    data = site["data"]
    a, b = data.entries[0], data.entries[1]
    text = _verdict(data)
    assert text.startswith(f"{a.name} ranks first")
    separated = a.score_lo > b.score_hi
    assert ("so first place is separated" in text) == separated
    assert ("does not overlap" in text) == separated
    a.score_lo, saved = b.score_hi - 0.01, a.score_lo  # force an overlap
    try:
        assert "so first place is not separated" in _verdict(data)
    finally:
        a.score_lo = saved
    page = (site["suite"].folder / "index.html").read_text()
    assert html.escape(text, quote=False) in page


@RENDERED
def test_env_pages_show_the_env_constants_and_link_the_paper(site: dict[str, Any]) -> None:
    import gymnasium as gym

    suite = site["suite"]
    for e in suite.envs:
        page = (suite.folder / "envs" / f"{e.id.removeprefix('hbo/')}.html").read_text()
        env = gym.make(e.id, horizon=e.horizon, **dict(e.kwargs)).unwrapped
        assert f"<dt>arms n</dt><dd>{env.problem.n}</dd>" in page
        assert f"<dt>horizon T</dt><dd>{e.horizon}</dd>" in page
        assert 'href="https://arxiv.org/abs/2003.01971"' in page  # Bogunovic et al. 2020
        for v in site["data"].entries:  # every entry, linked to its own page
            assert f'href="../entries/{v.stem}.html"' in page


@RENDERED
def test_entry_pages_link_the_agent_code_at_its_revision(site: dict[str, Any]) -> None:
    repo = BOARDS.parent
    for v in site["data"].entries:
        page = (site["suite"].folder / "entries" / f"{v.stem}.html").read_text()
        assert v.revision and v.revision in page
        m = re.search(r'<dt>code</dt><dd><a href="([^"]+)">', page)
        assert m is not None, v.file
        # the link is relative, valid where the site is committed: leaderboards/<suite>/...
        target = (BOARDS / SUITE / "entries" / m.group(1)).resolve()
        assert target.relative_to(repo.resolve()).as_posix() == v.source_file
        assert (repo / v.source_file).is_file()
        # records since issue 37 draw hidden seeds from a secret: no verification seed
        seed = v.verification.get("verification_seed")
        assert str(seed) in page if seed is not None else "hidden_stages" in v.verification


def test_the_submit_page_example_agent_passes_check_agent() -> None:
    from agents import check_agent

    page = (BOARDS / "submit.html").read_text()
    m = re.search(r'<code id="example-agent">(.*?)</code>', page, re.S)
    assert m is not None
    ns: dict[str, Any] = {"__name__": "example"}
    exec(compile(html.unescape(m.group(1)), "greedy.py", "exec"), ns)
    check_agent(ns["Greedy"]())


def test_the_submit_page_commands_parse() -> None:
    from hbo_envs.cli import _parser

    page = html.unescape(re.sub(r"<[^>]+>", "", (BOARDS / "submit.html").read_text()))
    pattern = r"^(?:PYTHONPATH=\S+ )?hbo-bench leaderboard (?:\\\n|[^\n])*"
    cmds = [" ".join(c.split()).replace("\\ ", "") for c in re.findall(pattern, page, re.M)]
    cmds = [c.removeprefix("PYTHONPATH=. ") for c in cmds]
    assert {c.split()[2] for c in cmds} >= {"submit", "validate", "verify", "render"}
    for c in cmds:
        _parser().parse_args(c.split()[1:])


@RENDERED
def test_committed_site_is_current(rendered_leaderboards: Path) -> None:
    # every rendered file, including the downloads and summaries the other test skips
    root = rendered_leaderboards  # a copy of BOARDS that render_all re-rendered
    stale = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and rel.parts[1:2] != ("submissions",) and p.name != "suite.toml":
            committed = BOARDS / rel
            if not committed.exists() or committed.read_bytes() != p.read_bytes():
                stale.append(str(rel))
    assert not stale, f"stale renders {stale}: run hbo-bench leaderboard render"
    left = {p.relative_to(BOARDS) for p in BOARDS.rglob("*") if p.is_file()}
    fresh = {p.relative_to(root) for p in root.rglob("*") if p.is_file()}
    extra = sorted(str(r) for r in left - fresh if r.parts[0] != "_screenshots")
    assert not extra, f"committed pages no render produces: {extra}"
    summary = json.loads((BOARDS / SUITE / "summary.json").read_text())
    entries, _ = collect_entries(load_suite(SUITE, BOARDS))
    assert summary["leader"] == entries[0].name and summary["n_entries"] == len(entries)
    csv_bytes = (BOARDS / SUITE / "results.csv").read_bytes()
    assert summary["results_csv_sha256"] == hashlib.sha256(csv_bytes).hexdigest()
    index = (BOARDS / "index.html").read_text()
    assert f'href="{SUITE}/entries/{entries[0].file.removesuffix(".json")}.html"' in index
