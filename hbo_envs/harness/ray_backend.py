"""The Ray backend: every cell is one Ray task (``pip install 'hbo-bench[ray]'``).

``ray.init(address=...)`` connects to ``address``, else to the cluster in ``RAY_ADDRESS``,
else starts a local instance (if Ray is already initialized in this process it is used as
is). Each task runs :func:`hbo_envs.harness.cell.run_cell` with one CPU and returns the
cell's result to the driver, which writes it (so workers need no shared file system).
Cells are seeded exactly as on the local backend, so the numbers are identical.

``workers`` caps the number of tasks in flight (default: no cap; Ray schedules by CPU).
Third-party agents given as ``module:Class`` must be importable on the workers (installed
there, or on ``PYTHONPATH``; a local instance started here passes the driver's
``PYTHONPATH`` on). The cluster recipe (head, workers, token) is ``docs/cluster.md``.

**Connecting never hangs and fails in one line naming the fix.** A ``host:port`` address
(the form ``ray start --head`` prints; ``auto`` as the address it resolves to) is checked
before ``ray.init``, each step bounded:

1. a TCP connection (:data:`CONNECT_TIMEOUT` s): nothing listens -> wrong address;
2. a GCS client (:data:`PROBE_TIMEOUT` s): something listens but is no Ray head -> wrong
   port; the cluster refuses the driver's token -> a missing or wrong ``RAY_AUTH_TOKEN``;
3. the cluster's Ray and Python versions (stored by the head) against this driver's, by
   Ray's own rule (:func:`check_versions`) -> a version mismatch names both versions.

Token authentication (on by default in recent Ray, e.g. 2.60): a token reaches the driver
as ``RAY_AUTH_TOKEN``, a file named by ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``.
Ray itself uses it for an explicit address only when ``RAY_AUTH_MODE=token`` is set; this
backend also turns token mode on when ``RAY_AUTH_MODE`` is unset and a token is available,
as Ray does for ``address="auto"`` (``RAY_AUTH_MODE=disabled`` is respected).

**Node loss.** A task whose worker or node dies (Ray raises a system error, not the
cell's own exception) is submitted again, at most :data:`MAX_ATTEMPTS` times in all; each
retry is announced on stderr (``hbo-bench: ray: cell ... retrying``), a summary line
lists the retried cells at the end, and the cell's JSON records ``ray_attempts`` and
``ray_retried_after``. A cell is yielded exactly once, so none is lost or duplicated, and
a retried cell gives the same numbers (same seeds).
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hbo_envs.harness.cell import CellResult, lost_cell, run_cell
from hbo_envs.harness.specs import CellSpec
from hbo_envs.validation import seconds_from_env

__all__ = [
    "CONNECT_TIMEOUT",
    "INIT_TIMEOUT",
    "MAX_ATTEMPTS",
    "PROBE_TIMEOUT",
    "RayConnectionError",
    "check_versions",
    "probe_cluster",
    "run_on_ray",
]


CONNECT_TIMEOUT = seconds_from_env("HBO_RAY_CONNECT_TIMEOUT", 10.0)
"""Seconds to wait for a TCP connection to a remote Ray address (``$HBO_RAY_CONNECT_TIMEOUT``
overrides the default 10)."""
PROBE_TIMEOUT = seconds_from_env("HBO_RAY_PROBE_TIMEOUT", 20.0)
"""Seconds the GCS check of a ``host:port`` address may take (Ray's own client waits 40 s
for a port that is not a Ray head; ``$HBO_RAY_PROBE_TIMEOUT`` overrides the default 20)."""
INIT_TIMEOUT = 120.0
"""Seconds ``ray.init`` may take (starting a local instance takes ~10 s on 2 cores)."""
MAX_ATTEMPTS = 3
"""Most times one cell is submitted when its worker or node dies under it."""


class RayConnectionError(ConnectionError):
    """The Ray cluster at the given address cannot be used (unreachable, refuses the token,
    other versions, or did not answer in time)."""


def _split(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port`` / ``ray://host:port``; None for ``auto``/``local``
    and addresses without a port (left to Ray); ``ValueError`` for a bad port."""
    target = address.split("://", 1)[1] if "://" in address else address
    if address in ("auto", "local") or ":" not in target:
        return None
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
    return host.strip("[]"), port


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Probe ``host:port`` (``ray://host:port``) with a TCP connection, or raise.

    ``"auto"``/``"local"`` and addresses without a port are left to Ray to resolve.
    """
    hp = _split(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
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


def _bounded(fn: Callable[[], Any], timeout: float, on_timeout: str) -> Any:
    """``fn()`` in a daemon thread: its result, its exception, or RayConnectionError after
    ``timeout`` seconds (Ray's clients retry for long; a user waits at most ``timeout``)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(timeout)
    if th.is_alive():
        raise RayConnectionError(on_timeout)
    if "error" in box:
        raise box["error"]
    return box.get("value")


def token_available() -> bool:
    """Whether this process has a Ray auth token (``RAY_AUTH_TOKEN``, the file named by
    ``RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token``), whatever ``RAY_AUTH_MODE`` says."""
    try:
        from ray._raylet import AuthenticationTokenLoader
    except ImportError:  # a Ray without token authentication
        return bool(os.environ.get("RAY_AUTH_TOKEN"))
    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()  # the environment may have changed since the last look
    return bool(loader.has_token(ignore_auth_mode=True))


def _enable_token_mode() -> None:
    """Token mode for an explicit address when a token is available and ``RAY_AUTH_MODE``
    is unset (Ray does this only for ``address="auto"``)."""
    if os.environ.get("RAY_AUTH_MODE") is not None:
        return
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def auth_message(address: str, has_token: bool) -> str:
    """The one-line error for a cluster that refused this driver's token (or its lack)."""
    if has_token:
        return (
            f"The Ray cluster at {address!r} refused this driver's authentication token. "
            "Fix: set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) to the head node's token (print "
            "it there with 'ray get-auth-token'); see docs/cluster.md."
        )
    return (
        f"The Ray cluster at {address!r} requires an authentication token and this driver "
        "has none. Fix: export RAY_AUTH_TOKEN=<the head node's token> (print it there with "
        "'ray get-auth-token'), or RAY_AUTH_TOKEN_PATH=<a file holding it>; see "
        "docs/cluster.md."
    )


def check_versions(metadata: Mapping[str, Any], address: str) -> None:
    """Refuse a cluster whose Ray or Python version differs from this driver's.

    ``metadata`` is what the head stores (``ray_version``, ``python_version``); the rule is
    Ray's own (``ray._private.utils.check_version_info``: same Ray, same Python up to
    ``$RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL``, default the patch level), so this check
    refuses exactly what ``ray.init`` would, but in one line naming the fix.
    """
    ray = _ray()
    from ray._private.utils import check_version_info, compute_version_info

    if not metadata or "ray_version" not in metadata:
        return
    try:
        check_version_info(dict(metadata), "this driver", raise_on_mismatch=True)
    except RuntimeError:
        cr, cp = metadata["ray_version"], metadata.get("python_version", "?")
        dr, dp = compute_version_info()
        raise RayConnectionError(
            f"Version mismatch: the Ray cluster at {address!r} runs Ray {cr} on Python {cp}, "
            f"this driver Ray {dr} on Python {dp}. Fix: run hbo-bench from an environment "
            f"with Python {cp} and pip install 'ray=={cr}' (the cluster's versions), or "
            f"restart the cluster with Ray {ray.__version__} on Python {dp}."
        ) from None


def _cluster_metadata(addr: str) -> dict[str, Any]:
    from ray._raylet import GcsClient

    try:
        from ray._common.usage.usage_lib import get_cluster_metadata
    except ImportError:  # Ray < 2.4x
        from ray._private.usage.usage_lib import get_cluster_metadata
    return dict(get_cluster_metadata(GcsClient(address=addr)) or {})


def _resolve_auto() -> str | None:
    """The ``host:port`` of the cluster ``address="auto"`` means ($RAY_ADDRESS, or the
    last cluster started on this machine), or None when there is none."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address("auto")
    except Exception:  # noqa: BLE001 - no cluster, or a Ray without it: ray.init decides
        return None


def probe_cluster(address: str, timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """Check that ``host:port`` is a Ray head that accepts this driver; return its metadata.

    Raises :class:`RayConnectionError` in one line naming the fix: nothing listens (TCP,
    :data:`CONNECT_TIMEOUT`), not a Ray head or no answer within ``timeout`` seconds, token
    missing or refused, Ray/Python version mismatch (:func:`check_versions`). ``auto`` is
    checked as the ``host:port`` Ray resolves it to (a cluster started on this machine);
    ``ray://`` addresses and an ``auto`` that finds no cluster are left to Ray (``{}``).
    """
    if address == "auto":
        resolved = _resolve_auto()
        return probe_cluster(resolved, timeout) if resolved else {}
    hp = _split(address)
    check_address(address)
    if hp is None or "://" in address:
        return {}
    _ray()
    _enable_token_mode()
    addr = f"{hp[0]}:{hp[1]}"
    not_ray = (
        f"{address!r} accepts connections but did not answer as a Ray head (GCS) within "
        f"{timeout:g} s. Fix: pass the address 'ray start --head' printed (port 6379 unless "
        "--port was given), e.g. --address 10.0.0.1:6379."
    )
    try:
        meta = _bounded(lambda: _cluster_metadata(addr), timeout, not_ray)
    except RayConnectionError:
        raise
    except Exception as exc:  # noqa: BLE001 - classified below, by Ray's exception names
        names = {c.__name__ for c in type(exc).__mro__}
        if "AuthenticationError" in names or "InvalidAuthToken" in str(exc):
            raise RayConnectionError(auth_message(address, token_available())) from None
        if "RpcError" in names or "GetTimeoutError" in names:
            raise RayConnectionError(not_ray) from None
        raise
    check_versions(meta, address)
    return meta


def _init_with_timeout(ray: Any, addr: str | None, kwargs: dict[str, Any]) -> None:
    """``ray.init`` in a helper thread, so an unresponsive cluster is an error, not a hang."""
    try:
        _bounded(
            lambda: ray.init(address=addr, **kwargs),
            INIT_TIMEOUT,
            f"ray.init(address={addr!r}) did not finish within {INIT_TIMEOUT:g} s. Check that "
            "the address is a running Ray cluster (ray status), or omit it to start a local "
            "instance.",
        )
    except RayConnectionError:
        raise
    except Exception as err:  # noqa: BLE001 - re-raised, translated where we can name a fix
        names = {c.__name__ for c in type(err).__mro__}
        if "AuthenticationError" in names:
            raise RayConnectionError(auth_message(str(addr), token_available())) from None
        if isinstance(err, ConnectionError | TimeoutError):
            raise RayConnectionError(f"Cannot connect to Ray at {addr!r}: {err}") from err
        raise


def _say(msg: str) -> None:
    print(f"hbo-bench: ray: {msg}", file=sys.stderr, flush=True)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def _lost_to_the_system(ray: Any, exc: BaseException) -> bool:
    """Whether Ray lost the task (its worker or node died), not the cell's own error."""
    rex = ray.exceptions
    if isinstance(exc, rex.RayTaskError | rex.TaskCancelledError):
        return False
    return isinstance(exc, rex.RayError)


def _not_installed(exc: BaseException) -> BaseException | None:
    """The error naming the fix when a worker could not import hbo-bench itself."""
    text = f"{exc}\n{getattr(exc, 'cause', '')}"  # a RayTaskError carries the worker's error
    m = re.search(r"No module named '(hbo_envs|agents)[.']", text)
    if m is None:
        return None
    return ModuleNotFoundError(
        f"A Ray worker cannot import {m.group(1)!r}: hbo-bench is not installed on that "
        "node. Fix: pip install 'hbo-bench[ray]' (the driver's version) in the environment "
        "that runs 'ray start' on every node; see docs/cluster.md."
    )


def _is_loopback(address: str) -> bool:
    """Whether a ``host:port`` (or ``auto``) address names this machine's loopback range."""
    import ipaddress

    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_on_ray(
    cells: list[CellSpec], workers: int | None = None, *, address: str | None = None
) -> Iterator[CellResult]:
    """Yield the results of ``cells`` as their Ray tasks finish (each cell exactly once)."""
    ray = _ray()
    if not ray.is_initialized():
        addr = address or os.environ.get("RAY_ADDRESS") or None
        extra: dict[str, Any] = {}
        if not addr:  # a local instance: workers see the driver's PYTHONPATH
            extra["num_cpus"] = os.cpu_count() or 1
            if os.environ.get("PYTHONPATH"):
                extra["runtime_env"] = {"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}}
        if addr:
            probe_cluster(addr)
            if _is_loopback(addr):
                # Ray would otherwise announce the driver at the machine's own interface
                # address; a loopback cluster's traffic stays on the loopback range.
                extra["_node_ip_address"] = "127.0.0.1"
        _init_with_timeout(
            ray,
            addr,
            dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True, **extra),
        )
    task = ray.remote(num_cpus=1, max_retries=0)(run_cell)
    cap = len(cells) if workers is None else max(1, int(workers))
    queue = iter(cells)
    pending: dict[Any, CellSpec] = {}
    lost: dict[str, list[str]] = {}  # run_name -> why each earlier attempt was lost
    try:
        for c in queue:
            pending[task.remote(c)] = c
            if len(pending) >= cap:
                break
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                spec = pending.pop(ref)
                why = lost.get(spec.run_name, [])
                try:
                    res = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a worker/node died, or the task failed
                    if _lost_to_the_system(ray, exc) and len(why) + 1 < MAX_ATTEMPTS:
                        why = lost.setdefault(spec.run_name, [])
                        why.append(_first_line(exc))
                        _say(
                            f"cell {spec.run_name} was lost ({why[-1]}); retrying it "
                            f"(attempt {len(why) + 1} of {MAX_ATTEMPTS})"
                        )
                        pending[task.remote(spec)] = spec
                        continue
                    res = lost_cell(spec, _not_installed(exc) or exc)
                if why:
                    res.info["ray_attempts"] = len(why) + 1
                    res.info["ray_retried_after"] = list(why)
                yield res
                nxt = next(queue, None)
                if nxt is not None:
                    pending[task.remote(nxt)] = nxt
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if lost:
            _say(
                f"{len(lost)} cell(s) were retried after their worker or node was lost: "
                + ", ".join(sorted(lost))
            )
