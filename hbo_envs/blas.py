"""One BLAS thread where a second one costs more than it saves.

The harness runs every cell with BLAS limited to one thread (:func:`one_blas_thread`
around the whole cell). A script that calls an agent's ``act``/``update`` itself gets the
BLAS libraries' default of one thread per core, and on the small matrices of a few hundred
arms a threaded call is slower than a single-threaded one: the pool has to be woken and
spins between calls (``python benchmarks/bench_agents.py --threads`` measures both, for
every agent and for the GP engine's re-derivation at sizes up to thousands of arms). So
the engine runs its rare BLAS-3 calls under :func:`small_blas` below a work threshold,
whatever the caller's setting; numbers are the same either way (one thread or several
give the same bits here, tested), only the time differs.

Thread counts are set through ``threadpoolctl`` (a process-wide setting while the
context is open, restored on exit; entering and leaving costs microseconds, so it guards
calls of a fraction of a millisecond and more, never a round's small ones).

>>> with one_blas_thread():
...     pass
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["SMALL_BLAS_WORK", "one_blas_thread", "small_blas"]

#: Multiply-adds below which :func:`small_blas` keeps a call on one thread: at 100 arms a
#: re-derivation (``n^2 |S|`` ~ 10^6) ran several times to tens of times slower on two
#: threads on the project's 2-core machine; threads only began to pay around 3e8
#: (``bench_agents.py --threads`` prints the table on any machine).
SMALL_BLAS_WORK = 3e8

_CONTROLLER: Any = None

#: How many :func:`one_blas_thread` contexts are open in this process: inside one (a
#: harness cell) :func:`small_blas` has nothing to do and costs one global read (asking
#: OpenBLAS for its thread count in the loop cost several microseconds a call here).
_OPEN = 0


def _controller() -> Any:
    """The process's ``threadpoolctl`` controller (built once), or ``None`` without it."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            return None
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Every BLAS/OpenMP pool limited to one thread while the context is open (restored on
    exit; nothing happens without ``threadpoolctl``). The harness runs each cell in one;
    a script that drives agents itself may too (``docs/agents.md``)."""
    global _OPEN
    ctl = _controller()
    with contextlib.nullcontext() if ctl is None else ctl.limit(limits=1):
        _OPEN += 1
        try:
            yield
        finally:
            _OPEN -= 1


def small_blas(work: float) -> Any:
    """:func:`one_blas_thread` around a call of ``work`` multiply-adds below
    :data:`SMALL_BLAS_WORK`; a context that changes nothing for larger work, or inside an
    open :func:`one_blas_thread` (entering a limit costs microseconds, so this guards calls
    of a fraction of a millisecond and more, never a round's small ones)."""
    if _OPEN or work >= SMALL_BLAS_WORK:
        return contextlib.nullcontext()
    return one_blas_thread()
