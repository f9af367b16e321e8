"""The results directory: atomic per-cell files, resumption, merged tables and metadata.

Layout of ``--out DIR``::

    DIR/cells/<run>.json            status of one cell ("ok" | "failed"), fingerprint, timing,
                                    the env's problem constants, the traceback of a failure
    DIR/cells/<run>.parquet         its record rows (see hbo_envs.harness.records)
    DIR/cells/<run>.snapshot.parquet  final posterior over all points (experiments that ask)
    DIR/records.parquet, .csv       all record rows of the sweep (written at its end)
    DIR/summary.parquet, .csv       one row per env x agent (hbo_envs.harness.summary)
    DIR/snapshots.parquet           all posterior snapshots (when any)
    DIR/meta.json                   package versions, git revision, envs, agents, seeds, ...

``<run>`` is the file-name safe run name ``{env_id}__{agent}__{seed}``. A cell's files are
written to a temporary name and renamed into place (atomic on POSIX), the ``.json`` last:
a cell counts as finished exactly when its ``.json`` exists with status ``ok`` and its
``.parquet`` is readable with the row count the ``.json`` records.
Re-running a sweep skips finished cells whose fingerprint matches and runs everything
else (failed cells are retried). Each finished cell it skips is verified first: its
``.json`` records the SHA-256 of the ``.parquet`` (and of the snapshot) as written, so a
truncated, unreadable or *altered* cell file (a bit flip the Parquet footer does not
notice) is re-run, with a warning naming it, and never merged. A finished cell
with a *different* fingerprint (same run name, other horizon or parameters) is an error:
use a fresh directory.

File-system faults (an unwritable or read-only directory, a path under a file, a name too
long) raise :class:`ResultsDirError` (an ``OSError``) naming the path and the fix; the
CLI turns it into one line and exit status 2. Every file is written with the mode a
plain ``open`` would give (``0666`` minus the umask, like the plots), not ``0600``.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from importlib import metadata as _md
from pathlib import Path
from typing import Any

import pandas as pd

from hbo_envs.harness.cell import CellResult
from hbo_envs.harness.records import coerce, empty_records
from hbo_envs.harness.specs import CellSpec, jsonable

__all__ = ["ResultStore", "ResultsDirError", "git_revision", "package_versions"]


class ResultsDirError(OSError):
    """A results directory (or a file in it) cannot be created, written or read."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()
"""Mode of every file the harness writes: what ``open(path, "w")`` would give."""


def fs_error(path: Path, exc: OSError, doing: str = "write") -> ResultsDirError:
    """One clear error for a file-system fault at ``path``: what failed and the fix."""
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "choose a writable --out directory or fix its permissions"
    elif code in (errno.ENOTDIR, errno.EEXIST):
        fix = "a component of the path is a file, not a directory; choose another --out"
    elif code == errno.ENAMETOOLONG:
        fix = "the path or a file name in it is too long; choose a shorter --out"
    elif code == errno.ENOSPC:
        fix = "the disk is full; free space or choose another --out"
    else:
        fix = "check the path"
    err = ResultsDirError(code, f"Cannot {doing} {str(path)!r}: {exc.strerror or exc}. Fix: {fix}.")
    err.filename = str(path)
    return err


_PACKAGES = ("hbo-bench", "numpy", "scipy", "gymnasium", "pandas", "pyarrow", "matplotlib")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for p in (*_PACKAGES, "ray"):
        try:
            out[p] = _md.version(p)
        except _md.PackageNotFoundError:
            out[p] = None
    return out


def git_revision(where: str | Path | None = None) -> dict[str, Any] | None:
    """``{"revision", "dirty"}`` of the checkout the package runs from, when it is one.

    ``dirty``: a tracked *code* file (``agents/``, ``hbo_envs/``, ``pyproject.toml``) differs
    from ``HEAD``. Generated outputs (``results/``, ``leaderboards/``, ``docs/``) do not
    count: ``leaderboard baselines`` writes each reference as it goes, and the files it
    wrote made every later record of the same run read as "uncommitted changes".
    ``where``: a directory inside the checkout (default: this package's)."""
    here = Path(where) if where is not None else Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        st = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--"]
            + [":(top)agents", ":(top)hbo_envs", ":(top)pyproject.toml"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return {"revision": rev.stdout.strip(), "dirty": bool(st.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return None


def _atomic_write(path: Path, write: Any) -> None:
    """Write via ``write(tmp_path)`` then rename onto ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise fs_error(path, exc) from exc
    try:
        write(Path(tmp))
        os.chmod(tmp, _FILE_MODE)  # mkstemp creates 0600; outputs are shared like plots
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise fs_error(path, exc) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    text = json.dumps(jsonable(obj), indent=2, sort_keys=False, default=str, allow_nan=True)
    _atomic_write(path, lambda p: p.write_text(text + "\n"))


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (streamed)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_table(path: Path, df: pd.DataFrame) -> None:
    if path.suffix == ".csv":
        _atomic_write(path, lambda p: df.to_csv(p, index=False))
    else:
        _atomic_write(path, lambda p: df.to_parquet(p, index=False))


class ResultStore:
    """Reads and writes one results directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.cells = self.root / "cells"

    # -- cells ----------------------------------------------------------------------------
    def _paths(self, spec: CellSpec) -> tuple[Path, Path, Path]:
        stem = spec.file_stem
        return (
            self.cells / f"{stem}.json",
            self.cells / f"{stem}.parquet",
            self.cells / f"{stem}.snapshot.parquet",
        )

    def prepare(self) -> None:
        """Create the directory and prove it is writable (else :class:`ResultsDirError`)."""
        for d in (self.root, self.cells):
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise fs_error(d, exc, "create the results directory") from exc
            if not d.is_dir():
                raise fs_error(d, OSError(errno.ENOTDIR, "not a directory"), "use")
        try:
            fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=self.cells)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise fs_error(self.cells, exc, "write into") from exc

    def status(self, spec: CellSpec) -> dict[str, Any] | None:
        js, _, _ = self._paths(spec)
        if not js.exists():
            return None
        try:
            st = json.loads(js.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            warnings.warn(
                f"Cell {spec.run_name!r}: its status file {str(js)!r} is unreadable ({exc}); "
                "the cell is re-run.",
                stacklevel=2,
            )
            return None
        return st if isinstance(st, dict) else None

    def _verify(self, spec: CellSpec, st: dict[str, Any]) -> str | None:
        """Why the finished cell's record file cannot be trusted, or None if it can."""
        pq = self._paths(spec)[1]
        if not pq.exists():
            return "its record file is missing"
        try:
            import pyarrow.parquet as papq

            rows = papq.read_metadata(pq).num_rows
        except Exception as exc:  # noqa: BLE001 - any read error means "re-run it"
            return f"its record file is unreadable ({type(exc).__name__}: {exc})"
        want = st.get("rows")
        if want is not None and rows != want:
            return f"its record file has {rows} rows, the status file records {want}"
        for path, key in ((pq, "sha256"), (self._paths(spec)[2], "snapshot_sha256")):
            digest = st.get(key)
            if digest is None:
                continue  # written before checksums existed: rows and footer checked above
            try:
                got = file_sha256(path)
            except OSError as exc:
                return f"its file {path.name} is unreadable ({exc})"
            if got != digest:
                return (
                    f"its file {path.name} no longer matches the SHA-256 recorded when it was "
                    "written (altered or corrupted on disk)"
                )
        return None

    def is_done(self, spec: CellSpec) -> bool:
        """Finished with status ``ok``, the same fingerprint (raises on a mismatch) and a
        record file that reads back with the recorded row count (else: warn, re-run)."""
        st = self.status(spec)
        if st is None or st.get("status") != "ok":
            return False
        if st.get("fingerprint") != spec.fingerprint():
            raise ValueError(
                f"The results directory {str(self.root)!r} already holds cell "
                f"{spec.run_name!r} computed with a different configuration (horizon, env "
                "kwargs, agent parameters or recording options). Use a new --out directory "
                "(or --fresh to discard the old results)."
            )
        problem = self._verify(spec, st)
        if problem is not None:
            warnings.warn(
                f"Cell {spec.run_name!r} is marked finished but {problem} "
                f"({str(self._paths(spec)[1])!r}); re-running it.",
                stacklevel=2,
            )
            return False
        return True

    def write_cell(self, result: CellResult) -> None:
        js, pq, snap = self._paths(result.spec)
        sums: dict[str, str] = {}
        if result.status == "ok":
            write_table(pq, result.records)
            sums["sha256"] = file_sha256(pq)
            if result.snapshot is not None:
                write_table(snap, result.snapshot)
                sums["snapshot_sha256"] = file_sha256(snap)
        status = {
            "status": result.status,
            "rows": None if result.records is None else len(result.records),
            **sums,
            "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            **result.info,
            "agent_spec": result.spec.agent.describe(),
            "env_kwargs": result.spec.env_kwargs,
            "horizon_requested": result.spec.horizon,
        }
        if result.error:
            status["traceback"] = result.error
        write_json(js, status)

    def read_cell(self, spec: CellSpec) -> pd.DataFrame:
        return read_table_file(self._paths(spec)[1])

    # -- merged tables --------------------------------------------------------------------
    def cell_statuses(self) -> list[dict[str, Any]]:
        out = []
        for p in sorted(self.cells.glob("*.json")):
            try:
                out.append(json.loads(p.read_text()))
            except (OSError, json.JSONDecodeError):
                continue
        return out

    def load_records(self) -> pd.DataFrame:
        """All record rows: the merged file if present and complete, else the cell files."""
        merged = self.root / "records.parquet"
        if merged.exists():
            return read_table_file(merged)
        return self.collect_records()

    def _intact(self, pq: Path) -> bool:
        """Whether a cell's record file matches the checksum in its ``.json`` (a file
        without a recorded checksum passes); warns, naming the cell, when it does not."""
        js = pq.with_name(pq.name.removesuffix(".parquet") + ".json")
        try:
            digest = json.loads(js.read_text()).get("sha256")
        except (OSError, ValueError, AttributeError):
            return True
        if digest is None or file_sha256(pq) == digest:
            return True
        warnings.warn(
            f"Cell file {str(pq)!r} no longer matches the SHA-256 recorded when it was "
            "written (altered or corrupted on disk); it is left out of the merged results. "
            "Rerun the same command to recompute it.",
            stacklevel=3,
        )
        return False

    def collect_records(self, specs: list[CellSpec] | None = None) -> pd.DataFrame:
        if specs is None:
            files = sorted(
                p for p in self.cells.glob("*.parquet") if not p.name.endswith(".snapshot.parquet")
            )
        else:
            files = [self._paths(s)[1] for s in specs]
            files = [p for p in files if p.exists()]
        files = [p for p in files if self._intact(p)]
        if not files:
            return empty_records()
        df = pd.concat([read_table_file(p) for p in files], ignore_index=True)
        return coerce(df).sort_values(["env_id", "agent", "seed", "t"], ignore_index=True)

    def collect_snapshots(self, specs: list[CellSpec] | None = None) -> pd.DataFrame | None:
        if specs is None:
            files = sorted(self.cells.glob("*.snapshot.parquet"))
        else:
            files = [p for p in (self._paths(s)[2] for s in specs) if p.exists()]
        if not files:
            return None
        return pd.concat([pd.read_parquet(p) for p in files], ignore_index=True)

    def write_merged(
        self, records: pd.DataFrame, summary: pd.DataFrame, snapshots: pd.DataFrame | None
    ) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_table(self.root / "records.parquet", records)
        write_table(self.root / "records.csv", records)
        write_table(self.root / "summary.parquet", summary)
        write_table(self.root / "summary.csv", summary)
        if snapshots is not None:
            write_table(self.root / "snapshots.parquet", snapshots)

    def invalidate_merged(self) -> None:
        for name in ("records.parquet", "records.csv", "summary.parquet", "summary.csv"):
            (self.root / name).unlink(missing_ok=True)

    # -- metadata -------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        p = self.root / "meta.json"
        if not p.exists():
            return {}
        try:
            meta = json.loads(p.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(
                f"The metadata file {str(p)!r} is not valid JSON ({exc}). Delete it (the "
                "next run writes a new one; the cell files are kept) or rerun with --fresh."
            ) from None
        except OSError as exc:
            raise fs_error(p, exc, "read") from exc
        if not isinstance(meta, dict):
            raise ValueError(
                f"The metadata file {str(p)!r} must hold a JSON object; delete it or rerun "
                "with --fresh."
            )
        return meta

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_json(self.root / "meta.json", meta)


def read_table_file(path: Path) -> pd.DataFrame:
    """A Parquet file of the results directory; an unreadable one is an error naming it
    and the fix (a cell file: delete it and rerun; a merged table: rerun to rewrite it)."""
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - name the file whatever went wrong
        fix = (
            "Delete it and its .json and rerun the same command to recompute that cell."
            if path.parent.name == "cells"
            else "Delete it; rerunning the same command rewrites it from the cell files."
        )
        raise ValueError(
            f"The results file {str(path)!r} is unreadable ({type(exc).__name__}: {exc}). {fix}"
        ) from None


def base_meta() -> dict[str, Any]:
    return {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": sys.argv,
        "packages": package_versions(),
        "git": git_revision(),
        "platform": platform.platform(),
    }
