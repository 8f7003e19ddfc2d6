"""The old paths of the statistics that moved to :mod:`recoeval_tracking.stats`: a module
``__getattr__`` that still gives each moved name, with a :class:`DeprecationWarning` naming its
new path, for one release.

A reporting module whose array statistics moved out lists them in its ``_MOVED`` (name -> new
module) and sets ``__getattr__ = moved_names(__name__, _MOVED)``; its own names stay ordinary
attributes. The package imports the new paths itself (``tests/stats/test_old_paths.py``
checks that no module of it reads an old one), so every warning is about the caller's code.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved_names", "REMOVAL"]

#: When the old paths go: they work, with the warning, for one release.
REMOVAL = "after the next release"


def moved_names(old: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module ``old`` whose names ``moved`` (name -> the module
    it lives in now) left it: each is looked up there, with a :class:`DeprecationWarning` that
    names the new path; any other name is an :class:`AttributeError`, as for a module without
    ``__getattr__``."""

    def __getattr__(name: str) -> Any:
        new = moved.get(name)
        if new is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(new), name)
        warnings.warn(
            f"{old}.{name} has moved to {new}.{name}; import it from {new} "
            f"(the old path is removed {REMOVAL})",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__
