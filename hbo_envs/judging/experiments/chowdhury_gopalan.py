"""Chowdhury & Gopalan (NeurIPS 2019) experiments: Fig. 1(a)-(c) and (f)."""

from __future__ import annotations

from hbo_envs.judging.experiments._core import Experiment, LogT, PowerT, _a, register
from hbo_envs.judging.rules.claims import below_random, less, sublinear

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


def _claims(paper: tuple) -> tuple:
    """Fig. 1(a)-(c): ATA-GP-UCB (each approximation the panel shows) below TGP-UCB at T,
    Nyström no worse than QFF, R_T/T decreasing; every agent below the random floor."""
    labels = [a.label for a in paper]
    out = [
        less(
            ata,
            "tgp-ucb",
            metric="avg_regret",
            text=f"{ata} below TGP-UCB at T (R_T/T)",
            source=_OBS + ": 'ATA-GP-UCB outperforms TGP-UCB uniformly over all experiments'",
        )
        for ata in labels
        if ata.startswith("ata-")
    ]
    if "ata-gp-ucb-qff" in labels:
        out.append(
            less(
                "ata-gp-ucb-nystrom",
                "ata-gp-ucb-qff",
                metric="avg_regret",
                text="ATA-GP-UCB-Nyström below ATA-GP-UCB-QFF (R_T/T; paper: 'no worse')",
                source=_OBS,
            )
        )
    out += [
        sublinear(
            a, threshold=1.0, text=f"{a}: R_T/T decreasing (R_t exponent < 1)", source="Fig. 1"
        )
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
    ("c", "hbo/RKHS-Matern-StudentT-v0", tuple(a for a in _CG_PAPER if "qff" not in a.label)),
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
            claims=_claims(_paper),
            expect=(
                "ATA-GP-UCB (QFF, Nyström) below TGP-UCB; Nyström no worse than QFF; R_T/T "
                "decreasing for all."
            ),
        )
    )

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
            # without it the set misses f near the spike. Judged per seed on 1 - coverage_T
            # (share of the coverage points where f lies outside mu_T +- width_T).
            less(
                "tgp-ucb[b=t^1/4,beta=ln t]",
                "gp-ucb[beta=ln t]",
                metric="miss",
                text="truncation: the final confidence band misses f at fewer points",
                source="CG 2019 §6, Fig. 1(f)",
            ),
            below_random("gp-ucb[beta=ln t]"),
            below_random("tgp-ucb[b=t^1/4,beta=ln t]"),
        ),
    )
)
