"""Lazy package exports (PEP 562): ``from package import name`` imports the submodule that
defines ``name`` on first use, so importing the package itself stays cheap.

>>> import types
>>> mod = types.ModuleType("demo")
>>> mod.__getattr__, mod.__dir__ = lazy_exports("demo", {"dumps": "json"})
>>> mod.__getattr__("dumps")([1])
'[1]'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: name ``n`` comes from module
    ``where[n]`` (absolute), imported when ``n`` is first looked up."""

    def __getattr__(name: str) -> Any:
        try:
            module = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
