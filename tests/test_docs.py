"""The examples in docstrings run (``>>>`` lines are part of the spec)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hbo_envs",
    "hbo_envs.kernels",
    "hbo_envs.validation",
    "hbo_envs.channels",
    "hbo_envs.objectives.rkhs",
    "hbo_envs.objectives.griewank",
    "hbo_envs.envs.base",
    "hbo_envs.envs.chowdhury_gopalan",
    "hbo_envs.envs.park_lee",
    "agents.protocol",
    "agents.schedules",
    "agents.gp.gp_ucb",
    "hbo_envs.harness.claims",
    "hbo_envs.harness.known_failures",
    "hbo_envs.harness.plotting",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
