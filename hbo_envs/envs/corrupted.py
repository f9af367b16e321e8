"""Adversarially corrupted environments of Bogunovic, Krause & Scarlett (AISTATS 2020),
"Corruption-Tolerant Gaussian Process Bandit Optimization" (§2 setting, Figure 1)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hbo_envs.adversaries import (
    INFO_MODELS,
    Adversary,
    AdversaryView,
    CorruptionLedger,
    make_adversary,
)
from hbo_envs.channels import Gaussian, RewardChannel
from hbo_envs.envs.base import GPBanditEnv, ObjectiveSpec
from hbo_envs.kernels import SquaredExponential
from hbo_envs.objectives import Objective, chowdhury_gopalan_synthetic
from hbo_envs.objectives.rkhs import RKHSFunction, rkhs_objective
from hbo_envs.validation import check_bool, check_choice, check_real, param_error

__all__ = [
    "BogunovicFigure1Env",
    "CorruptedEnv",
    "CorruptedSEEnv",
    "FIG1_F_LOCAL",
    "FIG1_F_STAR",
    "figure1_objective",
]

#: ``f(x*)`` and ``f(x_0)`` of Bogunovic et al. (2020) Figure 1 (left).
FIG1_F_STAR = 1.15
FIG1_F_LOCAL = 0.72


def figure1_objective(
    n_points: int = 201, lengthscale: float = 0.1, x_star: float = 0.75, x_local: float = 0.25
) -> Objective:
    """The Figure 1 function: ``f = a_1 k(., x*) + a_2 k(., x_0)`` on ``n`` points of [0, 1].

    SE kernel (``l = lengthscale``); ``a`` solves ``[[1, k12], [k12, 1]] a = [1.15, 0.72]``
    so that ``f(x*) = 1.15`` (global maximum) and ``f(x_0) = 0.72`` (a distinct local
    maximum) exactly, as in the paper's figure. ``x*`` and ``x_0`` are grid points; the
    bumps are ``|x* - x_0| / l = 5`` lengthscales apart so each is a local maximum of
    the tabulated ``f``. The RKHS norm is exact: ``sqrt(a^T K a)``.

    >>> obj = figure1_objective()
    >>> round(obj.f_star, 12), float(obj.points[obj.argmax, 0])
    (1.15, 0.75)
    """
    k = SquaredExponential(lengthscale)
    points = np.linspace(0.0, 1.0, n_points)[:, None]
    centers = np.array([[x_star], [x_local]])
    G = k(centers)
    a = np.linalg.solve(G, np.array([FIG1_F_STAR, FIG1_F_LOCAL]))
    fn = RKHSFunction(k, centers, a)
    return rkhs_objective(
        "bkc2020-figure1",
        points,
        fn,
        {"x_star": x_star, "x_local": x_local, "lengthscale": lengthscale},
    )


class CorruptedEnv(GPBanditEnv):
    """A kernelized bandit whose observations an adversary corrupts within a budget ``C``.

    ## Description
    Bogunovic, Krause & Scarlett (2020) §2: each round the adversary chooses
    ``c_t : D -> [-B_0, B_0]`` from ``f`` and the history (actions, uncorrupted rewards,
    its own past corruptions) and the agent observes ``y~_t = f(x_t) + eta_t + c_t(x_t)``.
    Any objective and any reward channel (``eta_t``) compose with any adversary
    (:mod:`hbo_envs.adversaries`). A :class:`~hbo_envs.adversaries.CorruptionLedger`
    enforces ``|c_t| <= B_0`` and ``sum_t charge_t <= C`` whatever the adversary asks
    for (a request for more is clipped, and the clip is recorded). ``info_model`` chooses
    what a round costs: ``"paper"`` (``c_t`` fixed before ``x_t`` is revealed, charged
    ``max_x |c_t(x)|``, eq. (2)) or ``"targeted"`` (the adversary sees ``x_t``, charged
    ``|c_t(x_t)|``).

    ## Action Space
    ``Discrete(n)``.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The corrupted payoff ``y~_t``.

    ## Episode End
    Truncated after ``horizon`` rounds.

    ## Info
    As :class:`~hbo_envs.envs.base.GPBanditEnv`: ``corruption`` is ``c_t(x_t)``,
    ``corruption_used`` the budget spent so far; plus ``corruption_clipped`` (total
    requested charge refused because the budget ran out).

    ## Arguments
    - ``objective``, ``channel``, ``horizon``, ``redraw``, ``objective_seed``: as
      :class:`~hbo_envs.envs.base.GPBanditEnv`.
    - ``adversary``: a name in :data:`hbo_envs.adversaries.ADVERSARIES`, a dict
      ``{"name": ..., **params}`` or an :class:`~hbo_envs.adversaries.Adversary`.
    - ``C``: the corruption budget, a finite real ``>= 0``.
    - ``B0``: the per-round bound ``|c_t(x)| <= B_0`` (``None``: ``max_x |f(x)|``, the
      paper's ``f : D -> [-B_0, B_0]``).
    - ``info_model``: ``"paper"`` or ``"targeted"``.
    - ``known_budget``: whether the setting declares ``C`` to the agent
      (``problem.C = C``) or not (``problem.C = None``).

    ``problem.meta`` carries ``B0`` (a constant of Theorems 9 and 10), the adversary's
    parameters and the information model.

    ## Version History
    - v0: initial version.

    >>> env = CorruptedEnv("random-rkhs", "gaussian", adversary="random_sign", C=1.0, horizon=5)
    >>> _ = env.reset(seed=0)
    >>> for a in range(5):
    ...     _, _, _, _, info = env.step(a)
    >>> round(info["corruption_used"], 12) <= 1.0, env.problem.C
    (True, 1.0)
    """

    def __init__(
        self,
        objective: ObjectiveSpec = "random-rkhs",
        channel: RewardChannel | str | dict[str, Any] = "gaussian",
        adversary: Adversary | str | dict[str, Any] | None = "region",
        C: float = 3.5,
        B0: float | None = None,
        info_model: str = "targeted",
        known_budget: bool = True,
        horizon: int = 1000,
        redraw: bool | None = None,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        self.C = check_real(owner, "C", C, 0.0, None, "left")
        self.B0 = None if B0 is None else check_real(owner, "B0", B0, 0.0, None, "neither")
        self.info_model = check_choice(owner, "info_model", info_model, INFO_MODELS)
        self.known_budget = bool(check_bool(owner, "known_budget", known_budget))
        self.adversary = make_adversary(adversary)
        super().__init__(objective, channel, horizon, redraw, objective_seed, name)

    def _set_objective(self, obj: Objective) -> None:
        super()._set_objective(obj)
        B0 = obj.sup_f if self.B0 is None else self.B0
        if not B0 > 0:
            raise param_error(type(self).__name__, "B0", "> 0 (max|f| is 0: pass B0)", B0)
        self.B0_ = float(B0)
        meta = dict(self.problem.meta)
        meta.update(
            B0=self.B0_,
            adversary=self.adversary.params(),
            info_model=self.info_model,
        )
        self.problem = self.problem.replace(C=self.C if self.known_budget else None, meta=meta)
        self._ledger = CorruptionLedger(
            self.C, self.B0_, self.info_model, owner=type(self).__name__
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        self._ledger.reset()
        self._actions: list[int] = []
        self._rewards: list[float] = []
        self._corruptions: list[float] = []
        self._adv_state = self.adversary.new_episode(
            self._f, self.problem.points, self.B0_, self.np_random
        )
        return obs, info

    def _corrupt(self, action: int, y: float) -> float:
        led = self._ledger
        value = 0.0
        if led.remaining > 0.0:
            view = AdversaryView(
                f=self._f,
                points=self.problem.points,
                t=len(self._actions) + 1,
                actions=self._actions,
                rewards=self._rewards,
                corruptions=self._corruptions,
                action=action if self.info_model == "targeted" else None,
                remaining=led.remaining,
                B0=self.B0_,
                state=self._adv_state,
                rng=self.np_random,
            )
            value = led.charge(self.adversary.propose(view), action)
            self._corruption_used = led.used
        self._actions.append(action)
        self._rewards.append(y)
        self._corruptions.append(value)
        return value

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, info = super().step(action)
        info["corruption_clipped"] = self._ledger.clipped
        return obs, reward, term, trunc, info


class BogunovicFigure1Env(CorruptedEnv):
    """Bogunovic, Krause & Scarlett (2020) Figure 1: the corruption example.

    ## Description
    ``f`` is :func:`figure1_objective`: a 1-D SE kernel sum (``l = 0.1``, 201 points on
    [0, 1]) with the global maximizer ``x* = 0.75`` (``f(x*) = 1.15``) and a distinct local
    maximizer ``x_0 = 0.25`` (``f(x_0) = 0.72``), as in the figure. Gaussian noise
    (``sigma``, default 0.1; the paper does not state it). The adversary is the paper's
    (:class:`~hbo_envs.adversaries.RegionAdversary`): observations sampled within
    ``radius`` (default 0.1) of ``x*`` are corrupted by ``-f(x*)/3`` until the budget
    ``C = 3.5`` is spent; the default information model is ``"targeted"`` (only sampled
    corrupted points are charged, the figure's story). The budget is declared known
    (``problem.C = 3.5``). ``B_0 = max|f| = 1.15``.

    ## Action Space
    ``Discrete(201)``.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    ``y~_t = f(x_t) + sigma xi_t + c_t(x_t)``.

    ## Episode End
    Truncated after ``horizon`` rounds (default 1000; the figure shows the first 50).

    ## Arguments
    ``sigma``, ``radius``, ``C``, ``B0``, ``info_model``, ``known_budget``, ``adversary``
    (default: the region adversary with ``radius``), ``horizon``.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Corrupted-Fig1-v0")
    >>> p = env.unwrapped.problem
    >>> p.n, p.C, round(p.sup_f, 12), p.meta["B0"]
    (201, 3.5, 1.15, 1.15)
    """

    def __init__(
        self,
        sigma: float = 0.1,
        radius: float = 0.1,
        C: float = 3.5,
        B0: float | None = None,
        info_model: str = "targeted",
        known_budget: bool = True,
        adversary: Adversary | str | dict[str, Any] | None = None,
        horizon: int = 1000,
        name: str = "",
    ) -> None:
        adv = {"name": "region", "radius": radius} if adversary is None else adversary
        super().__init__(
            figure1_objective(),
            Gaussian(sigma=sigma),
            adv,
            C,
            B0,
            info_model,
            known_budget,
            horizon,
            False,
            0,
            name or "bkc-fig1",
        )


class CorruptedSEEnv(CorruptedEnv):
    """The Chowdhury–Gopalan SE objective under one of the adversaries.

    ## Description
    ``f`` is the Chowdhury–Gopalan (2019) §6 SE objective (100 points on [0, 1],
    ``f = sum_i a_i k(., x_i)``, ``a_i ~ U[-1, 1]``, SE ``l = 0.2``, scaled to
    ``max|f| = 1``; exact RKHS norm), redrawn at every reset. Gaussian noise ``sigma``
    (default 0.1), as in Bogunovic et al.'s setting. The adversary (``adversary=``) spends
    a budget ``C`` (default 10) with ``|c_t| <= B_0 = max|f| = 1``; information model
    ``"targeted"`` by default; the budget is declared known.

    Registered ids: ``hbo/Corrupted-SE-None-v0``, ``-Region-v0`` (the Figure 1 adversary,
    radius 0.1), ``-Adaptive-v0``, ``-Decoy-v0``, ``-RandomSign-v0``.

    ## Action Space
    ``Discrete(100)``.

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The corrupted payoff ``y~_t``.

    ## Episode End
    Truncated after ``horizon`` rounds (default 2000).

    ## Arguments
    ``adversary``, ``C``, ``B0``, ``info_model``, ``known_budget``, ``sigma``,
    ``horizon``, ``redraw`` (default true), ``objective_seed``.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Corrupted-SE-Decoy-v0", C=2.0)
    >>> _ = env.reset(seed=0)
    >>> env.unwrapped.problem.C, env.unwrapped.adversary.name
    (2.0, 'decoy')
    """

    def __init__(
        self,
        adversary: Adversary | str | dict[str, Any] | None = "region",
        C: float = 10.0,
        B0: float | None = None,
        info_model: str = "targeted",
        known_budget: bool = True,
        sigma: float = 0.1,
        horizon: int = 2000,
        redraw: bool = True,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        # a partial, not a closure: the env pickles (plain pickle) and deep-copies
        draw = functools.partial(chowdhury_gopalan_synthetic, kernel="se", coeffs="symmetric")

        adv = make_adversary(adversary)
        super().__init__(
            draw,
            Gaussian(sigma=sigma),
            adv,
            C,
            B0,
            info_model,
            known_budget,
            horizon,
            redraw,
            objective_seed,
            name or f"bkc-se-{adv.name}",
        )
