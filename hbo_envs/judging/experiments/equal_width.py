"""Equal-width comparisons (issue 35 item 2): each heavy-tail estimator against GP-UCB at
GP-UCB's own confidence width, on paired seeds.

Every heavy-tail paper bundles a robust **estimator** (truncation, CA truncation, median of
means, feature-space truncation) with a **width schedule**; with the published schedules
the heavy-tail agents' widths are so much larger than GP-UCB's that a comparison measures
widths, not estimators. Here every estimator runs with ``beta="gp-ucb"``
(:class:`~agents.gp.base.GPUCBAgent`: GP-UCB's default ``beta_t``, the estimator exactly
the paper's), so "X at GP-UCB's width beats GP-UCB" is a statement about the estimator
alone. Each verdict's evidence states the share of the rewards X's estimator altered
(the agents' ``diagnostics()``, the records' ``altered`` column): an estimator that never
fires makes X GP-UCB, and the page says so.

These are *suite checks*, not claims of any paper (no paper runs this comparison).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from hbo_envs.harness.stats import MIN_PAIRED_SEEDS
from hbo_envs.judging.experiments._core import (
    Exclusion,
    Experiment,
    _a,
    register,
    tuned,
    tuned_label,
)
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    SUITE,
    ClaimContext,
    Less,
    Verdict,
    less,
)

__all__ = [
    "AtEqualWidth",
    "ESTIMATORS",
    "WIDTHS",
    "altered_note",
    "at_equal_width",
    "label",
]

#: The estimators compared (registered agent names) and what each alters.
ESTIMATORS = {
    "tgp-ucb": "truncation at b_t (Chowdhury–Gopalan 2019, Alg. 1)",
    "ca-tgp-ucb": "CA truncation (Park–Lee 2024, Alg. 1)",
    "mom-gp-ucb": "median of means (Park–Lee 2024, Alg. 2)",
    "ata-gp-ucb-qff": "feature-space truncation, QFF (Chowdhury–Gopalan 2019, Alg. 2)",
    "ata-gp-ucb-nystrom": "feature-space truncation, Nyström (Chowdhury–Gopalan 2019, Alg. 2)",
}

#: The Chowdhury–Gopalan SE objective with infinite-variance Student-t noise (df = 1.5; the
#: (1 + alpha)-th moment exists for alpha < 0.5), through the configurable env.
CG_DF15 = "hbo/GPBandit-v0"
CG_DF15_KWARGS = {
    "objective": "chowdhury-gopalan",
    "channel": {"name": "student_t", "df": 1.5, "alpha": 0.45},
}
PL_1D = "hbo/RKHS1D-SymPareto-eps02-v0"


#: The common widths: GP-UCB's own default ``beta_t`` (``beta="gp-ucb"``), and the constant
#: ``beta = 2`` of the issue's measurement (a width at which GP-UCB learns on these envs;
#: a constant is GP-UCB's width as much as the estimator's). Each is given to GP-UCB and
#: to every estimator alike.
WIDTHS: dict[str | float, str] = {
    "gp-ucb": "GP-UCB's width",
    2.0: "the common width beta = 2",
}


def _w(width: str | float) -> str:
    return width if isinstance(width, str) else f"{width:g}"


def label(name: str, width: str | float = "gp-ucb") -> str:
    """The label of agent ``name`` run at ``width`` (GP-UCB at its own default width is
    plain ``gp-ucb``)."""
    if name == "gp-ucb" and width == "gp-ucb":
        return "gp-ucb"
    return f"{name}[beta={_w(width)}]"


def altered_note(ctx: ClaimContext, env: str, agent: str) -> str:
    """What the evidence says of ``agent``'s estimator on ``env``: the mean share (and
    range over seeds) of the rewards it altered by ``T``, or that it never fired; "" when
    the agent records no such share."""
    f = ctx.final
    g = f[(f["env_id"] == env) & (f["agent"] == agent)]
    if "altered" not in g.columns:
        return ""
    x = g["altered"].to_numpy(dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return ""
    if not x.any():
        return (
            f"; {agent}'s estimator never fired (0 rewards altered on all {x.size} seeds): "
            "whatever it does differently from GP-UCB here, its robust estimator is not it"
        )
    return (
        f"; {agent} altered {100 * x.mean():.2g}% of its rewards by T (mean over {x.size} "
        f"seeds; {100 * x.min():.2g}% to {100 * x.max():.2g}%)"
    )


@dataclass(frozen=True)
class AtEqualWidth(Less):
    """``a`` (an estimator at GP-UCB's width) below ``b`` (GP-UCB), decided exactly as
    :class:`~hbo_envs.judging.rules.claims.Less` (paired seeds, the exact sign-flip test,
    at least 6 seeds), with the share of rewards ``a``'s estimator altered in the
    evidence."""

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        out = []
        for v in super().evaluate(ctx):
            if not v.env:
                out.append(v)
                continue
            ev = v.evidence + altered_note(ctx, v.env, self.a)
            if v.verdict == INCONCLUSIVE and _identical(ctx, v.env, self.a, self.b):
                # no seed differs at all: the estimator changed nothing GP-UCB did, which
                # is no uncertainty about "a beats b" but its refutation on these seeds
                v = dataclasses.replace(v, verdict=DOES_NOT, rule=RULE_IDENTICAL)
            out.append(dataclasses.replace(v, evidence=ev))
        return out


#: How a comparison with no difference on any seed is decided.
RULE_IDENTICAL = (
    "identical R_T on every paired seed (at least 6): the estimator changed nothing, so it "
    "does not beat GP-UCB"
)


def _identical(ctx: ClaimContext, env: str, a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` have the same final ``R_T`` on every common seed (at least
    :data:`~hbo_envs.harness.stats.MIN_PAIRED_SEEDS` of them)."""
    f = ctx.final[ctx.final["env_id"] == env]
    ra = f[f["agent"] == a].set_index("seed")["regret"]
    rb = f[f["agent"] == b].set_index("seed")["regret"]
    common = ra.index.intersection(rb.index)
    if len(common) < MIN_PAIRED_SEEDS:
        return False
    return bool(np.array_equal(ra.loc[common].to_numpy(), rb.loc[common].to_numpy()))


def at_equal_width(
    name: str, env: str | None = None, width: str | float = "gp-ucb"
) -> AtEqualWidth:
    """Suite check: estimator ``name`` beats GP-UCB (R_T), both at ``width``."""
    return AtEqualWidth(
        f"{name} at {WIDTHS[width]} beats GP-UCB at it (R_T): {ESTIMATORS[name]} helps",
        "issue 35 item 2: the estimator alone, at equal width",
        label(name, width),
        label("gp-ucb", width),
        env,
        "regret",
        family=SUITE,
    )


_QFF_PL = (
    "QFF approximates only an SE kernel and the Park–Lee RKHS1D env's embedding is invalid "
    "(the agent warns eps_m = 0.999 there); the Nyström variant stands for feature-space "
    "truncation on this env"
)

register(
    Experiment(
        name="equal-width",
        title="Equal-width comparisons: each heavy-tail estimator at GP-UCB's confidence width",
        citation=(
            "Suite experiment (issue 35 item 2): the estimators of Chowdhury & Gopalan, "
            "NeurIPS 2019, and Park & Lee, ECAI 2024, each run at GP-UCB's width"
        ),
        protocol=(
            "GP-UCB (default 'experiment' width beta_t = sup_f sqrt(lambda) + "
            "nu^{1/(1+alpha)} sqrt(ln t)) against TGP-UCB, CA-TGP-UCB, MoM-GP-UCB and "
            "ATA-GP-UCB (QFF, Nyström) run with beta='gp-ucb': the same beta_t, each "
            "estimator exactly the paper's (truncation level, threshold, block count, "
            "embedding); and all of them again at the common constant width beta = 2 (the "
            "issue's measurement: a width at which GP-UCB learns here). Envs: the "
            "Chowdhury–Gopalan SE objective (100 points, a new f per seed) with Student-t "
            "noise of df = 1.5 (infinite variance; alpha = 0.45), through hbo/GPBandit-v0; "
            "and Park–Lee's RKHS1D with symmetric Pareto noise (eps = 0.2). Paired seeds "
            "(same seed = same f and noise), T = 2000."
        ),
        envs=(CG_DF15, PL_1D),
        env_kwargs={CG_DF15: CG_DF15_KWARGS},
        paper=tuple(
            _a(n, label(n, w), **({} if label(n, w) == "gp-ucb" else {"beta": w}))
            for w in WIDTHS
            for n in ("gp-ucb", *ESTIMATORS)
        ),
        # each agent's tuned configuration too (issue 35 item 6: tuned X against tuned GP-UCB)
        extra=tuple(tuned(n) for n in ("gp-ucb", *ESTIMATORS)),
        # 30 paired seeds x T = 2000: the whole build is a few CPU minutes (measured on 3
        # seeds of every cell); the measurement resolved differences of ~1/3 of
        # GP-UCB's R_T at 24 seeds
        seeds=30,
        horizon=2000,
        quick_seeds=6,
        quick_horizon=500,
        quick_note=(
            "6 seeds x T = 500: the fewest seeds the paired rule decides at, enough to see "
            "whether each estimator fires at all"
        ),
        metric="regret",
        exclude=tuple(
            Exclusion(lab, PL_1D, _QFF_PL)
            for lab in (
                *(label("ata-gp-ucb-qff", w) for w in WIDTHS),
                tuned_label("ata-gp-ucb-qff"),
            )
        ),
        expect=(
            "Under infinite-variance noise an estimator that fires should cut GP-UCB's "
            "regret at the same width; an estimator whose threshold scales with the noise "
            "moment may never fire, and then X is GP-UCB."
        ),
        # QFF is not run on the Park–Lee env (see the exclusion): its check is on CG's only
        claims=tuple(
            at_equal_width(n, CG_DF15 if n == "ata-gp-ucb-qff" else None, w)
            for w in WIDTHS
            for n in ESTIMATORS
        )
        + tuple(
            less(
                tuned_label(n),
                tuned_label("gp-ucb"),
                env=CG_DF15 if n == "ata-gp-ucb-qff" else None,
                text=f"tuned {n} beats tuned GP-UCB (R_T): {ESTIMATORS[n]}",
                source="issue 35 item 6: tuned against tuned",
                family=SUITE,
            )
            for n in ESTIMATORS
        ),
        smoke_horizon=60,
    )
)
