"""Fast-Slow GP-UCB for a known-or-zero corruption level:
Bogunovic, Krause & Scarlett (AISTATS 2020), Algorithm 2 and Theorem 9."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.corruption._common import (
    ConfidenceInstance,
    LemmaBeta,
    known_budget,
    lemma1_beta,
    noise_and_range,
    observed_corruption_bound,
)
from agents.gp.base import GPUCBAgent
from agents.gp.engine import GPPosteriorEngine
from agents.schedules import Schedule
from hbo_envs.validation import check_real, param_error

__all__ = ["FastSlowGPUCB"]


class FastSlowGPUCB(GPUCBAgent):
    """Algorithm 2 of Bogunovic et al. (2020): Fast-Slow GP-UCB (known-or-zero ``C``).

    Two GP-UCB instances on their own posterior engines, F (fast, not robust) and S (slow,
    robust), with intersected confidence bounds (eqs. (15)-(18)). While ``isValid``:

    - line 4: ``A_t = S`` with probability ``min{1, 1/C}`` (one uniform draw from the
      agent's generator per round: ``S`` iff ``u < min{1, 1/C}``), else ``F``;
    - line 6 (F): ``x_t = argmax_x min_{A in {F, S}} ucb-bar^{(A)}_{t_A - 1}(x; 1)``;
    - line 8 (S): ``x_t = argmax_x ucb-bar^{(S)}_{t_S - 1}(x; alpha)``;
    - lines 10-11: only instance ``A_t`` includes ``(x_t, y~_t)``;
    - line 12 (eq. (19)): if ``min_x ucb-bar^{(F)}(x; 1) - lcb-bar^{(S)}(x; 1) < 0`` the
      problem is detected as corrupted and the agent switches *permanently* to Algorithm 1
      (lines 15-16) on *all* the data collected so far, with ``beta^{(A1)}``.

    Schedules (Theorem 9, general ``lambda`` as in eqs. (20)-(22); ``gamma`` the realized
    information gain of the instance's own observations, DESIGN.md)::

        beta^{(F)}_{t_F}  = B + R lambda^{-1/2} sqrt(2 (gamma_{t_F - 1} + ln(5/delta)))
        beta^{(S)}_{t_S}  = B + R lambda^{-1/2} sqrt(2 (gamma_{t_S - 1} + ln(5/delta)))
                              + lambda^{-1/2} (3 + B_0 ln(5/delta))
        beta^{(A1)}_t     = B + R lambda^{-1/2} sqrt(2 (gamma_{t-1} + ln(5/delta)))
                              + lambda^{-1/2} C

    ``schedule="theory"`` is this, as printed. ``schedule="experiment"`` (default) replaces
    the S instance's high-probability corruption term ``3 + B_0 ln(5/delta)`` by its
    expectation bound 1 (:func:`~agents.corruption._common.observed_corruption_bound`;
    the paper publishes no experiment schedule). ``alpha = 2`` (Theorem 9).
    ``posterior()`` returns the S instance's
    intersected ``alpha = 1`` band (robust to the corruption) while valid, and
    Algorithm 1's band ``(mu~_{t-1}, beta^{(A1)}_t sigma_{t-1})`` after the switch.

    Cost per round: two rank-one engine updates (the instance played and the all-data
    engine Algorithm 1 continues from) plus ``O(n)``; flat in ``t``.

    Parameters
    ----------
    schedule, lam, delta
        See :class:`~agents.gp.base.GPUCBAgent`.
    beta_fast, beta_slow, beta_fallback : None, float or callable
        Overrides of ``beta^{(F)}_{t_F}``, ``beta^{(S)}_{t_S}``, ``beta^{(A1)}_t``.
    C : float or None
        Known corruption level (default ``problem.C``; ``None`` there means 0).
    alpha : float
        ``alpha > 1`` of the S instance's acquisition (default 2, Theorem 9).
    R, B0 : float or None
        Noise scale and range bound ``B_0`` (defaults: see
        :func:`agents.corruption._common.noise_and_range`).

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Corrupted-Fig1-v0")
    >>> agent = FastSlowGPUCB()
    >>> agent.reset(env.unwrapped.problem, seed=0)
    >>> round(agent.p_slow_, 4), agent.valid_
    (0.2857, True)
    """

    name = "fast-slow-gp-ucb"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta_fast: Any = None,
        beta_slow: Any = None,
        beta_fallback: Any = None,
        C: float | None = None,
        alpha: float = 2.0,
        R: float | None = None,
        B0: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=None)
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.beta_fallback = beta_fallback
        self.C = C
        self.alpha = alpha
        self.R = R
        self.B0 = B0

    # ------------------------------------------------------------------ setup
    def _setup(self, problem: Any) -> None:
        owner = self._owner
        self.C_ = known_budget(self, problem, self.C)
        self.alpha_ = check_real(owner, "alpha", self.alpha, 1.0, None, "left")
        # The constants feed only the default widths: with all three overridden (as the
        # error names them) none is needed, as for the other agents' beta override.
        needs_defaults = any(
            b is None for b in (self.beta_fast, self.beta_slow, self.beta_fallback)
        )  # `None in (...)` would compare an array override elementwise
        if needs_defaults:
            overrides = "beta_fast=..., beta_slow=... and beta_fallback"
            self.B_, self.R_, self.B0_ = noise_and_range(
                self, problem, self.R, self.B0, override=overrides
            )
        self.log5_ = math.log(5.0 / self.delta_)
        # Line 4: P(A_t = S) = min{1, 1/C} (= 1 when C <= 1, including C = 0).
        self.p_slow_ = 1.0 if self.C_ <= 1.0 else 1.0 / self.C_
        lam = self.lam_
        eng_f, eng_s = GPPosteriorEngine(problem, lam), GPPosteriorEngine(problem, lam)
        # eq. (26): 3 + B_0 ln(5/delta) ("theory"), 1 ("experiment"; see the function).
        slow_extra = (
            observed_corruption_bound(self.schedule_, self.B0_, self.log5_)
            if needs_defaults
            else math.nan
        )

        def default(eng: GPPosteriorEngine, extra: float) -> LemmaBeta | None:
            if not needs_defaults:  # every width overridden
                return None
            return LemmaBeta(eng, self.B_, self.R_, lam, self.log5_, extra)

        self.fast_ = ConfidenceInstance(
            eng_f, Schedule.resolve(owner, "beta_fast", self.beta_fast, default(eng_f, 0.0)), 1.0
        )
        self.slow_ = ConfidenceInstance(
            eng_s,
            Schedule.resolve(owner, "beta_slow", self.beta_slow, default(eng_s, slow_extra)),
            self.alpha_,
        )
        self.valid_ = True
        self.switched_at_: int | None = None
        self.instance_: str | None = None  # A_t of the pending round
        self.beta_ = Schedule.resolve(owner, "beta_fallback", self.beta_fallback, self._a1_beta)
        # A callable override is checked on its first values now: the fallback width is
        # used only after a switch (maybe never), where a NaN or a string would surface
        # deep inside an episode, or not at all.
        for name, override, sched in (
            ("beta_fast", self.beta_fast, self.fast_.beta),
            ("beta_slow", self.beta_slow, self.slow_.beta),
            ("beta_fallback", self.beta_fallback, self.beta_),
        ):
            if callable(override):
                for t in (1, 2, 3):
                    value = override(t)
                    if isinstance(value, str | bytes):  # float() would parse "1.0"
                        raise param_error(
                            owner, name, f"a schedule returning numbers (at t={t})", value
                        )
                    sched(t)  # raises naming the parameter, the round and the value

    def _a1_beta(self, t: int) -> float:
        # Theorem 9: beta^{(A1)}_t = B + R lambda^{-1/2} sqrt(2(gamma_{t-1} + ln(5/delta)))
        #                              + lambda^{-1/2} C.
        return lemma1_beta(self.B_, self.R_, self.lam_, self.engine_.info_gain, self.log5_, self.C_)

    # ------------------------------------------------------------------ protocol
    def act(self) -> int:
        if self._pending is None:
            if not self.valid_:
                return super().act()  # line 16: Algorithm 1 on all the data
            F, S = self.fast_, self.slow_
            if self.rng_.random() < self.p_slow_:  # line 4
                self.instance_ = "S"
                self._pending = self._argmax(S.ucba)  # line 8
            else:
                self.instance_ = "F"
                self._pending = self._argmax(np.minimum(F.ucb1, S.ucb1))  # line 6
        return self._pending

    def update(self, action: int, reward: float) -> None:
        a = self._check_action(action)
        y = self._check_reward(reward)
        if self.valid_:
            if self._pending is None:  # an update without act(): attribute it like act would
                self.act()
            inst = self.slow_ if self.instance_ == "S" else self.fast_
            inst.observe(a, y)  # lines 10-11
            # Line 12 / eq. (19): detection test on the intersected bounds.
            if float(np.min(self.fast_.ucb1 - self.slow_.lcb1)) < 0.0:
                self.valid_ = False
                self.switched_at_ = self.t_
        self.engine_.observe(a, y)  # all collected data (line 15), for Algorithm 1
        self.t_ += 1
        self._pending = None
        self.instance_ = None

    #: Its band is the S instance's intersection, not ``beta_t sigma``: no ``sigma`` band.
    posterior_sd = None

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """The S instance's intersected band while valid; Algorithm 1's band after the switch."""
        if self.valid_:
            centre, width = self.slow_.band()
            return centre.copy(), width.copy()
        return super().posterior()
