"""Exact absolute moments ``E|c + d X|^p`` by quantile-transform quadrature.

All moment constants of the reward channels (``v`` and ``nu`` of
:class:`~hbo_envs.problem.Problem`) are computed here, once, by one routine:

    E|c + d X|^p = int_0^1 |c + d F^{-1}(u)|^p du.

A power-law tail ``P(|X| > x) ~ x^{-a}`` makes the integrand blow up like
``u^{-p/a}`` (or ``(1-u)^{-p/a}``) at the ends, an integrable algebraic singularity that
QUADPACK's QAWS rule integrates exactly with ``weight="alg"``. The interval is split at
``1/2`` and at the kink ``u0 = F(-c/d)``, so every piece is smooth but for its end weight.

Two things keep every piece within its tolerance without a warning:

- The far tail. Below ``u = TAIL_FLOOR`` (``1e-100``) the integrand is taken at the floor:
  with the weight factored out, ``|c + d F^{-1}(u)|^p u^{p/a}`` tends to a constant as
  ``u -> 0``, to a relative ``O(u^{1/a})``, so that part (a fraction ``~u^{1-p/a}`` of the
  moment) is the power law's own integral, exact to ``u^{1-(p-1)/a} < 1e-50`` of the moment
  (``a > p >= 2(p - 1)``). Library quantiles are not reliable much further out
  (scipy's Student-t ``stdtrit`` is wrong from ``u ~ 1e-110`` at ``df`` just above 2 and
  saturates near ``|x| ~ 1e154``), and near the moment's limit (``p / a`` close to 1) a
  sizeable part of the moment lies there (``u^{1 - p/a}``: ~0.1% below ``1e-100`` at
  ``df = 1.05, p = 1.02``).
- Pieces far smaller than the moment. A piece between the support's end and a kink close
  to it (``c`` just above the scale of a Pareto magnitude: ``u0 ~ 1e-9`` at
  ``c = s (1 + 1e-9)``) holds ``|c + d X|^p`` of about ``1e-20``, computed with cancellation;
  its relative accuracy is unattainable and irrelevant. The pieces are integrated widest
  first, and each later piece to an absolute ``1e-11`` of the largest value so far (with the
  same relative ``1e-11`` as the others): every piece's error stays below ``1e-11`` of the
  moment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate

__all__ = ["TAIL_FLOOR", "abs_moment", "public_quantiles"]

TAIL_FLOOR = 1e-100
"""The quantile level below which the integrand is held at its value there (module docstring)."""

EPSREL = 1e-11
"""The quadrature's relative tolerance, per piece and against the largest piece."""


def _pow(x: float, p: float) -> float:
    """``x ** p`` for ``x >= 0``, ``inf`` instead of ``OverflowError``."""
    try:
        return float(x**p)
    except OverflowError:
        return float("inf")


def public_quantiles(dist: Any) -> tuple[Callable[[float], float], Callable[[float], float]]:
    """``(ppf, isf)`` through the distribution's public methods, ``float(dist.ppf(q))`` and
    ``float(dist.isf(q))``: any object with those methods. The reference :func:`_quantiles`
    is tested against, bit for bit (``tests/test_channels.py``), and its fallback."""
    return (lambda q: float(dist.ppf(q))), (lambda q: float(dist.isf(q)))


def _quantiles(dist: Any) -> tuple[Callable[[float], float], Callable[[float], float]]:
    """``(ppf, isf)`` of a frozen continuous ``scipy.stats`` distribution, as float functions
    of one ``q`` in ``(0, 1)``.

    They evaluate what ``dist.ppf(q)`` and ``dist.isf(q)`` evaluate for such ``q``,
    ``_ppf(q, *shapes) * scale + loc`` (the distribution's own quantile formula, e.g.
    ``special.stdtrit`` for Student-t) on one-element arrays, as the public methods do
    (numpy's scalar and array loops of e.g. ``power`` can differ in the last bit), without
    their argument handling, which costs ~40 us a call: the quadrature below makes
    thousands of calls, and every env computes its channel's constants when it is made. Bit
    for bit the public methods' values (tested for every distribution the channels use). A
    distribution that is not a frozen ``rv_continuous`` with valid parameters gets its
    public methods.
    """
    gen = getattr(dist, "dist", None)
    try:
        shapes, loc, scale = gen._parse_args(*dist.args, **dist.kwds)  # type: ignore[union-attr]
        valid = bool(np.all(gen._argcheck(*shapes))) and scale > 0 and loc == loc  # type: ignore[union-attr]
        ppf_, isf_ = gen._ppf, gen._isf  # type: ignore[union-attr]
    except (AttributeError, TypeError, ValueError):
        valid = False
    if not valid:
        return public_quantiles(dist)
    args = [np.asarray([a]) for a in shapes]
    sc, lo = np.asarray([scale]), np.asarray([loc])

    def ppf(q: float) -> float:
        return float((ppf_(np.asarray([q]), *args) * sc + lo)[0])

    def isf(q: float) -> float:
        return float((isf_(np.asarray([q]), *args) * sc + lo)[0])

    return ppf, isf


def abs_moment(
    dist: Any,
    c: float,
    d: float,
    p: float,
    lower_tail: float = np.inf,
    upper_tail: float = np.inf,
) -> float:
    """``E|c + d X|^p`` for ``X ~ dist`` (a frozen ``scipy.stats`` distribution).

    Parameters
    ----------
    lower_tail, upper_tail : float
        Tail indices ``a`` of ``X`` (``P(X < -x) ~ x^{-a}``, ``P(X > x) ~ x^{-a}``);
        ``inf`` for light or bounded tails. The moment must exist: ``p < a``.

    The lower half ``u in (0, 1/2]`` is integrated through ``dist.ppf(u)``, the upper half
    through ``dist.isf(q)``, ``q = 1 - u``, so that both tails are resolved to full
    precision; below ``TAIL_FLOOR`` the quantile is taken at the floor (the power law's own
    integral on a weighted end piece, module docstring).
    """
    if p >= lower_tail or p >= upper_tail:
        raise ValueError(f"E|X|^{p} is infinite for tail index {min(lower_tail, upper_tail)}.")
    if d == 0:
        return _pow(abs(c), p)
    # Homogeneity, E|c + dX|^p = m^p E|c/m + (d/m) X|^p with m = max(|c|, |d|): the
    # quadrature only ever sees coefficients <= 1, so a huge noise scale cannot overflow
    # inside it (the tail nodes reach X ~ 1e165); only a result beyond the float range
    # is inf, and the channels refuse that with the parameter's name.
    m = max(abs(float(c)), abs(float(d)))
    if m != 1.0:
        return _pow(m, p) * abs_moment(dist, c / m, d / m, p, lower_tail, upper_tail)
    floor = TAIL_FLOOR
    ppf, isf = _quantiles(dist)

    def lower(u: float) -> float:  # u in (0, 1/2]
        return abs(c + d * ppf(max(u, floor))) ** p

    def upper(q: float) -> float:  # q = 1 - u in (0, 1/2]
        return abs(c + d * isf(max(q, floor))) ** p

    pieces = []
    for fn, tail, cdf_side in (
        (lower, lower_tail, float(dist.cdf(-c / d))),
        (upper, upper_tail, float(dist.sf(-c / d))),
    ):
        # Split each half at the kink of |c + d X| (X = -c/d), when it falls inside.
        cuts = [0.0, cdf_side, 0.5] if 1e-12 < cdf_side < 0.5 - 1e-12 else [0.0, 0.5]
        pieces += [(hi - lo, lo, hi, fn, tail) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    pieces.sort(key=lambda piece: -piece[0])  # widest first (stable: lower half first on ties)
    total, largest = 0.0, 0.0
    for _, lo, hi, fn, tail in pieces:
        kw: dict[str, Any] = {"epsabs": EPSREL * largest, "epsrel": EPSREL, "limit": 500}
        if lo == 0.0 and np.isfinite(tail):
            e = p / tail
            val, err = integrate.quad(
                lambda w, fn=fn, e=e: fn(w) * max(w, floor) ** e,
                lo,
                hi,
                weight="alg",
                wvar=(-e, 0.0),
                **kw,
            )
        else:
            val, err = integrate.quad(fn, lo, hi, **kw)
        total += val + err  # an upper bound: v and nu must not be underestimated
        largest = max(largest, val)
    # Relative safety margin for rounding in the quadrature nodes themselves.
    return float(total * (1.0 + 1e-9))
