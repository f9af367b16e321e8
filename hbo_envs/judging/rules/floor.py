"""The random floor applied to a whole archive: every reference agent that does not beat
uniform play, with the mechanism :mod:`~hbo_envs.judging.rules.known_failures` gives it.

:func:`floor_failures` takes the per-experiment results (what
:func:`hbo_envs.judging.publish.all_results` returns: ``{"exp", "records", ...}`` per
experiment) rather than reading the archive, so this rule sits below the archive and the
pages in the judging layer (see :mod:`hbo_envs.judging`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from hbo_envs.harness.records import COLUMNS
from hbo_envs.judging.rules.claims import REPRODUCES, ClaimContext, decide_less, describe_pair
from hbo_envs.judging.rules.known_failures import CAUSES, known_failure

__all__ = ["FloorFailure", "floor_failures"]


@dataclass(frozen=True)
class FloorFailure:
    """``agent`` does not beat ``random`` on ``env`` in ``experiment``'s archived cells."""

    experiment: str
    env: str
    agent: str
    verdict: str
    measured: str
    mechanism: str | None
    cause: tuple[str, str, str] | None = None


def floor_failures(results: dict[str, dict[str, Any]]) -> list[FloorFailure]:
    """Every (experiment, env, agent) of the archive that does not beat ``random`` on
    paired seeds (``results``: :func:`hbo_envs.judging.publish.all_results`)."""
    out = []
    for name, res in results.items():
        exp = res["exp"]
        rec = res["records"]
        if exp.kind == "exponent" or rec.empty:
            continue  # the lower-bound instances: no algorithm is meant to beat anything
        ctx = ClaimContext(rec[list(COLUMNS)], list(exp.envs))
        for env in exp.envs:
            if not ctx.ran(env, "random"):
                continue
            for agent in ctx.agents:
                if agent == "random" or not ctx.ran(env, agent):
                    continue
                c = ctx.paired(env, agent, "random")
                if c is None:
                    continue
                verdict, _ = decide_less(c)
                if verdict == REPRODUCES:
                    continue
                key = known_failure(agent, env)
                cause = next(
                    (
                        x
                        for x in CAUSES
                        if fnmatch.fnmatchcase(agent, x[0]) and fnmatch.fnmatchcase(env, x[1])
                    ),
                    None,
                )
                measured = describe_pair(c, agent, "random", "R_T")
                out.append(FloorFailure(name, env, agent, verdict, measured, key, cause))
    return out
