"""Coordinates in, coordinates out: an env as a BO test function, and an ask/tell optimiser
as an agent.

Run: ``python examples/ask_tell.py`` (about a second).
"""

import numpy as np

from hbo_envs.coordinates import AskTellAgent, CoordinateBandit
from hbo_envs.harness import evaluate

# 1. The env as a test function: bounds, optimum, evaluate(x) -> (x_played, y).
bench = CoordinateBandit("hbo/Griewank2D-SymPareto-eps02-v0", horizon=50)
bench.reset(seed=0)
print("bounds", bench.bounds.tolist(), "dim", bench.dim)
print("optimal value", round(bench.optimal_value, 6), "at", bench.optimizers)
x_played, y = bench.evaluate([0.3, -0.2])  # the nearest grid point is played
print("asked [0.3, -0.2], played", x_played.round(4).tolist(), "regret", bench.last_info["regret"])
x_played, y = bench.evaluate(bench.optimizers[0])  # a candidate is played exactly
print("asked the optimizer, regret", bench.last_info["regret"])


# 2. Any ask/tell optimiser as an Agent: here a tiny "best so far + local jitter" search.
class JitterSearch:
    def __init__(self, problem, bounds, seed):
        self.rng = np.random.default_rng(seed)
        self.bounds = bounds
        self.best_x, self.best_y = None, -np.inf

    def ask(self):
        if self.best_x is None or self.rng.random() < 0.3:
            return self.rng.uniform(self.bounds[0], self.bounds[1])
        return self.best_x + self.rng.normal(0, 0.5, size=self.best_x.shape)

    def tell(self, x, y):
        if y > self.best_y:
            self.best_x, self.best_y = x, y


agent = AskTellAgent(JitterSearch, name="jitter-search")
df = evaluate(
    agent, "hbo/Griewank2D-SymPareto-eps02-v0", seeds=2, horizon=50, workers=1, progress=False
)
last = df[df["t"] == df["t"].max()]
print("jitter-search mean R_T (T = 50, 2 seeds):", round(float(last["regret"].mean()), 3))
