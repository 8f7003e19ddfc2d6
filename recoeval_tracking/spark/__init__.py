"""Evaluation inside a Spark session, on Spark DataFrames: :func:`evaluate_spark`.

The executors run the local numba engine on shards of users, fed Arrow batches
(``mapInArrow``); the item side is broadcast once; the driver merges the shards' sufficient
statistics into the same means, intervals, curves, definitions and fingerprint as a local run
(:mod:`recoeval_tracking.spark._evaluate` has the details).

This package is the only one that imports ``pyspark`` (the ``spark`` extra), lazily. Its names
are loaded on first use, so that a Python worker that unpickles a task's function imports only
the light shard module (:mod:`recoeval_tracking.spark._shard`), not the driver's code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as static tools see them; at run time they load on first use
    from ._evaluate import USERS_PER_SHARD, SparkResults, evaluate_spark
    from ._inputs import local_workers_python, relevance_options

#: The public names and the module of each, read on first use.
_WHERE = {
    "evaluate_spark": "._evaluate",
    "SparkResults": "._evaluate",
    "USERS_PER_SHARD": "._evaluate",
    "relevance_options": "._inputs",
    "local_workers_python": "._inputs",
}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
