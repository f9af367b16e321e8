"""Geometry on the candidate set shared by the adversaries (regions, local maxima)."""

from __future__ import annotations

import numpy as np

__all__ = ["ball", "local_maxima"]


def ball(points: np.ndarray, center: int, radius: float) -> np.ndarray:
    """Boolean mask of the points within Euclidean distance ``radius`` of ``points[center]``."""
    d = np.linalg.norm(points - points[center], axis=1)
    return d <= radius


def local_maxima(f: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Indices of the local maxima of ``f`` on the candidate set, best first.

    A point is a local maximum when ``f`` there is ``>=`` ``f`` at its ``2d`` nearest
    neighbours (in 1-D on a grid: its left and right neighbours).
    """
    n, d = points.shape
    k = min(2 * d, n - 1)
    if k < 1:
        return np.zeros(1, dtype=int)
    D = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    np.fill_diagonal(D, np.inf)
    nbrs = np.argpartition(D, k - 1, axis=1)[:, :k]
    is_max = np.all(f[:, None] >= f[nbrs], axis=1)
    idx = np.flatnonzero(is_max)
    return idx[np.argsort(-f[idx], kind="stable")]
