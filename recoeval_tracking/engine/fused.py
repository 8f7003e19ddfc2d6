"""The fused pass for factor models: score a cache-sized tile, merge it while it is hot.

For ``s_ui = <A_u, B_i>`` the driver need not write a block of scores to memory and stream it
back (:mod:`.kernels`). Here a block of ``bu`` users is scored one item tile at a time
(``bu x w`` scores, about 512 KB, kept in L2) by BLAS called from the compiled loop, and each
user's row of the tile (a few KB, in L1) is merged into the user's running state before the next
tile is scored, as FAISS's CPU brute-force search does:

* train items of the tile are masked to ``-inf`` (they leave the pool); a NaN in the pool marks
  the user undefined;
* a bounded heap per user keeps the best ``K`` items seen so far (ties by the policy's key) and
  ``c_root``, the number of items seen outside the heap that tie with its root. At the end the
  heap is the top-K list, ``theta`` its lowest score and ``c_root`` plus the listed items at
  ``theta`` the exact number of pool items tied at ``theta``;
* with whole-ranking metrics, every positive's ``gt`` and ``eq`` (pool items above and tied with
  it) and, under a total tie order, the tied items that beat it, accumulate over the tiles.

Top-K metrics need no count: a positive of rank ``<= K`` is in the list, at its rank; under the
optimistic, pessimistic and average policies ``gt`` and ``eq`` of a positive scoring
``>= theta`` are counts of the list (plus ``c_root`` at ``theta``), and a positive below
``theta`` has ``gt >= K`` (it is beyond K under every policy). Whole-ranking counts need the
positives' scores before their tiles come: they are scored first by one more GEMM of the same
shape, and each is checked against its tile's value; on any difference the block runs again
with the tiles' values (a guard; BLAS's main kernel computes an element the same way wherever
it sits, so it does not fire in practice).

The same writers as the block path (:mod:`.fill`) turn ranks or counts into metrics, so every
tie policy, NaN rule and cutoff keeps its meaning. Each user's state and results depend only on
its own scores: never on the block, the tile or the thread.

This module imports numpy and numba only (numba's ``np.dot`` calls SciPy's BLAS).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from .fused_end import _heap_mode, finish_user
from .ranks import (
    TIE_INDEX,
    TIE_INDEX_DESC,
    TIE_NOISE,
    _beats,
    _worse,
    count_nan,
    in_sorted,
    lower_bound,
)

#: From this many positives a binary search per item beats one vectorised pass per positive.
_SEARCH_MIN_POS = 48
#: Items checked at once against the heap's root by one vectorised count.
_SPAN = 64
#: The fewest columns of the GEMM that scores the positives.
_MIN_POS_COLS = 256
#: Users scored together against their positives.
_POS_ROWS = 64

#: The running state of one block, one row (or one stretch of positives) per user:
#:
#: * ``hs``, ``hi`` (``(bu, K)``): each user's heap of scores and items; ``size``, ``c_root``;
#: * ``nan`` (bool): a NaN met in the pool; ``trp`` / ``tep``: the next train / test entry;
#: * ``poff``: the offset of the user's positives in ``pos`` (their scores read from the tiles),
#:   ``pre`` (the scores counted against), ``gt``, ``eq`` and ``beat`` (tied items that beat
#:   the positive under a total order); ``order`` (``(bu, K)``): the heap's ranking order.
State = namedtuple("State", ["hs", "hi", "size", "c_root", "nan", "trp", "tep", "poff", "pos",
                             "pre", "gt", "eq", "beat", "order"])


@njit(cache=True)
def _sift_down(hs, hi, size, seed, u, mode):
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= size:
            break
        child = left
        right = left + 1
        if right < size and _worse(hs[right], hi[right], hs[left], hi[left], seed, u, mode):
            child = right
        if not _worse(hs[child], hi[child], hs[pos], hi[pos], seed, u, mode):
            break
        hs[pos], hs[child] = hs[child], hs[pos]
        hi[pos], hi[child] = hi[child], hi[pos]
        pos = child


@njit(cache=True, inline="always")
def _push(x, j, hs, hi, size, seed, u, mode):
    """Add item ``j`` (score ``x``) to a heap that is not full."""
    pos = size
    hs[pos] = x
    hi[pos] = j
    while pos > 0:
        parent = (pos - 1) >> 1
        if not _worse(hs[pos], hi[pos], hs[parent], hi[parent], seed, u, mode):
            break
        hs[pos], hs[parent] = hs[parent], hs[pos]
        hi[pos], hi[parent] = hi[parent], hi[pos]
        pos = parent
    return size + 1


@njit(cache=True)
def _reaches(row, c0, root):
    """Whether an item of ``row[c0:c0 + _SPAN]`` scores ``>= root`` or is NaN."""
    reach = False
    for t in range(_SPAN):
        x = row[c0 + t]
        reach |= (x >= root) | (x != x)
    return reach


@njit(cache=True)
def _heap_scan(row, i0, u, seed, mode, tr_idx, t0, t1, K, hs, hi, size, c_root):
    """Merge the tile row ``row`` (items ``i0 ..``) into the heap (worst item at the root);
    returns the new size and ``c_root``, the number of items seen outside the heap that tie with
    the root's score (masked train items are never seen), or -1 when the row holds a NaN.

    Once the heap is full, a stretch of ``_SPAN`` items is skipped when none reaches the root's
    score, known from one vectorised count (a NaN counts as reaching, so it is always seen)."""
    w = row.shape[0]
    jj = 0
    while size < K and jj < w:
        x = row[jj]
        if x != x:
            return size, -1
        if not (x == -np.inf and in_sorted(tr_idx, t0, t1, i0 + jj)):
            size = _push(x, i0 + jj, hs, hi, size, seed, u, mode)
        jj += 1
    if size < K:
        return size, c_root
    root = hs[0]
    c0 = jj
    while c0 < w:
        c1 = w
        if c0 + _SPAN <= w:
            # a constant trip count: LLVM vectorises it whole
            c1 = c0 + _SPAN
            if not _reaches(row, c0, root):
                c0 = c1
                continue
        for t in range(c0, c1):
            x = row[t]
            if x < root:
                continue
            if x != x:
                return size, -1
            j = i0 + t
            if x == -np.inf and in_sorted(tr_idx, t0, t1, j):
                continue
            if x == root and not _beats(seed, u, mode, j, hi[0]):
                c_root += 1
                continue
            # j replaces the root (score ``root``), which leaves the heap
            hs[0] = x
            hi[0] = j
            _sift_down(hs, hi, size, seed, u, mode)
            c_root = c_root + 1 if hs[0] == root else 0
            root = hs[0]
        c0 = c1
    return size, c_root


@njit(cache=True)
def _tie_beats(row, i0, p, item, u, plan, train):
    """The items of the tile row tied with score ``p`` that beat ``item`` (``item`` excluded;
    masked train items only tie with ``p = -inf`` and are skipped)."""
    t0 = train.ptr[u]
    t1 = train.ptr[u + 1]
    c = 0
    for jj in range(row.shape[0]):
        j = i0 + jj
        if row[jj] == p and j != item and _beats(plan.seed, u, plan.tie_mode, j, item):
            if p == -np.inf and in_sorted(train.idx, t0, t1, j):
                continue
            c += 1
    return c


@njit(cache=True)
def _count4(row, p):
    """``#{j : row_j > p_c}`` and ``#{j : row_j = p_c}`` for the four scores ``p``, in one
    vectorised pass over the row."""
    a, b, c, d = p[0], p[1], p[2], p[3]
    ga = gb = gc = gd = 0
    ea = eb = ec = ed = 0
    for j in range(row.shape[0]):
        x = row[j]
        ga += x > a
        gb += x > b
        gc += x > c
        gd += x > d
        ea += x == a
        eb += x == b
        ec += x == c
        ed += x == d
    return (ga, gb, gc, gd), (ea, eb, ec, ed)


@njit(cache=True)
def _count_tile(row, i0, u, o, n_pos, test, train, plan, st, exact):
    """Add the tile's counts to every positive of user ``u`` (positives at ``o ..`` in the
    state): one vectorised pass per four positives, or one binary search per item when many.
    Without ``plan.full_ranks`` a group of four whose every ``gt`` has reached K is no longer
    counted (its positives are beyond K; the block path stops its counts alike)."""
    stop = 0 if plan.full_ranks else plan.K
    i1 = i0 + row.shape[0]
    p0 = test.ptr[u]
    q_eq = np.empty(0, dtype=np.int64)
    if n_pos >= _SEARCH_MIN_POS:
        q_eq = _count_by_search(row, st.pre[o:o + n_pos], st.gt[o:o + n_pos], st.eq[o:o + n_pos])
    four = np.empty(4, dtype=st.pre.dtype)
    for base in range(0, n_pos, 4):
        m = min(4, n_pos - base)
        if stop > 0 and n_pos < _SEARCH_MIN_POS:
            active = False
            for c in range(m):
                active |= st.gt[o + base + c] < stop
            if not active:
                continue
        if n_pos < _SEARCH_MIN_POS:
            for c in range(4):
                four[c] = st.pre[o + base + min(c, m - 1)]
            g4, e4 = _count4(row, four)
        for c in range(m):
            i = base + c
            if n_pos >= _SEARCH_MIN_POS:
                e = q_eq[i]
            else:
                e = e4[c]
                st.gt[o + i] += g4[c]
                st.eq[o + i] += e
            item = test.idx[p0 + i]
            own = 1 if i0 <= item < i1 else 0
            if exact and e > own:
                st.beat[o + i] += _tie_beats(row, i0, st.pre[o + i], item, u, plan, train)


@njit(cache=True)
def _count_by_search(row, pre, gt, eq):
    """Add ``#{j : row_j > pre_i}`` to ``gt`` and ``#{j : row_j = pre_i}`` to ``eq`` with a
    binary search of each item among the sorted scores; returns the tile's ``eq`` part."""
    npos = pre.shape[0]
    order = np.argsort(pre)
    q = pre[order]
    hist = np.zeros(npos + 1, dtype=np.int64)
    eqh = np.zeros(npos + 1, dtype=np.int64)
    for j in range(row.shape[0]):
        x = row[j]
        lo = lower_bound(q, 0, npos, x)
        hist[lo] += 1
        if lo < npos and q[lo] == x:
            eqh[lo] += 1
    part = np.empty(npos, dtype=np.int64)
    acc = 0
    for t in range(npos - 1, -1, -1):
        acc += hist[t + 1]
        gt[order[t]] += acc
    first = 0
    for t in range(npos):
        if t > 0 and q[t] != q[t - 1]:
            first = t
        eq[order[t]] += eqh[first]
        part[order[t]] = eqh[first]
    return part


@njit(cache=True)
def _merge_row(row, i0, u, b, train, test, plan, st, count):
    """Merge user ``u``'s row of the tile (items ``i0 ..``) into its state ``b``: the heap when
    the top-K list is wanted, the positives' counts when ``count``."""
    if st.nan[b]:
        return
    i1 = i0 + row.shape[0]
    t = st.trp[b]
    t_end = train.ptr[u + 1]
    while t < t_end and train.idx[t] < i1:
        row[train.idx[t] - i0] = -np.inf
        t += 1
    st.trp[b] = t
    q = st.tep[b]
    q_end = test.ptr[u + 1]
    o = st.poff[b]
    p0 = test.ptr[u]
    while q < q_end and test.idx[q] < i1:
        st.pos[o + q - p0] = row[test.idx[q] - i0]
        q += 1
    st.tep[b] = q
    if plan.want_topk:
        size, c = _heap_scan(row, i0, u, plan.seed, _heap_mode(plan.tie_mode), train.idx,
                             train.ptr[u], t_end, plan.K, st.hs[b], st.hi[b], st.size[b],
                             st.c_root[b])
        if c < 0:
            st.nan[b] = True
            return
        st.size[b] = size
        st.c_root[b] = c
    elif count_nan(row) > 0:
        st.nan[b] = True
        return
    if count:
        exact = plan.tie_mode in (TIE_NOISE, TIE_INDEX, TIE_INDEX_DESC)
        _count_tile(row, i0, u, o, q_end - p0, test, train, plan, st, exact)


# -- a block of users, tile by tile ---------------------------------------------------------------

@njit(cache=True)
def _score_positives(Ablk, Bp, users, test, poff, W, pre, tbuf):
    """Score every positive of the block before the sweep: ``pre[poff[b] + i]`` = user ``b`` x
    its positive ``i``, by GEMMs of ``_POS_ROWS`` users against their gathered positives (64 x
    fewer rows than the block wastes less on pairs of one user and another's positive)."""
    bu = Ablk.shape[0]
    nb = users.shape[0]
    G = np.zeros((W, Bp.shape[1]), dtype=Bp.dtype)
    for g0 in range(0, nb, _POS_ROWS):
        g1 = min(g0 + _POS_ROWS, nb)
        rows = min(_POS_ROWS, bu - g0)
        P0 = poff[g0]
        P = poff[g1] - P0
        # a multiple of 64 columns, and not so few that BLAS takes its small-matrix kernel
        Wp = min(W, max(_MIN_POS_COLS, (P + 63) // 64 * 64))
        T = tbuf[:rows * Wp].reshape((rows, Wp))
        for c0 in range(P0, P0 + P, Wp):
            c1 = min(c0 + Wp, P0 + P)
            for b in range(g0, g1):
                p0 = test.ptr[users[b]]
                for k in range(max(poff[b], c0), min(poff[b + 1], c1)):
                    G[k - c0] = Bp[test.idx[p0 + k - poff[b]]]
            np.dot(Ablk[g0:g0 + rows], G[:Wp].T, T)
            for b in range(g0, g1):
                for k in range(max(poff[b], c0), min(poff[b + 1], c1)):
                    pre[k] = T[b - g0, k - c0]


@njit(cache=True)
def _sweep(Ablk, Bp, W, users, train, test, plan, st, tbuf, count):
    """Score the block tile by tile and merge each user's row of the tile while it is hot."""
    bu = Ablk.shape[0]
    n = plan.n_items
    T = tbuf.reshape((bu, W))
    for i0 in range(0, n, W):
        np.dot(Ablk, Bp[i0:i0 + W].T, T)
        w = min(W, n - i0)
        for b in range(users.shape[0]):
            _merge_row(T[b, :w], i0, users[b], b, train, test, plan, st, count)


@njit(cache=True)
def _new_state(users, train, test, K, dtype_of):
    nb = users.shape[0]
    poff = np.zeros(nb + 1, dtype=np.int64)
    for b in range(nb):
        poff[b + 1] = poff[b] + test.ptr[users[b] + 1] - test.ptr[users[b]]
    P = poff[nb]
    trp = np.empty(nb, dtype=np.int64)
    tep = np.empty(nb, dtype=np.int64)
    for b in range(nb):
        trp[b] = train.ptr[users[b]]
        tep[b] = test.ptr[users[b]]
    return State(np.empty((nb, K), dtype=dtype_of.dtype), np.empty((nb, K), dtype=np.int64),
                 np.zeros(nb, dtype=np.int64), np.zeros(nb, dtype=np.int64),
                 np.zeros(nb, dtype=np.bool_), trp, tep, poff,
                 np.empty(P, dtype=dtype_of.dtype), np.empty(P, dtype=dtype_of.dtype),
                 np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.empty((nb, K), dtype=np.int64))


@njit(cache=True)
def _mismatch(st):
    """Whether a positive's score read in its tile differs from the one counted against."""
    for b in range(st.nan.shape[0]):
        if st.nan[b]:
            continue
        for k in range(st.poff[b], st.poff[b + 1]):
            if st.pre[k] != st.pos[k]:
                return True
    return False


@njit(cache=True)
def fused_block(A, Bp, W, users, train, test, plan, outs, tbuf, abuf):
    """Evaluate the users ``users`` (at most ``len(abuf) // Bp.shape[1]``) of a factor model.

    ``A`` (m x p) are the user factors, ``Bp`` the item factors (with the item biases as a last
    column when ``Bp`` has one more column than ``A``; a column of ones then extends ``A``),
    zero-padded to a multiple of ``W`` rows; ``tbuf`` and ``abuf`` are the tile and the gathered
    user factors, reused from block to block.
    """
    p = A.shape[1]
    pB = Bp.shape[1]
    bu = abuf.shape[0] // pB
    Ablk = abuf.reshape((bu, pB))
    Ablk[:] = 0
    for b in range(users.shape[0]):
        Ablk[b, :p] = A[users[b]]
        if pB > p:
            Ablk[b, p] = 1
    # counts per positive for whole-ranking metrics, and for top-K metrics unless the top-K
    # list is built anyway (the ranks then come from the list)
    count = plan.full_ranks or not plan.want_topk
    st = _new_state(users, train, test, plan.K, tbuf)
    if count:
        _score_positives(Ablk, Bp, users, test, st.poff, W, st.pre, tbuf)
    _sweep(Ablk, Bp, W, users, train, test, plan, st, tbuf, count)
    if count and _mismatch(st):
        pos = st.pos.copy()
        st = _new_state(users, train, test, plan.K, tbuf)
        st.pre[:] = pos
        _sweep(Ablk, Bp, W, users, train, test, plan, st, tbuf, count)
    for b in range(users.shape[0]):
        finish_user(users[b], b, train, test, plan, st, outs)


@njit(parallel=True, cache=True)
def fused_metrics(A, Bp, W, rows, train, test, plan, outs, bu, n_workers):
    """Evaluate the users ``rows`` of a factor model in blocks of ``bu`` users, the blocks dealt
    to ``n_workers`` threads (each keeps its own tile buffers). BLAS must run on one thread."""
    nb = (rows.shape[0] + bu - 1) // bu
    nw = max(1, min(n_workers, nb))
    for w in prange(nw):
        tbuf = np.empty(bu * W, dtype=Bp.dtype)
        abuf = np.empty(bu * Bp.shape[1], dtype=Bp.dtype)
        for blk in range(w, nb, nw):
            users = rows[blk * bu:min((blk + 1) * bu, rows.shape[0])]
            fused_block(A, Bp, W, users, train, test, plan, outs, tbuf, abuf)
