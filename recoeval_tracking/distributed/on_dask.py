"""Evaluate on a Dask cluster: the users cut into shards, the item side sent once, one task per
shard, the shards' sufficient statistics merged (:func:`evaluate_on_dask`); the cluster's
helpers (:func:`cluster_client`, :func:`run_shards` and its :class:`DistributedError`) that
:mod:`.storage` shares."""

from __future__ import annotations

import contextlib
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, param_error
from ..metrics.beyond import train_popularity
from ..metrics.device_inputs import any_on_device
from ..metrics.evaluate import plan, plan_for_source
from ..metrics.inputs import prepare, score_source
from ..metrics.profile_inputs import for_profile, refuse_repeats
from ..metrics.profiles import apply_profile
from ..metrics.protocol import missing_lists, split_judgements
from ..options import EvalOptions
from ..scores import RankedLists
from .merge import ShardedResults, merge_shards
from .shards import ShardInput, run_shard, shard_bounds, split_source

__all__ = [
    "evaluate_on_dask",
    "cluster_client",
    "DistributedError",
    "ShardedResults",
    "shard_bounds",
    "SHARDS_PER_THREAD",
]

#: Shards per worker thread by default: a few, so a slow or lost worker delays little.
SHARDS_PER_THREAD = 2


class DistributedError(RuntimeError):
    """The Dask cluster failed the evaluation (the scheduler was lost or could not be
    reached); the message names the address and what to do."""


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise InputError(
            "evaluate(client=...) needs Dask: pip install "
            "'recoeval_tracking[dask]' (dask[distributed])."
        ) from None
    return distributed


@contextlib.contextmanager
def _client_for(client: Any, func: str, timeout: float) -> Iterator[Any]:
    distributed = _dask()
    if isinstance(client, distributed.Client):
        yield client
        return
    if not isinstance(client, str) or not client:
        raise param_error(
            "client",
            func,
            "a dask.distributed.Client or a scheduler address such as 'tcp://10.0.0.5:8786'",
            client,
        )
    try:
        own = distributed.Client(client, timeout=timeout)
    except (OSError, TimeoutError) as err:
        raise DistributedError(
            f"could not reach the Dask scheduler at {client} within "
            f"{timeout:g} s ({type(err).__name__}: {err}). Start it "
            "(dask scheduler) or fix the address."
        ) from None
    try:
        yield own
    finally:
        own.close()


#: How long a ``LocalCluster`` of :func:`cluster_client` waits for a lost worker to come back
#: before it drops it for good (``distributed.deploy.lost-worker-timeout``; the test cluster of
#: ``tests/distributed_eval`` uses the same). Distributed's default, 15 s, dropped a worker
#: killed twice within 15 s (an out-of-memory kill, then another), or whose restart took 15 s on
#: a busy machine: the evaluation went on with one worker, or with none and waited for ever.
#: Each worker's nanny restarts it; the cluster, closed with the client, must keep it.
LOST_WORKER_TIMEOUT = "1h"


@contextlib.contextmanager
def cluster_client(
    address: str | None = None,
    *,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    timeout: float = 30.0,
) -> Iterator[Any]:
    """A Dask client for ``address`` (a running scheduler, which keeps its own settings), or
    for a new ``LocalCluster(n_workers, threads_per_worker, processes=True)`` when ``address``
    is None, which keeps a worker its nanny restarts (:data:`LOST_WORKER_TIMEOUT`); the cluster
    and client are closed on exit."""
    distributed = _dask()
    if address is not None:
        with _client_for(str(address), "cluster_client", timeout) as client:
            yield client
        return
    import dask

    with (
        dask.config.set({"distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT}),
        distributed.LocalCluster(
            n_workers=int(n_workers),
            processes=True,
            threads_per_worker=int(threads_per_worker),
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _address(client: Any) -> str:
    try:
        return str(client.scheduler.address)
    except Exception:  # noqa: BLE001 - a closed client has no scheduler
        return "<unknown>"


def _scheduler_lost(client: Any, err: BaseException) -> DistributedError:
    return DistributedError(
        f"the Dask scheduler at {_address(client)} was lost during the evaluation "
        f"({type(err).__name__}: {str(err)[:200]}). No result was kept; a job folder being "
        "written stays marked INCOMPLETE. Restart the scheduler and run again."
    )


#: Times a shard's task is run again after it raised (Dask's ``retries``), e.g. a storage
#: read that failed once; a task whose worker died is rescheduled by Dask itself.
TASK_RETRIES = 2
#: Attempts at sending the shared inputs to the workers (a worker lost meanwhile fails one).
SCATTER_TRIES = 3
#: Runs of the shards not yet gathered when every copy of a shared input was lost with its
#: workers (the inputs are sent again for each run).
SHARED_TRIES = 3
#: Why Dask cancels every future of a client that lost its scheduler.
_SCHEDULER_GONE = "scheduler-connection-lost"


def _scatter(client: Any, items: dict[str, Any], token: str) -> dict[str, Any]:
    """Send each of ``items`` once into the cluster, keyed ``recoeval-shared-<token>-<name>``;
    the workers that run a shard fetch a copy from a peer, as for any task's input.

    Not ``broadcast=True``: the scheduler's replication behind it loops for ever when a worker
    dies while it copies (dask/distributed#5704: a run with a worker killed in its first
    second never ended). A worker that dies while the data is sent (the connection closes
    under the scheduler) fails the attempt: once the scheduler has dropped it, the data is sent
    again to the workers left. After :data:`SCATTER_TRIES` attempts, a
    :class:`DistributedError` in one paragraph."""
    from distributed.comm.core import CommClosedError

    data = {f"recoeval-shared-{token}-{name}": value for name, value in items.items()}
    for attempt in range(1, SCATTER_TRIES + 1):
        try:
            futures = client.scatter(data, hash=False)
            return {name: futures[key] for name, key in zip(items, data)}
        except (CommClosedError, OSError, TimeoutError, KeyError) as err:
            # KeyError: the scheduler was told of data on a worker it had just removed
            if attempt == SCATTER_TRIES:
                raise DistributedError(
                    f"a Dask worker was lost while the evaluation's shared data was sent to "
                    f"the workers of {_address(client)}, {SCATTER_TRIES} times "
                    f"({type(err).__name__}: {str(err)[:200]}). No result was kept; a job "
                    "folder being written stays marked INCOMPLETE. Check the workers (memory "
                    "limits, restarts) and run again."
                ) from None
            time.sleep(0.5 * attempt)  # the scheduler drops the dead worker meanwhile
    raise AssertionError("unreachable")  # pragma: no cover


def _check_cancelled(client: Any, err: CancelledError) -> None:
    """A shard's task cancelled by a lost scheduler raises; otherwise a shared input of the
    task was lost with every worker holding it, and the shard can run again."""
    if getattr(err, "reason", None) == _SCHEDULER_GONE or client.status != "running":
        raise _scheduler_lost(client, err) from None


def _collect(client: Any, futures: dict[Any, int], outs: dict[int, Any]) -> int:
    """Put each shard's output in ``outs`` once every task has ended; the number of shards
    cancelled because a shared input was lost with every worker holding it (they can run
    again). A task's own error is raised as it is; a lost scheduler becomes a
    :class:`DistributedError`. The outputs are fetched after the last task ends, so a
    scheduler lost meanwhile is seen from the cancelled futures, not waited for."""
    from distributed import as_completed
    from distributed.comm.core import CommClosedError

    lost, done = 0, []
    try:
        # the client's own event loop: as_completed takes the default client's, and with two
        # clients in one process (a LocalCluster's and one for an address) the cancellation
        # of a lost scheduler never reached a loop that was not its client's
        for fut in as_completed(list(futures), loop=client.loop):
            if fut.status == "finished":
                done.append(fut)
                continue
            try:
                fut.result()  # raises the task's error, or why it was cancelled
            except CancelledError as err:
                _check_cancelled(client, err)
                lost += 1
        try:
            values = client.gather(done)
        except CancelledError:  # a result lost with its worker, and its inputs with it
            values = []
            for fut in done:
                try:
                    values.append(fut.result())
                except CancelledError as err:
                    _check_cancelled(client, err)
                    lost += 1
                    values.append(None)
        for fut, value in zip(done, values):
            if value is not None:
                outs[futures[fut]] = value
    except (CancelledError, CommClosedError, OSError, TimeoutError) as err:
        raise _scheduler_lost(client, err) from None
    finally:
        with contextlib.suppress(Exception):
            client.cancel([f for f in futures if not f.done()])
    return lost


def run_shards(
    client: Any,
    items: dict[str, Any],
    n_shards: int,
    submit: Callable[[dict[str, Any], str, int], Any],
) -> list[Any]:
    """The outputs of shards ``0..n_shards-1``, in order: ``items`` (the shared inputs) sent
    into the cluster, then ``submit(shared, token, j)`` (the future of shard ``j``, given the
    shared futures) for every shard. A worker that dies costs its shards, which Dask runs
    again elsewhere; when every copy of a shared input was lost with its workers, the inputs
    are sent again and the shards not yet gathered run again, up to :data:`SHARED_TRIES`
    times, then a :class:`DistributedError` in one paragraph."""
    outs: dict[int, Any] = {}
    for _ in range(SHARED_TRIES):
        token = uuid.uuid4().hex[:8]
        shared = _scatter(client, items, token)
        futures = {submit(shared, token, j): j for j in range(n_shards) if j not in outs}
        lost = _collect(client, futures, outs)
        with contextlib.suppress(Exception):
            client.cancel(list(shared.values()))  # the inputs are no longer needed
        if not lost:
            return [outs[j] for j in range(n_shards)]
    raise DistributedError(
        f"the evaluation's shared data (the item side) was lost with the Dask workers holding "
        f"it {SHARED_TRIES} times on {_address(client)} ({n_shards - len(outs)} of {n_shards} "
        "shards not evaluated). No result was kept; a job folder being written stays marked "
        "INCOMPLETE. Check the workers (memory limits, restarts) and run again."
    )


def _n_threads(client: Any) -> int:
    try:
        workers = client.scheduler_info()["workers"].values()
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers))
    except Exception:  # noqa: BLE001 - fall back to one shard per task of a small cluster
        return 1


def _checked_options(options: EvalOptions, shards: Any, func: str) -> EvalOptions:
    """The options checked with their profile applied, and ``shards`` checked (int >= 1 or
    None): the boundary of every distributed entry point."""
    opts = apply_profile(options.checked(func), func)
    if shards is not None and (
        isinstance(shards, bool) or not isinstance(shards, int) or shards < 1
    ):
        raise param_error("shards", func, "an int >= 1 or None", shards)
    return opts


def evaluate_on_dask(
    client: Any,
    train: Any,
    test: Any,
    options: EvalOptions,
    *,
    A: Any = None,
    B: Any = None,
    item_biases: Any = None,
    scores: Any = None,
    scorer: Any = None,
    ranked: Any = None,
    user_ids: Any = None,
    item_features: Any = None,
    shards: int | None = None,
    per_user_dir: str | Path | None = None,
    timeout: float = 30.0,
    func: str = "evaluate",
) -> ShardedResults:
    """Evaluate on a Dask cluster: the same values as :func:`recoeval_tracking.evaluate`.

    Parameters
    ----------
    client : dask.distributed.Client or str
        A client, or the address of a running scheduler (``tcp://host:8786``).
    train, test, options, A, B, item_biases, scores, scorer, ranked, user_ids, item_features
        As for :func:`recoeval_tracking.evaluate` (``options`` resolved). A ``scorer`` (any
        Python callable) is shipped to the workers with cloudpickle.
    shards : int, optional
        Number of shards (default: :data:`SHARDS_PER_THREAD` per worker thread).
    per_user_dir : str or Path, optional
        Let the workers write the per-user table there as Parquet parts (one per shard,
        ``part-000000.parquet``...) instead of sending it back; it must be a folder every
        worker can write (a shared file system).
    timeout : float
        Seconds to wait for a scheduler given by address.

    Returns
    -------
    ShardedResults

    Raises
    ------
    DistributedError
        The scheduler could not be reached or was lost.
    """
    t0 = time.perf_counter()
    opts = _checked_options(options, shards, func)
    prep = prepare(train, test, user_ids, func)
    if any_on_device(A, B, item_biases):
        name = next(
            k for k, v in (("A", A), ("B", B), ("item_biases", item_biases)) if any_on_device(v)
        )
        raise param_error(
            name,
            func,
            "a host (numpy) array when a Dask client is given (each "
            "worker copies its shard's factors to its own GPU with "
            "backend='cuda')",
            "an array on the GPU",
            got_is_text=True,
        )
    # the profile's rules on the whole run, before its users are cut into shards (a shard's
    # lists are then read as they are): the refusals raised here, not in a task
    refuse_repeats(ranked, opts, func)
    source = score_source(prep, A, B, item_biases, scores, scorer, ranked, func, opts.backend)
    prep, source = for_profile(prep, source, opts, func)
    if isinstance(source, RankedLists):  # users without a list, counted over every shard
        missing_lists(
            source, replace(prep, test=split_judgements(prep.test, opts.relevance_level)[0]), opts
        )
    p = plan_for_source(plan(opts, prep, func), source, func)
    _check_mergeable(p, func)
    m, n = prep.test.shape
    popularity = train_popularity(
        prep.train if prep.train is not None else sp.csr_array((m, n), dtype=np.float64)
    )
    folder = None if per_user_dir is None else Path(per_user_dir)
    with _client_for(client, func, timeout) as c:
        bounds = shard_bounds(
            np.diff(prep.test.indptr), shards or SHARDS_PER_THREAD * _n_threads(c)
        )
        shared_source, slicer = split_source(source)

        def submit(shared: dict[str, Any], token: str, j: int) -> Any:
            lo, hi = int(bounds[j]), int(bounds[j + 1])
            part = ShardInput(
                j,
                lo,
                hi,
                None if prep.train is None else prep.train[lo:hi],
                prep.test[lo:hi],
                prep.user_ids[lo:hi],
                slicer(lo, hi),
            )
            with warnings.catch_warnings():  # the user side travels in the task on purpose
                warnings.filterwarnings("ignore", message="Sending large graph")
                return submit_shard(c, run_shard, part, opts, shared, folder, token, j)

        items = {"source": shared_source, "item_features": item_features, "popularity": popularity}
        outs = run_shards(c, items, len(bounds) - 1, submit)
    return merge_shards(outs, p, n, time.perf_counter() - t0, folder)


def submit_shard(
    c: Any, fn: Any, task: Any, opts: Any, shared: Any, folder: Any, token: str, j: int
) -> Any:
    """Shard ``j``'s task ``fn(task, opts, shared, folder)``, keyed by the evaluation's
    ``token``, never cached (``pure=False``) and run again :data:`TASK_RETRIES` times after it
    raised; shared by the in-memory and the storage-backed evaluations."""
    return c.submit(
        fn,
        task,
        opts,
        shared,
        None if folder is None else str(folder),
        key=f"recoeval-shard-{token}-{j}",
        pure=False,
        retries=TASK_RETRIES,
    )


def _check_mergeable(p: Any, func: str) -> None:
    """Every aggregate of the plan must have an exact merge rule (per-item counts or parts)."""
    for s in p.specs:
        if (
            s.kind == "aggregate"
            and getattr(s.compute, "from_counts", None) is None
            and getattr(s.compute, "parts", None) is None
        ):
            raise param_error(
                "metrics",
                func,
                "metrics whose distributed merge is exact "
                f"('{s.name}' has neither per-item counts nor additive parts; "
                "evaluate it without a Dask client)",
                s.name,
            )
