"""The ``stockpicking`` data set: AAPL, BIDU, HA daily OHLCV (Park–Lee 2024, App. D).

Stored as ``park2024_aapl_bidu_ha/{AAPL,BIDU,HA}.csv`` in the Yahoo format
``Date,Open,High,Low,Close,Adj Close,Volume``, 2010-01-01 .. 2022-01-31 (Park–Lee's "Jan
2010 to Jan 2022").

- fetch: ``python -m data_scripts.stockpicking`` / ``hbo-bench data fetch stockpicking``
  (yfinance, one request per ticker).
- import: ``--from`` a directory holding ``AAPL.csv``, ``BIDU.csv``, ``HA.csv`` in the Yahoo
  format (e.g. ``../shared/data/park2024_aapl_bidu_ha``); rows outside the period are dropped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from data_scripts._common import script_main, staged_dataset, write_source
from data_scripts.yahoo import download_tickers, write_yahoo_csv
from hbo_envs.data import data_dir
from hbo_envs.data.loaders import (
    STOCKPICKING_END,
    STOCKPICKING_START,
    STOCKPICKING_TICKERS,
    YAHOO_COLUMNS,
    load_stockpicking,
    read_dated_csv,
)
from hbo_envs.data.paths import DATASETS

NAME = "stockpicking"


def _write(frames: dict[str, pd.DataFrame], root: Path | None, **source: object) -> Path:
    ds = DATASETS[NAME]
    with staged_dataset(NAME, root) as stage:
        d = stage / ds.directory
        for t in STOCKPICKING_TICKERS:
            f = frames[t].loc[pd.Timestamp(STOCKPICKING_START) : pd.Timestamp(STOCKPICKING_END)]
            write_yahoo_csv(f, d / f"{t}.csv")
        load_stockpicking(stage)  # validate before it goes into place
        write_source(d, dataset=NAME, period=[STOCKPICKING_START, STOCKPICKING_END], **source)
    return (root or data_dir()) / ds.directory


def fetch(root: Path | None = None, progress: bool | None = None) -> Path:
    """Download AAPL, BIDU, HA for Jan 2010 .. Jan 2022 with yfinance."""
    frames = download_tickers(
        STOCKPICKING_TICKERS, STOCKPICKING_START, STOCKPICKING_END, progress=progress
    )
    return _write(frames, root, source="Yahoo Finance via yfinance")


def import_from(source: Path, root: Path | None = None) -> Path:
    """Import ``AAPL.csv``, ``BIDU.csv``, ``HA.csv`` (Yahoo format) from a directory."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(
            f"--from must be a directory holding AAPL.csv, BIDU.csv and HA.csv; got {source}"
        )
    frames = {}
    for t in STOCKPICKING_TICKERS:
        p = source / f"{t}.csv"
        if not p.is_file():
            raise FileNotFoundError(f"No {t}.csv in {source} (needed: AAPL.csv, BIDU.csv, HA.csv)")
        frames[t] = read_dated_csv(p, list(YAHOO_COLUMNS))
    return _write(frames, root, source=f"imported from {source.name}/")


def main(argv: list[str] | None = None) -> int:
    return script_main(NAME, fetch, import_from, argv)


if __name__ == "__main__":
    sys.exit(main())
