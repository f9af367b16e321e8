"""Environment classes, one family per module."""

from hbo_envs.envs.base import GPBanditEnv
from hbo_envs.envs.chowdhury_gopalan import ChowdhuryGopalanSyntheticEnv, TruncationDemoEnv
from hbo_envs.envs.lower_bound import LowerBoundEnv
from hbo_envs.envs.park_lee import ParkLeeEnv

__all__ = [
    "ChowdhuryGopalanSyntheticEnv",
    "GPBanditEnv",
    "LowerBoundEnv",
    "ParkLeeEnv",
    "TruncationDemoEnv",
]
