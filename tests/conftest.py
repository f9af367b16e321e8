"""Test-session setup: the real data of ``../shared/data`` (beside the checkout, and in CI)
is the data directory of every test process when it exists; real-data tests skip, saying
why, when it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

if SHARED_DATA.is_dir():
    os.environ["HBO_DATA_DIR"] = str(SHARED_DATA)


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """Tests run with one BLAS thread, as the harness runs its cells: on the suite's small
    problems a second OpenBLAS thread makes the GP engine's rank-one updates and solves
    several times slower (2.6x on a 2000-round GP-UCB rollout, more on a loaded machine)
    and changes no number."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield
