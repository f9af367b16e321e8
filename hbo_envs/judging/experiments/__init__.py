"""The registry of paper experiments behind ``hbo-bench reproduce NAME [--quick]``.

An :class:`Experiment` is data: env ids x agents (with parameters and labels) x seeds x
horizon, the paper's protocol in words, the paper's claims as data
(:mod:`hbo_envs.judging.rules.claims`: each gets a measured verdict), which plot to draw,
and a small ``quick`` version (fewer seeds and rounds, same envs, agents and
parameters) that finishes in about a minute. One module per paper
(``chowdhury_gopalan``, ``park_lee``, ...) calls :func:`register` for each of
its experiments; a new paper adds one module and one import line below.

Agents an experiment lists but the installed ``agents`` package does not provide yet
are skipped with a note (:meth:`Experiment.agent_specs`). ``paper`` agents are the ones the
paper's figure shows; ``extra`` agents are baselines the figure does not show, run on
the same cells for comparison (``--paper-only`` drops them). The uniform-random agent
(``random``) runs in every experiment as the floor.

>>> sorted(EXPERIMENTS)[:2]
['bkc2020-fig1', 'cg2019-fig1a']
"""

from __future__ import annotations

from hbo_envs.judging.experiments import (  # noqa: F401  (register)
    beyond,
    bogunovic,
    chowdhury_gopalan,
    equal_width,
    lower_bound,
    park_lee,
    real_data,
    tails,
)
from hbo_envs.judging.experiments._core import (
    EXPERIMENTS,
    EnvVariant,
    Exclusion,
    Experiment,
    ExponentExperiment,
    LogT,
    PowerT,
    available_agent_names,
    register,
    tuned,
    tuned_label,
)

__all__ = [
    "EXPERIMENTS",
    "EnvVariant",
    "Exclusion",
    "Experiment",
    "ExponentExperiment",
    "LogT",
    "PowerT",
    "available_agent_names",
    "register",
    "tuned",
    "tuned_label",
]
