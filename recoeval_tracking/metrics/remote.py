"""Runners that evaluate on a cluster, registered by the layer that provides them.

:func:`~recoeval_tracking.metrics.evaluate.evaluate` with ``client=`` hands the evaluation to the
runner registered under ``"dask"``. The engine does not import the Dask layer: the layer above it
(:mod:`recoeval_tracking.distributed`) calls :func:`register_remote_runner` when it is imported.
When no runner of that name is registered yet, :func:`remote_runner` imports the one module that
:data:`PROVIDERS` names for it, which registers it. That table is the only seam from the metrics
up to a backend; a new backend adds a row, or registers itself before ``evaluate`` is called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["PROVIDERS", "REMOTE_RUNNERS", "register_remote_runner", "remote_runner"]

#: The module that registers each remote runner when imported (its ``__init__`` does).
PROVIDERS: dict[str, str] = {"dask": "recoeval_tracking.distributed"}

#: The registered runners by name. A runner is called as
#: ``runner(client, train, test, options, A=..., B=..., item_biases=..., scores=...,
#: scorer=..., ranked=..., user_ids=..., item_features=...)`` and returns the Results.
REMOTE_RUNNERS: dict[str, Callable[..., Any]] = {}


def register_remote_runner(name: str, runner: Callable[..., Any]) -> None:
    """Register ``runner`` under ``name`` (the last registration wins)."""
    REMOTE_RUNNERS[name] = runner


def remote_runner(name: str) -> Callable[..., Any]:
    """The runner registered as ``name``, importing its provider (:data:`PROVIDERS`) first
    when it is not registered yet."""
    if name not in REMOTE_RUNNERS and name in PROVIDERS:
        importlib.import_module(PROVIDERS[name])
    try:
        return REMOTE_RUNNERS[name]
    except KeyError:
        raise LookupError(
            f"no remote runner registered as {name!r} (registered: {sorted(REMOTE_RUNNERS)}); "
            f"import the module that registers it"
        ) from None
