"""Environments for the attacks of 2021–2025: Han & Scarlett (ICML 2022) and the
frequency-bounded adversary of Ezzerg, Bogunovic & Knoblauch (2025).

Both build on :class:`~hbo_envs.envs.corrupted.CorruptedEnv` (any objective, any reward
channel, an adversary, a ledger); see ``docs/robust.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hbo_envs.adversaries import Adversary, make_adversary
from hbo_envs.adversaries.frequency import FrequencyLedger
from hbo_envs.channels import Gaussian, RewardChannel
from hbo_envs.envs.base import GPBanditEnv, ObjectiveSpec
from hbo_envs.envs.corrupted import CorruptedEnv
from hbo_envs.kernels import Matern
from hbo_envs.objectives import Objective, objective_from_values
from hbo_envs.objectives.han_scarlett import (
    HS_FUNCTIONS,
    forrester,
    han_scarlett_objective,
    region_mask,
)
from hbo_envs.validation import check_choice, check_int, check_real

__all__ = [
    "HS_ATTACKS",
    "FrequencyCorruptedEnv",
    "HanScarlettEnv",
    "RCGPForresterEnv",
    "rcgp_forrester_objective",
]

#: Attack names of :class:`HanScarlettEnv` -> adversary name and fixed parameters.
HS_ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "none": ("none", {}),
    "clipping": ("clipping", {}),
    "aggressive_subtraction": ("aggressive_subtraction", {}),
    "subtraction_rnd": ("subtraction", {"shape": "rnd"}),
    "subtraction_sq": ("subtraction", {"shape": "sq"}),
    "random": ("random", {}),
}


class HanScarlettEnv(CorruptedEnv):
    """An Attack-BO test function under one of Han & Scarlett's (ICML 2022) attacks.

    ## Description
    ``f = -g / max|g|`` for the Attack-BO function ``function`` (Forrester, Branin,
    Camelback, Bohachevsky, Levy, Hartmann6; :mod:`hbo_envs.objectives.han_scarlett`) on its
    candidate grid, Gaussian noise ``sigma``, and the attack ``attack``
    (:mod:`hbo_envs.adversaries.han_scarlett`; note §2) aimed at the function's target region
    ``R`` (note §4), under the ``"targeted"`` information model: a round costs
    ``|c_t(x_t)|`` (Attack-BO's ``cum_c_t``). The ledger caps the total at ``C`` (after
    which the attack stops) and ``|c_t|`` at ``B0``. The budget is not declared to the
    agent (``problem.C = None``; Attack-BO's victims do not know it).

    ## Action Space
    ``Discrete(n)`` (1-D: 200 grid points; 2-D: 25 x 25; Hartmann6: 500 uniform points).

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    ``y~_t = f(x_t) + sigma xi_t + c_t(x_t)``.

    ## Episode End
    Truncated after ``horizon`` rounds (default 200; Attack-BO ran 100–250 iterations).

    ## Info
    As :class:`CorruptedEnv`, plus ``in_target`` (whether ``x_t`` is in ``R``: the
    attack-success indicator of Attack-BO's ``success_rate``).

    ## Arguments
    - ``function``: one of ``forrester``, ``branin``, ``camelback``, ``bohachevsky``,
      ``levy``, ``hartmann6``.
    - ``attack``: one of ``none``, ``clipping``, ``aggressive_subtraction``,
      ``subtraction_rnd``, ``subtraction_sq``, ``random``.
    - ``margin``: ``Delta`` of clipping (default 0) / aggressive subtraction (``None``:
      the gap ``f(x*) - f(x~)``); ``height`` of the bump attacks (``None``: ``f(x*) - min f``);
      ``std``: of the random attack (default 0.1).
    - ``C`` (default 50), ``B0`` (default 4: every attack's ``|c|`` on ``f`` in [-1, 1]),
      ``sigma`` (default 0.01), ``horizon``, ``channel`` (overrides ``sigma``).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/HS-Forrester-Clipping-v0")
    >>> _ = env.reset(seed=0)
    >>> _, r, _, _, info = env.step(150)          # x = 0.754, near x*: clipped down
    >>> info["in_target"], info["corruption"] < 0
    (False, True)
    """

    def __init__(
        self,
        function: str = "forrester",
        attack: str = "clipping",
        C: float = 50.0,
        B0: float | None = 4.0,
        margin: float | None = None,
        height: float | None = None,
        std: float = 0.1,
        sigma: float = 0.01,
        channel: RewardChannel | str | dict[str, Any] | None = None,
        horizon: int = 200,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        self.function = check_choice(owner, "function", function, tuple(HS_FUNCTIONS))
        self.attack = check_choice(owner, "attack", attack, tuple(HS_ATTACKS))
        sigma = check_real(owner, "sigma", sigma, 0.0, None, "left")
        # every attack parameter is checked whatever the attack (a bad value is never ignored)
        std = check_real(owner, "std", std, 0.0, None, "left")
        if margin is not None:
            margin = check_real(owner, "margin", margin, 0.0, None, "left")
        if height is not None:
            height = check_real(owner, "height", height, 0.0, None)
        obj = han_scarlett_objective(function)
        p = obj.params
        adv_name, fixed = HS_ATTACKS[attack]
        spec: dict[str, Any] = {"name": adv_name, **fixed}
        if adv_name == "clipping":
            spec.update(center=p["region_center"], side=p["region_side"], margin=margin or 0.0)
        elif adv_name == "aggressive_subtraction":
            spec.update(center=p["region_center"], side=p["region_side"], margin=margin)
        elif adv_name == "subtraction":
            spec.update(width=p["bump_width"], height=height)
        elif adv_name == "random":
            spec.update(std=std)
        self._region = region_mask(obj.points, p["region_center"], p["region_side"])
        super().__init__(
            obj,
            Gaussian(sigma=sigma) if channel is None else channel,
            make_adversary(spec),
            C,
            B0,
            "targeted",
            False,
            horizon,
            False,
            0,
            name or f"hs-{function}-{attack}",
        )

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, info = super().step(action)
        info["in_target"] = bool(self._region[int(action)])
        return obs, reward, term, trunc, info


class FrequencyCorruptedEnv(CorruptedEnv):
    """A kernelized bandit under a frequency-bounded adversary (Ezzerg et al. 2025, Def. 2.1).

    ## Description
    The adversary sees ``x_t`` and may corrupt the observation by any amount up to
    ``max_abs`` (default ``1e15``; rewards stay finite floats), but in at most ``T_c``
    rounds (:class:`~hbo_envs.adversaries.frequency.FrequencyLedger`). The budget is a
    count of rounds, not a sum; it is not declared to the agent (``problem.C = None``;
    ``problem.meta["T_c"]`` records it). Default adversary: the clairvoyant near/far rule
    of the paper's Forrester experiment with ``high = 1e12``, ``low = -1e12``.

    ## Action Space / Observation Space / Episode End
    As :class:`CorruptedEnv`.

    ## Rewards
    ``y~_t = f(x_t) + eta_t + c_t(x_t)``.

    ## Info
    ``corruption`` is ``c_t(x_t)``; ``corruption_used`` the running ``sum_t |c_t(x_t)|`` (as
    every corrupted env); ``corrupted_rounds`` the number of corrupted rounds so far (the
    budget's unit, ``<= T_c``). ``env.C`` is ``inf`` (no sum budget).

    ## Arguments
    ``objective``, ``channel``, ``adversary``, ``T_c`` (integer ``>= 0``), ``max_abs``
    (``(0, 1e300]``), ``horizon``, ``redraw``, ``objective_seed``.

    ## Version History
    - v0: initial version.

    >>> env = FrequencyCorruptedEnv(rcgp_forrester_objective(), "gaussian", T_c=2, horizon=5)
    >>> _ = env.reset(seed=0)
    >>> infos = [env.step(0)[4] for _ in range(3)]   # x = 0 is far from x* = 1
    >>> [i["corrupted_rounds"] for i in infos], infos[0]["corruption"] > 1e11
    ([1, 2, 2], True)
    """

    def __init__(
        self,
        objective: ObjectiveSpec = "random-rkhs",
        channel: RewardChannel | str | dict[str, Any] = "gaussian",
        adversary: Adversary | str | dict[str, Any] | None = "clairvoyant",
        T_c: int = 5,
        max_abs: float = 1e15,
        horizon: int = 100,
        redraw: bool | None = None,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        self.T_c = check_int(owner, "T_c", T_c, 0, None)
        self.max_abs = FrequencyLedger(self.T_c, max_abs, owner=owner).max_abs
        super().__init__(
            objective,
            channel,
            adversary,
            0.0,
            None,
            "targeted",
            False,
            horizon,
            redraw,
            objective_seed,
            name or "frequency",
        )
        self.C = math.inf  # no sum budget: the ledger counts rounds

    def _set_objective(self, obj: Objective) -> None:
        GPBanditEnv._set_objective(self, obj)  # not CorruptedEnv's: no sum-budget ledger
        self.B0_ = self.max_abs  # the per-round bound is the magnitude cap
        meta = dict(self.problem.meta)
        meta.update(
            adversary=self.adversary.params(),
            info_model="targeted",
            T_c=self.T_c,
            max_abs=self.max_abs,
            budget="rounds",
        )
        self.problem = self.problem.replace(C=None, meta=meta)
        self._ledger = FrequencyLedger(self.T_c, self.max_abs, owner=type(self).__name__)

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, info = super().step(action)
        info.pop("corruption_clipped", None)
        info["corrupted_rounds"] = self._ledger.rounds
        return obs, reward, term, trunc, info


def rcgp_forrester_objective(n_points: int = 200) -> Objective:
    """Forrester *maximised* on [0, 1] (Ezzerg et al. 2025, note §6: ``x* = 1``), scaled.

    ``f = g / max|g|`` with ``g(x) = (6x - 2)^2 sin(12x - 4)`` (``max |g| = g(1) = 15.83``),
    on ``n_points`` evenly spaced points; Matérn-5/2 kernel, lengthscale 0.1.
    """
    n_points = check_int("rcgp_forrester_objective", "n_points", n_points, 3, 5000)
    X = np.linspace(0.0, 1.0, n_points)[:, None]
    g = forrester(X)
    scale = float(np.max(np.abs(g)))
    return objective_from_values(
        "rcgp-forrester", X, g / scale, Matern(0.1, 2.5), params={"scale": scale}
    )


class RCGPForresterEnv(FrequencyCorruptedEnv):
    """The corrupted-Forrester experiment of Ezzerg, Bogunovic & Knoblauch (2025), note §6.

    ## Description
    ``f`` = Forrester maximised on [0, 1] (:func:`rcgp_forrester_objective`, scaled by
    ``1 / 15.83`` so ``max |f| = 1``); Gaussian noise with standard deviation
    ``1 / 15.83`` (the paper's ``sigma_noise^2 = 1`` in raw units); the clairvoyant adversary
    (radii 0.2 / 0.5, main text) with ``T_c = ceil(T^{1/3})`` corrupted rounds
    (``T = horizon``, default 100: ``T_c = 5``). ``magnitude="paper"`` uses the appendix's
    values HIGH = 25, LOW = -10 (raw units, scaled here); ``"huge"`` (default) uses
    ``+-1e12``. Deviations: a grid of 200 points instead of continuous optimisation, no
    Sobol initial design (the agents start from the prior), fixed kernel hyperparameters.

    ## Arguments
    ``magnitude`` (``"huge"`` or ``"paper"``), ``T_c`` (``None``: ``ceil(horizon^{1/3})``),
    ``horizon``.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/RCGP-Forrester-Frequency-v0")
    >>> env.unwrapped.problem.meta["T_c"], env.unwrapped.problem.n
    (5, 200)
    """

    def __init__(self, magnitude: str = "huge", T_c: int | None = None, horizon: int = 100) -> None:
        owner = type(self).__name__
        check_choice(owner, "magnitude", magnitude, ("huge", "paper"))
        horizon = check_int(owner, "horizon", horizon, 1, 10**9)
        obj = rcgp_forrester_objective()
        s = obj.params["scale"]
        hi, lo = (1e12, -1e12) if magnitude == "huge" else (25.0 / s, -10.0 / s)
        if T_c is None:
            t_c = int(np.ceil(horizon ** (1.0 / 3.0) - 1e-12))
        else:
            t_c = check_int(owner, "T_c", T_c, 0, None)
        self.magnitude = magnitude
        super().__init__(
            obj,
            Gaussian(sigma=1.0 / s),
            {"name": "clairvoyant", "near": 0.2, "far": 0.5, "high": hi, "low": lo},
            t_c,
            1e15,
            horizon,
            False,
            0,
            f"rcgp-forrester-{magnitude}",
        )
