"""Reward channels that replay real data (the real-data environments).

- :class:`EmpiricalRows` — ``y = Y[r, a]`` with a row ``r`` drawn uniformly per sample:
  the payoff of arm ``a`` is a uniformly drawn observation of that arm's real series
  (Chowdhury–Gopalan §6: a stock's price on a random day, a sensor's random test reading).
  Its mean is the column mean, so ``f(a) = mean_r Y[r, a]`` exactly, and its moment
  constants are exact for the empirical distribution:
  ``v = max_a mean_r |Y[r, a]|^{1+alpha}``, ``nu = max_a mean_r |Y[r, a] - f(a)|^{1+alpha}``.
- :class:`DailySequence` — ``y_t = Y[t, a]`` for round ``t`` in order (Park–Lee App. D: the
  chosen stock's change rate on test day ``t``); deterministic, no noise model, so its
  moment constants are supplied by the env (from a training period) rather than computed
  from the replayed table (which the agent must not know in advance).

>>> import numpy as np
>>> ch = EmpiricalRows(np.array([[1.0, 2.0], [3.0, 2.0]]))
>>> ch.means().tolist(), ch.moments(ch.means()).v, ch.moments(ch.means()).nu
([2.0, 2.0], 5.0, 1.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.validation import as_readonly, check_real

__all__ = ["DailySequence", "EmpiricalRows"]


def _table(owner: str, table: np.ndarray, rows: str) -> np.ndarray:
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] < 1 or not np.all(np.isfinite(t)):
        raise ValueError(
            f"The 'table' parameter of {owner} must be a finite 2-D array (rows = {rows}, "
            f"columns = arms). Got shape {t.shape} instead."
        )
    return t


class EmpiricalRows(RewardChannel):
    """``y = Y[r, a]``, ``r`` uniform over the rows (see the module docstring).

    ``table`` has one row per observation and one column per arm; ``label`` names the data.
    """

    name = "empirical"

    def __init__(self, table: np.ndarray, alpha: float = 1.0, label: str = "") -> None:
        t = _table("EmpiricalRows", table, "observations")
        self.table = as_readonly(t)
        self.alpha = check_real("EmpiricalRows", "alpha", alpha, 0, 1, "right")
        self.label = label
        self._cols = [t[:, a].tolist() for a in range(t.shape[1])]  # fast per-sample lookup
        self._rows = t.shape[0]

    def means(self) -> np.ndarray:
        """``f(a) = mean_r Y[r, a]``: the mean reward of every arm."""
        return self.table.mean(axis=0)

    def validate(self, f: np.ndarray) -> None:
        if not np.allclose(np.asarray(f, dtype=float), self.means(), rtol=1e-12, atol=0):
            raise ValueError(
                "EmpiricalRows: the objective values must be the column means of the table "
                "(the channel's mean reward)."
            )

    def moments(self, f: np.ndarray) -> Moments:
        """Exact moments of the empirical distribution of every arm (see module docstring)."""
        self.validate(f)
        p = 1.0 + self.alpha
        mu = self.means()
        v = float(np.max(np.mean(np.abs(self.table) ** p, axis=0)))
        nu = float(np.max(np.mean(np.abs(self.table - mu) ** p, axis=0)))
        scale = float(np.max(self.table.std(axis=0)))
        return Moments(self.alpha, v, nu, scale)

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        return self._cols[index][int(rng.integers(self._rows))]

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "data": self.label, "rows": self._rows, "alpha": self.alpha}


class SequenceState:
    """The round counter of a :class:`DailySequence` episode."""

    __slots__ = ("t",)

    def __init__(self) -> None:
        self.t = 0


class DailySequence(RewardChannel):
    """``y_t = Y[t, a]`` in round order (see the module docstring); no randomness.

    ``constants`` are the moment constants the agent is told (the env computes them from
    data the agent may know, e.g. a training period); :meth:`moments` returns them.
    """

    name = "daily_sequence"

    def __init__(self, table: np.ndarray, constants: Moments, label: str = "") -> None:
        t = _table("DailySequence", table, "rounds")
        self.table = as_readonly(t)
        self.constants = constants
        self.alpha = check_real("DailySequence", "alpha", constants.alpha, 0, 1, "right")
        self.label = label
        self._rows = [row.tolist() for row in t]

    def moments(self, f: np.ndarray) -> Moments:
        return self.constants

    def new_episode(self, f: np.ndarray, rng: np.random.Generator) -> SequenceState:
        return SequenceState()

    def sample(self, f_x: float, index: int, rng: np.random.Generator, state: Any = None) -> float:
        y = self._rows[state.t][index]
        state.t += 1
        return y

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "data": self.label, "rounds": len(self._rows)}
