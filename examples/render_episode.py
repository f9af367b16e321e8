"""Pictures of an episode: GP-UCB on the Chowdhury–Gopalan SE env, its posterior band drawn.

Writes the ``"rgb_array"`` frame after 25 rounds to a PNG (default: this checkout's
``docs/gymnasium-render.png``, the picture in ``docs/gymnasium.md``, whatever the working
directory) and prints the ``"ansi"`` text of the last rounds.

Run: ``python examples/render_episode.py [OUT.png]``.
"""

import sys
from pathlib import Path

import gymnasium as gym
import matplotlib.image

import agents
import hbo_envs  # noqa: F401  (registers the envs)

DEFAULT = Path(__file__).resolve().parents[1] / "docs" / "gymnasium-render.png"
out = sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)
env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=25, render_mode="rgb_array")
text = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=25, render_mode="ansi")
agent = agents.make("gp-ucb")
env.reset(seed=4)
text.reset(seed=4)
agent.reset(env.unwrapped.problem, seed=4)
env.unwrapped.attach_agent(agent)  # the picture shows the agent's estimate ± width
for _ in range(25):
    a = agent.act()
    _, reward, _, truncated, _ = env.step(a)
    text.step(a)
    agent.update(a, reward)
frame = env.render()
matplotlib.image.imsave(out, frame)
print(f"wrote {out}: {frame.shape[1]} x {frame.shape[0]} pixels")
print(text.render(), end="")
