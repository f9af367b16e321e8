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
    "hbo_envs.objectives.lower_bound",
    "hbo_envs.channels.two_point",
    "hbo_envs.envs.lower_bound",
    "hbo_envs.judging.rules.exponent",
    "hbo_envs.envs.real_data",
    "hbo_envs.data",
    "hbo_envs.data.loaders",
    "hbo_envs.data.stats",
    "hbo_envs.channels.empirical",
    "data_scripts.cli",
    "agents.protocol",
    "hbo_envs.leaderboard.aggregate",
    "hbo_envs.leaderboard.verify",
    "agents.schedules",
    "agents.gp.gp_ucb",
    "hbo_envs.judging.rules.claims",
    "hbo_envs.harness.stats",
    "hbo_envs.harness.compare",
    "hbo_envs.harness.records",
    "hbo_envs.judging.rules.known_failures",
    "hbo_envs.harness.plotting",
    "hbo_envs._lazy",
    "hbo_envs.data",
    "agents.baselines.robust_ucb",  # issue 35
    "hbo_envs.harness.tuning",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    if name == "hbo_envs.envs.real_data":
        from hbo_envs.data import DATASETS, missing_files

        if any(missing_files(d) for d in DATASETS):
            pytest.skip("the real-data env examples need ../shared/data (or HBO_DATA_DIR)")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
