"""Bring your BoTorch agent: a SingleTaskGP + UpperConfidenceBound as an hbo-bench ``Agent``.

The agent works in coordinates (BoTorch's habit): it fits a ``SingleTaskGP`` to the points it
has played (scaled to the unit cube by the candidates' bounds) and their payoffs, evaluates
``UpperConfidenceBound`` on every candidate of the finite set and plays the best one. It
knows only ``problem`` (points, horizon, ...), like every agent. Then the script runs it
through the harness (:func:`hbo_envs.harness.evaluate`, 2 seeds) beside GP-UCB and random.

Needs the optional extra: ``pip install -e '.[botorch]'``.
Run: ``python examples/botorch_agent.py`` (a few seconds).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.mlls import ExactMarginalLogLikelihood


class BoTorchUCB:
    """GP-UCB with BoTorch: ``SingleTaskGP`` (fitted each round) + ``UpperConfidenceBound``.

    ``beta`` is BoTorch's UCB parameter (``mean + sqrt(beta) * std``); ``n_init`` rounds of
    uniformly random arms (from the agent's own seeded generator) come before the first fit.
    """

    def __init__(self, beta: float = 4.0, n_init: int = 3) -> None:
        if not (isinstance(beta, int | float) and math.isfinite(beta) and beta > 0):
            raise ValueError(f"The 'beta' parameter of BoTorchUCB must be > 0. Got {beta!r}.")
        if not (isinstance(n_init, int) and n_init >= 1):
            raise ValueError(f"The 'n_init' parameter of BoTorchUCB must be >= 1. Got {n_init!r}.")
        self.beta = float(beta)
        self.n_init = n_init
        self.name = "botorch-ucb"

    def reset(self, problem, *, seed=None) -> None:
        self.rng = np.random.default_rng(seed)
        points = np.asarray(problem.points, dtype=float)
        lo, hi = points.min(axis=0), points.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        self.X_all = torch.tensor((points - lo) / span, dtype=torch.double)  # unit cube
        self.n = len(points)
        self.X: list[int] = []
        self.Y: list[float] = []
        self.model = None

    def _fit(self) -> None:
        X = self.X_all[self.X]
        Y = torch.tensor(self.Y, dtype=torch.double).unsqueeze(-1)
        model = SingleTaskGP(X, Y)  # Standardize(m=1) outcome transform by default
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # optimizer/numerical warnings on tiny data
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        self.model = model

    def act(self) -> int:
        if len(self.Y) < self.n_init:
            return int(self.rng.integers(self.n))
        self._fit()
        with torch.no_grad():
            ucb = UpperConfidenceBound(self.model, beta=self.beta)(self.X_all.unsqueeze(1))
        return int(torch.argmax(ucb))

    def update(self, action: int, reward: float) -> None:
        self.X.append(int(action))
        self.Y.append(float(reward))

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and ``sqrt(beta) * std`` on every candidate (prior before a fit)."""
        if self.model is None:
            return np.zeros(self.n), np.full(self.n, math.sqrt(self.beta))
        with torch.no_grad():
            post = self.model.posterior(self.X_all)
            mean = post.mean.squeeze(-1).numpy()
            std = post.variance.clamp_min(0).sqrt().squeeze(-1).numpy()
        return mean.astype(float), (math.sqrt(self.beta) * std).astype(float)


if __name__ == "__main__":  # importable too: the leaderboard imports botorch_agent:BoTorchUCB
    from agents import check_agent
    from hbo_envs.harness import evaluate

    torch.set_num_threads(1)  # this script's choice: small fits, a shared machine
    check_agent(BoTorchUCB(), rounds=8)
    table = []
    for agent in (BoTorchUCB(), "gp-ucb", "random"):
        df = evaluate(
            agent, "hbo/RKHS-SE-StudentT-v0", seeds=2, horizon=20, progress=False, workers=1
        )
        last = df[df["t"] == df["t"].max()]  # "regret": cumulative regret R_t at round t
        label = agent if isinstance(agent, str) else agent.name
        table.append((label, float(last["regret"].mean())))
    for label, r in table:
        print(f"{label:12s} mean R_T (T = 20, 2 seeds) = {r:.3f}")
