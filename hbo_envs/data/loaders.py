"""Loaders of the real data sets, with validation of everything they read.

Each loader reads one data set from the data directory (:func:`~hbo_envs.data.paths.data_dir`,
or an explicit ``root``) and checks what it read: the columns, parseable and strictly
increasing dates, no missing cells, positive prices (and volumes, which enter change
rates), the expected number of sensors. A failed check raises
:class:`~hbo_envs.data.paths.DataFormatError` naming the file, what is wrong and how to fix
it; a missing data set raises :class:`~hbo_envs.data.paths.DataNotFoundError` naming the
command that fetches it. The ``validate_*`` functions are the same checks on an in-memory
table; the data scripts run them before writing anything.

>>> import pandas as pd
>>> validate_price_table(pd.DataFrame({"A": [1.0, -2.0]}), "demo.csv")
Traceback (most recent call last):
...
hbo_envs.data.paths.DataFormatError: demo.csv: column 'A' has 1 non-positive value(s) ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from hbo_envs.data.paths import DataFormatError, require

__all__ = [
    "STOCKS29_TICKERS",
    "STOCKPICKING_TICKERS",
    "OHLCV",
    "YAHOO_COLUMNS",
    "clear_cache",
    "LightSensorData",
    "load_lightsensor",
    "load_stockpicking",
    "load_stocks29",
    "read_dated_csv",
    "validate_price_table",
]

STOCKS29_TICKERS: tuple[str, ...] = (
    "AAPL AXP BA CAT CSCO CVX DIS GE GS HD IBM INTC JNJ JPM KO MCD MMM MRK MSFT NKE PFE PG "
    "TRV UNH UTX V VZ WMT XOM"
).split()
"""The 29 DJIA members of Chowdhury–Gopalan's stock experiment (2016–2019)."""

STOCKPICKING_TICKERS: tuple[str, ...] = ("AAPL", "BIDU", "HA")
"""Park–Lee's stocks (App. D): Apple, Baidu, Hawaiian Holdings."""

OHLCV: tuple[str, ...] = ("Open", "High", "Low", "Close", "Volume")
"""The Yahoo columns whose change rates Park–Lee use (App. D: o, h, l, c, v)."""

YAHOO_COLUMNS: tuple[str, ...] = ("Open", "High", "Low", "Close", "Adj Close", "Volume")

_FIX = "Re-fetch or re-import the data set (hbo-bench data fetch|import)."


def _stamp(d: Path) -> tuple[int, ...]:
    """Modification times of a data set's files: the per-process cache key (a file rewritten
    by ``hbo-bench data import`` is read again)."""
    return tuple(p.stat().st_mtime_ns for p in sorted(Path(d).iterdir()) if p.is_file())


def _fail(where: str, what: str) -> DataFormatError:
    return DataFormatError(f"{where}: {what}. {_FIX}")


def read_dated_csv(path: Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A CSV with a ``Date`` column as a float table indexed by date, validated.

    Checks: the file parses, has a ``Date`` column of ISO dates, strictly increasing and
    unique, the required ``columns`` (when given), numeric cells and no missing cell.
    """
    path = Path(path)
    try:
        df = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise _fail(str(path), f"cannot be read as CSV ({exc})") from None
    if "Date" not in df.columns:
        raise _fail(str(path), f"no 'Date' column (columns: {list(df.columns)[:8]})")
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise _fail(str(path), f"missing column(s) {missing}")
        df = df[["Date", *columns]]
    try:
        dates = pd.to_datetime(df["Date"], format="%Y-%m-%d")
    except (ValueError, TypeError) as exc:
        raise _fail(str(path), f"'Date' must hold ISO dates YYYY-MM-DD ({exc})") from None
    if not dates.is_monotonic_increasing or dates.duplicated().any():
        raise _fail(str(path), "dates must be strictly increasing (sorted, no duplicates)")
    values = df.drop(columns="Date")
    try:
        values = values.apply(pd.to_numeric, errors="raise").astype(float)
    except (ValueError, TypeError) as exc:
        raise _fail(str(path), f"non-numeric cell ({exc})") from None
    values.index = pd.DatetimeIndex(dates, name="Date")
    return _no_missing(values, str(path))


def _no_missing(df: pd.DataFrame, where: str) -> pd.DataFrame:
    bad = ~np.isfinite(df.to_numpy(dtype=float))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise _fail(
            where,
            f"{int(bad.sum())} missing or non-finite cell(s) (first: column "
            f"{df.columns[c]!r}, row {r + 1})",
        )
    return df


def validate_price_table(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Check a table of prices (or volumes): finite and strictly positive everywhere."""
    _no_missing(df, where)
    for col in df.columns:
        bad = np.flatnonzero(df[col].to_numpy(dtype=float) <= 0)
        if bad.size:
            raise _fail(
                where,
                f"column {col!r} has {bad.size} non-positive value(s) (first on row "
                f"{bad[0] + 1}); prices must be > 0",
            )
    return df


def _slice(df: pd.DataFrame, start: str, end: str, where: str, min_rows: int) -> pd.DataFrame:
    out = df.loc[pd.Timestamp(start) : pd.Timestamp(end)]
    if len(out) < min_rows:
        raise _fail(
            where,
            f"only {len(out)} row(s) between {start} and {end}, at least {min_rows} needed "
            f"(the file covers {df.index[0].date() if len(df) else '-'} .. "
            f"{df.index[-1].date() if len(df) else '-'})",
        )
    return out


# -- Chowdhury–Gopalan: 29 stocks ---------------------------------------------------------------
STOCKS29_START, STOCKS29_END = "2016-01-04", "2019-04-10"


def load_stocks29(root: Path | None = None) -> pd.DataFrame:
    """Adjusted closes of the 29 stocks, 2016-01-04..2019-04-10 (rows: days, cols: tickers).

    Reads ``chowdhury2019_fin/fin.csv`` (wide: ``Date`` + one column per ticker).
    """
    d = require("stocks29", root)
    return _load_stocks29(str(d / "fin.csv"), _stamp(d))


@lru_cache(maxsize=4)
def _load_stocks29(path: str, stamp: tuple[int, ...]) -> pd.DataFrame:
    df = read_dated_csv(Path(path))
    missing = [t for t in STOCKS29_TICKERS if t not in df.columns]
    if missing:
        raise _fail(path, f"missing ticker column(s) {missing}; expected {STOCKS29_TICKERS}")
    df = df[list(STOCKS29_TICKERS)]
    df = _slice(df, STOCKS29_START, STOCKS29_END, path, 100)
    return validate_price_table(df, path)


# -- Chowdhury–Gopalan: CMU light sensors -------------------------------------------------------
@dataclass(frozen=True)
class LightSensorData:
    """Raw ADC readings (train ``(601, 41)``, test ``(192, 41)``) and coordinates ``(41, 2)``."""

    train: np.ndarray
    test: np.ndarray
    coords: np.ndarray
    sensors: tuple[str, ...]


N_SENSORS = 41


def load_lightsensor(root: Path | None = None) -> LightSensorData:
    """The CMU Intelligent Workplace light-sensor readings and the sensors' coordinates."""
    d = require("lightsensor", root)
    return _load_lightsensor(str(d), _stamp(d))


def _read_readings(path: Path) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise _fail(str(path), f"cannot be read as CSV ({exc})") from None
    expected = ["t"] + [f"s{i}" for i in range(1, N_SENSORS + 1)]
    if list(df.columns) != expected:
        raise _fail(str(path), f"columns must be t,s1..s{N_SENSORS}; got {list(df.columns)[:6]}...")
    try:
        vals = df[expected[1:]].apply(pd.to_numeric, errors="raise").astype(float)
    except (ValueError, TypeError) as exc:
        raise _fail(str(path), f"non-numeric reading ({exc})") from None
    _no_missing(vals, str(path))
    if (vals.to_numpy() < 0).any():
        raise _fail(str(path), "negative readings (raw ADC readings are >= 0)")
    if len(vals) < 2:
        raise _fail(str(path), f"needs at least 2 readings, has {len(vals)}")
    return vals


@lru_cache(maxsize=4)
def _load_lightsensor(d: str, stamp: tuple[int, ...]) -> LightSensorData:
    root = Path(d)
    train = _read_readings(root / "train_sensordata_raw.csv")
    test = _read_readings(root / "test_sensordata_raw.csv")
    cpath = root / "sensor_coords.csv"
    try:
        coords = pd.read_csv(cpath)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise _fail(str(cpath), f"cannot be read as CSV ({exc})") from None
    if list(coords.columns) != ["sensor", "x", "y"] or len(coords) != N_SENSORS:
        raise _fail(
            str(cpath),
            f"must have columns sensor,x,y and {N_SENSORS} rows; got "
            f"{list(coords.columns)} and {len(coords)} rows",
        )
    if list(coords["sensor"]) != list(train.columns):
        raise _fail(str(cpath), "sensor names must be s1..s41 in order")
    xy = _no_missing(coords[["x", "y"]].astype(float), str(cpath)).to_numpy()
    if np.any(np.ptp(xy, axis=0) <= 0):
        raise _fail(str(cpath), "all sensors share one coordinate; the positions are degenerate")
    if np.any(test.mean().to_numpy() <= 0):
        raise _fail(str(root / "test_sensordata_raw.csv"), "a sensor's mean test reading is 0")
    return LightSensorData(
        train.to_numpy(), test.to_numpy(), xy, tuple(str(s) for s in coords["sensor"])
    )


# -- Park–Lee: AAPL / BIDU / HA -----------------------------------------------------------------
STOCKPICKING_START, STOCKPICKING_END = "2010-01-01", "2022-01-31"


def load_stockpicking(root: Path | None = None) -> dict[str, pd.DataFrame]:
    """Daily OHLCV of AAPL, BIDU, HA over Jan 2010 .. Jan 2022, on their common dates.

    Reads ``park2024_aapl_bidu_ha/<TICKER>.csv`` (Yahoo columns); returns
    ``{ticker: DataFrame[Open, High, Low, Close, Volume]}`` with identical date indexes.
    """
    d = require("stockpicking", root)
    return dict(_load_stockpicking(str(d), _stamp(d)))


@lru_cache(maxsize=4)
def _load_stockpicking(d: str, stamp: tuple[int, ...]) -> tuple[tuple[str, pd.DataFrame], ...]:
    frames = {}
    for t in STOCKPICKING_TICKERS:
        path = str(Path(d) / f"{t}.csv")
        df = read_dated_csv(Path(path), list(OHLCV))
        df = _slice(df, STOCKPICKING_START, STOCKPICKING_END, path, 100)
        frames[t] = validate_price_table(df, path)
    idx = frames[STOCKPICKING_TICKERS[0]].index
    for t, df in frames.items():
        if not df.index.equals(idx):
            diff = df.index.symmetric_difference(idx)
            raise _fail(
                str(Path(d) / f"{t}.csv"),
                f"trading dates differ from {STOCKPICKING_TICKERS[0]}.csv on {len(diff)} "
                f"day(s) (first {diff[0].date()}); all three files must cover the same days",
            )
    return tuple(frames.items())


def clear_cache() -> None:
    """Forget cached tables (after the data directory changed)."""
    _load_stocks29.cache_clear()
    _load_lightsensor.cache_clear()
    _load_stockpicking.cache_clear()
