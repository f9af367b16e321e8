"""The rules a verdict comes from (the lowest judging layer, see :mod:`hbo_envs.judging`).

- :mod:`~hbo_envs.judging.rules.claims` — the claims as data and the rules that decide
  them (paired comparisons, growth, the random floor of one experiment);
- :mod:`~hbo_envs.judging.rules.exponent` — regret exponents over a ladder of horizons;
- :mod:`~hbo_envs.judging.rules.floor` — the random floor over a whole archive;
- :mod:`~hbo_envs.judging.rules.known_failures` — the mechanisms behind known failures.

Rules import the harness and each other (claims read known_failures; floor reads both),
never an experiment, the archive or a page.
"""

from hbo_envs.judging.rules.claims import (
    Claim,
    Verdict,
    below_random,
    evaluate_claims,
    less,
    linear,
    lowest,
    sublinear,
)

__all__ = [
    "Claim",
    "Verdict",
    "below_random",
    "evaluate_claims",
    "less",
    "linear",
    "lowest",
    "sublinear",
]
