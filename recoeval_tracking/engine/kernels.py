"""Numba kernels of the metric engine.

This module imports numpy and numba only. It knows nothing of pandas, Hydra or MLflow.

The engine reduces every ranking metric to the ranks of a user's positive (test) items among the
user's pool (the items not in train): for positive ``i`` with score ``s_i``,

    rank_i = 1 + #{j in pool : s_j > s_i} + #{j in pool : s_j == s_i, j beats i by the tie rule}.

Counting the items that outscore each positive is a branch-free reduction over the user's score
row (vectorised by LLVM), so no sort of the pool is ever needed. When only top-K metrics are
asked, the count of a positive stops as soon as it is known to be beyond K. Every metric is then
filled from the sorted ranks in ``O(K + n_pos)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# Metric codes: the order of the rows of the kernel output. The registry in
# ``recoeval_tracking.metrics.registry`` maps names to these codes.
P, TP, R, AP, TAP, NDCG, HIT, RR, ROC_AUC, PR_AUC = range(10)
N_CODES = 10
N_TOPK_CODES = 8  # codes below this are "@K" metrics

# Reasons for which all of a user's metrics are NaN. 0 means evaluated.
OK = 0
NO_TEST = 1
MIN_POS_TEST = 2
COLD_START = 3
MIN_ITEMS_POOL = 4
NAN_SCORE = 5
ALL_EQUAL = 6
REASONS = ("", "no_test", "min_pos_test", "cold_start", "min_items_pool", "nan_score", "all_equal")

# Tie policies.
TIE_NOISE = 0
TIE_INDEX = 1

# NDCG gains.
GAIN_LINEAR = 0
GAIN_EXPONENTIAL = 1

_CHUNK = 1024
_BINARY_SEARCH_MIN_POS = 48


@njit(cache=True, inline="always")
def _mix64(x):
    """splitmix64 finaliser: a well-mixed 64-bit hash of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def tie_key(seed, user, item):
    """Seeded random key of (user, item): larger keys rank first among tied scores.

    It depends only on the seed, the user row and the item column, never on threads or blocks.
    """
    h = _mix64(np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019))
    h = _mix64(h ^ (np.uint64(user) * np.uint64(0xD1B54A32D192ED03)))
    return _mix64(h ^ (np.uint64(item) * np.uint64(0xABC98388FB8FAC03)))


@njit(cache=True, inline="always")
def _beats(seed, user, tie_mode, j, i):
    """Whether item ``j`` ranks before item ``i`` when both have the same score."""
    if tie_mode == TIE_INDEX:
        return j < i
    kj = tie_key(seed, user, j)
    ki = tie_key(seed, user, i)
    if kj != ki:
        return kj > ki
    return j < i


@njit(cache=True, inline="always")
def _count_chunk(s, start, stop, p):
    gt = 0
    eq = 0
    for j in range(start, stop):
        x = s[j]
        gt += x > p
        eq += x == p
    return gt, eq


@njit(cache=True, inline="always")
def _count_nan(s):
    c = 0
    for j in range(s.shape[0]):
        c += s[j] != s[j]
    return c


@njit(cache=True)
def _counts_by_scan(s, pos_scores, stop_at, gt, eq):
    """gt[i], eq[i] = #items with score > / == pos_scores[i] over the row ``s``.

    When ``stop_at > 0`` the count of a positive stops (after a chunk) once it reaches
    ``stop_at``; its ``gt`` is then a lower bound that is already >= stop_at.
    """
    n = s.shape[0]
    for i in range(pos_scores.shape[0]):
        p = pos_scores[i]
        if stop_at <= 0:
            g, e = _count_chunk(s, 0, n, p)
        else:
            g = 0
            e = 0
            start = 0
            while start < n and g < stop_at:
                stop = min(start + _CHUNK, n)
                gc, ec = _count_chunk(s, start, stop, p)
                g += gc
                e += ec
                start = stop
        gt[i] = g
        eq[i] = e


@njit(cache=True)
def _counts_by_search(s, pos_scores, gt, eq):
    """Same result as ``_counts_by_scan`` (no early stop) in O(n log n_pos), for many positives."""
    npos = pos_scores.shape[0]
    order = np.argsort(pos_scores)
    q = pos_scores[order]  # ascending
    hist = np.zeros(npos + 1, dtype=np.int64)
    eqh = np.zeros(npos + 1, dtype=np.int64)
    for j in range(s.shape[0]):
        x = s[j]
        # c = number of q strictly below x (lower bound)
        lo = 0
        hi = npos
        while lo < hi:
            mid = (lo + hi) >> 1
            if q[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        hist[lo] += 1
        if lo < npos and q[lo] == x:
            eqh[lo] += 1
    # gt for sorted position t = #items with c > t
    acc = 0
    gts = np.empty(npos, dtype=np.int64)
    for t in range(npos - 1, -1, -1):
        acc += hist[t + 1]
        gts[t] = acc
    first = 0
    for t in range(npos):
        if t > 0 and q[t] != q[t - 1]:
            first = t
        gt[order[t]] = gts[t]
        eq[order[t]] = eqh[first]


@njit(cache=True)
def _counts_skipping(s, skip, pos_scores, gt, eq):
    """Exact counts over the items not flagged in ``skip`` (slow path for -inf positives)."""
    for i in range(pos_scores.shape[0]):
        g = 0
        e = 0
        p = pos_scores[i]
        for j in range(s.shape[0]):
            if skip[j]:
                continue
            g += s[j] > p
            e += s[j] == p
        gt[i] = g
        eq[i] = e


@njit(cache=True)
def _sort_by_rank(ranks, gains):
    """Sort ``ranks`` ascending (insertion sort, small arrays) carrying ``gains`` along."""
    n = ranks.shape[0]
    if n > 32:
        order = np.argsort(ranks, kind="mergesort")
        r2 = ranks[order]
        g2 = gains[order]
        ranks[:] = r2
        gains[:] = g2
        return
    for a in range(1, n):
        r = ranks[a]
        g = gains[a]
        b = a - 1
        while b >= 0 and ranks[b] > r:
            ranks[b + 1] = ranks[b]
            gains[b + 1] = gains[b]
            b -= 1
        ranks[b + 1] = r
        gains[b + 1] = g


@njit(cache=True)
def fill_metrics(ranks, gains, n_pos, n_neg, pool, K, cumulative, slots, out, u):
    """Fill every requested metric of user ``u`` from the ranks of its positives.

    Parameters
    ----------
    ranks : int64 array (n_pos,)
        1-based rank of each positive in the pool, sorted ascending, paired with ``gains``. Ranks
        above K may be any value > K.
    gains : float64 array (n_pos,)
        NDCG gain of each positive (already transformed for exponential gains).
    slots : int64 array (N_CODES,)
        Output row of each metric code, -1 when not requested.
    out : float64 array (n_requested, n_users, K or 1)
    """
    only_pos = n_neg == 0
    # ideal DCG uses the positive gains only, sorted descending
    pos_g = gains[gains > 0]
    pos_g = -np.sort(-pos_g)
    n_good = pos_g.shape[0]
    want_ndcg = slots[NDCG] >= 0
    hits = 0
    ap_sum = 0.0
    dcg = 0.0
    idcg = 0.0
    first = ranks[0] if n_pos > 0 else K + 1
    ptr = 0
    for kc in range(1, K + 1):
        while ptr < n_pos and ranks[ptr] <= kc:
            hits += 1
            ap_sum += hits / ranks[ptr]
            if want_ndcg:
                dcg += gains[ptr] / np.log2(ranks[ptr] + 1.0)
            ptr += 1
        if want_ndcg and kc <= n_good:
            idcg += pos_g[kc - 1] / np.log2(kc + 1.0)
        if not cumulative and kc < K:
            continue
        col = kc - 1 if cumulative else 0
        short = pool <= kc  # the list is the whole pool: order-free metrics are undefined
        if slots[P] >= 0:
            out[slots[P], u, col] = np.nan if (only_pos or short) else hits / kc
        if slots[TP] >= 0:
            out[slots[TP], u, col] = np.nan if (only_pos or short) else hits / min(kc, n_pos)
        if slots[R] >= 0:
            out[slots[R], u, col] = np.nan if (only_pos or short) else hits / n_pos
        if slots[AP] >= 0:
            out[slots[AP], u, col] = np.nan if only_pos else ap_sum / n_pos
        if slots[TAP] >= 0:
            out[slots[TAP], u, col] = np.nan if only_pos else ap_sum / min(kc, n_pos)
        if want_ndcg:
            out[slots[NDCG], u, col] = dcg / idcg if n_good > 0 else np.nan
        if slots[HIT] >= 0:
            out[slots[HIT], u, col] = np.nan if (only_pos or short) else (1.0 if hits > 0 else 0.0)
        if slots[RR] >= 0:
            out[slots[RR], u, col] = np.nan if only_pos else (1.0 / first if first <= kc else 0.0)


@njit(cache=True)
def fill_whole(ranks, n_pos, n_neg, wslots, whole_out, u):
    """ROC-AUC and PR-AUC of user ``u`` from the exact sorted ranks of all its positives.

    ROC-AUC counts the (positive, negative) pairs in order: the positive of sorted position ``t``
    (0-based) has ``ranks[t] - 1 - t`` negatives above it. PR-AUC is AP over the whole ranking.
    """
    if n_neg == 0:
        if wslots[0] >= 0:
            whole_out[wslots[0], u] = np.nan
        if wslots[1] >= 0:
            whole_out[wslots[1], u] = np.nan
        return
    if wslots[0] >= 0:
        good = 0.0
        for t in range(n_pos):
            good += n_neg - (ranks[t] - 1 - t)
        whole_out[wslots[0], u] = good / (n_pos * float(n_neg))
    if wslots[1] >= 0:
        acc = 0.0
        for t in range(n_pos):
            acc += (t + 1) / ranks[t]
        whole_out[wslots[1], u] = acc / n_pos


@njit(cache=True, inline="always")
def _in_sorted(idx, lo, end, item):
    """Whether ``item`` is in the sorted slice ``idx[lo:end]``."""
    hi = end
    while lo < hi:
        mid = (lo + hi) >> 1
        if idx[mid] < item:
            lo = mid + 1
        else:
            hi = mid
    return lo < end and idx[lo] == item


@njit(cache=True)
def _gain(v, gain_mode):
    if gain_mode == GAIN_EXPONENTIAL:
        return 2.0 ** v - 1.0
    return v


@njit(parallel=True, cache=True)
def block_metrics(S, rows, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative,
                  slots, wslots, full_ranks, tie_mode, gain_mode, seed, out, whole_out, reason):
    """Evaluate the users ``rows`` whose scores are the rows of ``S`` (modified in place).

    ``out`` receives the @K metrics, ``whole_out`` the whole-ranking ones (ROC-AUC, PR-AUC);
    ``reason`` receives NAN_SCORE or ALL_EQUAL for users found undefined here.
    """
    stop_at = 0 if full_ranks else K
    for b in prange(rows.shape[0]):
        u = rows[b]
        s = S[b]
        t0 = tr_ptr[u]
        t1 = tr_ptr[u + 1]
        n_train = t1 - t0
        pool = n_items - n_train
        # positives' scores are read before train items are masked (they are disjoint)
        p0 = te_ptr[u]
        n_pos = te_ptr[u + 1] - p0
        pos_scores = np.empty(n_pos, dtype=S.dtype)
        any_neg_inf = False
        for i in range(n_pos):
            pos_scores[i] = s[te_idx[p0 + i]]
            if pos_scores[i] == -np.inf:
                any_neg_inf = True
        # a NaN anywhere in the pool makes the user undefined; train items do not count
        for t in range(t0, t1):
            s[tr_idx[t]] = -np.inf
        if _count_nan(s) > 0:
            reason[u] = NAN_SCORE
            continue
        gt = np.empty(n_pos, dtype=np.int64)
        eq = np.empty(n_pos, dtype=np.int64)
        if any_neg_inf and n_train > 0:
            skip = np.zeros(n_items, dtype=np.bool_)
            for t in range(t0, t1):
                skip[tr_idx[t]] = True
            _counts_skipping(s, skip, pos_scores, gt, eq)
        elif n_pos >= _BINARY_SEARCH_MIN_POS and (full_ranks or n_pos * _CHUNK > n_items * 4):
            _counts_by_search(s, pos_scores, gt, eq)
        else:
            _counts_by_scan(s, pos_scores, stop_at, gt, eq)
        # every pool score equal <=> the first positive ties with the whole pool
        if gt[0] == 0 and eq[0] == pool:
            reason[u] = ALL_EQUAL
            continue
        ranks = np.empty(n_pos, dtype=np.int64)
        gains = np.empty(n_pos, dtype=np.float64)
        for i in range(n_pos):
            item = te_idx[p0 + i]
            r = gt[i] + 1
            if eq[i] > 1 and (full_ranks or gt[i] < K):
                p = pos_scores[i]
                for j in range(n_items):
                    if s[j] == p and j != item and _beats(seed, u, tie_mode, j, item):
                        # a masked train item only ties with a -inf positive: skip it
                        if p == -np.inf and _in_sorted(tr_idx, t0, t1, j):
                            continue
                        r += 1
            ranks[i] = r
            gains[i] = _gain(te_val[p0 + i], gain_mode)
        _sort_by_rank(ranks, gains)
        fill_metrics(ranks, gains, n_pos, pool - n_pos, pool, K, cumulative, slots, out, u)
        if full_ranks:
            fill_whole(ranks, n_pos, pool - n_pos, wslots, whole_out, u)


@njit(parallel=True, cache=True)
def ranked_list_metrics(lists, rows, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K,
                        cumulative, slots, gain_mode, out):
    """Top-K metrics from ranked lists: ``lists[u]`` holds item indices, best first, -1 padded.

    Items of the user's train row are dropped from the list (the pool excludes them) and the
    remaining items keep their order; positives absent from the list rank beyond K.
    """
    L = lists.shape[1]
    for b in prange(rows.shape[0]):
        u = rows[b]
        t0 = tr_ptr[u]
        t1 = tr_ptr[u + 1]
        pool = n_items - (t1 - t0)
        p0 = te_ptr[u]
        n_pos = te_ptr[u + 1] - p0
        ranks = np.full(n_pos, K + 1, dtype=np.int64)
        gains = np.empty(n_pos, dtype=np.float64)
        for i in range(n_pos):
            gains[i] = _gain(te_val[p0 + i], gain_mode)
        pos_rank = 0
        for r in range(L):
            item = lists[u, r]
            if item < 0:
                continue
            if _in_sorted(tr_idx, t0, t1, item):
                continue
            pos_rank += 1
            if pos_rank > K:
                break
            lo = p0
            hi = p0 + n_pos
            while lo < hi:
                mid = (lo + hi) >> 1
                if te_idx[mid] < item:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < p0 + n_pos and te_idx[lo] == item and ranks[lo - p0] > K:
                ranks[lo - p0] = pos_rank
        _sort_by_rank(ranks, gains)
        fill_metrics(ranks, gains, n_pos, pool - n_pos, pool, K, cumulative, slots, out, u)
