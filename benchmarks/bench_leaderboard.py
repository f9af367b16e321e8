"""Cost of rendering the committed leaderboard site, beside the two-draw SVG export.

Prints, in one run: CPU seconds of :func:`hbo_envs.leaderboard.render.render_all` over a
copy of ``leaderboards/`` (every suite this machine can render, and the index), alternating
``figures.to_svg`` as it is (the placeholder layout engine that ``tight_layout`` leaves is
removed, so ``savefig`` draws each figure once) with the export before that change (the
placeholder kept: ``savefig`` draws every figure twice, once with rendering disabled),
and whether both give the same bytes in every file.

Run: ``python benchmarks/bench_leaderboard.py`` (``--reps N``, default 3). Not a test: timings
depend on the machine and its load; compare the columns of one run. Real-data suites render
only with the data (``HBO_DATA_DIR=../shared/data``).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

import matplotlib
from threadpoolctl import threadpool_limits

from hbo_envs.leaderboard import figures
from hbo_envs.leaderboard.render import render_all
from hbo_envs.leaderboard.suite import leaderboards_root


def two_draws(fig: matplotlib.figure.Figure) -> str:
    """``to_svg`` before the change: ``savefig`` with the placeholder engine left on."""
    buf = io.StringIO()
    with matplotlib.rc_context(figures._RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ours = figures.to_svg
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(1):
        site = Path(tmp) / "leaderboards"
        shutil.copytree(leaderboards_root(), site, ignore=shutil.ignore_patterns("_screenshots"))
        render_all(site)  # warm caches (imports, env constants) before timing
        times: dict[str, list[float]] = {"one draw (ours)": [], "two draws (before)": []}
        files: dict[str, dict[str, bytes]] = {}
        try:
            for _ in range(args.reps):
                for label, fn in (("one draw (ours)", ours), ("two draws (before)", two_draws)):
                    figures.to_svg = fn
                    t0 = time.process_time()
                    render_all(site)
                    times[label].append(time.process_time() - t0)
                    files[label] = snapshot(site)
        finally:
            figures.to_svg = ours
    for label, ts in times.items():
        print(f"render_all, {label:20s} CPU s: " + "  ".join(f"{t:6.2f}" for t in ts))
    a, b = files.values()
    print(f"same bytes in all {len(a)} files: {a == b}")


if __name__ == "__main__":
    main()
