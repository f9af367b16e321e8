"""The ``lightsensor`` data set: CMU Intelligent Workplace light sensors (Nov 2005).

Stored as ``cmu_iw_lightsensor/``: ``train_sensordata_raw.csv`` (601 rows) and
``test_sensordata_raw.csv`` (192 rows), columns ``t,s1..s41`` (raw ADC readings, ``t`` the
row number from 1), and ``sensor_coords.csv`` (``sensor,x,y``, 41 rows).

- fetch: ``python -m data_scripts.lightsensor`` / ``hbo-bench data fetch lightsensor``
  downloads the original MATLAB file ``iw_data_all.mat`` (the copy the Chowdhury–Gopalan
  code release ships, pinned to a commit and checked against its SHA-256) and converts it.
- import: ``--from`` that ``.mat`` file (or a directory containing it), or a directory with
  the three CSVs (e.g. ``../shared/data/cmu_iw_lightsensor``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from data_scripts._common import (
    FetchError,
    download_url,
    script_main,
    sha256,
    staged_dataset,
    write_source,
)
from hbo_envs.data import data_dir
from hbo_envs.data.loaders import load_lightsensor
from hbo_envs.data.paths import DATASETS

NAME = "lightsensor"
URL = (
    "https://raw.githubusercontent.com/sayakrc/Bayesian-Optimization-under-Heavy-tailed-Payoffs/"
    "673ce5ce40cabd95f0319e0a1b338044f160143e/iw_data_all.mat"
)
SHA256 = "3d87e03ae8bc9e3f0a4abeb57c64933c7d3dee7476ac5c4f6ca28b4efc357c15"
FILES = ("train_sensordata_raw.csv", "test_sensordata_raw.csv", "sensor_coords.csv")


def convert_mat(mat: Path, out_dir: Path) -> None:
    """Write the three CSVs from ``iw_data_all.mat`` (struct ``data``: ``train.sensordata``,
    ``test.sensordata``, ``coords``); values unchanged."""
    from scipy.io import loadmat

    try:
        data = loadmat(str(mat), squeeze_me=True, struct_as_record=False)["data"]
        tables = {
            "train": np.asarray(data.train.sensordata),
            "test": np.asarray(data.test.sensordata),
        }
        coords = np.asarray(data.coords, dtype=float)
    except (KeyError, AttributeError, ValueError, OSError) as exc:
        raise ValueError(
            f"{mat}: not the CMU IW light-sensor file (expected a struct 'data' with "
            f"train.sensordata, test.sensordata, coords): {exc}"
        ) from None
    cols = [f"s{i}" for i in range(1, coords.shape[0] + 1)]
    for part, X in tables.items():
        df = pd.DataFrame(X.astype(np.int64), columns=cols)
        df.insert(0, "t", np.arange(1, len(df) + 1))
        df.to_csv(out_dir / f"{part}_sensordata_raw.csv", index=False)
    pd.DataFrame({"sensor": cols, "x": coords[:, 0], "y": coords[:, 1]}).to_csv(
        out_dir / "sensor_coords.csv", index=False
    )


def _write_from(fill: Callable[[Path], None], root: Path | None, **source: object) -> Path:
    ds = DATASETS[NAME]
    with staged_dataset(NAME, root) as stage:
        d = stage / ds.directory
        fill(d)
        load_lightsensor(stage)  # validate before it goes into place
        write_source(d, dataset=NAME, **source)
    return (root or data_dir()) / ds.directory


def fetch(root: Path | None = None, progress: bool | None = None, url: str = URL) -> Path:
    """Download ``iw_data_all.mat``, check its SHA-256, convert it to the CSVs."""

    def fill(d: Path) -> None:
        mat = d.parent / "iw_data_all.mat"  # in the staging dir: removed with it
        download_url(url, mat, progress=progress)
        digest = sha256(mat)
        if url == URL and digest != SHA256:
            raise FetchError(
                f"{url}: SHA-256 {digest} differs from the expected {SHA256}; the file "
                "changed or the download is corrupt. Nothing was written."
            )
        convert_mat(mat, d)

    return _write_from(fill, root, source=url, sha256_mat=SHA256 if url == URL else None)


def import_from(source: Path, root: Path | None = None) -> Path:
    """Import the ``.mat`` file (or a directory with it), or a directory with the CSVs."""
    source = Path(source)
    if source.is_dir() and all((source / f).is_file() for f in FILES):

        def fill(d: Path) -> None:
            for f in FILES:
                shutil.copyfile(source / f, d / f)

        return _write_from(fill, root, source=f"imported from {source.name}/ (CSV)")
    mat = source / "iw_data_all.mat" if source.is_dir() else source
    if not mat.is_file():
        raise FileNotFoundError(
            f"Nothing to import at {source}: expected iw_data_all.mat or a directory with "
            f"{', '.join(FILES)}."
        )
    return _write_from(
        lambda d: convert_mat(mat, d),
        root,
        source=f"converted from {mat.name}",
        sha256_mat=sha256(mat),
    )


def main(argv: list[str] | None = None) -> int:
    return script_main(NAME, fetch, import_from, argv)


if __name__ == "__main__":
    sys.exit(main())
