"""The :class:`Problem` record: everything an algorithm of the papers may know.

``env.unwrapped.problem`` is a frozen :class:`Problem`. Agents receive it in
``agent.reset(problem, seed=...)`` and must never see anything else about the env
(not ``f``, not the maximiser, not the noise). Its constants are *computed*, not guessed:

- ``B`` — the RKHS norm of the objective. For ``f = sum_i a_i k(., x_i)`` it is exactly
  ``sqrt(a^T K a)`` (Chowdhury–Gopalan Thm. 1, Park–Lee Assumption 1). For objectives
  that are not kernel sums (Griewank, data) it is the smallest RKHS norm of a function
  that equals ``f`` on the candidate set, ``sqrt(f^T K^{-1} f)``; if ``K`` had to be
  regularised, ``kernel_jitter`` records the jitter used.
- ``alpha`` — the moment order (the papers' ``alpha`` / ``epsilon``), in ``(0, 1]``.
- ``v`` — ``sup_x E|y(x)|^{1+alpha}`` (raw moment, Chowdhury–Gopalan Thm. 1).
- ``nu`` — ``sup_x E|eta(x)|^{1+alpha}`` (central moment, Park–Lee Assumption 2).
- ``sup_f`` — ``max_x |f(x)|`` over the candidate set (Chowdhury–Gopalan's experiments
  set ``B = max|f|``; the ``"experiment"`` schedules use it).
- ``C`` — the corruption budget known to the agent (``None``: no corruption or unknown).

Kernel access. Agents read the kernel through :meth:`Problem.kernel_block`,
:meth:`Problem.kernel_columns` and :meth:`Problem.kernel_diag`, which work in both forms
of ``kernel_matrix``:

- up to :data:`DENSE_MAX_N` arms it is the dense read-only ``(n, n)`` array (as it always
  was: every env below that size builds it, so numbers stay bit for bit what they were);
- beyond, envs with an analytic kernel pass a :class:`~hbo_envs.kernels.LazyKernelMatrix`:
  blocks are computed on demand in ``O(rows x cols)`` memory, and ``np.asarray`` of it
  builds the full matrix only if it fits in memory, else it is refused with the size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hbo_envs.kernels import Kernel, LazyKernelMatrix
from hbo_envs.validation import (
    MAX_HORIZON,
    as_readonly,
    check_finite_constants,
    check_int,
    check_real,
)

__all__ = ["DENSE_MAX_N", "Problem"]

DENSE_MAX_N = 8192
"""Largest candidate set whose kernel matrix objectives and envs store densely (512 MB).

Beyond it an analytic kernel's matrix is a :class:`~hbo_envs.kernels.LazyKernelMatrix`, and
:class:`~agents.gp.engine.GPPosteriorEngine` works in the played-set representation."""


@dataclass(frozen=True, eq=False)
class Problem:
    """A bandit problem over a finite candidate set, as the algorithms see it.

    Attributes
    ----------
    points : ndarray, shape (n, d), read-only
        The candidate set; action ``i`` plays ``points[i]``.
    kernel_matrix : ndarray, shape (n, n), read-only, or LazyKernelMatrix
        ``K[i, j] = k(points[i], points[j])``; ``K[i, i] <= 1``. Dense up to
        :data:`DENSE_MAX_N` arms, on demand beyond (see the module docstring); read it
        through :meth:`kernel_block`, :meth:`kernel_columns`, :meth:`kernel_diag`.
    kernel : Kernel
        The kernel object (``kernel.analytic`` is False for data-derived kernels).
    B, alpha, v, nu, sup_f : float
        Problem constants; see the module docstring.
    horizon : int
        Number of rounds ``T`` of an episode.
    C : float or None
        Corruption budget revealed to the agent, or ``None``.
    noise_scale : float
        A scale of the noise (the channel's own scale parameter), for reference.
    kernel_jitter : float
        Jitter added to ``K`` when ``B`` was computed as ``sqrt(f^T K^{-1} f)`` (0 if none).
    name : str
        Human-readable name of the problem (env id or objective name).
    meta : dict
        Anything else descriptive (objective and channel parameters); never the answer.
    """

    points: np.ndarray
    kernel_matrix: np.ndarray | LazyKernelMatrix
    kernel: Kernel
    B: float
    alpha: float
    v: float
    nu: float
    sup_f: float
    horizon: int
    C: float | None = None
    noise_scale: float = 0.0
    kernel_jitter: float = 0.0
    name: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim == 1:
            pts = pts[:, None]
        lazy = isinstance(self.kernel_matrix, LazyKernelMatrix)
        K = self.kernel_matrix if lazy else np.asarray(self.kernel_matrix, dtype=float)
        n = pts.shape[0]
        if K.shape != (n, n):
            raise ValueError(
                f"kernel_matrix must have shape ({n}, {n}) to match points; got {K.shape}."
            )
        # No Problem with a non-finite constant is ever published: an overflow (a noise
        # scale of 1e200, a lengthscale of 1e-300) is refused here for every env, however
        # it was built, instead of reaching an agent as B = nan. (A lazy matrix: its
        # diagonal and first row stand for the entries, computed by the same formula.)
        check_finite_constants(
            "Problem",
            {
                "points": pts,
                "kernel_matrix": np.concatenate([K.diag(), K.block([0], slice(None))[0]])
                if lazy
                else K,
            },
            "a NaN or infinite entry means a kernel or objective parameter is out of range",
        )
        check_finite_constants(
            "Problem",
            {
                "B": self.B,
                "alpha": self.alpha,
                "v": self.v,
                "nu": self.nu,
                "sup_f": self.sup_f,
                "noise_scale": self.noise_scale,
                "kernel_jitter": self.kernel_jitter,
                "C": self.C,
            },
            "computed from the env's parameters; an overflow means a channel, kernel or "
            "objective parameter is out of the range that works",
        )
        object.__setattr__(self, "points", as_readonly(pts))
        object.__setattr__(self, "kernel_matrix", K if lazy else as_readonly(K))
        if not 0 < self.alpha <= 1:
            raise ValueError(f"Problem.alpha must be in (0, 1]; got {self.alpha!r}.")
        for name in ("B", "v", "nu", "sup_f", "noise_scale", "kernel_jitter"):
            object.__setattr__(
                self, name, check_real("Problem", name, getattr(self, name), 0, closed="left")
            )
        if self.C is not None:
            object.__setattr__(self, "C", check_real("Problem", "C", self.C, 0, closed="left"))
        object.__setattr__(
            self, "horizon", check_int("Problem", "horizon", self.horizon, 1, MAX_HORIZON)
        )
        object.__setattr__(self, "meta", dict(self.meta))

    @property
    def n(self) -> int:
        """Number of candidate points (arms)."""
        return int(self.points.shape[0])

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the points."""
        return int(self.points.shape[1])

    @property
    def kernel_is_lazy(self) -> bool:
        """Whether ``kernel_matrix`` is computed on demand (large ``n``), not stored."""
        return isinstance(self.kernel_matrix, LazyKernelMatrix)

    def kernel_block(self, rows: Any, cols: Any) -> np.ndarray:
        """``K[rows][:, cols]``, shape ``(len(rows), len(cols))`` (index arrays or slices),
        without forming ``K`` when it is lazy.

        >>> import numpy as np
        >>> from hbo_envs.kernels import SquaredExponential
        >>> X = np.array([[0.0], [1.0], [2.0]])
        >>> p = Problem(X, SquaredExponential(1.0)(X), SquaredExponential(1.0), B=1.0,
        ...             alpha=1.0, v=2.0, nu=1.0, sup_f=1.0, horizon=10)
        >>> np.round(p.kernel_block([0], [1, 2]), 4)
        array([[0.6065, 0.1353]])
        """
        K = self.kernel_matrix
        if isinstance(K, LazyKernelMatrix):
            return K.block(rows, cols)
        if isinstance(rows, slice) or isinstance(cols, slice):
            return np.array(K[rows][:, cols])
        return K[np.ix_(np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp))]

    def kernel_columns(self, idx: Any) -> np.ndarray:
        """``K[:, idx]``, shape ``(n, len(idx))``: the kernel between every arm and ``idx``."""
        K = self.kernel_matrix
        if isinstance(K, LazyKernelMatrix):
            return K.columns(idx)
        return K[:, np.asarray(idx, dtype=np.intp)]

    def kernel_diag(self) -> np.ndarray:
        """``k(x_i, x_i)`` for every arm, shape ``(n,)`` (a new array)."""
        K = self.kernel_matrix
        if isinstance(K, LazyKernelMatrix):
            return K.diag()
        return np.diagonal(K).copy()

    def replace(self, **changes: Any) -> Problem:
        """A copy with some fields changed (e.g. a different ``horizon``)."""
        from dataclasses import replace

        return replace(self, **changes)

    def describe(self) -> dict[str, Any]:
        """The scalar constants as a JSON-friendly dict (for metadata records)."""
        return {
            "name": self.name,
            "n": self.n,
            "dim": self.dim,
            "kernel": self.kernel.name,
            "kernel_params": self.kernel.params(),
            "B": self.B,
            "alpha": self.alpha,
            "v": self.v,
            "nu": self.nu,
            "sup_f": self.sup_f,
            "C": self.C,
            "noise_scale": self.noise_scale,
            "kernel_jitter": self.kernel_jitter,
            "horizon": self.horizon,
        }
