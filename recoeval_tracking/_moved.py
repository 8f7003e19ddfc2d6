"""The package's old import paths: a name that moved to another module still reads from its old
module for one release, with a :class:`DeprecationWarning` naming the new path.

An old module sets ``__getattr__ = moved_names(__name__, {name: new module})`` (a module
``__getattr__``, called only for a name the module does not define, so its own names stay
ordinary attributes). The tables live beside what moved: ``reporting/_moved.py`` (the
statistics to :mod:`recoeval_tracking.stats`, the renderers to ``reporting.render``) and the
old modules of ``tracking/`` (``sync``, ``sweep_records``, ``evaluator_data``, the views
``sweeps`` handed out). The package imports the new paths itself (the ``test_*old_paths.py``
tests check it), so every warning is about the caller's code.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["REMOVAL", "moved_names"]

#: When the old paths go: they work, with the warning, for one release.
REMOVAL = "after the next release"


def moved_names(old: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module ``old``, whose names ``moved`` (name -> the
    module that holds it now) left it: each is looked up in its new module, with a
    :class:`DeprecationWarning` that names the new path; any other name is an
    :class:`AttributeError`, as for a module without ``__getattr__``."""

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
