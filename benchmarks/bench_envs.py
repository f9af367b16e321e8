"""Environment speed: step and reset cost of every registered env, side by side with a
naive reference (scipy.stats sampling per step; moments recomputed at every reset).

Then what making an env costs the first time in a process, side by side with the previous
path in the same run, and checked equal bit for bit:

- a channel's moment constants (``v``, ``nu`` by quadrature): the distribution's own
  quantile formula (:func:`hbo_envs.channels.moments._quantiles`) vs scipy's public
  ``ppf``/``isf`` per call;
- a 5000 x 5000 kernel matrix (Griewank5D's size), each path as the first thing of a new
  process: in place vs the textbook array expression.

Last, the ``rgb_array`` frame (best of 3): 1-D (100 arms), 5-D (5000 arms) and 2-D with
``10^5`` arms, where the heat map is binned (mean of ``f`` per cell) beside the
one-marker-per-point scatter it replaces there; and, per frame, how much of it only
redraws an existing figure (``canvas.draw``): the most that reusing the figure between
frames could save is the rest.

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
    """ms per ``rgb_array`` frame; the 2-D 10^5-arm heat map binned vs every point."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hbo_envs.envs import render

    rkhs = {"name": "random-rkhs", "kernel": {"name": "matern", "nu": 1.5, "lengthscale": 0.2}}
    cases = [
        ("hbo/RKHS-SE-StudentT-v0", {}),
        ("hbo/Griewank5D-SymPareto-eps02-v0", {}),
        ("hbo/GPBandit-v0", {"objective": dict(rkhs, n_points=100_000, dim=2)}),
    ]
    print(f"{'rgb_array frame':40s} {'arms':>7s} {'frame':>9s} {'redraw':>9s} {'scatter':>9s}")
    for env_id, kw in cases:
        env = gym.make(env_id, horizon=100, render_mode="rgb_array", **kw)
        env.reset(seed=0)
        for a in range(20):
            env.step(a)
        frame, _ = _best(env.render)
        canvases = []
        draw = FigureCanvasAgg.draw

        def keep(canvas, draw=draw, canvases=canvases):
            canvases.append(canvas)
            return draw(canvas)

        FigureCanvasAgg.draw = keep
        try:
            env.render()
        finally:
            FigureCanvasAgg.draw = draw
        redraw, _ = _best(canvases[-1].draw)
        n = env.unwrapped.problem.n
        scatter = ""
        if n > render.SCATTER_MAX_POINTS and env.unwrapped.problem.points.shape[1] == 2:
            limit = render.SCATTER_MAX_POINTS
            render.SCATTER_MAX_POINTS = n
            try:
                scatter = f"{_best(env.render)[0] * 1e3:6.0f} ms"
            finally:
                render.SCATTER_MAX_POINTS = limit
        print(f"{env_id:40s} {n:7d} {frame * 1e3:6.0f} ms {redraw * 1e3:6.0f} ms {scatter:>9s}")


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
