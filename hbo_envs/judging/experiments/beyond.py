"""Reproductions beyond the seed papers (issue 19; ``docs/robust.md``).

- ``hs2022-attacks`` — Han & Scarlett (ICML 2022): GP-UCB as the victim of the clipping,
  aggressive-subtraction and bump-subtraction attacks on Forrester (target region
  ``[0, 0.5]``), with the random attack as the control. Claims: each targeted attack at
  least doubles GP-UCB's ``R_T`` (CIs apart); the random attack does not. The authors'
  success metric (fraction of rounds in the target region) and the attack's cost
  ``sum |c_t|`` are not columns of the harness records; :func:`attack_success` measures
  them by direct rollouts (``python -m hbo_envs.judging.experiments.beyond_cli success``).
- ``ebk2025-forrester`` — Ezzerg, Bogunovic & Knoblauch (2025), the corrupted-Forrester
  figure: ``T_c = ceil(T^{1/3})`` corruptions of ``+-1e12`` (and the appendix's HIGH 25 /
  LOW -10). Claims: RCGP-UCB (both variants) has lower ``R_T`` than GP-UCB; GP-UCB's
  ``R_t`` grows linearly under the ``1e12`` attack.

Every agent, old and new, runs as an ``extra`` on both and is compared with random.

:func:`budget_sweep` is the picture the corruption papers argue with: each agent's ``R_T``
as a function of the budget (``C`` for a Han–Scarlett attack, ``T_c`` for the
frequency-bounded adversary); ``python -m hbo_envs.judging.experiments.beyond_cli sweep --out
DIR`` writes its CSV and PNG.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

import agents
from hbo_envs.harness.stats import paired_comparison
from hbo_envs.judging.experiments._core import Experiment, _a, register
from hbo_envs.judging.rules.claims import (
    DOES_NOT,
    INCONCLUSIVE,
    REPRODUCES,
    Claim,
    ClaimContext,
    Verdict,
    attack_predicts_floor_failure,
    below_random,
    decide_less,
    less,
    linear,
)

__all__ = [
    "AttackRatio",
    "attack_success",
    "budget_sweep",
    "plot_budget_sweep",
]

_HS = "Han & Scarlett, Adversarial Attacks on Gaussian Process Bandits, ICML 2022"
_EBK = (
    "Ezzerg, Bogunovic & Knoblauch, Robust Bayesian Optimisation with Unbounded Corruptions, "
    "arXiv:2511.15315 (2025)"
)
HS_CLEAN = "hbo/HS-Forrester-None-v0"
HS_ATTACKS = {
    "clipping": "hbo/HS-Forrester-Clipping-v0",
    "aggressive subtraction": "hbo/HS-Forrester-AggSub-v0",
    "subtraction (smooth bump)": "hbo/HS-Forrester-SubRnd-v0",
    "subtraction (indicator bump)": "hbo/HS-Forrester-SubSq-v0",
}
HS_RANDOM = "hbo/HS-Forrester-Random-v0"
EBK_HUGE = "hbo/RCGP-Forrester-Frequency-v0"
EBK_PAPER = "hbo/RCGP-Forrester-FrequencyPaper-v0"

#: Old and new agents run on every env of both experiments (compared with random).
OLD = ("tgp-ucb", "ca-tgp-ucb", "mom-gp-ucb", "gp-ucb-corruption", "fast-slow-gp-ucb")
NEW = ("rcgp-ucb", "rcgp-ucb-adaptive", "ec-gp-ucb", "outlier-gp-ucb")
#: The agents without a corruption model: Han–Scarlett's attacks pull such a GP-UCB-type
#: learner into the target region, so on an attacked env the floor is stated as the attack
#: predicts it (:func:`~hbo_envs.judging.rules.claims.attack_predicts_floor_failure`).
UNGUARDED = ("gp-ucb", "tgp-ucb", "ca-tgp-ucb", "mom-gp-ucb")


@dataclass(frozen=True)
class AttackRatio(Claim):
    """Agent ``agent``'s mean ``R_T`` on ``attacked`` vs on ``clean``: at least ``factor``
    times as large (``at_most=False``) or below ``factor`` times (``at_most=True``).

    Seed ``s`` of the attacked env and seed ``s`` of the clean one share the objective and
    the noise, so the runs are paired by seed and judged by the claims' comparison rule
    (:func:`~hbo_envs.judging.rules.claims.decide_less`: the exact sign-flip test of
    ``R_T(attacked) - factor R_T(clean)`` per seed, at least 6 seeds): its interval above
    0 means "at least ``factor`` times", below 0 "below ``factor`` times".
    """

    agent: str = "gp-ucb"
    attacked: str = ""
    clean: str = ""
    factor: float = 2.0
    at_most: bool = False

    def evaluate(self, ctx: ClaimContext) -> list[Verdict]:
        for env in (self.attacked, self.clean):
            miss = self._missing(ctx, env, (self.agent,))
            if miss:
                return [miss]
        f = ctx.final
        sa = f[(f["env_id"] == self.attacked) & (f["agent"] == self.agent)]["seed"].to_numpy()
        sc = f[(f["env_id"] == self.clean) & (f["agent"] == self.agent)]["seed"].to_numpy()
        xa = pd.Series(ctx.scores(self.attacked, self.agent), index=sa)
        xc = pd.Series(ctx.scores(self.clean, self.agent), index=sc)
        common = xa.index.intersection(xc.index).sort_values()
        if len(common) == 0:
            return [self._verdict(self.attacked, INCONCLUSIVE, "no seed finished on both envs")]
        # "below factor x clean" is the comparison clean-scaled minus attacked < 0
        c = paired_comparison(
            xa.loc[common].to_numpy(), xc.loc[common].to_numpy(), scale_b=self.factor
        )
        below, rule = decide_less(c)
        flip = {REPRODUCES: DOES_NOT, DOES_NOT: REPRODUCES}
        verdict = below if self.at_most else flip.get(below, below)
        ev = (
            f"R_T {self.agent}: {c.mean_a:.4g} attacked vs {c.mean_b:.4g} clean (ratio "
            f"{c.mean_a / c.mean_b:.3g}); mean of attacked - {self.factor:g} x clean "
            f"{c.diff:.4g} [{c.lo:.4g}, {c.hi:.4g}], sign-flip p = {c.p:.2g} "
            f"(n = {c.n} paired seeds)"
        )
        return [self._verdict(self.attacked, verdict, ev, rule, c.p)]


def _floor(envs: Iterable[str], names: Iterable[str]) -> tuple[Claim, ...]:
    return tuple(below_random(a, env=e, source="floor") for e in envs for a in names)


def _attacked_floor(envs: Iterable[str], names: Iterable[str]) -> tuple[Claim, ...]:
    """The floor on an attacked env, stated as Han–Scarlett's attack predicts it: the agent
    is pulled to the target region, so uniform play is below it."""
    return tuple(
        attack_predicts_floor_failure(a, e, source="note §2 (attack), §6 (attacks succeed)")
        for e in envs
        for a in names
    )


_EXTRA = tuple(_a(n) for n in OLD + NEW)

register(
    Experiment(
        name="hs2022-attacks",
        title="Han–Scarlett 2022: attacks on GP-UCB (Forrester, target region [0, 0.5])",
        citation=_HS + " (attacks and setup from the authors' code, eric-vader/Attack-BO)",
        protocol=(
            "Forrester (minimised in Attack-BO; here f = -g / max|g| maximised) on 200 grid "
            "points, target region [0, 0.5] (f(x~) its best grid value), Gaussian noise "
            "sigma = 0.01, Matern-5/2 kernel (l = 0.1, fixed); attacks with the authors' "
            "defaults (clipping Delta = 0; aggressive subtraction Delta = f(x*) - f(x~); "
            "bump subtraction at x* with width 0.1621 and height f(x*) - min f; random "
            "N(0, 0.1^2)), targeted model, budget C = 50 on sum |c_t|; T = 300; the victim "
            "is GP-UCB with the default schedule (Attack-BO used GPyOpt LCB with weight "
            "0.5 log(2t) and 10 initial points: not reproduced)."
        ),
        envs=(*HS_ATTACKS.values(), HS_RANDOM, HS_CLEAN),
        paper=(_a("gp-ucb"),),
        extra=_EXTRA,
        seeds=10,
        horizon=300,
        quick_seeds=6,
        quick_horizon=300,
        quick_note="6 seeds x T = 300 (the full horizon: MoM-GP-UCB's ell = 9 replays give it "
        "33 decisions; 6 seeds are the fewest at which the comparison rule can decide).",
        metric="regret",
        kind="corruption",
        claims=(
            *(
                AttackRatio(
                    f"the {name} attack at least doubles GP-UCB's regret",
                    "note §2 (attack), §6 (recollection: attacks succeed)",
                    "gp-ucb",
                    env,
                    HS_CLEAN,
                    2.0,
                )
                for name, env in HS_ATTACKS.items()
            ),
            AttackRatio(
                "the random attack (the control) does not double GP-UCB's regret",
                "note §2.4, §6 (recollection)",
                "gp-ucb",
                HS_RANDOM,
                HS_CLEAN,
                2.0,
                True,
            ),
            *_floor((HS_CLEAN,), ("gp-ucb", *OLD, *NEW)),
            # attacked envs: the agents the attacks are built against (no corruption model)
            # are predicted to fail; the corruption-aware ones are meant to beat the floor
            *_attacked_floor(HS_ATTACKS.values(), UNGUARDED),
            *_floor(HS_ATTACKS.values(), tuple(a for a in (*OLD, *NEW) if a not in UNGUARDED)),
        ),
        expect=(
            "Attack-BO's figures were not retrieved (note §6): the claims are the paper's "
            "qualitative story (targeted attacks succeed, random ones do not), measured as "
            "regret. The stationary attacks stay inside RCGP's plateau, so RCGP-UCB plays "
            "as GP-UCB there (by design, note §3)."
        ),
    )
)

register(
    Experiment(
        name="ebk2025-forrester",
        title="Ezzerg–Bogunovic–Knoblauch 2025: corrupted Forrester, GP-UCB vs RCGP-UCB",
        citation=_EBK + ", §6 Forrester experiment (note §6)",
        protocol=(
            "Forrester maximised on [0, 1] (x* = 1), 200 grid points, scaled by 1/15.83; "
            "Gaussian noise sd 1/15.83 (the paper's sigma^2 = 1 in raw units); clairvoyant "
            "adversary: queries within 0.2 of x* set to LOW, beyond 0.5 set to HIGH, the "
            "earliest T_c = ceil(T^(1/3)) such rounds (T = 300 here: T_c = 7; the paper ran "
            "T = 100, T_c = 5). HIGH/LOW = +-1e12 "
            "(unbounded magnitudes) and the appendix's 25 / -10 (raw units). No Sobol "
            "initial design, fixed Matern-5/2 kernel (l = 0.1), grid argmax; 10 seeds as "
            "the paper."
        ),
        envs=(EBK_HUGE, EBK_PAPER),
        paper=(
            _a("gp-ucb"),
            _a("rcgp-ucb"),
            _a("rcgp-ucb-adaptive"),
            _a("outlier-gp-ucb"),
        ),
        extra=tuple(_a(n) for n in OLD + ("ec-gp-ucb",)),
        seeds=10,
        horizon=300,
        quick_seeds=6,
        quick_horizon=300,
        quick_note="6 seeds x T = 300 (T_c = ceil(T^(1/3)) = 7; the paper ran T = 100, but "
        "MoM-GP-UCB needs T >= 300 for 30 decisions with ell = ceil(ln(2T/delta)) replays).",
        metric="regret",
        kind="corruption",
        claims=(
            less(
                "rcgp-ucb",
                "gp-ucb",
                text="FC-RCGP-UCB beats GP-UCB under corruption",
                source="§6, Fig. 1",
            ),
            less(
                "rcgp-ucb-adaptive",
                "gp-ucb",
                text="A2-RCGP-UCB beats GP-UCB under corruption",
                source="§6, Fig. 1",
            ),
            linear(
                "gp-ucb",
                env=EBK_HUGE,
                text="one 1e12 corruption derails GP-UCB for good: R_t linear",
                source="App. H (mean moves linearly in c)",
            ),
            *_floor((EBK_HUGE, EBK_PAPER), ("gp-ucb", *OLD, *NEW)),
        ),
        expect=(
            "Paper: RCGP variants beat GP-UCB; DiagnosticsGP sometimes does well. v1 "
            "Table 7 (A2, +-20 corruptions, 100 evaluations): 185.84 +- 26.01 in raw "
            "units — not comparable here (scaled f, grid, no initial design)."
        ),
    )
)


# ----------------------------------------------------------------- direct measurements
def _rollout(
    agent_name: str,
    env_id: str,
    seed: int,
    horizon: int | None,
    env_kwargs: dict[str, Any],
) -> dict[str, float]:
    kw = dict(env_kwargs)
    if horizon is not None:
        kw["horizon"] = horizon
    env = gym.make(env_id, **kw)
    env.reset(seed=seed)
    agent = agents.make(agent_name)
    agent.reset(env.unwrapped.problem, seed=seed)
    T = env.unwrapped.horizon
    R, hits, info = 0.0, 0, {}
    for _ in range(T):
        a = agent.act()
        _, y, _, _, info = env.step(a)
        agent.update(a, y)
        R += info["regret"]
        hits += bool(info.get("in_target", False))
    return {
        "regret": R,
        "success_rate": hits / T,
        "cost": float(info.get("corruption_used", 0.0)),
        "corrupted_rounds": float(info.get("corrupted_rounds", math.nan)),
    }


def attack_success(
    env_ids: Sequence[str],
    agent_names: Sequence[str] = ("gp-ucb",),
    seeds: Iterable[int] = range(5),
    horizon: int | None = None,
) -> pd.DataFrame:
    """Han–Scarlett's metrics per ``(env, agent, seed)``: ``success_rate`` (fraction of
    rounds with ``x_t`` in the target region, Attack-BO's ``success_rate`` at ``t = T``),
    ``cost`` (``sum_t |c_t(x_t)|``, Attack-BO's ``cum_c_t``) and ``regret`` ``R_T``.

    >>> df = attack_success(["hbo/HS-Forrester-Clipping-v0"], seeds=[0], horizon=20)
    >>> list(df.columns)
    ['env_id', 'agent', 'seed', 'regret', 'success_rate', 'cost', 'corrupted_rounds']
    """
    rows = [
        {"env_id": e, "agent": a, "seed": s, **_rollout(a, e, s, horizon, {})}
        for e in env_ids
        for a in agent_names
        for s in seeds
    ]
    return pd.DataFrame(rows)


def budget_sweep(
    env_id: str,
    param: str,
    values: Sequence[float],
    agent_names: Sequence[str],
    seeds: Iterable[int] = range(5),
    horizon: int | None = None,
) -> pd.DataFrame:
    """Each agent's ``R_T`` as a function of the budget ``param`` (``"C"`` for a
    Han–Scarlett env, ``"T_c"`` for a frequency-bounded one), one row per
    ``(budget, agent, seed)``."""
    seeds = list(seeds)
    rows = []
    for v in values:
        for a in agent_names:
            for s in seeds:
                r = _rollout(a, env_id, s, horizon, {param: v})
                rows.append({"env_id": env_id, param: v, "agent": a, "seed": s, **r})
    return pd.DataFrame(rows)


def plot_budget_sweep(df: pd.DataFrame, param: str, path: str) -> None:
    """Mean ``R_T`` +- 1.96 standard errors against the budget, one line per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for agent, g in df.groupby("agent", sort=False):
        s = g.groupby(param)["regret"]
        m, se = s.mean(), s.std(ddof=1) / np.sqrt(s.count())
        ax.errorbar(
            m.index,
            m.to_numpy(),
            yerr=1.96 * se.fillna(0).to_numpy(),
            label=agent,
            marker="o",
            capsize=2,
        )
    ax.set_xlabel(param)
    ax.set_ylabel("R_T")
    ax.set_title(str(df["env_id"].iloc[0]))
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


SWEEPS = {
    "hbo/HS-Forrester-Clipping-v0": ("C", (0.0, 1.0, 3.0, 10.0, 30.0)),
    "hbo/RCGP-Forrester-Frequency-v0": ("T_c", (0, 1, 2, 5, 10)),
}
SWEEP_AGENTS = ("gp-ucb", "gp-ucb-corruption", "fast-slow-gp-ucb", *NEW, "random")
