"""Reward channels: how an observed payoff ``y`` is drawn around the mean ``f(x)``.

One module per channel; each computes its exact moment constants
(:class:`~hbo_envs.channels.base.Moments`). Build one with :func:`make_channel`:

>>> ch = make_channel({"name": "student_t", "df": 3})
>>> import numpy as np
>>> round(ch.moments(np.array([1.0, -0.5])).v, 6)   # sup_f^2 + 3 (Chowdhury–Gopalan §6)
4.0
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from hbo_envs.channels.base import Moments, RewardChannel
from hbo_envs.channels.contaminated import Contaminated
from hbo_envs.channels.gaussian import Gaussian
from hbo_envs.channels.pareto import Pareto
from hbo_envs.channels.signed_pareto import SignedPareto
from hbo_envs.channels.spike import Spike
from hbo_envs.channels.stable import SymmetricStable
from hbo_envs.channels.student_t import StudentT
from hbo_envs.channels.symmetric_pareto import SymmetricPareto
from hbo_envs.channels.two_point import TwoPoint
from hbo_envs.validation import check_known_params

__all__ = [
    "CHANNELS",
    "Contaminated",
    "Gaussian",
    "Moments",
    "Pareto",
    "RewardChannel",
    "SignedPareto",
    "Spike",
    "StudentT",
    "SymmetricPareto",
    "SymmetricStable",
    "TwoPoint",
    "make_channel",
]

CHANNELS: dict[str, type[RewardChannel]] = {
    "gaussian": Gaussian,
    "student_t": StudentT,
    "pareto": Pareto,
    "symmetric_pareto": SymmetricPareto,
    "spike": Spike,
    "two_point": TwoPoint,
    # issue 35: channels whose tails bite (infinite variance at their defaults)
    "signed_pareto": SignedPareto,
    "contaminated": Contaminated,
    "stable": SymmetricStable,
}


def make_channel(spec: RewardChannel | str | dict[str, Any]) -> RewardChannel:
    """A channel from an instance, a name in :data:`CHANNELS`, or ``{"name": ..., **params}``."""
    if isinstance(spec, RewardChannel):
        return spec
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, dict) or spec.get("name") not in CHANNELS:
        raise ValueError(
            "The 'channel' parameter must be a RewardChannel, one of "
            f"{sorted(CHANNELS)} or a dict with one of them as 'name'. Got {spec!r} instead."
        )
    params = {k: v for k, v in spec.items() if k != "name"}
    cls = CHANNELS[spec["name"]]
    if dataclasses.is_dataclass(cls):
        fields = {f.name for f in dataclasses.fields(cls)}
    else:  # a channel class that is not a dataclass: its constructor's keywords
        fields = set(inspect.signature(cls).parameters) - {"self"}
    check_known_params("channel", spec["name"], params, fields, spec)
    return cls(**params)
