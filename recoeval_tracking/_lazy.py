"""A package's public names loaded on first use (standard library only).

A package whose names pull in numba, pandas or scipy keeps ``import`` cheap by naming each public
name's module in a table and loading it on first access (PEP 562's module ``__getattr__``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose module ``m`` (relative to
    ``package``) holds the public names ``modules[m]``.

    ``__getattr__`` imports that module on the first access to ``n`` and keeps the value in the
    package's namespace, so that later accesses do not reach it; a name not in ``table`` raises
    AttributeError. ``__dir__`` lists the package's namespace and every lazy name.
    """
    table = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
