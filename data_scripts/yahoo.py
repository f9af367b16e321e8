"""Daily prices from Yahoo Finance through ``yfinance`` (``pip install 'hbo-bench[data]'``).

One request per ticker, :func:`download_ticker`, always
``yfinance.download(ticker, start=..., end=<last day + 1>, auto_adjust=False, actions=False,
progress=False, threads=False)``: unadjusted OHLC (split-adjusted by Yahoo), ``Adj Close``
(split- and dividend-adjusted) and ``Volume`` — the Yahoo format
``Date,Open,High,Low,Close,Adj Close,Volume`` the stock data sets are stored in.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import pandas as pd

from data_scripts._common import FetchError
from hbo_envs.data.loaders import YAHOO_COLUMNS

__all__ = ["download_ticker", "download_tickers"]


def _yfinance() -> Any:
    try:
        return importlib.import_module("yfinance")
    except ImportError:
        raise FetchError(
            "Fetching stock data needs yfinance: pip install 'hbo-bench[data]' (or "
            "pip install yfinance). Or import files you already have: hbo-bench data import "
            "NAME --from PATH."
        ) from None


def download_ticker(ticker: str, start: str, end: str, source: str | None = None) -> pd.DataFrame:
    """Daily Yahoo data of ``ticker`` for ``start .. end`` (both inclusive, ISO dates).

    ``source`` is the symbol to ask Yahoo for when it differs from ``ticker`` (UTX is
    listed as RTX since 2020). Returns a frame indexed by ``Date`` with
    :data:`~hbo_envs.data.loaders.YAHOO_COLUMNS`; raises :class:`FetchError` when the
    request fails or returns no rows.
    """
    yf = _yfinance()
    symbol = source or ticker
    end_excl = (date.fromisoformat(end) + timedelta(days=1)).isoformat()  # yfinance: end exclusive
    try:
        df = yf.download(
            symbol,
            start=start,
            end=end_excl,
            auto_adjust=False,
            actions=False,
            progress=False,
            threads=False,
        )
    except Exception as exc:  # noqa: BLE001 - yfinance raises many kinds on network trouble
        raise FetchError(
            f"yfinance could not download {symbol} ({type(exc).__name__}: {exc}). Check the "
            "network connection and retry; nothing was written."
        ) from None
    if df is None or len(df) == 0:
        raise FetchError(
            f"yfinance returned no data for {symbol} between {start} and {end} (network "
            "down, rate-limited, or the symbol is unknown); nothing was written. Retry "
            "later, or import files you already have with --from."
        )
    if isinstance(df.columns, pd.MultiIndex):  # yfinance >= 0.2.48: (Price, Ticker)
        df = (
            df.xs(symbol, axis=1, level=-1)
            if symbol in df.columns.get_level_values(-1)
            else (df.droplevel(-1, axis=1))
        )
    missing = [c for c in YAHOO_COLUMNS if c not in df.columns]
    if missing:
        raise FetchError(f"yfinance's answer for {symbol} lacks column(s) {missing}.")
    out = df[list(YAHOO_COLUMNS)].copy()
    idx = pd.DatetimeIndex(out.index)
    out.index = (idx.tz_localize(None) if idx.tz is not None else idx).normalize()
    out.index.name = "Date"
    return out.dropna(how="all")


def download_tickers(
    tickers: Sequence[str],
    start: str,
    end: str,
    *,
    sources: dict[str, str] | None = None,
    progress: bool | None = None,
) -> dict[str, pd.DataFrame]:
    """:func:`download_ticker` for each ticker, with a progress bar over the tickers."""
    from tqdm.auto import tqdm

    out = {}
    disable = None if progress is None else not progress
    for t in tqdm(tickers, desc="yfinance", unit="ticker", disable=disable):
        out[t] = download_ticker(t, start, end, (sources or {}).get(t))
    return out


def write_yahoo_csv(df: pd.DataFrame, path: Any) -> None:
    """Write a frame in the stored Yahoo format (ISO dates, full float precision)."""
    out = df[list(YAHOO_COLUMNS)].copy()
    out.index = pd.DatetimeIndex(out.index).strftime("%Y-%m-%d")
    out.index.name = "Date"
    out.to_csv(path, float_format="%.10g")
