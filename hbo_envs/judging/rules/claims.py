"""A paper's claims as data, and their measured verdicts.

An :class:`~hbo_envs.judging.experiments.Experiment` lists what the paper claims
(``claims=(...)``); ``hbo-bench reproduce`` evaluates every claim on the measured records
and prints one verdict per claim and env, never a claim without its verdict:

- ``reproduces`` — the measurement says what the paper says, decisively (the rule below);
- ``does not reproduce`` — the measurement says the opposite, decisively;
- ``inconclusive`` — the seeds run cannot tell;
- ``not run`` — an agent or env the claim needs did not run (e.g. not available yet).

Every verdict names the rule that decided it (:attr:`Verdict.rule`). Every rule is a test
at level 5% whose false-decision rate under a true null is measured, at every seed count
the archive uses and under heavy-tailed (Student-t, df = 2) as well as Gaussian noise, by
``tests/test_rule_calibration.py`` (``benchmarks/bench_rules.py`` compares it with the
percentile bootstrap it replaced, which decided 25% of true nulls at 3 seeds):

- :data:`RULE_PAIRED` — two agents are compared on *paired seeds* (seed ``s`` is the same
  f and the same noise for both): the per-seed differences ``d_s`` of the final score
  (``R_T``, ``R_T / T``, agent seconds, ...), their mean (the effect size, also given
  relative to the second agent), the exact sign-flip test of that mean
  (:func:`~hbo_envs.harness.stats.sign_flip`; exact for any law of ``d`` that is
  symmetric under no effect) and the 95% interval that inverts it. The claim ``a < b``
  reproduces when the interval lies below 0, does not when it lies above 0. The Wilcoxon
  signed-rank p-value is printed beside it.
- :data:`RULE_TOO_FEW` — fewer than :data:`~hbo_envs.harness.stats.MIN_PAIRED_SEEDS` = 6
  seeds: the exact test's smallest two-sided p-value is ``2 / 2^n`` (0.0625 at 5 seeds),
  so no data can decide; the verdict says so instead of a bare "inconclusive".
- :data:`RULE_NONINFERIOR` — "no worse" (:func:`no_worse`): the same test of
  ``a_s - (1 + margin) b_s``, with the margin stated.
- :data:`RULE_DETERMINISTIC` — every seed gave the same numbers for both agents (a
  deterministic env such as StockPicking): the comparison is one run, stated as such.
- :data:`RULE_GROWTH` — linear / sublinear (and "R_T/T decreasing"): whether the
  per-round regret is still falling over the last octaves of the run, per seed; a curve
  that is linear at the end cannot pass, whatever its exponent over the whole run.
- :data:`RULE_EXPONENT` — exponent bounds: the sign-flip test of the per-seed exponents.
- :data:`RULE_RUNS` — a property of single runs (the band contains f) in most runs: the
  Clopper–Pearson interval of the share of runs, against 1/2.

Multiplicity: each claim is its own statement and is decided at 5%; every verdict also
carries its Holm-adjusted p-value over its family (the decided paper claims of the
experiment; its suite checks apart), and the pages state the family's size and which
decided verdicts do not survive the adjustment (:func:`holm_family`).

Families: a *paper claim* (``family=PAPER``) is something a paper says; a *suite check*
(``family=SUITE``: the random floor, an instance check of a construction) is something this
suite adds. They are counted apart everywhere.

Agents are named by their label in the experiment.

Constructors:

- :func:`less` — ``a`` has lower mean regret than ``b``; :func:`below_random` is
  ``less(a, "random")`` as a suite check; :func:`attack_predicts_floor_failure` the floor
  on an attacked env, stated as the attack predicts it.
- :func:`no_worse` — non-inferiority with a stated margin.
- :func:`lowest` — ``a`` below each other agent (or each agent in ``among``).
- :func:`linear` / :func:`sublinear` — :data:`RULE_GROWTH`.
- :func:`exponent_at_least` / :func:`exponent_equals` — :data:`RULE_EXPONENT` (on the
  records of an exponent experiment, the exponent of ``R_T`` over ``T``).
- :func:`in_most_runs` — :data:`RULE_RUNS`.

A claim the constructors cannot say subclasses :class:`Claim` and implements
:meth:`Claim.evaluate` (a :class:`ClaimContext` gives the records and the summary).

>>> import pandas as pd
>>> rec = pd.DataFrame({
...     "env_id": ["e"] * 12, "agent": ["a"] * 6 + ["b"] * 6, "seed": list(range(6)) * 2,
...     "t": [10] * 12, "regret": [1.0, 1.1, 0.9, 1.2, 0.8, 1.0, 5.0, 5.2, 4.8, 5.1, 4.9, 5.3],
... })
>>> [v.verdict for v in evaluate_claims([less("a", "b")], rec)]
['reproduces']
>>> evaluate_claims([less("a", "b")], rec)[0].rule == RULE_PAIRED
True
>>> [v.verdict for v in evaluate_claims([less("b", "a")], rec)]
['does not reproduce']
>>> [v.verdict for v in evaluate_claims([less("a", "b")], rec[rec["seed"] < 5])]
['inconclusive']
>>> [v.verdict for v in evaluate_claims([below_random("a")], rec)]
['not run']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from hbo_envs.harness.records import unique_rounds
from hbo_envs.harness.stats import (
    ALPHA,
    MIN_PAIRED_SEEDS,
    SUBLINEAR_RATIO,
    PairedComparison,
    clopper_pearson,
    holm,
    octave_rates,
    paired_comparison,
    per_seed_exponents,
    sign_flip,
    stratified_bootstrap_ci,
)
from hbo_envs.harness.summary import final_rows
from hbo_envs.judging.rules.known_failures import known_failure
from hbo_envs.validation import check_real

__all__ = [
    "DOES_NOT",
    "INCONCLUSIVE",
    "NOT_RUN",
    "PAPER",
    "REPRODUCES",
    "SUITE",
    "Claim",
    "ClaimContext",
    "Growth",
    "Less",
    "LessAcross",
    "Lowest",
    "NoWorse",
    "Runs",
    "Verdict",
    "attack_predicts_floor_failure",
    "below_random",
    "evaluate_claims",
    "exponent_at_least",
    "exponent_equals",
    "format_verdicts",
    "holm_family",
    "in_most_runs",
    "less",
    "linear",
    "lowest",
    "no_worse",
    "sublinear",
    "survives_holm",
    "verdict_records",
]

REPRODUCES = "reproduces"
DOES_NOT = "does not reproduce"
INCONCLUSIVE = "inconclusive"
NOT_RUN = "not run"
RULE_PAIRED = (
    "exact sign-flip test of the mean per-seed difference at 5% (95% interval: its inversion)"
)
RULE_NONINFERIOR = (
    "non-inferiority: exact sign-flip test of a - (1 + margin) b per seed at 5% (two-sided)"
)
RULE_DETERMINISTIC = "deterministic: one run (every seed gave the same numbers)"
RULE_ONE_SEED = "one seed: no interval"
RULE_TOO_FEW = (
    f"inconclusive: too few seeds (the exact sign-flip test cannot reach p < 0.05 below "
    f"n = {MIN_PAIRED_SEEDS}: its smallest p-value is 2/2^n)"
)
RULE_EXPONENT = "exact sign-flip test of the per-seed exponents of R_T in T at 5%"
RULE_GROWTH = (
    "exact sign-flip test at 5% of the per-seed change of the per-round regret between "
    "[T/4, T/2] and [T/2, T] (falling: sublinear; not falling by the t^0.9 factor "
    f"{SUBLINEAR_RATIO:.3f}: linear)"
)
RULE_RUNS = "Clopper-Pearson 95% interval of the share of runs, against 1/2"
#: What a verdict is evidence of: a claim of the paper, or a check the suite adds (the
#: random floor, an instance check of a construction).
PAPER = "paper"
SUITE = "suite"
RULE_VALUE = "published value inside the widened 95% bootstrap CI"
RULE_RATIO = "paired bootstrap 95% CI of the ratio of means"
_NO_ROWS = np.zeros(0, dtype=np.intp)

_METRICS = {
    "regret": "R_T",
    "avg_regret": "R_T/T",
    "agent_time": "seconds in the agent",
    # 1 - coverage_T: the share of the coverage points where f lies outside the agent's band
    # mu_T +- width_T at the last round (Chowdhury–Gopalan Fig. 1f's confidence sets).
    "miss": "1 - coverage_T",
    # the same for the band mu_T +- sigma_T (the agent's posterior_sd; what CG Fig. 1f plots)
    "miss_sigma": "1 - coverage_T of mu_T +- sigma_T",
}


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim for one env (``env=""`` for a claim about all envs)."""

    claim: str
    env: str
    verdict: str
    evidence: str
    source: str = ""
    rule: str = ""
    family: str = PAPER  # PAPER (a claim of the paper) or SUITE (a check the suite adds)
    p: float = math.nan  # the p-value of the test that decided (NaN: not a test of level 5%)
    p_holm: float = math.nan  # Holm-adjusted over the experiment's verdicts of that family
    caveat: str = ""  # e.g. the verdict rests on an approximation the agent flags as invalid

    def as_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "env": self.env,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "source": self.source,
            "rule": self.rule,
            "family": self.family,
            "p": None if math.isnan(self.p) else self.p,
            "p_holm": None if math.isnan(self.p_holm) else self.p_holm,
            "caveat": self.caveat,
        }


@dataclass(frozen=True)
class Estimate:
    """Mean over seeds of a per-seed score and its 95% bootstrap CI."""

    mean: float
    lo: float
    hi: float
    n: int

    def __str__(self) -> str:
        return f"{_fmt(self.mean)} [{_fmt(self.lo)}, {_fmt(self.hi)}]"


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.3e}"


class ClaimContext:
    """What a claim is judged on: the tidy records of one reproduction.

    ``records`` are the per-round records (:data:`hbo_envs.harness.records.COLUMNS`),
    ``final`` the last row of each ``(env_id, agent, seed)``, ``envs`` the experiment's
    env ids (in order) and ``agents`` the labels that ran.
    """

    def __init__(
        self,
        records: pd.DataFrame,
        envs: Sequence[str] | None = None,
        summary: pd.DataFrame | None = None,
    ) -> None:
        # the index is ignored and a cell held twice refused: each seed is paired once
        records = unique_rounds(records)
        self.records = records
        self.final = final_rows(records)
        if envs is None:
            envs = list(dict.fromkeys(records["env_id"])) if not records.empty else []
        self.envs = tuple(envs)
        self.agents = tuple(dict.fromkeys(self.final["agent"])) if not records.empty else ()
        self.summary = summary
        # The rows of each (env, agent) in ``final`` (ascending seed, as final_rows sorts
        # them), found once: a reproduction's claims ask for the same pairs hundreds of
        # times, and a boolean mask over the frame per question was most of their cost.
        # The records are not to be changed after construction.
        rows: dict[tuple[str, str], list[int]] = {}
        if len(self.final):
            keys = zip(self.final["env_id"].tolist(), self.final["agent"].tolist(), strict=True)
            for i, key in enumerate(keys):
                rows.setdefault(key, []).append(i)
        self._rows = {k: np.asarray(v, dtype=np.intp) for k, v in rows.items()}
        self._columns: dict[str, np.ndarray] = {}
        self._pairs: dict[tuple[Any, ...], PairedComparison | None] = {}

    def _column(self, name: str) -> np.ndarray:
        """``final[name]`` as floats (a KeyError for a column the records lack)."""
        if name not in self._columns:
            self._columns[name] = self.final[name].to_numpy(dtype=float)
        return self._columns[name]

    def _at(self, env: str, agent: str) -> np.ndarray:
        return self._rows.get((env, agent), _NO_ROWS)

    def ran(self, env: str, agent: str) -> bool:
        return (env, agent) in self._rows

    def scores(self, env: str, agent: str, metric: str = "regret") -> np.ndarray:
        """Per-seed final ``R_T`` (``metric="regret"``), ``R_T / T`` (``"avg_regret"``),
        seconds spent in the agent over the run (``"agent_time"``) or ``1 - coverage_T``
        (``"miss"``, the share of points whose f the final confidence band misses;
        ``"miss_sigma"``, the same for the band ``mu_T +- sigma_T``)."""
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {sorted(_METRICS)}; got {metric!r}.")
        at = self._at(env, agent)
        if metric == "agent_time":
            return self._column("agent_time")[at]
        if metric == "miss":
            return 1.0 - self._column("coverage")[at]
        if metric == "miss_sigma":
            return 1.0 - self._column("coverage_sigma")[at]
        R = self._column("regret")[at]
        return R / self._column("t")[at] if metric == "avg_regret" else R

    def estimate(self, env: str, agent: str, metric: str = "regret") -> Estimate:
        x = self.scores(env, agent, metric)
        if x.size == 0:
            return Estimate(math.nan, math.nan, math.nan, 0)
        lo, hi = stratified_bootstrap_ci(x)
        return Estimate(float(x.mean()), lo, hi, int(x.size))

    def paired(
        self, env: str, a: str, b: str, metric: str = "regret", *, scale_b: float = 1.0
    ) -> PairedComparison | None:
        """``a`` vs ``scale_b`` times ``b`` on the seeds both finished (None when there is
        none; :func:`~hbo_envs.harness.stats.paired_comparison`)."""
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {sorted(_METRICS)}; got {metric!r}.")
        key = (env, a, b, metric, scale_b)
        if key not in self._pairs:  # the same pair recurs (e.g. each agent vs the floor)
            self._pairs[key] = self._paired(env, a, b, metric, scale_b)
        return self._pairs[key]

    def _paired(
        self, env: str, a: str, b: str, metric: str, scale_b: float
    ) -> PairedComparison | None:
        xa, xb = self.scores(env, a, metric), self.scores(env, b, metric)
        seeds = self.final["seed"].to_numpy()
        ka, kb = seeds[self._at(env, a)], seeds[self._at(env, b)]
        # a NaN score was not measured (e.g. a band column of records written before it
        # existed): that seed is not paired
        ma, mb = ~np.isnan(xa), ~np.isnan(xb)
        # each (env, agent, seed) is one row (unique_rounds): the sorted common seeds
        _, ia, ib = np.intersect1d(ka[ma], kb[mb], assume_unique=True, return_indices=True)
        if ia.size == 0:
            return None
        return paired_comparison(xa[ma][ia], xb[mb][ib], scale_b=scale_b)

    def curves(self, env: str, agent: str, column: str = "regret") -> tuple[np.ndarray, np.ndarray]:
        """``(t, Y)``: the rounds every seed recorded and ``Y[seed, j]`` at ``t[j]``."""
        g = self.records[(self.records["env_id"] == env) & (self.records["agent"] == agent)]
        if g.empty:
            return np.zeros(0), np.zeros((0, 0))
        piv = g.pivot_table(index="seed", columns="t", values=column, aggfunc="first")
        piv = piv.dropna(axis=1)
        return piv.columns.to_numpy(dtype=float), piv.to_numpy(dtype=float)


@dataclass(frozen=True)
class Claim:
    """A claim of a paper. ``text`` is what the paper says; ``source`` where it says it."""

    text: str
    source: str = ""
    #: PAPER: a claim of the paper; SUITE: a check the suite adds (random floor, instance
    #: check). Counted apart on every page.
    family: str = field(default=PAPER, kw_only=True)
    #: Said on every verdict of the claim (e.g. it rests on an approximation that the agent
    #: itself flags as invalid on this env).
    caveat: str = field(default="", kw_only=True)

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        raise NotImplementedError

    def _verdict(
        self, env: str, verdict: str, evidence: str, rule: str = "", p: float = math.nan
    ) -> Verdict:
        return Verdict(
            self.text,
            env,
            verdict,
            evidence,
            self.source,
            rule,
            self.family,
            p,
            caveat=self.caveat,
        )

    def _envs(self, ctx: ClaimContext, env: str | None) -> tuple[str, ...]:
        return ctx.envs if env is None else (env,)

    def _missing(self, ctx: ClaimContext, env: str, labels: Iterable[str]) -> Verdict | None:
        missing = [a for a in labels if not ctx.ran(env, a)]
        if missing:
            return self._verdict(env, NOT_RUN, "no finished runs of " + ", ".join(missing))
        return None


_NO_PAIR = "no seed with {m} measured for both agents (finished, and the column recorded)"


def decide_less(c: PairedComparison, rule: str = RULE_PAIRED) -> tuple[str, str]:
    """``(verdict, rule)`` of the claim "a below b" on a paired comparison (module doc):
    the exact sign-flip test's interval of the mean difference below 0 reproduces, above 0
    does not; fewer than :data:`MIN_PAIRED_SEEDS` stochastic seeds are "too few seeds"."""
    if c.deterministic:
        return (REPRODUCES if c.diff < 0 else DOES_NOT), RULE_DETERMINISTIC
    if c.n < MIN_PAIRED_SEEDS:
        return INCONCLUSIVE, RULE_TOO_FEW
    if c.hi < 0:
        return REPRODUCES, rule
    if c.lo > 0:
        return DOES_NOT, rule
    return INCONCLUSIVE, rule


def describe_pair(c: PairedComparison, a: str, b: str, m: str, margin: float = 0.0) -> str:
    """The evidence line of a paired comparison."""
    if c.deterministic:
        return f"{m}: {a} {_fmt(c.mean_a)} vs {b} {_fmt(c.mean_b)} (one run: {c.n} identical seeds)"
    rel = f", {c.rel:+.0%} of {b}" if math.isfinite(c.rel) and not margin else ""
    p = f", sign-flip p = {c.p:.2g}" if math.isfinite(c.p) else ""
    w = f", Wilcoxon p = {c.wilcoxon_p:.2g}" if math.isfinite(c.wilcoxon_p) else ""
    what = f"mean of {a} - {1 + margin:g} x {b}" if margin else "paired difference"
    return (
        f"{m}: {a} {_fmt(c.mean_a)} vs {b} {_fmt(c.mean_b)}; {what} "
        f"{_fmt(c.diff)} [{_fmt(c.lo)}, {_fmt(c.hi)}]{rel}{p}{w} (n = {c.n} paired seeds)"
    )


def _floor_note(ctx: ClaimContext, env: str, metric: str, *agents: str) -> str:
    """Whether each of ``agents`` beats uniform play on ``env`` (a comparison of two agents
    that both lose to it says little about either), or "" without a random floor."""
    if not ctx.ran(env, "random") or metric not in ("regret", "avg_regret"):
        return ""
    parts = []
    for x in agents:
        if x == "random" or not ctx.ran(env, x):
            continue
        c = ctx.paired(env, x, "random", metric)
        if c is None:
            continue
        v, _ = decide_less(c)
        how = {REPRODUCES: "beats", DOES_NOT: "loses to"}.get(v, "not decisively below")
        parts.append(f"{x} {how} uniform play")
    return ("; " + ", ".join(parts)) if parts else ""


@dataclass(frozen=True)
class Less(Claim):
    """Agent ``a`` has lower mean ``metric`` than agent ``b`` (on ``env``, or on each),
    judged on paired seeds (:func:`decide_less`)."""

    a: str = ""
    b: str = ""
    env: str | None = None
    metric: str = "regret"

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        m = _METRICS[self.metric]
        for env in self._envs(ctx, self.env):
            miss = self._missing(ctx, env, (self.a, self.b))
            if miss:
                out.append(miss)
                continue
            c = ctx.paired(env, self.a, self.b, self.metric)
            if c is None:
                out.append(self._verdict(env, INCONCLUSIVE, _NO_PAIR.format(m=m)))
                continue
            verdict, rule = decide_less(c)
            evidence = describe_pair(c, self.a, self.b, m)
            if "random" not in (self.a, self.b):
                evidence += _floor_note(ctx, env, self.metric, self.a, self.b)
            if self.b == "random" and verdict != REPRODUCES:  # say why, or that nobody knows
                key = known_failure(self.a, env)
                evidence += (
                    f"; known failure, mechanism '{key}' (docs/known-failures.md)"
                    if key
                    else "; unexplained floor failure (docs/known-failures.md)"
                )
            out.append(self._verdict(env, verdict, evidence, rule, c.p))
        return out


@dataclass(frozen=True)
class NoWorse(Claim):
    """Non-inferiority: ``a``'s mean ``metric`` is no worse than ``(1 + margin)`` times
    ``b``'s, judged on paired seeds by the exact sign-flip test of ``a_s - (1 + margin)
    b_s`` (:data:`RULE_NONINFERIOR`): its interval below 0 reproduces, above 0 (``a``
    worse than ``b`` by more than the margin) does not."""

    a: str = ""
    b: str = ""
    margin: float = 0.1
    env: str | None = None
    metric: str = "regret"

    def __post_init__(self) -> None:
        check_real("NoWorse", "margin", self.margin, 0.0, 10.0, closed="left")

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        m = _METRICS[self.metric]
        for env in self._envs(ctx, self.env):
            miss = self._missing(ctx, env, (self.a, self.b))
            if miss:
                out.append(miss)
                continue
            c = ctx.paired(env, self.a, self.b, self.metric, scale_b=1 + self.margin)
            if c is None:
                out.append(self._verdict(env, INCONCLUSIVE, _NO_PAIR.format(m=m)))
                continue
            verdict, rule = decide_less(c, RULE_NONINFERIOR)
            ev = describe_pair(c, self.a, self.b, m, self.margin) + (
                f" (margin {self.margin:.0%} of {self.b})"
            )
            ev += _floor_note(ctx, env, self.metric, self.a, self.b)
            out.append(self._verdict(env, verdict, ev, rule, c.p))
        return out


@dataclass(frozen=True)
class LessAcross(Claim):
    """Agent ``a``'s ``metric`` on ``env_a`` is below its own on ``env_b`` (e.g. Park–Lee
    Table 1: every agent is slowest on 5D), paired by seed index (:func:`decide_less`)."""

    a: str = ""
    env_a: str = ""
    env_b: str = ""
    metric: str = "agent_time"

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        m = _METRICS[self.metric]
        for env in (self.env_a, self.env_b):
            miss = self._missing(ctx, env, (self.a,))
            if miss:
                return [miss]
        f = ctx.final
        sa = f[(f["env_id"] == self.env_a) & (f["agent"] == self.a)]["seed"].to_numpy()
        sb = f[(f["env_id"] == self.env_b) & (f["agent"] == self.a)]["seed"].to_numpy()
        xa = pd.Series(ctx.scores(self.env_a, self.a, self.metric), index=sa)
        xb = pd.Series(ctx.scores(self.env_b, self.a, self.metric), index=sb)
        common = xa.index.intersection(xb.index).sort_values()
        if len(common) == 0:
            return [self._verdict(self.env_a, INCONCLUSIVE, "no seed finished on both envs")]
        c = paired_comparison(xa.loc[common].to_numpy(), xb.loc[common].to_numpy())
        verdict, rule = decide_less(c)
        ev = describe_pair(c, f"{self.a} on {self.env_a}", f"on {self.env_b}", m)
        return [self._verdict(self.env_a, verdict, ev, rule, c.p)]


@dataclass(frozen=True)
class Lowest(Claim):
    """Agent ``a`` has lower mean ``metric`` than each other agent (or each in ``among``),
    each comparison on paired seeds (:func:`decide_less`): reproduces when every one
    does, does not when any one does not."""

    a: str = ""
    among: tuple[str, ...] | None = None
    env: str | None = None
    metric: str = "regret"

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        m = _METRICS[self.metric]
        for env in self._envs(ctx, self.env):
            others = [
                o
                for o in (self.among if self.among is not None else ctx.agents)
                if o != self.a and (self.among is not None or ctx.ran(env, o))
            ]
            miss = self._missing(ctx, env, (self.a, *others))
            if miss:
                out.append(miss)
                continue
            parts, results, rules, ps = [], [], set(), []
            for o in others:
                c = ctx.paired(env, self.a, o, self.metric)
                if c is None:
                    results.append(INCONCLUSIVE)
                    parts.append(f"{o}: no common seed")
                    continue
                r, rule = decide_less(c)
                results.append(r)
                rules.add(rule)
                ps.append((r, c.p))
                parts.append(f"vs {o} ({r}): " + describe_pair(c, self.a, o, m).partition(": ")[2])
            if not results:
                verdict = NOT_RUN
            elif all(r == REPRODUCES for r in results):
                verdict = REPRODUCES
            elif any(r == DOES_NOT for r in results):
                verdict = DOES_NOT
            else:
                verdict = INCONCLUSIVE
            # an intersection-union claim: "reproduces" needs every part, so its p is the
            # largest; "does not" needs any one part, so its p is the smallest times the
            # number of parts (Bonferroni within the claim)
            p = math.nan
            if verdict == REPRODUCES:
                p = max((q for _, q in ps), default=math.nan)
            elif verdict == DOES_NOT:
                p = min(1.0, min(q for r, q in ps if r == DOES_NOT) * len(ps))
            out.append(
                self._verdict(
                    env,
                    verdict,
                    f"{m}: " + "; ".join(parts),
                    "; ".join(sorted(rules)),
                    p,
                )
            )
        return out


@dataclass(frozen=True)
class Growth(Claim):
    """How ``R_t`` grows. Every kind is decided per seed by the exact sign-flip test at 5%
    (at least :data:`~hbo_envs.harness.stats.MIN_PAIRED_SEEDS` seeds), never by a point
    estimate:

    - ``kind="sublinear"`` (also the papers' "R_T/T decreasing"; :data:`RULE_GROWTH`): the
      per-round regret over ``[T/2, T]`` against that over ``[T/4, T/2]``
      (:func:`~hbo_envs.harness.stats.octave_rates`). Reproduces when it is decisively
      falling; does not when it is decisively above ``2**-0.1`` times the earlier one (the
      fall of a ``t^0.9`` curve): a curve that is linear over the last three quarters of
      the run, however it bent before, cannot pass. ``kind="linear"``: the complement (a
      decisively falling rate does not reproduce; one decisively above the ``t^0.9``
      fall does), so at most one of the two reproduces on any data.
    - ``kind="at_least"`` (a lower bound on the exponent; :data:`RULE_EXPONENT`): each
      seed's least-squares exponent of ``R_T`` over the horizons ``T`` (or of ``R_t`` over
      ``t ∈ [t_from·T, T]``); their mean's interval at or above ``threshold`` reproduces,
      below it does not. ``kind="equals"``: the interval inside ``threshold ± tol``
      reproduces, disjoint from it does not.

    Zero regret at every recorded round (a policy that knows the optimum) has no exponent:
    it beats every ``c·t^p``, so ``at_least``, ``equals`` and ``linear`` do not reproduce
    and ``sublinear`` does.
    """

    a: str = ""
    kind: str = "sublinear"
    env: str | None = None
    threshold: float = 0.9
    t_from: float = 0.1
    tol: float = 0.05

    def __post_init__(self) -> None:
        if self.kind not in ("linear", "sublinear", "at_least", "equals"):
            raise ValueError(
                "Growth kind must be 'linear', 'sublinear', 'at_least' or 'equals'; "
                f"got {self.kind!r}."
            )
        if not 0 < self.t_from < 1:
            raise ValueError(f"Growth t_from must be in (0, 1); got {self.t_from!r}.")

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        for env in self._envs(ctx, self.env):
            miss = self._missing(ctx, env, (self.a,))
            if miss:
                out.append(miss)
                continue
            t, Y = ctx.curves(env, self.a)
            keep = t >= self.t_from * t.max() if t.size else t.astype(bool)
            if np.count_nonzero(keep) < 3:
                out.append(self._verdict(env, INCONCLUSIVE, "fewer than 3 recorded rounds"))
                continue
            rule = RULE_GROWTH if self.kind in ("linear", "sublinear") else RULE_EXPONENT
            span = f"[{t[keep].min():.0f}, {t.max():.0f}]"
            n = Y.shape[0]
            if np.all(Y[:, keep].mean(axis=0) <= 0):
                verdict = REPRODUCES if self.kind == "sublinear" else DOES_NOT
                ev = f"R = 0 at every recorded round of {span}: no growth at all (n = {n})"
                out.append(self._verdict(env, verdict, ev, rule))
                continue
            if self.kind in ("linear", "sublinear"):
                out.append(self._octaves(env, t, Y, rule))
            else:
                out.append(self._exponent(env, t[keep], Y[:, keep], span, rule))
        return out

    def _octaves(self, env: str, t: np.ndarray, Y: np.ndarray, rule: str) -> Verdict:
        n = Y.shape[0]
        early, late = octave_rates(t, Y)
        fall = sign_flip(_ties(late - early, early, late))
        edge = sign_flip(_ties(late - SUBLINEAR_RATIO * early, early, late))
        ev = (
            f"per-round regret {_fmt(float(early.mean()))} over [T/4, T/2], "
            f"{_fmt(float(late.mean()))} over [T/2, T] (T = {t.max():.0f}); change "
            f"{_fmt(fall.mean)} [{_fmt(fall.lo)}, {_fmt(fall.hi)}] (p = {fall.p:.2g}); vs "
            f"{SUBLINEAR_RATIO:.3f} x early: [{_fmt(edge.lo)}, {_fmt(edge.hi)}] "
            f"(p = {edge.p:.2g}) (n = {n})"
        )
        if n < MIN_PAIRED_SEEDS:
            return self._verdict(env, INCONCLUSIVE, ev, RULE_TOO_FEW)
        falling, not_sub = fall.hi < 0, edge.lo > 0
        if self.kind == "sublinear":
            if falling:
                return self._verdict(env, REPRODUCES, ev, rule, fall.p)
            if not_sub:
                return self._verdict(env, DOES_NOT, ev, rule, edge.p)
        else:  # the complement: a decisively falling rate is sublinear, never linear
            if falling:
                return self._verdict(env, DOES_NOT, ev, rule, fall.p)
            if not_sub:
                return self._verdict(env, REPRODUCES, ev, rule, edge.p)
        return self._verdict(env, INCONCLUSIVE, ev, rule)

    def _exponent(self, env: str, t: np.ndarray, Y: np.ndarray, span: str, rule: str) -> Verdict:
        what = "R_T over T" if self.kind in ("at_least", "equals") else "R_t over t"
        slopes = per_seed_exponents(t, Y)
        slopes = slopes[np.isfinite(slopes)]
        n = slopes.size
        target = (
            f"{self.threshold:g} ± {self.tol:g}" if self.kind == "equals" else f"{self.threshold:g}"
        )
        if n == 0:
            return self._verdict(env, INCONCLUSIVE, f"no seed has two positive points in {span}")
        r = sign_flip(_ties(slopes - self.threshold, slopes))
        lo, hi = r.lo + self.threshold, r.hi + self.threshold
        ev = (
            f"mean per-seed exponent of {what} in {span}: {slopes.mean():.3f} "
            f"[{lo:.3f}, {hi:.3f}] vs {target} (n = {n})"
        )
        if n < MIN_PAIRED_SEEDS:
            return self._verdict(env, INCONCLUSIVE, ev, RULE_TOO_FEW)
        if self.kind == "equals":
            a, b = self.threshold - self.tol, self.threshold + self.tol
            if a <= lo and hi <= b:
                # both one-sided tests against the band's edges at 2.5%: the larger p
                pe = max(sign_flip(slopes - a).p, sign_flip(slopes - b).p)
                return self._verdict(env, REPRODUCES, ev, rule, pe)
            if hi < a or lo > b:
                pe = sign_flip(slopes - (a if hi < a else b)).p
                return self._verdict(env, DOES_NOT, ev, rule, pe)
            return self._verdict(env, INCONCLUSIVE, ev, rule)
        if lo >= self.threshold:
            return self._verdict(env, REPRODUCES, ev, rule, r.p)
        if hi < self.threshold:
            return self._verdict(env, DOES_NOT, ev, rule, r.p)
        return self._verdict(env, INCONCLUSIVE, ev, rule)


def _ties(d: np.ndarray, *scale: np.ndarray) -> np.ndarray:
    """``d`` with the differences that are zero up to rounding (``|d| <= 1e-9`` of the
    numbers it was computed from) set to exactly 0: an exact tie is no evidence either
    way, and rounding must not turn one into a run of equal signs."""
    ref = np.max(np.abs(np.vstack(scale)), axis=0) if scale else np.abs(d)
    return np.where(np.abs(d) <= 1e-9 * ref, 0.0, d)


@dataclass(frozen=True)
class Runs(Claim):
    """A property of single runs holds in most runs: the share of seeds for which
    ``holds(final row, curve)`` is true, judged by its Clopper–Pearson 95% interval
    against 1/2 (:data:`RULE_RUNS`; exact for any law): above reproduces, below does not.

    ``what="contains"``: the agent's final confidence band contains f at every coverage
    point (``coverage_T = 1``); ``"misses"``: it misses f somewhere (``coverage_T < 1``);
    ``"late_regret_at_least"``: the per-round regret over ``[T/2, T]`` is at least
    ``level`` (the agent samples away from the optimum late in the run). ``band`` says
    which band "contains"/"misses" read: ``"miss"`` the agent's own ``mu_T +- width_T``,
    ``"miss_sigma"`` ``mu_T +- sigma_T``.
    """

    a: str = ""
    what: str = "contains"
    env: str | None = None
    level: float = 0.0
    band: str = "miss"

    def __post_init__(self) -> None:
        if self.what not in ("contains", "misses", "late_regret_at_least"):
            raise ValueError(
                "Runs what must be 'contains', 'misses' or 'late_regret_at_least'; got "
                f"{self.what!r}."
            )
        if self.band not in ("miss", "miss_sigma"):
            raise ValueError(f"Runs band must be 'miss' or 'miss_sigma'; got {self.band!r}.")

    def _holds(self, ctx: ClaimContext, env: str) -> tuple[np.ndarray, str]:
        if self.what == "late_regret_at_least":
            t, Y = ctx.curves(env, self.a)
            _, late = octave_rates(t, Y)
            return (
                late >= self.level,
                f"per-round regret over [T/2, T] >= {self.level:g}",
            )
        miss = ctx.scores(env, self.a, self.band)
        miss = miss[np.isfinite(miss)]  # NaN: the band was not recorded in that run
        band = "final band" if self.band == "miss" else "final band mu_T +- sigma_T"
        if self.what == "contains":
            return miss == 0, f"{band} contains f at every point"
        return miss > 0, f"{band} misses f at some point"

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        for env in self._envs(ctx, self.env):
            miss = self._missing(ctx, env, (self.a,))
            if miss:
                out.append(miss)
                continue
            ok, desc = self._holds(ctx, env)
            if ok.size == 0:
                out.append(self._verdict(env, INCONCLUSIVE, f"{self.a}: no run recorded this band"))
                continue
            n, k = int(ok.size), int(np.count_nonzero(ok))
            lo, hi = clopper_pearson(k, n)
            ev = f"{self.a}: {desc} in {k} of {n} runs (share in [{lo:.3f}, {hi:.3f}])"
            p = float(binomtest(k, n, 0.5).pvalue)
            if lo > 0.5:
                out.append(self._verdict(env, REPRODUCES, ev, RULE_RUNS, p))
            elif hi < 0.5:
                out.append(self._verdict(env, DOES_NOT, ev, RULE_RUNS, p))
            else:
                out.append(self._verdict(env, INCONCLUSIVE, ev, RULE_RUNS))
        return out


def less(
    a: str,
    b: str,
    *,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
    family: str = PAPER,
    caveat: str = "",
) -> Less:
    """Claim: ``a`` has lower mean ``metric`` than ``b``."""
    _check_metric(metric)
    return Less(
        text or f"{a} below {b} ({_METRICS[metric]})",
        source,
        a,
        b,
        env,
        metric,
        family=family,
        caveat=caveat,
    )


def no_worse(
    a: str,
    b: str,
    *,
    margin: float = 0.1,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
    caveat: str = "",
) -> NoWorse:
    """Claim: ``a``'s mean ``metric`` is no worse than ``b``'s by more than ``margin``
    (a share of ``b``'s; non-inferiority, :class:`NoWorse`)."""
    _check_metric(metric)
    return NoWorse(
        text or f"{a} no worse than {b} ({_METRICS[metric]}, margin {margin:.0%})",
        source,
        a,
        b,
        margin,
        env,
        metric,
        caveat=caveat,
    )


def in_most_runs(
    a: str,
    what: str,
    *,
    env: str | None = None,
    level: float = 0.0,
    text: str = "",
    source: str = "",
    caveat: str = "",
    band: str = "miss",
) -> Runs:
    """Claim: a property of single runs of ``a`` holds in most runs (:class:`Runs`)."""
    return Runs(
        text or f"{a}: {what} in most runs", source, a, what, env, level, band, caveat=caveat
    )


def below_random(
    a: str,
    *,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
) -> Less:
    """Suite check: ``a`` has lower mean ``metric`` than uniform play (the ``random``
    agent). Not a claim of any paper: counted apart from the paper claims."""
    return less(a, "random", env=env, metric=metric, text=text, source=source, family=SUITE)


def attack_predicts_floor_failure(
    a: str, env: str, *, source: str = "", metric: str = "regret"
) -> Less:
    """Suite check on an attacked env, stated as the attack predicts it: the attack pulls
    ``a`` off the optimum, so uniform play is below ``a`` (reproduces when ``random``'s
    ``metric`` is decisively below ``a``'s; does not when ``a`` still beats uniform play)."""
    return less(
        "random",
        a,
        env=env,
        metric=metric,
        text=f"the attack predicts failure: uniform play below {a}",
        source=source,
        family=SUITE,
    )


def lowest(
    a: str,
    *,
    among: Sequence[str] | None = None,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
) -> Lowest:
    """Claim: ``a`` is below each other agent that ran (or each agent in ``among``)."""
    _check_metric(metric)
    group = tuple(among) if among is not None else None
    who = "every other agent" if group is None else ", ".join(group)
    return Lowest(
        text or f"{a} lowest {_METRICS[metric]} (below {who})",
        source,
        a,
        group,
        env,
        metric,
    )


def linear(
    a: str,
    *,
    env: str | None = None,
    text: str | None = None,
    source: str = "",
    caveat: str = "",
) -> Growth:
    """Claim: ``R_t`` of ``a`` grows linearly: its per-round regret does not fall over the
    last octaves of the run (:class:`Growth`, one rule and no threshold for every
    experiment)."""
    return Growth(text or f"{a}: R_t grows linearly", source, a, "linear", env, caveat=caveat)


def sublinear(
    a: str,
    *,
    env: str | None = None,
    text: str | None = None,
    source: str = "",
    caveat: str = "",
) -> Growth:
    """Claim: ``R_t`` of ``a`` grows sublinearly ("R_T/T decreasing"): its per-round
    regret is still falling over the last octaves of the run (:class:`Growth`, one rule
    and no threshold for every experiment)."""
    return Growth(
        text or f"{a}: R_t grows sublinearly",
        source,
        a,
        "sublinear",
        env,
        caveat=caveat,
    )


def exponent_at_least(
    a: str,
    bound: float,
    *,
    env: str | None = None,
    t_from: float = 0.01,
    text: str | None = None,
    source: str = "",
) -> Growth:
    """Claim: the growth exponent of ``a``'s regret is ``>= bound`` (within its 95% CI)."""
    return Growth(
        text or f"{a}: regret exponent >= {bound:.4g}",
        source,
        a,
        "at_least",
        env,
        bound,
        t_from,
    )


def exponent_equals(
    a: str,
    value: float,
    *,
    tol: float = 0.05,
    env: str | None = None,
    t_from: float = 0.01,
    text: str | None = None,
    source: str = "",
) -> Growth:
    """Claim: the growth exponent of ``a``'s regret is ``value`` within ``±tol`` (the CI
    inside the band: reproduces; disjoint from it: does not)."""
    return Growth(
        text or f"{a}: regret exponent = {value:.4g} ± {tol:g}",
        source,
        a,
        "equals",
        env,
        value,
        t_from,
        tol,
        family=SUITE,
    )


def _check_metric(metric: str) -> None:
    if metric not in _METRICS:
        raise ValueError(
            f"The 'metric' parameter of a claim must be one of {sorted(_METRICS)}. "
            f"Got {metric!r} instead."
        )


def evaluate_claims(
    claims: Iterable[Claim],
    records: pd.DataFrame,
    envs: Sequence[str] | None = None,
    summary: pd.DataFrame | None = None,
) -> list[Verdict]:
    """Every claim's verdicts (one per env it concerns), in the claims' order."""
    ctx = ClaimContext(records, envs, summary)
    out: list[Verdict] = []
    for c in claims:
        out += c.evaluate(ctx)
    return holm_family(out)


def holm_family(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """``verdicts`` with :attr:`Verdict.p_holm` set: Holm's adjustment over the family of
    the decided verdicts of each kind (the paper claims of one experiment, its suite
    checks). The verdicts stay those of each claim's own 5% test (each paper claim is its
    own statement); the pages give the family's size and mark the decided verdicts that
    do not survive the adjustment, so a reader can see what chance alone could explain."""
    vs = list(verdicts)
    for fam in (PAPER, SUITE):
        idx = [
            i
            for i, v in enumerate(vs)
            if v.family == fam and v.verdict in (REPRODUCES, DOES_NOT) and math.isfinite(v.p)
        ]
        adj = holm([vs[i].p for i in idx])
        for i, q in zip(idx, adj, strict=True):
            vs[i] = replace(vs[i], p_holm=float(q))
    return vs


def survives_holm(v: Verdict) -> bool | None:
    """Whether a decided verdict survives Holm's adjustment in its family (None when the
    verdict is not a decision of a level-5% test: deterministic, inconclusive, ...)."""
    return None if math.isnan(v.p_holm) else bool(v.p_holm <= ALPHA)


def verdict_records(verdicts: Iterable[Verdict]) -> list[dict[str, str]]:
    """JSON-ready list of verdicts (what ``summary.json`` stores)."""
    return [v.as_dict() for v in verdicts]


def format_verdicts(verdicts: Sequence[Verdict]) -> str:
    """A plain-text verdict table: verdict, env, claim, and the numbers behind it."""
    if not verdicts:
        return "(no claims stated for this experiment)"
    w = max(len(v.verdict) for v in verdicts)
    lines = []
    for v in verdicts:
        where = f" [{v.env}]" if v.env else ""
        lines.append(f"  {v.verdict:<{w}}  {v.claim}{where}")
        holm_note = ""
        if survives_holm(v) is not None:
            holm_note = f" [Holm-adjusted p = {v.p_holm:.2g}]"
        caveat = f" [caveat: {v.caveat}]" if v.caveat else ""
        lines.append(
            f"  {'':<{w}}    {v.evidence}"
            + (f" [rule: {v.rule}]" if v.rule else "")
            + holm_note
            + caveat
        )
    tallies = []
    for fam, label in ((PAPER, "paper claims"), (SUITE, "suite checks")):
        counts = {k: sum(v.verdict == k and v.family == fam for v in verdicts) for k in _ORDER}
        if any(counts.values()):
            tallies.append(label + ": " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    return "\n".join(lines + [f"  ({'; '.join(tallies)})"])


_ORDER = (REPRODUCES, DOES_NOT, INCONCLUSIVE, NOT_RUN)
