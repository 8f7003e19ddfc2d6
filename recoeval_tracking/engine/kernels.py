"""Numba kernels of the metric engine.

This module imports numpy and numba only. It knows nothing of pandas, Hydra or MLflow.

The engine reduces every ranking metric to the ranks of a user's positive (test) items among the
user's pool (the items not in train): for positive ``i`` with score ``s_i``,

    rank_i = 1 + #{j in pool : s_j > s_i} + #{j in pool : s_j == s_i, j beats i by the tie rule}.

Counting the items that outscore (``gt``) and tie with (``eq``) each positive is a branch-free
reduction over the user's score row (vectorised by LLVM), so no sort of the pool is ever needed.
When only top-K metrics are asked, the count of a positive stops as soon as it is known to be
beyond K. Every metric is then filled from the sorted ranks in ``O(K + n_pos)``.

Tie policies: ``noise``, ``index`` and ``index_desc`` order tied items by a seeded random key or
by item index, ascending or descending (a deterministic ranking); ``optimistic`` and ``pessimistic`` put tied positives before or after
tied negatives; ``average`` computes the expected value of every metric over all orderings of
the tied items, exactly (McSherry & Najork, "Computing information retrieval performance
measures efficiently in the presence of tied scores", ECIR 2008), from ``gt`` and ``eq`` alone.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .codes import AtK, Reason, Tie

# The codes as plain module-level ints: numba reads them as compile-time constants.
P, TP, R, AP, TAP, NDCG, HIT, RR, NDCG_EXP, NDCG_BIN, AUC_TOPK = (int(c) for c in AtK)
NAN_SCORE = int(Reason.NAN_SCORE)
ALL_EQUAL = int(Reason.ALL_EQUAL)
TIE_NOISE, TIE_INDEX, TIE_OPTIMISTIC, TIE_PESSIMISTIC, TIE_AVERAGE, TIE_INDEX_DESC = (
    int(Tie.NOISE), int(Tie.INDEX), int(Tie.OPTIMISTIC), int(Tie.PESSIMISTIC), int(Tie.AVERAGE),
    int(Tie.INDEX_DESC))

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
    if tie_mode == TIE_INDEX_DESC:
        return j > i
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


@njit(cache=True, inline="always")
def _lower_bound(a, lo, hi, x):
    """First position in the sorted slice ``a[lo:hi]`` whose value is not below ``x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _in_sorted(idx, lo, end, item):
    """Whether ``item`` is in the sorted slice ``idx[lo:end]``."""
    pos = _lower_bound(idx, lo, end, item)
    return pos < end and idx[pos] == item


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
        lo = _lower_bound(q, 0, npos, x)  # the number of positives strictly below x
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
def _sort_by_rank(ranks, vals):
    """Sort ``ranks`` ascending (insertion sort for small arrays) carrying ``vals`` along."""
    n = ranks.shape[0]
    if n > 32:
        order = np.argsort(ranks, kind="mergesort")
        r2 = ranks[order]
        v2 = vals[order]
        ranks[:] = r2
        vals[:] = v2
        return
    for a in range(1, n):
        r = ranks[a]
        v = vals[a]
        b = a - 1
        while b >= 0 and ranks[b] > r:
            ranks[b + 1] = ranks[b]
            vals[b + 1] = vals[b]
            b -= 1
        ranks[b + 1] = r
        vals[b + 1] = v




@njit(cache=True, inline="always")
def _gain(v, kind):
    """NDCG gain of test value ``v``: linear ``v``, exponential ``2^v - 1`` or binary ``1``."""
    if kind == 1:
        return 2.0 ** v - 1.0
    if kind == 2:
        return 1.0
    return v


@njit(cache=True)
def _ideal_gains(vals, kind):
    """Positive gains sorted descending (the ideal ranking of the user's test items)."""
    g = np.empty(vals.shape[0], dtype=np.float64)
    n = 0
    for i in range(vals.shape[0]):
        x = _gain(vals[i], kind)
        if x > 0:
            g[n] = x
            n += 1
    g = g[:n]
    return -np.sort(-g)


_NDCG_CODES = (NDCG, NDCG_EXP, NDCG_BIN)


@njit(cache=True)
def fill_metrics(ranks, vals, n_pos, n_neg, pool, K, cumulative, slots, out, u):
    """Fill every requested @k metric of user ``u`` from the ranks of its positives.

    Parameters
    ----------
    ranks : int64 array (n_pos,)
        1-based rank of each positive in the pool, sorted ascending, paired with ``vals`` (the
        test values). Ranks above K may be any value > K.
    slots : int64 array (N_AT_K,)
        Output row of each @k metric code, -1 when not requested.
    out : float64 array (n_requested, n_users, K or 1)
    """
    only_pos = n_neg == 0
    dcg = np.zeros(3)
    idcg = np.zeros(3)
    ideal = (_ideal_gains(vals, 0), _ideal_gains(vals, 1), _ideal_gains(vals, 2))
    hits = 0
    ap_sum = 0.0
    first = ranks[0]
    ptr = 0
    for kc in range(1, K + 1):
        while ptr < n_pos and ranks[ptr] <= kc:
            hits += 1
            ap_sum += hits / ranks[ptr]
            disc = 1.0 / np.log2(ranks[ptr] + 1.0)
            for g in range(3):
                dcg[g] += _gain(vals[ptr], g) * disc
            ptr += 1
        for g in range(3):
            if kc <= ideal[g].shape[0]:
                idcg[g] += ideal[g][kc - 1] / np.log2(kc + 1.0)
        if not cumulative and kc < K:
            continue
        col = kc - 1 if cumulative else 0
        ndcg = np.full(3, np.nan)
        for g in range(3):
            if ideal[g].shape[0] > 0:
                ndcg[g] = dcg[g] / idcg[g]
        auc = np.nan
        if slots[AUC_TOPK] >= 0 and not only_pos:
            auc = _auc_in_list(ranks, hits, min(kc, pool))
        _put_topk(out, slots, u, col, kc, n_pos, only_pos, pool <= kc, float(hits), ap_sum, ndcg,
                  1.0 if hits > 0 else 0.0, 1.0 / first if first <= kc else 0.0, auc)


@njit(cache=True)
def _put_topk(out, slots, u, col, kc, n_pos, only_pos, short, hits, ap_sum, ndcg, hit, rr, auc):
    """Write the requested @kc metrics of user ``u`` from (expected) hits, the AP sum, the three
    NDCG values, Hit, RR and the in-list AUC, applying the NaN rules: everything but NDCG is NaN
    when the pool holds only positives; P, TP, R and Hit are NaN when the pool has <= kc items."""
    bad = only_pos or short
    if slots[P] >= 0:
        out[slots[P], u, col] = np.nan if bad else hits / kc
    if slots[TP] >= 0:
        out[slots[TP], u, col] = np.nan if bad else hits / min(kc, n_pos)
    if slots[R] >= 0:
        out[slots[R], u, col] = np.nan if bad else hits / n_pos
    if slots[AP] >= 0:
        out[slots[AP], u, col] = np.nan if only_pos else ap_sum / n_pos
    if slots[TAP] >= 0:
        out[slots[TAP], u, col] = np.nan if only_pos else ap_sum / min(kc, n_pos)
    for g in range(3):
        c = _NDCG_CODES[g]
        if slots[c] >= 0:
            out[slots[c], u, col] = ndcg[g]
    if slots[HIT] >= 0:
        out[slots[HIT], u, col] = np.nan if bad else hit
    if slots[RR] >= 0:
        out[slots[RR], u, col] = np.nan if only_pos else rr
    if slots[AUC_TOPK] >= 0:
        out[slots[AUC_TOPK], u, col] = np.nan if only_pos else auc


@njit(cache=True)
def _auc_in_list(ranks, hits, length):
    """Hivemall's AUC inside the top-k list: correctly ordered (positive, negative) pairs among
    the list's items over ``hits * (length - hits)``; 0.5 when that is 0."""
    pairs = hits * (length - hits)
    if pairs == 0:
        return 0.5
    correct = 0
    for t in range(hits):
        # negatives of the list below the positive of sorted position t
        correct += (length - ranks[t]) - (hits - 1 - t)
    return correct / pairs


@njit(cache=True)
def fill_whole(ranks, vals, n_pos, n_neg, pool, wslots, whole_out, u):
    """ROC-AUC, PR-AUC and MPR of user ``u`` from the exact sorted ranks of all its positives.

    ROC-AUC counts the (positive, negative) pairs in order: the positive of sorted position ``t``
    (0-based) has ``ranks[t] - 1 - t`` negatives above it. PR-AUC is AP over the whole ranking.
    MPR is the test-value-weighted mean of ``(rank - 1) / (pool - 1)``.
    """
    roc = np.nan
    pr = np.nan
    mpr = np.nan
    if n_neg > 0:
        good = 0.0
        acc = 0.0
        for t in range(n_pos):
            good += n_neg - (ranks[t] - 1 - t)
            acc += (t + 1) / ranks[t]
        roc = good / (n_pos * float(n_neg))
        pr = acc / n_pos
        wsum = 0.0
        psum = 0.0
        for t in range(n_pos):
            wsum += vals[t]
            psum += vals[t] * (ranks[t] - 1.0) / (pool - 1.0)
        mpr = psum / wsum if wsum > 0 else np.nan
    _put_whole(roc, pr, mpr, wslots, whole_out, u)


@njit(cache=True, inline="always")
def _put_whole(roc, pr, mpr, wslots, whole_out, u):
    if wslots[0] >= 0:
        whole_out[wslots[0], u] = roc
    if wslots[1] >= 0:
        whole_out[wslots[1], u] = pr
    if wslots[2] >= 0:
        whole_out[wslots[2], u] = mpr


@njit(cache=True)
def _order_positives(pos_scores, vals, descending_vals):
    """Indices of the positives by score descending; equal scores by value (desc or asc)."""
    n = pos_scores.shape[0]
    order = np.arange(n)
    for a in range(1, n):
        o = order[a]
        b = a - 1
        while b >= 0:
            q = order[b]
            if pos_scores[q] > pos_scores[o]:
                break
            if pos_scores[q] == pos_scores[o]:
                if descending_vals and vals[q] >= vals[o]:
                    break
                if not descending_vals and vals[q] <= vals[o]:
                    break
            order[b + 1] = q
            b -= 1
        order[b + 1] = o
    return order


@njit(cache=True)
def fill_average(pos_scores, vals, gt, eq, n_pos, n_neg, pool, K, cumulative, slots, full_ranks,
                 wslots, out, whole_out, u):
    """Expected value of every metric over all orderings of tied items (McSherry & Najork 2008).

    Positives sharing a score form a group ``g`` with ``a_g`` pool items strictly above it,
    ``t_g`` pool items in the tie, ``c_g`` positives among them and ``H_g`` positives above it. A
    uniformly random ordering of the tie puts each positive at ranks ``a_g + 1 .. a_g + t_g`` with
    equal probability, and the other ``c_g - 1`` positives of the group before position ``j``
    ``(c_g - 1)(j - 1)/(t_g - 1)`` times on average; every metric below is linear in those
    expectations, or (Hit, RR) computed from the hypergeometric law of the first positive.
    """
    order = _order_positives(pos_scores, vals, True)
    # groups
    ga = np.empty(n_pos, dtype=np.int64)
    gt_ = np.empty(n_pos, dtype=np.int64)
    gc = np.empty(n_pos, dtype=np.int64)
    gH = np.empty(n_pos, dtype=np.int64)
    gG = np.zeros((n_pos, 3))
    ng = 0
    prev = 0.0
    H = 0
    for idx in range(n_pos):
        i = order[idx]
        if idx == 0 or pos_scores[i] != prev:
            ga[ng] = gt[i]
            gt_[ng] = eq[i]
            gc[ng] = 0
            gH[ng] = H
            ng += 1
            prev = pos_scores[i]
        g = ng - 1
        gc[g] += 1
        H += 1
        for kind in range(3):
            gG[g, kind] += _gain(vals[i], kind)
    only_pos = n_neg == 0
    ideal = (_ideal_gains(vals, 0), _ideal_gains(vals, 1), _ideal_gains(vals, 2))
    for kc in range(1, K + 1):
        if not cumulative and kc < K:
            continue
        col = kc - 1 if cumulative else 0
        hits = 0.0
        ap = 0.0
        dcg = np.zeros(3)
        p_none = 1.0
        rr = 0.0
        rr_done = False
        for g in range(ng):
            a = ga[g]
            t = gt_[g]
            c = gc[g]
            if a >= kc:
                break
            w = min(kc - a, t)
            hits += c * w / t
            for j in range(1, w + 1):
                before = (c - 1) * (j - 1) / (t - 1) if t > 1 else 0.0
                ap += c / t * (gH[g] + 1.0 + before) / (a + j)
                disc = 1.0 / np.log2(a + j + 1.0)
                for kind in range(3):
                    dcg[kind] += gG[g, kind] / t * disc
            # P(no positive of this group in its w top positions) = C(t-c, w) / C(t, w)
            q = 1.0
            for x in range(w):
                q *= max(t - c - x, 0) / (t - x)
            p_none *= q
            if not rr_done:
                # first positive of the first group: P(J = j) = C(t-j, c-1) / C(t, c)
                pj = c / t
                for j in range(1, t - c + 2):
                    if a + j > kc:
                        break
                    rr += pj / (a + j)
                    pj *= (t - j - c + 1) / (t - j) if t - j > 0 else 0.0
                rr_done = True
        ndcg = np.full(3, np.nan)
        for kind in range(3):
            if ideal[kind].shape[0] > 0:
                idcg = 0.0
                for j in range(min(kc, ideal[kind].shape[0])):
                    idcg += ideal[kind][j] / np.log2(j + 2.0)
                ndcg[kind] = dcg[kind] / idcg
        # the in-list AUC has no expectation implemented: NaN (evaluate() refuses to ask for it)
        _put_topk(out, slots, u, col, kc, n_pos, only_pos, pool <= kc, hits, ap, ndcg,
                  1.0 - p_none, rr, np.nan)
    if full_ranks:
        roc = np.nan
        pr = np.nan
        mpr = np.nan
        if not only_pos:
            good = 0.0
            acc = 0.0
            wsum = 0.0
            psum = 0.0
            for g in range(ng):
                a = ga[g]
                t = gt_[g]
                c = gc[g]
                neg_above = a - gH[g]
                neg_tied = t - c
                good += c * ((n_neg - neg_above - neg_tied) + 0.5 * neg_tied)
                for j in range(1, t + 1):
                    before = (c - 1) * (j - 1) / (t - 1) if t > 1 else 0.0
                    acc += c / t * (gH[g] + 1.0 + before) / (a + j)
            roc = good / (n_pos * float(n_neg))
            pr = acc / n_pos
            # MPR: a member of a tie has expected rank a + (t + 1) / 2
            gi = 0
            for idx in range(n_pos):
                i = order[idx]
                while gi + 1 < ng and gH[gi + 1] <= idx:
                    gi += 1
                exp_rank = ga[gi] + (gt_[gi] + 1.0) / 2.0
                wsum += vals[i]
                psum += vals[i] * (exp_rank - 1.0) / (pool - 1.0)
            mpr = psum / wsum if wsum > 0 else np.nan
        _put_whole(roc, pr, mpr, wslots, whole_out, u)


@njit(cache=True)
def _policy_ranks(pos_scores, vals, gt, eq, tie_mode, ranks, rvals):
    """Ranks under the optimistic (tied positives first, higher value first) or pessimistic
    (tied negatives first, then positives by lower value first) policy."""
    n_pos = pos_scores.shape[0]
    order = _order_positives(pos_scores, vals, tie_mode == TIE_OPTIMISTIC)
    idx = 0
    while idx < n_pos:
        end = idx
        while end + 1 < n_pos and pos_scores[order[end + 1]] == pos_scores[order[idx]]:
            end += 1
        c = end - idx + 1
        for q in range(idx, end + 1):
            i = order[q]
            r = gt[i] + 1 + (q - idx)
            if tie_mode == TIE_PESSIMISTIC:
                r += eq[i] - c
            ranks[q] = r
            rvals[q] = vals[i]
        idx = end + 1


@njit(cache=True)
def _topk_items(s, seed, u, tie_mode, tr_idx, t0, t1, K, topk_row):
    """The K best pool items of ``s`` in ranking order (-1 padded when the pool is smaller).

    Ties are ordered by the noise key (noise), the item index descending (index_desc) or the item
    index (every other policy).
    Returns the number of pool items tied with the score of an item of the list, counting every
    member of a tie that includes a listed item.
    """
    hs = np.empty(K, dtype=s.dtype)
    hi = np.empty(K, dtype=np.int64)
    size = 0
    mode = tie_mode if tie_mode in (TIE_NOISE, TIE_INDEX_DESC) else TIE_INDEX
    for j in range(s.shape[0]):
        x = s[j]
        if size == K and x < hs[0]:
            continue
        if x == -np.inf and _in_sorted(tr_idx, t0, t1, j):
            continue
        if size == K:
            # replace the root when j beats it
            if x == hs[0] and not _beats(seed, u, mode, j, hi[0]):
                continue
            pos = 0
            hs[0] = x
            hi[0] = j
            # sift down (min-heap by "worse first")
            while True:
                left = 2 * pos + 1
                if left >= size:
                    break
                child = left
                right = left + 1
                if right < size and _worse(hs[right], hi[right], hs[left], hi[left], seed, u,
                                           mode):
                    child = right
                if _worse(hs[child], hi[child], hs[pos], hi[pos], seed, u, mode):
                    hs[pos], hs[child] = hs[child], hs[pos]
                    hi[pos], hi[child] = hi[child], hi[pos]
                    pos = child
                else:
                    break
        else:
            pos = size
            hs[pos] = x
            hi[pos] = j
            size += 1
            while pos > 0:
                parent = (pos - 1) >> 1
                if _worse(hs[pos], hi[pos], hs[parent], hi[parent], seed, u, mode):
                    hs[pos], hs[parent] = hs[parent], hs[pos]
                    hi[pos], hi[parent] = hi[parent], hi[pos]
                    pos = parent
                else:
                    break
    # extract in best-first order
    order = np.arange(size)
    for a in range(1, size):
        o = order[a]
        b = a - 1
        while b >= 0 and _worse(hs[order[b]], hi[order[b]], hs[o], hi[o], seed, u, mode):
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = o
    for r in range(K):
        topk_row[r] = hi[order[r]] if r < size else -1
    if size == 0:
        return 0
    # ties with listed items: scores above the lowest listed score are all in the list
    low = hs[order[size - 1]]
    tied = 0
    r = 0
    while r < size:
        e = r
        while e + 1 < size and hs[order[e + 1]] == hs[order[r]]:
            e += 1
        cnt = e - r + 1
        if hs[order[r]] == low:
            cnt = 0
            for j in range(s.shape[0]):
                cnt += s[j] == low
            if low == -np.inf:
                cnt -= t1 - t0
        if cnt > 1:
            tied += cnt
        r = e + 1
    return tied


@njit(cache=True, inline="always")
def _worse(xa, ia, xb, ib, seed, u, mode):
    """Whether item ``ia`` (score ``xa``) ranks after item ``ib`` (score ``xb``)."""
    if xa != xb:
        return xa < xb
    return _beats(seed, u, mode, ib, ia)


@njit(cache=True)
def _eval_user(s, u, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative, slots, wslots,
               full_ranks, tie_mode, seed, want_topk, out, whole_out, reason, topk, n_tied):
    """Evaluate user ``u`` whose scores are ``s`` (modified in place: train items are masked).

    ``out`` receives the @k metrics, ``whole_out`` the whole-ranking ones; ``reason[u]`` receives
    NAN_SCORE or ALL_EQUAL when the user is found undefined here; when ``want_topk``, ``topk[u]``
    receives the user's top-K items and ``n_tied[u]`` the number of pool items tied with them.
    """
    exact_ties = tie_mode == TIE_NOISE or tie_mode == TIE_INDEX or tie_mode == TIE_INDEX_DESC
    stop_at = 0 if full_ranks else K
    t0 = tr_ptr[u]
    t1 = tr_ptr[u + 1]
    n_train = t1 - t0
    pool = n_items - n_train
    # positives' scores are read before train items are masked (they are disjoint)
    p0 = te_ptr[u]
    n_pos = te_ptr[u + 1] - p0
    pos_scores = np.empty(n_pos, dtype=s.dtype)
    vals = np.empty(n_pos, dtype=np.float64)
    any_neg_inf = False
    for i in range(n_pos):
        pos_scores[i] = s[te_idx[p0 + i]]
        vals[i] = te_val[p0 + i]
        if pos_scores[i] == -np.inf:
            any_neg_inf = True
    # a NaN anywhere in the pool makes the user undefined; train items do not count
    for t in range(t0, t1):
        s[tr_idx[t]] = -np.inf
    if _count_nan(s) > 0:
        reason[u] = NAN_SCORE
        return
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
        return
    if want_topk:
        n_tied[u] = _topk_items(s, seed, u, tie_mode, tr_idx, t0, t1, K, topk[u])
    if tie_mode == TIE_AVERAGE:
        fill_average(pos_scores, vals, gt, eq, n_pos, pool - n_pos, pool, K, cumulative,
                     slots, full_ranks, wslots, out, whole_out, u)
        return
    ranks = np.empty(n_pos, dtype=np.int64)
    rvals = np.empty(n_pos, dtype=np.float64)
    if exact_ties:
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
            rvals[i] = vals[i]
        _sort_by_rank(ranks, rvals)
    else:
        _policy_ranks(pos_scores, vals, gt, eq, tie_mode, ranks, rvals)
        _sort_by_rank(ranks, rvals)
    fill_metrics(ranks, rvals, n_pos, pool - n_pos, pool, K, cumulative, slots, out, u)
    if full_ranks:
        fill_whole(ranks, rvals, n_pos, pool - n_pos, pool, wslots, whole_out, u)


@njit(parallel=True, cache=True)
def block_metrics(S, rows, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative,
                  slots, wslots, full_ranks, tie_mode, seed, want_topk, out, whole_out, reason,
                  topk, n_tied):
    """Evaluate the users ``rows`` whose scores are the rows of ``S``, in parallel over users."""
    for b in prange(rows.shape[0]):
        _eval_user(S[b], rows[b], tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative,
                   slots, wslots, full_ranks, tie_mode, seed, want_topk, out, whole_out, reason,
                   topk, n_tied)


@njit(nogil=True, cache=True)
def block_metrics_serial(S, rows, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative,
                         slots, wslots, full_ranks, tie_mode, seed, want_topk, out, whole_out,
                         reason, topk, n_tied):
    """The same on one thread, without the GIL: the driver runs one block per worker thread, each
    scoring its block with single-threaded BLAS first (no BLAS threads spinning beside numba's)."""
    for b in range(rows.shape[0]):
        _eval_user(S[b], rows[b], tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K, cumulative,
                   slots, wslots, full_ranks, tie_mode, seed, want_topk, out, whole_out, reason,
                   topk, n_tied)


@njit(parallel=True, cache=True)
def ranked_list_metrics(lists, rows, tr_ptr, tr_idx, te_ptr, te_idx, te_val, n_items, K,
                        cumulative, slots, out):
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
        vals = te_val[p0:p0 + n_pos].copy()
        pos_rank = 0
        for r in range(L):
            item = lists[u, r]
            if item < 0 or _in_sorted(tr_idx, t0, t1, item):
                continue
            pos_rank += 1
            if pos_rank > K:
                break
            lo = _lower_bound(te_idx, p0, p0 + n_pos, item)
            if lo < p0 + n_pos and te_idx[lo] == item and ranks[lo - p0] > K:
                ranks[lo - p0] = pos_rank
        _sort_by_rank(ranks, vals)
        fill_metrics(ranks, vals, n_pos, pool - n_pos, pool, K, cumulative, slots, out, u)
