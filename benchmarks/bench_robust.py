"""Per-round cost of the issue-19 robust agents next to naive references, in one run.

On ``hbo/RKHS-SE-StudentT-v0`` (100 arms; ``--env`` for another, e.g.
``hbo/Frequency-SE-v0``) it prints, for each agent, the mean per-round agent time
(``act`` + ``update``, process CPU time, one BLAS thread) in three blocks of 200 rounds —
early (rounds 200-400), mid (around ``T/2``), late (the last 200) — at ``T = 2 * 10^4``
(``--quick``: ``T = 2000``). A cost flat in ``t`` shows as three equal numbers. Beside it:

- for ``rcgp-ucb-adaptive`` and ``outlier-gp-ucb``, the **previous** implementation
  (copied below: a fresh engine fed one observation per played arm, every RCGP weight
  recomputed over the ``t`` observations; ``np.unique`` and Python lists around the
  outlier diagnostic) on the same trajectory — the line says whether its actions were
  identical to the new one's;
- a **naive** reference written from the formulas (a ``t x t`` solve from scratch at round
  ``t``, timed on the agent's own history at ``t`` = 200 and 1000, best of 3; the outlier
  diagnostic's exact MAP by L-BFGS-B over ``t`` latents at ``t`` = 200 and 400 only):
  ``rcgp-ucb`` the RCGP posterior ``k^T (K_t + sigma^2 J)^{-1} (y - m_w)``; the adaptive
  variant two such solves (anchor and acquisition model); ``gp-ucb``/``ec-gp-ucb`` one GP
  solve.

A last section times the re-derivation itself: ``rcgp-ucb-adaptive`` and
``outlier-gp-ucb`` re-condition their one engine in place
(:meth:`~agents.gp.engine.GPPosteriorEngine.set_statistics`) beside the same agents
building a new engine per re-derivation (``from_statistics``, the path before), on the
100 arms and on Park–Lee's 5-D problem (``--large-env``, 5000 arms, the played-set
representation: a new engine gathers every held arm's kernel column again), mean CPU us
per round over the second half of ``--large-T`` rounds, with whether the actions agree.

What stays ``O(t)``: ``outlier-gp-ucb``'s diagnosis (every ``n_schedule = 2`` rounds) fits
the Student-t GP by Laplace over all ``t`` observations — the published procedure — so its
late block is larger than its early one; everything around the fit is flat.

Run: ``python benchmarks/bench_robust.py`` (a few minutes; the previous implementations
are the slow part). Not a test: timings depend on the machine and its load (printed);
compare the columns of one run, not absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import gymnasium as gym
import numpy as np
from bench_agents import env_agent_seconds
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

import agents
import hbo_envs  # noqa: F401
from agents.gp.engine import GPPosteriorEngine
from agents.robust.outlier_gp_ucb import OutlierGPUCB, flag_outliers, student_t_laplace
from agents.robust.rcgp_ucb import RCGPUCBAdaptive, pimq_weight_terms

ENV = "hbo/RKHS-SE-StudentT-v0"
AGENTS = ("gp-ucb", "rcgp-ucb", "rcgp-ucb-adaptive", "ec-gp-ucb", "outlier-gp-ucb")


class PreviousRCGPAdaptive(RCGPUCBAdaptive):
    """The refit before issue 21's flat-cost change, verbatim: every weight recomputed over
    the ``t`` observations, a fresh engine fed one aggregated observation per played arm."""

    def _setup(self, problem):
        super()._setup(problem)
        self._arms, self._ys = [], []

    def _observe(self, arm, reward):
        lam = self.lam_
        if self._arms:
            a0, y0 = self._arms[-1], self._ys[-1]
            J, sh = pimq_weight_terms(np.array([y0]), self.L_anchor_, self.c_, lam)
            self.anchor_.observe(a0, y0 - float(sh[0]), noise_var=lam * float(J[0]))
        self._arms.append(arm)
        self._ys.append(reward)
        arms = np.asarray(self._arms)
        ys = np.asarray(self._ys)
        centre = self.anchor_.mean[arms, 0]
        J, sh = pimq_weight_terms(ys - centre, self.L_, self.c_, lam)
        with np.errstate(divide="ignore"):
            prec = 1.0 / (lam * J)
        n = self.n_
        P = np.bincount(arms, weights=prec, minlength=n)
        Z = np.bincount(arms, weights=(ys - sh) * prec, minlength=n)
        eng = GPPosteriorEngine(self.problem_, lam)
        for a in np.flatnonzero(P > 0):
            eng.observe(int(a), Z[a] / P[a], noise_var=1.0 / P[a])
        self.engine_ = eng


class PreviousOutlierGPUCB(OutlierGPUCB):
    """The outlier agent before issue 21's change, verbatim: Python lists, ``np.unique``
    and the quantile per diagnosis, a fresh engine fed one observation per inlier arm."""

    def _setup(self, problem):
        super()._setup(problem)
        self._arms, self._ys = [], []
        self._outlier = np.zeros(0, dtype=bool)

    def _diagnose(self):
        arms = np.asarray(self._arms)
        y = np.asarray(self._ys)
        S, idx = np.unique(arms, return_inverse=True)
        K_SS = self.problem_.kernel_block(S, S)
        f_hat, var = student_t_laplace(K_SS, idx, y, self.nu_, self.scale_)
        noise = self.scale_**2 * self.nu_ / (self.nu_ - 2.0)
        flags = flag_outliers(y, f_hat[idx], np.sqrt(var[idx] + noise), self.nu_, self.alpha_)
        if np.mean(flags) <= self.max_frac_:
            self._outlier = flags
        else:
            self._outlier = np.concatenate([self._outlier, np.zeros(1, dtype=bool)])

    def _observe(self, arm, reward):
        self._arms.append(arm)
        self._ys.append(reward)
        t = len(self._arms)
        if t >= self.n_init_ and (t - self.n_init_) % self.n_schedule_ == 0:
            self._diagnose()
            inl = ~self._outlier
            arms = np.asarray(self._arms)[inl]
            ys = np.asarray(self._ys)[inl]
            cnt = np.bincount(arms, minlength=self.n_)
            tot = np.bincount(arms, weights=ys, minlength=self.n_)
            eng = GPPosteriorEngine(self.problem_, self.lam_)
            for a in np.flatnonzero(cnt):
                eng.observe(int(a), tot[a] / cnt[a], noise_var=self.lam_ / cnt[a])
            self.engine_ = eng
        else:
            self._outlier = np.concatenate([self._outlier, np.zeros(1, dtype=bool)])
            self.engine_.observe(arm, reward)

    @property
    def outliers_(self):
        return self._outlier.copy()


PREVIOUS = {"rcgp-ucb-adaptive": PreviousRCGPAdaptive, "outlier-gp-ucb": PreviousOutlierGPUCB}


class NewEnginePerRederivation:
    """The agent's engine as before ``set_statistics``: every re-derivation builds a new
    ``GPPosteriorEngine.from_statistics``; everything else is delegated to it."""

    def __init__(self, engine: GPPosteriorEngine, problem) -> None:
        self._engine, self._problem = engine, problem

    def set_statistics(self, precision, sums, counts=None) -> None:
        lam = self._engine.lam
        self._engine = GPPosteriorEngine.from_statistics(
            self._problem, lam, precision, sums, counts=counts
        )

    def __getattr__(self, name):
        return getattr(self._engine, name)


def reconditioning(env_id: str, T: int) -> None:
    """In place vs a new engine per re-derivation: mean us/round over rounds T/2..T."""
    for name in ("rcgp-ucb-adaptive", "outlier-gp-ucb"):
        out = []
        for new_engine in (False, True):
            env = gym.make(env_id, horizon=T).unwrapped
            env.reset(seed=0)
            ag = agents.make(name)
            ag.reset(env.problem, seed=0)
            if new_engine:
                ag.engine_ = NewEnginePerRederivation(ag.engine_, env.problem)
            spent, arms, _ = env_agent_seconds(env, ag, T, clock=time.process_time)
            out.append((1e6 * float(np.mean(spent[T // 2 :])), arms, env.problem.n))
        (now, a1, n), (before, a2, _) = out
        print(
            f"{name:18s} {env_id} (n = {n}): set_statistics {now:,.0f} | new engine per "
            f"re-derivation {before:,.0f} | x{before / now:.2f} | actions identical over "
            f"{T} rounds: {bool(np.array_equal(a1, a2))}",
            flush=True,
        )


def blocks_of(T: int) -> list[tuple[int, int]]:
    """Early (200-400), mid (200 rounds around T/2) and late (the last 200) rounds."""
    return [(200, 400), (T // 2 - 100, T // 2 + 100), (T - 200, T)]


def timed_run(ag, env_id: str, T: int):
    """Mean agent CPU time per round (us) in each block; the actions and rewards."""
    env = gym.make(env_id, horizon=T).unwrapped
    env.reset(seed=0)
    ag.reset(env.problem, seed=0)
    blocks = blocks_of(T)
    spent, arms, ys = env_agent_seconds(env, ag, T, clock=time.process_time)
    # mean, not median: outlier-gp-ucb alternates diagnosis and plain rounds
    per_block = [1e6 * float(np.mean(spent[lo:hi])) for lo, hi in blocks]
    return per_block, arms, ys


def _solve(K, arms, targets, noise):
    Kt = K[np.ix_(arms, arms)] + np.diag(noise)
    kx = K[:, arms]
    mu = kx @ np.linalg.solve(Kt, targets)
    var = np.diag(K) - np.einsum("ij,ji->i", kx, np.linalg.solve(Kt, kx.T))
    return mu, var


def naive_round(name: str, ag, K, arms, ys) -> None:
    """One naive posterior computation on the first ``len(arms)`` observations."""
    lam = 1.0
    if name in ("gp-ucb", "ec-gp-ucb"):
        _solve(K, arms, ys, np.full(arms.size, lam))
    elif name == "rcgp-ucb":
        J, sh = pimq_weight_terms(ys, ag.L_, ag.c_, lam)
        _solve(K, arms, ys - sh, lam * J)
    elif name == "rcgp-ucb-adaptive":
        J, sh = pimq_weight_terms(ys[:-1], ag.L_anchor_, ag.c_, lam)
        muA, _ = _solve(K, arms[:-1], ys[:-1] - sh, lam * J)
        J, sh = pimq_weight_terms(ys - muA[arms], ag.L_, ag.c_, lam)
        _solve(K, arms, ys - sh, lam * J)
    else:  # outlier-gp-ucb: exact Student-t MAP over the t latent values, then a t x t GP
        nu, s = ag.nu_, ag.scale_
        Kt = K[np.ix_(arms, arms)] + 1e-8 * np.eye(arms.size)
        Ki = np.linalg.inv(Kt)

        def nlp(f):
            return -(np.sum(stats.t.logpdf((ys - f) / s, nu)) - 0.5 * f @ Ki @ f)

        optimize.minimize(nlp, np.zeros(arms.size), method="L-BFGS-B")
        _solve(K, arms, ys, np.full(arms.size, lam))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="T = 2000 instead of 2 * 10^4")
    p.add_argument("--env", default=ENV)
    p.add_argument("--agents", default=",".join(AGENTS), help="comma-separated names")
    p.add_argument("--large-env", default="hbo/Griewank5D-SymPareto-eps02-v0")
    p.add_argument("--large-T", type=int, default=None, help="rounds there (default 400)")
    args = p.parse_args()
    T = 2000 if args.quick else 20_000
    spans = ", ".join(f"{lo}-{hi}" for lo, hi in blocks_of(T))
    print(
        f"# bench_robust: {args.env}, T = {T}, blocks of rounds [{spans}], "
        f"python {platform.python_version()}, {platform.machine()}, "
        f"load average {os.getloadavg()} at start"
    )
    print("# agent CPU us/round, mean per block (early, mid, late)")
    for name in args.agents.split(","):
        per_block, arms, ys = timed_run(agents.make(name), args.env, T)
        line = f"{name:18s} now [{', '.join(f'{x:,.0f}' for x in per_block)}]"
        if name in PREVIOUS:
            prev, p_arms, _ = timed_run(PREVIOUS[name](), args.env, T)
            same = bool(np.array_equal(arms, p_arms))
            line += (
                f" | previous [{', '.join(f'{x:,.0f}' for x in prev)}]"
                f" | actions identical over {T} rounds: {same}"
            )
        ag = agents.make(name)
        env = gym.make(args.env, horizon=T).unwrapped
        env.reset(seed=0)
        ag.reset(env.problem, seed=0)
        K = np.asarray(ag.problem_.kernel_matrix)
        naive = {}
        for t in (200, 400) if name == "outlier-gp-ucb" else (200, 1000):
            reps = []
            for _ in range(3):  # best of 3: robust to a loaded machine
                s = time.process_time()
                naive_round(name, ag, K, arms[:t], ys[:t])
                reps.append(time.process_time() - s)
            naive[t] = 1e6 * min(reps)
        line += " | naive: " + ", ".join(f"t={t}: {v:,.0f}" for t, v in naive.items())
        print(line, flush=True)
    T2 = args.large_T or (200 if args.quick else 400)
    print(f"# re-derivation in place vs a new engine, agent CPU us/round, rounds {T2 // 2}-{T2}")
    reconditioning(args.env, T2)
    reconditioning(args.large_env, T2)
    print(f"# load average at end {os.getloadavg()}")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
