"""Refuse an allocation that cannot fit *before* making it, with the estimated size.

Every array whose size grows with the number of arms ``n`` or the horizon ``T`` (a kernel
matrix, the posterior engine's covariance or cross-covariance block) is checked here
first, so an ``n`` or a ``T`` beyond the machine gets a clear error naming the parameter,
the estimated size and the fix, instead of a ``MemoryError`` deep in numpy (or the
machine swapping to a halt).

The limit is :func:`memory_limit_bytes`: 80% of the physical memory, or the number of
bytes in the environment variable ``HBO_MEMORY_LIMIT`` when it is set (a user sharing a
machine, or a test, lowers it).

>>> check_memory("GPPosteriorEngine", "n", 100, 8 * 100 * 100)
>>> format_bytes(3 * 2**30)
'3.2 GB'
"""

from __future__ import annotations

import os

__all__ = ["MemoryLimitError", "check_memory", "format_bytes", "memory_limit_bytes"]

#: Environment variable overriding the memory limit (bytes).
ENV_VAR = "HBO_MEMORY_LIMIT"


class MemoryLimitError(ValueError):
    """An allocation would exceed :func:`memory_limit_bytes` (raised before allocating)."""


def memory_limit_bytes() -> int:
    """Bytes one array may take: ``$HBO_MEMORY_LIMIT`` or 80% of the physical memory."""
    env = os.environ.get(ENV_VAR)
    if env:
        try:
            value = int(float(env))
        except ValueError:
            raise ValueError(
                f"The environment variable {ENV_VAR} must be a number of bytes; got {env!r}."
            ) from None
        if value <= 0:
            raise ValueError(f"{ENV_VAR} must be a positive number of bytes; got {env!r}.")
        return value
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        total = 16 * 10**9
    return int(0.8 * total)


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in decimal units (``'3.2 GB'``)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def check_memory(owner: str, name: str, value: object, nbytes: float, fix: str = "") -> None:
    """Raise :class:`MemoryLimitError` if ``nbytes`` exceeds the limit.

    The message names ``owner``, the parameter ``name`` and its ``value`` that set the
    size, the estimated size and the limit, and ``fix`` (what to do instead).
    """
    limit = memory_limit_bytes()
    if nbytes > limit:
        raise MemoryLimitError(
            f"{owner}: {name}={value!r} needs an estimated {format_bytes(nbytes)}, more than "
            f"the {format_bytes(limit)} this machine allows (80% of its memory, or "
            f"${ENV_VAR}); refused before allocating." + (f" {fix}" if fix else "")
        )
