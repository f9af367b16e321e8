"""Baselines that are not published algorithms: the uniform-random floor."""

from agents.baselines.uniform import RandomAgent

__all__ = ["RandomAgent"]
