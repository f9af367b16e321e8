"""The reward-channel interface.

A channel turns the mean reward ``f(x_t)`` into an observed payoff ``y_t``. It is a frozen
dataclass of parameters and knows, for a given objective ``f`` on the candidate set,

- whether its assumptions hold (:meth:`RewardChannel.validate`, e.g. the multiplicative
  Pareto channel needs ``f > 0``) — refused at env construction with a clear error;
- its exact moment constants (:meth:`RewardChannel.moments`):
  ``alpha``, ``v >= sup_x E|y(x)|^{1+alpha}`` and ``nu >= sup_x E|y(x) - f(x)|^{1+alpha}``;
- how to sample ``y`` using the env's generator only (:meth:`RewardChannel.sample`).

Channels with per-episode state (the single-spike channel picks its point at reset)
return it from :meth:`RewardChannel.new_episode` and get it back in ``sample``; the
channel object itself never changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["Moments", "RewardChannel", "moment_grid"]

GRID_SNAP = 16 * 2.0**-52
"""Relative distance above a grid point within which :func:`moment_grid` rounds down."""


def moment_grid(x: float) -> float:
    """``x >= 0`` rounded up to 9 decimals, the ``c`` at which a channel's constants are
    computed and cached (:meth:`RewardChannel.moments`).

    Values within a relative ``GRID_SNAP`` (16 ulps, ``3.6e-15``) above a grid point round
    down to it: an objective normalised to ``max|f| = 1`` lands a few ulps off 1 (up to 6
    ulps above, in ~0.3% of draws), and rounding it up to ``1.000000001`` would both miss the
    cache and ask the quadrature for a point a hair beyond a signed-Pareto channel's kink.
    The tolerance is relative, so it is the same few ulps at any magnitude of ``c``; the
    channels' ``1e-9`` margin on ``v`` covers the ``3.6e-15`` by which ``c`` may fall short
    of ``x``.

    >>> moment_grid(1.0 + 6 * 2.0**-52), moment_grid(1.0 + 1e-12), moment_grid(0.25)
    (1.0, 1.000000001, 0.25)
    """
    k = math.ceil(x * 1e9)
    below = (k - 1) / 1e9
    return below if x <= below * (1.0 + GRID_SNAP) else k / 1e9


@lru_cache(maxsize=256)
def _cached_moments(channel: RewardChannel, c: float) -> Moments:
    return channel.moments_at(c)


@dataclass(frozen=True)
class Moments:
    """Moment constants of a channel for one objective.

    ``v`` bounds the raw moment ``E|y|^{1+alpha}``, ``nu`` the central moment
    ``E|y - f(x)|^{1+alpha}``, uniformly over the candidate set.
    """

    alpha: float
    v: float
    nu: float
    noise_scale: float


class RewardChannel:
    """Base class of all reward channels (see the module docstring)."""

    name: str = "channel"
    alpha: float
    requires_positive_f: bool = False
    """Whether :meth:`validate` needs ``f > 0`` (the multiplicative Pareto channel): an env
    that redraws its objective refuses such a channel at construction unless every
    objective it can draw is positive (see :class:`~hbo_envs.envs.base.GPBanditEnv`)."""

    def validate(self, f: np.ndarray) -> None:
        """Raise ``ValueError`` if the channel's assumptions fail for this ``f``."""

    def moments(self, f: np.ndarray) -> Moments:
        """Exact moment constants for objective values ``f`` on the candidate set.

        Every channel's constants depend on ``f`` only through ``c = max|f|`` (the raw
        moment ``E|c + eta|^p`` is convex and even in ``c``). ``c`` is rounded up to 9
        decimals (:func:`moment_grid`: values a few ulps above a grid point round down, so
        that a normalised objective's ``max|f| = 1 + 6 ulps`` hits the cache at ``c = 1``)
        and the result is cached per process, so re-drawing a normalised objective at every
        reset costs nothing. The channels' relative safety margin of ``1e-9`` on ``v``
        covers those ulps.
        """
        f = np.asarray(f, dtype=float)
        self.validate(f)
        c = moment_grid(float(np.max(np.abs(f))))
        m = _cached_moments(self, c)
        if not all(math.isfinite(x) for x in (m.alpha, m.v, m.nu, m.noise_scale)):
            raise ValueError(
                f"The {type(self).__name__} channel {self.params()} has non-finite moment "
                f"constants (v={m.v!r}, nu={m.nu!r}) for max|f| = {c!r}: a parameter is out of "
                "the range where E|y|^(1+alpha) is representable; choose a smaller scale or "
                "a larger tail index."
            )
        return m

    def moments_at(self, c: float) -> Moments:  # pragma: no cover - abstract
        """Moment constants when ``max_x |f(x)| = c`` (implemented by each channel)."""
        raise NotImplementedError

    def new_episode(self, f: np.ndarray, rng: np.random.Generator) -> Any:
        """Per-episode state drawn from the env's generator (default: none)."""
        return None

    def sample(
        self, f_x: float, index: int, rng: np.random.Generator, state: Any = None
    ) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def mean(self, f_x: float) -> float:
        """``E[y | x]``; every channel here is unbiased: ``E[y] = f(x)``."""
        return float(f_x)

    def params(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"name": self.name, **asdict(self)}  # type: ignore[call-overload]
