"""Test-session setup: the real data of ``../shared/data`` (beside the checkout, and in CI)
is the data directory of every test process when it exists; real-data tests skip, saying
why, when it does not."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

if SHARED_DATA.is_dir():
    os.environ["HBO_DATA_DIR"] = str(SHARED_DATA)
