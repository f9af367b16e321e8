"""Bring your ask/tell optimiser: Optuna's TPE as an hbo-bench ``Agent`` via ``AskTellAgent``.

The bench plays only candidates (``problem.points``): :class:`hbo_envs.coordinates.AskTellAgent`
plays the candidate nearest to the point Optuna asks for and tells the optimiser that *played*
point with its payoff, plus the asked point (``tell(x_played, y, asked=x_asked)``). Telling the
asked trial the payoff would teach TPE the value of a point that was never evaluated, so
:class:`TPEOptimizer` closes the asked trial as failed when the two differ and adds the played
point as a completed trial (``study.add_trial``); when the asked point is a candidate the trial
is completed as asked.

:class:`OptunaTPE` is a module-level class built as ``OptunaTPE(**params)``, so the command line
and the leaderboards take it by import path (the folder ``examples/`` on the path)::

    PYTHONPATH=examples hbo-bench run --env hbo/RKHS-SE-StudentT-v0 \\
        --agent 'optuna_agent:OptunaTPE[n_startup_trials=5]' --seeds 0-1 --horizon 30 --out runs/tpe
    PYTHONPATH=examples hbo-bench leaderboard submit --suite heavy-tailed-v0 \\
        --agent optuna_agent:OptunaTPE --out optuna-tpe.json

Needs the optional extra: ``pip install -e '.[optuna]'``.
Run: ``python examples/optuna_agent.py`` (a few seconds).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import optuna
from optuna.distributions import FloatDistribution
from optuna.samplers import TPESampler
from optuna.trial import TrialState, create_trial

from hbo_envs.coordinates import AskTellAgent

__all__ = ["OptunaTPE", "TPEOptimizer"]


class TPEOptimizer:
    """An Optuna study (TPE, maximising) over the candidates' bounding box, ask/tell style.

    ``ask()`` opens a trial and returns its point; ``tell(x, y, asked=...)`` completes that
    trial with ``y`` when ``x`` (the played candidate) is the asked point, and otherwise fails
    the asked trial and adds ``x`` as a completed trial with value ``y``.
    """

    def __init__(
        self,
        problem: Any,
        bounds: np.ndarray,
        seed: int | None,
        *,
        n_startup_trials: int = 10,
        multivariate: bool = True,
    ) -> None:
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # no log line per trial
        self.names = [f"x{i}" for i in range(bounds.shape[1])]
        self.distributions = {
            n: FloatDistribution(float(lo), float(hi))
            for n, lo, hi in zip(self.names, bounds[0], bounds[1], strict=True)
        }
        sampler = TPESampler(
            seed=seed, n_startup_trials=n_startup_trials, multivariate=multivariate
        )
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self.trial: optuna.Trial | None = None

    def ask(self) -> np.ndarray:
        self.trial = self.study.ask(self.distributions)
        return np.array([self.trial.params[n] for n in self.names])

    def tell(self, x: np.ndarray, y: float, *, asked: np.ndarray) -> None:
        if self.trial is not None and np.array_equal(x, asked):
            self.study.tell(self.trial, y)  # the asked point was played
        else:
            if self.trial is not None:  # never evaluated: not a result
                self.study.tell(self.trial, state=TrialState.FAIL)
            params = {n: float(v) for n, v in zip(self.names, x, strict=True)}
            self.study.add_trial(
                create_trial(params=params, distributions=self.distributions, value=y)
            )
        self.trial = None


class OptunaTPE(AskTellAgent):
    """Optuna's TPE sampler as an ``Agent`` (importable as ``optuna_agent:OptunaTPE``).

    ``n_startup_trials``: random trials before TPE models the history (Optuna's parameter);
    ``multivariate``: TPE's joint model of all coordinates. The sampler is seeded with the
    seed ``reset`` gets, so a seed gives the same actions in any process.
    """

    def __init__(self, n_startup_trials: int = 10, multivariate: bool = True) -> None:
        if not isinstance(n_startup_trials, int) or isinstance(n_startup_trials, bool):
            raise ValueError(
                "The 'n_startup_trials' parameter of OptunaTPE must be an int >= 0. "
                f"Got {n_startup_trials!r} instead."
            )
        if n_startup_trials < 0:
            raise ValueError(
                "The 'n_startup_trials' parameter of OptunaTPE must be an int >= 0. "
                f"Got {n_startup_trials!r} instead."
            )
        if not isinstance(multivariate, bool):
            raise ValueError(
                "The 'multivariate' parameter of OptunaTPE must be a bool. "
                f"Got {multivariate!r} instead."
            )
        factory = functools.partial(
            TPEOptimizer, n_startup_trials=n_startup_trials, multivariate=multivariate
        )
        super().__init__(factory, name="optuna-tpe")


if __name__ == "__main__":
    from agents import check_agent
    from hbo_envs.harness import evaluate

    check_agent(OptunaTPE(n_startup_trials=3), rounds=8)
    for agent in (OptunaTPE(n_startup_trials=5), "gp-ucb", "random"):
        df = evaluate(
            agent,
            "hbo/Griewank2D-SymPareto-eps02-v0",
            seeds=2,
            horizon=30,
            progress=False,
            workers=1,
        )
        last = df[df["t"] == df["t"].max()]  # "regret": cumulative regret R_t at round t
        label = agent if isinstance(agent, str) else agent.name
        print(f"{label:12s} mean R_T (T = 30, 2 seeds) = {float(last['regret'].mean()):.3f}")
