"""Native vector env vs ``SyncVectorEnv``: batch steps per second, same seeds, same numbers.

For each env id and ``k`` it builds ``gym.make_vec(id, num_envs=k, ...)`` twice —
``vectorization_mode="vector_entry_point"`` (:class:`hbo_envs.envs.vector.GPBanditVectorEnv`)
and ``"sync"`` (Gymnasium's ``SyncVectorEnv`` of ``k`` wrapped single envs) — steps both with
the same random actions, checks the rewards agree bit for bit, and prints the time per batch
step and the speed-up. Horizon 1000 > the 400 timed steps: the step cost, not resets (an
env that redraws f at reset costs the same either way). The native env batches f, regret
and the info arrays in numpy; each sub-env's noise still comes from its own generator (that
is what makes the numbers equal), so that per-env draw is the floor; corrupted envs (an
adversary per sub-env) step their sub-envs one by one and gain least.

Run: ``python benchmarks/bench_vector.py`` (prints a table; not a test). Also prints the
1-minute load average, since the machine may be shared.
"""

from __future__ import annotations

import os
import time

import gymnasium as gym
import numpy as np

import hbo_envs  # noqa: F401  (registers the envs)

IDS = ("hbo/RKHS-SE-StudentT-v0", "hbo/Griewank2D-SymPareto-eps02-v0", "hbo/Corrupted-SE-Region-v0")
KS = (1, 16, 128)
STEPS = 400
HORIZON = 1000  # no autoreset inside the timed steps: the step cost itself


def time_steps(envs: gym.vector.VectorEnv, actions: np.ndarray) -> tuple[float, np.ndarray]:
    envs.reset(seed=0)
    rewards = np.empty(actions.shape)
    t0 = time.perf_counter()
    for t, a in enumerate(actions):
        rewards[t] = envs.step(a)[1]
    return (time.perf_counter() - t0) / len(actions), rewards


def main() -> None:
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    head = f"{'env id':36s} {'k':>4s} {'native':>12s} {'sync':>12s} {'speed-up':>9s}  same"
    print(head)
    for env_id in IDS:
        for k in KS:
            native = gym.make_vec(
                env_id, num_envs=k, vectorization_mode="vector_entry_point", horizon=HORIZON
            )
            sync = gym.make_vec(env_id, num_envs=k, vectorization_mode="sync", horizon=HORIZON)
            n = native.single_action_space.n
            actions = np.random.default_rng(1).integers(0, n, size=(STEPS, k))
            t_sync, r_sync = time_steps(sync, actions)
            t_native, r_native = time_steps(native, actions)
            same = bool(np.array_equal(r_native, r_sync))
            print(
                f"{env_id:36s} {k:4d} {t_native * 1e6:9.1f} us {t_sync * 1e6:9.1f} us "
                f"{t_sync / t_native:8.1f}x  {same}"
            )
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")


main()
