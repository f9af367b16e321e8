"""Deliberately wrong uses of the public API: mypy must reject each line marked ``# E:``
(tests/test_typing.py checks that every marked line, and no other, is reported). A checker
that does not see the installed package (``Any`` everywhere) reports none of them."""

from __future__ import annotations

import numpy as np

import agents
import hbo_envs
from hbo_envs.coordinates import CoordinateBandit, nearest_index
from hbo_envs.registration import default_horizon

bench = CoordinateBandit(42)  # E: an int is neither an id nor an env
horizon: str = default_horizon("hbo/GPBandit-v0")  # E: an int, not a str
hbo_envs.ENV_IDS.append("hbo/Mine-v0")  # E: a tuple has no append
x, y = bench.evaluate([0.5])
label: str = y  # E: the payoff is a float
index: str = nearest_index(np.zeros((3, 1)), 0.5)  # E: an index is an int
names: list[int] = list(agents.available())  # E: the names are strings
