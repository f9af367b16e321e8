"""Schedules (``beta_t``, ``b_t``, ...) and their overrides.

Every schedule of a reference agent has a default formula, chosen by
``schedule="experiment" | "theory"`` (see ``../shared/DESIGN.md``, "Resolved
ambiguities"), and can be overridden by the user with either

- a constant (any finite real number), used at every round, or
- a callable ``f(t) -> float`` of the 1-based round (or episode) index ``t``.

>>> s = Schedule.resolve("TGPUCB", "b", lambda t: t ** 0.25)
>>> s(16)
2.0
>>> Schedule.resolve("TGPUCB", "b", 3.0)(10)
3.0
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any

from hbo_envs.validation import param_error

__all__ = [
    "NAMED_WIDTHS",
    "SCHEDULE_SETS",
    "Schedule",
    "check_override",
    "experiment_width",
    "gp_ucb_width",
]

#: The two schedule sets of every reference agent.
SCHEDULE_SETS = ("experiment", "theory")


def experiment_width(B: float, lam: float, scale: float, exponent: float, t: int) -> float:
    """The ``"experiment"`` confidence width of every reference agent (one formula).

    ``beta_t = B sqrt(lambda) + scale * t^exponent * sqrt(ln t)``: the order in ``t`` of the
    theorem's width, with the ``sqrt(gamma_t + ln(1/delta))`` factor replaced by
    ``sqrt(ln t)`` and unit constants, ``B = problem.sup_f`` and the noise moment entering
    only as its ``1/(1+alpha)`` power (``scale``). This is how Chowdhury–Gopalan's public
    code turns Thm. 1 into TGP-UCB's experiment schedule
    (``scale * t^exponent = b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))}``); the Park–Lee
    agents and GP-UCB get theirs by the same conversion (see each agent's docstring).

    >>> experiment_width(1.0, 1.0, 2.0, 0.25, 1)  # sqrt(ln 1) = 0: only B sqrt(lambda)
    1.0
    >>> round(experiment_width(1.0, 4.0, 2.0, 0.5, 16), 6)  # 2 + 2 * 4 * sqrt(ln 16)
    15.320874
    """
    return B * math.sqrt(lam) + scale * t**exponent * math.sqrt(math.log(t))


#: Confidence widths that can be named instead of given: ``beta="gp-ucb"`` runs an agent's
#: estimator at GP-UCB's default width (:func:`gp_ucb_width`; see
#: :class:`~agents.gp.base.GPUCBAgent`), the equal-width comparison of DESIGN.md
#: "Configurations: paper and tuned".
NAMED_WIDTHS = ("gp-ucb",)


def gp_ucb_width(
    schedule: str, B: float, lam: float, R: float, delta: float, t: int, info_gain: float
) -> float:
    """GP-UCB's confidence width ``beta_t`` (one formula, for GP-UCB and for every agent
    run at GP-UCB's width with ``beta="gp-ucb"``).

    - ``schedule="experiment"``: ``beta_t = B sqrt(lambda) + R sqrt(ln t)``
      (:func:`experiment_width` with exponent 0; ``B = problem.sup_f``);
    - ``schedule="theory"`` (IGP-UCB, Chowdhury–Gopalan ICML 2017, Thm. 2):
      ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + ln(1/delta)))`` with ``B = problem.B``
      and ``info_gain = gamma_{t-1}``, the realized information gain of the points played.

    >>> round(gp_ucb_width("experiment", 2.0, 1.0, 3.0, 0.1, 16, 0.0), 4)  # 2 + 3 sqrt(ln 16)
    6.9953
    >>> round(gp_ucb_width("theory", 1.0, 1.0, 1.0, 1.0, 5, 1.0), 6)  # 1 + sqrt(2 * 2)
    3.0
    """
    if schedule == "experiment":
        return experiment_width(B, lam, R, 0.0, t)
    return B + R * math.sqrt(2.0 * (info_gain + 1.0 + math.log(1.0 / delta)))


_ALLOWED = "None, a finite non-negative real number, or a callable t -> float"


def check_override(owner: str, name: str, value: Any) -> Any:
    """Validate a schedule override: ``None``, a finite real >= 0, or a callable."""
    if value is None:
        return value
    if callable(value):
        try:  # a schedule is called as f(t): refuse one that cannot take the round t
            inspect.signature(value).bind(1)
        except TypeError:
            raise param_error(owner, name, _ALLOWED + " (called with the round t)", value) from None
        except ValueError:  # no signature to inspect (some builtins): called as is
            pass
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(owner, name, _ALLOWED, value)
    if not math.isfinite(float(value)) or float(value) < 0:
        raise param_error(owner, name, _ALLOWED, value)
    return float(value)


class Schedule:
    """A validated schedule ``t -> value`` (checks every value it returns).

    A user callable that returns NaN, an infinity or a negative number at some round
    raises the uniform parameter error naming the schedule and the round.
    """

    __slots__ = ("owner", "name", "fn", "constant")

    def __init__(self, owner: str, name: str, fn: Callable[[int], float] | None, constant=None):
        self.owner, self.name, self.fn, self.constant = owner, name, fn, constant

    @classmethod
    def resolve(
        cls, owner: str, name: str, override: Any, default: Callable[[int], float] | None = None
    ) -> Schedule:
        """The override if given (constant or callable), else ``default``."""
        override = check_override(owner, name, override)
        if override is None:
            if default is None:
                raise param_error(owner, name, _ALLOWED + " (no default available)", override)
            return cls(owner, name, default)
        if callable(override):
            return cls(owner, name, override)
        return cls(owner, name, None, float(override))

    def __call__(self, t: int) -> float:
        if self.constant is not None:
            return self.constant
        value = self.fn(t)  # type: ignore[misc]
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        if not (math.isfinite(x) and x >= 0):
            raise param_error(
                self.owner,
                self.name,
                f"a schedule returning finite non-negative numbers (at t={t})",
                value,
            )
        return x
