"""Shared machinery of the data scripts: staging + atomic commit, downloads, provenance."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hbo_envs.data import DATASETS, clear_cache, data_dir
from hbo_envs.harness.store import file_sha256

__all__ = ["FetchError", "download_url", "script_main", "staged_dataset", "write_source"]


class FetchError(RuntimeError):
    """A download or import failed; the message says what and how to fix it."""


@contextmanager
def staged_dataset(name: str, root: Path | None = None) -> Iterator[Path]:
    """Yield a staging root; the data set written under ``<staging>/<directory>`` is moved
    to ``<root>/<directory>`` only if the block finishes. On any exception (network error,
    validation failure, Ctrl-C) the staging directory is removed and an existing data set
    stays as it was."""
    ds = DATASETS[name]
    root = data_dir() if root is None else Path(root)
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=root))
    try:
        (stage / ds.directory).mkdir()
        yield stage
        final = root / ds.directory
        old = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".old-{name}-", dir=root))
            os.replace(final, old / ds.directory)
        try:
            os.replace(stage / ds.directory, final)
        except BaseException:
            if old is not None:  # put the previous data set back
                os.replace(old / ds.directory, final)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        clear_cache()
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_source(directory: Path, **info: Any) -> None:
    """Record where a data set came from (``SOURCE.json`` beside its files)."""
    info = {"written": datetime.now(timezone.utc).isoformat(timespec="seconds"), **info}
    (directory / "SOURCE.json").write_text(json.dumps(info, indent=2) + "\n")


def sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (the harness's one file hash)."""
    return file_sha256(path)


def download_url(
    url: str, dest: Path, *, progress: bool | None = None, timeout: float = 60
) -> None:
    """Download ``url`` to ``dest`` with a progress bar; :class:`FetchError` on failure."""
    from tqdm.auto import tqdm

    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(dest, "wb") as out:
            total = int(resp.headers.get("Content-Length") or 0) or None
            with tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc=dest.name,
                disable=None if progress is None else not progress,
            ) as bar:
                while chunk := resp.read(1 << 16):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise FetchError(
            f"Could not download {url} ({exc}). Check the network connection (or a proxy "
            "setting), or import a copy you already have with `hbo-bench data import ... "
            "--from PATH`."
        ) from None


def script_main(
    name: str,
    fetch: Callable[..., Path],
    do_import: Callable[..., Path],
    argv: list[str] | None = None,
) -> int:
    """``python -m data_scripts.<name> [--from PATH] [--root DIR]``."""
    ds = DATASETS[name]
    ap = argparse.ArgumentParser(
        prog=f"python -m data_scripts.{name}",
        description=f"Fetch the {name!r} data set ({ds.description}) into the data directory, "
        "or import files you already have (--from, no network).",
    )
    ap.add_argument("--from", dest="source", default=None, help="import from this file/dir")
    ap.add_argument("--root", default=None, help="data directory (default $HBO_DATA_DIR)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    root = Path(args.root) if args.root else None
    try:
        if args.source:
            out = do_import(Path(args.source), root=root)
        else:
            out = fetch(root=root, progress=False if args.no_progress else None)
    except (FetchError, ValueError, FileNotFoundError) as exc:
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{ap.prog}: interrupted; nothing was written.", file=sys.stderr)
        return 130
    print(f"{name}: wrote {out}")
    return 0
