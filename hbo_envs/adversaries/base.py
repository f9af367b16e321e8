"""The adversary interface and the budget ledger every corruption goes through.

Setting: Bogunovic, Krause & Scarlett (AISTATS 2020), §2. At round ``t`` the adversary
picks a corruption function ``c_t : D -> [-B_0, B_0]`` knowing ``f``, the previous actions,
the uncorrupted observations ``y_1, ..., y_{t-1}`` and its own past corruptions; the agent
observes ``y~_t = y_t + c_t(x_t)`` (eq. (1)). The problem is *C-corrupted* when
``sum_t max_x |c_t(x)| <= C`` (eq. (2)).

An :class:`Adversary` only *proposes* ``c_t`` (a vector over the candidate set). The
:class:`CorruptionLedger` owned by the env enforces the rules, whatever the adversary asks
for, so no adversary (ours or a user's) can exceed them:

- ``|c_t(x)| <= B_0`` for every ``x`` (a larger request is clipped to ``[-B_0, B_0]``);
- the running total of charges never exceeds the budget ``C``: a request that costs more
  than what remains is clipped to ``[-remaining, remaining]`` (so its cost is exactly the
  remainder), and the refused amount is recorded (``clipped``, ``n_clipped``).

Two information models, chosen by ``info_model``:

- ``"paper"`` — the paper's model: ``c_t(.)`` is fixed *before* ``x_t`` is revealed, and a
  round costs ``max_x |c_t(x)|`` (eq. (2)), whether or not the agent plays a corrupted
  point.
- ``"targeted"`` — the adversary sees ``x_t`` and corrupts only that point; a round costs
  ``|c_t(x_t)|`` (how the Figure 1 story spends its budget: only observations *sampled* in
  the region around ``x*`` are corrupted). ``sum_t |c_t(x_t)|`` is then the paper's
  eq. (2) for the corruption function that is ``c_t(x_t)`` at ``x_t`` and 0 elsewhere.

>>> import numpy as np
>>> led = CorruptionLedger(budget=1.0, B0=0.6, info_model="paper")
>>> float(led.charge(np.array([0.0, -0.9, 0.2]), 2))   # clipped to B0: max|c| = 0.6
0.2
>>> led.used
0.6
>>> float(led.charge(np.array([0.5, -0.5, 0.5]), 1))   # only 0.4 left: clipped to 0.4
-0.4
>>> led.used, round(led.clipped, 12), led.n_clipped
(1.0, 0.1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hbo_envs.validation import check_choice, check_real

__all__ = ["INFO_MODELS", "Adversary", "AdversaryView", "CorruptionLedger"]

#: The two information models (see the module docstring).
INFO_MODELS = ("paper", "targeted")


@dataclass
class AdversaryView:
    """What the adversary knows when it picks ``c_t`` (Bogunovic et al. §2).

    ``f`` and ``points`` are the objective on the candidate set; ``actions``, ``rewards``
    (uncorrupted ``y_s``) and ``corruptions`` (``c_s(x_s)``) the history of rounds
    ``1 .. t-1`` (lists, oldest first); ``action`` is ``x_t``'s index under the
    ``"targeted"`` model and ``None`` under ``"paper"``; ``remaining`` the budget left;
    ``state`` what :meth:`Adversary.new_episode` returned; ``rng`` the env's generator.
    """

    f: np.ndarray
    points: np.ndarray
    t: int
    actions: list[int]
    rewards: list[float]
    corruptions: list[float]
    action: int | None
    remaining: float
    B0: float
    state: Any
    rng: np.random.Generator


class Adversary:
    """Base class: a frozen dataclass of parameters that proposes ``c_t`` each round.

    Subclasses implement :meth:`propose` (and :meth:`new_episode` when they precompute
    something from ``f``, e.g. the region around ``x*``). The object never changes during
    an episode; per-episode state lives in what ``new_episode`` returns.
    """

    name: str = "adversary"

    def new_episode(
        self, f: np.ndarray, points: np.ndarray, B0: float, rng: np.random.Generator
    ) -> Any:
        """Per-episode state computed from the objective (default: none)."""
        return None

    def propose(self, view: AdversaryView) -> np.ndarray | None:  # pragma: no cover - abstract
        """The requested corruption ``c_t`` over the candidate set, shape ``(n,)``, or
        ``None`` for no corruption this round."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """``{"name": ..., **parameters}`` (the dataclass fields; just the name otherwise)."""
        from dataclasses import asdict, is_dataclass

        return {"name": self.name, **(asdict(self) if is_dataclass(self) else {})}


@dataclass
class CorruptionLedger:
    """Enforces ``|c_t| <= B0`` and ``sum_t charge_t <= budget`` (see the module docstring).

    Attributes ``used`` (budget spent), ``clipped`` (total requested charge that was refused
    because of the budget) and ``n_clipped`` (rounds in which that happened).
    """

    budget: float
    B0: float
    info_model: str = "paper"
    used: float = 0.0
    clipped: float = 0.0
    n_clipped: int = 0
    owner: str = field(default="CorruptionLedger", repr=False)

    def __post_init__(self) -> None:
        self.budget = check_real(self.owner, "C", self.budget, 0.0, None, "left")
        self.B0 = check_real(self.owner, "B0", self.B0, 0.0, None, "neither")
        check_choice(self.owner, "info_model", self.info_model, INFO_MODELS)

    @property
    def remaining(self) -> float:
        return max(self.budget - self.used, 0.0)

    def reset(self) -> None:
        self.used, self.clipped, self.n_clipped = 0.0, 0.0, 0

    def charge(self, c: np.ndarray | None, action: int) -> float:
        """Apply the rules to the request ``c`` (shape ``(n,)``) and return ``c_t(x_t)``."""
        if c is None:
            return 0.0
        c = np.asarray(c, dtype=float)
        if not np.all(np.isfinite(c)):
            raise FloatingPointError("the adversary proposed a non-finite corruption")
        c = np.clip(c, -self.B0, self.B0)  # c_t : D -> [-B0, B0]
        if self.info_model == "paper":
            cost = float(np.max(np.abs(c))) if c.size else 0.0  # eq. (2): max_x |c_t(x)|
        else:
            cost = abs(float(c[action]))  # targeted: only c_t(x_t) is spent
        if cost == 0.0:
            return 0.0
        left = self.remaining
        if cost > left:  # a request for more than the budget left is clipped to it
            self.clipped += cost - left
            self.n_clipped += 1
            value = float(np.clip(c[action], -left, left))
            self.used = self.budget  # charge: max|clip(c, -left, left)| = left (exactly)
            return value
        self.used += cost
        return float(c[action])
