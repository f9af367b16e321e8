"""Environment speed: step and reset cost of every registered env, side by side with a
naive reference (scipy.stats sampling per step; moments recomputed at every reset).

Run: ``python benchmarks/bench_envs.py`` (prints a table; not a test).
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
from scipy import stats

import hbo_envs
from hbo_envs.channels import StudentT


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t0) / n


def main() -> None:
    steps = 20_000
    print(f"{'env id':40s} {'step (wrapped)':>15s} {'step (unwrapped)':>17s} {'reset':>10s}")
    for env_id in hbo_envs.ENV_IDS:
        env = gym.make(env_id, horizon=10**9)
        env.reset(seed=0)
        n = env.action_space.n
        wrapped = per_call(lambda i, e=env, n=n: e.step(i % n), steps)
        u = env.unwrapped
        unwrapped = per_call(lambda i, e=u, n=n: e.step(i % n), steps)
        reset = per_call(lambda i, e=env: e.reset(seed=i), 20)
        print(
            f"{env_id:40s} {wrapped * 1e6:12.2f} us {unwrapped * 1e6:14.2f} us "
            f"{reset * 1e3:7.2f} ms"
        )

    # Naive references for the Student-t setting of Chowdhury–Gopalan Fig. 1a.
    f = gym.make("hbo/RKHS-SE-StudentT-v0").unwrapped.objective.values
    t3 = stats.t(3)
    rng = np.random.default_rng(0)
    naive_step = per_call(lambda i: float(f[i % 100] + t3.rvs(random_state=rng)), 2000)
    ch = StudentT(3.0)
    naive_moments = per_call(lambda i: ch.moments_at(1.0 + 1e-9 * i), 3)
    print()
    print(f"naive step (scipy.stats rvs per step):        {naive_step * 1e6:8.2f} us")
    print(f"naive reset (Student-t moments by quadrature): {naive_moments * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
