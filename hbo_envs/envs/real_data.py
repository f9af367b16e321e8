"""Real-data environments: Chowdhury–Gopalan's 29 stocks and CMU light sensors (§6, Fig. 1d,
1e) and Park–Lee's stock picking on AAPL/BIDU/HA (§5, Table 2, App. D).

The data is read from the data directory (``$HBO_DATA_DIR``; see :mod:`hbo_envs.data`) and
never shipped with the project; a missing data set raises
:class:`~hbo_envs.data.DataNotFoundError` naming the command that fetches it
(``hbo-bench data fetch stocks29|lightsensor|stockpicking``).

Every env's kernel is data-derived: the empirical covariance of the z-scored series,
:func:`empirical_kernel_matrix` (a correlation matrix: symmetric, PSD, unit diagonal), held
by an :class:`~hbo_envs.kernels.EmpiricalKernel` (no analytic form, so ATA-GP-UCB with QFF
refuses it). ``B`` is the exact RKHS norm of the minimum-norm interpolant of ``f`` for that
kernel, ``sqrt(f^T K^{-1} f)``; if ``K`` is numerically singular the smallest jitter that
makes it factorable is added and reported as ``problem.kernel_jitter``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from hbo_envs.channels.empirical import DailySequence, EmpiricalRows
from hbo_envs.data import (
    KSResult,
    ks_gaussian,
    load_lightsensor,
    load_stockpicking,
    load_stocks29,
)
from hbo_envs.data.loaders import OHLCV, STOCKPICKING_TICKERS
from hbo_envs.envs.base import GPBanditEnv
from hbo_envs.kernels import EmpiricalKernel, Kernel, SquaredExponential
from hbo_envs.objectives import Objective
from hbo_envs.objectives.base import objective_from_values
from hbo_envs.validation import check_choice, check_int

__all__ = [
    "LightSensorEnv",
    "StockPickingEnv",
    "Stocks29Env",
    "empirical_kernel_matrix",
    "ks_table",
]


def empirical_kernel_matrix(X: np.ndarray) -> np.ndarray:
    """Empirical covariance of the z-scored columns of ``X`` (rows: samples, cols: arms).

    ``Z = (X - mean) / std`` column-wise (``ddof = 1``), ``K = Z^T Z / (n - 1)`` — the
    authors' ``cov(zscore(X))`` (``main_financialdata.m``, ``main_lightsensordata.m``),
    i.e. the correlation matrix: symmetric, PSD, ``K[i, i] = 1``. A constant column (zero
    variance) has no correlation and is refused.
    """
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0, ddof=1)
    if np.any(sd == 0):
        raise ValueError(
            f"empirical_kernel_matrix: column(s) {np.flatnonzero(sd == 0).tolist()} are "
            "constant; their correlation with the other arms is undefined."
        )
    Z = (X - X.mean(axis=0)) / sd
    K = Z.T @ Z / (X.shape[0] - 1)
    K = 0.5 * (K + K.T)
    np.fill_diagonal(K, 1.0)  # exact 1 (k(x, x) <= 1, the papers' normalisation)
    return K


def ks_table(arms: list[str] | tuple[str, ...], samples: np.ndarray) -> pd.DataFrame:
    """KS test against a fitted Gaussian for every column of ``samples`` (one row per arm)."""
    rows = [ks_gaussian(samples[:, i]) for i in range(samples.shape[1])]
    return pd.DataFrame(
        {
            "arm": list(arms),
            "statistic": [r.statistic for r in rows],
            "pvalue": [r.pvalue for r in rows],
        }
    )


class _RealDataEnv(GPBanditEnv):
    """Common part of the real-data envs: payoffs replay a table of observations; the
    problem's ``meta`` also carries the arms' names and what :meth:`_meta` adds."""

    arms: tuple[str, ...] = ()
    _payoffs: np.ndarray

    def _meta(self) -> dict[str, Any]:
        return {}

    def _set_objective(self, obj: Objective) -> None:
        super()._set_objective(obj)
        meta = {**self.problem.meta, "arms": list(self.arms), **self._meta()}
        self.problem = self.problem.replace(meta=meta)

    def ks_statistics(self) -> pd.DataFrame:
        """KS statistic and p-value of every arm's payoffs against a fitted Gaussian
        (the test Chowdhury–Gopalan §6 cite; :func:`hbo_envs.data.ks_gaussian`)."""
        return ks_table(self.arms, self._payoffs)

    def ks_pooled(self) -> KSResult:
        """KS test of all payoffs pooled (every arm's observations together)."""
        return ks_gaussian(self._payoffs)


class Stocks29Env(_RealDataEnv):
    """Chowdhury–Gopalan (2019) §6 item 2: the most profitable of 29 DJIA stocks (Fig. 1d).

    ## Description
    Arms are the 29 stocks of the paper (adjusted daily closes, 2016-01-04 .. 2019-04-10,
    data set ``stocks29``). With ``p[d, s]`` the price of stock ``s`` on day ``d`` and
    ``m_s = mean_d p[d, s]``: ``f(s) = m_s / max_s' m_s'`` (so ``f* = 1``); the kernel is the
    empirical covariance of the z-scored prices (:func:`empirical_kernel_matrix`, the
    authors' ``cov(zscore(data))``). ``problem.points`` are the arm indices ``0..28`` (the
    kernel has no coordinates).

    ## Action Space
    ``Discrete(29)``: the index of a stock (``env.unwrapped.arms`` lists the tickers).

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    The chosen stock's *normalized* price ``p[d, s] / max_s' m_s'`` on a day ``d`` drawn
    uniformly from the 823 days, so ``E[y | s] = f(s)`` exactly. (The authors' code replays
    the raw price against the normalized ``f``; the normalized reading is the one whose
    mean is ``f``.) ``alpha = 1``; ``v`` and ``nu`` are exact for the empirical distribution:
    ``v = max_s mean_d y[d, s]^2`` (the paper's "mean of the squared prices" pooled over the
    stocks is ``problem.meta["v_pooled"]``; the problem contract needs the sup over arms),
    ``nu = max_s var_d y[d, s]``. ``B = sqrt(f^T K^{-1} f)`` exactly (no jitter needed on the
    paper's data).

    Heavy tails, as the paper's KS test says (computed here by :meth:`ks_statistics`):
    every stock's price series rejects the Gaussian.

    ## Episode End
    Truncated after ``horizon`` rounds (default 1000, the authors' ``T = 10^3``).

    ## Arguments
    - ``horizon``: rounds per episode.

    ## Version History
    - v0: initial version.

    Chowdhury & Gopalan, *Bayesian Optimization under Heavy-tailed Payoffs*, NeurIPS 2019.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/Stocks29-v0")  # needs the data: hbo-bench data fetch stocks29
    >>> p = env.unwrapped.problem
    >>> p.n, p.alpha, round(p.B, 2), round(p.v, 4), p.kernel_jitter
    (29, 1.0, 8.7, 1.1759, 0.0)
    >>> ks = env.unwrapped.ks_statistics()  # KS against a fitted Gaussian, per stock
    >>> round(float(ks.statistic.min()), 3), round(float(ks.statistic.median()), 3)
    (0.052, 0.125)
    >>> int((ks.pvalue < 0.05).sum())  # stocks whose Gaussian null is rejected at 5%
    29
    """

    def __init__(self, horizon: int = 1000, name: str = "") -> None:
        prices = load_stocks29()
        self.arms = tuple(prices.columns)
        P = prices.to_numpy()
        scale = float(P.mean(axis=0).max())
        Y = P / scale  # normalized prices: column means are f, max f = 1
        self._payoffs = Y
        channel = EmpiricalRows(Y, alpha=1.0, label="stocks29 normalized prices")
        K = empirical_kernel_matrix(P)
        obj = objective_from_values(
            "stocks29-mean-price",
            np.arange(Y.shape[1], dtype=float),
            channel.means(),
            EmpiricalKernel("covariance of z-scored adjusted closes, 29 stocks"),
            kernel_matrix=K,
            params={"days": Y.shape[0], "price_scale": scale},
        )
        self.v_pooled = float(np.mean(Y**2))
        super().__init__(obj, channel, horizon, False, 0, name or "stocks29")

    def _meta(self) -> dict[str, Any]:
        return {"v_pooled": self.v_pooled}


# -- CMU light sensors ------------------------------------------------------------------------
QFF_LENGTHSCALE = math.sqrt(0.1)
"""Chowdhury–Gopalan's SE lengthscale for QFF on the light sensors: ``l^2 = 0.1`` on the
coordinates min-max scaled to ``[0, 1]^2`` (``main_lightsensordata.m``)."""


class LightSensorEnv(_RealDataEnv):
    """Chowdhury–Gopalan (2019) §6 item 3: the brightest of 41 light sensors (Fig. 1e).

    ## Description
    CMU Intelligent Workplace light data (Nov 2005; data set ``lightsensor``): 41 sensors,
    601 train and 192 test raw ADC readings. With ``m_s`` the mean test reading of sensor
    ``s``: ``f(s) = m_s / max_s' m_s'`` (``f* = 1``). Kernel (``kernel="data"``, default): the
    empirical covariance of the z-scored *train* readings (:func:`empirical_kernel_matrix`).
    ``problem.points`` are the sensors' coordinates min-max scaled to ``[0, 1]^2``, so that
    an SE kernel with ``l^2 = 0.1`` on them — the paper's kernel for ATA-GP-UCB-QFF — can be
    built (:meth:`coordinate_kernel`; ``problem.meta["coordinate_kernel"]``);
    ``kernel="se"`` makes that SE kernel the problem's kernel (and ``B`` its RKHS norm).

    ## Action Space
    ``Discrete(41)``: a sensor index (``env.unwrapped.arms`` = ``s1..s41``).

    ## Observation Space
    ``Discrete(1)`` (constant 0).

    ## Rewards
    A test reading of the chosen sensor, drawn uniformly from its 192, normalized like
    ``f`` (divided by ``max_s m_s``), so ``E[y | s] = f(s)``. ``alpha = 1``; ``v = max_s
    mean y^2`` and ``nu = max_s var y`` exactly (the paper's pooled mean of squares is
    ``problem.meta["v_pooled"]``). ``B = sqrt(f^T K^{-1} f)`` exactly for the kernel used.

    Heavy tails, as the paper's KS test says (:meth:`ks_statistics`): measured, 39 of the
    41 sensors reject the Gaussian at 5% (the paper: "for each sensor").

    ## Episode End
    Truncated after ``horizon`` rounds (default 1000, the authors' ``T = 10^3``).

    ## Arguments
    - ``horizon``: rounds per episode.
    - ``kernel``: ``"data"`` (default, the paper's kernel for TGP-UCB and Nyström) or
      ``"se"`` (SE with ``l^2 = 0.1`` on the scaled coordinates, the paper's QFF kernel).

    ## Version History
    - v0: initial version.

    Chowdhury & Gopalan, *Bayesian Optimization under Heavy-tailed Payoffs*, NeurIPS 2019.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/LightSensor-v0")  # needs: hbo-bench data fetch lightsensor
    >>> p = env.unwrapped.problem
    >>> p.n, p.points.shape, round(p.B, 1), round(p.v, 3), p.kernel_jitter
    (41, (41, 2), 13.5, 1.28, 0.0)
    >>> ks = env.unwrapped.ks_statistics()  # per sensor, test readings vs a fitted Gaussian
    >>> round(float(ks.statistic.min()), 3), round(float(ks.statistic.median()), 3)
    (0.095, 0.176)
    >>> int((ks.pvalue < 0.05).sum())  # sensors whose Gaussian null is rejected at 5%
    39
    """

    def __init__(self, horizon: int = 1000, kernel: str = "data", name: str = "") -> None:
        check_choice(type(self).__name__, "kernel", kernel, ("data", "se"))
        data = load_lightsensor()
        self.arms = data.sensors
        xy = data.coords
        pts = (xy - xy.min(axis=0)) / np.ptp(xy, axis=0)
        scale = float(data.test.mean(axis=0).max())
        Y = data.test / scale
        self._payoffs = Y
        channel = EmpiricalRows(Y, alpha=1.0, label="lightsensor normalized test readings")
        if kernel == "data":
            k: Kernel = EmpiricalKernel("covariance of z-scored train readings, 41 sensors")
            K = empirical_kernel_matrix(data.train)
        else:
            k = self.coordinate_kernel()
            K = k(pts)
        obj = objective_from_values(
            f"lightsensor-mean-test-reading[{kernel}]",
            pts,
            channel.means(),
            k,
            kernel_matrix=K,
            params={"kernel": kernel, "reading_scale": scale},
        )
        self.v_pooled = float(np.mean(Y**2))
        super().__init__(obj, channel, horizon, False, 0, name or "lightsensor")

    @staticmethod
    def coordinate_kernel() -> SquaredExponential:
        """The SE kernel (``l^2 = 0.1``) on the scaled coordinates that QFF uses."""
        return SquaredExponential(QFF_LENGTHSCALE)

    def _meta(self) -> dict[str, Any]:
        return {
            "v_pooled": self.v_pooled,
            "coordinate_kernel": {"name": "se", "lengthscale": QFF_LENGTHSCALE},
        }


# -- Park–Lee stock picking -------------------------------------------------------------------
TRAIN_END = "2017-12-31"
TEST_START, TEST_END = "2018-01-01", "2021-12-31"


def change_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """``l_t = (p_t - p_{t-1}) / p_{t-1}`` for every column (Park–Lee App. D); first row dropped."""
    p = frame.to_numpy(dtype=float)
    return pd.DataFrame((p[1:] - p[:-1]) / p[:-1], index=frame.index[1:], columns=frame.columns)


class StockPickingEnv(_RealDataEnv):
    """Park–Lee (2024) §5 / App. D: pick the stock with the largest next-day close change
    (Table 2).

    ## Description
    Arms: AAPL, BIDU, HA (data set ``stockpicking``, Yahoo daily OHLCV). For each stock and
    each type ``i in {o, h, l, c, v}`` (open, high, low, close, volume) the change rate is
    ``l^i_t = (p^i_t - p^i_{t-1}) / p^i_{t-1}``. Training period Jan 2010 .. Dec 2017, test
    period Jan 2018 .. Dec 2021 (App. D, Table 4).

    Park–Lee's description is loose; this env takes the reading consistent with the
    magnitudes of their Table 2 (cumulative regret 26.9 .. 29.3 over the test period's
    ~1000 trading days, i.e. ~0.028 a day — the size of one daily close-to-close move, and
    what a near-random choice among three stocks gives):

    - round ``t`` is test day ``t`` in date order (no shuffling: the env is deterministic);
    - the reward of stock ``s`` is its close change rate from day ``t`` to the next trading
      day, ``y_t = l^c_{s,t+1}``;
    - the regret is App. D's ``r_t = max_s l^c_{s,t+1} - l^c_{s_t,t+1}``, reported in
      ``info["regret"]`` (``info["f"] = l^c_{s_t,t+1}``, ``info["best"] = max_s l^c_{s,t+1}``);
    - what the agent knows (``problem``) comes from the *training* period only: the kernel
      is the empirical covariance of the z-scored change rates of all five types, averaged
      over the types (``K = (1/5) sum_i corr(l^i)``, a 3 x 3 correlation matrix); ``f`` is
      the training mean close change rate per stock and ``B = sqrt(f^T K^{-1} f)``;
      ``alpha = 1``, ``v = max_s mean l^c_s^2`` and ``nu = max_s var l^c_s`` on the training
      days. (The paper states no ``epsilon`` for this experiment; daily returns have finite
      variance, so ``alpha = 1``.)

    ``env.objective.values`` are those training means (what ``B`` is computed for); the
    rewards are the test days' realized values, ``env.round_values[t]`` for round ``t``, so
    the harness's coverage diagnostic (band vs ``objective.values``) means little here.

    The test-period close change rates are heavy-tailed: :meth:`ks_statistics` rejects the
    Gaussian for every stock. Measured on the Yahoo data, over the first 1000 test days a
    uniformly random choice has regret 19.4, always picking AAPL / BIDU / HA 18.3 / 20.0 /
    19.8, always picking the worst stock of the day 38.6: Table 2's 26.9 .. 29.3 lie above
    every constant choice, so only the ordering of the agents can be compared.

    ## Action Space
    ``Discrete(3)``: 0 = AAPL, 1 = BIDU, 2 = HA.

    ## Observation Space
    ``Discrete(1)`` (constant 0): the papers' agents are context-free.

    ## Rewards
    ``y_t = l^c_{s_t, t+1}``, the chosen stock's realized next-day close change rate.

    ## Episode End
    Truncated after ``horizon`` rounds (default 1000; at most the number of test days,
    1008 on the Yahoo data).

    ## Arguments
    - ``horizon``: rounds (test days) per episode.

    ## Version History
    - v0: initial version.

    Park & Lee, *Contextually Adaptive Algorithms for Gaussian Process Bandit Optimization
    under Heavy-tailed Noise*, ECAI 2024.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/StockPicking-v0")  # needs: hbo-bench data fetch stockpicking
    >>> u = env.unwrapped
    >>> u.problem.n, u.max_rounds, round(u.problem.B, 4)
    (3, 1008, 0.0016)
    >>> R = u.round_values[:1000]  # regret per day of a uniformly random choice:
    >>> round(float(R.max(axis=1).mean() - R.mean()), 4)
    0.0194
    >>> ks = u.ks_statistics()  # test-period close change rates vs a fitted Gaussian
    >>> [round(float(d), 3) for d in ks.statistic]
    [0.083, 0.072, 0.096]
    """

    deterministic_rewards = True

    def __init__(self, horizon: int = 1000, name: str = "") -> None:
        frames = load_stockpicking()
        self.arms = tuple(STOCKPICKING_TICKERS)
        rates = {t: change_rates(frames[t][list(OHLCV)]) for t in self.arms}
        idx = rates[self.arms[0]].index
        train = idx <= pd.Timestamp(TRAIN_END)
        close = np.column_stack([rates[t]["Close"].to_numpy() for t in self.arms])
        # round t = test day t; its reward is the change from day t to the next trading day,
        # which is row j + 1 of the change-rate table when day t is row j + 1 of the prices.
        days = frames[self.arms[0]].index
        test_days = days[(days >= pd.Timestamp(TEST_START)) & (days <= pd.Timestamp(TEST_END))]
        pos = days.get_indexer(test_days)
        pos = pos[pos + 1 < len(days)]
        if pos.size == 0 or train.sum() < 10:
            raise ValueError(
                "StockPickingEnv: the stockpicking data does not cover the training "
                f"(.. {TRAIN_END}) and test ({TEST_START} .. {TEST_END}) periods."
            )
        self.test_dates = tuple(str(days[p].date()) for p in pos)
        self.max_rounds = int(pos.size)
        horizon = check_int(type(self).__name__, "horizon", horizon, 1, self.max_rounds)
        self.round_values = close[pos]  # rates row p = change from day p to p + 1
        self._payoffs = self.round_values  # KS: the test-period close change rates
        Ktypes = [
            empirical_kernel_matrix(
                np.column_stack([rates[t][i].to_numpy()[train] for t in self.arms])
            )
            for i in OHLCV
        ]
        K = np.mean(Ktypes, axis=0)
        tr = close[train]
        obj = objective_from_values(
            "stockpicking-train-mean-close-change",
            np.arange(len(self.arms), dtype=float),
            tr.mean(axis=0),
            EmpiricalKernel("mean over o/h/l/c/v of the covariance of z-scored change rates"),
            kernel_matrix=K,
            params={"train_days": int(train.sum()), "test_rounds": self.max_rounds},
        )
        # alpha = 1: the exact empirical moments of the training period's close change rates
        # (the one computation of EmpiricalRows.moments, on the training table)
        constants = EmpiricalRows(tr, alpha=1.0).moments(tr.mean(axis=0))
        channel = DailySequence(self.round_values, constants, label="stockpicking test closes")
        self._rounds = [row.tolist() for row in self.round_values]
        self._best = self.round_values.max(axis=1).tolist()
        super().__init__(obj, channel, horizon, False, 0, name or "stockpicking")

    def _meta(self) -> dict[str, Any]:
        return {"test_dates": [self.test_dates[0], self.test_dates[-1]]}

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """One test day: this round's mean rewards are the day's realized change rates
        ``f_t(s) = l^c_{s,t+1}``, so the base step's ``regret = f_t* - f_t(x_t)`` is Park–Lee's
        ``r_t = max_s l^c_{s,t+1} - l^c_{s_t,t+1}`` (App. D) and ``y_t = f_t(x_t)``."""
        t = self._t
        if t is not None and t < self.horizon:
            self._f_list, self._f_star = self._rounds[t], self._best[t]
        obs, y, terminated, truncated, info = super().step(action)
        info["best"] = info["f"] + info["regret"]
        return obs, y, terminated, truncated, info
