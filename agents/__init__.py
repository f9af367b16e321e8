"""Reference agents for heavy-tailed and corrupted kernelized bandits.

>>> import agents
>>> agents.available()  # doctest: +NORMALIZE_WHITESPACE
('gp-ucb', 'tgp-ucb', 'ata-gp-ucb-qff', 'ata-gp-ucb-nystrom', 'ca-tgp-ucb', 'mom-gp-ucb',
 'gp-ucb-corruption', 'fast-slow-gp-ucb', 'fast-slow-gp-ucb-unknown', 'random',
 'rcgp-ucb', 'rcgp-ucb-adaptive', 'ec-gp-ucb', 'outlier-gp-ucb', 'robust-ucb-trunc',
 'robust-ucb-mom')
>>> agent = agents.make("tgp-ucb", schedule="theory")

Every GP agent is built on one exact posterior engine
(:class:`agents.gp.engine.GPPosteriorEngine`); :func:`agents.check_agent` checks any
agent (ours or a third party's) against the :class:`Agent` protocol.
"""

from agents.baselines import RandomAgent, RobustUCBMedianOfMeans, RobustUCBTruncated
from agents.checks import AgentCheckError, check_agent
from agents.corruption import FastSlowGPUCB, FastSlowGPUCBUnknown, GPUCBCorruption
from agents.gp import GPUCB, GPPosteriorEngine, GPUCBAgent
from agents.heavy_tailed import ATAGPUCBQFF, CATGPUCB, TGPUCB, ATAGPUCBNystrom, MoMGPUCB
from agents.protocol import Agent
from agents.registry import AGENT_SPECS, available, make, register

__all__ = [
    "AGENT_SPECS",
    "ATAGPUCBNystrom",
    "ATAGPUCBQFF",
    "Agent",
    "AgentCheckError",
    "CATGPUCB",
    "FastSlowGPUCB",
    "FastSlowGPUCBUnknown",
    "GPPosteriorEngine",
    "GPUCB",
    "GPUCBAgent",
    "GPUCBCorruption",
    "MoMGPUCB",
    "RandomAgent",
    "RobustUCBMedianOfMeans",
    "RobustUCBTruncated",
    "TGPUCB",
    "available",
    "check_agent",
    "make",
    "register",
]
