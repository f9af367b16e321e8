"""Chowdhury & Gopalan (NeurIPS 2019) experiments: Fig. 1(a)-(c) and (f)."""

from __future__ import annotations

from hbo_envs.judging.experiments._core import Experiment, LogT, PowerT, _a, register
from hbo_envs.judging.rules.claims import (
    below_random,
    in_most_runs,
    less,
    no_worse,
    sublinear,
)

_CG = "Chowdhury & Gopalan, Bayesian Optimization under Heavy-tailed Payoffs, NeurIPS 2019"

_CG_PROTOCOL = (
    "§6 'Synthetic data': 100 evenly spaced points on [0, 1], a new f per trial, "
    "lambda = 1, 20 trials of 2*10^4 rounds; the figure plots mean and std of R_T/T. "
    "Schedules: the agents' default 'experiment' set (the authors' public code). "
    "GP-UCB is excluded from the paper's panels (R = inf); it, CA-TGP-UCB and MoM-GP-UCB "
    "are run here as extra baselines."
)

_CG_PAPER = (
    _a("tgp-ucb"),
    _a("ata-gp-ucb-qff"),
    _a("ata-gp-ucb-nystrom"),
)
_CG_EXTRA = (_a("gp-ucb"), _a("ca-tgp-ucb"), _a("mom-gp-ucb"))

_OBS = "§6 'Observations'"
#: The papers' "R_T/T decreasing" (one rule for every experiment: the claims' growth rule).
DECREASING = "§2: 'A sublinear growth of R_T with T implies the time-average regret R_T/T -> 0'"
NO_WORSE = (
    _OBS + ": 'the performance of ATA-GP-UCB under the Nyström approximation is no worse "
    "than that under the QFF approximation'"
)
#: "No worse" as non-inferiority: within this share of QFF's R_T/T.
NO_WORSE_MARGIN = 0.1


def _claims(paper: tuple, panel: str) -> tuple:
    """Fig. 1(a)-(c): ATA-GP-UCB (each approximation the panel shows) below TGP-UCB at T,
    Nyström no worse than QFF, R_T/T decreasing; every agent below the random floor."""
    labels = [a.label for a in paper]
    out = [
        less(
            ata,
            "tgp-ucb",
            metric="avg_regret",
            text=f"{ata} below TGP-UCB at T (R_T/T)",
            source=_OBS
            + f": 'ATA-GP-UCB outperforms TGP-UCB uniformly over all experiments', Fig. 1({panel})",
        )
        for ata in labels
        if ata.startswith("ata-")
    ]
    if "ata-gp-ucb-qff" in labels:
        out.append(
            no_worse(
                "ata-gp-ucb-nystrom",
                "ata-gp-ucb-qff",
                margin=NO_WORSE_MARGIN,
                metric="avg_regret",
                text=(
                    f"ATA-GP-UCB-Nyström no worse than ATA-GP-UCB-QFF (R_T/T within "
                    f"{NO_WORSE_MARGIN:.0%})"
                ),
                source=NO_WORSE + f", Fig. 1({panel})",
            )
        )
    out += [
        sublinear(a, text=f"{a}: R_T/T decreasing", source=f"Fig. 1({panel}); {DECREASING}")
        for a in labels
    ]
    out += [
        below_random(a, source="issue 7: every reference agent beats uniform play")
        for a in labels + [x.label for x in _CG_EXTRA]
    ]
    return tuple(out)


for _panel, _env, _paper in (
    ("a", "hbo/RKHS-SE-StudentT-v0", _CG_PAPER),
    ("b", "hbo/RKHS-SE-Pareto-v0", _CG_PAPER),
    # (c): "we do not have the theory of ATA-GP-UCB-QFF for the Matérn kernel yet"
    (
        "c",
        "hbo/RKHS-Matern-StudentT-v0",
        tuple(a for a in _CG_PAPER if "qff" not in a.label),
    ),
):
    register(
        Experiment(
            name=f"cg2019-fig1{_panel}",
            title=f"Chowdhury–Gopalan 2019, Fig. 1({_panel}): time-average regret on {_env}",
            citation=_CG + f", §6 and Fig. 1({_panel})",
            protocol=_CG_PROTOCOL,
            envs=(_env,),
            paper=_paper,
            extra=_CG_EXTRA,
            seeds=20,
            horizon=20_000,
            quick_seeds=10,
            quick_horizon=5_000,
            quick_note=(
                "10 seeds x T = 5000 (a quarter of the paper's 2*10^4): TGP-UCB's truncation "
                "level b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))} is past the bulk of the rewards "
                "from t ~ 10 and every agent has tried the 100 arms many times by then; "
                "MoM-GP-UCB gets N = 416 episodes of ell = 12. The verdicts below say which "
                "claims the quick run can already decide."
            ),
            metric="avg_regret",
            claims=_claims(_paper, _panel),
            expect=(
                "ATA-GP-UCB (QFF, Nyström) below TGP-UCB; Nyström no worse than QFF; R_T/T "
                "decreasing for all."
            ),
        )
    )

#: Fig. 1(f)'s band, as the paper plots it: mu_T +- sigma_T (the records' coverage_sigma,
#: from the agents' posterior_sd), not the band mu_T +- beta_T sigma_T the agent acts on
#: (beta_T = ln T = 9.2 at T = 10^4; the records' coverage, on the result page beside it).
_BAND = "miss_sigma"

register(
    Experiment(
        name="cg2019-fig1f",
        title="Chowdhury–Gopalan 2019, Fig. 1(f): effect of truncation on GP-UCB's confidence set",
        citation=_CG + ", §6 'Effect of truncation' and Fig. 1(f)",
        protocol=(
            "f in the SE RKHS normalized to [0, 1]; eta = +-10 at one random point, 0 "
            "elsewhere; GP-UCB with beta_t = ln t, with and without truncating rewards "
            "above b_t = t^{1/4}; T = 10^4; confidence sets mu_T +- sigma_T averaged over "
            "50 noise randomizations."
        ),
        # The paper leaves open whether the +-10 sign is drawn per sample or once per
        # randomization; both readings run (see hbo_envs.channels.spike).
        envs=("hbo/RKHS-SE-Spike-v0", "hbo/RKHS-SE-SpikeFixedSign-v0"),
        paper=(
            _a("gp-ucb", "gp-ucb[beta=ln t]", beta=LogT()),
            _a("tgp-ucb", "tgp-ucb[b=t^1/4,beta=ln t]", beta=LogT(), b=PowerT(0.25)),
        ),
        seeds=50,
        horizon=10_000,
        quick_seeds=10,
        quick_horizon=10_000,
        metric="avg_regret",
        kind="confidence",
        snapshot=True,
        expect=(
            "without truncation the posterior mean is off near the spike and the band misses "
            "f there; with truncation the estimate is (almost) exact and the band contains f "
            "everywhere (coverage_T = 1). Measured: this holds when the spike's sign is drawn "
            "once per run (SpikeFixedSign); with a fresh sign per sample the spike averages "
            "out and both estimates converge."
        ),
        claims=(
            # §6 'Effect of truncation': with truncation the confidence set contains f,
            # without it the set misses f near the spike. Judged per seed on the share of
            # the points where f lies outside mu_T +- sigma_T (the paper's band).
            less(
                "tgp-ucb[b=t^1/4,beta=ln t]",
                "gp-ucb[beta=ln t]",
                metric=_BAND,
                text="truncation: the final band mu_T +- sigma_T misses f at fewer points",
                source="§6 'Effect of truncation', Fig. 1(f)",
            ),
            in_most_runs(
                "gp-ucb[beta=ln t]",
                "misses",
                text="without truncation GP-UCB's estimate is poor: its band misses f",
                source=(
                    "§6 'Effect of truncation': 'the posterior mean after T = 10^4 rounds "
                    "is not a good estimate of f', Fig. 1(f)"
                ),
                band=_BAND,
            ),
            in_most_runs(
                "tgp-ucb[b=t^1/4,beta=ln t]",
                "contains",
                text="the truncated band contains f at every point",
                source=(
                    "§6 'Effect of truncation': 'the confidence interval around this "
                    "estimator contains f at every point in X', Fig. 1(f)"
                ),
                band=_BAND,
            ),
            below_random("gp-ucb[beta=ln t]"),
            below_random("tgp-ucb[b=t^1/4,beta=ln t]"),
        ),
    )
)
