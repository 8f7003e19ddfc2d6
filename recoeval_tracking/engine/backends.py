"""The seam where an evaluation's engine backend is chosen.

A backend is a module with the driver's three entry points: ``thread_limits(nthreads)`` (a
context manager), ``run_scores(inp, block, dtype, rows, reason, ...)`` and
``run_ranked(inp, lists, rows)``, returning the same per-user outputs as the CPU driver
(:mod:`recoeval_tracking.engine.driver`), and optionally ``unavailable_reason()`` (None, or why
it cannot run on this machine and what to install). A new backend is one module and one entry
below; ``EvalOptions.backend`` names it.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

__all__ = ["BACKENDS", "get_backend", "unavailable"]

#: Backend name -> its module, relative to this package.
BACKENDS: dict[str, str] = {
    "cpu": ".driver",
    "cuda": ".cuda_driver",
}

_UNAVAILABLE: dict[str, str | None] = {}


def get_backend(name: str) -> ModuleType:
    """The backend module registered as ``name`` (a ``KeyError`` names the known ones)."""
    if name not in BACKENDS:
        raise KeyError(f"unknown engine backend {name!r}; known: {sorted(BACKENDS)}")
    return import_module(BACKENDS[name], __package__)


def unavailable(name: str) -> str | None:
    """None when backend ``name`` can run on this machine, else why not and what to install.

    Asked once per process and backend (probing a GPU driver takes a moment)."""
    if name not in _UNAVAILABLE:
        probe = getattr(get_backend(name), "unavailable_reason", None)
        _UNAVAILABLE[name] = probe() if probe is not None else None
    return _UNAVAILABLE[name]
