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
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "ParameterTypeError",
    "as_readonly",
    "check_bool",
    "check_known_params",
    "check_choice",
    "check_finite_constants",
    "check_index",
    "check_int",
    "check_moment_index",
    "check_real",
    "check_reward",
    "check_seed",
    "param_error",
    "seconds_from_env",
    "MAX_HORIZON",
    "MAX_SCALE",
    "MAX_LENGTHSCALE",
    "MIN_LENGTHSCALE",
]

MAX_HORIZON = 10**9
"""Largest episode length ``T`` any env, agent or the harness accepts (rounds)."""

MAX_SCALE = 1e100
"""Largest noise scale / magnitude of a reward channel: moments ``~ scale^{1+alpha}`` and
heavy-tailed draws (up to ``~1e13 scale``) stay far inside the float range."""

MIN_LENGTHSCALE = 1e-100
MAX_LENGTHSCALE = 1e100
"""Kernel lengthscales outside ``[1e-100, 1e100]`` over- or underflow ``l^2`` (a NaN
kernel matrix, ``B = nan``); they are refused."""


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


def check_reward(owner: str, reward: Any) -> float:
    """Return ``reward`` as a float, or raise the uniform error: every agent's ``update``
    check of the reward it is given (as :func:`check_index` is of the action).

    Anything ``float()`` turns into a finite number is accepted (Python and numpy reals,
    0-d arrays); NaN, infinities and what ``float()`` refuses raise ``ValueError``::

        ValueError: The 'reward' parameter of TGPUCB must be a finite real number.
        Got inf instead.
    """
    try:
        y = float(reward)
    except (TypeError, ValueError):
        y = math.nan
    if not math.isfinite(y):
        raise param_error(owner, "reward", "a finite real number", reward)
    return y


def check_seed(owner: str, seed: Any) -> int | None:
    """Return ``seed`` unchanged if it is ``None`` or a non-negative integer (Python or
    NumPy; not a bool), or raise the uniform error: every agent's ``reset`` check of the
    seed of its generator (``np.random.default_rng(seed)``)::

        ValueError: The 'seed' parameter of GPUCB must be None or a non-negative integer.
        Got -1 instead.
    """
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0
    ):
        raise param_error(owner, "seed", "None or a non-negative integer", seed)
    return seed


def check_bool(owner: str, name: str, value: Any, *, allow_none: bool = False) -> bool | None:
    """Return ``value`` if it is a bool (Python or NumPy), or raise the uniform error.

    Strings are refused (``bool("false")`` is ``True``), and so are ``0``/``1``: a flag
    is a flag. ``allow_none`` also accepts ``None`` (a "default" sentinel).
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True or False" + (" (or None for the default)" if allow_none else "")
    msg = str(param_error(owner, name, allowed, value))
    raise ParameterTypeError(f"{msg[:-1]} (of type {type(value).__name__}).")


def check_finite_constants(owner: str, values: dict[str, Any], hint: str = "") -> None:
    """Raise the uniform error for the first entry of ``values`` that is not finite.

    For *computed* constants (``B``, ``v``, ``nu``, a kernel matrix, ...): an overflow or a
    NaN means a parameter was out of the range that works; ``hint`` says which.
    """
    for name, value in values.items():
        if value is None:
            continue
        arr = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(arr)):
            shown = (
                value
                if arr.ndim == 0
                else f"an array with {int(np.sum(~np.isfinite(arr)))} non-finite entries"
            )
            allowed = "finite" + (f" ({hint})" if hint else "")
            raise param_error(owner, name, allowed, shown)


def check_known_params(kind: str, name: str, params: Any, fields: Any, spec: Any) -> None:
    """Refuse keywords a registry entry does not take, naming one and listing the rest.

    ``kind`` is what is built ("channel", "adversary"), ``fields`` its parameter names and
    ``spec`` what the user passed (shown in the message).
    """
    unknown = sorted(set(params) - set(fields), key=str)
    if unknown:
        raise ValueError(
            f"The {kind} {name!r} has no parameter {unknown[0]!r}; its parameters "
            f"are {', '.join(sorted(fields))}. Got {spec!r} instead."
        )


def seconds_from_env(name: str, default: float) -> float:
    """``$name`` as a number of seconds (``default`` when unset or empty); anything but a
    positive finite number is a ``ValueError`` naming the variable and the value."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"The environment variable {name} must be a positive number of seconds; got {raw!r}."
        )
    return value
