"""The ``stocks29`` data set: adjusted closes of Chowdhury–Gopalan's 29 DJIA stocks.

Stored as ``chowdhury2019_fin/fin.csv``: ``Date`` + 29 ticker columns (wide), 2016-01-04 ..
2019-04-10 — the layout of the authors' ``fin.csv``.

- fetch: ``python -m data_scripts.stocks29`` / ``hbo-bench data fetch stocks29`` downloads
  Yahoo's ``Adj Close`` with yfinance (UTX from RTX, its current symbol) and keeps the days
  every ticker traded. Yahoo's adjustment differs from the paper's Quandl EOD prices by a
  constant factor per ticker (dividends adjusted as of another date), so ``f`` and the
  constants differ slightly from the paper's; the exact file is the authors' ``fin.csv``.
- import: ``--from`` the authors' ``fin.csv`` (or its directory), or a long Yahoo OHLCV
  table with ``Date, Adj Close, Name`` columns (``../shared/data/djia29_yahoo_2016_2019``),
  which is pivoted to the wide layout.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from data_scripts._common import FetchError, script_main, staged_dataset, write_source
from data_scripts.yahoo import download_tickers
from hbo_envs.data import data_dir
from hbo_envs.data.loaders import (
    STOCKS29_END,
    STOCKS29_START,
    STOCKS29_TICKERS,
    load_stocks29,
    read_dated_csv,
)
from hbo_envs.data.paths import DATASETS

NAME = "stocks29"
YAHOO_SYMBOLS = {"UTX": "RTX"}  # UTX merged into Raytheon Technologies (RTX) in 2020


def _write(table: pd.DataFrame, root: Path | None, **source: object) -> Path:
    ds = DATASETS[NAME]
    with staged_dataset(NAME, root) as stage:
        d = stage / ds.directory
        out = table[list(STOCKS29_TICKERS)].copy()
        out.index = pd.DatetimeIndex(out.index).strftime("%Y-%m-%d")
        out.index.name = "Date"
        out.to_csv(d / "fin.csv", float_format="%.12g")
        load_stocks29(stage)  # validate before it goes into place
        write_source(d, dataset=NAME, **source)
    return (root or data_dir()) / ds.directory


def fetch(root: Path | None = None, progress: bool | None = None) -> Path:
    """Download the 29 tickers' ``Adj Close`` for 2016-01-04..2019-04-10 with yfinance."""
    frames = download_tickers(
        STOCKS29_TICKERS, STOCKS29_START, STOCKS29_END, sources=YAHOO_SYMBOLS, progress=progress
    )
    table = pd.concat({t: f["Adj Close"] for t, f in frames.items()}, axis=1, join="inner")
    if len(table) < 100:
        raise FetchError(f"only {len(table)} common trading days across the 29 tickers.")
    return _write(
        table,
        root,
        source="Yahoo Finance via yfinance (Adj Close)",
        symbols=YAHOO_SYMBOLS,
        period=[STOCKS29_START, STOCKS29_END],
    )


def import_from(source: Path, root: Path | None = None) -> Path:
    """Import the wide ``fin.csv`` or a long Yahoo table (``Date, Adj Close, Name``)."""
    source = Path(source)
    if source.is_dir():
        cands = [source / "fin.csv"] + sorted(source.glob("*.csv"))
        source = next((c for c in cands if c.is_file()), source / "fin.csv")
    if not source.is_file():
        raise FileNotFoundError(f"No such file to import: {source}")
    head = pd.read_csv(source, nrows=1)
    if {"Name", "Adj Close"} <= set(head.columns):
        long = pd.read_csv(source, usecols=["Date", "Adj Close", "Name"])
        wide = long.pivot(index="Date", columns="Name", values="Adj Close").reset_index()
        wide.columns.name = None
        table = wide.set_index(pd.to_datetime(wide.pop("Date"), format="%Y-%m-%d"))
        kind = "long Yahoo OHLCV table (Adj Close pivoted)"
    else:
        table = read_dated_csv(source)
        kind = "wide Date + tickers table"
    missing = [t for t in STOCKS29_TICKERS if t not in table.columns]
    if missing:
        raise ValueError(f"{source}: missing ticker(s) {missing} for the stocks29 data set.")
    return _write(table, root, source=f"imported from {source.name} ({kind})")


def main(argv: list[str] | None = None) -> int:
    return script_main(NAME, fetch, import_from, argv)


if __name__ == "__main__":
    sys.exit(main())
