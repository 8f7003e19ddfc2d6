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

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:  # the names as static tools see them; at run time they load on first use
    from ._evaluate import USERS_PER_SHARD, SparkResults, evaluate_spark
    from ._inputs import local_workers_python, relevance_options

#: Each module and the public names it holds, read on first use.
_MODULES = {
    "._evaluate": ("evaluate_spark", "SparkResults", "USERS_PER_SHARD"),
    "._inputs": ("relevance_options", "local_workers_python"),
}
__all__ = [name for names in _MODULES.values() for name in names]

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
