"""Lazy package exports (PEP 562): ``from package import name`` imports the submodule that
defines ``name`` on first use, so importing the package itself stays cheap.

>>> import types
>>> mod = types.ModuleType("demo")
>>> mod.__getattr__, mod.__dir__ = lazy_exports("demo", {"dumps": "json"})
>>> mod.__getattr__("dumps")([1])
'[1]'

A name that is also a submodule of the package cannot be exported lazily: once that
submodule is imported, the import system sets the package attribute to the module, and
``from package import name`` would return the module from then on (``hbo_envs.leaderboard``
exports a function ``verify`` from its submodule ``verify``, so it stays eager). Such a name
is refused:

>>> import hbo_envs.data
>>> lazy_exports("hbo_envs.data", {"paths": "hbo_envs.data.paths"})
Traceback (most recent call last):
...
ValueError: lazy_exports: 'paths' is also a submodule of 'hbo_envs.data'; export it eagerly.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: name ``n`` comes from module
    ``where[n]`` (absolute), imported when ``n`` is first looked up. Raises
    :class:`ValueError` for a name that is also a submodule of ``package`` (see above)."""
    path = getattr(sys.modules.get(package), "__path__", None)  # a package's folders
    for name in where if path is not None else ():
        if importlib.machinery.PathFinder.find_spec(name, path) is not None:
            raise ValueError(
                f"lazy_exports: {name!r} is also a submodule of {package!r}; export it eagerly."
            )

    def __getattr__(name: str) -> Any:
        try:
            module = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
