"""Test-session setup.

- The real data of ``../shared/data`` (beside the checkout, and in CI) is the data
  directory of every test process when it exists; real-data tests skip, saying why, when
  it does not (a fresh clone passes the README's test command without it).
- **CI guard**: with ``CI=true`` (``.ci/run`` sets it, and CI has the data beside the
  clone) a test that *skips because real data is missing* fails instead, so the real-data
  tests cannot silently stop running there. A skip counts as "real data missing" when its
  reason matches :data:`DATA_SKIP` (the data sets' names, ``HBO_DATA_DIR``,
  ``../shared/data``, "real data", "data set"): say so in the reason of such a skip.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="session")
def rendered_leaderboards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed ``leaderboards/`` (without ``_screenshots``) that
    ``render_all`` has re-rendered: every suite this machine can render, and the index.

    Rendering the committed site takes 20-35 s (bootstrap CIs, figures), and several
    tests compare against it, so it is rendered once per test process. Read-only: a test
    that edits the site copies this folder first. Tests that use it carry
    ``pytest.mark.xdist_group("rendered_leaderboards")`` (``--dist loadgroup`` in
    pyproject.toml), so one xdist worker renders it for all of them.
    """
    import shutil

    from hbo_envs.leaderboard.render import render_all

    boards = Path(__file__).resolve().parents[1] / "leaderboards"
    root = tmp_path_factory.mktemp("rendered") / "leaderboards"
    shutil.copytree(boards, root, ignore=shutil.ignore_patterns("_screenshots"))
    render_all(root)
    return root


@pytest.fixture(scope="session")
def archive_results() -> dict[str, dict[str, Any]]:
    """``publish.all_results()``: every experiment's records, verdicts and exponent fits from
    the committed ``results/archive``, computed once per test process (7-8 s of claim
    evaluation and bootstrap fits; the README check and the floor test each computed it).
    Read-only. Tests that use it carry ``pytest.mark.xdist_group("archive_results")``."""
    from hbo_envs.judging.publish import all_results

    return all_results()


#: Test files whose single tests take seconds each (whole reproductions, fresh interpreters
#: with process pools, long rollouts), slowest first. ``--dist loadgroup`` hands out the
#: xdist groups first (most tests first), then every other test in collection order, so a
#: slow file collected last (``test_user_code.py``: two tests of 6-15 s) kept one worker busy
#: alone for 15-20 s after the other had run out of work. Collected first, these tests
#: interleave with the groups and both workers end on tests of milliseconds.
SLOW_FIRST = (
    "test_reproduce_smoke.py",
    "test_user_code.py",
    "test_cli.py",
    "test_agents_regret.py",
    "test_gymnasium_docs.py",
    "test_coordinates.py",
    "test_agents.py",
    "test_faults.py",
    "test_leaderboard.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the tests of :data:`SLOW_FIRST` to the front (each file's tests stay together
    and in order; every other file keeps its place). The order is the same on every xdist
    worker, as xdist requires."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.name, len(SLOW_FIRST)))


#: Skip reasons that mean "the real data is missing" (case-insensitive).
DATA_SKIP = re.compile(
    r"shared/data|HBO_DATA_DIR|real[- ]data|data set|stocks29|lightsensor|stockpicking|"
    r"DataNotFoundError|hbo-bench data fetch",
    re.IGNORECASE,
)


def in_ci() -> bool:
    """``CI`` is set to a true value (``true``, ``1``, ``yes``), as CI services and
    ``.ci/run`` do."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _skip_reason(report: Any) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2])
    return str(lr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        if DATA_SKIP.search(reason):
            report.outcome = "failed"
            report.longrepr = (
                f"CI=true: this test skipped because real data is missing ({reason}); in CI "
                "the data is beside the clone (../shared/data) and every real-data test must "
                "run and pass. Fix the CI data setup (or HBO_DATA_DIR)."
            )
