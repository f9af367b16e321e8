"""A user's script against hbo-bench's public API, type-checked in CI against the *installed*
package (``.ci/run``: ``mypy --strict`` from outside the checkout; tests/test_typing.py).

It is what a BO user writes: make an env, read its problem, run an agent and an ask/tell
optimiser, and evaluate through the harness. mypy must see every name here with its real type
(a wrong script, tests/typing/wrong_script.py, is rejected).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import agents
import hbo_envs
from agents import Agent, check_agent
from hbo_envs.coordinates import AskTellAgent, CoordinateBandit, nearest_index
from hbo_envs.envs import GPBanditEnv
from hbo_envs.harness import evaluate
from hbo_envs.problem import Problem
from hbo_envs.registration import default_horizon


class RandomSearch:
    """An ask/tell optimiser: uniform points of the candidates' bounding box."""

    def __init__(self, problem: Problem, bounds: np.ndarray, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self.bounds = bounds
        self.n = problem.n

    def ask(self) -> np.ndarray:
        return np.asarray(self.rng.uniform(self.bounds[0], self.bounds[1]), dtype=np.float64)

    def tell(self, x: np.ndarray, y: float, *, asked: np.ndarray) -> None:
        pass


def first_ids(k: int) -> list[str]:
    ids: tuple[str, ...] = hbo_envs.ENV_IDS
    return list(ids[:k])


def regret_of(agent: Agent, env_id: str, horizon: int) -> float:
    env = gym.make(env_id, horizon=horizon)
    bandit: GPBanditEnv = env.unwrapped  # type: ignore[assignment]
    problem: Problem = bandit.problem
    agent.reset(problem, seed=0)
    env.reset(seed=0)
    total = 0.0
    for _ in range(horizon):
        a: int = agent.act()
        _, reward, _, _, info = env.step(a)
        agent.update(a, float(reward))
        total += float(info["regret"])
    return total


def main() -> None:
    env_id = first_ids(1)[0]
    T: int = default_horizon(env_id) // 1000
    ucb: Agent = agents.make("gp-ucb")
    print(env_id, regret_of(ucb, env_id, T))
    bench = CoordinateBandit("hbo/GPBandit-v0", horizon=5).reset(seed=0)
    x, y = bench.evaluate(bench.bounds[0])
    i: int = nearest_index(bench.candidates, x)
    best: float = bench.optimal_value
    print(i, y <= best + 100.0, bench.dim)
    searcher = AskTellAgent(RandomSearch, name="random-search")
    check_agent(searcher, rounds=4)
    df = evaluate(searcher, "hbo/GPBandit-v0", seeds=1, horizon=5, workers=1)
    print(df["regret"].iloc[-1])


if __name__ == "__main__":
    main()
