"""``agents.check_agent``: passes for every registered agent, catches broken ones."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import hbo_envs  # noqa: F401  (registers the envs)
from agents import AgentCheckError, check_agent


@pytest.mark.parametrize("name", agents.available())
def test_check_agent_passes_for_every_registered_agent(name):
    check_agent(agents.make(name))


@pytest.mark.parametrize("name", agents.available())
def test_check_agent_passes_on_an_env_problem(name):
    env = gym.make("hbo/RKHS1D-SymPareto-eps02-v0", horizon=120)
    env.reset(seed=0)
    # Every agent with schedule sets is checked on its theory set (the largest widths);
    # the random floor has no schedules.
    theory = {"schedule": "theory"} if "schedule" in agents.make(name).get_params() else {}
    check_agent(agents.make(name, **theory), env.unwrapped.problem, rounds=60)


class Uniform:
    """A minimal correct third-party agent."""

    name = "uniform"

    def reset(self, problem, *, seed=None):
        self.n = problem.n
        self.rng = np.random.default_rng(seed)
        self.sums = np.zeros(self.n)
        self.counts = np.zeros(self.n)

    def act(self):
        return int(self.rng.integers(self.n))

    def update(self, action, reward):
        self.sums[action] += reward
        self.counts[action] += 1

    def posterior(self):
        mean = self.sums / np.maximum(self.counts, 1)
        return mean, 1.0 / np.sqrt(np.maximum(self.counts, 1))


def test_a_correct_third_party_agent_passes():
    check_agent(Uniform())


class FloatAction(Uniform):
    def act(self):
        return float(super().act())


class OutOfRange(Uniform):
    def act(self):
        return self.n


class GlobalRandom(Uniform):
    def act(self):
        return int(np.random.randint(self.n))  # noqa: NPY002 (the bug under test)


class LeakyState(Uniform):
    def reset(self, problem, *, seed=None):
        if not hasattr(self, "sums"):
            super().reset(problem, seed=seed)
        self.n, self.rng = problem.n, np.random.default_rng(seed)


class WrongShape(Uniform):
    def posterior(self):
        m, w = super().posterior()
        return m[:-1], w[:-1]


class NaNWidth(Uniform):
    def posterior(self):
        m, w = super().posterior()
        return m, w * np.nan


class NegativeWidth(Uniform):
    def posterior(self):
        m, w = super().posterior()
        return m, -w


class Overflow(Uniform):
    def update(self, action, reward):
        self.sums[action] += np.float64(reward) ** 40


class Mutator(Uniform):
    def reset(self, problem, *, seed=None):
        super().reset(problem, seed=seed)
        problem.meta["touched"] = True


class PositionalSeed(Uniform):
    def reset(self, problem, seed):
        super().reset(problem, seed=seed)


class BadShare(Uniform):
    def diagnostics(self):
        return {"altered_fraction": 2.0}


class NotAMapping(Uniform):
    def diagnostics(self):
        return 0.5


class NegativeSigma(Uniform):
    def posterior_sd(self):
        return -np.ones(self.n)


class ShortSigma(Uniform):
    def posterior_sd(self):
        return np.ones(self.n - 1)


class NoName:
    def reset(self, problem, *, seed=None): ...

    def act(self):
        return 0


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (FloatAction(), "must return an integer index"),
        (OutOfRange(), "outside"),
        (GlobalRandom(), "not deterministic under reset"),
        (LeakyState(), "not deterministic under reset"),
        (WrongShape(), "must have shape (20,)"),
        (NaNWidth(), "NaN or infinite"),
        (NegativeWidth(), "non-negative"),
        (Overflow(), "NaN or infinite"),
        (Mutator(), "mutated problem.meta"),
        (NoName(), "does not implement the Agent protocol"),
        (BadShare(), "altered_fraction must be a real in [0, 1]"),
        (NotAMapping(), "diagnostics() after reset must return a mapping"),
        (NegativeSigma(), "posterior_sd() after reset must be finite and non-negative"),
        (ShortSigma(), "posterior_sd() after reset must return a real array of shape (20,)"),
    ],
)
def test_check_agent_catches_broken_agents(agent, message):
    with pytest.raises(AgentCheckError) as err:
        with np.errstate(over="ignore", invalid="ignore"):
            check_agent(agent)
    assert message in str(err.value)


def test_positional_seed_is_accepted_when_passed_by_keyword():
    check_agent(PositionalSeed())  # keyword-callable, so it conforms
