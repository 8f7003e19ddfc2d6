"""implicit's top-K selection, reproduced exactly, for the ``ties="implicit"`` policy.

implicit (``implicit/cpu/select.h``, used by ``ranking_metrics_at_k`` through
``model.recommend``) scans a user's items in index order with a heap of ``(score, item)`` pairs
ordered by ``std::greater``: an item enters while the heap holds fewer than K pairs, or when its
score is strictly greater than the smallest score in the heap, which then loses its smallest
pair (lowest score, then lowest index). The heap is finally sorted by decreasing
``(score, item)``. Train items get the score ``-finfo(dtype).max`` first (``_topk_batch``'s
``filter_query_items``). So among tied items at the cutoff, which ones stay depends on the scan
history (neither index order nor its reverse), and tied items inside the list are ordered by
decreasing index.

The selection only depends on the set of pairs, not on the heap's internal layout (pairs are
distinct, and the one removed is always the smallest), so it is computed here with a plain
array. The lists then go through the engine's ranked-list path (top-K metrics only). A user
with a NaN score among its items not in train, or with every such score equal, is flagged with
the engine's reason (the project's NaN rules hold under every tie policy).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..engine.codes import Reason
from ..engine.driver import default_block_rows
from ..scores import RankedLists

__all__ = ["implicit_lists", "select_row"]

_NAN_SCORE = int(Reason.NAN_SCORE)
_ALL_EQUAL = int(Reason.ALL_EQUAL)


@njit(cache=True)
def select_row(s, k, ids):
    """implicit's ``select`` on one row of scores ``s`` (train items already set to the
    filter value): the chosen item indices, best first, into ``ids`` (-1 padded)."""
    n = s.shape[0]
    hs = np.empty(k, dtype=np.float64)
    hi = np.empty(k, dtype=np.int64)
    size = 0
    lo = 0  # position of the smallest (score, item) pair in the heap
    for col in range(n):
        x = s[col]
        if size < k:
            hs[size] = x
            hi[size] = col
            size += 1
        elif x > hs[lo]:
            hs[lo] = x
            hi[lo] = col
        else:
            continue
        lo = 0
        for j in range(1, size):
            if hs[j] < hs[lo] or (hs[j] == hs[lo] and hi[j] < hi[lo]):
                lo = j
    # sort by decreasing (score, item)
    order = np.argsort(-hi[:size], kind="mergesort")
    order = order[np.argsort(-hs[:size][order], kind="mergesort")]
    for j in range(ids.shape[0]):
        ids[j] = hi[order[j]] if j < size else -1


@njit(parallel=True, cache=True)
def _select_block(S, users, tr_ptr, tr_idx, k, fill, out, flags):
    for b in prange(users.shape[0]):
        u = users[b]
        s = S[b]
        pool_min = np.inf
        pool_max = -np.inf
        nan = False
        t = tr_ptr[u]
        for col in range(s.shape[0]):
            if t < tr_ptr[u + 1] and tr_idx[t] == col:
                s[col] = fill
                t += 1
                continue
            x = s[col]
            if x != x:
                nan = True
            else:
                pool_min = min(pool_min, x)
                pool_max = max(pool_max, x)
        if nan:
            flags[u] = _NAN_SCORE
        elif pool_min == pool_max:
            flags[u] = _ALL_EQUAL
        select_row(s, k, out[u])


def implicit_lists(
    source, train, m: int, rows: np.ndarray, k: int, block_rows: int | None = None
) -> tuple[RankedLists, np.ndarray]:
    """Every user's top-K list as implicit selects it, from a score source.

    Parameters
    ----------
    source : ScoreSource
    train : scipy.sparse CSR (users x items) or None
    m : int
        The number of users (rows of the test matrix).
    rows : int array
        The users to list (the others keep a list of -1).
    k : int
    block_rows : int, optional

    Returns
    -------
    RankedLists, and the per-user engine reason found while scoring (0, NAN_SCORE or
    ALL_EQUAL).
    """
    n = source.n_items
    tr_ptr = (
        np.zeros(m + 1, dtype=np.int64)
        if train is None
        else np.ascontiguousarray(train.indptr, dtype=np.int64)
    )
    tr_idx = (
        np.zeros(0, dtype=np.int64)
        if train is None
        else np.ascontiguousarray(train.indices, dtype=np.int64)
    )
    out = np.full((m, k), -1, dtype=np.int64)
    flags = np.zeros(m, dtype=np.int8)
    fill = -float(np.finfo(source.dtype).max)
    bs = block_rows or default_block_rows(n, np.dtype(source.dtype).itemsize, max(len(rows), 1))
    for start in range(0, rows.shape[0], bs):
        users = np.ascontiguousarray(rows[start : start + bs], dtype=np.int64)
        S = np.array(source.block(users), dtype=source.dtype, order="C", copy=True)
        _select_block(S, users, tr_ptr, tr_idx, k, fill, out, flags)
    return RankedLists(out, func="evaluate"), flags
