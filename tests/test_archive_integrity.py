"""Archive integrity (issue 37 item 7): every meta.json records the SHA-256 of its
experiment's records.parquet and cells.parquet; ``status``, ``verify`` and ``render``
check them first, and a flipped bit (even one that still decodes: one bit of an ``R_T``),
a raw byte flip, a truncated file or garbage is reported by file name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hbo_envs.cli import main
from hbo_envs.judging import archive as A
from hbo_envs.judging import publish

NAME = "cg2019-fig1e"  # the smallest committed experiment (21 planned cells)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "archive"
    shutil.copytree(A.ARCHIVE_DIR / NAME, r / NAME)
    return r


def test_every_committed_meta_holds_the_checksums_of_its_files() -> None:
    dirs = sorted(p for p in A.ARCHIVE_DIR.iterdir() if p.is_dir())
    assert len(dirs) == len(A.EXPERIMENTS)
    for d in dirs:
        meta = A.read_meta(d.name)
        assert meta["checksums"] == A.file_checksums(d.name)
        assert set(meta["checksums"]) == set(A.ARCHIVE_FILES)
        A.check_integrity(d.name)


def _flip_one_bit_of_a_value(path: Path, column: str) -> None:
    """Flip the lowest mantissa bit of the last value of ``column`` and rewrite the file:
    a valid Parquet file whose data differ by one bit."""
    df = pd.read_parquet(path)
    x = df[column].to_numpy(dtype=np.float64).copy()
    bits = x.view(np.int64)
    bits[-1] ^= 1
    assert x[-1] != df[column].iloc[-1] and abs(x[-1] / df[column].iloc[-1] - 1) < 1e-15
    df[column] = x
    df.to_parquet(path, index=False, compression="zstd")
    assert pd.read_parquet(path)[column].iloc[-1] == x[-1]  # it decodes silently


def _raw_byte_flip(path: Path) -> None:
    b = bytearray(path.read_bytes())
    b[len(b) // 2] ^= 0x10
    path.write_bytes(bytes(b))


def _truncate(path: Path) -> None:
    b = path.read_bytes()
    path.write_bytes(b[: len(b) // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(np.random.default_rng(0).bytes(path.stat().st_size))


CORRUPTIONS = {
    "R_T bit": lambda d, f: _flip_one_bit_of_a_value(
        d / f, "R_T" if f == "cells.parquet" else "regret"
    ),
    "raw byte flip": lambda d, f: _raw_byte_flip(d / f),
    "truncation": lambda d, f: _truncate(d / f),
    "garbage": lambda d, f: _garbage(d / f),
}


@pytest.mark.parametrize("file", A.ARCHIVE_FILES)
@pytest.mark.parametrize("how", list(CORRUPTIONS))
def test_status_verify_and_render_report_the_damaged_file(root: Path, file: str, how: str):
    A.check_integrity(NAME, root)  # the copy is intact
    CORRUPTIONS[how](root / NAME, file)
    msg = rf"{NAME}/{file} does not match the SHA-256 recorded in meta\.json"
    with pytest.raises(A.ArchiveIntegrityError, match=msg):
        A.status(NAME, root)
    with pytest.raises(A.ArchiveIntegrityError, match=msg):
        A.verify([NAME], sample=1, seed=0, root=root, log=lambda *_: None)
    with pytest.raises(A.ArchiveIntegrityError, match=msg):
        publish.experiment_result(NAME, root)
    with pytest.raises(A.ArchiveIntegrityError, match=msg):
        publish.render_all(root=root, check=True)


def test_the_command_line_names_the_file(root: Path, capsys) -> None:
    _truncate(root / NAME / "records.parquet")
    assert main(["archive", "status", NAME, "--archive", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"{NAME:20s} CORRUPT: " in out and "records.parquet does not match" in out
    assert "git checkout --" in out
    assert main(["archive", "verify", NAME, "--archive", str(root)]) == 2
    assert "records.parquet does not match" in capsys.readouterr().err
    assert main(["archive", "render", "--check", "--archive", str(root)]) == 2
    assert "records.parquet does not match" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["truncation", "garbage"])
def test_an_archive_without_checksums_still_names_an_unreadable_file(root: Path, how: str):
    meta = A.read_meta(NAME, root)
    del meta["checksums"]
    (root / NAME / "meta.json").write_text(json.dumps(meta))
    A.check_integrity(NAME, root)
    CORRUPTIONS[how](root / NAME, "cells.parquet")
    with pytest.raises(A.ArchiveIntegrityError, match=rf"{NAME}/cells\.parquet cannot be read"):
        A.status(NAME, root)


def test_a_missing_listed_file_and_a_broken_meta_are_reported(root: Path) -> None:
    (root / NAME / "cells.parquet").unlink()
    with pytest.raises(A.ArchiveIntegrityError, match=r"cells\.parquet is missing, but "):
        A.status(NAME, root)
    (root / NAME / "meta.json").write_text("{not json")
    with pytest.raises(A.ArchiveIntegrityError, match=r"meta\.json is not valid JSON"):
        A.status(NAME, root)


def test_a_sealed_edit_reads_again(root: Path) -> None:
    _flip_one_bit_of_a_value(root / NAME / "cells.parquet", "R_T")
    with pytest.raises(A.ArchiveIntegrityError):
        A.read_cells(NAME, root)
    assert A.seal(NAME, root) == A.file_checksums(NAME, root)
    assert len(A.read_cells(NAME, root)) == len(
        pd.read_parquet(A.ARCHIVE_DIR / NAME / "cells.parquet")
    )
