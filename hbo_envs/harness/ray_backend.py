"""The Ray backend: every cell is one Ray task (``pip install 'hbo-bench[ray]'``).

``ray.init(address=...)`` connects to ``address``, else to the cluster in ``RAY_ADDRESS``,
else starts a local instance (if Ray is already initialized in this process it is used as
is). Each task runs :func:`hbo_envs.harness.cell.run_cell` with one CPU and returns the
cell's result to the driver, which writes it (so workers need no shared file system).
Cells are seeded exactly as on the local backend, so the numbers are identical.

``workers`` caps the number of tasks in flight (default: no cap; Ray schedules by CPU).
Third-party agents given as ``module:Class`` must be importable on the workers (installed
there, or on ``PYTHONPATH``; a local instance started here passes the driver's
``PYTHONPATH`` on).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from hbo_envs.harness.cell import CellResult, lost_cell, run_cell
from hbo_envs.harness.specs import CellSpec

__all__ = ["run_on_ray"]


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "The 'ray' backend needs Ray: pip install 'hbo-bench[ray]' (or use --backend local)."
        ) from exc
    return ray


def run_on_ray(
    cells: list[CellSpec], workers: int | None = None, *, address: str | None = None
) -> Iterator[CellResult]:
    """Yield the results of ``cells`` as their Ray tasks finish."""
    ray = _ray()
    if not ray.is_initialized():
        addr = address or os.environ.get("RAY_ADDRESS") or None
        extra: dict[str, Any] = {}
        if not addr:  # a local instance: workers see the driver's PYTHONPATH
            extra["num_cpus"] = os.cpu_count() or 1
            if os.environ.get("PYTHONPATH"):
                extra["runtime_env"] = {"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}}
        ray.init(
            address=addr,
            include_dashboard=False,
            log_to_driver=False,
            ignore_reinit_error=True,
            **extra,
        )
    task = ray.remote(num_cpus=1, max_retries=0)(run_cell)
    cap = len(cells) if workers is None else max(1, int(workers))
    queue = iter(cells)
    pending: dict[Any, CellSpec] = {}
    try:
        for c in queue:
            pending[task.remote(c)] = c
            if len(pending) >= cap:
                break
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                spec = pending.pop(ref)
                try:
                    res = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a worker died, a task was lost
                    res = lost_cell(spec, exc)
                yield res
                nxt = next(queue, None)
                if nxt is not None:
                    pending[task.remote(nxt)] = nxt
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
