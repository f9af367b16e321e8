"""docs/gymnasium.md: every python block runs as written; the picture is the one
examples/render_episode.py draws."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "gymnasium.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) >= 6
    text = PAGE.read_text()
    for target in re.findall(r"\]\(([^)]+\.png)\)", text):
        assert (PAGE.parent / target).is_file(), target
    for path in re.findall(r"`((?:examples|benchmarks)/[\w./]+\.py)`", text):
        assert (ROOT / path).is_file(), path


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_block_runs(i: int) -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCKS[i]], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert out.returncode == 0, f"block {i} failed:\n{BLOCKS[i]}\n{out.stderr}"


def test_render_example_draws_the_docs_picture(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "render_episode.py"), str(tmp_path / "f.png")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.strip().splitlines()) == 1 + 1 + 20  # wrote..., header, 20 rounds
    fresh = matplotlib.image.imread(tmp_path / "f.png")
    committed = matplotlib.image.imread(PAGE.parent / "gymnasium-render.png")
    assert fresh.shape == committed.shape
    # same picture up to font rendering of another matplotlib/freetype build
    assert np.mean(np.abs(fresh[..., :3] - committed[..., :3]) > 0.1) < 0.02


def test_the_render_constants_on_the_page_are_the_code_s() -> None:
    from hbo_envs.envs import render

    text = " ".join(PAGE.read_text().split())
    assert f"`hbo_envs.envs.render.BAND_REACH` = {render.BAND_REACH:g}" in text
    assert f"`hbo_envs.envs.render.TRACE_COLUMNS` = {render.TRACE_COLUMNS}" in text
    assert f"SCATTER_MAX_POINTS` = {render.SCATTER_MAX_POINTS:,}".replace(",", " ") in text
    n = render.HEATMAP_BINS
    assert f"{n} × {n} grid" in text
    # the RecordVideo trial's frame rate is the env's
    from hbo_envs.envs.base import GPBanditEnv

    assert (
        f"{GPBanditEnv.metadata['render_fps']} frames per second (the env's `render_fps`)" in text
    )
