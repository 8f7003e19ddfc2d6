"""Numba kernels of the metric engine: per-user evaluation and the kernels the driver calls.

The engine reduces every ranking metric to the ranks of a user's positive (test) items among the
user's pool (the items not in train): for positive ``i`` with score ``s_i``,

.. math::

    r_i = 1 + \\#\\{j \\in pool : s_j > s_i\\}
            + \\#\\{j \\in pool : s_j = s_i,\\ j \\text{ beats } i \\text{ by the tie rule}\\}.

Counting the items that outscore (``gt``) and tie with (``eq``) each positive is a branch-free
reduction over the user's score row (vectorised by LLVM), so no sort of the pool is ever needed
(:mod:`.ranks`). When only top-K metrics are asked, the count of a positive stops as soon as it is
known to be beyond K. Every metric is then filled from the sorted ranks in ``O(K + n_pos)``
(:mod:`.fill`).

Tie policies: ``noise``, ``index``, ``index_desc`` and ``warprec`` order tied items by a seeded
random key (ours, or WarpRec's) or by item index, ascending or descending (a deterministic
ranking); ``optimistic`` and ``pessimistic`` put tied positives before or after tied negatives;
``average`` computes the expected value of every metric over all orderings of the tied items,
exactly (McSherry & Najork, "Computing information retrieval performance measures efficiently
in the presence of tied scores", ECIR 2008), from ``gt`` and ``eq`` alone.

Every kernel takes the typed records of :mod:`.records`: ``Csr`` train and test matrices, a
``Plan`` and the ``Outputs``. Every kernel is cached on disk (``cache=True``); since numba checks
only a function's own file, importing this module first drops the cached kernels when any engine
source changed (:func:`_drop_stale_caches`). This module imports numpy and numba only (and the
standard library).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
from numba import njit

from .codes import Reason
from .fill import fill_average, fill_metrics, fill_whole
from .ranks import (
    TIE_AVERAGE,
    TOTAL_ORDERS,
    _exact_ranks,
    count_nan,
    count_nonfinite,
    counts,
    counts_topk,
    in_sorted,
    lower_bound,
    sort_by_rank,
    user_ranks,
)
from .topk import topk_items

NAN_SCORE = int(Reason.NAN_SCORE)
ALL_EQUAL = int(Reason.ALL_EQUAL)


@njit(cache=True)
def _read_positives(s, u, test, pos_scores, vals):
    """Copy the scores and test values of user ``u``'s positives; whether a score is ``-inf``."""
    p0 = test.ptr[u]
    any_neg_inf = False
    for i in range(pos_scores.shape[0]):
        pos_scores[i] = s[test.idx[p0 + i]]
        vals[i] = test.val[p0 + i]
        if pos_scores[i] == -np.inf:
            any_neg_inf = True
    return any_neg_inf


@njit(cache=True, inline="always")
def _read_and_mask(s, u, train, test, plan, outs):
    """The first steps of every user's evaluation: read the positives, mask the train items of
    ``s`` (in place) and look for a NaN in the pool (or a +-inf, with ``plan.inf_nan``), unless
    ``plan.finite`` says the scores have none.

    Returns ``(ok, pos_scores, vals, gt, eq, pool, any_neg_inf)`` with ``gt`` and ``eq`` left for
    the counts; ``ok`` is False when the user is found undefined here (``outs.reason[u]``
    receives NAN_SCORE).
    """
    t0 = train.ptr[u]
    t1 = train.ptr[u + 1]
    pool = plan.n_items - (t1 - t0)
    n_pos = test.ptr[u + 1] - test.ptr[u]
    # positives' scores are read before train items are masked (they are disjoint)
    pos_scores = np.empty(n_pos, dtype=s.dtype)
    vals = np.empty(n_pos, dtype=np.float64)
    any_neg_inf = _read_positives(s, u, test, pos_scores, vals)
    gt = np.empty(n_pos, dtype=np.int64)
    eq = np.empty(n_pos, dtype=np.int64)
    # a NaN anywhere in the pool (or a +-inf, with plan.inf_nan) makes the user undefined;
    # train items do not count. With plan.finite (factors whose every product is bounded) there
    # is none, and the row is not read for it: at 660,940 items x 8 factors that pass, from
    # memory, added a quarter of the GEMM's time
    bad = 0
    if plan.inf_nan and not plan.finite:
        bad = count_nonfinite(s)
        for t in range(t0, t1):
            x = s[train.idx[t]]
            bad -= (x - x) != (x - x)
    for t in range(t0, t1):
        s[train.idx[t]] = -np.inf
    if not plan.inf_nan and not plan.finite:
        bad = count_nan(s)
    if bad > 0:
        outs.reason[u] = NAN_SCORE
        return False, pos_scores, vals, gt, eq, pool, any_neg_inf
    return True, pos_scores, vals, gt, eq, pool, any_neg_inf


@njit(cache=True, inline="always")
def _all_equal(u, gt, eq, pool, outs):
    """Whether every pool score is equal (the first positive ties with the whole pool); then
    ``outs.reason[u]`` receives ALL_EQUAL."""
    if gt[0] == 0 and eq[0] == pool:
        outs.reason[u] = ALL_EQUAL
        return True
    return False


@njit(cache=True, inline="always")
def _prepare_user(s, u, train, test, plan, outs):
    """:func:`_read_and_mask`, then count each positive's items above and tied (``gt``,
    ``eq``) and look for a user whose pool scores are all equal.

    Returns ``(ok, pos_scores, vals, gt, eq, pool)``; ``ok`` is False when the user is found
    undefined here (``outs.reason[u]`` receives NAN_SCORE or ALL_EQUAL).
    """
    ok, pos_scores, vals, gt, eq, pool, any_neg_inf = _read_and_mask(s, u, train, test, plan, outs)
    if ok:
        counts(s, u, pos_scores, any_neg_inf, train, plan, gt, eq)
        ok = not _all_equal(u, gt, eq, pool, outs)
    return ok, pos_scores, vals, gt, eq, pool


@njit(cache=True, inline="always")
def _prepare_user_at_k(s, u, train, test, plan, outs):
    """:func:`_prepare_user` for the @k metrics alone: each positive's count stops once it is
    known to rank beyond K (:func:`~.ranks.counts_topk`)."""
    ok, pos_scores, vals, gt, eq, pool, any_neg_inf = _read_and_mask(s, u, train, test, plan, outs)
    if ok:
        counts_topk(s, u, pos_scores, any_neg_inf, train, plan, gt, eq)
        ok = not _all_equal(u, gt, eq, pool, outs)
    return ok, pos_scores, vals, gt, eq, pool


@njit(cache=True, inline="always")
def _exact_sorted(s, u, pos_scores, vals, gt, eq, train, test, plan):
    """The positives' exact ranks under a total order of ties, ascending, with their values."""
    n_pos = pos_scores.shape[0]
    ranks = np.empty(n_pos, dtype=np.int64)
    rvals = np.empty(n_pos, dtype=np.float64)
    _exact_ranks(s, u, pos_scores, vals, gt, eq, train, test, plan, ranks, rvals)
    sort_by_rank(ranks, rvals)
    return ranks, rvals


@njit(cache=True, inline="always")
def _fill_at_k(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs):
    """The @k metrics from the positives' exact ranks under a total order of ties."""
    ranks, rvals = _exact_sorted(s, u, pos_scores, vals, gt, eq, train, test, plan)
    fill_metrics(ranks, rvals, pool, plan, outs.out, u)


@njit(cache=True, inline="always")
def _put_list(s, u, train, plan, outs):
    """The user's top-K items and the number of pool items tied with them (``plan.want_topk``)."""
    outs.n_tied[u] = topk_items(
        s,
        plan.seed,
        u + plan.user_base,
        plan.tie_mode,
        train.idx,
        train.ptr[u],
        train.ptr[u + 1],
        plan.K,
        outs.topk[u],
    )


@njit(cache=True, inline="always")
def _fill_exact(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs):
    """Every metric (the whole-ranking ones too) from the positives' exact ranks under a total
    order of ties: :func:`_fill_from_ranks` without the tie policies' ranks."""
    ranks, rvals = _exact_sorted(s, u, pos_scores, vals, gt, eq, train, test, plan)
    fill_metrics(ranks, rvals, pool, plan, outs.out, u)
    if plan.full_ranks:
        fill_whole(ranks, rvals, pool, plan.wslots, outs.whole, u, gt, eq)


@njit(cache=True, inline="always")
def _fill_from_ranks(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs):
    """Every metric from the positives' ranks under a total order or a tie policy."""
    n_pos = pos_scores.shape[0]
    ranks = np.empty(n_pos, dtype=np.int64)
    rvals = np.empty(n_pos, dtype=np.float64)
    user_ranks(s, u, pos_scores, vals, gt, eq, train, test, plan, ranks, rvals)
    fill_metrics(ranks, rvals, pool, plan, outs.out, u)
    if plan.full_ranks:
        fill_whole(ranks, rvals, pool, plan.wslots, outs.whole, u, gt, eq)


# One block kernel per kind of evaluation, so that a call compiles only what it runs (the
# average-ties writers and the top-K list each cost seconds of compiling). Each evaluates the
# users ``rows`` whose scores are the rows of ``S``, on one thread, without the GIL: the driver
# shares blocks (or a block's users) among its threads. The per-user steps are inlined into the
# loop: a per-user function between them cost its own compile, in which numba optimised its
# callees' code once more.
#
# S : float32 or float64 array (len(rows), n_items), C-contiguous and writable (train items are
#     masked in place); rows : int64 array, the users (rows of the test matrix and of the
#     outputs) of ``S``'s rows; train, test : records.Csr; plan : records.Plan;
#     outs : records.Outputs. ``outs.out`` receives the @k metrics, ``outs.whole`` the
#     whole-ranking ones, ``outs.reason[u]`` NAN_SCORE or ALL_EQUAL for a user found undefined
#     here; with the list, ``outs.topk[u]`` the user's top-K items and ``outs.n_tied[u]`` the
#     number of pool items tied with them.


@njit(nogil=True, cache=True)
def block_ranked(S, rows, train, test, plan, outs):
    """Under a tie policy (``optimistic``, ``pessimistic``), without the top-K list (it also
    runs a total order of ties, as :func:`block_exact` does)."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            _fill_from_ranks(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_topk(S, rows, train, test, plan, outs):
    """:func:`block_ranked` for the @k metrics alone under a total order of tied items
    (``noise``, ``index``, ``index_desc``), without the list: the default evaluation. It
    compiles only what that runs (no binary-search counts, tie policies or whole-ranking
    writers), about a third less than :func:`block_ranked`, with the same values."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user_at_k(s, u, train, test, plan, outs)
        if ok:
            _fill_at_k(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_topk_list(S, rows, train, test, plan, outs):
    """:func:`block_topk` with the top-K list (@k metrics beside coverage or another metric
    of the list, under a total order of ties): without the binary-search counts, tie policies
    and whole-ranking writers that :func:`block_ranked_list` compiles, with the same values."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user_at_k(s, u, train, test, plan, outs)
        if ok:
            _put_list(s, u, train, plan, outs)
            _fill_at_k(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_exact(S, rows, train, test, plan, outs):
    """Every metric the plan asks, the whole-ranking ones too, under a total order of tied
    items (``noise``, ``index``, ``index_desc``, ``warprec``), without the list: what
    :func:`block_ranked` runs there, without compiling the tie policies' ranks."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            _fill_exact(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_exact_list(S, rows, train, test, plan, outs):
    """:func:`block_exact` with the top-K list: the app's standard metrics under its default
    ``noise`` ties."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            _put_list(s, u, train, plan, outs)
            _fill_exact(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_ranked_list(S, rows, train, test, plan, outs):
    """:func:`block_ranked` with the top-K list."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            _put_list(s, u, train, plan, outs)
            _fill_from_ranks(s, u, pos_scores, vals, gt, eq, pool, train, test, plan, outs)


@njit(nogil=True, cache=True)
def block_average(S, rows, train, test, plan, outs):
    """Under ``ties="average"``: each metric's expectation over the orderings of the tied
    items."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            fill_average(pos_scores, vals, gt, eq, pool, plan, outs.out, outs.whole, u)


@njit(nogil=True, cache=True)
def block_average_list(S, rows, train, test, plan, outs):
    """:func:`block_average` with the top-K list."""
    for b in range(rows.shape[0]):
        s, u = S[b], rows[b]
        ok, pos_scores, vals, gt, eq, pool = _prepare_user(s, u, train, test, plan, outs)
        if ok:
            _put_list(s, u, train, plan, outs)
            fill_average(pos_scores, vals, gt, eq, pool, plan, outs.out, outs.whole, u)


def block_kernel(plan):
    """The block kernel for ``plan``: ``kernel(S, rows, train, test, plan, outs)``."""
    if plan.tie_mode == TIE_AVERAGE:
        return block_average_list if plan.want_topk else block_average
    if plan.tie_mode in TOTAL_ORDERS:
        if plan.want_topk:
            return block_exact_list if plan.full_ranks else block_topk_list
        return block_exact if plan.full_ranks else block_topk
    return block_ranked_list if plan.want_topk else block_ranked


@njit(nogil=True, cache=True)
def ranked_list_metrics(lists, rows, train, test, plan, out):
    """Top-K metrics from ranked lists: ``lists[u]`` holds item indices, best first, -1 padded.

    Items of the user's train row are dropped from the list (the pool excludes them) and the
    remaining items keep their order; positives absent from the list rank beyond K. ``out`` is
    the @k output (``Outputs.out``).
    """
    L = lists.shape[1]
    K = plan.K
    most = 0
    for b in range(rows.shape[0]):
        most = max(most, test.ptr[rows[b] + 1] - test.ptr[rows[b]])
    rank_buf = np.empty(most, dtype=np.int64)  # one scratch for the block, not two per user
    val_buf = np.empty(most, dtype=test.val.dtype)
    for b in range(rows.shape[0]):
        u = rows[b]
        t0 = train.ptr[u]
        t1 = train.ptr[u + 1]
        pool = plan.n_items - (t1 - t0)
        p0 = test.ptr[u]
        n_pos = test.ptr[u + 1] - p0
        ranks = rank_buf[:n_pos]
        vals = val_buf[:n_pos]
        for j in range(n_pos):
            ranks[j] = K + 1
            vals[j] = test.val[p0 + j]
        pos_rank = 0
        for r in range(L):
            item = lists[u, r]
            if item < 0 or in_sorted(train.idx, t0, t1, item):
                continue
            pos_rank += 1
            if pos_rank > K:
                break
            lo = lower_bound(test.idx, p0, p0 + n_pos, item)
            if lo < p0 + n_pos and test.idx[lo] == item and ranks[lo - p0] > K:
                ranks[lo - p0] = pos_rank
        sort_by_rank(ranks, vals)
        fill_metrics(ranks, vals, pool, plan, out, u)


def _drop_stale_caches() -> None:
    """Make the kernels compile afresh when any engine module changed since they were cached.

    numba re-validates a cached function against its own source file only, while the kernels
    here (and the writers of ``fill.py``) compile the functions of the other engine modules into
    themselves: after an edit of ``fill.py``, ``ranks.py`` or ``codes.py`` alone they would load
    stale machine code. One digest of every engine source is kept beside the cache; when it
    differs, the cache index files of the engine's modules are removed, so each kernel compiles
    once more. Best effort: nothing happens where the cache folder cannot be read or written.
    """
    try:
        cache_dir = Path(block_ranked._cache.cache_path)
        sources = sorted(Path(__file__).parent.glob("*.py"))
        digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sources))
        stamp = cache_dir / "engine-sources.sha256"
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return
        for p in sources:
            for index in cache_dir.glob(f"{p.stem}.*.nbi"):
                index.unlink(missing_ok=True)
        tmp = cache_dir / f"engine-sources.{os.getpid()}.tmp"
        tmp.write_text(digest.hexdigest())
        os.replace(tmp, stamp)
    except (AttributeError, OSError):
        pass


_drop_stale_caches()
