"""The top-K list of a user's pool: a bounded heap over the score row, ties by the policy's key.

:func:`topk_items` (and :func:`topk_into`, which allocates nothing, so that a GPU kernel compiles
it as a device function) returns each user's ``K`` best pool items in ranking order and the
number of pool items tied with a listed item. The scan rejects 64 items at a time by one
vectorised count against the heap's root. Train items are masked to ``-inf`` in the row before
the scan (:mod:`.kernels`), so they only tie with a ``-inf`` item, the one case that looks them
up.

This module imports numpy and numba only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .ranks import TIE_INDEX, TOTAL_ORDERS, _beats, _worse, in_sorted

#: Items the top-K scan checks against the heap's root at once.
_SPAN = 64


@njit(cache=True)
def _best_first(hs, hi, size, seed, u, mode, order):
    """Write to ``order[:size]`` the positions of the heap's items in ranking order (insertion
    sort of at most K items)."""
    for a in range(size):
        order[a] = a
    for a in range(1, size):
        o = order[a]
        b = a - 1
        while b >= 0 and _worse(hs[order[b]], hi[order[b]], hs[o], hi[o], seed, u, mode):
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = o


@njit(cache=True)
def n_tied_with_list(hs, order, size, at_low):
    """The number of pool items tied with the score of a listed item, counting every member of a
    tie that includes a listed item: ``at_low`` pool items tie at the lowest listed score (the
    only tie that can reach outside the list), the others are counted in the list itself."""
    low = hs[order[size - 1]]
    tied = 0
    r = 0
    while r < size:
        e = r
        while e + 1 < size and hs[order[e + 1]] == hs[order[r]]:
            e += 1
        cnt = at_low if hs[order[r]] == low else e - r + 1
        if cnt > 1:
            tied += cnt
        r = e + 1
    return tied


@njit(cache=True)
def _tied_with_list(s, hs, order, size, n_train):
    """:func:`n_tied_with_list` with the pool items at the lowest listed score counted in the
    row ``s`` (the ``n_train`` train items sit at ``-inf`` there)."""
    low = hs[order[size - 1]]
    at_low = 0
    for j in range(s.shape[0]):
        at_low += s[j] == low
    if low == -np.inf:
        at_low -= n_train
    return n_tied_with_list(hs, order, size, at_low)


@njit(cache=True)
def topk_items(s, seed, u, tie_mode, tr_idx, t0, t1, K, topk_row):
    """Write the ``K`` best pool items of ``s`` to ``topk_row`` in ranking order (-1 padded when
    the pool is smaller), with a bounded min-heap (worst item at the root) of the best seen so far.

    The user's train items are ``tr_idx[t0:t1]``. Ties are ordered by the seeded key (noise,
    warprec), the item index descending (index_desc) or the item index (every other policy). Returns the number
    of pool items tied with the score of an item of the list, counting every member of a tie that
    includes a listed item.

    The heap's sift steps stay in this loop and the arguments stay plain scalars: the scan over
    every item measured 4-15% slower with them factored into helpers or read from the records.
    """
    return topk_into(
        s,
        seed,
        u,
        tie_mode,
        tr_idx,
        t0,
        t1,
        K,
        topk_row,
        np.empty(K, dtype=s.dtype),
        np.empty(K, dtype=np.int64),
        np.empty(K, dtype=np.int64),
    )


@njit(cache=True, inline="always")
def _swap(hs, hi, a, b):
    """Exchange the heap's entries ``a`` and ``b`` (score and item)."""
    hs[a], hs[b] = hs[b], hs[a]
    hi[a], hi[b] = hi[b], hi[a]


@njit(cache=True, inline="always")
def _span_reaches(s, j0, root):
    """Whether an item of ``s[j0:j0 + _SPAN]`` scores ``>= root``: one vectorised count over a
    slice (see :func:`_count_chunk`; 3.0 against 23 us per 20,000 scores)."""
    v = s[j0 : j0 + _SPAN]
    reach = 0
    for t in range(v.shape[0]):
        reach += v[t] >= root
    return reach > 0


@njit(cache=True)
def topk_into(s, seed, u, tie_mode, tr_idx, t0, t1, K, topk_row, hs, hi, order):
    """:func:`topk_items` with the caller's scratch: ``hs`` (the scores' dtype), ``hi`` and
    ``order`` (int64), ``K`` entries each. It allocates nothing, so a GPU kernel compiles it as a
    device function (:mod:`.cuda_kernels`)."""
    size = np.int64(0)  # not a literal 0: numba compiled the helpers below twice for it
    mode = tie_mode if tie_mode in TOTAL_ORDERS else TIE_INDEX
    n = s.shape[0]
    for j0 in range(0, n, _SPAN):
        j1 = min(j0 + _SPAN, n)
        if size == K:
            # one vectorised count rejects a stretch of items all below the heap's root
            if not _span_reaches(s, j0, hs[0]):
                continue
        for j in range(j0, j1):
            x = s[j]
            if size == K and x < hs[0]:
                continue
            if x == -np.inf and in_sorted(tr_idx, t0, t1, j):
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
                    if right < size and _worse(
                        hs[right], hi[right], hs[left], hi[left], seed, u, mode
                    ):
                        child = right
                    if _worse(hs[child], hi[child], hs[pos], hi[pos], seed, u, mode):
                        _swap(hs, hi, pos, child)
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
                        _swap(hs, hi, pos, parent)
                        pos = parent
                    else:
                        break
    _best_first(hs, hi, size, seed, u, mode, order)
    for r in range(K):
        topk_row[r] = hi[order[r]] if r < size else -1
    if size == 0:
        return 0
    return _tied_with_list(s, hs, order, size, t1 - t0)
