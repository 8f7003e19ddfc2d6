"""The GPU half of the ``cuda`` backend: one CUDA thread per user of a block of scores.

Each thread runs :func:`user_pass` on its user's score row, the part of the CPU engine's
per-user evaluation (:func:`recoeval_tracking.engine.kernels.block_ranked`) that reads the whole
row, ``O(n_items)`` per positive:

1. read the positives' scores, then mask the train items to ``-inf``;
2. a NaN in the pool: ``NAN_SCORE``; the counts ``gt``/``eq`` of every positive (:func:`_count`:
   a binary search for many positives, one read of the row for all positives, or, for top-K
   metrics only, the CPU's scan that stops past ``K``); the whole pool tied: ``ALL_EQUAL``;
3. the top-K list and its tie count (:func:`~.topk.topk_into`);
4. under a total tie order (``noise``, ``index``, ``index_desc``, ``warprec``) the exact ranks
   (:func:`~.ranks._exact_ranks`, the seeded tie keys of :func:`~.ranks.tie_key` or
   :func:`~.ranks.warprec_key`), drawn for
   the global user ``u + plan.user_base`` as on the CPU (a Dask shard's rows start there).

Every step calls the CPU engine's own ``@njit`` functions: numba compiles them as CUDA device
functions when a kernel calls them, so the tie keys, the counts and the top-K heap are one
source for both backends. What is left per user is ``O(K + n_pos)`` and runs on the host from
these counts with the metric writers of :mod:`.fill` (:mod:`.cuda_fill`).

The kernel takes four records: :data:`Block` (the block's scores and per-block outputs) and the
``Csr``/``Plan`` records of :mod:`.records`. Under numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) records pass into the kernel untouched, so the simulated threads
call the same functions compiled for the CPU: the tests run this module's logic without a GPU.

This module imports numpy, numba and numba.cuda only; it is imported by :mod:`.cuda_driver` when
the ``cuda`` backend runs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import cuda, njit

from .codes import Reason
from .ranks import (
    _BINARY_SEARCH_MIN_POS,
    _CHUNK,
    TOTAL_ORDERS,
    _count_chunk,
    _counts_by_scan,
    _exact_ranks,
    count_nan,
    counts_by_search_into,
    insertion_sort_pairs,
)
from .topk import topk_into

__all__ = [
    "Block",
    "CHUNK",
    "THREADS",
    "counts_by_search",
    "counts_in_one_read",
    "user_pass",
    "user_pass_kernel",
]

NAN_SCORE = int(Reason.NAN_SCORE)
ALL_EQUAL = int(Reason.ALL_EQUAL)

#: CUDA threads per thread block (one user each): small, so that a block of ~10,000 users spreads
#: over every multiprocessor.
THREADS = 64

#: One block of users on the device (row ``b`` of every per-user array is user ``rows[b]``):
#:
#: * ``S`` (``(nb, n_items)``, float32 or float64): the scores, masked in place;
#: * ``rows`` (int64, ``nb``): the users; ``off`` (int64, ``nb + 1``): user ``b``'s positives
#:   are entries ``off[b]:off[b + 1]`` of the per-positive arrays;
#: * per positive: ``pos`` (the scores' dtype), ``gt``, ``eq``, ``rk`` (int64: counts and
#:   exact ranks, in the order of the test row) and ``rv`` (float64 scratch of the exact ranks);
#: * per user: ``reason`` (int64: 0, ``NAN_SCORE`` or ``ALL_EQUAL``), ``topk`` (int64,
#:   ``(nb, K)``), ``n_tied`` (int64); the top-K scratch ``hs`` (scores' dtype), ``hi`` and
#:   ``order`` (int64), ``(nb, K)`` each (``(nb, 1)``, unread, when no top-K list is asked);
#: * the scratch of the binary-search count: per positive ``sq`` (scores' dtype), ``so`` and
#:   ``sg`` (int64); ``hist`` and ``eqh`` (int64), ``off[-1] + nb`` (user ``b``: entries
#:   ``off[b] + b`` to ``off[b + 1] + b``).
Block = namedtuple(
    "Block",
    [
        "S",
        "rows",
        "off",
        "pos",
        "gt",
        "eq",
        "rk",
        "rv",
        "reason",
        "topk",
        "n_tied",
        "hs",
        "hi",
        "order",
        "sq",
        "so",
        "sg",
        "hist",
        "eqh",
    ],
)


#: Items per chunk of an exact count: every positive is counted against a chunk while it is in
#: the thread's cache lines (1 KB of float32), so the row is read from memory once.
CHUNK = 256


@njit(cache=True)
def counts_in_one_read(s, pos, gt, eq):
    """``gt[i]``, ``eq[i]``: the items of ``s`` above and equal to ``pos[i]``, exactly.

    The same counts as :func:`~.ranks._counts_by_scan` without an early stop, with the loops
    swapped: chunk by chunk of the row, every positive (the CPU scan reads the row once per
    positive, from its cache; a GPU thread has no cache that holds a row)."""
    for i in range(pos.shape[0]):
        gt[i] = 0
        eq[i] = 0
    n = s.shape[0]
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        for i in range(pos.shape[0]):
            g, e = _count_chunk(s, start, stop, pos[i])
            gt[i] += g
            eq[i] += e


@njit(cache=True)
def counts_by_search(s, pos, gt, eq, q, order, gts, hist, eqh):
    """The binary-search count of :func:`~.ranks._counts_by_search` (``O(n log n_pos)``, for
    many positives) on the caller's scratch: the positives sorted by an insertion sort (no
    ``argsort`` on a GPU), then :func:`~.ranks.counts_by_search_into`."""
    n = pos.shape[0]
    for a in range(n):
        q[a] = pos[a]
        order[a] = a
    insertion_sort_pairs(q, order, n)
    counts_by_search_into(s, q, order, hist, eqh, gts, gt, eq)


@njit(cache=True)
def _count(s, b, o0, o1, exact, plan, blk):
    """The counts of row ``b``'s positives, by the CPU engine's rule: the binary search for many
    positives (when exact, or when a scan per positive would read more than the row), else one
    exact read of the row, else (top-K metrics only) the scan that stops past K."""
    pos = blk.pos[o0:o1]
    gt = blk.gt[o0:o1]
    eq = blk.eq[o0:o1]
    n_pos = o1 - o0
    if n_pos >= _BINARY_SEARCH_MIN_POS and (exact or n_pos * _CHUNK > s.shape[0] * 4):
        counts_by_search(
            s,
            pos,
            gt,
            eq,
            blk.sq[o0:o1],
            blk.so[o0:o1],
            blk.sg[o0:o1],
            blk.hist[o0 + b : o1 + b + 1],
            blk.eqh[o0 + b : o1 + b + 1],
        )
    elif exact:
        counts_in_one_read(s, pos, gt, eq)
    else:
        _counts_by_scan(s, pos, plan.K, gt, eq)


@njit(cache=True)
def _read_positives(s, p0, test, pos):
    """Copy the positives' scores; whether one of them is ``-inf``."""
    any_neg_inf = False
    for i in range(pos.shape[0]):
        pos[i] = s[test.idx[p0 + i]]
        if pos[i] == -np.inf:
            any_neg_inf = True
    return any_neg_inf


@njit(cache=True)
def user_pass(b, blk, train, test, plan):
    """Evaluate the row ``b`` of ``blk`` up to the counts, the top-K list and the exact ranks.

    The counts match the CPU engine's :func:`~.ranks.counts`: a scan that may stop once
    ``gt >= K`` (top-K metrics only), and an exact scan when a positive scores ``-inf``, where
    the masked train items (all ``-inf``) are taken out of that positive's ``eq``.
    """
    u = blk.rows[b]
    s = blk.S[b]
    o0 = blk.off[b]
    o1 = blk.off[b + 1]
    p0 = test.ptr[u]
    t0 = train.ptr[u]
    t1 = train.ptr[u + 1]
    pool = plan.n_items - (t1 - t0)
    pos = blk.pos[o0:o1]
    gt = blk.gt[o0:o1]
    eq = blk.eq[o0:o1]
    any_neg_inf = _read_positives(s, p0, test, pos)
    for t in range(t0, t1):
        s[train.idx[t]] = -np.inf
    if count_nan(s) > 0:
        blk.reason[b] = NAN_SCORE
        return
    _count(s, b, o0, o1, plan.full_ranks or any_neg_inf, plan, blk)
    if any_neg_inf:
        for i in range(pos.shape[0]):
            if pos[i] == -np.inf:
                eq[i] -= t1 - t0
    if gt[0] == 0 and eq[0] == pool:
        blk.reason[b] = ALL_EQUAL
        return
    if plan.want_topk:
        # the tie keys of the global user (a shard's row 0 is user plan.user_base), as on the CPU
        blk.n_tied[b] = topk_into(
            s,
            plan.seed,
            u + plan.user_base,
            plan.tie_mode,
            train.idx,
            t0,
            t1,
            plan.K,
            blk.topk[b],
            blk.hs[b],
            blk.hi[b],
            blk.order[b],
        )
    if plan.tie_mode in TOTAL_ORDERS:
        _exact_ranks(
            s,
            u,
            pos,
            test.val[p0 : p0 + pos.shape[0]],
            gt,
            eq,
            train,
            test,
            plan,
            blk.rk[o0:o1],
            blk.rv[o0:o1],
        )


@cuda.jit
def user_pass_kernel(blk, train, test, plan):
    """One thread per row of ``blk.S``: :func:`user_pass`."""
    b = cuda.grid(1)
    if b < blk.rows.shape[0]:
        user_pass(b, blk, train, test, plan)
