"""The test functions and target regions of Han & Scarlett (ICML 2022), on candidate grids.

Han & Scarlett, "Adversarial Attacks on Gaussian Process Bandits" (ICML 2022); the
functions, domains and target regions are those of the authors' code (eric-vader/Attack-BO,
``sample/*``), as recorded in the note
``../shared/papers/beyond/han-scarlett-2022-adversarial-attacks-gp-bandits.md``
§4. Their code **minimises** ``g``; hbo-bench maximises, so the objective is
``f = -g / s`` with ``s = max |g|`` on the candidate set (``max |f| = 1``, matching a
unit-variance kernel; the attacks' margins are stated in units of this ``f``).

Each function has a target region ``R`` (an axis-aligned box ``centre +- side / 2``) that an
attacker wants the learner to query; ``f(x~) = max_{x in R} f`` is computed exactly on the
candidate set (the authors' code used basin hopping on the continuous box).

Candidate sets (hbo-bench's choice; the authors optimised over the continuous box):
evenly spaced grids, ``n_grid`` points per axis (1-D: 200, 2-D: 25 x 25); Hartmann6:
``n_points`` (default 500) points drawn uniformly from ``[0, 1]^6`` with a fixed seed.
Kernel: Matérn-5/2 on the raw coordinates, isotropic, lengthscale ``0.1 x`` the mean side of
the domain (hbo-bench's choice; the authors pre-fitted the lengthscale on noiseless ``f``,
a value their code does not record).

>>> obj = han_scarlett_objective("forrester")
>>> obj.n, round(obj.sup_f, 12), obj.params["region_lo"], obj.params["region_hi"]
(200, 1.0, [0.0], [0.5])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hbo_envs.kernels import Matern
from hbo_envs.objectives.base import Objective, objective_from_values
from hbo_envs.validation import check_choice, check_int

__all__ = [
    "HS_FUNCTIONS",
    "HSFunction",
    "bohachevsky",
    "branin",
    "camelback",
    "forrester",
    "han_scarlett_objective",
    "hartmann6",
    "levy1d",
    "region_mask",
]


def forrester(X: np.ndarray) -> np.ndarray:
    """``g(x) = (6x - 2)^2 sin(12x - 4)`` (minimised; hpolib Forrester), x in [0, 1]."""
    x = X[:, 0]
    return (6 * x - 2) ** 2 * np.sin(12 * x - 4)


def branin(X: np.ndarray) -> np.ndarray:
    """hpolib Branin ``a (x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos x1 + s`` (minimum 0.397887)."""
    x1, x2 = X[:, 0], X[:, 1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10


def camelback(X: np.ndarray) -> np.ndarray:
    """Six-hump camelback ``(4 - 2.1 x1^2 + x1^4/3) x1^2 + x1 x2 + (-4 + 4 x2^2) x2^2``."""
    x1, x2 = X[:, 0], X[:, 1]
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


def bohachevsky(X: np.ndarray) -> np.ndarray:
    """Bohachevsky ``x1^2 + 2 x2^2 - 0.3 cos(3 pi x1) - 0.4 cos(4 pi x2) + 0.7`` (minimum 0)."""
    x1, x2 = X[:, 0], X[:, 1]
    return x1**2 + 2 * x2**2 - 0.3 * np.cos(3 * np.pi * x1) - 0.4 * np.cos(4 * np.pi * x2) + 0.7


def levy1d(X: np.ndarray) -> np.ndarray:
    """1-D Levy ``sin^2(pi w) + (w - 1)^2 (1 + sin^2(2 pi w))``, ``w = 1 + (x - 1)/4``."""
    w = 1 + (X[:, 0] - 1) / 4
    return np.sin(np.pi * w) ** 2 + (w - 1) ** 2 * (1 + np.sin(2 * np.pi * w) ** 2)


_H6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(X: np.ndarray) -> np.ndarray:
    """Hartmann6 ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)`` (minimum -3.32237)."""
    d = ((X[:, None, :] - _H6_P[None]) ** 2 * _H6_A[None]).sum(axis=2)
    return -(np.exp(-d) @ _H6_ALPHA)


@dataclass(frozen=True)
class HSFunction:
    """One Attack-BO test function: ``g`` (minimised), its box, target region and minimiser.

    ``x_min`` is ``g``'s global minimiser (the centre of the subtraction attacks' bump, note
    §2.3); for camelback it is the minimiser *outside* the region, as in the authors' config.
    """

    g: Callable[[np.ndarray], np.ndarray]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    center: tuple[float, ...]
    side: tuple[float, ...]
    x_min: tuple[float, ...]
    bump_width: tuple[float, ...]


#: The note's §4 table (Attack-BO ``sample/*``); bump widths from §2.3 (``x_scale``).
HS_FUNCTIONS: dict[str, HSFunction] = {
    "forrester": HSFunction(forrester, (0.0,), (1.0,), (0.25,), (0.5,), (0.757249,), (0.1621,)),
    "branin": HSFunction(
        branin, (-5.0, 0.0), (10.0, 15.0), (-1.0, 11.0), (8.0, 8.0), (np.pi, 2.275), (5.0, 5.0)
    ),
    "camelback": HSFunction(
        camelback,
        (-3.0, -2.0),
        (3.0, 2.0),
        (0.0898, -0.7126),
        (1.4252, 1.4252),
        (-0.0898, 0.7126),
        (0.7126, 0.7126),
    ),
    "bohachevsky": HSFunction(
        bohachevsky,
        (-100.0, -100.0),
        (100.0, 100.0),
        (55.0, 55.0),
        (90.0, 90.0),
        (0.0, 0.0),
        (150.0, 150.0),
    ),
    "levy": HSFunction(levy1d, (-15.0,), (2.5,), (-2.91504,), (4.0,), (1.0,), (11.0,)),
    "hartmann6": HSFunction(
        hartmann6,
        (0.0,) * 6,
        (1.0,) * 6,
        (0.6,) * 6,
        (0.8,) * 6,
        (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),
        (0.3,) * 6,
    ),
}


def region_mask(points: np.ndarray, center: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Boolean mask of the points in the box ``|x_j - center_j| <= side_j / 2`` for every j."""
    half = np.asarray(side, dtype=float) / 2
    return np.all(np.abs(np.asarray(points) - np.asarray(center, dtype=float)) <= half, axis=1)


def han_scarlett_objective(name: str, n_grid: int | None = None, n_points: int = 500) -> Objective:
    """``f = -g / max|g|`` of the Attack-BO function ``name`` on its candidate set.

    ``params`` records the region (``region_lo``, ``region_hi``, ``region_center``,
    ``region_side``), ``f_region`` = ``f(x~)`` (best ``f`` in the region), the
    minimiser ``x_min`` and ``bump_width`` of the subtraction attacks, ``scale = max|g|``.
    """
    owner = "han_scarlett_objective"
    check_choice(owner, "name", name, tuple(HS_FUNCTIONS))
    spec = HS_FUNCTIONS[name]
    d = len(spec.lower)
    lo, hi = np.array(spec.lower), np.array(spec.upper)
    if d == 6:
        n_points = check_int(owner, "n_points", n_points, 10, 5000)
        X = lo + (hi - lo) * np.random.default_rng(20220717).uniform(size=(n_points, d))
    else:
        default = 200 if d == 1 else 25
        k = (
            default
            if n_grid is None
            else check_int(owner, "n_grid", n_grid, 3, 2000 if d == 1 else 60)
        )
        axes = [np.linspace(lo[j], hi[j], k) for j in range(d)]
        X = np.stack([m.ravel() for m in np.meshgrid(*axes, indexing="ij")], axis=1)
    g = spec.g(X)
    scale = float(np.max(np.abs(g)))
    f = -g / scale
    mask = region_mask(X, np.array(spec.center), np.array(spec.side))
    if not mask.any():  # pragma: no cover - every table entry's region holds grid points
        raise ValueError(f"the target region of {name!r} holds no candidate point")
    half = np.array(spec.side) / 2
    kernel = Matern(float(0.1 * np.mean(hi - lo)), 2.5)
    return objective_from_values(
        f"han-scarlett-{name}",
        X,
        f,
        kernel,
        params={
            "function": name,
            "scale": scale,
            "region_center": list(spec.center),
            "region_side": list(spec.side),
            "region_lo": [float(c - h) for c, h in zip(spec.center, half, strict=True)],
            "region_hi": [float(c + h) for c, h in zip(spec.center, half, strict=True)],
            "f_region": float(np.max(f[mask])),
            "x_min": list(spec.x_min),
            "bump_width": list(spec.bump_width),
        },
    )
