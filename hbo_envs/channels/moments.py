"""Exact absolute moments ``E|c + d X|^p`` by quantile-transform quadrature.

All moment constants of the reward channels (``v`` and ``nu`` of
:class:`~hbo_envs.problem.Problem`) are computed here, once, by one routine:

    E|c + d X|^p = int_0^1 |c + d F^{-1}(u)|^p du.

A power-law tail ``P(|X| > x) ~ x^{-a}`` makes the integrand blow up like
``u^{-p/a}`` (or ``(1-u)^{-p/a}``) at the ends, an integrable algebraic singularity that
QUADPACK's QAWS rule integrates exactly with ``weight="alg"``. The interval is split at
``1/2`` and at the kink ``u0 = F(-c/d)``, so every piece is smooth but for its end weight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate

__all__ = ["abs_moment", "public_quantiles"]


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
    precision; the end points themselves (never needed by the weighted rule) are floored at
    ``1e-200``.
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
    tiny = 1e-200
    ppf, isf = _quantiles(dist)

    def lower(u: float) -> float:  # u in (0, 1/2]
        return abs(c + d * ppf(max(u, tiny))) ** p

    def upper(q: float) -> float:  # q = 1 - u in (0, 1/2]
        return abs(c + d * isf(max(q, tiny))) ** p

    total = 0.0
    for fn, tail, (cdf_side) in (
        (lower, lower_tail, float(dist.cdf(-c / d))),
        (upper, upper_tail, float(dist.sf(-c / d))),
    ):
        # Split each half at the kink of |c + d X| (X = -c/d), when it falls inside.
        cuts = [0.0, 0.5]
        if 1e-12 < cdf_side < 0.5 - 1e-12:
            cuts.insert(1, cdf_side)
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            if lo == 0.0 and np.isfinite(tail):
                e = p / tail
                val, err = integrate.quad(
                    lambda w, fn=fn, e=e: fn(w) * max(w, tiny) ** e,
                    lo,
                    hi,
                    weight="alg",
                    wvar=(-e, 0.0),
                    epsabs=0.0,
                    epsrel=1e-11,
                    limit=500,
                )
            else:
                val, err = integrate.quad(fn, lo, hi, epsabs=0.0, epsrel=1e-11, limit=500)
            total += val + err  # an upper bound: v and nu must not be underestimated
    # Relative safety margin for rounding in the quadrature nodes themselves.
    return float(total * (1.0 + 1e-9))
