"""``hbo-bench data fetch|import|list`` (also ``python -m data_scripts ...``).

>>> p = build_parser()
>>> p.parse_args(["import", "stocks29", "--from", "fin.csv"]).source
'fin.csv'
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hbo_envs.data import DATASETS, data_dir, dataset_path, missing_files

__all__ = ["add_data_parser", "build_parser", "main", "run"]


def add_data_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``data`` sub-command to an ``add_subparsers()`` object; returns its parser."""
    d = sub.add_parser("data", help="fetch, import or list the real data sets")
    _fill(d)
    return d


def _fill(d: argparse.ArgumentParser) -> None:
    dsub = d.add_subparsers(dest="data_command", required=True)
    names = list(DATASETS)
    f = dsub.add_parser("fetch", help="download a data set (yfinance / public URL)")
    f.add_argument("name", choices=[*names, "all"], help="data set to fetch, or all")
    f.add_argument("--root", default=None, help="data directory (default $HBO_DATA_DIR)")
    f.add_argument("--no-progress", action="store_true", help="no progress bar")
    i = dsub.add_parser("import", help="import files you already have (no network)")
    i.add_argument("name", choices=names, help="data set the files belong to")
    i.add_argument("--from", dest="source", required=True, help="file or directory to import")
    i.add_argument("--root", default=None, help="data directory (default $HBO_DATA_DIR)")
    ls = dsub.add_parser("list", help="the data directory and which data sets are present")
    ls.add_argument("--root", default=None, help="data directory (default $HBO_DATA_DIR)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m data_scripts", description=__doc__)
    _fill(ap)
    return ap


def _list(root: Path | None) -> int:
    where = root or data_dir()
    print(f"data directory: {where}  (set HBO_DATA_DIR to change it)")
    for name, ds in DATASETS.items():
        miss = missing_files(name, root)
        d = dataset_path(name, root)
        src = ""
        if (d / "SOURCE.json").is_file():
            try:
                src = json.loads((d / "SOURCE.json").read_text()).get("source", "")
            except (OSError, json.JSONDecodeError):
                src = "?"
        state = "present" if not miss else f"missing ({len(miss)} file(s))"
        print(f"  {name:13s} {state:22s} {d}")
        print(f"  {'':13s} {ds.description}")
        if src:
            print(f"  {'':13s} source: {src}")
        if miss:
            print(f"  {'':13s} get it: {ds.fetch_command}  |  {ds.import_command}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``data`` command; 0 on success, 1 when a fetch/import failed."""
    from data_scripts._common import FetchError

    root = Path(args.root) if args.root else None
    if args.data_command == "list":
        return _list(root)
    names = list(DATASETS) if args.name == "all" else [args.name]
    status = 0
    for name in names:
        mod = importlib.import_module(f"data_scripts.{name}")
        try:
            if args.data_command == "fetch":
                out = mod.fetch(root=root, progress=False if args.no_progress else None)
            else:
                out = mod.import_from(Path(args.source), root=root)
        except (FetchError, ValueError, FileNotFoundError) as exc:
            print(f"hbo-bench data: error: {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        except KeyboardInterrupt:
            print(f"\nhbo-bench data: interrupted; {name} was not written.", file=sys.stderr)
            return 130
        print(f"{name}: wrote {out}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
