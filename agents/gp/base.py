"""Common machinery of the UCB-style GP agents: parameters, validation, argmax, protocol.

A subclass declares its hyperparameters in ``__init__`` (stored, never validated there),
sets up its schedules in :meth:`GPUCBAgent._setup` (called by ``reset`` after the
common validation) and says how an observation enters the posterior in
:meth:`GPUCBAgent._observe`. Everything numeric goes through one
:class:`~agents.gp.engine.GPPosteriorEngine`.

Rounds are 1-based: ``act()`` at round ``t`` plays
``x_t = argmax_x mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` (Chowdhury–Gopalan 2019 Alg. 1;
Park–Lee 2024 Alg. 1 line 5), and ``posterior()`` returns
``(mu_{t-1}, beta_t sigma_{t-1})``: the estimate and the half-width of the confidence
band the next action is chosen from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.gp.engine import GPPosteriorEngine
from agents.schedules import NAMED_WIDTHS, SCHEDULE_SETS, Schedule, gp_ucb_width
from hbo_envs.validation import (
    check_choice,
    check_index,
    check_real,
    check_reward,
    check_seed,
    param_error,
)

__all__ = ["GPUCBAgent", "TIE_RTOL", "argmax_rows"]

#: Scores within this relative distance of the maximum count as tied; ties are broken
#: uniformly at random with the agent's own generator (so the prior round, where every
#: score is equal, does not always play arm 0, and the result is seed-deterministic).
TIE_RTOL = 1e-12


def _finite_constant(owner: str, name: str, value: Any, fix: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x):
        raise ValueError(
            f"{owner} needs a finite problem.{name} for its default schedules; got {value!r}. {fix}"
        )
    return x


def argmax_rows(scores: np.ndarray, rngs: Sequence[Any], owner: str, t: int) -> np.ndarray:
    """Index of the largest score in every row of ``scores`` (shape ``(B, n)``).

    Scores within ``TIE_RTOL * max(1, |best|)`` of a row's maximum count as tied; a tie
    is broken uniformly at random with that row's generator ``rngs[b]`` (one draw, only
    when there is a tie), so a row's choice does not depend on the other rows: one run
    (``B = 1``) and a batch of seeds (:mod:`agents.batch`) choose identically. A
    non-finite maximum raises :class:`FloatingPointError` naming round ``t``.
    """
    rows = np.arange(scores.shape[0])
    idx = np.argmax(scores, axis=1)
    best = scores[rows, idx]
    finite = np.isfinite(best)
    if not finite.all():
        bad = float(best[np.flatnonzero(~finite)[0]])
        raise FloatingPointError(f"{owner}: non-finite acquisition score {bad!r} at round {t}.")
    tied = scores >= (best - TIE_RTOL * np.maximum(1.0, np.abs(best)))[:, None]
    for b in np.flatnonzero(np.count_nonzero(tied, axis=1) > 1).tolist():
        ties = np.flatnonzero(tied[b])
        idx[b] = ties[rngs[b].integers(ties.size)]
    return idx


class GPUCBAgent:
    """Base class of the GP-UCB family (not registered itself).

    Parameters common to every subclass
    -----------------------------------
    schedule : {"experiment", "theory"}
        Which default schedule set to use (DESIGN.md "Resolved ambiguities").
    lam : float
        Regularisation ``lambda > 0`` of ``(K_t + lambda I)`` (default 1, the papers'
        experiments).
    delta : float
        Confidence level ``delta`` in ``(0, 1]`` of the ``beta_t`` schedules (default 0.1).
    beta : None, float, callable or "gp-ucb"
        Override of the confidence width ``beta_t`` (a constant or ``f(t)``), or
        ``"gp-ucb"``: GP-UCB's default width in this agent's schedule set
        (:func:`~agents.schedules.gp_ucb_width` with ``R = nu^{1/(1+alpha)}``, the
        ``problem``'s constants and this agent's ``lam``/``delta``; ``gamma_{t-1}`` of the
        theory set is this agent's realized information gain), while the estimator
        (truncation level, threshold, block count) stays the paper's: the equal-width
        comparison that separates a robust estimator from its width schedule (DESIGN.md
        "Configurations: paper and tuned"). At round ``t`` the agent's
        ``beta_t`` is exactly GP-UCB's; MoM-GP-UCB, which chooses once per episode, takes
        GP-UCB's width of the round its episode starts.
    """

    #: Whether the posterior state has the exact GP's information gain ``engine_.info_gain``
    #: (``beta="gp-ucb"`` with ``schedule="theory"`` needs it).
    _exact_info_gain: bool = True

    name: str = ""

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
    ) -> None:
        self.schedule = schedule
        self.lam = lam
        self.delta = delta
        self.beta = beta

    # ------------------------------------------------------------------ params
    def get_params(self) -> dict[str, Any]:
        """The constructor arguments (hyperparameters), as given."""
        import inspect

        sig = inspect.signature(type(self).__init__)
        return {p: getattr(self, p) for p in sig.parameters if p != "self"}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @property
    def _owner(self) -> str:
        return type(self).__name__

    # ------------------------------------------------------------------ protocol
    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Validate the hyperparameters against ``problem`` and start a new run."""
        owner = self._owner
        check_seed(owner, seed)
        self.schedule_ = check_choice(owner, "schedule", self.schedule, SCHEDULE_SETS)
        self.lam_ = check_real(owner, "lam", self.lam, 0.0, None, "neither")
        self.delta_ = check_real(owner, "delta", self.delta, 0.0, 1.0, "right")
        self.problem_ = problem
        self.n_ = int(problem.n)
        self.rng_ = np.random.default_rng(seed)
        self._setup(problem)
        self.engine_ = self._make_engine(problem)
        self.t_ = 1
        self._pending: int | None = None
        self._beta_cache: tuple[int, float] = (0, 0.0)

    def act(self) -> int:
        """Index of the point to play this round (the same until ``update`` is called)."""
        if self._pending is None:
            # Chowdhury–Gopalan Alg. 1 / Park–Lee Alg. 1 line 5:
            # x_t = argmax_x mu_{t-1}(x) + beta_t sigma_{t-1}(x).
            ucb = self._estimate() + self._beta_t() * self.engine_.std()
            self._pending = self._argmax(ucb)
        return self._pending

    def update(self, action: int, reward: float) -> None:
        """Feed back the payoff ``reward`` observed at ``action``."""
        self._feed(self._check_action(action), self._check_reward(reward))

    def _feed(self, arm: int, reward: float) -> None:
        """:meth:`update` after validation: condition on ``reward`` at ``arm`` and move on
        to the next round (a batch of runs, :mod:`agents.batch`, validates all runs'
        actions and rewards at once and calls this)."""
        self._observe(arm, reward)
        self.t_ += 1
        self._pending = None

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mu_{t-1}(x), beta_t sigma_{t-1}(x))`` at every point, shape (n,) each."""
        return self._estimate().copy(), self._beta_t() * self.engine_.std()

    def posterior_sd(self) -> np.ndarray:
        """``sigma_{t-1}(x)`` at every point: the posterior standard deviation whose
        ``beta_t`` multiple is :meth:`posterior`'s width (the optional ``posterior_sd`` of
        :mod:`agents.protocol`; the harness's ``coverage_sigma``, Chowdhury–Gopalan
        Fig. 1f's ``mu_T +- sigma_T`` band)."""
        return np.array(self.engine_.std(), dtype=float)

    # ------------------------------------------------------------------ hooks
    def _setup(self, problem: Any) -> None:
        """Validate the subclass's parameters and build its schedules."""
        raise NotImplementedError

    def _observe(self, arm: int, reward: float) -> None:
        """Condition the posterior on ``reward`` (possibly transformed) at ``arm``."""
        raise NotImplementedError

    def _n_outputs(self) -> int:
        return 1

    def _make_engine(self, problem: Any) -> Any:
        """The posterior state: an exact :class:`GPPosteriorEngine` (an agent whose
        posterior is not the exact GP one, e.g. ATA-GP-UCB, returns its own object with
        the same ``std()`` query). The engine reads the kernel through the problem's
        accessors and picks its representation by ``n`` (arm space up to 8192 arms, the
        played set beyond), so no ``n x n`` array exists for a large problem."""
        return GPPosteriorEngine(problem, self.lam_, n_outputs=self._n_outputs())

    def _estimate(self) -> np.ndarray:
        return self.engine_.mean[:, 0]

    def _default_beta(self, t: int) -> float:
        raise NotImplementedError

    # ------------------------------------------------------------------ helpers
    def _beta_t(self) -> float:
        t = self.t_
        if self._beta_cache[0] != t:
            self._beta_cache = (t, self.beta_(t))
        return self._beta_cache[1]

    def _make_beta(self, episode: int = 1) -> Schedule:
        """``beta_t``: the override, GP-UCB's width (``beta="gp-ucb"``), or the default.

        ``episode`` is the number of rounds per index the agent calls its schedule with
        (MoM-GP-UCB: ``ell``; its episode ``n`` takes GP-UCB's width of round
        ``(n - 1) ell + 1``, the round the episode starts)."""
        if isinstance(self.beta, str):
            if self.beta not in NAMED_WIDTHS:
                allowed = "None, a finite non-negative real number, a callable t -> float, "
                allowed += "or a named width: " + ", ".join(repr(w) for w in NAMED_WIDTHS)
                raise param_error(self._owner, "beta", allowed, self.beta)
            self._set_gp_ucb_width(episode)
            return Schedule(self._owner, "beta", self._gp_ucb_beta)
        return Schedule.resolve(self._owner, "beta", self.beta, self._default_beta)

    def _set_gp_ucb_width(self, episode: int) -> None:
        """The constants of GP-UCB's default ``beta_t`` (:class:`~agents.gp.gp_ucb.GPUCB`
        with ``R=None``) on this agent's problem, schedule set, ``lam`` and ``delta``."""
        problem, schedule = self.problem_, self.schedule_
        if schedule == "theory" and not self._exact_info_gain:
            raise param_error(
                self._owner,
                "beta",
                "a constant, a callable or None with schedule='theory' (GP-UCB's theory "
                "width needs the exact posterior's information gain gamma_t, which this "
                "agent's approximate posterior does not have); 'gp-ucb' with "
                "schedule='experiment'",
                self.beta,
            )
        B = self._constant(problem, "sup_f" if schedule == "experiment" else "B")
        nu = self._constant(problem, "nu")
        self._gp_width_ = (B, nu ** (1.0 / (1.0 + float(problem.alpha))), int(episode))

    def _gp_ucb_beta(self, t: int) -> float:
        B, R, episode = self._gp_width_
        gamma = self.engine_.info_gain if self.schedule_ == "theory" else 0.0
        r = (t - 1) * episode + 1
        return gp_ucb_width(self.schedule_, B, self.lam_, R, self.delta_, r, gamma)

    def _constant(self, problem: Any, name: str, *, override: str = "beta") -> float:
        return _finite_constant(
            self._owner,
            name,
            getattr(problem, name),
            f"Pass {override}=... to {self._owner} to override the schedule that uses it.",
        )

    def _argmax(self, scores: np.ndarray) -> int:
        """:func:`argmax_rows` of the one row ``scores`` (the same rule, the same draw from
        ``rng_`` on a tie, so a run alone chooses as it does in a batch; tested), without
        the batch machinery: one ``argmax`` and one comparison when there is no tie."""
        i = int(scores.argmax())
        best = float(scores[i])
        if not math.isfinite(best):
            raise FloatingPointError(
                f"{self._owner}: non-finite acquisition score {best!r} at round {self.t_}."
            )
        tied = scores >= best - TIE_RTOL * max(1.0, abs(best))
        if np.count_nonzero(tied) == 1:
            return i
        ties = np.flatnonzero(tied)
        return int(ties[self.rng_.integers(ties.size)])

    def _check_action(self, action: Any) -> int:
        if type(action) is int and 0 <= action < self.n_:  # the common case, as check_index
            return action
        return check_index(self._owner, "action", action, self.n_)

    def _check_reward(self, reward: Any) -> float:
        return check_reward(self._owner, reward)
