"""30-digit references for the channels' absolute moments ``E|c + d X|^p`` (mpmath).

Independent of :func:`hbo_envs.channels.moments.abs_moment` (which integrates quantiles in
double precision): each is the density's integral, brought by exact substitutions to a
finite interval whose integrand is smooth but at the kink of ``|c + d x|`` (an integration
point), so mpmath's tanh-sinh rule reaches its working precision (30 digits).

- Student-t, ``x = sqrt(df) tan(theta)``: the density times ``dx`` is
  ``Gamma((df+1)/2) / (sqrt(pi) Gamma(df/2)) cos^{df-1}(theta) dtheta``, so::

      E|c + d T|^p = k int_{-pi/2}^{pi/2} |c cos(theta) + r sin(theta)|^p cos^{b-1}(theta) dtheta

  with ``r = d sqrt(df)``, ``b = df - p > 0``; on each half ``phi = pi/2 -+ theta``
  (``cos(theta) = sin(phi)``) and ``w = phi^b`` absorb the end singularity ``phi^{b-1}``.
- Pareto ``Z`` on ``[1, inf)`` with shape ``a`` (density ``a x^{-a-1}``), ``t = 1/x`` and
  ``w = t^b``, ``b = a - p``::

      E|c + d Z|^p = a int_0^1 |c t + d|^p t^{b-1} dt = (a / b) int_0^1 |c w^{1/b} + d|^p dw.

Checked against the closed forms they must reproduce (``tests/test_moment_quadrature.py``).
"""

from __future__ import annotations

import mpmath as mp

__all__ = ["pareto_abs_moment", "student_t_abs_moment"]

DPS = 30


def student_t_abs_moment(df: float, c: float, d: float, p: float) -> float:
    """``E|c + d T|^p`` for ``T ~ t(df)``, ``p < df``, ``c >= 0`` (module docstring)."""
    with mp.workdps(DPS):
        df_, c_, d_, p_ = (mp.mpf(x) for x in (df, c, d, p))
        b = df_ - p_
        r = d_ * mp.sqrt(df_)
        k = mp.gamma((df_ + 1) / 2) / (mp.sqrt(mp.pi) * mp.gamma(df_ / 2))
        total = mp.mpf(0)
        for sign in (1, -1):  # theta > 0: phi = pi/2 - theta; theta < 0: phi = pi/2 + theta

            def f(w: mp.mpf, sign: int = sign) -> mp.mpf:
                phi = w ** (1 / b)
                if phi == 0:
                    return abs(r) ** p_ / b
                body = abs(c_ * mp.sin(phi) + sign * r * mp.cos(phi)) ** p_
                return body * (mp.sin(phi) / phi) ** (b - 1) / b

            points = [mp.mpf(0), (mp.pi / 2) ** b]
            if c_ != 0 and sign * r < 0:  # the kink c sin(phi) = |r| cos(phi)
                points.insert(1, mp.atan(-sign * r / c_) ** b)
            total += mp.quad(f, points)
        return float(k * total)


def pareto_abs_moment(a: float, c: float, d: float, p: float) -> float:
    """``E|c + d Z|^p`` for ``Z ~ Pareto(a)`` on ``[1, inf)``, ``p < a`` (module docstring)."""
    with mp.workdps(DPS):
        a_, c_, d_, p_ = (mp.mpf(x) for x in (a, c, d, p))
        b = a_ - p_
        points = [mp.mpf(0), mp.mpf(1)]
        if c_ != 0 and 0 < -d_ / c_ < 1:  # the kink c t = -d inside (0, 1)
            points.insert(1, (-d_ / c_) ** b)
        integral = mp.quad(lambda w: abs(c_ * w ** (1 / b) + d_) ** p_, points)
        return float(a_ / b * integral)
