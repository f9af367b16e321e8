"""The shared exact GP posterior engine and the GP-UCB family built on it."""

from agents.gp.base import GPUCBAgent
from agents.gp.engine import GPPosteriorEngine
from agents.gp.gp_ucb import GPUCB

__all__ = ["GPPosteriorEngine", "GPUCBAgent", "GPUCB"]
