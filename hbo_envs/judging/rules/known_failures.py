"""Why a reference agent does not beat uniform play: the mechanisms, stated once, as data.

The floor has no exemptions: every reference agent of every experiment (ATA-GP-UCB
included) is compared with the ``random`` agent on paired seeds of the archive
(:func:`hbo_envs.judging.rules.floor.floor_failures`; the rule of
:func:`hbo_envs.judging.rules.claims.decide_less`). A pair that does not beat it is a
*known failure* when a mechanism explains it: :data:`CAUSES` maps pairs (glob patterns) to
a key of :data:`MECHANISMS`, where each mechanism is stated once, in words. The numbers
are never typed here: they come from the archive (``docs/known-failures.md`` is rendered
by ``hbo-bench archive render``; :func:`hbo_envs.judging.publish.known_failures` gives
them as a dict). This module imports nothing of the project: the claims read it.
``tests/test_baselines.py`` requires every failing pair to have a mechanism and every
cause to match a failing pair (a fixed pair must leave :data:`CAUSES`).

>>> known_failure("ata-gp-ucb-qff", "hbo/Griewank5D-SymPareto-eps02-v0")
'arms-exceed-horizon'
>>> known_failure("gp-ucb", "hbo/RKHS-SE-StudentT-v0") is None
True
"""

from __future__ import annotations

import fnmatch

__all__ = [
    "CAUSES",
    "MECHANISMS",
    "known_failure",
]

#: One short reason per mechanism (the key is the anchor in docs/known-failures.md).
MECHANISMS: dict[str, str] = {
    "width-dominates-range": (
        "The agent's confidence width (the authors' experiment schedule: "
        "β_t = sup_f + b_t·sqrt(ln t), or ATA's sqrt(m)·v^{1/(1+α)}·ln(mT)^{α/(1+α)}·t^{…}) "
        "is large against the range of f, so the UCB rule plays by the posterior σ: it "
        "explores the arms the kernel knows least about (the two ends of [0, 1] on the "
        "synthetic envs, the sensors the data kernel decorrelates on LightSensor) instead "
        "of the good ones. Uniform play is strong where most arms are near the maximum (the "
        "positive f the multiplicative Pareto channel needs). Agents with smaller widths "
        "beat random on the same envs; the papers show no random floor."
    ),
    "arms-exceed-horizon": (
        "Park–Lee's 5-D Griewank envs have 5000 arms and T = 1000 < n: the posterior σ is "
        "1 at every arm not near a played one, and any width that covers f's spread makes "
        "the UCB rule play unexplored arms, which lie far from the dense centre of the "
        "N(0, I) sample where f is best; uniform play samples the centre. The regret bound "
        "β_T·sqrt(T γ_T) exceeds T times f's spread at every T ≤ 1000: theory promises "
        "nothing here (learning needs T ≫ n, or a longer lengthscale; the paper states "
        "neither)."
    ),
    "griewank-ata-width": (
        "On the 2-D Griewank grid (400 arms, T = 1000) ATA-GP-UCB's experiment width "
        "(sqrt(m) with m = 256 QFF nodes, or the Nyström dictionary size + 1, growing with "
        "the arms played) is large against Griewank's spread, so it explores almost "
        "uniformly; QFF's kernel approximation error on [-5, 5]² with lengthscale 1 is "
        "close to 1 (Lemma 1 needs it below 1; the theory is for [0, 1]^d). Park–Lee "
        "report ATA worse than TGP-UCB on 2-D."
    ),
    "attack-steers-learner": (
        "Han–Scarlett's attacks are built to steer a learner into a target region where f "
        "is at least a margin below f*, and the robust suite keeps only the Forrester "
        "attacks that do this to GP-UCB (docs/robust.md). Uniform play ignores rewards, so "
        "no reward attack can hurt it; an agent without a defence against the attack in "
        "question is steered like GP-UCB and ends near or above uniform play. Clipped and "
        "subtracted rewards are plausible values, not outliers, so an outlier diagnostic "
        "(outlier-gp-ucb) does not remove them and can discard the honest rewards instead."
    ),
    "unbounded-corruption": (
        "The frequency-bounded adversary corrupts T_c rounds by ±1e12 (Ezzerg et al.): one "
        "such corruption moves a GP posterior mean linearly in c (their App. H), and no sum "
        "budget C the Bogunovic et al. agents can be told covers it, so every agent whose "
        "posterior is an ordinary GP's (truncation at b_t ≪ 1e12 aside) is derailed for the "
        "rest of the run and ends near uniform play."
    ),
    "few-seeds-bimodal": (
        "ATA-GP-UCB-Nyström runs 6 of tails-v0-estimators' 12 seeds (its cost: "
        "hbo_envs.judging.archive.BUDGETS). With its tuned constant width its R_T on these "
        "envs is bimodal, as tuned GP-UCB's is: on most f draws it finds the optimum, on some "
        "it stays on a wrong peak for the whole run, so the paired difference to uniform "
        "play has a CI as wide as the gap and 6 seeds do not decide (the sign-flip test "
        "needs every pair to agree to reach 5% at n = 6)."
    ),
    "tuned-width-does-not-transfer": (
        "The tuned configurations were chosen on the synthetic tuning family (random RKHS "
        "objectives with heavy-tailed noise, agents/configs/tuned/): constant widths of "
        "0.1-0.25. On the LightSensor data such a small width commits on some seeds to the "
        "first sensor that looks good and stays there (R_T near 0 on some seeds, worse than "
        "uniform play on others), so over 10 seeds the agent does not separate from uniform "
        "play; the paper configuration's wider schedule does not commit. A tuning is only as "
        "good as the family it was tuned on."
    ),
    "stockpicking-spread": (
        "StockPicking replays test day t at round t: the reward is a daily close-to-close "
        "change whose mean differs between the 3 stocks far less than its day-to-day "
        "spread, and the regret r_t = max_s change − chosen change is dominated by that "
        "spread, so no policy separates from uniform play in 1000 days."
    ),
}

#: ``(agent label glob, env id glob, mechanism)``: the first match explains a failing pair.
CAUSES: tuple[tuple[str, str, str], ...] = (
    ("ata-gp-ucb-*", "hbo/Griewank2D-*", "griewank-ata-width"),
    ("*", "hbo/HS-Forrester-*", "attack-steers-learner"),
    ("*", "hbo/RCGP-Forrester-Frequency-v0", "unbounded-corruption"),
    ("*", "hbo/Griewank5D-*", "arms-exceed-horizon"),
    ("*", "hbo/StockPicking-v0", "stockpicking-spread"),
    ("ata-gp-ucb-nystrom[[]config=tuned]", "hbo/Tails-*", "few-seeds-bimodal"),
    ("*[[]config=tuned]", "hbo/LightSensor-v0", "tuned-width-does-not-transfer"),
    ("tgp-ucb", "hbo/Tails-*", "width-dominates-range"),
    ("ca-tgp-ucb", "hbo/Tails-*", "width-dominates-range"),
    ("mom-gp-ucb", "hbo/Tails-*", "width-dominates-range"),
    ("ata-gp-ucb-qff", "hbo/Tails-*", "width-dominates-range"),
    ("ata-gp-ucb-nystrom", "hbo/Tails-*", "width-dominates-range"),
    ("tgp-ucb", "hbo/RKHS-SE-Pareto-v0", "width-dominates-range"),
    ("ata-gp-ucb-*", "hbo/RKHS-SE-Pareto-v0", "width-dominates-range"),
    ("tgp-ucb", "hbo/LightSensor-v0", "width-dominates-range"),
    ("ata-gp-ucb-*", "hbo/LightSensor-v0", "width-dominates-range"),
)


def known_failure(agent: str, env: str) -> str | None:
    """The mechanism key :data:`CAUSES` gives ``agent`` on ``env`` (None: no known one)."""
    for a, e, key in CAUSES:
        if fnmatch.fnmatchcase(agent, a) and fnmatch.fnmatchcase(env, e):
            return key
    return None
