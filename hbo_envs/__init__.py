"""hbo-bench environments: kernelized bandits under heavy-tailed and corrupted rewards.

Importing this package registers every environment under the Gymnasium namespace ``hbo``:

>>> import gymnasium as gym
>>> import hbo_envs
>>> env = gym.make("hbo/RKHS-SE-StudentT-v0")
>>> "hbo/RKHS-SE-StudentT-v0" in hbo_envs.ENV_IDS
True

``gym.make("hbo_envs:hbo/RKHS-SE-StudentT-v0")`` works without importing ``hbo_envs``
first. See :class:`hbo_envs.envs.GPBanditEnv` for the common semantics and
:class:`hbo_envs.problem.Problem` for what an agent may know.
"""

from hbo_envs.problem import Problem
from hbo_envs.registration import ENV_IDS, ENV_SPECS, register_envs

register_envs()

__version__ = "0.1.0"

__all__ = ["ENV_IDS", "ENV_SPECS", "Problem", "__version__", "register_envs"]
