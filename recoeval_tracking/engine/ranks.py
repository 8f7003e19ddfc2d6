"""Ranks of a user's positives in the pool, without sorting the pool; the top-K list.

For positive ``i`` with score ``s_i`` among the user's pool (the items not in train),

.. math::

    r_i = 1 + \\#\\{j : s_j > s_i\\} + \\#\\{j \\ne i : s_j = s_i,\\ j \\text{ beats } i\\},

so every rank follows from two counts per positive, ``gt_i = #{j : s_j > s_i}`` and
``eq_i = #{j : s_j = s_i}`` (``i`` included), and from the tie rule. This module computes them
(:func:`counts`: a branch-free chunked scan that stops once a count passes ``K``, or a binary
search of every item among the sorted positives when there are many; a ``-inf`` positive's ties
then lose the masked train items), turns them into ranks under each tie policy
(:func:`user_ranks`); :mod:`.topk` builds the top-K list.

Train items are masked to ``-inf`` in the score row before any count, so they rank below every
pool item; they only tie with a ``-inf`` positive, whose tie count takes them off again.

This module imports numpy and numba only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import Tie

# The codes as plain module-level ints: numba reads them as compile-time constants.
TIE_NOISE, TIE_INDEX, TIE_OPTIMISTIC, TIE_PESSIMISTIC, TIE_AVERAGE, TIE_INDEX_DESC = (
    int(Tie.NOISE),
    int(Tie.INDEX),
    int(Tie.OPTIMISTIC),
    int(Tie.PESSIMISTIC),
    int(Tie.AVERAGE),
    int(Tie.INDEX_DESC),
)
TIE_WARPREC = int(Tie.WARPREC)
#: The tie rules that order every tied item (a seeded key, the item index either way): the
#: positives' exact ranks and the top-K list follow them; every other policy lists tied items
#: by index.
TOTAL_ORDERS = (TIE_NOISE, TIE_INDEX, TIE_INDEX_DESC, TIE_WARPREC)

#: Items counted between two checks of the early stop.
_CHUNK = 1024
#: From this many positives the binary search beats one scan per positive.
_BINARY_SEARCH_MIN_POS = 48
#: Runs sorted by insertion before :func:`stable_order` merges them.
_RUN = 16


# -- tie keys -------------------------------------------------------------------------------------


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


# WarpRec 2.2.8's tie keys (warprec/data/ranking.py: ``_fmix32_``, ``_tie_keys``), in unsigned
# 32-bit arithmetic held in uint64 (every product is taken modulo 2**32, as torch's int32 wraps).
_M32 = np.uint64(0xFFFFFFFF)
_FMIX_1 = np.uint64(0x85EBCA6B)
_FMIX_2 = np.uint64(0xC2B2AE35)
_GOLDEN = np.uint64(0x9E3779B1)
_KEY_SHIFT = np.uint64(32 - 30)  # WarpRec's _KEY_BITS = 30: the hash's top 30 bits


@njit(cache=True, inline="always")
def _fmix32(h):
    """MurmurHash3's 32-bit finaliser of ``h`` (a uint64 below 2**32)."""
    h ^= h >> np.uint64(16)
    h = (h * _FMIX_1) & _M32
    h ^= h >> np.uint64(13)
    h = (h * _FMIX_2) & _M32
    return h ^ (h >> np.uint64(16))


@njit(cache=True, inline="always")
def warprec_key(seed, user, item):
    """WarpRec's tie key of (user, item): larger keys rank first among tied scores.

    .. math::

        key = f(f(f(u \\cdot g \\oplus \\sigma)) \\oplus f(i \\cdot g + 1)) \\gg 2,

    with :math:`f` MurmurHash3's 32-bit finaliser, :math:`g` = ``0x9E3779B1``, arithmetic modulo
    :math:`2^{32}`, :math:`\\sigma` the seed folded to 32 bits (``seed ^ seed >> 32``): a 30-bit
    key, as ``_tie_keys`` of WarpRec 2.2.8 (warprec/data/ranking.py) computes for its
    Evaluator's ``top_k_breaking_ties`` from the seed of its tie generator (42 by default), the
    user's and the item's indices.
    """
    s = np.uint64(seed)
    folded = (s ^ (s >> np.uint64(32))) & _M32
    up = ((np.uint64(user) * _GOLDEN) & _M32) ^ folded
    up = _fmix32(_fmix32(up))
    ip = _fmix32(((np.uint64(item) * _GOLDEN) + np.uint64(1)) & _M32)
    return _fmix32(up ^ ip) >> _KEY_SHIFT


@njit(cache=True)
def _beats(seed, user, tie_mode, j, i):
    """Whether item ``j`` ranks before item ``i`` when both have the same score: by index, or
    by the larger key (``noise``: :func:`tie_key`, ``warprec``: :func:`warprec_key`), equal keys
    by index."""
    if tie_mode == TIE_INDEX:
        return j < i
    if tie_mode == TIE_INDEX_DESC:
        return j > i
    if tie_mode == TIE_WARPREC:
        kj = warprec_key(seed, user, j)
        ki = warprec_key(seed, user, i)
    else:
        kj = tie_key(seed, user, j)
        ki = tie_key(seed, user, i)
    if kj != ki:
        return kj > ki
    return j < i


@njit(cache=True)
def _worse(xa, ia, xb, ib, seed, u, mode):
    """Whether item ``ia`` (score ``xa``) ranks after item ``ib`` (score ``xb``)."""
    if xa != xb:
        return xa < xb
    return _beats(seed, u, mode, ib, ia)


# -- sorted-array search --------------------------------------------------------------------------


@njit(cache=True, inline="always")
def lower_bound(a, lo, hi, x):
    """First position in the sorted slice ``a[lo:hi]`` whose value is not below ``x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def in_sorted(a, lo, hi, item):
    """Whether ``item`` is in the sorted slice ``a[lo:hi]`` (a user's train row)."""
    pos = lower_bound(a, lo, hi, item)
    return pos < hi and a[pos] == item


# -- greater / equal counts -----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _count_chunk(s, start, stop, p):
    """``(#{j in [start, stop) : s_j > p}, #{... : s_j = p})``.

    The loop runs over a slice from index 0: indexing ``s`` with ``start + t`` would make numba
    check every index for a negative value (wraparound), which keeps LLVM from vectorising the
    loop (measured 18.4 against 2.4 us per 20,000 float32 scores in chunks of 1,024)."""
    v = s[start:stop]
    gt = 0
    eq = 0
    for j in range(v.shape[0]):
        x = v[j]
        gt += x > p
        eq += x == p
    return gt, eq


@njit(cache=True, inline="always")
def count_nonfinite(s):
    """The number of NaN and +-inf entries of ``s`` (``x - x`` is NaN exactly for those)."""
    c = 0
    for j in range(s.shape[0]):
        d = s[j] - s[j]
        c += d != d
    return c


@njit(cache=True, inline="always")
def count_nan(s):
    """The number of NaN entries of ``s``."""
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
    order = stable_order(pos_scores.astype(np.float64))  # one compiled sort for every key
    q = np.empty(npos, dtype=pos_scores.dtype)
    for t in range(npos):
        q[t] = pos_scores[order[t]]
    counts_by_search_into(
        s,
        q,
        order,
        np.empty(npos + 1, dtype=np.int64),
        np.empty(npos + 1, dtype=np.int64),
        np.empty(npos, dtype=np.int64),
        gt,
        eq,
    )


@njit(cache=True)
def counts_by_search_into(s, q, order, hist, eqh, gts, gt, eq):
    """:func:`_counts_by_search` given the positives' scores ascending ``q = pos_scores[order]``
    and the caller's scratch (``hist`` and ``eqh``: ``n_pos + 1`` int64, ``gts``: ``n_pos``). It
    allocates nothing, so a GPU kernel compiles it as a device function (:mod:`.cuda_kernels`)."""
    npos = q.shape[0]
    for t in range(npos + 1):
        hist[t] = 0
        eqh[t] = 0
    for j in range(s.shape[0]):
        x = s[j]
        lo = lower_bound(q, 0, npos, x)  # the number of positives strictly below x
        hist[lo] += 1
        if lo < npos and q[lo] == x:
            eqh[lo] += 1
    # gt for sorted position t = #items with c > t
    acc = 0
    for t in range(npos - 1, -1, -1):
        acc += hist[t + 1]
        gts[t] = acc
    first = 0
    for t in range(npos):
        if t > 0 and q[t] != q[t - 1]:
            first = t
        gt[order[t]] = gts[t]
        eq[order[t]] = eqh[first]


@njit(cache=True, inline="always")
def counts(s, u, pos_scores, any_neg_inf, train, plan, gt, eq):
    """Fill ``gt[i] = #{j in pool : s_j > p_i}`` and ``eq[i] = #{j in pool : s_j = p_i}``.

    Parameters
    ----------
    s : float array (n_items,)
        The scores of user ``u``, train items already masked to ``-inf``.
    u : int
    pos_scores : float array (n_pos,)
        The positives' scores ``p_i``.
    any_neg_inf : bool
        Whether some ``p_i`` is ``-inf``: it ties with the ``t1 - t0`` masked train items too,
        which the count over the row includes and which are taken off its ``eq`` here.
    train : records.Csr
        The train matrix (its row ``u`` is not in the pool).
    plan : records.Plan
        Without ``plan.full_ranks`` a count may stop once ``gt[i] >= plan.K`` (the positive is
        beyond K; its ``eq`` is then partial, floored at 0).
    gt, eq : int64 arrays (n_pos,)
        Filled in place.
    """
    n_pos = pos_scores.shape[0]
    n_items = s.shape[0]
    if n_pos >= _BINARY_SEARCH_MIN_POS and (plan.full_ranks or n_pos * _CHUNK > n_items * 4):
        _counts_by_search(s, pos_scores, gt, eq)
    else:
        _counts_by_scan(s, pos_scores, 0 if plan.full_ranks else plan.K, gt, eq)
    if any_neg_inf:
        _off_train(pos_scores, train.ptr[u + 1] - train.ptr[u], eq)


@njit(cache=True, inline="always")
def counts_topk(s, u, pos_scores, any_neg_inf, train, plan, gt, eq):
    """:func:`counts` for the @k metrics alone (``plan.full_ranks`` False): always the scan that
    stops once a count reaches ``plan.K``, never the binary search (the two give the same
    counts below K; the scan compiles without the search's sort)."""
    _counts_by_scan(s, pos_scores, plan.K, gt, eq)
    if any_neg_inf:
        _off_train(pos_scores, train.ptr[u + 1] - train.ptr[u], eq)


@njit(cache=True, inline="always")
def _off_train(pos_scores, n_train, eq):
    """Take the ``n_train`` masked train items (at ``-inf``) off the tie count of each ``-inf``
    positive: they are counted over the row, and are not in the pool. A count stopped early may
    have seen only some of them: it is floored at 0 (it is not read beyond K)."""
    for i in range(pos_scores.shape[0]):
        if pos_scores[i] == -np.inf:
            eq[i] = max(eq[i] - n_train, 0)


# -- ranks under each tie policy ------------------------------------------------------------------


@njit(cache=True)
def stable_order(keys):
    """The indices that sort ``keys`` ascending, equal keys in their original order: runs of
    ``_RUN`` sorted by insertion, then merged bottom-up. The same order as
    ``np.argsort(keys, kind="stable")`` for keys without NaN; numba compiles it in a fraction of
    the time of its own sorts (which also carry their error messages' string formatting)."""
    n = keys.shape[0]
    a = np.arange(n)
    b = np.empty(n, dtype=np.int64)
    for lo in range(0, n, _RUN):
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            o = a[i]
            j = i - 1
            while j >= lo and keys[a[j]] > keys[o]:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = o
    width = _RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                if j >= hi or (i < mid and keys[a[i]] <= keys[a[j]]):
                    b[k] = a[i]
                    i += 1
                else:
                    b[k] = a[j]
                    j += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True)
def sort_by_rank(ranks, vals):
    """Sort ``ranks`` ascending, stably (insertion sort for small arrays), carrying ``vals``."""
    n = ranks.shape[0]
    if n > 32:
        order = stable_order(ranks.astype(np.float64))  # exact: ranks < 2**53
        r2 = np.empty(n, dtype=ranks.dtype)
        v2 = np.empty(n, dtype=vals.dtype)
        for t in range(n):
            r2[t] = ranks[order[t]]
            v2[t] = vals[order[t]]
        for t in range(n):
            ranks[t] = r2[t]
            vals[t] = v2[t]
        return
    insertion_sort_pairs(ranks, vals, n)


@njit(cache=True, inline="always")
def insertion_sort_pairs(keys, vals, n):
    """Sort ``keys[:n]`` ascending in place, stably, carrying ``vals[:n]`` along. It allocates
    nothing, so a GPU kernel compiles it as a device function (:mod:`.cuda_kernels`)."""
    for a in range(1, n):
        r = keys[a]
        v = vals[a]
        b = a - 1
        while b >= 0 and keys[b] > r:
            keys[b + 1] = keys[b]
            vals[b + 1] = vals[b]
            b -= 1
        keys[b + 1] = r
        vals[b + 1] = v


@njit(cache=True)
def order_positives(pos_scores, vals, descending_vals):
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
def _policy_ranks(pos_scores, vals, gt, eq, tie_mode, ranks, rvals):
    """Ranks under the optimistic (tied positives first, higher value first) or pessimistic
    (tied negatives first, then positives by lower value first) policy.

    A complete count has ``eq >= c`` (the tie holds its ``c`` positives). A count stopped early
    (``gt`` already >= K, top-K metrics only) may have seen only part of the tie, so the
    pessimistic shift ``eq - c`` is floored at 0: the rank stays above ``gt`` >= K."""
    n_pos = pos_scores.shape[0]
    order = order_positives(pos_scores, vals, tie_mode == TIE_OPTIMISTIC)
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
                r += max(eq[i] - c, 0)
            ranks[q] = r
            rvals[q] = vals[i]
        idx = end + 1


@njit(cache=True, inline="always")
def _exact_ranks(s, u, pos_scores, vals, gt, eq, train, test, plan, ranks, rvals):
    """Ranks under a total order of the tied items (a seeded key, item index, or index descending):
    a positive tied with others counts the pool items that beat it. Beyond K (without
    ``full_ranks``) the rank only has to exceed K, and ``gt + 1`` already does."""
    n_items = s.shape[0]
    t0 = train.ptr[u]
    t1 = train.ptr[u + 1]
    p0 = test.ptr[u]
    for i in range(pos_scores.shape[0]):
        item = test.idx[p0 + i]
        r = gt[i] + 1
        if eq[i] > 1 and (plan.full_ranks or gt[i] < plan.K):
            p = pos_scores[i]
            for j in range(n_items):
                if (
                    s[j] == p
                    and j != item
                    and _beats(plan.seed, u + plan.user_base, plan.tie_mode, j, item)
                ):
                    # a masked train item only ties with a -inf positive: skip it
                    if p == -np.inf and in_sorted(train.idx, t0, t1, j):
                        continue
                    r += 1
        ranks[i] = r
        rvals[i] = vals[i]


@njit(cache=True, inline="always")
def user_ranks(s, u, pos_scores, vals, gt, eq, train, test, plan, ranks, rvals):
    """The positives' ranks sorted ascending, with their test values, under ``plan.tie_mode``.

    Parameters
    ----------
    s : float array (n_items,)
        The scores of user ``u`` (train items masked).
    u : int
        The user's row (it seeds the noise key).
    pos_scores, vals : arrays (n_pos,)
        The positives' scores and test values, in the order of the user's test row.
    gt, eq : int64 arrays (n_pos,)
        From :func:`counts`.
    train, test : records.Csr
    plan : records.Plan
    ranks : int64 array (n_pos,)
        Receives the 1-based ranks, ascending: exact up to K, any value > K beyond it unless
        ``plan.full_ranks``.
    rvals : float64 array (n_pos,)
        Receives the test value of each rank's positive.
    """
    tie_mode = plan.tie_mode
    if tie_mode in TOTAL_ORDERS:
        _exact_ranks(s, u, pos_scores, vals, gt, eq, train, test, plan, ranks, rvals)
    else:
        _policy_ranks(pos_scores, vals, gt, eq, tie_mode, ranks, rvals)
    sort_by_rank(ranks, rvals)
