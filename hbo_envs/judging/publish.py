"""Every published number, rendered from the results archive (:mod:`hbo_envs.judging.archive`).

``hbo-bench archive render`` (:func:`render_all`) writes:

- ``docs/results/<experiment>.md`` — per experiment: the paper's protocol, the protocol
  the archive actually ran (and why it differs), the result table (mean ``R_T`` and
  ``R_T / T`` with 95% bootstrap CIs, agent seconds) and **every claim's verdict** with
  the rule that decided it and the numbers behind it;
- ``docs/known-failures.md`` — every reference agent that does not beat uniform play in
  the archive (:func:`hbo_envs.judging.rules.floor.floor_failures`), each with its
  mechanism, every mechanism stated once;
- the env and agent tables of ``docs/envs.md`` and ``docs/agents.md`` (marker blocks),
  built from the registries (a new env or agent appears by regeneration alone);
- the marker blocks of ``README.md`` (``<!-- archive:NAME:begin -->`` ...
  ``<!-- archive:NAME:end -->``): the "what reproduces" summary per paper, every verdict
  (one line each, folded per experiment) and the quick start's timing.

``render_all(check=True)`` changes nothing and returns the files that differ from what
the archive gives (``tests/test_readme.py`` fails on any). Nothing here computes a result
that is not in the archive: the verdicts are :func:`~hbo_envs.judging.rules.claims.evaluate_claims`
on the archived records.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

import agents
from agents import registry
from agents.batch import BATCHED
from hbo_envs.harness.records import COLUMNS
from hbo_envs.harness.summary import final_rows, summarize
from hbo_envs.judging import archive as A
from hbo_envs.judging.experiments import EXPERIMENTS, tuned_label
from hbo_envs.judging.experiments.equal_width import ESTIMATORS, AtEqualWidth
from hbo_envs.judging.experiments.equal_width import label as equal_width_label
from hbo_envs.judging.experiments.tails import KERNEL_FREE
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_RUN,
    PAPER,
    REPRODUCES,
    SUITE,
    Growth,
    Verdict,
    evaluate_claims,
    survives_holm,
)
from hbo_envs.judging.rules.exponent import exponent_table, theory_exponents, variant_env
from hbo_envs.judging.rules.floor import FloorFailure, floor_failures
from hbo_envs.judging.rules.known_failures import MECHANISMS
from hbo_envs.registration import ENV_IDS, env_table_markdown, missing_data

__all__ = [
    "ROOT",
    "all_results",
    "experiment_result",
    "known_failures",
    "render_all",
    "replace_block",
]

ROOT = Path(__file__).resolve().parents[2]
"""The checkout (README.md, docs/)."""

#: Choices the papers leave open that a verdict of the experiment depends on (said on
#: every verdict line of that experiment).
OPEN_CHOICES: dict[str, str] = {
    "bkc2020-fig1": (
        "BKS Fig. 1's f is not given in the paper: the env's f (hbo/Corrupted-Fig1-v0) is "
        "our construction of the pictured shape"
    ),
    "pl2024-fig1": (
        "Park–Lee leave the Pareto scale λ_z and T unstated: the envs use λ_z = 1 (1D), "
        "0.01 (Griewank) and T = 1000"
    ),
    "pl2024-table1": (
        "Park–Lee leave the Pareto scale λ_z and T unstated: the envs use λ_z = 1 (1D), "
        "0.01 (Griewank) and T = 1000"
    ),
}

_PAPERS = (
    ("cg2019", "Chowdhury & Gopalan 2019 (heavy-tailed BO)"),
    ("pl2024", "Park & Lee 2024 (contextually adaptive, heavy tails)"),
    ("bkc2020", "Bogunovic, Krause & Scarlett 2020 (corruption)"),
    ("hs2022", "Han & Scarlett 2022 (attacks; setup from the authors' code)"),
    ("ebk2025", "Ezzerg, Bogunovic & Knoblauch 2025 (RCGP-UCB)"),
    ("equal-width", "Suite: estimators at equal width (papers' envs)"),
    ("tails-v0", "Suite: tails-v0 (heavy tails that break GP-UCB)"),
)
_ORDER = (REPRODUCES, DOES_NOT, INCONCLUSIVE, NOT_RUN)


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "–"
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.3e}"


# -- from the archive to verdicts ------------------------------------------------------------
def exponent_final(exp: Any, rec: pd.DataFrame) -> pd.DataFrame:
    """The final-row table of an exponent experiment (as
    :func:`~hbo_envs.judging.rules.exponent.run_exponent_sweep` returns it) from archived
    records."""
    cols = ["env_id", "agent", "seed", "t", "regret", "avg_regret", "lower_bound", "delta"]
    frames = []
    variants = {v.label: v for v in exp.variants}
    for (label, T), g in rec.groupby(["variant", "horizon"], sort=False):
        fin = final_rows(g[list(COLUMNS)])
        fam = getattr(variant_env(variants[label], int(T)), "family", None)
        frames.append(fin.assign(env_id=label, delta=float(fam.delta) if fam else math.nan))
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def experiment_result(name: str, root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """``{"exp", "meta", "records", "verdicts", "summary"|"exponents", "stale"}`` of one
    experiment, from the archive alone."""
    exp = EXPERIMENTS[name]
    rec = A.load(name, root)
    meta = A.read_meta(name, root)
    out: dict[str, Any] = {"exp": exp, "meta": meta, "records": rec}
    if rec.empty:
        out["verdicts"] = []
        return out
    if exp.kind == "exponent":
        final = exponent_final(exp, rec)
        top = int(final["t"].max())
        theory = {v.label: theory_exponents(v, top) for v in exp.variants}
        out["exponents"] = exponent_table(final, theory)
        out["verdicts"] = evaluate_claims(exp.claims, final, [v.label for v in exp.variants])
    else:
        records = rec[list(COLUMNS)]
        summary = summarize(records)
        out["summary"] = summary
        out["verdicts"] = evaluate_claims(exp.claims, records, list(exp.envs), summary)
    return out


def counts(verdicts: list[Verdict], family: str | None = None) -> dict[str, int]:
    """Verdicts per outcome (of one family, PAPER or SUITE, when given)."""
    vs = [v for v in verdicts if family is None or v.family == family]
    return {k: sum(v.verdict == k for v in vs) for k in _ORDER}


_FAMILIES = ((PAPER, "paper claims"), (SUITE, "suite checks"))


def _split_tally(verdicts: list[Verdict]) -> str:
    """``paper claims: ...; suite checks: ...`` (the families that have verdicts)."""
    parts = [
        f"{label}: {_tally(counts(verdicts, fam))}"
        for fam, label in _FAMILIES
        if any(v.family == fam for v in verdicts)
    ]
    return "; ".join(parts) or "no verdicts"


def multiplicity_line(verdicts: list[Verdict]) -> str:
    """How the experiment's family of paper claims is handled (issue 38): each verdict is
    its claim's own 5% test; the Holm-adjusted p-values over the decided ones say which
    survive a family-wise 5%."""
    tested = [v for v in verdicts if v.family == PAPER and survives_holm(v) is not None]
    kept = sum(bool(survives_holm(v)) for v in tested)
    return (
        f"Multiplicity: each paper claim is decided by its own test at 5%; {len(tested)} "
        f"paper-claim verdicts here were decided by such a test, and {kept} of them survive "
        "Holm's adjustment over that family at 5% (the Holm-adjusted p is in each evidence "
        "cell; suite checks form a family of their own)."
    )


# -- markdown ------------------------------------------------------------
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _protocol_lines(exp: Any, meta: dict[str, Any]) -> list[str]:
    used = A.protocol_used(exp)  # what plan() and load() use (meta.json: as last built)
    if "ladder" in used:
        scale = f"{used['seeds']} seeds x T in {{{', '.join(map(str, used['ladder']))}}}"
        paper = f"{exp.seeds} seeds x T in {{{', '.join(map(str, exp.horizons))}}}"
    else:
        hs = sorted({h for h in used["horizons"].values()}, key=lambda h: (h is None, h))
        scale = f"{used['seeds']} seeds x T = " + ", ".join(
            "env default" if h is None else str(h) for h in hs
        )
        paper = f"{exp.seeds} seeds x T = {exp.horizon or 'env default'}"
    lines = [f"- **Protocol run by the archive:** {scale}."]
    for env, kw in getattr(exp, "env_kwargs", {}).items():
        lines.append(f"- **`{env}` built with:** `{json.dumps(kw, sort_keys=True)}`.")
    if used.get("full"):
        lines[0] += " This is the experiment's full protocol."
    else:
        lines[0] += (
            f" The experiment's full protocol is {paper}; not run in full: {used['reason']}."
        )
    for f in used.get("fewer", []):
        lines.append(f"- `{f['agent']}` on `{f['envs']}`: {f['seeds']} seeds ({f['why']}).")
    builds = meta.get("builds", [])
    if builds:
        last = builds[-1]
        rev = (last.get("git") or {}).get("revision", "unknown")
        load = (last.get("machine") or {}).get("load_average_at_write")
        cpus = (last.get("machine") or {}).get("cpu_count")
        lines.append(
            f"- **Archive:** `results/archive/{exp.name}/` (last build {last['date'][:10]}, code "
            f"revision `{str(rev)[:10]}`, {cpus} cores, load average "
            f"{load[0]:.1f} when written)."
            if load
            else f"- **Archive:** `results/archive/{exp.name}/`."
        )
    return lines


def _result_table(res: dict[str, Any]) -> list[str]:
    exp = res["exp"]
    if exp.kind == "exponent":
        t = res["exponents"]
        lines = [
            "| env | agent | seeds | exponent of R_T in T [95% CI] | lower bound | "
            "TGP-UCB upper | R_T/(TΔ) at the largest T |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in t.itertuples(index=False):
            lines.append(
                f"| `{r.env_id}` | `{r.agent}` | {r.n} | {r.exponent:.3f} [{r.ci_low:.3f}, "
                f"{r.ci_high:.3f}] | {r.lower_bound:.3f} | {r.tgp_ucb_upper:.3f} | "
                f"{r.ratio_T_max:.3f} |"
            )
        return lines
    s = res["summary"]
    fin = final_rows(res["records"][list(COLUMNS)])
    secs = fin.groupby(["env_id", "agent"])["agent_time"].mean()
    # the share of rewards each robust estimator altered (agents' diagnostics(); a column
    # only when an agent of the experiment reports it)
    altered = fin.groupby(["env_id", "agent"])["altered"].mean()
    show_altered = bool(altered.notna().any())
    lines = [
        "| env | agent | seeds | T | mean R_T [95% CI] | mean R_T/T [95% CI] | agent s / run |"
        + (" rewards altered by the estimator (mean at T) |" if show_altered else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if show_altered else ""),
    ]
    for r in s.itertuples(index=False):
        det = r.n > 1 and r.R_T_ci_low == r.R_T_ci_high
        if det:
            rt, avg = f"{_fmt(r.R_T_mean)} (one run: seeds identical)", _fmt(r.avg_R_T_mean)
        else:
            rt = f"{_fmt(r.R_T_mean)} [{_fmt(r.R_T_ci_low)}, {_fmt(r.R_T_ci_high)}]"
            avg = f"{_fmt(r.avg_R_T_mean)} [{_fmt(r.avg_R_T_ci_low)}, {_fmt(r.avg_R_T_ci_high)}]"
        row = (
            f"| `{r.env_id}` | `{r.agent}` | {r.n} | {r.T} | {rt} | {avg} | "
            f"{_fmt(float(secs.get((r.env_id, r.agent), math.nan)))} |"
        )
        if show_altered:
            row += f" {altered_text(float(altered.get((r.env_id, r.agent), math.nan)))} |"
        lines.append(row)
    return lines


def altered_text(share: float) -> str:
    """A mean share of altered rewards as the result pages print it: "–" for an agent
    without ``diagnostics()``, and an estimator that never fired said in words."""
    if not math.isfinite(share):
        return "–"
    if share == 0.0:
        return "0 (never fired)"
    return f"{100 * share:.2g}%"


def _verdict_table(name: str, verdicts: list[Verdict]) -> list[str]:
    note = OPEN_CHOICES.get(name)
    lines = ["| verdict | claim | env | evidence | rule | source |", "|---|---|---|---|---|---|"]
    for v in verdicts:
        ev = v.evidence
        holm_ok = survives_holm(v)
        if holm_ok is not None:
            ev += f"; Holm-adjusted p = {v.p_holm:.2g}" + ("" if holm_ok else " (not kept)")
        if v.caveat:
            ev += f" — caveat: {v.caveat}"
        ev += f" — depends on a choice the paper leaves open: {note}" if note else ""
        claim = v.claim if v.family == PAPER else f"{v.claim} (suite check)"
        lines.append(
            f"| **{v.verdict}** | {_cell(claim)} | {('`' + v.env + '`') if v.env else 'all'} "
            f"| {_cell(ev)} | {_cell(v.rule or '–')} | {_cell(v.source or '–')} |"
        )
    return lines


def _tally(c: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in c.items() if n) or "no verdicts"


def experiment_page(name: str, res: dict[str, Any], todo: tuple[int, int] = (0, 0)) -> str:
    exp = res["exp"]
    lines = [
        f"# {exp.title}",
        "",
        "<!-- generated by `hbo-bench archive render` from results/archive; do not edit -->",
        "",
        f"{exp.citation}.",
        "",
        f"- **Paper's protocol:** {exp.protocol}",
        *_protocol_lines(exp, res["meta"]),
    ]
    stale, missing = todo
    if stale:
        lines.append(
            f"- **Stale cells:** {stale} cell(s) ran on agent or env sources that have changed "
            "since; `hbo-bench archive build` re-runs them."
        )
    if missing:
        lines.append(
            f"- **Not yet run:** {missing} cell(s) of the protocol above are not in the archive "
            "(the build was stopped); the tables use the seeds that finished, and comparisons "
            f"pair only seeds both agents finished. `hbo-bench archive build {name}` adds them."
        )
    if name in OPEN_CHOICES:
        lines.append(f"- **Open choice:** {OPEN_CHOICES[name]}.")
    lines += ["", "Reproduce it yourself:", "", "```bash", f"hbo-bench reproduce {name}", "```"]
    if res["records"].empty:
        lines += ["", "No archived cells yet (`hbo-bench archive build " + name + "`)."]
        return "\n".join(lines) + "\n"
    lines += ["", "## Results", "", *_result_table(res), ""]
    lines += [
        "## Every claim's verdict",
        "",
        f"{_split_tally(res['verdicts'])}. How a rule decides: "
        "`hbo_envs/judging/rules/claims.py` (the exact sign-flip test of paired seeds for "
        "comparisons, with at least 6 seeds; the per-round regret over the last octaves for "
        "growth; per-seed exponents for exponent bounds; one run for deterministic cells). "
        "Suite checks (the random floor, instance checks) are this suite's additions, not "
        "claims of the paper, and are counted apart.",
        "",
        multiplicity_line(res["verdicts"]),
        "",
        *_verdict_table(name, res["verdicts"]),
    ]
    return "\n".join(lines) + "\n"


def _paper_of(name: str) -> str:
    for prefix, label in _PAPERS:
        if name.startswith(prefix):
            return label
    return "other"


def summary_block(results: dict[str, dict[str, Any]]) -> str:
    """README: per paper, reproduces / does not / inconclusive / not run, linked."""
    lines = [
        "| paper | experiment | paper claims: reproduces / does not / inconclusive / not run "
        "| suite checks: reproduces / does not / inconclusive / not run | protocol |",
        "|---|---|---|---|---|",
    ]
    for prefix, label in _PAPERS:
        for name, res in results.items():
            if not name.startswith(prefix):
                continue
            cells = []
            for fam, _ in _FAMILIES:
                c = counts(res["verdicts"], fam)
                cells.append(" / ".join(str(c[k]) for k in _ORDER))
            used = A.protocol_used(res["exp"]) if res["meta"] else {}
            proto = "full" if used.get("full") else "reduced" if used else "not built"
            lines.append(
                f"| {label} | [{name}](docs/results/{name}.md) | {cells[0]} | {cells[1]} "
                f"| {proto} |"
            )
    lines.append("")
    for paper, fams in per_paper_counts(results).items():
        told = "; ".join(f"{lab}: {_tally(fams[fam])}" for fam, lab in _FAMILIES)
        lines.append(f"- **{paper}:** {told}.")
    return "\n".join(lines)


#: What each heavy-tail check of the suite asks, per estimator (:func:`findings_block`).
_FINDING_COLUMNS = (
    ("tuned", "tails-v0-estimators", "tuned X beats tuned GP-UCB"),
    ("width", "tails-v0-estimators", "X at GP-UCB's width beats GP-UCB"),
    ("width", "equal-width", "X at GP-UCB's width beats GP-UCB, papers' envs"),
    ("tuned", "equal-width", "tuned X beats tuned GP-UCB, papers' envs"),
    ("floor", "tails-v0-estimators", "paper X beats uniform play"),
    ("exponent", "tails-v0-estimators", "tuned X's R_t exponent >= 1/(1+alpha)"),
)


def _claim_kinds(exp: Any) -> dict[str, tuple[str, str]]:
    """claim text -> (kind, estimator) for the heavy-tail checks of ``exp``: ``tuned`` (tuned
    X below tuned GP-UCB), ``width`` (X at GP-UCB's width below GP-UCB), ``floor`` (paper X
    below random), ``exponent`` (tuned X's growth exponent), ``kernel`` (tuned GP-UCB below
    a tuned kernel-free Robust UCB)."""
    out: dict[str, tuple[str, str]] = {}
    gp_t = tuned_label("gp-ucb")
    for c in exp.claims:
        a, b = getattr(c, "a", ""), getattr(c, "b", "")
        for n in (*ESTIMATORS, "gp-ucb", *KERNEL_FREE):
            if isinstance(c, AtEqualWidth) and a == equal_width_label(n) and b == "gp-ucb":
                out[c.text] = ("width", n)
            elif isinstance(c, Growth) and a == tuned_label(n):
                out[c.text] = ("exponent", n)
            elif a == tuned_label(n) and b == gp_t:
                out[c.text] = ("tuned", n)
            elif a == n and b == "random":
                out[c.text] = ("floor", n)
            elif a == gp_t and b == tuned_label(n):
                out[c.text] = ("kernel", n)
    return out


def findings_block(results: dict[str, dict[str, Any]]) -> str:
    """README: what the suite finds about heavy tails, from the archive alone: whether the
    tail breaks tuned GP-UCB on each ``tails-v0`` env, and per estimator the verdicts of
    issue 35 item 6's questions, as reproduces / does not / inconclusive over envs."""
    crit = results.get("tails-v0", {}).get("verdicts", [])
    est = results.get("tails-v0-estimators", {})
    if not crit or not est.get("verdicts"):
        return "The `tails-v0` experiments are not in the archive yet (`hbo-bench archive build`)."
    c = counts(crit)
    lines = [
        f"**The heavy tail itself breaks tuned GP-UCB on {c[REPRODUCES]} of the {len(crit)} "
        "screened envs** (R_T at least twice its R_T under Gaussian noise of the same "
        "interquartile range, 95% CIs apart on the mean and on the IQM, on seeds that were "
        f"not used to screen the envs; {c[DOES_NOT]} do not, {c[INCONCLUSIVE]} inconclusive: "
        "[numbers](docs/results/tails-v0.md)); those it breaks are the `tails-v0` suite. Per "
        "heavy-tail estimator X, the verdicts over the suite's envs "
        "([numbers](docs/results/tails-v0-estimators.md)) and, at equal width, over the "
        "papers' two envs ([numbers](docs/results/equal-width.md)), as "
        "reproduces / does not / inconclusive (not run envs left out):",
        "",
        "| estimator X | " + " | ".join(h for _, _, h in _FINDING_COLUMNS) + " |",
        "|---|" + "---|" * len(_FINDING_COLUMNS),
    ]
    tallies: dict[tuple[str, str, str], dict[str, int]] = {}
    for name in ("tails-v0-estimators", "equal-width"):
        res = results.get(name)
        if not res or not res.get("verdicts"):
            continue
        kinds = _claim_kinds(res["exp"])
        for v in res["verdicts"]:
            k = kinds.get(v.claim)
            if k is None or not v.env:
                continue
            t = tallies.setdefault((name, *k), dict.fromkeys(_ORDER, 0))
            t[v.verdict] = t.get(v.verdict, 0) + 1
    for n in (*ESTIMATORS, "gp-ucb"):
        row = [f"{ESTIMATORS.get(n, 'none (GP-UCB itself)')}: `{n}`"]
        for kind, exp_name, _ in _FINDING_COLUMNS:
            t = tallies.get((exp_name, kind, n))
            row.append(
                "–"
                if t is None
                else " / ".join(str(t[x]) for x in (REPRODUCES, DOES_NOT, INCONCLUSIVE))
            )
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for n in KERNEL_FREE:
        t = tallies.get(("tails-v0-estimators", "kernel", n))
        if t is not None:
            lines.append(
                f"- **Does the kernel help?** Tuned GP-UCB beats the tuned kernel-free `{n}` "
                f"(Bubeck, Cesa-Bianchi & Lugosi 2013) on {t[REPRODUCES]} envs, does not on "
                f"{t[DOES_NOT]}, inconclusive on {t[INCONCLUSIVE]}."
            )
    return "\n".join(lines)


def verdict_list_block(results: dict[str, dict[str, Any]]) -> str:
    """README: every verdict of every experiment, one line each, folded per experiment."""
    blocks = []
    for name, res in results.items():
        vs = res["verdicts"]
        out = [
            f"<details><summary><b>{name}</b>: {_split_tally(vs)} "
            f'(<a href="docs/results/{name}.md">numbers</a>)</summary>\n'
        ]
        for v in vs:
            where = f" [`{v.env}`]" if v.env else ""
            kind = "" if v.family == PAPER else " (suite check)"
            out.append(f"- {v.verdict}: {v.claim}{where}{kind}")
        out.append("\n</details>")
        blocks.append("\n".join(out))
    # one folded block after the other, no blank line between (they fold to one line)
    return "".join(blocks)


def timing_block(results: dict[str, dict[str, Any]]) -> str:
    """README quick start: what the archive measured for cg2019-fig1a, the quick
    configuration itself when the archive holds it, else the paper's full protocol (what
    the archive runs once the machine allows it), with what the quick start is of it."""
    res = results.get("cg2019-fig1a")
    if not res or res["records"].empty:
        return "(timing: the archive has no cg2019-fig1a cells yet)"
    exp = res["exp"]
    fin = final_rows(res["records"][list(COLUMNS)])
    builds = res["meta"].get("builds", [])
    m = (builds[-1].get("machine") or {}) if builds else {}
    load = m.get("load_average_at_write")
    where = (
        f"measured on {m.get('cpu_count', '?')} cores at load average "
        f"{(load or [math.nan])[0]:.1f} (a shared machine: an idle one is faster)"
    )
    quick = fin[fin["t"] == exp.quick_horizon]
    if not quick.empty and quick["seed"].nunique() >= exp.quick_seeds:
        quick = quick[quick["seed"] < exp.quick_seeds]
        total = float(quick["wall_time"].sum())
        slowest = quick.groupby("agent")["wall_time"].sum().sort_values(ascending=False)
        return (
            f"The archive ran exactly this configuration ({exp.quick_seeds} seeds x T = "
            f"{exp.quick_horizon}, {len(quick)} cells): {total:.0f} s of compute in all, "
            f"{float(slowest.iloc[0]):.0f} s of it in `{slowest.index[0]}`, {where}; "
            "`--workers` processes share it."
        )
    full = fin[fin["t"] == exp.horizon]
    if full.empty or full["seed"].nunique() < exp.seeds:
        return "(timing: the archive holds neither the quick nor the full cg2019-fig1a)"
    total = float(full["wall_time"].sum())
    slowest = full.groupby("agent")["wall_time"].sum().sort_values(ascending=False)
    share = (exp.quick_seeds * exp.quick_horizon) / (exp.seeds * exp.horizon)
    specs, _ = exp.agent_specs()
    batched = [f"`{a.label}`" for a in specs if type(a.build()) in BATCHED]
    how = f"the seeds of {', '.join(batched)} batched" if batched else "no agent batched"
    return (
        f"The archive ran the paper's full protocol of this experiment ({exp.seeds} seeds x "
        f"T = {exp.horizon}, {len(full)} cells, {how}): {total:.0f} s of compute in all, "
        f"{float(slowest.iloc[0]):.0f} s of it in `{slowest.index[0]}`, {where}. The quick "
        f"start runs {exp.quick_seeds} seeds x T = {exp.quick_horizon}, "
        f"{share:.3g} of those seed-rounds; `--workers` processes share the compute."
    )


# -- env and agent tables ------------------------------------------------------------
def agent_table_markdown() -> str:
    """The agent table, from the registry (``agents.available()``): name, class, the first
    line of its docstring and the paper it implements."""
    specs = {e.name: e for e in registry.AGENT_SPECS}
    lines = ["| name | class | what it is | paper |", "|---|---|---|---|"]
    for name in agents.available():
        obj = type(agents.make(name))
        doc = (obj.__doc__ or "").strip().splitlines()
        first = doc[0].strip() if doc else ""
        paper = specs[name].paper if name in specs else ""
        lines.append(
            f"| `{name}` | `{obj.__module__}.{obj.__qualname__}` | {_cell(first)} | "
            f"{_cell(paper) or '–'} |"
        )
    return "\n".join(lines)


def env_table_block() -> str | None:
    """The registry's env table (None when a real-data set is absent: its row needs it)."""
    if any(missing_data(e) for e in ENV_IDS):
        return None
    return env_table_markdown().rstrip()


# -- known failures ------------------------------------------------------------
def known_failures_page(results: dict[str, dict[str, Any]]) -> str:
    fails = floor_failures(results)
    lines = [
        "# Known failures: reference agents that do not beat uniform play",
        "",
        "<!-- generated by `hbo-bench archive render` from results/archive; do not edit -->",
        "",
        "Every reference agent of every experiment, ATA-GP-UCB included, is compared with "
        "the `random` agent on paired seeds in the archive (no exemptions). The pairs below "
        "do not beat it (verdict `does not reproduce` or `inconclusive`); each names its "
        "mechanism, and each mechanism is stated once below the table.",
        "",
        "| experiment | env | agent | verdict | measured (paired seeds) | mechanism |",
        "|---|---|---|---|---|---|",
    ]
    for f in fails:
        mech = f"[{f.mechanism}](#{f.mechanism})" if f.mechanism else "**unexplained**"
        lines.append(
            f"| [{f.experiment}](results/{f.experiment}.md) | `{f.env}` | `{f.agent}` | "
            f"{f.verdict} | {_cell(f.measured)} | {mech} |"
        )
    if not fails:
        lines.append("| (none) | | | | | |")
    used = sorted({f.mechanism for f in fails if f.mechanism})
    lines += ["", "## Mechanisms", ""]
    for key in used:
        lines += [f"### {key}", "", MECHANISMS[key], ""]
    return "\n".join(lines).rstrip() + "\n"


# -- blocks and files ------------------------------------------------------------
def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block ``<!-- archive:NAME:begin -->`` ... ``end`` set to ``body``."""
    begin, end = f"<!-- archive:{name}:begin -->", f"<!-- archive:{name}:end -->"
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), flags=re.S)
    if not pat.search(text):
        raise ValueError(f"the marker block {begin} ... {end} is missing")
    return pat.sub(lambda _: f"{begin}\n{body}\n{end}", text, count=1)


def _write(path: Path, text: str, check: bool, changed: list[Path]) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text:
        return
    changed.append(path)
    if not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def all_results(root: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    return {name: experiment_result(name, root) for name in EXPERIMENTS}


def _stale_counts(root: str | os.PathLike[str] | None) -> dict[str, tuple[int, int]]:
    """``(stale, missing)`` planned cells per experiment (no data needed:
    :func:`archive.plan` without the check)."""
    out = {}
    for name in EXPERIMENTS:
        st = A.status(name, root)
        out[name] = (len(st["stale"]), len(st["missing"]))
    return out


def render_all(
    *,
    root: str | os.PathLike[str] | None = None,
    check: bool = False,
    repo: str | os.PathLike[str] | None = None,
    log: Callable[[str], Any] | None = None,
) -> list[Path]:
    """Regenerate every archive-derived file and README block; return those that changed
    (with ``check``: that differ, nothing written)."""
    base = Path(repo) if repo is not None else ROOT
    results = all_results(root)
    stale = _stale_counts(root)
    changed: list[Path] = []
    docs = base / "docs"
    for name, res in results.items():
        _write(
            docs / "results" / f"{name}.md", experiment_page(name, res, stale[name]), check, changed
        )
    _write(docs / "known-failures.md", known_failures_page(results), check, changed)
    page = docs / "agents.md"
    text = page.read_text(encoding="utf-8")
    _write(page, replace_block(text, "agent-table", agent_table_markdown()), check, changed)
    envs = env_table_block()
    if envs is not None:
        page = docs / "envs.md"
        text = page.read_text(encoding="utf-8")
        _write(page, replace_block(text, "env-table", envs), check, changed)
    readme = base / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = replace_block(text, "summary", summary_block(results))
    new = replace_block(new, "verdicts", verdict_list_block(results))
    new = replace_block(new, "findings", findings_block(results))
    new = replace_block(new, "timing", timing_block(results))
    _write(readme, new, check, changed)
    return changed


def per_paper_counts(
    results: dict[str, dict[str, Any]],
) -> dict[str, dict[str, dict[str, int]]]:
    """``paper -> {family: {verdict: count}}`` (paper claims and suite checks apart), in
    the order of the papers."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    order = [label for _, label in _PAPERS] + ["other"]
    for name, res in sorted(results.items(), key=lambda kv: order.index(_paper_of(kv[0]))):
        t = out.setdefault(_paper_of(name), {fam: dict.fromkeys(_ORDER, 0) for fam, _ in _FAMILIES})
        for fam, _ in _FAMILIES:
            for k, n in counts(res["verdicts"], fam).items():
                t[fam][k] += n
    return out


def known_failures(
    root: str | os.PathLike[str] | None = None,
) -> dict[tuple[str, str], FloorFailure]:
    """``(agent label, env id) -> FloorFailure``: every pair of the archive (at ``root``,
    default ``results/archive``) that does not beat random, first experiment listing it."""
    out: dict[tuple[str, str], FloorFailure] = {}
    for f in floor_failures(all_results(root)):
        out.setdefault((f.agent, f.env), f)
    return out
