"""Corruption-tolerant agents of Bogunovic, Krause & Scarlett (AISTATS 2020): GP-UCB with
known ``C`` (Alg. 1), Fast-Slow GP-UCB (Alg. 2) and its unknown-``C`` version (Alg. 3)."""

from agents.corruption.fast_slow import FastSlowGPUCB
from agents.corruption.fast_slow_unknown import FastSlowGPUCBUnknown
from agents.corruption.gp_ucb_corruption import GPUCBCorruption

__all__ = ["FastSlowGPUCB", "FastSlowGPUCBUnknown", "GPUCBCorruption"]
