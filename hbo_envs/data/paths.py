"""Where real data lives: the data directory and the registry of data sets.

The data directory is ``$HBO_DATA_DIR`` when set, else the per-user cache directory
(``platformdirs.user_cache_dir("hbo-bench")``, e.g. ``~/.cache/hbo-bench`` on Linux, which
follows ``$XDG_CACHE_HOME``). Inside it every data set has one sub-directory whose layout
is the one of the shared development data (``../shared/data`` beside a checkout), so
``HBO_DATA_DIR=../shared/data`` works as is and nothing needs to be copied:

- ``stocks29`` -> ``chowdhury2019_fin/fin.csv``: ``Date`` + 29 ticker columns of adjusted
  closes (a wide table, the authors' layout);
- ``lightsensor`` -> ``cmu_iw_lightsensor/``: ``train_sensordata_raw.csv`` and
  ``test_sensordata_raw.csv`` (``t,s1..s41``, raw ADC readings) and ``sensor_coords.csv``
  (``sensor,x,y``);
- ``stockpicking`` -> ``park2024_aapl_bidu_ha/``: ``AAPL.csv``, ``BIDU.csv``, ``HA.csv``, Yahoo
  daily ``Date,Open,High,Low,Close,Adj Close,Volume``.

The files are never part of the project (their licences do not allow it): the
``data_scripts`` fetch them into the data directory, or import already-downloaded copies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gymnasium.error import DependencyNotInstalled

__all__ = [
    "DATASETS",
    "DataNotFoundError",
    "DataFormatError",
    "Dataset",
    "data_dir",
    "dataset_path",
    "missing_files",
    "require",
]

ENV_VAR = "HBO_DATA_DIR"


class DataNotFoundError(DependencyNotInstalled, FileNotFoundError, ValueError):
    """A data set is missing from the data directory; the message names the command to run.

    A :class:`gymnasium.error.DependencyNotInstalled` (the error Gymnasium's tools treat as
    a missing dependency: a loop that makes every registered env skips the real-data ids
    when their data is absent, as it skips an env whose package is not installed), and
    still a ``FileNotFoundError`` and a ``ValueError`` (so the CLI reports it as a usage
    error, not a traceback, and code written against either keeps working)."""


class DataFormatError(ValueError):
    """A data file does not have the documented format; the message names file and fix."""


@dataclass(frozen=True)
class Dataset:
    """One real data set: its directory, required files, and how to get it."""

    name: str
    directory: str
    files: tuple[str, ...]
    description: str
    shared: str  # the matching directory of ../shared/data (for the import hint)

    @property
    def fetch_command(self) -> str:
        return f"hbo-bench data fetch {self.name}"

    @property
    def script(self) -> str:
        return f"python -m data_scripts.{self.name}"

    @property
    def import_command(self) -> str:
        return f"hbo-bench data import {self.name} --from ../shared/data/{self.shared}"


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "stocks29",
            "chowdhury2019_fin",
            ("fin.csv",),
            "29 DJIA stocks, adjusted daily closes 2016-01-04..2019-04-10 "
            "(Chowdhury–Gopalan 2019 §6)",
            "chowdhury2019_fin",
        ),
        Dataset(
            "lightsensor",
            "cmu_iw_lightsensor",
            ("train_sensordata_raw.csv", "test_sensordata_raw.csv", "sensor_coords.csv"),
            "CMU Intelligent Workplace light sensors: 41 sensors, 601 train / 192 test "
            "readings, coordinates (Chowdhury–Gopalan 2019 §6)",
            "cmu_iw_lightsensor",
        ),
        Dataset(
            "stockpicking",
            "park2024_aapl_bidu_ha",
            ("AAPL.csv", "BIDU.csv", "HA.csv"),
            "AAPL, BIDU, HA daily OHLCV 2010-01..2022-01 (Park–Lee 2024 App. D)",
            "park2024_aapl_bidu_ha",
        ),
    )
}


def data_dir() -> Path:
    """The data directory: ``$HBO_DATA_DIR`` or the per-user cache directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("hbo-bench"))


def _dataset(name: str) -> Dataset:
    if name not in DATASETS:
        raise ValueError(
            f"The 'dataset' parameter must be one of {', '.join(map(repr, DATASETS))}. "
            f"Got {name!r} instead."
        )
    return DATASETS[name]


def dataset_path(name: str, root: Path | None = None) -> Path:
    """The directory of data set ``name`` inside the data directory (may not exist)."""
    return (data_dir() if root is None else Path(root)) / _dataset(name).directory


def missing_files(name: str, root: Path | None = None) -> list[Path]:
    """The required files of ``name`` that are not in the data directory."""
    d = dataset_path(name, root)
    return [d / f for f in _dataset(name).files if not (d / f).is_file()]


def require(name: str, root: Path | None = None) -> Path:
    """The data set's directory, or :class:`DataNotFoundError` naming the command to run."""
    ds = _dataset(name)
    missing = missing_files(name, root)
    if missing:
        where = data_dir() if root is None else Path(root)
        raise DataNotFoundError(
            f"The {name!r} data set ({ds.description}) is not in the data directory {where} "
            f"(set {ENV_VAR} to change it): missing {', '.join(str(m) for m in missing)}. "
            f"Fetch it with `{ds.fetch_command}` (or `{ds.script}`), or import files you "
            f"already have without network: `{ds.import_command}`."
        )
    return dataset_path(name, root)
