"""Baselines that are not GP algorithms: the uniform-random floor and the per-arm Robust UCB
of Bubeck, Cesa-Bianchi & Lugosi (2013), the floor that ignores the kernel."""

from agents.baselines.robust_ucb import RobustUCBMedianOfMeans, RobustUCBTruncated
from agents.baselines.uniform import RandomAgent

__all__ = ["RandomAgent", "RobustUCBMedianOfMeans", "RobustUCBTruncated"]
