"""A paper's claims as data, and their measured verdicts.

An :class:`~hbo_envs.harness.experiments.Experiment` lists what the paper claims
(``claims=(...)``); ``hbo-bench reproduce`` evaluates every claim on the measured records
and prints one verdict per claim and env, never a claim without its verdict:

- ``reproduces`` — the measurement says what the paper says, with 95% bootstrap CIs apart;
- ``does not reproduce`` — the measurement says the opposite, with CIs apart;
- ``inconclusive (CIs overlap)`` — the seeds run cannot tell;
- ``not run`` — an agent or env the claim needs did not run (e.g. not available yet).

Comparisons use the same statistics as the summary table: the mean over seeds of the final
cumulative regret ``R_T`` (``metric="regret"``) or of ``R_T / T`` (``metric="avg_regret"``)
and its 95% stratified-bootstrap CI (:func:`~hbo_envs.harness.stats.stratified_bootstrap_ci`,
2000 replicates, fixed seed). Agents are named by their label in the experiment.

Constructors:

- :func:`less` — ``a`` has lower mean regret than ``b``; :func:`below_random` is
  ``less(a, "random")``.
- :func:`lowest` — ``a`` below each other agent (or each agent in ``among``).
- :func:`linear` / :func:`sublinear` — the growth exponent of ``R_t``, fitted on each run's
  curve over ``t ∈ [t_from·T, T]`` (:func:`~hbo_envs.harness.stats.fit_exponent`: log-log
  least squares of the mean curve, bootstrap CI over seeds), has its CI above / below
  ``threshold`` (0.9 by default).
- :func:`exponent_at_least` — the growth exponent is not below a theoretical lower bound:
  reproduces when the bound is below the CI's upper end (the exponent is ``>=`` the bound
  within its interval), does not when the whole CI lies below it. On the records of an
  exponent experiment (one row per seed and horizon, ``t = T``, ``regret = R_T``;
  :mod:`hbo_envs.harness.exponent`) this is the exponent of ``R_T`` over ``T``.

A claim the constructors cannot say subclasses :class:`Claim` and implements
:meth:`Claim.evaluate` (a :class:`ClaimContext` gives the records and the summary).

>>> import pandas as pd
>>> rec = pd.DataFrame({
...     "env_id": ["e"] * 6, "agent": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2,
...     "t": [10] * 6, "regret": [1.0, 1.1, 0.9, 5.0, 5.2, 4.8],
... })
>>> [v.verdict for v in evaluate_claims([less("a", "b")], rec)]
['reproduces']
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

from hbo_envs.harness.known_failures import known_failure
from hbo_envs.harness.stats import fit_exponent, stratified_bootstrap_ci

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
    "format_verdicts",
    "less",
    "linear",
    "lowest",
    "sublinear",
    "verdict_records",
]

REPRODUCES = "reproduces"
DOES_NOT = "does not reproduce"
INCONCLUSIVE = "inconclusive (CIs overlap)"
NOT_RUN = "not run"
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

    def as_dict(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "env": self.env,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "source": self.source,
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
        self.records = records
        if records.empty:
            self.final = records
        else:
            idx = records.groupby(["env_id", "agent", "seed"], sort=True)["t"].idxmax()
            self.final = records.loc[idx.to_numpy()].reset_index(drop=True)
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

    def _verdict(self, env: str, verdict: str, evidence: str) -> Verdict:
        return Verdict(self.text, env, verdict, evidence, self.source)

    def _envs(self, ctx: ClaimContext, env: str | None) -> tuple[str, ...]:
        return ctx.envs if env is None else (env,)

    def _missing(self, ctx: ClaimContext, env: str, labels: Iterable[str]) -> Verdict | None:
        missing = [a for a in labels if not ctx.ran(env, a)]
        if missing:
            return self._verdict(env, NOT_RUN, "no finished runs of " + ", ".join(missing))
        return None


def _compare(a: Estimate, b: Estimate) -> str:
    """REPRODUCES if ``a < b`` with CIs apart, DOES_NOT if ``b < a`` apart, else overlap."""
    if a.hi < b.lo:
        return REPRODUCES
    if b.hi < a.lo:
        return DOES_NOT
    return INCONCLUSIVE


@dataclass(frozen=True)
class Less(Claim):
    """Agent ``a`` has lower mean ``metric`` than agent ``b`` (on ``env``, or on each)."""

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
            ea, eb = ctx.estimate(env, self.a, self.metric), ctx.estimate(env, self.b, self.metric)
            evidence = f"{m}: {self.a} {ea} vs {self.b} {eb} (n = {ea.n})"
            known = known_failure(self.a, env) if self.b == "random" else None
            if known is not None:  # the verdict line says the pair is a listed failure
                evidence += f"; {known}"
            out.append(self._verdict(env, _compare(ea, eb), evidence))
        return out


@dataclass(frozen=True)
class Lowest(Claim):
    """Agent ``a`` has lower mean ``metric`` than each other agent (or each in ``among``)."""

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
            ea = ctx.estimate(env, self.a, self.metric)
            parts, results = [], []
            for o in others:
                eo = ctx.estimate(env, o, self.metric)
                results.append(_compare(ea, eo))
                parts.append(f"{o} {eo}")
            if not results:
                verdict = NOT_RUN
            elif all(r == REPRODUCES for r in results):
                verdict = REPRODUCES
            elif any(r == DOES_NOT for r in results):
                verdict = DOES_NOT
            else:
                verdict = INCONCLUSIVE
            out.append(self._verdict(env, verdict, f"{m}: {self.a} {ea} vs " + "; ".join(parts)))
        return out


@dataclass(frozen=True)
class Growth(Claim):
    """The growth exponent of ``R_t`` over ``t ∈ [t_from·T, T]`` vs ``threshold``.

    ``kind="linear"``: reproduces when the exponent's 95% CI lies above ``threshold``, does
    not when it lies below. ``kind="sublinear"``: the other way round. ``kind="at_least"``
    (a lower bound on the exponent): reproduces when the CI reaches ``threshold`` or lies
    above it, does not when it lies below.
    """

    a: str = ""
    kind: str = "sublinear"
    env: str | None = None
    threshold: float = 0.9
    t_from: float = 0.1

    def __post_init__(self) -> None:
        if self.kind not in ("linear", "sublinear", "at_least"):
            raise ValueError(
                f"Growth kind must be 'linear', 'sublinear' or 'at_least'; got {self.kind!r}."
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
            p, lo, hi = fit_exponent(t[keep], Y[:, keep])
            what = "R_T over T" if self.kind == "at_least" else "R_t over t"
            ev = (
                f"exponent of {what} in [{t[keep].min():.0f}, {t.max():.0f}]: "
                f"{p:.3f} [{lo:.3f}, {hi:.3f}] vs {self.threshold:g} (n = {Y.shape[0]})"
            )
            if not math.isfinite(p):
                verdict = INCONCLUSIVE
            elif self.kind == "at_least":
                verdict = REPRODUCES if hi >= self.threshold else DOES_NOT
            elif lo > self.threshold:
                verdict = REPRODUCES if self.kind == "linear" else DOES_NOT
            elif hi < self.threshold:
                verdict = REPRODUCES if self.kind == "sublinear" else DOES_NOT
            else:
                verdict = INCONCLUSIVE
            out.append(self._verdict(env, verdict, ev))
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
        lines.append(f"  {'':<{w}}    {v.evidence}")
    counts = {k: sum(v.verdict == k for v in verdicts) for k in _ORDER}
    tally = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return "\n".join(lines + [f"  ({tally})"])


_ORDER = (REPRODUCES, DOES_NOT, INCONCLUSIVE, NOT_RUN)
