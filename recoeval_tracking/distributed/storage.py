"""Distributed evaluation with the users read by the workers from storage:
:func:`evaluate_from_storage`.

The client opens the partitioned dataset (:func:`recoeval_tracking.data.open_partitioned`: its
manifest and its item side), reads the item factors and the header of the users' factor file,
and cuts shards out of whole parts, balanced by the parts' test entries (the manifest's counts).
A task holds references only: the dataset handle (scattered once with the item side) and the
range of parts and user rows it evaluates. On its worker it reads its parts' rows
(:meth:`~recoeval_tracking.data.PartitionedDataset.read_parts`) and its rows of the users'
factors (:class:`~recoeval_tracking.data.FactorRows`, one ranged read), then runs the same
:func:`~recoeval_tracking.distributed.shards.run_shard` as the in-memory path, with the same
global row offset: the per-user values are bit-identical to a local run of the same split.

The client never holds anything user-sized unless asked: with ``per_user_dir`` the per-user
table is written by the workers as Parquet parts, and only the sufficient statistics come back.
A task lost with its worker is run again elsewhere: its inputs are on storage.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import param_error
from ..data._partitioned import FactorRows, PartitionedDataset, open_partitioned, read_whole
from ..metrics.evaluate import plan, plan_for_source
from ..metrics.inputs import Prepared, score_source, with_data_relevance
from ..options import EvalOptions
from .merge import ShardedResults, merge_shards
from .shards import ShardInput, ShardOutput, run_shard, shard_bounds, split_source

__all__ = ["evaluate_from_storage", "StoredShard", "run_stored_shard"]


@dataclass(frozen=True)
class StoredShard:
    """What one task of :func:`evaluate_from_storage` is given: shard ``index`` is parts
    ``[first, last)`` of the dataset, user rows ``[lo, hi)``, and where its users' factors are
    (None when the shared score source scores any user)."""

    index: int
    first: int
    last: int
    lo: int
    hi: int
    user_factors: FactorRows | None


def run_stored_shard(
    shard: StoredShard, options: EvalOptions, shared: dict[str, Any], per_user_dir: str | None
) -> ShardOutput:
    """Read the shard's rows and factors from storage and evaluate them (on a worker)."""
    ds: PartitionedDataset = shared["dataset"]
    train, test, user_ids = ds.read_parts(shard.first, shard.last)
    part = None if shard.user_factors is None else shard.user_factors.read(shard.lo, shard.hi)
    return run_shard(
        ShardInput(shard.index, shard.lo, shard.hi, train, test, user_ids, part),
        options,
        shared,
        per_user_dir,
    )


def _item_array(value: Any, name: str, func: str, storage_options: dict[str, Any] | None) -> Any:
    """An item-side array given as an array or as a ``.npy`` or ``.parquet`` path or URL (read
    whole by :func:`~recoeval_tracking.data._partitioned.read_whole`)."""
    if value is None or not isinstance(value, (str, os.PathLike)):
        return value
    return read_whole(value, name=name, func=func, storage_options=storage_options)


def evaluate_from_storage(
    client: Any,
    dataset: str | os.PathLike | PartitionedDataset,
    options: EvalOptions,
    *,
    user_factors: str | os.PathLike | None = None,
    item_factors: Any = None,
    item_biases: Any = None,
    scorer: Any = None,
    item_features: Any = None,
    shards: int | None = None,
    per_user_dir: str | Path | None = None,
    storage_options: dict[str, Any] | None = None,
    timeout: float = 30.0,
    func: str = "evaluate_from_storage",
) -> ShardedResults:
    """Evaluate a partitioned dataset on a Dask cluster, each worker reading its own users.

    Parameters
    ----------
    client : dask.distributed.Client or str
        A client, or the address of a running scheduler.
    dataset : str, os.PathLike or PartitionedDataset
        The dataset's folder or URL (:func:`recoeval_tracking.data.write_partitioned`'s
        layout), or the dataset opened.
    options : EvalOptions
        The evaluation options (resolved as by :func:`recoeval_tracking.evaluate`): a
        ``relevance_level`` or ``gains`` left None takes the dataset's relevance rule (its
        manifest's, :attr:`~recoeval_tracking.data.PartitionedDataset.relevance`).
    user_factors : str or os.PathLike, optional
        A ``.npy`` matrix (n_users x p) whose rows are the dataset's users in its row order;
        each task reads its rows by byte range. With ``item_factors``.
    item_factors, item_biases : array or str, optional
        The item side (n_items x p, n_items), as arrays or ``.npy`` paths or URLs (read by the
        client and sent once to every worker). ``item_biases`` alone scores by the biases.
    scorer : callable, optional
        ``scorer(user_rows) -> (len, n_items)`` scores (shipped to the workers), instead of
        factors.
    item_features : optional
        As for :func:`recoeval_tracking.evaluate` (the diversity metrics).
    shards : int, optional
        Number of shards (default: one per part, so a worker holds one part's users at a
        time); a shard is one or more whole parts, so there are at most as many shards as
        parts.
    per_user_dir : str or Path, optional
        Let the workers write the per-user table there as Parquet parts (a folder every worker
        can write); without it the per-user table comes back to the client.
    storage_options : dict, optional
        fsspec options of the dataset's and the factors' file system (by default fsspec takes
        credentials from the environment; they are never logged or written).
    timeout : float
        Seconds to wait for a scheduler given by address.

    Returns
    -------
    ShardedResults
        Per-user values bit-identical to :func:`recoeval_tracking.evaluate` of the same split
        and factors held in memory.

    Raises
    ------
    InputError
        A bad argument, a dataset whose manifest or item file is missing or unreadable, or a
        part file that is missing or corrupt (the message names the file).
    DistributedError
        The scheduler could not be reached or was lost.
    """
    from .on_dask import (
        _check_mergeable,
        _checked_options,
        _client_for,
        run_shards,
        submit_shard,
    )

    t0 = time.perf_counter()
    opts = _checked_options(options, shards, func)
    ds = (
        dataset
        if isinstance(dataset, PartitionedDataset)
        else open_partitioned(dataset, storage_options=storage_options)
    )
    opts = with_data_relevance(opts, None, ds)  # the manifest's rule, unless the options say
    n = ds.n_items
    B = _item_array(item_factors, "item_factors", func, storage_options)
    biases = _item_array(item_biases, "item_biases", func, storage_options)
    rows = None
    A = None
    if user_factors is not None:
        if B is None:
            raise param_error(
                "item_factors",
                func,
                "the item factors (an array, a .npy or a "
                ".parquet file) when 'user_factors' is given",
                None,
            )
        rows = FactorRows.open(user_factors, func=func, storage_options=storage_options)
        if rows.shape[0] != ds.n_users:
            raise param_error(
                "user_factors",
                func,
                f"one row per user of the dataset ({ds.n_users}, in its row order)",
                f"{rows.url!r} with shape {rows.shape}",
                got_is_text=True,
            )
        A = np.zeros((0, rows.shape[1]), dtype=np.dtype(rows.dtype))
    elif B is not None:
        raise param_error(
            "user_factors",
            func,
            "the users' factor file (.npy or .parquet) when 'item_factors' is given",
            None,
        )
    empty = Prepared(
        None, sp.csr_array((0, n), dtype=np.float64), n, np.zeros(0, dtype=np.int64), ds.item_ids
    )
    source = score_source(empty, A, B, biases, None, scorer, None, func, opts.backend)
    p = plan_for_source(plan(opts, empty, func), source, func)
    _check_mergeable(p, func)
    shared_source, _ = split_source(source)  # the user side: the factor file's rows
    ds.check_files()
    folder = None if per_user_dir is None else Path(per_user_dir)
    with _client_for(client, func, timeout) as c:
        tests = np.array([part.test for part in ds.parts], dtype=np.int64)
        bounds = np.arange(len(ds.parts) + 1) if shards is None else shard_bounds(tests, shards)

        def submit(shared: dict[str, Any], token: str, j: int) -> Any:
            first, last = int(bounds[j]), int(bounds[j + 1])
            lo = ds.parts[first].lo
            hi = ds.parts[last - 1].lo + ds.parts[last - 1].users
            task = StoredShard(j, first, last, lo, hi, rows)
            return submit_shard(c, run_stored_shard, task, opts, shared, folder, token, j)

        items = {
            "source": shared_source,
            "item_features": item_features,
            "popularity": ds.popularity,
            "dataset": ds,
        }
        outs = run_shards(c, items, len(bounds) - 1, submit)
    return merge_shards(outs, p, n, time.perf_counter() - t0, folder)
