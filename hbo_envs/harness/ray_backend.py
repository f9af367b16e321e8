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

A remote address never hangs: ``host:port`` (or ``ray://host:port``) is first probed with
a TCP connection (:data:`CONNECT_TIMEOUT` seconds), and ``ray.init`` itself must return
within :data:`INIT_TIMEOUT` seconds; otherwise :class:`RayConnectionError` (a
``ConnectionError``) names the address and the fix (the CLI exits with status 2).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

from hbo_envs.harness.cell import CellResult, lost_cell, run_cell
from hbo_envs.harness.specs import CellSpec

__all__ = ["CONNECT_TIMEOUT", "INIT_TIMEOUT", "RayConnectionError", "run_on_ray"]

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a TCP connection to a remote Ray address."""
INIT_TIMEOUT = 120.0
"""Seconds ``ray.init`` may take (starting a local instance takes ~10 s on 2 cores)."""


class RayConnectionError(ConnectionError):
    """The Ray cluster at the given address cannot be reached (or did not answer in time)."""


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Probe ``host:port`` (``ray://host:port``) with a TCP connection, or raise.

    ``"auto"``/``"local"`` and addresses without a port are left to Ray to resolve.
    """
    target = address.split("://", 1)[1] if "://" in address else address
    if address in ("auto", "local") or ":" not in target:
        return
    host, _, port_s = target.rpartition(":")
    try:
        port = int(port_s)
        if not 0 < port < 65536:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"The 'address' parameter must look like 'host:port' or 'ray://host:port' with a "
            f"port in [1, 65535]. Got {address!r} instead."
        ) from None
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=timeout):
            pass
    except OSError as exc:
        raise RayConnectionError(
            f"Cannot reach the Ray cluster at {address!r} ({exc.strerror or exc}; waited at "
            f"most {timeout:g} s). Check --address / $RAY_ADDRESS (start the cluster with "
            "'ray start --head'), or omit it to start a local instance."
        ) from None


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "The 'ray' backend needs Ray: pip install 'hbo-bench[ray]' (or use --backend local)."
        ) from exc
    return ray


def _init_with_timeout(ray: Any, addr: str | None, kwargs: dict[str, Any]) -> None:
    """``ray.init`` in a helper thread, so an unresponsive cluster is an error, not a hang."""
    box: dict[str, BaseException] = {}

    def target() -> None:
        try:
            ray.init(address=addr, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(INIT_TIMEOUT)
    if th.is_alive():
        raise RayConnectionError(
            f"ray.init(address={addr!r}) did not finish within {INIT_TIMEOUT:g} s. Check that "
            "the address is a running Ray cluster (ray status), or omit it to start a local "
            "instance."
        )
    if "error" in box:
        err = box["error"]
        if isinstance(err, ConnectionError | TimeoutError):
            raise RayConnectionError(f"Cannot connect to Ray at {addr!r}: {err}") from err
        raise err


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
        if addr:
            check_address(addr)
        _init_with_timeout(
            ray,
            addr,
            dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True, **extra),
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
