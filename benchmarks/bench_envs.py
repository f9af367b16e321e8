"""Environment speed: step and reset cost of every registered env, side by side with a
naive reference (scipy.stats sampling per step; moments recomputed at every reset).

Then what making an env costs the first time in a process, side by side with the previous
path in the same run, and checked equal bit for bit:

- a channel's moment constants (``v``, ``nu`` by quadrature): the distribution's own
  quantile formula (:func:`hbo_envs.channels.moments._quantiles`) vs scipy's public
  ``ppf``/``isf`` per call;
- a 5000 x 5000 kernel matrix (Griewank5D's size), each path as the first thing of a new
  process: in place vs the textbook array expression.

Last, the ``rgb_array`` frame over an episode (GP-UCB's band drawn where it has an axis):
1-D (100 arms), 5-D (5000 arms) and 2-D with ``10^5`` arms; the env's figure kept between
frames beside a figure built for each frame (checked equal pixel for pixel), and at
``10^5`` arms the binned heat map (mean of ``f`` per cell) beside the
one-marker-per-point scatter it replaces there. And the 5-D frame late in a long episode
(rounds 10^3, 3 * 10^4, 9 * 10^4) with the regret trace thinned to
``hbo_envs.envs.render.TRACE_COLUMNS`` columns beside the same frames drawn through every
round.

Run: ``python benchmarks/bench_envs.py`` (prints tables; not a test).
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
    print()
    make_costs()
    print()
    render_costs()


def render_costs() -> None:
    """ms per ``rgb_array`` frame over an episode with GP-UCB's band drawn: the env's kept
    figure beside a figure built for every frame (the path before the figure was kept); the
    2-D 10^5-arm heat map binned vs every point."""
    import agents
    from hbo_envs.envs import render

    rkhs = {"name": "random-rkhs", "kernel": {"name": "matern", "nu": 1.5, "lengthscale": 0.2}}
    cases = [
        ("hbo/RKHS-SE-StudentT-v0", {}),
        ("hbo/Griewank5D-SymPareto-eps02-v0", {}),
        ("hbo/GPBandit-v0", {"objective": dict(rkhs, n_points=100_000, dim=2)}),
    ]
    frames = 60
    print(
        f"{'rgb_array frame (median of ' + str(frames) + ')':40s} {'arms':>7s} {'kept':>8s} "
        f"{'new fig':>8s} {'x':>5s} {'layouts':>8s} {'scatter':>9s}"
    )
    for env_id, kw in cases:
        env = gym.make(env_id, horizon=1000, render_mode="rgb_array", **kw)
        env.reset(seed=0)
        u = env.unwrapped
        n = u.problem.n
        band = n <= 5000  # GP-UCB's arm-space posterior; the 10^5-arm map shows no band
        agent = agents.make("gp-ucb")
        if band:
            agent.reset(u.problem, seed=0)
            u.attach_agent(agent)
        env.render()  # the first frame of a process also loads fonts: not counted
        kept, fresh, layouts, last = [], [], 0, None
        for t in range(frames):
            a = agent.act() if band else (7 * t + 3) % n
            _, r, *_ = env.step(a)
            if band:
                agent.update(a, r)
            t0 = time.perf_counter()
            frame = env.render()
            kept.append(time.perf_counter() - t0)
            pic = render._PICTURES[u]
            layouts += pic.layout is not last
            last = pic.layout
            t0 = time.perf_counter()
            b = render._band(u)
            again = render._Picture(u, pic.key, b).frame(u, b)
            fresh.append(time.perf_counter() - t0)
            assert np.array_equal(frame, again)  # the kept figure draws what a new one draws
        k, f = float(np.median(kept)), float(np.median(fresh))
        scatter = ""
        if n > render.SCATTER_MAX_POINTS and u.problem.points.shape[1] == 2:
            limit = render.SCATTER_MAX_POINTS
            render.SCATTER_MAX_POINTS = n
            try:
                b = render._band(u)
                cost, _ = _best(lambda u=u, b=b: render._Picture(u, None, b).frame(u, b))
                scatter = f"{cost * 1e3:6.0f} ms"
            finally:
                render.SCATTER_MAX_POINTS = limit
        print(
            f"{env_id:40s} {n:7d} {k * 1e3:5.1f} ms {f * 1e3:5.0f} ms {f / k:5.1f} "
            f"{layouts:>8d} {scatter:>9s}"
        )
    print(
        "  (kept: the env's figure, kept between frames; new fig: a figure built and laid out "
        "for the\n   same state, equal pixel for pixel; layouts: frames whose axis limits "
        "moved, so the kept\n   figure was laid out again; scatter: a new figure with one "
        "marker per point instead of the\n   binned heat map)"
    )
    print()
    long_episode_frames()


def long_episode_frames(rounds: tuple[int, ...] = (1_000, 30_000, 90_000), reps: int = 7) -> None:
    """CPU ms per ``rgb_array`` frame of the 5-D env late in a long episode (random arms): the
    cumulative-regret trace thinned to ``TRACE_COLUMNS`` columns beside the same state drawn
    with the trace through every round (the path before). Both are timed on the same state,
    in alternating blocks of 10 frames, median of ``reps`` blocks each (the machine's load
    moves single numbers by tens of percent)."""
    from hbo_envs.envs import render

    thin = render._thin_monotone
    every = lambda n, xmax, columns=0: np.arange(n)  # noqa: E731 - the previous drawing
    env = gym.make(
        "hbo/Griewank5D-SymPareto-eps02-v0", horizon=max(rounds), render_mode="rgb_array"
    )
    env.reset(seed=0)
    u, rng = env.unwrapped, np.random.default_rng(0)
    print(f"{'5-D frame at round':40s} {'thinned':>9s} {'every round':>12s} {'x':>5s}")
    try:
        for r in rounds:
            while len(u._trace) < r:
                env.step(int(rng.integers(u.problem.n)))
            cost: dict[str, list[float]] = {"thin": [], "every": []}
            for _ in range(reps):
                for name, fn in (("thin", thin), ("every", every)):
                    render._thin_monotone = fn
                    env.render()  # not timed
                    t0 = time.process_time()
                    for _ in range(10):
                        env.render()
                    cost[name].append((time.process_time() - t0) / 10)
            a, b = float(np.median(cost["thin"])), float(np.median(cost["every"]))
            print(f"{r:40,d} {a * 1e3:6.1f} ms {b * 1e3:9.1f} ms {b / a:5.2f}")
    finally:
        render._thin_monotone = thin
    print(f"  (CPU time per frame of the same state, median of {reps} blocks of 10 frames)")


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def make_costs() -> None:
    """First-make costs: the constants and the kernel matrix, new path vs previous."""
    from hbo_envs.channels import Gaussian, Pareto, SymmetricPareto
    from hbo_envs.channels import moments as mom

    public = mom.public_quantiles  # the previous path: scipy's public methods, ~40 us a call

    print(f"{'moment constants (max|f| = 1)':40s} {'fast':>9s} {'scipy ppf':>10s} {'x':>6s}")
    fast_q = mom._quantiles
    for ch in (StudentT(3.0), Pareto(), SymmetricPareto(), Gaussian()):
        t_new, m_new = _best(lambda ch=ch: ch.moments_at(1.0))
        mom._quantiles = public
        try:
            t_old, m_old = _best(lambda ch=ch: ch.moments_at(1.0))
        finally:
            mom._quantiles = fast_q
        assert m_new == m_old, (ch, m_new, m_old)  # bit for bit
        name = repr(ch)[:40]
        print(f"{name:40s} {t_new * 1e3:6.1f} ms {t_old * 1e3:7.1f} ms {t_old / t_new:5.1f}x")

    print()
    head = "kernel matrix, 5000 x 5000, new process"
    print(f"{head:40s} {'in place':>9s} {'textbook':>10s} {'x':>6s}")
    for kernel in ("SquaredExponential(1.0)", "Matern(1.0, 2.5)"):
        runs = {"in place": [], "textbook": []}
        digests = set()
        for _ in range(3):  # alternating, each in a new process: the first make's page faults
            for path in runs:
                sec, digest = _kernel_in_fresh_process(kernel, path == "textbook")
                runs[path].append(sec)
                digests.add(digest)
        assert len(digests) == 1, kernel  # bit for bit
        t_new, t_old = min(runs["in place"]), min(runs["textbook"])
        print(f"{kernel:40s} {t_new:7.2f} s {t_old:8.2f} s {t_old / t_new:5.1f}x")


_KERNEL_RUN = """
import hashlib, sys, time
import numpy as np
from scipy.spatial.distance import cdist
from hbo_envs.kernels import Matern, SquaredExponential
k = {kernel}
X = np.random.default_rng(20240807).standard_normal((5000, 5))
t0 = time.perf_counter()
if {textbook}:  # the expression the kernels evaluated before they worked in place
    d2 = cdist(X, X, "sqeuclidean")
    ell = k.lengthscale
    if isinstance(k, SquaredExponential):
        K = np.exp(-0.5 * d2 / ell**2)
    else:
        s = np.sqrt(5.0) * (np.sqrt(d2) / ell)
        K = (1.0 + s + s * s / 3.0) * np.exp(-s)
else:
    K = k(X)
sec = time.perf_counter() - t0
print(sec, hashlib.sha256(K.tobytes()).hexdigest())
"""


def _kernel_in_fresh_process(kernel: str, textbook: bool) -> tuple[float, str]:
    """Seconds to build the 5000 x 5000 matrix as the first thing of a new process (where
    the page faults of fresh n x n arrays are paid), and the matrix's SHA-256."""
    import subprocess
    import sys

    code = _KERNEL_RUN.format(kernel=kernel, textbook=textbook)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), out[1]


if __name__ == "__main__":
    main()
