"""Reference agents for heavy-tailed and corrupted kernelized bandits (filled in by issue 3)."""

from agents.protocol import Agent

__all__ = ["Agent"]
