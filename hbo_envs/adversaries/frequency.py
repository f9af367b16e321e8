"""The frequency-bounded adversary of Ezzerg, Bogunovic & Knoblauch (2025), RCGP-UCB paper.

``../shared/papers/beyond/ezzerg-bogunovic-knoblauch-2025-rcgp-ucb.md`` §1 (Def. 2.1):
after seeing ``x_t`` the adversary picks ``c_t``; the **magnitude is unbounded** and only
the **number of corrupted rounds** ``T_c = |{t : c_t != 0}|`` is budgeted. Contrast with
the sum budget ``C = sum_t |c_t|`` of Bogunovic et al. (2020) and Han & Scarlett (2022):
one corruption of ``1e12`` costs one round here.

- :class:`FrequencyLedger` — the rule: at most ``T_c`` corrupted rounds, ``|c_t| <= max_abs``
  (a finite float cap, default ``1e15``, so the observed reward stays a finite float; the
  note's ``+-inf`` corruptions are represented by huge finite ones). Same interface as
  :class:`~hbo_envs.adversaries.base.CorruptionLedger`; ``rounds`` counts the corrupted
  rounds (the budget's unit), ``used`` is ``sum_t |c_t(x_t)|`` (what the env reports as
  ``corruption_used``, as every corrupted env does).
- :class:`ClairvoyantAdversary` — the experiments' adversary (note §6, Forrester): it
  corrupts the earliest qualifying queries until ``T_c`` is spent; a query within ``near``
  of ``x*`` has its mean set to ``low``, a query farther than ``far`` from ``x*`` to
  ``high`` (``c_t = value - f(x_t)``); queries in between are left alone.

>>> import numpy as np
>>> led = FrequencyLedger(T_c=1, max_abs=1e15)
>>> led.charge(np.array([0.0, 1e12]), 1), led.rounds, led.remaining, led.used
(1000000000000.0, 1, 0, 1000000000000.0)
>>> led.charge(np.array([0.0, 5.0]), 1)          # budget of rounds spent: refused
0.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_int, check_real

__all__ = ["MAX_ABS", "ClairvoyantAdversary", "FrequencyLedger"]

#: Largest allowed cap on ``|c_t|``: ``f + eta + c`` stays finite for any sane ``f + eta``.
MAX_ABS = 1e300


@dataclass
class FrequencyLedger:
    """At most ``T_c`` rounds with ``c_t(x_t) != 0``, ``|c_t| <= max_abs`` (module docstring).

    ``clipped`` / ``n_clipped`` count the corruptions refused because the rounds ran out.
    """

    T_c: int
    max_abs: float = 1e15
    rounds: int = 0
    used: float = 0.0
    clipped: float = 0.0
    n_clipped: int = 0
    owner: str = field(default="FrequencyLedger", repr=False)

    def __post_init__(self) -> None:
        self.T_c = check_int(self.owner, "T_c", self.T_c, 0, None)
        self.max_abs = check_real(self.owner, "max_abs", self.max_abs, 0.0, MAX_ABS, "right")

    @property
    def remaining(self) -> int:
        return max(self.T_c - self.rounds, 0)

    def reset(self) -> None:
        self.rounds, self.used, self.clipped, self.n_clipped = 0, 0.0, 0.0, 0

    def charge(self, c: np.ndarray | None, action: int) -> float:
        """Apply the rules to the request ``c`` (shape ``(n,)``) and return ``c_t(x_t)``."""
        if c is None:
            return 0.0
        value = float(np.asarray(c, dtype=float)[action])
        if not np.isfinite(value):
            raise FloatingPointError("the adversary proposed a non-finite corruption")
        value = min(max(value, -self.max_abs), self.max_abs)
        if value == 0.0:
            return 0.0
        if self.remaining == 0:
            self.clipped += abs(value)
            self.n_clipped += 1
            return 0.0
        self.rounds += 1
        self.used += abs(value)
        return value


@dataclass(frozen=True)
class ClairvoyantAdversary(Adversary):
    """Corrupt the earliest queries near / far from ``x*`` (Ezzerg et al. 2025, note §6).

    ``c_t = low - f(x_t)`` when ``|x_t - x*| < near``; ``c_t = high - f(x_t)`` when
    ``|x_t - x*| > far``; otherwise 0 (Euclidean distance in the points' units). With the
    env's :class:`FrequencyLedger` this stops after ``T_c`` corrupted rounds. The paper's
    main text uses radii 0.2 / 0.5, its App. I.4.2 0.1 / 0.4 with ``high = 25``,
    ``low = -10`` (raw Forrester units; the note records the disagreement); the defaults
    here are the main text's radii and ``high = 1e12``, ``low = -1e12`` (the unbounded
    magnitudes the setting allows).
    """

    near: float = 0.2
    far: float = 0.5
    high: float = 1e12
    low: float = -1e12
    name = "clairvoyant"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "near", check_real(owner, "near", self.near, 0, None, "left"))
        object.__setattr__(self, "far", check_real(owner, "far", self.far, self.near, None, "left"))
        for nm in ("high", "low"):
            object.__setattr__(
                self, nm, check_real(owner, nm, getattr(self, nm), -MAX_ABS, MAX_ABS, "both")
            )

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        d = np.linalg.norm(points - points[int(np.argmax(f))], axis=1)
        c = np.zeros(f.size)
        c[d < self.near] = self.low - f[d < self.near]
        c[d > self.far] = self.high - f[d > self.far]
        return c

    def propose(self, view: AdversaryView) -> np.ndarray:
        return view.state
