"""Fast-Slow GP-UCB for an unknown corruption level:
Bogunovic, Krause & Scarlett (AISTATS 2020), Algorithm 3 and Theorem 10."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.corruption._common import (
    ConfidenceInstance,
    LemmaBeta,
    noise_and_range,
    observed_corruption_bound,
)
from agents.gp.base import GPUCBAgent
from agents.gp.engine import GPPosteriorEngine
from agents.schedules import Schedule
from hbo_envs.validation import check_int, check_real

__all__ = ["MAX_LAYERS", "FastSlowGPUCBUnknown", "layer_thresholds", "n_layers"]

#: Largest ``layers`` override accepted (``ceil(log2 T)`` never exceeds it for ``T < 2^64``).
MAX_LAYERS = 64


def n_layers(T: int) -> int:
    """``ceil(log2 T)`` layers (at least 1)."""
    return max(1, math.ceil(math.log2(T))) if T > 1 else 1


def layer_thresholds(L: int) -> np.ndarray:
    """Cumulative ``2^-1, 2^-1 + 2^-2, ..., 1 - 2^-L``: a draw ``u ~ U[0, 1)`` picks layer
    ``ell`` when it falls in ``[1 - 2^{-(ell-1)}, 1 - 2^{-ell})`` (probability ``2^-ell``)
    and layer 1 when ``u >= 1 - 2^-L`` (the remaining probability)."""
    return np.cumsum(0.5 ** np.arange(1, L + 1))


class FastSlowGPUCBUnknown(GPUCBAgent):
    """Algorithm 3 of Bogunovic et al. (2020): Fast-Slow GP-UCB with unknown ``C``.

    ``L = ceil(log2 T)`` layers (``T = problem.horizon``), each a GP-UCB instance on its
    own posterior engine with intersected bounds (eqs. (29)-(32)), and nested sets of
    potential maximizers ``M^{(1)} ⊆ ... ⊆ M^{(L)}`` (eqs. (33)-(34)), all ``D`` at first.
    Each round:

    - sample layer ``ell`` with probability ``2^{-ell}`` (remaining probability to
      ``ell = 1``; one uniform draw from the agent's generator, see
      :func:`layer_thresholds`);
    - if ``M^{(ell)} != {}``: play ``argmax_{x in M^{(ell)}} ucb-bar^{(ell)}(x; alpha)``,
      include the observation in layer ``ell`` only, and update the sets with the layer's
      new bounds ``O_ell = {x : ucb-bar^{(ell)}(x; 1) >= max_x' lcb-bar^{(ell)}(x'; 1)}``;
    - else: find the lowest layer ``i > ell`` with ``M^{(i)} != {}``, play
      ``argmax_{x in M^{(i)}} ucb-bar^{(i)}(x; alpha)`` and change nothing (the
      observation is not used).

    **Set update (a resolved ambiguity).** The algorithm box sets
    ``M^{(ell)}_{t+1} <- O_ell`` and ``M^{(i)}_{t+1} <- M^{(ell)}_{t+1} ∩ M^{(i)}_t`` for
    ``i < ell``; eqs. (33)-(34) define ``M^{(ell)} = M^{(ell+1)} ∩ O_ell``. The box alone can
    re-grow ``M^{(ell)}`` (points a higher layer removed come back), contradicting the
    properties (i)-(ii) the analysis uses. Here ``M^{(i)} <- M^{(i)} ∩ O_ell`` for every
    ``i <= ell``, which is exactly (33)-(34) (each ``O_j`` only shrinks) and the box for
    ``i < ell``. If every set is empty (intersected bounds that crossed), the top layer
    plays over ``D``.

    Schedule (Theorem 10, eq. (35), general ``lambda``; ``gamma`` the realized information
    gain of the layer's own observations)::

        beta^{(ell)}_{t_ell} = B + R lambda^{-1/2} sqrt(2 (gamma_{t_ell - 1} + ln(4(1 + log2 T)/d)))
                                 + lambda^{-1/2} (3 + B_0 ln(4(1 + log2 T)/delta))

    (``d = delta``.) ``schedule="theory"`` is this, as printed; ``schedule="experiment"``
    (default) replaces ``3 + B_0 ln(4(1 + log2 T)/delta)`` by the expectation bound 1 (see
    :func:`~agents.corruption._common.observed_corruption_bound`). ``alpha = 2``.
    ``posterior()`` is layer 1's intersected ``alpha = 1`` band (the layer played most).
    Cost per round: one rank-one update of one layer's engine and ``O(L n)`` set
    bookkeeping; flat in ``t``.

    Parameters
    ----------
    schedule, lam, delta
        See :class:`~agents.gp.base.GPUCBAgent`.
    beta : None, float or callable
        Override of ``beta^{(ell)}_{t_ell}`` (a callable gets ``t_ell``; same for every layer).
    alpha : float
        ``alpha > 1`` of the acquisition (default 2).
    layers : int or None
        Override of ``L`` (default ``ceil(log2 T)``), in ``[1, MAX_LAYERS]``.
    R, B0 : float or None
        See :class:`~agents.corruption.fast_slow.FastSlowGPUCB`.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Corrupted-Fig1-v0", horizon=20_000)
    >>> agent = FastSlowGPUCBUnknown()
    >>> agent.reset(env.unwrapped.problem, seed=0)
    >>> agent.L_, [int(m.sum()) for m in agent.sets_][:3]
    (15, [201, 201, 201])
    """

    name = "fast-slow-gp-ucb-unknown"

    def __init__(
        self,
        *,
        schedule: str = "experiment",
        lam: float = 1.0,
        delta: float = 0.1,
        beta: Any = None,
        alpha: float = 2.0,
        layers: int | None = None,
        R: float | None = None,
        B0: float | None = None,
    ) -> None:
        super().__init__(schedule=schedule, lam=lam, delta=delta, beta=beta)
        self.alpha = alpha
        self.layers = layers
        self.R = R
        self.B0 = B0

    def _setup(self, problem: Any) -> None:
        owner = self._owner
        T = int(problem.horizon)
        # At most MAX_LAYERS (>= ceil(log2 T) for any T < 2^64): each layer owns an n x n
        # engine, and beyond layer 54 a layer is never sampled (2^-ell below the resolution
        # of the uniform draw), so a larger value can only exhaust memory.
        self.L_ = (
            n_layers(T)
            if self.layers is None
            else check_int(owner, "layers", self.layers, 1, MAX_LAYERS)
        )
        self.alpha_ = check_real(owner, "alpha", self.alpha, 1.0, None, "left")
        if self.beta is None:
            self.B_, self.R_, self.B0_ = noise_and_range(self, problem, self.R, self.B0)
        log_term = math.log(4.0 * (1.0 + math.log2(max(T, 1))) / self.delta_)  # eq. (35)
        self.log_term_ = log_term
        self.thresholds_ = layer_thresholds(self.L_)
        self.layers_: list[ConfidenceInstance] = []
        for _ in range(self.L_):
            eng = GPPosteriorEngine(problem, self.lam_)
            self.layers_.append(
                ConfidenceInstance(
                    eng, Schedule.resolve(owner, "beta", self.beta, self._beta35(eng)), self.alpha_
                )
            )
        n = int(problem.n)
        self.sets_ = [np.ones(n, dtype=bool) for _ in range(self.L_)]  # M^{(ell)}_1 = D
        self.layer_: int | None = None  # layer (0-based) sampled for the pending round
        self.learn_: bool = False  # whether the pending round's observation is used
        self.beta_ = self.layers_[0].beta

    def _make_engine(self, problem: Any) -> GPPosteriorEngine:
        # Layer 1's engine: the base's all-data engine is not needed, and building it would
        # allocate two more n x n matrices.
        return self.layers_[0].engine

    def _beta35(self, eng: GPPosteriorEngine) -> LemmaBeta | None:
        if self.beta is not None:  # overridden: the constants are not needed
            return None
        extra = observed_corruption_bound(self.schedule_, self.B0_, self.log_term_)
        return LemmaBeta(eng, self.B_, self.R_, self.lam_, self.log_term_, extra)

    def _masked_argmax(self, layer: ConfidenceInstance, mask: np.ndarray) -> int:
        return self._argmax(np.where(mask, layer.ucba, -np.inf))

    def act(self) -> int:
        if self._pending is None:
            u = self.rng_.random()
            ell = int(np.searchsorted(self.thresholds_, u, side="right"))
            if ell >= self.L_:  # remaining probability 2^-L goes to layer 1
                ell = 0
            if self.sets_[ell].any():
                self.layer_, self.learn_ = ell, True
            else:  # lowest non-empty layer above ell; no update this round
                above = [i for i in range(ell + 1, self.L_) if self.sets_[i].any()]
                self.layer_, self.learn_ = (above[0] if above else self.L_ - 1), False
            mask = self.sets_[self.layer_]
            if not mask.any():  # every set empty: the top layer plays over D
                mask = np.ones_like(mask)
            self._pending = self._masked_argmax(self.layers_[self.layer_], mask)
        return self._pending

    def update(self, action: int, reward: float) -> None:
        a = self._check_action(action)
        y = self._check_reward(reward)
        if self._pending is None:
            self.act()
        if self.learn_:
            ell = self.layer_
            layer = self.layers_[ell]
            layer.observe(a, y)
            # O_ell = {x : ucb-bar(x; 1) >= max_x' lcb-bar(x'; 1)}; M^{(i)} &= O_ell, i <= ell.
            keep = layer.ucb1 >= float(np.max(layer.lcb1))
            for i in range(ell + 1):
                np.logical_and(self.sets_[i], keep, out=self.sets_[i])
        self.t_ += 1
        self._pending = None
        self.layer_ = None

    #: Its band is the S instance's intersection, not ``beta_t sigma``: no ``sigma`` band.
    posterior_sd = None

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Layer 1's intersected ``alpha = 1`` band ``(centre, half-width)``."""
        centre, width = self.layers_[0].band()
        return centre.copy(), width.copy()
