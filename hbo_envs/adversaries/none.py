"""The null adversary: ``c_t = 0`` (the uncorrupted setting, ``C`` spent: 0)."""

from __future__ import annotations

from dataclasses import dataclass

from hbo_envs.adversaries.base import Adversary, AdversaryView

__all__ = ["NoAdversary"]


@dataclass(frozen=True)
class NoAdversary(Adversary):
    """Never corrupts: ``c_t(x) = 0`` for every ``t`` and ``x``."""

    name = "none"

    def propose(self, view: AdversaryView) -> None:
        return None
