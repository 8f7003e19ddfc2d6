"""The end of a block of the fused pass: each user's reason, top-K list, ranks and metrics.

After the last tile (:mod:`.fused`), a user's heap holds its top-K list and ``c_root`` the items
outside it tied with its root; with whole-ranking metrics ``gt``, ``eq`` and ``beat`` hold the
exact counts of every positive. From them the same writers as the block path (:mod:`.fill`) fill
every metric.

This module imports numpy and numba only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import Reason
from .fill import fill_average, fill_metrics, fill_whole
from .ranks import (
    TIE_AVERAGE,
    TIE_INDEX,
    TIE_INDEX_DESC,
    TIE_NOISE,
    _best_first,
    _policy_ranks,
    lower_bound,
    n_tied_with_list,
    sort_by_rank,
)

NAN_SCORE = int(Reason.NAN_SCORE)
ALL_EQUAL = int(Reason.ALL_EQUAL)


@njit(cache=True, inline="always")
def _heap_mode(tie_mode):
    return tie_mode if tie_mode in (TIE_NOISE, TIE_INDEX_DESC) else TIE_INDEX


@njit(cache=True)
def _counts_from_list(pos, hs, size, low, at_low, K, gt, eq):
    """``gt`` and ``eq`` of each positive from the top-K list: exact at or above its lowest
    score ``low``; below it ``gt = K`` (the positive is beyond K under every policy)."""
    for i in range(pos.shape[0]):
        p = pos[i]
        if p < low:
            gt[i] = K
            eq[i] = 1
            continue
        g = 0
        e = 0
        for r in range(size):
            g += hs[r] > p
            e += hs[r] == p
        gt[i] = g
        eq[i] = at_low if p == low else e


@njit(cache=True)
def _ranks_from_list(test, p0, n_pos, hi, order, size, K, ranks):
    """Rank ``r + 1`` for the positive listed at ``r``; ``K + 1`` for the others."""
    for i in range(n_pos):
        ranks[i] = K + 1
    for r in range(size):
        item = hi[order[r]]
        at = lower_bound(test.idx, p0, p0 + n_pos, item)
        if at < p0 + n_pos and test.idx[at] == item:
            ranks[at - p0] = r + 1


@njit(cache=True)
def finish_user(u, b, train, test, plan, st, outs):
    """The user's reason, top-K list and metrics from its state ``b`` after the last tile: ranks
    from the positives' counts when they were counted (:func:`.fused.fused_block`), else from
    the top-K list."""
    if st.nan[b]:
        outs.reason[u] = NAN_SCORE
        return
    count = plan.full_ranks or not plan.want_topk
    n_train = train.ptr[u + 1] - train.ptr[u]
    pool = plan.n_items - n_train
    p0 = test.ptr[u]
    n_pos = test.ptr[u + 1] - p0
    o = st.poff[b]
    pos = st.pos[o:o + n_pos]
    vals = test.val[p0:p0 + n_pos]
    gt = np.empty(n_pos, dtype=np.int64)
    eq = np.empty(n_pos, dtype=np.int64)
    if count:
        for i in range(n_pos):
            gt[i] = st.gt[o + i]
            # the masked train items tie with a -inf positive: they are not in the pool
            eq[i] = st.eq[o + i] - (n_train if st.pre[o + i] == -np.inf else 0)
        pos = st.pre[o:o + n_pos]
        # every pool score equal <=> the first positive ties with the whole pool
        if gt[0] == 0 and eq[0] == pool:
            outs.reason[u] = ALL_EQUAL
            return
    if plan.want_topk:
        if _list(u, b, plan, st, outs, pool, count, pos, gt, eq):
            return
    if plan.tie_mode == TIE_AVERAGE:
        fill_average(pos, vals, gt, eq, pool, plan, outs.out, outs.whole, u)
        return
    ranks = np.empty(n_pos, dtype=np.int64)
    rvals = np.empty(n_pos, dtype=np.float64)
    if plan.tie_mode in (TIE_NOISE, TIE_INDEX, TIE_INDEX_DESC):
        if count:
            for i in range(n_pos):
                ranks[i] = gt[i] + 1 + st.beat[o + i]
        else:
            _ranks_from_list(test, p0, n_pos, st.hi[b], st.order[b], st.size[b], plan.K, ranks)
        rvals[:] = vals
    else:
        _policy_ranks(pos, vals, gt, eq, plan.tie_mode, ranks, rvals)
    sort_by_rank(ranks, rvals)
    fill_metrics(ranks, rvals, pool, plan, outs.out, u)
    if plan.full_ranks:
        fill_whole(ranks, rvals, pool, plan.wslots, outs.whole, u, gt, eq)


@njit(cache=True)
def _list(u, b, plan, st, outs, pool, count, pos, gt, eq):
    """Write the user's top-K list from its heap (its order kept in ``st.order[b]``); without
    counts, check all-equal scores and take ``gt`` and ``eq`` from the list. Returns whether the
    user is undefined (all scores equal)."""
    size = st.size[b]
    hs = st.hs[b]
    hi = st.hi[b]
    order = st.order[b]
    _best_first(hs, hi, size, plan.seed, u, _heap_mode(plan.tie_mode), order)
    low = hs[order[size - 1]]
    at_low = st.c_root[b]
    for r in range(size):
        at_low += hs[r] == low
    if not count:
        if hs[order[0]] == low and at_low == pool:
            outs.reason[u] = ALL_EQUAL
            return True
        _counts_from_list(pos, hs, size, low, at_low, plan.K, gt, eq)
    for r in range(plan.K):
        outs.topk[u, r] = hi[order[r]] if r < size else -1
    outs.n_tied[u] = n_tied_with_list(hs, order, size, at_low)
    return False
