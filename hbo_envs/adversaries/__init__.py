"""Adversaries: budgeted corruption of the observed rewards (Bogunovic et al. 2020).

One module per adversary; every one composes with any objective and reward channel
(:class:`hbo_envs.envs.corrupted.CorruptedEnv`). Whatever an adversary proposes, the
env's :class:`~hbo_envs.adversaries.base.CorruptionLedger` keeps ``|c_t| <= B_0`` and the
total charge ``<= C``. Build one with :func:`make_adversary`:

>>> adv = make_adversary({"name": "region", "radius": 0.05})
>>> adv.params()
{'name': 'region', 'radius': 0.05, 'fraction': 0.3333333333333333}
>>> sorted(ADVERSARIES)  # doctest: +NORMALIZE_WHITESPACE
['adaptive', 'aggressive_subtraction', 'clairvoyant', 'clipping', 'decoy', 'none',
 'random', 'random_sign', 'region', 'subtraction']
"""

from __future__ import annotations

import inspect
from typing import Any

from hbo_envs.adversaries.adaptive import AdaptiveAdversary
from hbo_envs.adversaries.base import INFO_MODELS, Adversary, AdversaryView, CorruptionLedger
from hbo_envs.adversaries.decoy import DecoyAdversary
from hbo_envs.adversaries.frequency import ClairvoyantAdversary, FrequencyLedger
from hbo_envs.adversaries.han_scarlett import (
    AggressiveSubtractionAttack,
    ClippingAttack,
    RandomAttack,
    SubtractionAttack,
)
from hbo_envs.adversaries.none import NoAdversary
from hbo_envs.adversaries.random_sign import RandomSignAdversary
from hbo_envs.adversaries.region import RegionAdversary
from hbo_envs.validation import check_known_params

__all__ = [
    "ADVERSARIES",
    "INFO_MODELS",
    "AdaptiveAdversary",
    "AggressiveSubtractionAttack",
    "ClairvoyantAdversary",
    "ClippingAttack",
    "FrequencyLedger",
    "RandomAttack",
    "SubtractionAttack",
    "Adversary",
    "AdversaryView",
    "CorruptionLedger",
    "DecoyAdversary",
    "NoAdversary",
    "RandomSignAdversary",
    "RegionAdversary",
    "make_adversary",
]

ADVERSARIES: dict[str, type[Adversary]] = {
    "none": NoAdversary,
    "region": RegionAdversary,
    "adaptive": AdaptiveAdversary,
    "decoy": DecoyAdversary,
    "random_sign": RandomSignAdversary,
    # issue 19: Han & Scarlett (2022) attacks and the frequency-bounded adversary (2025)
    "clipping": ClippingAttack,
    "aggressive_subtraction": AggressiveSubtractionAttack,
    "subtraction": SubtractionAttack,
    "random": RandomAttack,
    "clairvoyant": ClairvoyantAdversary,
}


def make_adversary(spec: Adversary | str | dict[str, Any] | None) -> Adversary:
    """An adversary from an instance, a name in :data:`ADVERSARIES`, a dict
    ``{"name": ..., **params}``, or ``None`` (no corruption)."""
    if spec is None:
        return NoAdversary()
    if isinstance(spec, Adversary):
        return spec
    given = spec
    if isinstance(spec, str):
        spec = {"name": spec}
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("name"), str)
        or spec["name"] not in ADVERSARIES
    ):
        raise ValueError(
            "The 'adversary' parameter must be an Adversary, one of "
            f"{sorted(ADVERSARIES)} or a dict with one of them as 'name'. Got {given!r} instead."
        )
    params = {k: v for k, v in spec.items() if k != "name"}
    cls = ADVERSARIES[spec["name"]]
    fields = set(inspect.signature(cls).parameters) - {"self"}
    check_known_params("adversary", spec["name"], params, fields, spec)
    return cls(**params)
