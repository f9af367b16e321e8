"""Uniform parameter validation: one error format for the whole project.

Every constructor and ``reset`` in hbo-bench validates its parameters through these
helpers, so a bad value always produces the same kind of message, naming the owner, the
parameter, the allowed range and the value received::

    ValueError: The 'df' parameter of StudentT must be a real number in (2.0, inf).
    Got 1.5 instead.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "ParameterTypeError",
    "as_readonly",
    "check_choice",
    "check_index",
    "check_int",
    "check_moment_index",
    "check_real",
    "param_error",
]


def param_error(owner: str, name: str, allowed: str, value: Any) -> ValueError:
    """Build the project's uniform ValueError for parameter ``name`` of ``owner``."""
    return ValueError(
        f"The {name!r} parameter of {owner} must be {allowed}. Got {value!r} instead."
    )


def _interval(low: float | None, high: float | None, closed: str) -> str:
    lo = "-inf" if low is None else repr(float(low))
    hi = "inf" if high is None else repr(float(high))
    left = "[" if closed in ("both", "left") and low is not None else "("
    right = "]" if closed in ("both", "right") and high is not None else ")"
    return f"{left}{lo}, {hi}{right}"


def check_real(
    owner: str,
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    closed: str = "neither",
) -> float:
    """Return ``value`` as a finite float inside the interval, or raise the uniform error.

    ``closed`` is one of ``"neither"``, ``"left"``, ``"right"``, ``"both"`` and says
    which end points are allowed. Booleans, NaN and infinities are always refused.
    """
    allowed = f"a real number in {_interval(low, high, closed)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(owner, name, allowed, value)
    x = float(value)
    if not math.isfinite(x):
        raise param_error(owner, name, allowed, value)
    if low is not None and (x < low or (x == low and closed not in ("both", "left"))):
        raise param_error(owner, name, allowed, value)
    if high is not None and (x > high or (x == high and closed not in ("both", "right"))):
        raise param_error(owner, name, allowed, value)
    return x


def check_int(
    owner: str, name: str, value: Any, low: int | None = None, high: int | None = None
) -> int:
    """Return ``value`` as an int in ``[low, high]`` (inclusive), or raise the uniform error."""
    lo = "-inf" if low is None else str(low)
    hi = "inf" if high is None else str(high)
    allowed = f"an integer in [{lo}, {hi}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise param_error(owner, name, allowed, value)
    x = int(value)
    if (low is not None and x < low) or (high is not None and x > high):
        raise param_error(owner, name, allowed, value)
    return x


def check_choice(owner: str, name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, or raise the uniform error."""
    choices = list(choices)
    if value not in choices:
        raise param_error(owner, name, "one of " + ", ".join(repr(c) for c in choices), value)
    return value


def check_moment_index(
    owner: str, name: str, value: Any, alpha: float, alpha_name: str = "alpha"
) -> float:
    """A tail index (``df``, Pareto ``shape``) that keeps ``E|y|^{1+alpha}`` finite.

    Returns ``value`` as a float if it exceeds ``1 + alpha``, else raises the uniform error.
    """
    x = check_real(owner, name, value, 0)
    if x <= 1.0 + alpha:
        allowed = f"> 1 + {alpha_name} = {1 + alpha} so that E|y|^(1+{alpha_name}) is finite"
        raise param_error(owner, name, allowed, value)
    return x


def as_readonly(a: Any) -> np.ndarray:
    """``a`` as a read-only float array (copied first unless it is already read-only).

    Problem and objective records hand their arrays to third-party agents; a write through
    them raises instead of silently changing the env.
    """
    arr = np.asarray(a, dtype=float)
    if arr.flags.writeable:
        arr = np.array(arr, copy=True)
        arr.setflags(write=False)
    return arr


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type: both a ``TypeError`` and a ``ValueError``, so callers
    may catch either (as numpy's ``AxisError`` is both a ``ValueError`` and an ``IndexError``)."""


def check_index(owner: str, name: str, value: Any, n: int) -> int:
    """Return ``value`` as an index in ``[0, n)``: the env's and every agent's action check.

    Integers of any kind (Python, numpy, 0-d integer arrays) are accepted; bools, floats
    (even integral or NaN), strings and arrays raise :class:`ParameterTypeError`; integers
    out of range raise ``ValueError``. Both carry the uniform message.
    """
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
    allowed = f"an integer in [0, {n - 1}]"
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        msg = str(param_error(owner, name, allowed, value))
        raise ParameterTypeError(f"{msg[:-1]} (of type {type(value).__name__}).")
    i = int(value)
    if not 0 <= i < n:
        raise param_error(owner, name, allowed, value)
    return i
