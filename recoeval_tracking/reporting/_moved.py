"""The old paths of the statistics that moved to :mod:`recoeval_tracking.stats`: a module
``__getattr__`` that still gives each moved name, with a :class:`DeprecationWarning` naming its
new path, for one release.

A reporting module whose array statistics moved out lists them in its ``_MOVED`` (name -> new
module) and sets ``__getattr__ = moved_names(__name__, _MOVED)``; its own names stay ordinary
attributes. The package imports the new paths itself, except the modules of
:data:`STILL_ON_OLD_PATHS`, which read a few moved names from the old ones until they are next
edited: they get them without a warning (a user cannot act on a warning about the package's own
imports). ``tests/stats/test_old_paths.py`` holds that set to the modules that still do.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved_names", "STILL_ON_OLD_PATHS", "REMOVAL"]

#: When the old paths go: they work, with the warning, for one release.
REMOVAL = "after the next release"

#: Modules of the package that still read moved names from their old paths (they switch to
#: ``recoeval_tracking.stats`` when next edited, and leave this set).
STILL_ON_OLD_PATHS = frozenset(
    {
        "recoeval_tracking.app.report",
        "recoeval_tracking.reporting.report",
        "recoeval_tracking.reporting.sections",
    }
)


def moved_names(old: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module ``old`` whose names ``moved`` (name -> the module
    it lives in now) left it: each is looked up there, with a :class:`DeprecationWarning` that
    names the new path (none for the modules of :data:`STILL_ON_OLD_PATHS`); any other name is
    an :class:`AttributeError`, as for a module without ``__getattr__``."""

    def __getattr__(name: str) -> Any:
        new = moved.get(name)
        if new is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(new), name)
        if _caller() not in STILL_ON_OLD_PATHS:
            warnings.warn(
                f"{old}.{name} has moved to {new}.{name}; import it from {new} "
                f"(the old path is removed {REMOVAL})",
                DeprecationWarning,
                stacklevel=2,
            )
        return value

    return __getattr__


def _caller() -> str:
    """The module that asked the ``__getattr__`` calling this for a name: the first frame out
    of it that is not the import machinery (``from package import name`` goes through
    ``importlib._bootstrap``)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("importlib"):
        frame = frame.f_back
    return str(frame.f_globals.get("__name__", ""))
