"""Lower-bound construction speed: the bump ``h`` at a family's distinct radii by composite
Gauss–Legendre (vectorised, what the family uses) side by side with a naive reference
(adaptive QUADPACK, one call per radius), and the cost of building each family.

Run: ``python benchmarks/bench_lower_bound.py`` (prints a table; not a test).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import integrate

from hbo_envs.kernels import Matern, SquaredExponential
from hbo_envs.objectives import lower_bound as lb


def naive_h(r: float) -> float:
    """1-D ``h(r) = (1/π) ∫_0^1 H(ρ) cos(ρ r) dρ`` by adaptive QUADPACK (QAWO)."""

    def H(p: float) -> float:
        return math.exp(-1.0 / (1.0 - p * p)) if p < 1.0 else 0.0

    if r == 0.0:
        return integrate.quad(H, 0.0, 1.0)[0] / math.pi
    return integrate.quad(H, 0, 1, weight="cos", wvar=r, limit=2000, epsabs=1e-16)[0] / math.pi


def main() -> None:
    lb.bump_zeta(1)  # warm the caches that every family shares
    print(
        f"{'family (d = 1)':34s} {'M':>4s} {'n':>5s} {'radii':>6s} {'build':>9s} "
        f"{'h: GL':>9s} {'h: QUADPACK':>12s} {'max |diff|/h(0)':>16s}"
    )
    for kernel, T in (
        (SquaredExponential(0.1), 1000),
        (SquaredExponential(0.1), 100_000),
        (Matern(0.1, 2.5), 1000),
        (Matern(0.1, 2.5), 100_000),
    ):
        lb._family.cache_clear()
        t0 = time.perf_counter()
        fam = lb.lower_bound_family(kernel, horizon=T)
        build = time.perf_counter() - t0
        d = np.abs(fam.points[:, 0][None, :] - fam.centres[:, 0][:, None]).ravel()
        radii = np.unique(np.round(d * 2 * fam.zeta / fam.w, 12))
        t_fast = t_slow = math.inf
        for _ in range(3):  # best of 3: the machine may be shared
            t0 = time.perf_counter()
            fast = lb.bump_h(radii, 1)
            t_fast = min(t_fast, time.perf_counter() - t0)
            t0 = time.perf_counter()
            slow = np.array([naive_h(float(r)) for r in radii])
            t_slow = min(t_slow, time.perf_counter() - t0)
        err = float(np.max(np.abs(fast - slow)) / slow[0])
        name = f"{kernel!r}, T={T}"
        print(
            f"{name:34s} {fam.M:4d} {fam.n:5d} {radii.size:6d} {build * 1e3:7.1f}ms "
            f"{t_fast * 1e3:7.2f}ms {t_slow * 1e3:10.1f}ms {err:16.1e}"
        )


if __name__ == "__main__":
    main()
