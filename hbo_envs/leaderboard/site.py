"""The leaderboard site: one static page per suite, per env and per submission, an index,
a "how to submit" page, figures, and a results download — rendered with jinja2 templates
(``hbo_envs/leaderboard/templates/``) from the ranked entries of
:func:`hbo_envs.leaderboard.render.collect_entries`.

Layout of ``leaderboards/`` (every file a pure function of the suite definitions and the
submission files: no clock, no absolute path, no machine fact, so a fresh render reproduces
the committed site byte for byte)::

    index.html                  suites, leader, entries, last verification date
    submit.html                 validate -> verify -> pull request, copy-paste example
    <suite>/index.html          ranked table, profiles, P(improvement), downloads
    <suite>/README.md           the same table for GitHub's file view
    <suite>/regret.svg          IQM R_t with CI bands per env, every entry + random floor
    <suite>/profiles.svg        performance profiles (run-score distributions)
    <suite>/results.csv         every entry's final regret per env and seed
    <suite>/envs/<env>.html     paper panel, constants, curves, per-env table
    <suite>/entries/<file>.html agent code (file + revision), parameters, verification

Every field of an entry the pages show is read in one place, :func:`entry_view`, so a change
of the submission or verification format is one function to adapt.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from hbo_envs.harness.store import file_sha256
from hbo_envs.leaderboard.figures import (
    CONFIG_STYLES,
    RANDOM_COLOR,
    RANDOM_STYLE,
    Panel,
    Series,
    curves_svg,
    entry_style,
    profile_svg,
)
from hbo_envs.leaderboard.profiles import (
    iqm_band,
    normalized_run_scores,
    probability_of_improvement_ci,
    score_distribution_band,
)
from hbo_envs.leaderboard.submission import SAFE_NAME_RULE
from hbo_envs.leaderboard.suite import Suite

__all__ = [
    "DEFAULT_REPOSITORY",
    "PAPER_URLS",
    "EntryView",
    "SiteConfig",
    "entry_view",
    "fmt_sig",
    "index_files",
    "load_site_config",
    "md_code",
    "md_escape",
    "site_files",
]

# Where each seed paper can be read; the env registry names the paper and panel.
PAPER_URLS = {
    "Chowdhury–Gopalan 2019": "https://arxiv.org/abs/1909.07040",
    "Bogunovic–Krause–Scarlett 2020": "https://arxiv.org/abs/2003.01971",
    # ECAI 2024; the paper's own reference [1] is this record (paper code and supplement).
    "Park–Lee 2024": "https://doi.org/10.5281/zenodo.13345239",
}


# -- where the agent code is linked -------------------------------------------------------
#: The repository the entry pages link agent code into, unless ``<root>/site.toml`` or the
#: ``repository=`` argument of the render functions says otherwise.
DEFAULT_REPOSITORY = "https://github.com/hbo-bench/hbo-bench"
SITE_FILE = "site.toml"
_REVISION = re.compile(r"[0-9a-f]{7,64}")


@dataclass(frozen=True)
class SiteConfig:
    """Settings of the whole site, read from ``<root>/site.toml`` (all optional)::

        [site]
        repository = "https://github.com/hbo-bench/hbo-bench"   # the default
        file_url = "{repository}/blob/{revision}/{path}"         # GitHub/Gitea layout;
        commit_url = "{repository}/commit/{revision}"            # GitLab: {repository}/-/blob/...

    An entry's code link is ``file_url`` with the revision its submission recorded and the
    agent's source file, so a hosted copy of the site links the code as it was at that
    commit (never a path into a local checkout).
    """

    repository: str = DEFAULT_REPOSITORY
    file_url: str = "{repository}/blob/{revision}/{path}"
    commit_url: str = "{repository}/commit/{revision}"

    def __post_init__(self) -> None:
        from urllib.parse import urlsplit

        u = urlsplit(self.repository)
        if u.scheme != "https" or not u.netloc or re.search(r"[\s\"'<>{}()]", self.repository):
            raise ValueError(
                "The 'repository' setting of the leaderboard site must be an https URL "
                "without spaces, quotes, <, >, braces or parentheses. "
                f"Got {self.repository!r} instead."
            )
        object.__setattr__(self, "repository", self.repository.rstrip("/"))
        for key, needs in (("file_url", ("{revision}", "{path}")), ("commit_url", ("{revision}",))):
            t = getattr(self, key)
            if not (t.startswith("{repository}") and all(n in t for n in needs)):
                raise ValueError(
                    f"The {key!r} setting of the leaderboard site must start with "
                    f"'{{repository}}' and contain {' and '.join(needs)}. Got {t!r} instead."
                )

    def source_links(self, revision: str | None, path: str | None) -> tuple[str | None, str | None]:
        """``(file link, commit link)`` for a recorded revision and a repository-relative
        path (None where the revision is not a git hash or the path leaves the repository)."""
        from urllib.parse import quote

        if not revision or _REVISION.fullmatch(revision) is None:
            return None, None
        commit = self.commit_url.format(repository=self.repository, revision=revision)
        parts = (path or "").split("/")
        if not path or path.startswith("/") or any(q in ("", ".", "..") for q in parts):
            return None, commit
        return (
            self.file_url.format(repository=self.repository, revision=revision, path=quote(path)),
            commit,
        )


def load_site_config(
    root: str | Path | None = None, *, repository: str | None = None
) -> SiteConfig:
    """The site's settings: ``<root>/site.toml`` if there is one, ``repository`` (when given)
    overriding its repository; defaults otherwise (:class:`SiteConfig`)."""
    import tomllib

    from hbo_envs.leaderboard.suite import leaderboards_root

    f = leaderboards_root(root) / SITE_FILE
    table: dict[str, Any] = {}
    if f.is_file():
        doc = tomllib.loads(f.read_text())
        table = dict(doc.get("site", {}))
        unknown = sorted(set(doc) - {"site"}) + sorted(
            set(table) - set(SiteConfig.__dataclass_fields__)
        )
        if unknown:
            raise ValueError(
                f"{SITE_FILE}: unknown setting(s) {unknown}; allowed: [site] "
                f"{', '.join(SiteConfig.__dataclass_fields__)}."
            )
        for k, v in table.items():
            if not isinstance(v, str):
                raise ValueError(f"{SITE_FILE}: [site] {k} must be a string. Got {v!r} instead.")
    if repository is not None:
        table["repository"] = repository
    return SiteConfig(**table)


# -- formatting ---------------------------------------------------------------------------
def fmt_sig(x: float | None, sig: int = 4) -> str:
    """``x`` with ``sig`` significant figures in positional notation (no exponent, so a
    column never mixes ``1.031e+04`` with ``9741``), keeping trailing zeros; ``'n/a'`` for
    None, NaN and infinities.

    >>> fmt_sig(10312.6), fmt_sig(9741.2), fmt_sig(0.20998), fmt_sig(9.9996)
    ('10310', '9741', '0.2100', '10.00')
    """
    if x is None or not np.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    d = Decimal(repr(float(x)))
    e = d.adjusted()  # exponent of the leading digit
    q = d.quantize(Decimal(1).scaleb(e - sig + 1), rounding=ROUND_HALF_EVEN)
    if q.adjusted() > e:  # rounding carried into a new digit (9.9996 -> 10.00)
        q = d.quantize(Decimal(1).scaleb(e - sig + 2), rounding=ROUND_HALF_EVEN)
    return format(q, "f")


def fmt_fixed(x: float | None, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals (scores live in (-inf, 1]); ``'n/a'`` if not finite."""
    return f"{x:.{digits}f}" if x is not None and np.isfinite(x) else "n/a"


def _sort_key(x: float | None) -> str:
    return repr(float(x)) if x is not None and np.isfinite(x) else "NaN"


def short_env(env_id: str) -> str:
    return env_id.removeprefix("hbo/")


def env_slug(env_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", short_env(env_id))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- the adapter ----------------------------------------------------------------------------
@dataclass
class EntryView:
    """What the pages show of one ranked entry (built by :func:`entry_view`)."""

    file: str
    stem: str
    name: str
    rank: int
    score: float
    score_lo: float
    score_hi: float
    mean_rank: float
    status: str
    date: str
    is_random: bool
    registered_name: str | None
    import_path: str
    params: dict[str, Any]
    revision: str | None
    dirty: bool | None
    source_file: str | None
    source_sha256: str | None
    created: str
    packages: dict[str, str]
    platform: str
    verification: dict[str, Any]
    per_env: dict[str, dict[str, float]]
    final: dict[str, np.ndarray]  # env -> R_T per seed (seed order of the file)
    seeds: dict[str, list[int]]
    curves: dict[str, tuple[np.ndarray, np.ndarray]]  # env -> (t, (seeds, len(t)) R_t)
    spec_hashes: dict[str, str]
    color: str = ""
    linestyle: str | tuple[float, tuple[float, ...]] = "-"
    file_sha256: str = ""  # of the submission file as committed
    tie_rank: int = 0  # rank with ties shared (1 + entries ranked strictly above)
    tied_with: list[str] = field(default_factory=list)  # names of entries with the same key
    file_url: str | None = None  # the agent's source file at the recorded revision
    commit_url: str | None = None  # the recorded revision
    poi_random: tuple[float, float, float] | None = None
    poi_best: tuple[float, float, float] | None = None
    #: the reference's configuration ("paper" / "tuned"; None for a submitter's entry)
    config: str | None = None
    #: a tuned reference's tuning evidence: repository path, sha256, link at its revision
    config_path: str | None = None
    config_sha256: str | None = None
    config_url: str | None = None

    @property
    def config_label(self) -> str:
        """The "config" column: ``paper`` / ``tuned`` for the suite's references, ``floor``
        for the random floor, ``submitted`` for a submitter's entry (its own parameters)."""
        if self.is_random:
            return "floor"
        return self.config or "submitted"

    @property
    def is_reference(self) -> bool:
        """A baseline of a registered reference agent (not the random floor)."""
        return self.registered_name is not None and not self.is_random

    @property
    def rank_label(self) -> str:
        """The rank as shown: ``"3"``, or ``"=2"`` when tied with another entry."""
        return f"={self.tie_rank}" if self.tied_with else str(self.tie_rank)

    @property
    def is_project_code(self) -> bool:
        """The agent is this project's code (so its source file is in the linked repository)."""
        return self.import_path.split(".")[0] in ("agents", "hbo_envs")


def entry_view(e: Any) -> EntryView:
    """The one place that reads an :class:`~hbo_envs.leaderboard.render.Entry` and its
    submission dict (re-wire here when the entry or verification format changes)."""
    sub = e.sub
    a, code, prov = sub["agent"], sub["agent"]["code"], sub["provenance"]
    final: dict[str, list[float]] = {}
    seeds: dict[str, list[int]] = {}
    rows: dict[str, list[list[float]]] = {}
    ts: dict[str, list[int]] = {}
    for r in sub["results"]:
        x = r["env_id"]
        final.setdefault(x, []).append(float(r["final_regret"]))
        seeds.setdefault(x, []).append(int(r["seed"]))
        rows.setdefault(x, []).append(r["checkpoints"]["regret"])
        ts.setdefault(x, r["checkpoints"]["t"])
    return EntryView(
        file=e.file,
        stem=Path(e.file).stem,
        name=e.name,
        rank=e.rank,
        score=e.score,
        score_lo=e.score_lo,
        score_hi=e.score_hi,
        mean_rank=e.mean_rank,
        status=e.status,
        date=e.date,
        is_random=e.is_random,
        registered_name=a.get("registered_name"),
        import_path=a["import_path"],
        params=dict(a["params"]),
        revision=code.get("revision"),
        dirty=code.get("dirty"),
        source_file=code.get("source_file"),
        source_sha256=code.get("source_sha256"),
        created=str(prov.get("created", "")),
        packages={k: str(v) for k, v in (prov.get("packages") or {}).items()},
        platform=str(prov.get("platform", "")),
        verification=dict(sub.get("verification") or {}),
        per_env={x: dict(v) for x, v in sub["aggregates"]["per_env"].items()},
        final={x: np.asarray(v, dtype=float) for x, v in final.items()},
        seeds=seeds,
        curves={x: (np.asarray(ts[x]), np.asarray(rows[x], dtype=float)) for x in rows},
        spec_hashes={x: str(v.get("spec_hash", "")) for x, v in sub.get("envs", {}).items()},
        config=getattr(e, "config", None),
        config_path=(a.get("config_record") or {}).get("path"),
        config_sha256=(a.get("config_record") or {}).get("sha256"),
    )


def random_reference(views: Sequence[EntryView]) -> EntryView | None:
    """The random floor: the random entry the ranking normalizes by (verified first)."""
    refs = sorted((v for v in views if v.is_random), key=lambda v: (v.status != "verified", v.file))
    return refs[0] if refs else None


# -- per-suite computations -----------------------------------------------------------------
@dataclass
class SuiteData:
    suite: Suite
    entries: list[EntryView]
    random: EntryView | None
    best_reference: EntryView | None
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # file -> (seeds, envs)
    bands: dict[tuple[str, str], tuple[np.ndarray, ...]] = field(default_factory=dict)
    env_rank: dict[tuple[str, str], float] = field(default_factory=dict)  # (file, env) -> rank
    avg_regret: dict[str, float] = field(default_factory=dict)  # file -> mean_e IQM(R_T/T)
    n_rows: int = 0  # rows of results.csv


def _runs(v: EntryView, envs: Sequence[str]) -> np.ndarray:
    """``(seeds, envs)`` final regrets, rows in ascending seed order."""
    cols = []
    for x in envs:
        order = np.argsort(v.seeds[x], kind="stable")
        cols.append(v.final[x][order])
    return np.stack(cols, axis=1)


def _rank_key(v: EntryView) -> tuple[str, str]:
    """What the ranking orders by before names: score, then mean rank (exact values)."""
    return _sort_key(v.score), _sort_key(v.mean_rank)


def share_ties(views: Sequence[EntryView]) -> None:
    """Competition ranking ("1224") over ``views`` in ranked order: entries with the same
    score and mean rank (identical results give identical keys) share the rank of the
    first of them and name each other in ``tied_with``; the next entry's rank counts them.
    """
    for v in views:
        same = [j for j, w in enumerate(views) if _rank_key(w) == _rank_key(v)]
        v.tie_rank = 1 + same[0]
        v.tied_with = [views[j].name for j in same if views[j] is not v]


def suite_data(suite: Suite, entries: Sequence[Any], config: SiteConfig | None = None) -> SuiteData:
    """Views, colors, line styles, ties, source links, the random floor, normalized run
    scores, P(improvement), CI bands."""
    config = config or SiteConfig()
    views = [entry_view(e) for e in entries]
    # one colour per agent: a reference's paper and tuned rows share their agent's colour
    # and differ in line style (paper solid, tuned dashed); a submitter's entry is its own
    # agent (:func:`entry_style` for every other entry)
    slot: dict[str, int] = {}
    for v in views:
        if v.is_random:
            v.color, v.linestyle = RANDOM_COLOR, RANDOM_STYLE
        else:
            key = v.registered_name if v.is_reference and v.config else f"entry:{v.name}"
            v.color, v.linestyle = entry_style(slot.setdefault(key, len(slot)))
            if v.is_reference and v.config:
                v.linestyle = CONFIG_STYLES.get(v.config, v.linestyle)
        if v.is_project_code:
            v.file_url, v.commit_url = config.source_links(v.revision, v.source_file)
            if v.config_path:  # the tuning evidence as committed at the recorded revision
                v.config_url, _ = config.source_links(v.revision, v.config_path)
        else:  # a submitter's own package: its revision is not one of this repository's
            v.file_url, v.commit_url = None, None
    share_ties(views)
    rnd = random_reference(views)
    refs = [v for v in views if v.is_reference]
    best = refs[0] if refs else None  # views come ranked
    data = SuiteData(suite, views, rnd, best)
    envs = suite.env_ids
    conf, reps, seed = suite.confidence, suite.bootstrap_reps, suite.bootstrap_seed
    if rnd is not None:
        ref_iqm = [rnd.per_env[x]["iqm"] for x in envs]
        if all(np.isfinite(ref_iqm)) and min(ref_iqm) > 0:
            for v in views:
                data.scores[v.file] = normalized_run_scores(_runs(v, envs), ref_iqm)
            for v in views:
                s = data.scores[v.file]
                if not v.is_random:
                    v.poi_random = probability_of_improvement_ci(
                        s, data.scores[rnd.file], confidence=conf, reps=reps, seed=seed
                    )
                if best is not None and v is not best:
                    v.poi_best = probability_of_improvement_ci(
                        s, data.scores[best.file], confidence=conf, reps=reps, seed=seed
                    )
    for x in envs:
        r = rankdata([v.per_env[x]["iqm"] for v in views], method="average") if views else []
        for v, rk in zip(views, r, strict=True):
            data.env_rank[(v.file, x)] = float(rk)
    for v in views:
        data.avg_regret[v.file] = float(np.mean([v.per_env[x]["avg_iqm"] for x in envs]))
        data.n_rows += sum(len(v.final[x]) for x in envs)
        f = suite.folder / "submissions" / v.file
        v.file_sha256 = file_sha256(f) if f.is_file() else ""
        for x in envs:
            t, c = v.curves[x]
            data.bands[(v.file, x)] = (t, *iqm_band(c, confidence=conf, reps=reps, seed=seed))
    return data


def _series(data: SuiteData, env_id: str) -> tuple[Series, ...]:
    out = []
    for v in data.entries:
        t, y, lo, hi = data.bands[(v.file, env_id)]
        label = v.name + (" (random floor)" if v is data.random else "")
        out.append(Series(label, v.color, t, y, lo, hi, v.linestyle, 2.0 if v.is_random else 1.4))
    return tuple(out)


#: Size in inches of a phone figure's axes: 3.9 in = 281 pt = 374 CSS px, so on a 390 px
#: screen the figure is shown at its own size (9 pt text = 12 px), not scaled down.
PHONE_SIZE = (3.9, 2.9)


def regret_figure(data: SuiteData) -> str:
    s = data.suite
    panels = [Panel(short_env(x), _series(data, x)) for x in s.env_ids]
    return curves_svg(
        panels,
        title=f"{s.id}: IQM over {len(s.seeds)} seeds of the cumulative regret R_t "
        f"with {s.confidence:.0%} CI bands (lower is better); random floor grey",
    )


def env_figure(data: SuiteData, env_id: str, *, phone: bool = False) -> str:
    """One env's curves: wide for its page, or sized for a phone (one column, the legend in
    two columns under the axes)."""
    panel = [Panel(short_env(env_id), _series(data, env_id))]
    conf = f"{data.suite.confidence:.0%}"
    if phone:
        return curves_svg(
            panel,
            title=f"IQM of R_t over seeds, {conf} CI",
            panel_size=PHONE_SIZE,
            legend_cols=2,
        )
    return curves_svg(
        panel,
        title=f"IQM over seeds of R_t with {conf} CI bands",
        panel_size=(7.2, 3.6),
        legend_cols=3,
    )


def profile_taus(data: SuiteData) -> np.ndarray:
    """101 thresholds from the lowest normalized run score of the suite (or 0) to 1."""
    lo = min(float(np.min(s)) for s in data.scores.values())
    return np.linspace(min(lo, 0.0), 1.0, 101)


def profile_figure(data: SuiteData, *, phone: bool = False) -> str | None:
    if not data.scores:
        return None
    s, taus = data.suite, profile_taus(data)
    series = []
    for v in data.entries:
        y, lo, hi = score_distribution_band(
            data.scores[v.file],
            taus,
            confidence=s.confidence,
            reps=s.bootstrap_reps,
            seed=s.bootstrap_seed,
        )
        series.append(
            Series(v.name, v.color, taus, y, lo, hi, v.linestyle, 2.0 if v.is_random else 1.4)
        )
    if phone:
        return profile_svg(
            series,
            title=f"performance profiles, {s.confidence:.0%} CI",
            size=PHONE_SIZE,
            legend_cols=2,
        )
    return profile_svg(
        series,
        title=f"{s.id}: performance profiles over {len(s.seeds)} seeds x {len(s.envs)} envs "
        f"({s.confidence:.0%} CI bands)",
    )


def results_csv(data: SuiteData) -> str:
    """One row per (entry, env, seed): the final regret the suite ranks (``config``: see
    :attr:`EntryView.config_label`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "suite",
            "rank",
            "agent",
            "config",
            "file",
            "verification",
            "env_id",
            "horizon",
            "seed",
            "final_regret",
            "final_avg_regret",
        ]
    )
    for v in data.entries:
        for e in data.suite.envs:
            for seed, r in zip(v.seeds[e.id], v.final[e.id], strict=True):
                w.writerow(
                    [
                        data.suite.id,
                        v.tie_rank,
                        v.name,
                        v.config_label,
                        v.file,
                        v.status,
                        e.id,
                        e.horizon,
                        seed,
                        repr(float(r)),
                        repr(float(r) / e.horizon),
                    ]
                )
    return buf.getvalue()


# -- env constants --------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _env_constants(env_id: str, kwargs_json: str, horizon: int) -> tuple[tuple[str, str], ...]:
    import gymnasium as gym

    from hbo_envs.registration import register_envs

    register_envs()
    env = gym.make(env_id, horizon=horizon, **json.loads(kwargs_json)).unwrapped
    p = env.problem
    ch = dict(env.channel.params())
    ch_name = ch.pop("name")
    args = ", ".join(
        f"{k}={fmt_sig(v)}"
        if isinstance(v, float | int) and not isinstance(v, bool)
        else f"{k}={v}"
        for k, v in ch.items()
    )
    out = [
        ("objective", str(env.objective.name)),
        ("reward channel", f"{ch_name}({args})"),
        ("arms n", str(p.n)),
        ("moment index α (bounded (1+α)-th moment)", fmt_sig(p.alpha)),
        ("moment bound v", fmt_sig(p.v)),
        ("ν", fmt_sig(p.nu)),
        ("RKHS norm bound B", fmt_sig(p.B)),
        ("horizon T", str(horizon)),
        ("f per reset", "redrawn (per seed)" if getattr(env, "redraw", False) else "fixed"),
    ]
    if getattr(p, "C", None) is not None:
        out.append(("corruption budget C", fmt_sig(p.C)))
    return tuple(out)


def env_constants(env_id: str, kwargs: dict[str, Any], horizon: int) -> list[tuple[str, str]]:
    """(name, value) rows of the constants the env declares (``env.problem``), read from the
    env itself — the page cannot disagree with the code."""
    return list(_env_constants(env_id, json.dumps(kwargs, sort_keys=True), horizon))


def env_paper(env_id: str) -> tuple[str, str | None]:
    """(paper panel as the registry names it, link to the paper or None)."""
    from hbo_envs.registration import ENV_SPECS

    entry = next((e for e in ENV_SPECS if e.id == env_id), None)
    paper = entry.paper if entry is not None else ""
    url = next((u for k, u in PAPER_URLS.items() if paper.startswith(k)), None)
    return paper, url


# -- escaping -------------------------------------------------------------------------------
# CommonMark lets any ASCII punctuation be backslash-escaped. These are the characters that
# start inline markup (emphasis, code, links, images, raw HTML, entities, GFM strikethrough
# and table cells, math on GitHub). Block markup opens only at a line start: a value is
# collapsed to one line, and what could open a block at its start is escaped too.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>&|~$!])")
# what could open a block at a line start: heading, quote, list item, thematic break, setext
# underline, ordered-list marker (escaped in front of its punctuation: "1\\." shows "1.")
_MD_LINE_START = re.compile(r"^(?:[#>]|[-+=](?=\s|$|[-+=])|\d{1,9}(?=[.)](?:\s|$)))")


class MdSafe(str):
    """Markdown that is already escaped (what :func:`md_code` returns)."""


def _one_line(text: str) -> str:
    """Line breaks (any Unicode one) and runs of white space become one space; control and
    format characters (bidi overrides, zero-width) become U+FFFD, visibly."""
    import unicodedata

    text = re.sub(r"\s+", " ", text)
    return "".join(
        "\ufffd" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text
    )


def md_escape(value: Any) -> str:
    """``value`` as inert Markdown text: one line, every inline-markup character escaped, so
    it shows as typed (no HTML, heading, link, image, emphasis or table cell break).

    >>> md_escape('<img src=x onerror=alert(1)>\\n# Fake heading | x')
    '\\\\<img src=x onerror=alert(1)\\\\> # Fake heading \\\\| x'
    >>> md_escape("# title"), md_escape("1. item"), md_escape("-0.25"), md_escape("=1")
    ('\\\\# title', '1\\\\. item', '-0.25', '=1')
    """
    if isinstance(value, MdSafe):
        return value
    text = _MD_INLINE.sub(r"\\\1", _one_line("" if value is None else str(value)))
    return _escape_line_start(text)


def _escape_line_start(text: str) -> str:
    m = _MD_LINE_START.match(text)
    if m is None:
        return text
    if m.group()[0].isdigit():  # "1. x": escape the list marker's punctuation
        return text[: m.end()] + "\\" + text[m.end() :]
    return "\\" + text


def md_code(value: Any) -> MdSafe:
    """``value`` as a Markdown code span (shown verbatim): one line, fenced by more
    backticks than it holds in a row, ``|`` escaped for GFM table cells.

    >>> md_code("a`b|c")
    '``a`b\\\\|c``'
    """
    # a GFM table row pairs a backslash with the next character before it splits cells at
    # '|': the backslashes before a pipe are doubled, so the pipe's own escape stays paired
    text = re.sub(
        r"(\\*)\|", lambda m: m.group(1) * 2 + "\\|", _one_line("" if value is None else str(value))
    )
    runs = [len(r) for r in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return MdSafe(f"{fence}{pad}{text}{pad}{fence}")


def _md_finalize(value: Any) -> str:
    return md_escape(value)


def _wrap_at_dots(text: str) -> Any:
    """An import path (or file path) that may wrap only after ``.``, ``:`` and ``/``
    (escaped, then ``<wbr>``)."""
    import markupsafe

    parts = re.split(r"(?<=[.:/])", str(text))
    # a browser may also break after a hyphen (a file name such as ata-gp-ucb-nystrom.json):
    # such a part is kept on one line (CSS ``code.ip .nw``), its text unchanged for copying
    return markupsafe.Markup(
        "<wbr>".join(
            markupsafe.Markup('<span class="nw">{}</span>').format(p)
            if "-" in p
            else markupsafe.escape(p)
            for p in parts
        )
    )


# -- templates ------------------------------------------------------------------------------
_FILTERS: dict[str, Any] = {
    "sig": fmt_sig,
    "fixed": fmt_fixed,
    "sortkey": _sort_key,
    "short_env": short_env,
    "slug": env_slug,
    "tojson_compact": lambda x: json.dumps(x, sort_keys=True),
}


@lru_cache(maxsize=2)
def _jinja(markdown: bool = False) -> Any:
    """The template environment: HTML autoescaped everywhere (every template but ``*.md.j2``
    and strings); Markdown templates escape every ``{{ }}`` through :func:`md_escape`
    (``|code`` for a code span)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("hbo_envs.leaderboard", "templates"),
        autoescape=not markdown,
        finalize=_md_finalize if markdown else None,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(_FILTERS)
    if markdown:
        env.filters["code"] = md_code
    else:
        env.filters["wbr"] = _wbr
        env.filters["dots"] = _wrap_at_dots
    return env


def _wbr(text: str) -> Any:
    """Allow line breaks after ``-`` in long env names (escaped, then ``<wbr>`` added)."""
    import markupsafe

    return markupsafe.Markup("-<wbr>".join(markupsafe.escape(p) for p in text.split("-")))


def render_template(name: str, **ctx: Any) -> str:
    """Render template ``name`` (``*.md.j2``: Markdown-escaped, else HTML-autoescaped)."""
    return _jinja(name.endswith(".md.j2")).get_template(name).render(**ctx)


def _ci(v: EntryView) -> str:
    return f"{fmt_fixed(v.score)} [{fmt_fixed(v.score_lo)}, {fmt_fixed(v.score_hi)}]"


def _verdict(data: SuiteData) -> str:
    """The sentence under the table: who leads, and whether first place is separated from
    second (their score CIs do not overlap)."""
    ranked = [v for v in data.entries if np.isfinite(v.score)]
    if not ranked:
        return "No entry has a score yet (the suite needs its random baseline)."
    a = ranked[0]
    if a.tied_with:
        others = [v for v in ranked if v.name in a.tied_with]
        names = ", ".join(v.name for v in [a, *others][:-1]) + f" and {others[-1].name}"
        s = (
            f"{names} tie for first place with identical scores {_ci(a)} and mean ranks "
            f"{fmt_fixed(a.mean_rank, 2)}"
        )
        rest = [v for v in ranked if v is not a and v not in others]
        if not rest:
            return s + "."
        a, b = a, rest[0]
    else:
        s = f"{a.name} ranks first with score {_ci(a)}"
        if len(ranked) == 1:
            return s + "."
        b = ranked[1]
    overlap = a.score_lo <= b.score_hi
    conf = f"{data.suite.confidence:.0%}"
    return (
        s + f"; {'their' if a.tied_with else 'its'} {conf} CI "
        f"{'overlaps' if overlap else 'does not overlap'} that of "
        f"{b.name} ({_ci(b)}), so first place is {'not ' if overlap else ''}separated from "
        f"{'the next' if a.tied_with else 'second'} at this confidence."
    )


def site_files(
    suite: Suite, entries: Sequence[Any], config: SiteConfig | None = None
) -> dict[str, str]:
    """Every file of ``suite``'s part of the site: path relative to the suite folder -> text
    (``config``: the site's settings, :func:`load_site_config` of the suite's root if None)."""
    if config is None:
        config = load_site_config(suite.folder.parent)
    data = suite_data(suite, entries, config)
    out: dict[str, str] = {}
    envs = [
        {
            "id": e.id,
            "short": short_env(e.id),
            "slug": env_slug(e.id),
            "horizon": e.horizon,
            "kwargs": dict(e.kwargs),
            "paper": env_paper(e.id),
        }
        for e in suite.envs
    ]
    csv_text = results_csv(data) if data.entries else ""
    ctx: dict[str, Any] = {
        "suite": suite,
        "data": data,
        "entries": data.entries,
        "envs": envs,
        "verdict": _verdict(data),
        "csv_sha256": sha256_text(csv_text) if csv_text else "",
        "has_profiles": bool(data.scores),
        "config": config,
    }
    if data.entries:
        out["regret.svg"] = regret_figure(data)
        prof = profile_figure(data)
        if prof:
            out["profiles.svg"] = prof
            out["profiles.phone.svg"] = profile_figure(data, phone=True) or ""
        out["results.csv"] = csv_text
    out["summary.json"] = summary_json(suite_summary(suite, entries, ctx["csv_sha256"]))
    out["index.html"] = render_template("suite.html.j2", **ctx)
    out["README.md"] = render_template("README.md.j2", **ctx)
    available = suite.availability()
    for env in envs:
        x = env["id"]
        rows = sorted(data.entries, key=lambda v: (v.per_env[x]["iqm"], v.name, v.file))
        envctx = dict(
            ctx,
            env=env,
            rows=rows,
            constants=(
                env_constants(x, env["kwargs"], env["horizon"])
                if available[x] is None
                # the reason names local paths: the page says only that it was not built
                else [("constants", "not shown: the env cannot be built where this was rendered")]
            ),
            spec_hash=next((v.spec_hashes.get(x, "") for v in data.entries), ""),
        )
        if data.entries:
            out[f"envs/{env['slug']}.svg"] = env_figure(data, x)
            out[f"envs/{env['slug']}.phone.svg"] = env_figure(data, x, phone=True)
        out[f"envs/{env['slug']}.html"] = render_template("env.html.j2", **envctx)
    for v in data.entries:
        out[f"entries/{v.stem}.html"] = render_template("entry.html.j2", **dict(ctx, v=v))
    return out


def suite_summary(suite: Suite, entries: Sequence[Any], results_sha256: str = "") -> dict[str, Any]:
    """What the index shows of a suite (written as ``summary.json`` beside its pages, so the
    index can list a suite this machine cannot re-render, e.g. without its real data)."""
    views = [entry_view(e) for e in entries]
    share_ties(views)
    ranked = [v for v in views if np.isfinite(v.score)]
    dates = [v.date for v in views if v.status == "verified" and v.date]
    lead = ranked[0] if ranked else None
    return {
        "id": suite.id,
        "title": suite.title,
        "n_envs": len(suite.envs),
        "n_seeds": len(suite.seeds),
        "seeds": list(suite.seeds),
        "n_entries": len(views),
        "n_verified": sum(v.status == "verified" for v in views),
        "leader": lead.name if lead else None,
        "leader_config": lead.config_label if lead else None,
        "leader_stem": lead.stem if lead else None,
        "leader_tied_with": list(lead.tied_with) if lead else [],
        "leader_score": lead.score if lead else None,
        "leader_lo": lead.score_lo if lead else None,
        "leader_hi": lead.score_hi if lead else None,
        "last_verified": max(dates) if dates else "",
        "results_csv_sha256": results_sha256,
        # every ranked row, so paper and tuned references and the floor are told apart
        "rows": [
            {
                "rank": v.rank_label,
                "agent": v.name,
                "config": v.config_label,
                "reference": v.registered_name if v.config else None,
                "file": v.file,
                "score": v.score if np.isfinite(v.score) else None,
                "score_lo": v.score_lo if np.isfinite(v.score_lo) else None,
                "score_hi": v.score_hi if np.isfinite(v.score_hi) else None,
                "mean_rank": v.mean_rank if np.isfinite(v.mean_rank) else None,
                "status": v.status,
            }
            for v in views
        ],
    }


def summary_json(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=1, sort_keys=True) + "\n"


def index_files(summaries: Sequence[dict[str, Any]], skipped: Sequence[str] = ()) -> dict[str, str]:
    """``index.html`` and ``submit.html`` of the leaderboards root."""
    return {
        "index.html": render_template("index.html.j2", summaries=summaries, skipped=skipped),
        "submit.html": render_template(
            "submit.html.j2", suites=summaries, name_rule=SAFE_NAME_RULE
        ),
    }
