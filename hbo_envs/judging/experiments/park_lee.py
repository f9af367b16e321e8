"""Park & Lee (ECAI 2024) experiments: Fig. 1 and Table 1."""

from __future__ import annotations

from dataclasses import replace

from hbo_envs.judging.experiments._core import Exclusion, Experiment, _a, register
from hbo_envs.judging.rules.claims import (
    Claim,
    LessAcross,
    below_random,
    less,
    linear,
    lowest,
    no_worse,
)

_PL = (
    "Park & Lee, Contextually Adaptive Algorithms for GP Bandit Optimization under "
    "Heavy-tailed Noise, ECAI 2024"
)

_PL_AGENTS = (
    _a("gp-ucb"),
    _a("tgp-ucb"),
    _a("ata-gp-ucb-qff"),
    _a("ata-gp-ucb-nystrom"),
    _a("ca-tgp-ucb"),
    _a("mom-gp-ucb"),
)
_PL_PROTOCOL = (
    "§5 synthetic data: symmetrized Pareto noise (alpha_z = 1 + eps + 0.01), eps in "
    "{0.2, 0.8}; 1D RKHS (1000 points), 2D Griewank (20 x 20 grid), 5D Griewank (5000 "
    "points); 10 seeds (Table 1); T is not stated in the paper (env default T = 1000); "
    "Pareto scale lambda_z not stated (env default: 1 on 1D, 0.01 on Griewank, see "
    "hbo_envs.envs.park_lee). Schedules: the agents' default 'experiment' set (no "
    "published one; Chowdhury–Gopalan's conversion, see agents.schedules). "
    "The figure plots cumulative regret."
)
_PL_ENVS = tuple(
    f"hbo/{obj}-SymPareto-eps{e}-v0"
    for e in ("02", "08")
    for obj in ("RKHS1D", "Griewank2D", "Griewank5D")
)
_5D = tuple(e for e in _PL_ENVS if "5D" in e)
_LOW_D = tuple(e for e in _PL_ENVS if "5D" not in e)

# QFF's m_bar^d features: 32 in 1D, 1024 in 2D, 32^5 = 3.4e7 in 5D (a 3.4e7 x 3.4e7 Gram
# matrix is infeasible; the paper does not say which approximation its ATA-GP-UCB used).
_EXCLUDE = tuple(
    Exclusion(
        "ata-gp-ucb-qff",
        e,
        "QFF needs m_bar^d = 32^5 = 3.4e7 features in 5D (infeasible); ATA-GP-UCB runs "
        "with the Nyström approximation there",
    )
    for e in _5D
)

_SRC = "§5, Fig. 1 discussion"

#: Quick configuration: fewer seeds, and T = 300 instead of 1000 on 5D (every UCB round
#: there scores all 5000 arms). Why it is enough: see QUICK_NOTE.
QUICK_SEEDS = 6  # the fewest at which the comparison rule can decide
QUICK_5D = {e: 300 for e in _5D}
QUICK_NOTE = (
    "6 seeds (the fewest at which the comparison rule can decide); T = 1000 (the env "
    "default, as the full run) on 1D and 2D, T = 300 on 5D (every "
    "UCB round there scores all 5000 arms). At T = 300 MoM-GP-UCB's experiment episode "
    "length is ell = ceil(ln(2T/delta')) = 9, so it makes N = 33 decisions (at the former "
    "T = 60 with the printed ell = 57 it made one). On 5D no agent beats random at any "
    "measured T (300, 1000; hbo_envs.judging.rules.known_failures: they explore the isolated "
    "points of the sample), so the 5D quick run shows that failure, as the full one does."
)
_TRUNC = ("tgp-ucb", "ata-gp-ucb-qff", "ata-gp-ucb-nystrom")


def _pairs(a: str, others: tuple[str, ...], text: str) -> list:
    """``a`` below each of ``others``, on every env where both run."""
    return [
        less(a, o, env=e, text=text.format(a=a, o=o), source=_SRC)
        for o in others
        for e in _PL_ENVS
        if not (e in _5D and "qff" in o)
    ]


#: ATA-GP-UCB-QFF's embedding on these envs: the agent itself warns that it approximates
#: the kernel only to eps_m = 0.999 (1D) / 0.984 (2D), where Lemma 1 needs eps_m < 1 and
#: decaying (agents/heavy_tailed: the warning at reset).
QFF_CAVEAT = (
    "rests on ATA-GP-UCB-QFF, whose QFF embedding the agent itself flags as invalid here "
    "(eps_m = 0.999 on 1D, 0.984 on 2D; the paper's Lemma 1 needs eps_m < 1, decaying)"
)


def _flag_qff(claims: tuple[Claim, ...]) -> tuple[Claim, ...]:
    """Every claim that involves ATA-GP-UCB-QFF, marked with :data:`QFF_CAVEAT`."""

    def uses(c: Claim) -> bool:
        who = {
            getattr(c, "a", ""),
            getattr(c, "b", ""),
            *(getattr(c, "among", None) or ()),
        }
        return "ata-gp-ucb-qff" in who

    return tuple(replace(c, caveat=QFF_CAVEAT) if uses(c) else c for c in claims)


_OTHERS = tuple(a.label for a in _PL_AGENTS if a.label != "gp-ucb")
_PL_CLAIMS = _flag_qff(
    (
        linear(
            "gp-ucb",
            text="GP-UCB: cumulative regret grows linearly",
            source=_SRC + ": 'the cumulative regret of GP-UCB increases linearly across all "
            "problem settings'",
        ),
        *_pairs(
            "ca-tgp-ucb",
            _TRUNC,
            "CA-TGP-UCB best of the truncation-based agents: below {o}",
        ),
        *_pairs("mom-gp-ucb", (*_TRUNC, "ca-tgp-ucb"), "MoM-GP-UCB below {o}"),
        *(
            less(
                "tgp-ucb",
                ata,
                env=e,
                text=f"{ata} worse than TGP-UCB in 1D/2D",
                source=_SRC,
            )
            for ata in ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom")
            for e in _LOW_D
        ),
        *(
            less(
                "ata-gp-ucb-nystrom",
                "tgp-ucb",
                env=e,
                text="ata-gp-ucb-nystrom marginally better than TGP-UCB in 5D",
                source=_SRC,
            )
            for e in _5D
        ),
        *(
            less(
                o,
                "gp-ucb",
                env=e,
                text=f"GP-UCB worst: {o} below GP-UCB",
                source=_SRC + ": 'the cumulative regret of GP-UCB increases linearly across all "
                "problem settings due to its inability to handle heavy-tailed noise', "
                "Fig. 1(a)-(f)",
            )
            for o in _OTHERS
            for e in _PL_ENVS
            if not (e in _5D and "qff" in o)
        ),
        *(below_random(a.label, source="floor") for a in _PL_AGENTS),
    )
)

_T1 = _PL + ", §5 and Table 1"
_EPS02 = tuple(e for e in _PL_ENVS if "eps02" in e)
_ENV_1D, _ENV_2D, _ENV_5D = (
    next(e for e in _EPS02 if k in e) for k in ("RKHS1D", "Griewank2D", "Griewank5D")
)
_TABLE1_CLAIMS = _flag_qff(
    (
        *(
            lowest(
                "mom-gp-ucb",
                among=tuple(
                    o for o in _OTHERS if o != "mom-gp-ucb" and not (e in _5D and "qff" in o)
                ),
                env=e,
                metric="agent_time",
                text="MoM-GP-UCB fastest (agent seconds per run)",
                source=_T1
                + ": 'MoM-GP-UCB shows the fastest execution speed across all scenarios'",
            )
            for e in _EPS02
        ),
        *(
            less(
                a,
                ata,
                metric="agent_time",
                env=e,
                text=f"{ata} slowest: {a} faster",
                source=_T1 + ": 'Across all scenarios, ATA-GP-UCB has the slowest execution time'",
            )
            for ata in ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom")
            for a in ("gp-ucb", "tgp-ucb", "ca-tgp-ucb", "mom-gp-ucb")
            for e in _EPS02
            if not (e in _5D and "qff" in ata)
        ),
        *(
            no_worse(
                x,
                y,
                margin=1.0,
                metric="agent_time",
                env=e,
                text=f"GP-UCB and TGP-UCB similar in speed: {x} within a factor 2 of {y}",
                source=_T1 + ": 'GP-UCB and TGP-UCB share similar execution speeds'",
            )
            for x, y in (("gp-ucb", "tgp-ucb"), ("tgp-ucb", "gp-ucb"))
            for e in _EPS02
        ),
        *(
            LessAcross(
                f"every agent slowest on 5D, fastest on 2D: {a} faster on {lo_} than {hi_}",
                _T1 + ": 'All algorithms have the longest execution time at 5d function and "
                "the shortest execution speed at 2d function'",
                a,
                lo_,
                hi_,
            )
            for a in (x.label for x in _PL_AGENTS)
            for lo_, hi_ in ((_ENV_2D, _ENV_1D), (_ENV_1D, _ENV_5D))
            if not ("qff" in a and hi_ == _ENV_5D)
        ),
    )
)


register(
    Experiment(
        name="pl2024-fig1",
        title="Park–Lee 2024, Fig. 1(a)–(f): cumulative regret on the synthetic envs",
        citation=_PL + ", §5 and Fig. 1",
        protocol=_PL_PROTOCOL,
        envs=_PL_ENVS,
        paper=_PL_AGENTS,
        seeds=10,
        horizon=None,
        quick_seeds=QUICK_SEEDS,
        quick_horizon=1000,
        quick_horizon_by_env=QUICK_5D,
        quick_note=QUICK_NOTE,
        exclude=_EXCLUDE,
        claims=_PL_CLAIMS,
        metric="regret",
        expect=(
            "GP-UCB linear; MoM-GP-UCB lowest, CA-TGP-UCB best of the truncation-based "
            "agents; ATA-GP-UCB worse than TGP-UCB in 1D/2D, marginally better in 5D."
        ),
    )
)

register(
    Experiment(
        name="pl2024-table1",
        title="Park–Lee 2024, Table 1: execution time per run (eps = 0.2)",
        citation=_PL + ", §5 and Table 1",
        protocol=_PL_PROTOCOL + " Table 1 reports mean (std) seconds per run over 10 seeds.",
        envs=tuple(e for e in _PL_ENVS if "eps02" in e),
        paper=_PL_AGENTS,
        seeds=10,
        horizon=None,
        quick_seeds=QUICK_SEEDS,
        quick_horizon=1000,
        quick_horizon_by_env=QUICK_5D,
        quick_note=QUICK_NOTE,
        exclude=_EXCLUDE,
        metric="regret",
        kind="runtime",
        # a table of the published algorithms' running times; their tuned rows (same envs,
        # same cells) are on pl2024-fig1
        tuned_rows=False,
        claims=_TABLE1_CLAIMS,
        expect=(
            "ATA-GP-UCB slowest everywhere; GP-UCB ~ TGP-UCB; MoM-GP-UCB fastest; 5D slowest, "
            "2D fastest. (Absolute numbers are not comparable: the papers' code refactors a "
            "t x t matrix per round.)"
        ),
    )
)
