"""The attacks of Han & Scarlett (ICML 2022), "Adversarial Attacks on Gaussian Process Bandits".

Formulas from the authors' code (eric-vader/Attack-BO ``attack_bo/algorithms.py``), as
recorded in ``../shared/papers/beyond/han-scarlett-2022-adversarial-attacks-gp-bandits.md``
§2. **Sign convention.** Their code minimises ``g``; hbo-bench maximises ``f``. Each class
states both forms; the code here is the maximisation form. ``R`` is the target region (an
axis-aligned box ``center +- side / 2``), ``f(x~) = max_{x in R} f`` (computed exactly on
the candidate set) and ``Delta >= 0`` a margin.

- clipping: Attack-BO ``c = max(0, g(x~) + Delta - g(x))``;
  here ``c = -max(0, f(x) - (f(x~) - Delta))``.
- aggressive subtraction: Attack-BO ``c = +Delta`` outside R; here ``c = -Delta`` outside R.
- subtraction (rnd / sq bump): Attack-BO ``c = -(y_scale b((x - x0) / w))`` with
  ``y_scale < 0`` at the minimiser ``x0``; here ``c = -h b((x - x*) / w)``, ``h > 0``.
- random: ``c ~ N(mean, std^2)`` in both conventions.

All are zero inside ``R`` except the bump and random attacks (which act wherever the
formula says). They are stationary (``c_t = c(x_t)``) except the random one. Use them under
the ``"targeted"`` information model (the attacker sees ``x_t``; a round costs
``|c_t(x_t)|``, the authors' ``cum_c_t``); the env's ledger clips at ``B_0`` and at the
budget ``C`` like every adversary. The PPO attack and the adaptive-margin strategy of the
authors' code are not implemented.

>>> import numpy as np
>>> pts = np.linspace(0, 1, 5)[:, None]; f = np.array([0.2, 0.5, 0.1, 1.0, 0.3])
>>> adv = ClippingAttack(center=(0.125,), side=(0.25,))     # R = {0, 0.25}: f(x~) = 0.5
>>> st = adv.new_episode(f, pts, 2.0, None)
>>> st.tolist()                                             # clip f above 0.5 outside R
[0.0, 0.0, 0.0, -0.5, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hbo_envs.adversaries.base import Adversary, AdversaryView
from hbo_envs.validation import check_choice, check_real, param_error

__all__ = [
    "AggressiveSubtractionAttack",
    "ClippingAttack",
    "RandomAttack",
    "SubtractionAttack",
    "bump",
]


def _floats(owner: str, name: str, value: Any, what: str) -> tuple[float, ...]:
    """``value`` as a tuple of floats, or a clear error naming ``name``: a string (whose
    characters would iterate as numbers: ``"12"`` is not ``(1, 2)``), a mapping, a scalar,
    a nested sequence or a boolean are refused."""
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise param_error(owner, name, what, value)
    items = list(value)
    if any(isinstance(v, bool | np.bool_ | str | bytes) for v in items):
        raise param_error(owner, name, what, value)
    try:
        return tuple(float(v) for v in items)
    except (TypeError, ValueError):
        raise param_error(owner, name, what, value) from None


def _box(owner: str, center: Any, side: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Validate ``center`` and ``side`` (tuples of equal length; ``side > 0``)."""
    c = _floats(owner, "center", center, "a sequence of real numbers")
    s = _floats(owner, "side", side, "a sequence of positive real numbers")
    if not c:
        raise param_error(owner, "center", "a non-empty sequence of real numbers", center)
    if len(c) != len(s):
        raise param_error(owner, "side", f"a sequence of {len(c)} positive numbers", side)
    if not all(np.isfinite(c)):
        raise param_error(owner, "center", "a sequence of finite numbers", center)
    if not all(np.isfinite(v) and v > 0 for v in s):
        raise param_error(owner, "side", "a sequence of finite positive numbers", side)
    return c, s


def _in_region(points: np.ndarray, center: tuple, side: tuple, owner: str) -> np.ndarray:
    if points.shape[1] != len(center):
        raise param_error(
            owner, "center", f"of the points' dimension {points.shape[1]}", list(center)
        )
    half = np.asarray(side) / 2
    mask = np.all(np.abs(points - np.asarray(center)) <= half, axis=1)
    if not mask.any():
        raise param_error(
            owner, "center/side", "a box holding at least one candidate point", (center, side)
        )
    return mask


@dataclass(frozen=True)
class _RegionAttack(Adversary):
    center: tuple[float, ...] = (0.0,)
    side: tuple[float, ...] = (1.0,)

    def __post_init__(self) -> None:
        c, s = _box(type(self).__name__, self.center, self.side)
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "side", s)

    def propose(self, view: AdversaryView) -> np.ndarray:
        return view.state


@dataclass(frozen=True)
class ClippingAttack(_RegionAttack):
    """Clipping attack (Attack-BO ``ClippingAttack``; note §2.1).

    Minimisation (their code): ``c(x) = max(0, g(x~) + Delta - g(x))`` outside ``R``, 0 in
    ``R``. Maximisation (here): ``c(x) = -max(0, f(x) - (f(x~) - Delta))`` outside ``R``:
    outside the region ``f`` is clipped from above at ``f(x~) - Delta``, so the region's
    best point looks best. A white-box attack (needs ``f``).

    Parameters: ``center``, ``side`` (the box ``R``), ``margin`` ``Delta >= 0`` (default
    0, the authors' value for most functions).
    """

    margin: float = 0.0
    name = "clipping"

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        object.__setattr__(
            self, "margin", check_real(owner, "margin", self.margin, 0, None, "left")
        )

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        R = _in_region(points, self.center, self.side, type(self).__name__)
        f_tilde = float(np.max(f[R]))
        c = np.minimum(0.0, (f_tilde - self.margin) - f)  # -max(0, f - (f(x~) - Delta))
        c[R] = 0.0
        return c


@dataclass(frozen=True)
class AggressiveSubtractionAttack(_RegionAttack):
    """Aggressive subtraction (Attack-BO ``AggressiveSubtractionAttack``; note §2.2).

    Minimisation: ``c = +Delta`` outside ``R``. Maximisation (here): ``c = -Delta`` outside
    ``R``, 0 inside. Default ``Delta = f(x*) - f(x~)`` (the authors' default, the gap between
    the global optimum and the region's best, e.g. 5.0344 on Forrester in their units).

    Parameters: ``center``, ``side``, ``margin`` (``Delta``; ``None`` = the gap).
    """

    margin: float | None = None
    name = "aggressive_subtraction"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.margin is not None:
            owner = type(self).__name__
            object.__setattr__(
                self, "margin", check_real(owner, "margin", self.margin, 0, None, "left")
            )

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        R = _in_region(points, self.center, self.side, type(self).__name__)
        delta = float(np.max(f) - np.max(f[R])) if self.margin is None else self.margin
        c = np.full(f.size, -delta)
        c[R] = 0.0
        return c


def bump(z: np.ndarray, shape: str) -> np.ndarray:
    """The bumps of the subtraction attacks at scaled offsets ``z`` (shape (n, d)).

    ``"rnd"``: ``exp(-1 / (1 - |z|^2) + 1)`` for ``|z| < 1``, else 0 (smooth, peak 1);
    ``"sq"``: the indicator of ``|z| < 1``.
    """
    r2 = np.sum(z * z, axis=1)
    inside = r2 < 1.0
    out = np.zeros(r2.size)
    if shape == "sq":
        out[inside] = 1.0
    else:
        out[inside] = np.exp(-1.0 / (1.0 - r2[inside]) + 1.0)
    return out


@dataclass(frozen=True)
class SubtractionAttack(Adversary):
    """Subtraction with a bump at the optimum (Attack-BO ``SubtractionAttackRnd/Sq``; §2.3).

    Minimisation: ``c(x) = -(y_scale b((x - x_shift) / x_scale) + y_shift)`` with
    ``y_scale < 0``, ``y_shift = 0`` and ``x_shift`` the global minimiser. Maximisation
    (here): ``c(x) = -h b((x - x*) / w)``, ``h = |y_scale| > 0``, ``x*`` the maximiser of
    ``f`` on the candidate set: the area around the optimum is pushed down. Needs only
    ``x*`` and a height, not ``f`` elsewhere.

    Parameters
    ----------
    shape : {"rnd", "sq"}
        The smooth bump or the indicator (:func:`bump`).
    width : tuple of float
        ``w`` per axis (the authors' ``x_scale``; e.g. 0.1621 on Forrester).
    height : float or None
        ``h`` (``None``: ``f(x*) - min f``, the gap to the worst value, which makes the
        optimum look worse than every other point; the authors used ``f(x~) - f_min`` in
        their units).
    """

    shape: str = "rnd"
    width: tuple[float, ...] = (0.1,)
    height: float | None = None
    name = "subtraction"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        check_choice(owner, "shape", self.shape, ("rnd", "sq"))
        w = _floats(owner, "width", self.width, "a sequence of positive numbers")
        if not w or not all(np.isfinite(v) and v > 0 for v in w):
            raise param_error(owner, "width", "a sequence of finite positive numbers", self.width)
        object.__setattr__(self, "width", w)
        if self.height is not None:
            object.__setattr__(self, "height", check_real(owner, "height", self.height, 0, None))

    def new_episode(self, f: np.ndarray, points: np.ndarray, B0: float, rng: Any) -> np.ndarray:
        if points.shape[1] != len(self.width):
            raise param_error(
                type(self).__name__,
                "width",
                f"of the points' dimension {points.shape[1]}",
                self.width,
            )
        star = int(np.argmax(f))
        h = float(f[star] - np.min(f)) if self.height is None else self.height
        return -h * bump((points - points[star]) / np.asarray(self.width), self.shape)

    def propose(self, view: AdversaryView) -> np.ndarray:
        return view.state


@dataclass(frozen=True)
class RandomAttack(Adversary):
    """Random perturbation (Attack-BO ``RandomAttack``; note §2.4): ``c_t ~ N(mean, std^2)``.

    i.i.d. every round, the same in both sign conventions; a control against which the
    targeted attacks are judged (the authors' variances: Forrester 0.1, 1-D 0.05, in their
    units).
    """

    std: float = 0.1
    mean: float = 0.0
    name = "random"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "std", check_real(owner, "std", self.std, 0, None, "left"))
        object.__setattr__(self, "mean", check_real(owner, "mean", self.mean))

    def propose(self, view: AdversaryView) -> np.ndarray:
        return np.full(view.f.size, self.mean + self.std * view.rng.standard_normal())
