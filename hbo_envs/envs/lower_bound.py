"""The regret lower bound of Chowdhury & Gopalan (NeurIPS 2019), Theorem 2, as environments.

The hard instances of the theorem's proof (Appendix C): a function drawn uniformly from the
bump family of :mod:`hbo_envs.objectives.lower_bound` and the two-point heavy-tailed reward
channel of :mod:`hbo_envs.channels.two_point`. No algorithm can have expected regret of
smaller order than the theorem's rate on these instances (for the constants passed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hbo_envs.channels import TwoPoint
from hbo_envs.envs.base import GPBanditEnv
from hbo_envs.kernels import MAX_MATERN_NU, Kernel, Matern, SquaredExponential
from hbo_envs.objectives.base import Objective
from hbo_envs.objectives.lower_bound import LowerBoundFamily, lower_bound_family
from hbo_envs.validation import check_choice, check_int, check_real, param_error

__all__ = ["LowerBoundEnv"]


class LowerBoundEnv(GPBanditEnv):
    """Hard instances of the heavy-tailed regret lower bound (Chowdhury–Gopalan 2019, Thm. 2).

    ## Description
    The construction of the theorem's proof (App. C.1–C.2, after Scarlett et al. 2017) on
    ``[0, 1]^d``, for the constants ``(k, B, T, α, v)`` passed as arguments:

    - a family of ``M = m^d`` functions ``f_j = g(· - c_j)``, shifted copies of a bump
      ``g = (2Δ/h(0)) h(2ζ·/w)`` (``h`` the inverse Fourier transform of
      ``exp(-1/(1-||ω||²))``, computed by quadrature) centred on the grid of cubes of side
      ``w = 1/m``. Each ``f_j`` has its unique maximum ``2Δ`` at ``c_j``, no point is
      Δ-optimal for two of them, and ``||f_j||_H <= ||g||_H <= B`` with ``||g||_H``
      computed from the kernel's spectral density;
    - ``Δ = min(½ (M/T)^{α/(1+α)} v^{1/(1+α)}, ½ (½)^{α/(1+α)} v^{1/(1+α)})`` (eq. (21)
      with the unknown constant ``4C² = 1``; eq. (17)) with ``m`` the finest grid whose
      bumps keep the norm within ``B`` at that ``Δ``;
    - every ``reset(seed=...)`` draws ``j`` uniformly (the theorem's random ``f``).

    The construction depends on the horizon ``T``: each ``horizon`` is a different
    instance (``Δ ∝ T^{-α/(1+α)}``, and for Matérn ``M`` grows with ``T``). Everything is
    reported: ``env.unwrapped.family`` (:class:`~hbo_envs.objectives.lower_bound.
    LowerBoundFamily`: ``delta``, ``w``, ``M``, ``zeta``, ``rkhs_norm``, the maximisers
    ``centres`` and their indices) and ``problem.meta["construction"]``. The family (not
    the drawn ``j``) is public: the theorem holds for algorithms that know it.

    ``env.unwrapped.regret_lower_bound(t)`` is Theorem 2's rate at ``T = t`` **with its
    absolute constant set to 1 — the theorem is an Ω(·) and the constant is not known**:
    SE ``v^{1/(1+α)} (ln(v^{-1/α} B^{(1+α)/α} t))^{dα/(1+α)} t^{1/(1+α)}``; Matérn-ν
    ``v^{ν/(ν(1+α)+dα)} B^{dα/(ν(1+α)+dα)} t^{(ν+dα)/(ν(1+α)+dα)}``. Plots draw it dashed;
    only its slope is meaningful. ``lower_bound_exponent`` is that slope's exponent.

    ## Action Space
    ``Discrete(n)``, ``n = (m · points_per_cell)^d``: ``points_per_cell`` points per axis
    in every cell, symmetric about its centre (so every maximiser is a candidate).

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The two-point payoff (eq. (14)): ``sgn(f(x)) (v/2Δ)^{1/α}`` with probability
    ``(2Δ/v)^{1/α} |f(x)|``, else 0. ``E[y] = f(x)``; ``problem.v = v`` exactly
    (``E|y|^{1+α} = v|f(x)|/(2Δ)``, equal to ``v`` at the maximiser), ``problem.nu`` exact.

    ## Episode End
    Truncated after ``horizon = T`` rounds.

    ## Arguments
    ``kernel`` (``"se"`` | ``"matern"``), ``lengthscale`` (0.1), ``matern_nu`` (2.5),
    ``alpha`` (α ∈ (0, 1], 1), ``v`` (1), ``B`` (1), ``horizon`` (T, 1000), ``dim``
    (d ∈ {1, 2, 3}, 1), ``points_per_cell`` (odd, 5), ``max_points`` (cap on ``n``, 1000,
    at most 5000; ``family.capped`` says when it bit), ``delta`` (fix Δ instead of eq.
    (21); ``None``), ``objective_seed`` (the ``j`` drawn at construction, before any
    reset). Parameters for which the construction does not exist (``Δ/B`` not small enough
    for ``M >= 2``, or a ``delta`` above ``½ v^{1/(1+α)}``) are refused with a clear error.

    ## Version History
    - v0: initial version.

    Reference: S. R. Chowdhury, A. Gopalan, "Bayesian Optimization under Heavy-tailed
    Payoffs", NeurIPS 2019, Theorem 2 and Appendix C; J. Scarlett, I. Bogunovic, V. Cevher,
    "Lower Bounds on Regret for Noisy Gaussian Process Bandit Optimization", COLT 2017.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/LowerBound-SE-v0", horizon=1000, alpha=0.5)
    >>> _ = env.reset(seed=0)
    >>> fam = env.unwrapped.family
    >>> fam.M, env.unwrapped.problem.n, round(fam.delta, 4), round(env.unwrapped.problem.v, 6)
    (9, 45, 0.104, 1.0)
    >>> env.unwrapped.lower_bound_exponent
    0.6666666666666666
    """

    def __init__(
        self,
        kernel: str = "se",
        alpha: float = 1.0,
        v: float = 1.0,
        B: float = 1.0,
        horizon: int = 1000,
        dim: int = 1,
        lengthscale: float = 0.1,
        matern_nu: float = 2.5,
        points_per_cell: int = 5,
        max_points: int = 1000,
        delta: float | None = None,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        check_choice(owner, "kernel", kernel, ("se", "matern"))
        if not isinstance(name, str):
            raise param_error(owner, "name", "a string", name)
        lengthscale = check_real(owner, "lengthscale", lengthscale, 0)
        # checked for both kernels (an SE env must not accept matern_nu=nan silently), with
        # the Matern kernel's own bound, so the error names 'matern_nu', not Matern's 'nu'
        matern_nu = check_real(owner, "matern_nu", matern_nu, 0, MAX_MATERN_NU, "right")
        k: Kernel
        if kernel == "se":
            k = SquaredExponential(lengthscale)
        else:
            k = Matern(lengthscale, matern_nu)
        self.family: LowerBoundFamily = lower_bound_family(
            k,
            horizon=horizon,
            alpha=alpha,
            v=v,
            B=B,
            dim=dim,
            points_per_cell=points_per_cell,
            max_points=max_points,
            delta=delta,
            owner=owner,
        )
        fam = self.family
        self._construction = fam.describe()
        channel = TwoPoint(delta=fam.delta, v=fam.v, alpha=fam.alpha)
        super().__init__(
            fam.draw,
            channel,
            fam.horizon,
            True,
            check_int(owner, "objective_seed", objective_seed, 0),
            name or f"lower-bound-{kernel}",
        )

    def _set_objective(self, obj: Objective) -> None:
        super()._set_objective(obj)
        meta = {**self.problem.meta, "construction": self._construction}
        self.problem = self.problem.replace(meta=meta)

    @property
    def lower_bound_exponent(self) -> float:
        """The exponent of ``T`` in Theorem 2's rate (SE ``1/(1+α)``, Matérn see above)."""
        return self.family.exponent

    def regret_lower_bound(self, t: Any) -> np.ndarray:
        """Theorem 2's rate at ``T = t``, **constant unknown (set to 1)**: only the slope counts."""
        return np.asarray(self.family.rate(np.asarray(t, dtype=float)), dtype=float)
