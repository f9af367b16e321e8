"""Reference agents that do not beat uniform play on a paper env, with the reason.

``tests/test_baselines.py`` requires every reference agent an experiment lists to have
a lower mean ``R_T`` than the ``random`` agent, with 95% bootstrap CIs apart (>= 10
seeds), on every env of the experiment registry, at the horizon stated there per env. A
pair that does not is listed here with the measured numbers and the reason; the test then
requires the pair to still fail (so a fixed pair must leave the table), and every
``below random`` verdict of ``hbo-bench reproduce`` on a listed pair says so. The aim is
an empty table.

>>> sorted({k.agent for k in KNOWN_FAILURES.values()}) <= ["mom-gp-ucb", "tgp-ucb"]
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KNOWN_FAILURES", "KnownFailure", "known_failure"]


@dataclass(frozen=True)
class KnownFailure:
    """``agent`` on ``env`` does not beat random at horizon ``T``: measured and why."""

    agent: str
    env: str
    T: int
    measured: str
    reason: str

    def __str__(self) -> str:
        return f"known failure ({self.measured}): {self.reason}"


_ENTRIES: tuple[KnownFailure, ...] = ()

#: ``(agent label, env id) -> KnownFailure``.
KNOWN_FAILURES: dict[tuple[str, str], KnownFailure] = {(k.agent, k.env): k for k in _ENTRIES}


def known_failure(agent: str, env: str) -> KnownFailure | None:
    """The table entry for ``agent`` on ``env``, if any."""
    return KNOWN_FAILURES.get((agent, env))
