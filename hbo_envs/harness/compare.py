"""Comparing a re-run with stored numbers so that the check holds on any x86-64 CPU.

A cell's numbers depend on floating-point sums inside BLAS, and OpenBLAS picks its kernel
per CPU (Haswell, SkylakeX, Zen, ...): the same cell re-run on a machine of another CPU
family can differ in the last bits (``R_T`` 0.34234282619466344 vs 0.3423428261946635).
What must not differ is what the agent *did*. So a re-run is compared in two parts:

- **actions, exactly**: the cell runner hashes the int64 action sequence
  (:func:`action_digests`: the SHA-256 of all ``T`` actions, and a 16-hex prefix digest at
  every recorded round). A re-run whose actions differ is reported as *actions diverge at
  t = k* (the first recorded round whose prefix differs; exact up to ``t = 100``, where
  every round is recorded, else the interval between two recorded rounds) — never passed;
- **numbers, within a relative tolerance** ``rtol`` (default :data:`DEFAULT_RTOL` =
  1e-9; accepted in ``(0, MAX_RTOL]`` = ``(0, 1e-6]``, :func:`check_rtol`): ``x`` and ``y``
  agree when equal (NaN with NaN included) or ``|x - y| <= rtol * max(|x|, |y|)``. A
  last-bit difference is ~1e-16 relative; a different action moves ``R_t`` by a regret
  gap, orders of magnitude more.

>>> t = np.array([1, 2, 3])
>>> first_difference(t, np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0 + 1e-15, 3.0]))
>>> first_difference(t, np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]))
1
>>> check_rtol("verify", 1e-3)
Traceback (most recent call last):
...
ValueError: The 'rtol' parameter of verify must be a real number in (0, 1e-06]. Got 0.001 instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.validation import param_error

__all__ = [
    "DEFAULT_RTOL",
    "MAX_RTOL",
    "TrajectoryCheck",
    "compare_trajectory",
    "fork_limit",
    "action_digests",
    "check_rtol",
    "describe_divergence",
    "first_difference",
    "max_relative_difference",
]

DEFAULT_RTOL = 1e-9
"""The relative tolerance a re-run's numbers are compared with by default."""

MAX_RTOL = 1e-6
"""The largest tolerance accepted: beyond it a changed number could pass as rounding."""


def check_rtol(owner: str, rtol: Any) -> float:
    """``rtol`` as a float in ``(0, MAX_RTOL]``, or a clear error naming ``owner``."""
    allowed = f"a real number in (0, {MAX_RTOL:g}]"
    if isinstance(rtol, bool) or not isinstance(rtol, int | float | np.floating | np.integer):
        raise param_error(owner, "rtol", allowed, rtol)
    x = float(rtol)
    if not (0.0 < x <= MAX_RTOL):  # NaN fails too
        raise param_error(owner, "rtol", allowed, rtol)
    return x


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float = 0.0) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + atol
    return (a == b) | (np.isnan(a) & np.isnan(b)) | near


def first_difference(
    t: Sequence[int] | np.ndarray,
    got: Sequence[float] | np.ndarray,
    want: Sequence[float] | np.ndarray,
    rtol: float = DEFAULT_RTOL,
    atol: float = 0.0,
) -> int | None:
    """The index of the first entry where ``got`` and ``want`` disagree beyond
    ``rtol * max(|got|, |want|) + atol`` (None: they agree everywhere). ``t`` is only
    checked for length."""
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if not (len(t) == got.size == want.size):
        raise ValueError(
            f"first_difference: t, got and want must have one length; got {len(t)}, "
            f"{got.size}, {want.size}."
        )
    bad = np.flatnonzero(~_close(got, want, rtol, atol))
    return int(bad[0]) if bad.size else None


def max_relative_difference(got: Any, want: Any) -> float:
    """The largest ``|x - y| / max(|x|, |y|)`` over finite unequal pairs (0.0 if none)."""
    a = np.asarray(got, dtype=float)
    b = np.asarray(want, dtype=float)
    m = np.isfinite(a) & np.isfinite(b) & (a != b)
    if not m.any():
        return 0.0
    return float(np.max(np.abs(a[m] - b[m]) / np.maximum(np.abs(a[m]), np.abs(b[m]))))


def action_digests(actions: np.ndarray, rounds: np.ndarray) -> tuple[str, list[str]]:
    """``(sha256 of all actions, [prefix digest at each of rounds])``.

    ``actions[t - 1]`` is the arm played at round ``t`` (int64, little-endian bytes);
    the prefix digest at round ``t`` is the first 16 hex digits of the SHA-256 of
    ``actions[:t]``, so two runs' digests agree at ``t`` exactly when their first ``t``
    actions do (up to a 2^-64 collision). ``rounds`` must be increasing, in ``[1, T]``.

    >>> full, pre = action_digests(np.array([3, 1, 4]), np.array([1, 3]))
    >>> full == hashlib.sha256(np.array([3, 1, 4], dtype="<i8").tobytes()).hexdigest()
    True
    >>> pre[1] == full[:16]
    True
    """
    acts = np.ascontiguousarray(actions, dtype="<i8")
    h = hashlib.sha256()
    prefix = []
    prev = 0
    for t in np.asarray(rounds, dtype=np.int64).tolist():
        h.update(acts[prev:t].tobytes())
        prev = t
        prefix.append(h.hexdigest()[:16])
    h.update(acts[prev:].tobytes())
    return h.hexdigest(), prefix


def describe_divergence(
    t: Sequence[int] | np.ndarray, got: Sequence[str], want: Sequence[str]
) -> str | None:
    """Where two runs' prefix digests at the recorded rounds ``t`` first differ:
    ``"actions diverge at t = k"`` (consecutive recorded rounds) or ``"actions diverge
    between t = a and t = b"``; None when every prefix agrees."""
    ts = [int(x) for x in t]
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        if a != b:
            lo = ts[k - 1] + 1 if k else 1
            if lo == ts[k]:
                return f"actions diverge at t = {ts[k]}"
            return f"actions diverge between t = {lo} and t = {ts[k]}"
    return None


@dataclass(frozen=True)
class TrajectoryCheck:
    """A re-run's ``R_t`` at the checkpoints against stored ones (:func:`compare_trajectory`).

    ``kind``: ``"identical"``; ``"within"`` (every checkpoint within ``rtol``, not all
    equal); ``"fork"`` (equal within ``rtol`` at the first checkpoint(s), then departing
    from ``index`` on: the trajectory diverged, as when two arms' scores tie to the last
    bit and another CPU's rounding picks the other); ``"differs"`` (departs at the very
    first checkpoint: not the same run). ``largest`` is the largest relative difference
    over the checkpoints that agree."""

    kind: str
    index: int | None
    largest: float

    @property
    def agrees(self) -> bool:
        return self.kind in ("identical", "within")


def compare_trajectory(
    got: Sequence[float] | np.ndarray,
    want: Sequence[float] | np.ndarray,
    rtol: float = DEFAULT_RTOL,
) -> TrajectoryCheck:
    """Classify a re-run's checkpoints ``got`` against the stored ``want`` (same rounds).

    >>> compare_trajectory([1.0, 2.0, 3.0], [1.0, 2.0, 3.5]).kind
    'fork'
    >>> compare_trajectory([1.5, 2.0, 3.0], [1.0, 2.0, 3.0]).kind
    'differs'
    """
    a = np.asarray(got, dtype=float)
    b = np.asarray(want, dtype=float)
    k = first_difference(range(a.size), a, b, rtol)
    if k is None:
        largest = max_relative_difference(a, b)
        return TrajectoryCheck("identical" if largest == 0.0 else "within", None, largest)
    return TrajectoryCheck("fork" if k > 0 else "differs", k, max_relative_difference(a[:k], b[:k]))


def fork_limit(cells: int) -> int:
    """How many forked cells (:class:`TrajectoryCheck` ``"fork"``) a comparison of
    ``cells`` cells accepts: ``max(1, cells // 100)``. A genuine entry forks rarely on a
    CPU of another family (1 of 840 reference cells in issue 37's measurement); an agent
    that forks more often is not reproducible from its seed."""
    return max(1, int(cells) // 100)
