"""Robust UCB of Bubeck, Cesa-Bianchi & Lugosi (2013), per arm: the kernel-free floor.

"Bandits with heavy tail", IEEE Trans. Inf. Theory 59(11), 2013 (arXiv:1209.1727). Each
candidate point is an independent arm; the kernel is ignored. On a heavy-tailed kernelized
bandit this is the floor that says whether the kernel helps at all: an agent that uses the
kernel should beat it wherever the arms are many and correlated.

The paper's policy (Section 2). With ``epsilon`` the moment order (``problem.alpha``),
``p = 1 + epsilon`` and ``delta = t^{-2}`` at round ``t``, arm ``i`` played ``s >= 1``
times has the index::

    B_{i,s,t} = mu_hat_{i,s,t} + v^{1/p} (c log(t^2) / s)^{epsilon/p},    B_{i,0,t} = +inf,

where ``mu_hat(s, delta)`` is a mean estimator such that, with probability ``1 - delta``,
``mu_hat <= mu + v^{1/p} (c log(1/delta) / s)^{epsilon/p}`` and the reverse (the paper's
Assumption 1); the policy plays an arm of largest index (ties: uniformly at random with
the agent's generator; the first rounds play the unplayed arms in a random order).
Proposition 1 bounds its regret by ``sum_{Delta_i > 0} (2c (v/Delta_i)^{1/epsilon} log T +
5 Delta_i)``. Two estimators are implemented, with the widths of the paper's lemmas:

``robust-ucb-trunc`` — truncated empirical mean (Lemma 1). If ``E|X|^p <= u`` (a *raw*
moment: ``problem.v``), the ``r``-th observation ``X_r`` of the arm counts only when
``|X_r| <= (u r / log(1/delta))^{1/p}``::

    mu_hat_T = (1/s) sum_{r=1}^{s} X_r 1{|X_r| <= (u r / log(t^2))^{1/p}},
    width    = 4 u^{1/p} (log(t^2) / s)^{epsilon/p}           (v = u, c = 4^{p/epsilon}).

The threshold shrinks as ``t`` grows, so an observation, once dropped, stays dropped: it
counts while ``log(t^2) <= u r / |X_r|^p``. The agent keeps the running sum of the counted
observations and a heap of their expiry keys, so a round costs ``O(n)`` plus
``O(log t)`` per observation that expires (each expires at most once), not ``O(t)``.

``robust-ucb-mom`` — median of means (Lemma 2). If ``E|X - mu|^p <= nu`` (a *central*
moment: ``problem.nu``), split the first ``k N`` observations into ``k`` consecutive blocks
of ``N = floor(s / k)``, ``k = floor(min(8 log(e^{1/8} / delta), s / 2))``, and take the
median of the block means::

    k        = floor(min(1 + 16 log t, s / 2)),  (at least 1: one observation is its own
                                                  estimate; the lemma needs s >= 2)
    mu_hat_M = median(block means),
    width    = (12 nu)^{1/p} (16 log(e^{1/8} t^2) / s)^{epsilon/p}.

The MoM width keeps the lemma's ``log(e^{1/8} / delta)`` (``= 1/8 + 2 log t``), a hair
wider than ``c log(1/delta)``: the bound holds as the lemma states it. The estimate of an
arm is recomputed only when its ``s`` or its ``k`` changes (``floor(1 + 16 log t)`` moves
about ``16 log T`` times in a run).

Provenance: the paper itself could not be retrieved in this session (neither the stored
pages nor the code index hold its text). The formulas above are the paper's Lemma 1,
Lemma 2, the Robust UCB index and Proposition 1 as widely restated; the block rule
``k = floor(min(8 log(e^{1/8}/delta), n/2))`` matches a public re-implementation. The
equation numbers of the journal version are not given here because they were not seen.

``posterior()`` returns the estimates and the widths the next ``act()`` uses; an arm never
played has estimate ``0`` and width ``sup_f`` (``|f| <= sup_f``, so the band holds).

>>> import gymnasium as gym, hbo_envs, agents
>>> env = gym.make("hbo/GPBandit-v0", horizon=50)
>>> _ = env.reset(seed=0)
>>> agent = agents.make("robust-ucb-trunc")
>>> agent.reset(env.unwrapped.problem, seed=0)
>>> a = agent.act(); 0 <= a < env.unwrapped.problem.n
True
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from hbo_envs.validation import (
    MAX_SCALE,
    check_index,
    check_real,
    check_reward,
    check_seed,
)

__all__ = ["RobustUCBMedianOfMeans", "RobustUCBTruncated"]


class _RobustUCB:
    """Shared state and the index policy; subclasses give the estimator and its width."""

    name = "robust-ucb"
    _moment_name = "u"

    def __init__(self, *, width_scale: float = 1.0) -> None:
        self.width_scale = width_scale

    # -- parameters ---------------------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        return {
            self._moment_name: getattr(self, self._moment_name),
            "width_scale": self.width_scale,
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _problem_moment(self, problem: Any) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start a new run on ``problem`` (validates the parameters, seeds the generator)."""
        owner = type(self).__name__
        check_seed(owner, seed)
        self.width_scale_ = check_real(
            owner, "width_scale", self.width_scale, 0.0, MAX_SCALE, "both"
        )
        given = getattr(self, self._moment_name)
        if given is None:
            moment = self._problem_moment(problem)
            if not (math.isfinite(moment) and moment > 0.0):
                raise ValueError(
                    f"{owner} needs a finite positive problem moment bound for its width "
                    f"(or the {self._moment_name!r} parameter); got {moment!r}."
                )
        else:
            moment = check_real(owner, self._moment_name, given, 0.0, MAX_SCALE, "right")
        self.moment_ = float(moment)
        self.alpha_ = check_real(owner, "problem.alpha", float(problem.alpha), 0.0, 1.0, "right")
        self.p_ = 1.0 + self.alpha_
        sup_f = float(problem.sup_f)
        if not (math.isfinite(sup_f) and sup_f >= 0.0):
            raise ValueError(
                f"{owner} needs a finite problem.sup_f (the width of an unplayed arm in "
                f"posterior()); got sup_f={problem.sup_f!r}."
            )
        self.sup_f_ = sup_f
        self.n_ = int(problem.n)
        self.rng_ = np.random.default_rng(seed)
        self.counts_ = np.zeros(self.n_, dtype=np.int64)
        self.t_ = 1  # the round the next act() plays (the paper's t)
        self._pending: int | None = None
        self._reset_estimator()

    # -- the policy ---------------------------------------------------------------------
    def _reset_estimator(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _estimates(self, t: int) -> np.ndarray:  # pragma: no cover - abstract
        """``mu_hat`` of every arm at round ``t`` (entries of unplayed arms are ignored)."""
        raise NotImplementedError

    def _widths(self, t: int, s: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def indices(self) -> np.ndarray:
        """``B_{i, s_i, t}`` of every arm at the current round (``+inf`` if unplayed)."""
        t = self.t_
        played = self.counts_ > 0
        out = np.full(self.n_, np.inf)
        s = self.counts_[played].astype(float)
        out[played] = self._estimates(t)[played] + self.width_scale_ * self._widths(t, s)
        return out

    def act(self) -> int:
        """An arm of largest index (the same until ``update`` is called)."""
        if self._pending is None:
            b = self.indices()
            best = np.flatnonzero(b == b.max())
            a = best[0] if best.size == 1 else best[self.rng_.integers(best.size)]
            self._pending = int(a)
        return self._pending

    def update(self, action: int, reward: float) -> None:
        """Record ``reward`` (finite) observed at ``action``."""
        owner = type(self).__name__
        a = check_index(owner, "action", action, self.n_)
        y = check_reward(owner, reward)
        self.counts_[a] += 1
        self._observe(a, y, int(self.counts_[a]))
        self.t_ += 1
        self._pending = None

    def _observe(self, arm: int, y: float, r: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mu_hat_i, width_i)``: what the next ``act()`` uses (``0, sup_f`` if unplayed)."""
        t = self.t_
        played = self.counts_ > 0
        est = np.zeros(self.n_)
        width = np.full(self.n_, self.sup_f_)
        est[played] = self._estimates(t)[played]
        s = self.counts_[played].astype(float)
        width[played] = self.width_scale_ * self._widths(t, s)
        return est, width


class RobustUCBTruncated(_RobustUCB):
    """Robust UCB with the truncated empirical mean (Bubeck et al. 2013, Lemma 1).

    Parameters
    ----------
    u : float or None
        Bound on the raw moment ``E|y|^{1+alpha}`` of every arm (default ``problem.v``).
    width_scale : float
        Multiplier on the confidence width (``1``, the default, is the paper's; ``0`` plays
        the truncated means greedily). It does not change the truncation.
    """

    name = "robust-ucb-trunc"
    _moment_name = "u"

    def __init__(self, *, u: float | None = None, width_scale: float = 1.0) -> None:
        super().__init__(width_scale=width_scale)
        self.u = u

    def _problem_moment(self, problem: Any) -> float:
        return float(problem.v)

    def _reset_estimator(self) -> None:
        self.sums_ = np.zeros(self.n_)  # sums of the observations still counted
        self.kept_ = np.zeros(self.n_, dtype=np.int64)
        self._heap: list[tuple[float, int, int, float]] = []  # (expiry key, arm, rank, X)
        self._expired_to = 1

    def _observe(self, arm: int, y: float, r: int) -> None:
        # counted at round t iff |y| <= (u r / log t^2)^{1/p}  <=>  log t^2 <= u r / |y|^p
        ay = abs(y) ** self.p_
        key = math.inf if ay == 0.0 else self.moment_ * r / ay
        if key < 2.0 * math.log(self.t_ + 1):  # already dropped at the next round
            return
        self.sums_[arm] += y
        self.kept_[arm] += 1
        if key != math.inf:
            heapq.heappush(self._heap, (key, arm, r, y))

    def _expire(self, t: int) -> None:
        """Drop every observation whose threshold at round ``t`` it exceeds."""
        if t <= self._expired_to:
            return
        level = 2.0 * math.log(t)
        heap = self._heap
        while heap and heap[0][0] < level:
            _, arm, _, y = heapq.heappop(heap)
            self.kept_[arm] -= 1
            # an arm with nothing left counted sums to exactly 0 (no rounding residue)
            self.sums_[arm] = 0.0 if self.kept_[arm] == 0 else self.sums_[arm] - y
        self._expired_to = t

    def _estimates(self, t: int) -> np.ndarray:
        self._expire(t)
        return self.sums_ / np.maximum(self.counts_, 1)

    def _widths(self, t: int, s: np.ndarray) -> np.ndarray:
        # Lemma 1 with delta = t^{-2}: 4 u^{1/p} (log(t^2) / s)^{epsilon/p}
        return (
            4.0
            * self.moment_ ** (1.0 / self.p_)
            * (2.0 * math.log(t) / s) ** (self.alpha_ / self.p_)
        )

    def truncated_fraction(self) -> float:
        """Share of the observations so far that the estimator no longer counts."""
        total = int(self.counts_.sum())
        self._expire(self.t_)
        return 0.0 if total == 0 else 1.0 - int(self.kept_.sum()) / total


class RobustUCBMedianOfMeans(_RobustUCB):
    """Robust UCB with the median-of-means estimator (Bubeck et al. 2013, Lemma 2).

    Parameters
    ----------
    nu : float or None
        Bound on the central moment ``E|y - f(x)|^{1+alpha}`` of every arm (default
        ``problem.nu``).
    width_scale : float
        Multiplier on the confidence width (``1``, the default, is the paper's).
    """

    name = "robust-ucb-mom"
    _moment_name = "nu"

    def __init__(self, *, nu: float | None = None, width_scale: float = 1.0) -> None:
        super().__init__(width_scale=width_scale)
        self.nu = nu

    def _problem_moment(self, problem: Any) -> float:
        return float(problem.nu)

    def _reset_estimator(self) -> None:
        self._obs: list[np.ndarray] = [np.empty(8) for _ in range(self.n_)]  # grown by doubling
        self.est_ = np.zeros(self.n_)
        self._k = np.zeros(self.n_, dtype=np.int64)  # (k, N) of the cached estimate (0: none)
        self._N = np.zeros(self.n_, dtype=np.int64)

    def _observe(self, arm: int, y: float, r: int) -> None:
        buf = self._obs[arm]
        if r > buf.size:
            buf = self._obs[arm] = np.concatenate([buf, np.empty(buf.size)])
        buf[r - 1] = y

    @staticmethod
    def blocks(t: int, s: np.ndarray) -> np.ndarray:
        """``k = max(1, floor(min(8 log(e^{1/8} t^2), s/2)))`` per arm (Lemma 2, delta = t^-2)."""
        cap = math.floor(1.0 + 16.0 * math.log(t))
        return np.maximum(1, np.minimum(cap, s // 2))

    @staticmethod
    def median_of_means(obs: np.ndarray, k: int) -> float:
        """Median of the means of ``k`` consecutive blocks of ``floor(len(obs)/k)``."""
        x = np.asarray(obs, dtype=float)
        N = x.size // k
        return float(np.median(x[: k * N].reshape(k, N).mean(axis=1)))

    def _estimates(self, t: int) -> np.ndarray:
        # The estimate depends on the first k N observations only: recomputed when k or N
        # moves (every k-th observation of the arm, or when floor(1 + 16 log t) moves).
        s = self.counts_
        k = self.blocks(t, s)
        N = s // k
        stale = np.flatnonzero((s > 0) & ((k != self._k) | (N != self._N)))
        for i in stale.tolist():
            self.est_[i] = self.median_of_means(self._obs[i][: s[i]], int(k[i]))
        self._k[stale] = k[stale]
        self._N[stale] = N[stale]
        return self.est_

    def _widths(self, t: int, s: np.ndarray) -> np.ndarray:
        # Lemma 2 with delta = t^{-2}: (12 nu)^{1/p} (16 log(e^{1/8} t^2) / s)^{epsilon/p}
        return (12.0 * self.moment_) ** (1.0 / self.p_) * (
            16.0 * (0.125 + 2.0 * math.log(t)) / s
        ) ** (self.alpha_ / self.p_)

    def dropped_fraction(self) -> float:
        """Share of the observations outside the median block(s) at the current round (the
        median of ``k`` block means rests on one block, two when ``k`` is even)."""
        total = int(self.counts_.sum())
        if total == 0:
            return 0.0
        k = self.blocks(self.t_, self.counts_)
        played = self.counts_ > 0
        N = self.counts_[played] // k[played]
        central = np.where(k[played] % 2 == 1, 1, 2) * N
        return 1.0 - float(np.minimum(central, self.counts_[played]).sum()) / total
