"""The one driver loop over users: score a bounded block with the model, then run the kernel.

The kernels (:mod:`.kernels`) take the typed records of :mod:`.records`, built here from an
:class:`EngineInput`. Imports numpy, numba and threadpoolctl only.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any

import numba
import numpy as np

from . import kernels as kn
from .compiling import compile_kernel
from .records import Csr, Outputs, Plan

__all__ = [
    "EngineInput",
    "thread_limits",
    "resolve_nthreads",
    "run_scores",
    "run_ranked",
    "default_block_rows",
    "factors_finite",
]

#: Smallest target size of one block of scores: on small catalogues a block holds at least this
#: much, so the Python work per block stays small beside the GEMM.
BLOCK_BYTES = 16 * 1024 * 1024
#: Users a block holds when the catalogue allows it within ``MAX_BLOCK_BYTES``. BLAS packs the
#: item factors (``n_items x factors``) once per GEMM call, so a block of few users pays that
#: copy for little work: at 100,000 items a 40-user block (16 MB) cost 2.2x the GEMM floor for
#: the top-K metrics, a 320-user block 1.2x (benchmarks/bench_engine.py's large catalogue); at
#: 20,000 items the top-K metrics cost 1.50x the floor with 256-user blocks, 1.40x with 512,
#: 1.29x with 768 and 1.23x with 1,000 (2 threads, one run).
MIN_BLOCK_USERS = 1024
#: The most scores one block may hold (per thread scoring a block), whatever the catalogue.
MAX_BLOCK_BYTES = 128 * 1024 * 1024
#: The most scores one block of any other source may hold (a user's ``score_users``...): such a
#: model most often returns a new array per block, and glibc serves one of less than 32 MiB from
#: memory it keeps, where a larger one is mapped afresh with every page zeroed on first write
#: (a new 1,024 x 20,000 float32 block cost 18% more CPU than one written into a kept buffer,
#: a 400-user block 0-5%; the GEMM per user the same within 3%).
SOURCE_BLOCK_BYTES = 30 * 1024 * 1024

#: The train matrix's values: the kernels only read which items a train row holds.
_NO_VALUES = np.empty(0, dtype=np.float64)


def resolve_nthreads(nthreads: int) -> int:
    """-1 (or any value < 1) means every core numba may use."""
    limit = numba.config.NUMBA_NUM_THREADS
    if nthreads is None or nthreads < 1:
        return int(limit)
    return int(min(nthreads, limit))


_CONTROLLER = None
#: ``len(sys.modules)`` when :data:`_CONTROLLER` looked at the loaded libraries.
_CONTROLLER_MODULES = -1


def _controller():
    """threadpoolctl's view of the loaded BLAS libraries, inspected again (it costs ~10 ms) only
    when a module was imported since the last look: a BLAS library is loaded by an import (scipy
    loads its own OpenBLAS with ``scipy.linalg``'s routines, torch its own), and one the view
    missed would escape the engine's thread limits (left at one thread, or oversubscribing)."""
    global _CONTROLLER, _CONTROLLER_MODULES
    if _CONTROLLER is None or len(sys.modules) != _CONTROLLER_MODULES:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
        _CONTROLLER_MODULES = len(sys.modules)
    return _CONTROLLER


@contextmanager
def thread_limits(nthreads: int) -> Iterator[int]:
    """The one place that sets the thread count, for numba and for BLAS together."""
    n = resolve_nthreads(nthreads)
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        with _controller().limit(limits=n, user_api="blas"):
            yield n
    finally:
        numba.set_num_threads(previous)


def default_block_rows(
    n_items: int, itemsize: int, n_rows: int, max_bytes: int = MAX_BLOCK_BYTES
) -> int:
    """Users per block of scores: ``MIN_BLOCK_USERS`` where at most ``max_bytes`` allow it,
    more on small catalogues (up to ``BLOCK_BYTES``), at least 8 and at most ``n_rows``.

    A block's scores take ``rows * n_items * itemsize`` bytes, at most
    ``max(BLOCK_BYTES, max_bytes)`` (or 8 users' scores on a catalogue too large for that).
    """
    row = max(1, n_items * itemsize)
    rows = max(8, BLOCK_BYTES // row, min(MIN_BLOCK_USERS, max_bytes // row))
    return int(max(1, min(rows, n_rows)))


#: Rows of a factor matrix read at a time by :func:`factors_finite` (bounds its scratch).
_NORM_ROWS = 16384


def _largest(X: np.ndarray, norm: bool) -> float:
    """The largest row 1-norm (``norm``) or absolute entry of ``X``, in float64, ``_NORM_ROWS``
    rows at a time; NaN or inf when ``X`` holds one."""
    top = 0.0
    for start in range(0, X.shape[0], _NORM_ROWS):
        part = np.abs(X[start : start + _NORM_ROWS], dtype=np.float64)
        value = float((part.sum(axis=1) if norm else part).max())
        if not np.isfinite(value):
            return value
        top = max(top, value)
    return top


def factors_finite(A: np.ndarray, B: np.ndarray, ones: bool = False) -> bool:
    """Whether every score ``A[u] @ B[j]`` is finite whatever the summation order, so that the
    kernels need not look for a NaN or +-inf in the rows (``EngineInput.finite``).

    Every product and partial sum of ``sum_k A[u, k] B[j, k]`` is at most
    ``L = max_u ||A[u]||_1 * max |B|`` in magnitude, up to a rounding factor
    ``(1 + eps / 2)^p < 2``: the scores are finite when ``2 L`` is below the largest number of
    their dtype (float32 when both factors are). ``ones``: each row of ``A`` gains a factor 1
    (the item biases, a last column of ``B``). False for a NaN or +-inf factor. One pass over
    each matrix, a slice at a time.
    """
    if A.size == 0 or B.size == 0:
        return True
    dtype = np.result_type(A.dtype, B.dtype)
    if dtype.kind != "f":
        return False
    bound = (_largest(A, norm=True) + (1.0 if ones else 0.0)) * _largest(B, norm=False)
    return bool(2.0 * bound < float(np.finfo(dtype).max))


@dataclass
class EngineInput:
    """CSR arrays of train and test, and what to compute. Plain numpy only."""

    tr_ptr: np.ndarray
    tr_idx: np.ndarray
    te_ptr: np.ndarray
    te_idx: np.ndarray
    te_val: np.ndarray
    n_items: int
    K: int
    cumulative: bool
    slots: np.ndarray  # (N_AT_K,) output row per @k code, -1 if not requested
    wslots: np.ndarray  # (N_WHOLE,) output row per whole-ranking code, or -1
    tie_mode: int
    seed: int
    want_topk: bool = False  # also return each user's top-K items (beyond-accuracy metrics)
    user_base: int = 0  # global row of row 0 (a shard of a distributed run): tie keys
    inf_nan: bool = False  # a +-inf score in the pool makes the user undefined, as a NaN
    finite: bool = False  # every score is finite (factors_finite): no NaN or +-inf to look for

    @property
    def n_users(self) -> int:
        return self.te_ptr.shape[0] - 1

    def records(self) -> tuple[Csr, Csr, Plan]:
        """The kernels' train and test matrices and plan; the plan ranks every positive exactly
        (``full_ranks``) when a whole-ranking metric is asked."""
        train = Csr(self.tr_ptr, self.tr_idx, _NO_VALUES)
        test = Csr(self.te_ptr, self.te_idx, self.te_val)
        full_ranks = bool((self.wslots >= 0).any())
        plan = Plan(
            n_items=int(self.n_items),
            K=int(self.K),
            cumulative=bool(self.cumulative),
            slots=self.slots,
            wslots=self.wslots,
            full_ranks=full_ranks,
            tie_mode=int(self.tie_mode),
            seed=int(self.seed),
            want_topk=bool(self.want_topk),
            user_base=int(self.user_base),
            inf_nan=bool(self.inf_nan),
            finite=bool(self.finite),
        )
        return train, test, plan

    def allocate(self) -> tuple[np.ndarray, np.ndarray]:
        n_topk = int((self.slots >= 0).sum())
        n_whole = int((self.wslots >= 0).sum())
        out = np.full((n_topk, self.n_users, self.K if self.cumulative else 1), np.nan)
        whole = np.full((n_whole, self.n_users), np.nan)
        return out, whole

    def allocate_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """Each user's top-K items and count of pool items tied with the list (-1 where not
        computed); ``(0, K)`` and ``(0,)`` unless ``want_topk``."""
        m = self.n_users if self.want_topk else 0
        return np.full((m, self.K), -1, dtype=np.int64), np.full(m, -1, dtype=np.int64)


def run_scores(
    inp: EngineInput,
    block: Callable[[np.ndarray, np.ndarray | None], np.ndarray],
    dtype: np.dtype,
    rows: np.ndarray,
    reason: np.ndarray,
    *,
    block_rows: int | None = None,
    progress: Callable[[int], None] | None = None,
    thread_safe: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate ``rows`` (users whose metrics may be defined), one block of scores at a time.

    ``block(users, out)`` fills and returns the ``(len(users), n_items)`` scores. ``reason`` is
    updated in place for users found undefined by the kernel (NaN score, all scores equal).
    Returns the @k metrics, the whole-ranking metrics, the top-K items (``(m, K)``, -1 where not
    computed; ``(0, K)`` unless ``want_topk``) and the per-user count of pool items tied with a
    listed item (-1 where not computed).

    The kernels are compiled once, for one thread, and release the GIL: threads are Python's own.
    With several threads and a ``thread_safe`` score source (numpy only: factors, biases, dense
    scores), each worker thread scores a whole block with single-threaded BLAS and evaluates it,
    so BLAS threads never spin beside the kernels. Otherwise (a user's ``score_users``...) the
    blocks are scored in turn, one block ahead of the evaluation: a thread calls ``block`` for
    block ``i + 1`` while the threads evaluate block ``i`` (``block`` is never called twice at
    once; its exception reaches the caller unchanged). BLAS keeps every thread there: the
    source's own GEMM (``A[users] @ B.T`` in a user's model) on one core took twice the time of
    the factors path, whatever the evaluation beside it. Each user's values are computed alone,
    so both arrangements give identical results.
    """
    out, whole = inp.allocate()
    topk, n_tied = inp.allocate_lists()
    if rows.shape[0] == 0:
        return out, whole, topk, n_tied
    itemsize = np.dtype(dtype).itemsize
    cap = MAX_BLOCK_BYTES if thread_safe else SOURCE_BLOCK_BYTES
    bs = block_rows or default_block_rows(inp.n_items, itemsize, rows.shape[0], cap)
    train, test, plan = inp.records()
    outs = Outputs(out, whole, reason, topk, n_tied)
    threads = numba.get_num_threads()
    starts = range(0, rows.shape[0], bs)
    kernel = kn.block_kernel(plan)
    compile_kernel(kernel, dtype, (train, test, plan, outs))  # on two cores when cold

    def score(start: int, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        users = np.ascontiguousarray(rows[start : start + bs], dtype=np.int64)
        S = block(users, buf[: users.shape[0]])
        if S.dtype != dtype or not S.flags.c_contiguous or not S.flags.writeable:
            S = np.array(S, dtype=dtype, order="C", copy=True)
        return S, users

    def done(n: int) -> None:
        if progress is not None:
            progress(n)

    if threads > 1 and thread_safe and len(starts) > 1:
        local = threading.local()

        def work(start: int) -> None:
            if not hasattr(local, "buf"):
                local.buf = np.empty((bs, inp.n_items), dtype=dtype)
            S, users = score(start, local.buf)
            kernel(S, users, train, test, plan, outs)
            done(users.shape[0])

        with (
            _controller().limit(limits=1, user_api="blas"),
            ThreadPoolExecutor(max_workers=threads) as pool,
        ):
            for f in [pool.submit(work, st) for st in starts]:
                f.result()
        return out, whole, topk, n_tied
    return _in_turn(kernel, score, starts, bs, (train, test, plan, outs), dtype, done)


def _in_turn(
    kernel: Callable[..., None],
    score: Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray]],
    starts: range,
    bs: int,
    records: tuple[Any, Any, Plan, Outputs],
    dtype: np.dtype,
    done: Callable[[int], None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`run_scores` for a source called one block at a time: the next block is scored
    (one call of the source at a time, in a thread of its own) while this one is evaluated,
    into two buffers, the one of block i rewritten once block i is done; with one thread, as
    asked, the source runs between the evaluations, into one buffer."""
    plan, outs = records[2], records[3]
    threads = numba.get_num_threads()
    n_items = int(plan.n_items)
    one_ahead = threads > 1 and len(starts) > 1
    bufs = [np.empty((bs, n_items), dtype=dtype) for _ in range(1 + one_ahead)]

    with (
        _pool(threads) as pool,
        ThreadPoolExecutor(max_workers=1) if one_ahead else nullcontext() as ahead,
    ):

        def fetch(i: int) -> Future:
            return _submit(ahead, score, starts[i], bufs[i % len(bufs)])

        coming = fetch(0)
        for i in range(len(starts)):
            S, users = coming.result()  # the source's exception, as it raised it
            if one_ahead and i + 1 < len(starts):
                coming = fetch(i + 1)
            _spread(
                pool,
                threads,
                users.shape[0],
                partial(_evaluate_rows, kernel, S, users, records),
            )
            done(users.shape[0])
            if not one_ahead and i + 1 < len(starts):
                coming = fetch(i + 1)
    return outs.out, outs.whole, outs.topk, outs.n_tied


def _evaluate_rows(
    kernel: Callable[..., None],
    S: np.ndarray,
    users: np.ndarray,
    records: tuple[Any, ...],
    lo: int,
    hi: int,
) -> None:
    """The kernel over rows ``[lo, hi)`` of a block."""
    kernel(S[lo:hi], users[lo:hi], *records)


#: Pieces per thread when one block's users are shared among threads: users differ in cost
#: (positives, ties), so more pieces than threads even out the threads' loads.
PIECES_PER_THREAD = 4


@contextmanager
def _pool(threads: int) -> Iterator[ThreadPoolExecutor | None]:
    """Worker threads for the compiled kernels (they release the GIL), or None for one thread."""
    if threads <= 1:
        yield None
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        yield pool


def _submit(pool: ThreadPoolExecutor | None, call: Callable[..., Any], *args: Any) -> Future:
    """``call(*args)`` on the pool, or here and now (its result or exception in the future)."""
    if pool is not None:
        return pool.submit(call, *args)
    done: Future = Future()
    try:
        done.set_result(call(*args))
    except BaseException as exc:  # re-raised, unchanged, by done.result()
        done.set_exception(exc)
    return done


def _spread(
    pool: ThreadPoolExecutor | None, threads: int, n: int, call: Callable[[int, int], None]
) -> None:
    """``call(lo, hi)`` over pieces of ``range(n)``, on the pool's threads when there is one."""
    if pool is None or n < 2:
        call(0, n)
        return
    pieces = min(n, threads * PIECES_PER_THREAD)
    bounds = np.linspace(0, n, pieces + 1).astype(np.int64)
    for f in [
        pool.submit(call, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo
    ]:
        f.result()


def run_ranked(inp: EngineInput, lists: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Top-K metrics of ranked lists (``lists[u]``: item indices best first, -1 padded)."""
    out, _ = inp.allocate()
    if rows.shape[0]:
        train, test, plan = inp.records()
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        threads = numba.get_num_threads()
        with _pool(threads) as pool:
            _spread(
                pool,
                threads,
                rows.shape[0],
                lambda lo, hi: kn.ranked_list_metrics(lists, rows[lo:hi], train, test, plan, out),
            )
    return out
