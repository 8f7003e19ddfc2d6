"""Distributed evaluation on Dask: :func:`evaluate_on_dask` (``evaluate(..., client=...)``).

The users are cut into contiguous shards holding about the same number of test entries
(:func:`~recoeval_tracking.distributed.shards.shard_bounds`); the item side of the score source
and the item features are sent once into the cluster (the workers fetch copies from peers);
each shard is one task that runs the
local engine of ``options.backend`` (:func:`~recoeval_tracking.distributed.shards.run_shard`;
``"cuda"``: every worker needs a GPU, and factors are given as host arrays), so every metric,
profile and tie policy works as locally and the per-user values are bit-identical to a local
run for any number of workers and shards. Means, intervals and catalogue-level metrics are
merged from the shards' sufficient statistics (:mod:`~recoeval_tracking.distributed.merge`).

Faults: a task whose worker dies is run again by Dask on another worker (its inputs live in the
task; the shared inputs on the workers that fetched them), with the same result; when every
copy of a shared input is lost with its workers, the inputs are sent again and the shards not
yet gathered run again (:func:`~recoeval_tracking.distributed.on_dask.run_shards`). A lost
scheduler raises :class:`DistributedError` naming the address; callers writing a job folder
mark it ``INCOMPLETE`` first, so it is never read as a result.

Users read from storage: :func:`~recoeval_tracking.distributed.storage.evaluate_from_storage`
evaluates a partitioned dataset (:func:`recoeval_tracking.data.write_partitioned`) whose tasks
read their own users' rows and factors on the workers; the client holds only the item side.

This package is the only one that imports ``dask``/``distributed`` (the ``dask`` extra).
"""

from __future__ import annotations

from ..metrics.remote import register_remote_runner
from .on_dask import (
    SHARDS_PER_THREAD,
    DistributedError,
    ShardedResults,
    cluster_client,
    evaluate_on_dask,
    shard_bounds,
)
from .storage import evaluate_from_storage

__all__ = [
    "evaluate_on_dask",
    "evaluate_from_storage",
    "cluster_client",
    "DistributedError",
    "ShardedResults",
    "shard_bounds",
    "SHARDS_PER_THREAD",
]

# evaluate(client=...) finds the runner here: the metrics never import this package
register_remote_runner("dask", evaluate_on_dask)
