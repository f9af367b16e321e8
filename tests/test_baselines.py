"""Every reference agent beats uniform play on the papers' own settings (issue 7).

Over the registry of experiments (every env of every ``kind="regret"`` experiment, every
agent it lists that :func:`agents.available` provides, with the experiment's parameters,
minus the experiment's stated exclusions): the mean final cumulative regret ``R_T`` over
10 seeds has a 95% stratified-bootstrap CI entirely below the ``random`` agent's, at the
horizon :data:`HORIZON` states for the env, unless the pair is in
:data:`hbo_envs.harness.known_failures.KNOWN_FAILURES` (then it must still fail, so a
fixed pair has to leave the table). New agents (e.g. ATA-GP-UCB once registered) and new
experiments are picked up automatically; a new env must get a :data:`HORIZON` entry.

Why 10 seeds (40 for the cheap random floor) are enough: the CIs are of the mean over
seeds of ``R_T``; measured, every pair that is not a listed failure has its CI apart from
random's by a margin of several CI half-widths (numbers in the README), so 10 seeds
decide it.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from hbo_envs.harness.experiments import EXPERIMENTS
from hbo_envs.harness.known_failures import KNOWN_FAILURES, known_failures_markdown
from hbo_envs.harness.stats import stratified_bootstrap_ci

SEEDS = 10
#: The random floor costs ~1 µs a round, so it gets 40 seeds (its CI is the wide one on
#: the CG envs, where f is redrawn per seed: R_T's spread over f dominates).
RANDOM_SEEDS = 40

#: Horizon per env at which theory says learning must show, and why.
HORIZON: dict[str, tuple[int, str]] = {
    # CG Fig. 1(a)-(c): 100 arms, f redrawn per seed with max|f| = 1; T = 5000, the quick
    # horizon (50 plays per arm under any width; MoM-GP-UCB gets N = 434 episodes).
    # Measured at T = 2000 the TGP-UCB CIs still overlap random's on (a) and (c)
    # (808 [696, 925] vs 1034 [841, 1233] at 10 seeds each).
    "hbo/RKHS-SE-StudentT-v0": (5000, "100 arms, 50 plays per arm"),
    # Pareto: MoM-GP-UCB at T = 5000 measured 796 [727, 875] vs random 918 [844, 992]
    # (10 / 40 seeds, CIs overlap); at 2*10^4 2450 [2250, 2649] vs 3577 [3111, 4052].
    "hbo/RKHS-SE-Pareto-v0": (10_000, "100 arms, 100 plays per arm"),
    "hbo/RKHS-Matern-StudentT-v0": (5000, "100 arms, 50 plays per arm"),
    # PL Fig. 1: the env default T = 1000 (the paper does not state T).
    "hbo/RKHS1D-SymPareto-eps02-v0": (1000, "1000 arms but lengthscale 1 on [-10, 10]"),
    "hbo/RKHS1D-SymPareto-eps08-v0": (1000, "1000 arms but lengthscale 1 on [-10, 10]"),
    "hbo/Griewank2D-SymPareto-eps02-v0": (1000, "400 arms, 2.5 plays per arm"),
    "hbo/Griewank2D-SymPareto-eps08-v0": (1000, "400 arms, 2.5 plays per arm"),
    # Real data (CG Fig. 1d/e, PL Table 2): T = 1000, the papers' horizon; 29 / 41 arms get
    # 34 / 24 plays each under uniform play, the 3-arm stock picking 333.
    "hbo/Stocks29-v0": (1000, "29 arms, 34 plays per arm"),
    "hbo/LightSensor-v0": (1000, "41 arms, 24 plays per arm"),
    "hbo/StockPicking-v0": (1000, "3 arms, 333 plays per arm (the paper's 1000 test days)"),
}

#: Agents whose pairs are not re-run here, with the reason: their verdicts against random
#: come from the full reproductions (``hbo-bench reproduce cg2019-fig1a|b|c``, numbers in
#: the README), and their measured failures are still listed in KNOWN_FAILURES (for the
#: verdict lines); their exactness is tested against a naive Algorithm 2 in
#: ``tests/test_ata_gp_ucb.py``.
NOT_IN_CI_AGENTS: dict[str, str] = {
    name: (
        "a round costs 0.2-0.6 ms on 100 arms at T = 5000 (an eigendecomposition in "
        "feature space per round, as Algorithm 2 prints) and ~0.2 s on Park-Lee's "
        "1000-arm 1D env with Nystrom, so 10 seeds on every env cost well over the CI "
        "budget (the 1D env alone ~40 min)"
    )
    for name in ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom")
}

#: Envs whose pairs are not re-run here, with the reason. Every available pair on them must
#: be in KNOWN_FAILURES (so nothing is silently unverified); ``hbo-bench reproduce
#: pl2024-fig1`` measures them (10 seeds, T = 1000) and its below-random verdicts say so.
NOT_IN_CI: dict[str, str] = {
    env: (
        "5000 arms: a round of a UCB agent costs ~20 ms (an O(n^2) covariance update), so "
        "10 seeds x 4 agents at any horizon where learning could show exceed the CI budget "
        "many times; and no such horizon <= 1000 exists (see KNOWN_FAILURES)"
    )
    for env in ("hbo/Griewank5D-SymPareto-eps02-v0", "hbo/Griewank5D-SymPareto-eps08-v0")
}


def _pairs() -> dict[str, dict[str, tuple[str, dict]]]:
    """``env -> {label: (agent name, params)}`` over the registry of regret experiments."""
    have = set(agents.available())
    out: dict[str, dict[str, tuple[str, dict]]] = {}
    for exp in EXPERIMENTS.values():
        if exp.kind != "regret":
            continue
        specs, _ = exp.agent_specs(available=have)
        for env in exp.envs:
            for s in exp.specs_for(env, specs):
                if s.kind == "name" and s.source != "random":
                    out.setdefault(env, {})[s.label] = (s.source, dict(s.params))
    return out


PAIRS = _pairs()


def final_regret(name: str, params: dict, env: gym.Env, seed: int) -> float:
    """``R_T`` of one run (``reset(seed=...)`` determines the episode, f included)."""
    T = env.unwrapped.problem.horizon
    env.reset(seed=seed)
    agent = agents.make(name, **params)
    agent.reset(env.unwrapped.problem, seed=seed)
    R = 0.0
    for _ in range(T):
        a = agent.act()
        _, y, _, _, info = env.step(a)
        agent.update(a, y)
        R += info["regret"]
    return R


def test_every_registry_env_has_a_horizon_and_the_table_is_about_listed_pairs():
    assert set(PAIRS) <= set(HORIZON) | set(NOT_IN_CI), set(PAIRS) - set(HORIZON)
    for agent, env in KNOWN_FAILURES:
        assert agent in PAIRS.get(env, {}), (agent, env)
    for env in NOT_IN_CI:
        unlisted = [
            a
            for a in PAIRS.get(env, {})
            if (a, env) not in KNOWN_FAILURES and a not in NOT_IN_CI_AGENTS
        ]
        assert not unlisted, f"{env}: {unlisted} neither tested here nor in KNOWN_FAILURES"


@pytest.mark.parametrize("env_id", sorted(set(PAIRS) - set(NOT_IN_CI)))
def test_every_reference_agent_beats_random(env_id):
    T, _ = HORIZON[env_id]
    env = gym.make(env_id, horizon=T)  # built once: the 5D env's B costs a 5000^2 solve
    rnd = np.array([final_regret("random", {}, env, s) for s in range(RANDOM_SEEDS)])
    r_lo, r_hi = stratified_bootstrap_ci(rnd)
    failures = []
    for label, (name, params) in PAIRS[env_id].items():
        if name in NOT_IN_CI_AGENTS:
            continue
        R = np.array([final_regret(name, params, env, s) for s in range(SEEDS)])
        lo, hi = stratified_bootstrap_ci(R)
        msg = (
            f"{label} on {env_id}, T = {T}: R_T {R.mean():.1f} [{lo:.1f}, {hi:.1f}] vs random "
            f"{rnd.mean():.1f} [{r_lo:.1f}, {r_hi:.1f}] ({SEEDS} / {RANDOM_SEEDS} seeds)"
        )
        known = KNOWN_FAILURES.get((label, env_id))
        if known is None and not hi < r_lo:
            failures.append("does not beat random: " + msg)
        elif known is not None and hi < r_lo:
            failures.append("listed in KNOWN_FAILURES but beats random now: " + msg)
    assert not failures, "\n".join(failures)


def test_readme_lists_the_known_failures():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert known_failures_markdown() in readme, (
        "README known-failures table is stale: paste "
        "hbo_envs.harness.known_failures.known_failures_markdown() into it"
    )
