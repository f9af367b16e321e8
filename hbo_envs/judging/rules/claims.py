"""A paper's claims as data, and their measured verdicts.

An :class:`~hbo_envs.judging.experiments.Experiment` lists what the paper claims
(``claims=(...)``); ``hbo-bench reproduce`` evaluates every claim on the measured records
and prints one verdict per claim and env, never a claim without its verdict:

- ``reproduces`` — the measurement says what the paper says, decisively (the rule below);
- ``does not reproduce`` — the measurement says the opposite, decisively;
- ``inconclusive`` — the seeds run cannot tell;
- ``not run`` — an agent or env the claim needs did not run (e.g. not available yet).

Every verdict names the rule that decided it (:attr:`Verdict.rule`):

- :data:`RULE_PAIRED` — two agents are compared on *paired seeds* (seed ``s`` is the same
  f and the same noise for both): the per-seed differences ``d_s`` of the final score
  (``R_T``, ``R_T / T``, agent seconds, ...), their mean (the effect size, also given
  relative to the second agent) and its 95% paired-bootstrap CI
  (:func:`~hbo_envs.harness.stats.paired_comparison`; 2000 replicates, fixed seed); the
  claim ``a < b`` reproduces when the CI lies below 0, does not when it lies above 0. The
  Wilcoxon signed-rank p-value of ``d`` is printed beside it.
- :data:`RULE_DETERMINISTIC` — every seed gave the same numbers for both agents (a
  deterministic env such as StockPicking): the comparison is one run, stated as such.
- :data:`RULE_ONE_SEED` — a single stochastic seed: inconclusive (no interval exists).
- :data:`RULE_EXPONENT` — growth claims: the 95% bootstrap CI of the fitted exponent,
  never its point estimate, decides.

Agents are named by their label in the experiment.

Constructors:

- :func:`less` — ``a`` has lower mean regret than ``b``; :func:`below_random` is
  ``less(a, "random")``.
- :func:`lowest` — ``a`` below each other agent (or each agent in ``among``).
- :func:`linear` / :func:`sublinear` — the growth exponent of ``R_t``, fitted on each run's
  curve over ``t ∈ [t_from·T, T]`` (:func:`~hbo_envs.harness.stats.fit_exponent`: log-log
  least squares of the mean curve, bootstrap CI over seeds), has its CI above / below
  ``threshold`` (0.9 by default).
- :func:`exponent_at_least` — the growth exponent is not below a theoretical lower bound:
  reproduces when the whole CI lies at or above the bound, does not when the whole CI lies
  below it (a policy beating the bound: e.g. one that reads the hidden optimum, whose
  ``R_T = 0`` at every ``T``), inconclusive when the CI straddles it. On the records of an
  exponent experiment (one row per seed and horizon, ``t = T``, ``regret = R_T``;
  :mod:`hbo_envs.judging.rules.exponent`) this is the exponent of ``R_T`` over ``T``.
- :func:`exponent_equals` — the exponent equals a value within ``±tol`` (an equivalence
  test: the CI inside the band reproduces, a CI disjoint from it does not), e.g. the
  lower-bound instance's own scale: uniform play's ``R_T`` grows as the theorem's rate.

A claim the constructors cannot say subclasses :class:`Claim` and implements
:meth:`Claim.evaluate` (a :class:`ClaimContext` gives the records and the summary).

>>> import pandas as pd
>>> rec = pd.DataFrame({
...     "env_id": ["e"] * 6, "agent": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2,
...     "t": [10] * 6, "regret": [1.0, 1.1, 0.9, 5.0, 5.2, 4.8],
... })
>>> [v.verdict for v in evaluate_claims([less("a", "b")], rec)]
['reproduces']
>>> evaluate_claims([less("a", "b")], rec)[0].rule
'paired bootstrap 95% CI of the mean per-seed difference'
>>> [v.verdict for v in evaluate_claims([less("b", "a")], rec)]
['does not reproduce']
>>> [v.verdict for v in evaluate_claims([below_random("a")], rec)]
['not run']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hbo_envs.harness.records import unique_rounds
from hbo_envs.harness.stats import (
    PairedComparison,
    fit_exponent,
    paired_comparison,
    stratified_bootstrap_ci,
)
from hbo_envs.harness.summary import final_rows
from hbo_envs.judging.rules.known_failures import known_failure

__all__ = [
    "DOES_NOT",
    "INCONCLUSIVE",
    "NOT_RUN",
    "REPRODUCES",
    "Claim",
    "ClaimContext",
    "Growth",
    "Less",
    "Lowest",
    "Verdict",
    "below_random",
    "evaluate_claims",
    "exponent_at_least",
    "exponent_equals",
    "format_verdicts",
    "less",
    "linear",
    "lowest",
    "sublinear",
    "verdict_records",
]

REPRODUCES = "reproduces"
DOES_NOT = "does not reproduce"
INCONCLUSIVE = "inconclusive"
NOT_RUN = "not run"
RULE_PAIRED = "paired bootstrap 95% CI of the mean per-seed difference"
RULE_DETERMINISTIC = "deterministic: one run (every seed gave the same numbers)"
RULE_ONE_SEED = "one seed: no interval"
RULE_EXPONENT = "95% bootstrap CI of the fitted exponent"
RULE_VALUE = "published value inside the widened 95% bootstrap CI"
RULE_RATIO = "paired bootstrap 95% CI of the ratio of means"
_METRICS = {
    "regret": "R_T",
    "avg_regret": "R_T/T",
    "agent_time": "seconds in the agent",
    # 1 - coverage_T: the share of the coverage points where f lies outside the agent's band
    # mu_T +- width_T at the last round (Chowdhury–Gopalan Fig. 1f's confidence sets).
    "miss": "1 - coverage_T",
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

    def as_dict(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "env": self.env,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "source": self.source,
            "rule": self.rule,
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

    def ran(self, env: str, agent: str) -> bool:
        f = self.final
        return bool(len(f) and ((f["env_id"] == env) & (f["agent"] == agent)).any())

    def scores(self, env: str, agent: str, metric: str = "regret") -> np.ndarray:
        """Per-seed final ``R_T`` (``metric="regret"``), ``R_T / T`` (``"avg_regret"``),
        seconds spent in the agent over the run (``"agent_time"``) or ``1 - coverage_T``
        (``"miss"``, the share of points whose f the final confidence band misses)."""
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {sorted(_METRICS)}; got {metric!r}.")
        g = self.final[(self.final["env_id"] == env) & (self.final["agent"] == agent)]
        if metric == "agent_time":
            return g["agent_time"].to_numpy(dtype=float)
        if metric == "miss":
            return 1.0 - g["coverage"].to_numpy(dtype=float)
        R = g["regret"].to_numpy(dtype=float)
        return R / g["t"].to_numpy(dtype=float) if metric == "avg_regret" else R

    def estimate(self, env: str, agent: str, metric: str = "regret") -> Estimate:
        x = self.scores(env, agent, metric)
        if x.size == 0:
            return Estimate(math.nan, math.nan, math.nan, 0)
        lo, hi = stratified_bootstrap_ci(x)
        return Estimate(float(x.mean()), lo, hi, int(x.size))

    def paired(self, env: str, a: str, b: str, metric: str = "regret") -> PairedComparison | None:
        """``a`` vs ``b`` on the seeds both finished (None when there is none)."""
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {sorted(_METRICS)}; got {metric!r}.")
        f = self.final[self.final["env_id"] == env]
        sa = pd.Series(self.scores(env, a, metric), index=f[f["agent"] == a]["seed"].to_numpy())
        sb = pd.Series(self.scores(env, b, metric), index=f[f["agent"] == b]["seed"].to_numpy())
        common = sa.index.intersection(sb.index).sort_values()
        if len(common) == 0:
            return None
        return paired_comparison(sa.loc[common].to_numpy(), sb.loc[common].to_numpy())

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

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        raise NotImplementedError

    def _verdict(self, env: str, verdict: str, evidence: str, rule: str = "") -> Verdict:
        return Verdict(self.text, env, verdict, evidence, self.source, rule)

    def _envs(self, ctx: ClaimContext, env: str | None) -> tuple[str, ...]:
        return ctx.envs if env is None else (env,)

    def _missing(self, ctx: ClaimContext, env: str, labels: Iterable[str]) -> Verdict | None:
        missing = [a for a in labels if not ctx.ran(env, a)]
        if missing:
            return self._verdict(env, NOT_RUN, "no finished runs of " + ", ".join(missing))
        return None


def decide_less(c: PairedComparison) -> tuple[str, str]:
    """``(verdict, rule)`` of the claim "a below b" on a paired comparison (module doc)."""
    if c.deterministic:
        return (REPRODUCES if c.diff < 0 else DOES_NOT), RULE_DETERMINISTIC
    if c.n == 1:
        return INCONCLUSIVE, RULE_ONE_SEED
    if c.hi < 0:
        return REPRODUCES, RULE_PAIRED
    if c.lo > 0:
        return DOES_NOT, RULE_PAIRED
    return INCONCLUSIVE, RULE_PAIRED


def describe_pair(c: PairedComparison, a: str, b: str, m: str) -> str:
    """The evidence line of a paired comparison."""
    if c.deterministic:
        return f"{m}: {a} {_fmt(c.mean_a)} vs {b} {_fmt(c.mean_b)} (one run: {c.n} identical seeds)"
    rel = f", {c.rel:+.0%} of {b}" if math.isfinite(c.rel) else ""
    p = f", Wilcoxon p = {c.wilcoxon_p:.2g}" if math.isfinite(c.wilcoxon_p) else ""
    return (
        f"{m}: {a} {_fmt(c.mean_a)} vs {b} {_fmt(c.mean_b)}; paired difference "
        f"{_fmt(c.diff)} [{_fmt(c.lo)}, {_fmt(c.hi)}]{rel}{p} (n = {c.n} paired seeds)"
    )


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
                out.append(self._verdict(env, INCONCLUSIVE, "no seed finished by both agents"))
                continue
            verdict, rule = decide_less(c)
            evidence = describe_pair(c, self.a, self.b, m)
            if self.b == "random" and verdict != REPRODUCES:  # say why, or that nobody knows
                key = known_failure(self.a, env)
                evidence += (
                    f"; known failure, mechanism '{key}' (docs/known-failures.md)"
                    if key
                    else "; unexplained floor failure (docs/known-failures.md)"
                )
            out.append(self._verdict(env, verdict, evidence, rule))
        return out


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
            parts, results, rules = [], [], set()
            for o in others:
                c = ctx.paired(env, self.a, o, self.metric)
                if c is None:
                    results.append(INCONCLUSIVE)
                    parts.append(f"{o}: no common seed")
                    continue
                r, rule = decide_less(c)
                results.append(r)
                rules.add(rule)
                parts.append(f"vs {o} ({r}): " + describe_pair(c, self.a, o, m).partition(": ")[2])
            if not results:
                verdict = NOT_RUN
            elif all(r == REPRODUCES for r in results):
                verdict = REPRODUCES
            elif any(r == DOES_NOT for r in results):
                verdict = DOES_NOT
            else:
                verdict = INCONCLUSIVE
            out.append(
                self._verdict(env, verdict, f"{m}: " + "; ".join(parts), "; ".join(sorted(rules)))
            )
        return out


@dataclass(frozen=True)
class Growth(Claim):
    """The growth exponent of ``R_t`` over ``t ∈ [t_from·T, T]`` vs ``threshold``; its 95%
    bootstrap CI decides (:data:`RULE_EXPONENT`), never the point estimate.

    ``kind="linear"``: reproduces when the CI lies above ``threshold``, does not when it
    lies below. ``kind="sublinear"``: the other way round. ``kind="at_least"`` (a lower
    bound on the exponent): reproduces when the CI lies at or above ``threshold``, does not
    when it lies below, inconclusive when it straddles it. ``kind="equals"``: reproduces
    when the CI lies inside ``threshold ± tol``, does not when it is disjoint from that
    band. Zero regret at every recorded round (a policy that knows the optimum) has no
    exponent: it beats every ``c·t^p``, so ``at_least``, ``equals`` and ``linear`` do not
    reproduce and ``sublinear`` does.
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
            what = "R_T over T" if self.kind in ("at_least", "equals") else "R_t over t"
            span = f"[{t[keep].min():.0f}, {t.max():.0f}]"
            if np.all(Y[:, keep].mean(axis=0) <= 0):
                verdict = REPRODUCES if self.kind == "sublinear" else DOES_NOT
                ev = (
                    f"R = 0 at every recorded round of {span}: no growth at all, below "
                    f"c·t^{self.threshold:g} for every c > 0 (n = {Y.shape[0]})"
                )
                out.append(self._verdict(env, verdict, ev, RULE_EXPONENT))
                continue
            p, lo, hi = fit_exponent(t[keep], Y[:, keep])
            target = (
                f"{self.threshold:g} ± {self.tol:g}"
                if self.kind == "equals"
                else f"{self.threshold:g}"
            )
            ev = (
                f"exponent of {what} in {span}: {p:.3f} [{lo:.3f}, {hi:.3f}] vs {target} "
                f"(n = {Y.shape[0]})"
            )
            if not (math.isfinite(p) and math.isfinite(lo) and math.isfinite(hi)):
                verdict = INCONCLUSIVE
            elif self.kind == "equals":
                a, b = self.threshold - self.tol, self.threshold + self.tol
                verdict = (
                    REPRODUCES
                    if a <= lo and hi <= b
                    else DOES_NOT
                    if hi < a or lo > b
                    else INCONCLUSIVE
                )
            elif self.kind == "at_least":
                verdict = (
                    REPRODUCES
                    if lo >= self.threshold
                    else DOES_NOT
                    if hi < self.threshold
                    else INCONCLUSIVE
                )
            elif lo > self.threshold:
                verdict = REPRODUCES if self.kind == "linear" else DOES_NOT
            elif hi < self.threshold:
                verdict = REPRODUCES if self.kind == "sublinear" else DOES_NOT
            else:
                verdict = INCONCLUSIVE
            out.append(self._verdict(env, verdict, ev, RULE_EXPONENT))
        return out


def less(
    a: str,
    b: str,
    *,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
) -> Less:
    """Claim: ``a`` has lower mean ``metric`` than ``b``."""
    _check_metric(metric)
    return Less(text or f"{a} below {b} ({_METRICS[metric]})", source, a, b, env, metric)


def below_random(
    a: str,
    *,
    env: str | None = None,
    metric: str = "regret",
    text: str | None = None,
    source: str = "",
) -> Less:
    """Claim: ``a`` has lower mean ``metric`` than uniform play (the ``random`` agent)."""
    return less(a, "random", env=env, metric=metric, text=text, source=source)


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
        text or f"{a} lowest {_METRICS[metric]} (below {who})", source, a, group, env, metric
    )


def linear(
    a: str,
    *,
    env: str | None = None,
    threshold: float = 0.9,
    t_from: float = 0.1,
    text: str | None = None,
    source: str = "",
) -> Growth:
    """Claim: ``R_t`` of ``a`` grows linearly (exponent CI above ``threshold``)."""
    return Growth(text or f"{a}: R_t grows linearly", source, a, "linear", env, threshold, t_from)


def sublinear(
    a: str,
    *,
    env: str | None = None,
    threshold: float = 0.9,
    t_from: float = 0.1,
    text: str | None = None,
    source: str = "",
) -> Growth:
    """Claim: ``R_t`` of ``a`` grows sublinearly (exponent CI below ``threshold``)."""
    return Growth(
        text or f"{a}: R_t grows sublinearly", source, a, "sublinear", env, threshold, t_from
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
        text or f"{a}: regret exponent >= {bound:.4g}", source, a, "at_least", env, bound, t_from
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
    return out


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
        lines.append(f"  {'':<{w}}    {v.evidence}" + (f" [rule: {v.rule}]" if v.rule else ""))
    counts = {k: sum(v.verdict == k for v in verdicts) for k in _ORDER}
    tally = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return "\n".join(lines + [f"  ({tally})"])


_ORDER = (REPRODUCES, DOES_NOT, INCONCLUSIVE, NOT_RUN)
