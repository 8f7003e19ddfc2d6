"""Metric writers: every metric of a user from the ranks of its positives, keyed by code.

With ``r_1 <= r_2 <= ... <= r_n`` the sorted ranks of the user's ``n = |T|`` positives in a pool
of ``|pool|`` items, ``v_i`` their test values, ``hits(k) = #{i : r_i <= k}`` and the gains
``g_i`` (linear ``v_i``, exponential ``2^v_i - 1``, binary ``1``):

.. math::

    P@k = hits(k) / k, \\quad TP@k = hits(k) / \\min(k, n), \\quad R@k = hits(k) / n,

    AP@k = \\frac{1}{n} \\sum_{i : r_i \\le k} \\frac{i}{r_i}, \\quad
    TAP@k = \\frac{1}{\\min(k, n)} \\sum_{i : r_i \\le k} \\frac{i}{r_i}, \\quad
    RR@k = \\frac{[r_1 \\le k]}{r_1}, \\quad Hit@k = [hits(k) > 0],

    DCG@k = \\sum_{i : r_i \\le k} \\frac{g_i}{\\log_2(r_i + 1)}, \\quad
    NDCG@k = \\frac{DCG@k}{IDCG@k}, \\quad
    IDCG@k = \\sum_{j \\le \\min(k, \\#\\{g > 0\\})} \\frac{g_{(j)}}{\\log_2(j + 1)}

(the ideal ranking puts the positive gains first, in decreasing order ``g_(1) >= g_(2) >= ...``;
Järvelin & Kekäläinen 2002); the DCG metric itself (``AtK.DCG``) is the linear-gain sum
``g_i = v_i``, unnormalised, as ranx's ``dcg``. :func:`fill_metrics` walks the ranks once for every cutoff
``1..K`` in ``O(K + n)``; :func:`fill_whole` gives ROC-AUC, PR-AUC and MPR from the exact ranks;
:func:`fill_average` gives the exact expectation of every metric over the orderings of tied items.

NaN rules applied here (the user-level ones are the driver's): with only positives in the pool
every metric but DCG and NDCG is NaN; with a pool of at most ``k`` items P, TP, R and Hit are NaN at
``k`` (the list is the whole pool); NDCG is NaN when no gain is > 0.

Adding a cutoff metric: a code in :class:`~recoeval_tracking.engine.codes.AtK` and one writer
(an ``if slots[CODE] >= 0`` line) in :func:`_put_topk`, fed by :func:`fill_metrics` and, for
``ties="average"``, by :func:`fill_average`.

This module imports numpy and numba only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import AtK, Whole
from .ranks import order_positives, stable_order

# The codes as plain module-level ints: numba reads them as compile-time constants.
(
    P,
    TP,
    R,
    AP,
    TAP,
    NDCG,
    HIT,
    RR,
    NDCG_EXP,
    NDCG_BIN,
    AUC_TOPK,
    DCG,
    AP_HITS,
    HITS,
    F1,
    DCG_EXP,
    SET_MAP,
) = (int(c) for c in AtK)
ROC_AUC, PR_AUC, MPR, RPREC = (
    int(Whole.ROC_AUC),
    int(Whole.PR_AUC),
    int(Whole.MPR),
    int(Whole.RPREC),
)
#: Output codes of the 11 interpolated precisions (recall 0.0, 0.1, ..., 1.0) and their mean.
IPREC_0 = int(Whole.IPREC_0)
AVG_11PT = int(Whole.AVG_11PT)
ROC_AUC_AVG = int(Whole.ROC_AUC_AVG)
RR_FULL = int(Whole.RR_FULL)
IPREC10_0 = int(Whole.IPREC10_0)
AVG_11PT10 = int(Whole.AVG_11PT10)
_NW = len(Whole)

#: Gain kinds, the index of the three DCG sums: linear ``v``, exponential ``2^v - 1``, binary 1.
LINEAR, EXPONENTIAL, BINARY = 0, 1, 2
#: The NDCG code of each gain kind.
_NDCG_CODES = (NDCG, NDCG_EXP, NDCG_BIN)


# -- gains ----------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _gain(v, kind):
    """Gain of test value ``v``: linear ``v``, exponential ``2^v - 1`` or binary ``1``."""
    if kind == 1:
        return 2.0**v - 1.0
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
    order = stable_order(g[:n])
    ideal = np.empty(n, dtype=np.float64)
    for t in range(n):
        ideal[t] = g[order[n - 1 - t]]
    return ideal


@njit(cache=True)
def _uniform_gains(n, v, kind):
    """The ideal gains of ``n`` positives that all have the test value ``v``: ``n`` equal gains,
    none when the gain is not positive (what :func:`_ideal_gains` gives, without its sort)."""
    x = _gain(v, kind)
    return np.full(n if x > 0 else 0, x)


@njit(cache=True)
def _all_ideal_gains(vals):
    """The ideal gains of the three kinds, ``(linear, exponential, binary)``. The kind is read
    from an array, so that numba compiles :func:`_ideal_gains` once rather than once per
    literal kind. Positives that all have one test value (binary relevance, the usual implicit
    feedback) skip the sorts: three arrays of equal gains, where the sorts cost most of a
    ranked list's evaluation per user."""
    kinds = np.arange(3)
    n = vals.shape[0]
    uniform = True
    for i in range(1, n):
        if vals[i] != vals[0]:
            uniform = False
            break
    if uniform and n > 0:
        return (
            _uniform_gains(n, vals[0], kinds[0]),
            _uniform_gains(n, vals[0], kinds[1]),
            _uniform_gains(n, vals[0], kinds[2]),
        )
    return (
        _ideal_gains(vals, kinds[0]),
        _ideal_gains(vals, kinds[1]),
        _ideal_gains(vals, kinds[2]),
    )


# -- @k metrics -----------------------------------------------------------------------------------


@njit(cache=True)
def fill_metrics(ranks, vals, pool, plan, out, u):
    """Fill every requested @k metric of user ``u`` from the ranks of its positives.

    Parameters
    ----------
    ranks : int64 array (n_pos,)
        1-based rank of each positive in the pool, sorted ascending, paired with ``vals`` (the
        test values). Ranks above K may be any value > K.
    vals : float64 array (n_pos,)
    pool : int
        The number of items in the user's pool.
    plan : records.Plan
        ``K``, ``cumulative`` and ``slots`` (output row of each @k code, -1 when not requested).
    out : float64 array (n_requested, n_users, K or 1)
    u : int
        The user's row of ``out``.
    """
    n_pos = ranks.shape[0]
    K = plan.K
    slots = plan.slots
    only_pos = pool == n_pos
    dcg = np.zeros(3)
    idcg = np.zeros(3)
    ideal = _all_ideal_gains(vals)
    ndcg = np.empty(3)  # allocated once: per cutoff it cost a heap allocation each
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
        if not plan.cumulative and kc < K:
            continue
        col = kc - 1 if plan.cumulative else 0
        for g in range(3):
            ndcg[g] = dcg[g] / idcg[g] if ideal[g].shape[0] > 0 else np.nan
        auc = np.nan
        if slots[AUC_TOPK] >= 0 and not only_pos:
            auc = _auc_in_list(ranks, hits, min(kc, pool))
        _put_topk(
            out,
            slots,
            u,
            col,
            kc,
            n_pos,
            only_pos,
            pool <= kc,
            float(hits),
            ap_sum,
            dcg,
            ndcg,
            1.0 if hits > 0 else 0.0,
            1.0 / first if first <= kc else 0.0,
            auc,
        )


@njit(cache=True)
def _put_topk(
    out, slots, u, col, kc, n_pos, only_pos, short, hits, ap_sum, dcg, ndcg, hit, rr, auc
):
    """Write the requested @kc metrics of user ``u`` to column ``col``: one writer per code.

    From (expected) hits, the AP sum, the three DCG sums and NDCG values (by gain kind), Hit, RR
    and the in-list AUC, applying the NaN rules: everything but DCG and NDCG is NaN when the pool
    holds only positives; P, TP, R, Hit, hits, F1 and set_map are NaN when the pool has <= kc
    items (``short``). ``AP_HITS`` (AP over the hits, 0 without a hit) and ``SET_MAP``
    (``hits^2 / (kc n)``) are not linear in the hits: ``ties="average"`` never asks them.
    """
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
    if slots[DCG] >= 0:
        out[slots[DCG], u, col] = dcg[LINEAR]
    if slots[DCG_EXP] >= 0:
        out[slots[DCG_EXP], u, col] = dcg[EXPONENTIAL]
    if slots[AP_HITS] >= 0:
        out[slots[AP_HITS], u, col] = np.nan if only_pos else (ap_sum / hits if hits > 0 else 0.0)
    if slots[HITS] >= 0:
        out[slots[HITS], u, col] = np.nan if bad else hits
    if slots[F1] >= 0:
        out[slots[F1], u, col] = np.nan if bad else 2.0 * hits / (kc + n_pos)
    if slots[SET_MAP] >= 0:
        out[slots[SET_MAP], u, col] = np.nan if bad else hits * hits / (kc * float(n_pos))


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


# -- whole-ranking metrics ------------------------------------------------------------------------


@njit(cache=True)
def fill_whole(ranks, vals, pool, wslots, whole_out, u, gt, eq):
    """ROC-AUC, PR-AUC, MPR, R-precision, the interpolated precisions and the reciprocal rank
    of the first positive (``RR_FULL = 1 / r_0``, no cutoff) of user ``u`` from the exact sorted
    ranks of all its positives.

    .. math::

        ROC\\text{-}AUC = \\frac{\\sum_t (n_{neg} - (r_t - 1 - t))}{n \\, n_{neg}}, \\quad
        PR\\text{-}AUC = \\frac{1}{n} \\sum_t \\frac{t + 1}{r_t}, \\quad
        MPR = \\frac{\\sum_t v_t (r_t - 1) / (|pool| - 1)}{\\sum_t v_t},

        Rprec = \\frac{\\#\\{t : r_t \\le n\\}}{n}, \\quad
        iprec(\\rho) = \\max_{t + 1 \\ge \\max(1, \\lfloor \\rho n + 0.9 \\rfloor)} \\frac{t + 1}{r_t}

    (``t`` 0-based: the positive of sorted position ``t`` has ``r_t - 1 - t`` negatives above
    it; PR-AUC is AP over the whole ranking; the interpolated precision at recall ``rho`` is the
    best precision from the ``floor(rho n + 0.9)``-th positive on, as trec_eval 9 counts it, for
    ``rho = 0, 0.1, ..., 1``, and ``11pt_avg`` their mean). All NaN when the pool holds only positives; MPR is NaN when
    the values sum to ``<= 0``. ``gt`` and ``eq`` (the raw-score counts of pool items above and
    tied with each positive) give the ROC-AUC under average ranks for ties when its row is
    asked (:func:`auc_average_ties`).
    """
    n_pos = ranks.shape[0]
    n_neg = pool - n_pos
    w = np.full(_NW, np.nan)
    if n_neg > 0:
        good = 0.0
        acc = 0.0
        within = 0
        for t in range(n_pos):
            good += n_neg - (ranks[t] - 1 - t)
            acc += (t + 1) / ranks[t]
            if ranks[t] <= n_pos:
                within += 1
        w[ROC_AUC] = good / (n_pos * float(n_neg))
        w[PR_AUC] = acc / n_pos
        w[RPREC] = within / n_pos
        wsum = 0.0
        psum = 0.0
        for t in range(n_pos):
            wsum += vals[t]
            psum += vals[t] * (ranks[t] - 1.0) / (pool - 1.0)
        w[MPR] = psum / wsum if wsum > 0 else np.nan
        _iprec(ranks, w)
        w[RR_FULL] = 1.0 / ranks[0]
        if _wants_lround(wslots):
            _iprec_lround(ranks, w)
        if wslots[ROC_AUC_AVG] >= 0:
            w[ROC_AUC_AVG] = auc_average_ties(gt, eq, n_neg)
    _put_whole(w, wslots, whole_out, u)


@njit(cache=True)
def auc_average_ties(gt, eq, n_neg):
    """ROC-AUC with every tie given its average rank, in ``O(n)`` from the counts alone.

    With ``gt_i`` pool items strictly above positive ``i`` and ``eq_i`` pool items tied with it
    (``i`` itself included), a negative above ``i`` counts 0, a tied negative 1/2, a negative
    below 1 (RecBole's ``GAUC`` through ``Collector._average_rank``; Fawcett 2006). Of those
    counts, ``H_i`` positives are strictly above ``i`` and ``c_i`` tie with it (``i`` included);
    over all positives ``sum_i (H_i + c_i / 2) = n^2 / 2`` (each pair of positives counts once,
    each positive half with itself), so

    .. math::

        AUC = \\frac{\\sum_i (n_{neg} - (gt_i - H_i) - (eq_i - c_i) / 2)}{n \\, n_{neg}}
            = \\frac{n \\, n_{neg} + n^2 / 2 - \\sum_i gt_i - \\sum_i eq_i / 2}{n \\, n_{neg}}.
    """
    n = gt.shape[0]
    s_gt = 0.0
    s_eq = 0.0
    for i in range(n):
        s_gt += gt[i]
        s_eq += eq[i]
    return (n * float(n_neg) + 0.5 * n * n - s_gt - 0.5 * s_eq) / (n * float(n_neg))


@njit(cache=True, inline="always")
def _best_precision_from(ranks):
    """``best[t]``: the best precision ``(t' + 1) / ranks[t']`` over the positives ``t' >= t``
    (a suffix maximum, scanned once), where the interpolated precisions are read."""
    n_pos = ranks.shape[0]
    best = np.empty(n_pos)
    run = 0.0
    for t in range(n_pos - 1, -1, -1):
        run = max(run, (t + 1) / ranks[t])
        best[t] = run
    return best


@njit(cache=True)
def _iprec(ranks, w):
    """The 11 interpolated precisions and their mean into ``w``: for recall ``rho`` the best
    precision ``t / r_t`` over the positives from the ``c``-th on, ``c = int(rho n + 0.9)``
    (trec_eval 9, the version pytrec_eval bundles; every positive when ``c = 0``). A positive's
    precision is the best of the positions up to the next positive, so the maximum over
    positions is one over positives: a suffix maximum, scanned once."""
    n_pos = ranks.shape[0]
    best = _best_precision_from(ranks)
    total = 0.0
    for j in range(11):
        c = int(j / 10.0 * n_pos + 0.9)
        w[IPREC_0 + j] = best[max(c, 1) - 1]
        total += w[IPREC_0 + j]
    w[AVG_11PT] = total / 11.0


@njit(cache=True)
def _wants_lround(wslots):
    """Whether a trec_eval 10.0 interpolated precision (or their mean) is asked."""
    for c in range(IPREC10_0, AVG_11PT10 + 1):
        if wslots[c] >= 0:
            return True
    return False


@njit(cache=True)
def _iprec_lround(ranks, w):
    """trec_eval 10.0's interpolated precisions and their mean into ``w``: as :func:`_iprec`
    with the cutoff ``c = lround(rho n)`` (``m_iprec_at_recall.c``, ``m_11pt_avg.c``: rounded
    half away from zero, where 9 added 0.9 and truncated)."""
    n_pos = ranks.shape[0]
    best = _best_precision_from(ranks)
    total = 0.0
    for j in range(11):
        x = j / 10.0 * n_pos
        c = int(np.floor(x))
        if x - c >= 0.5:
            c += 1
        w[IPREC10_0 + j] = best[max(c, 1) - 1]
        total += w[IPREC10_0 + j]
    w[AVG_11PT10] = total / 11.0


@njit(cache=True, inline="always")
def _put_whole(w, wslots, whole_out, u):
    for c in range(wslots.shape[0]):
        if wslots[c] >= 0:
            whole_out[wslots[c], u] = w[c]


# -- expectations over tied orderings (ties="average") --------------------------------------------


@njit(cache=True)
def _tie_groups(pos_scores, vals, gt, eq):
    """The positives grouped by score, best first: for group ``g``, ``a[g]`` pool items strictly
    above it, ``t[g]`` pool items in the tie, ``c[g]`` positives in it, ``H[g]`` positives above
    it and ``G[g, kind]`` the sum of its gains of each kind. Also returns the positives' order
    (score descending, value descending) and the number of groups."""
    n_pos = pos_scores.shape[0]
    order = order_positives(pos_scores, vals, True)
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
    return order, ga, gt_, gc, gH, gG, ng


@njit(cache=True)
def _expected_at(kc, ga, gt_, gc, gH, gG, ng):
    """Expected hits, AP sum, DCG sums (by gain kind), P(no hit) and RR at cutoff ``kc``.

    Group ``g`` puts each of its positives at ranks ``a + 1 .. a + t`` with probability ``1/t``
    each, with ``(c - 1)(j - 1)/(t - 1)`` of the other positives of the group before position
    ``j`` on average; no positive lands in its first ``w`` positions with probability
    ``C(t - c, w) / C(t, w)``; the first positive of the first group is at position ``j`` with
    probability ``C(t - j, c - 1) / C(t, c)``.
    """
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
    return hits, ap, dcg, p_none, rr


@njit(cache=True)
def _expected_whole(order, vals, ga, gt_, gc, gH, gG, ng, n_neg, pool):
    """Expected ROC-AUC, PR-AUC, MPR and R-precision over the orderings of tied items
    (``n_neg > 0``); the interpolated precisions (a maximum, not linear) are left NaN.

    A tied negative is above a positive of its tie half the time; a member of a tie has expected
    rank ``a + (t + 1) / 2``.
    """
    n_pos = order.shape[0]
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
    w = np.full(_NW, np.nan)
    w[ROC_AUC] = good / (n_pos * float(n_neg))
    w[ROC_AUC_AVG] = w[ROC_AUC]  # the expectation over tied orders is the average-rank AUC
    w[PR_AUC] = acc / n_pos
    w[RPREC] = _expected_at(n_pos, ga, gt_, gc, gH, gG, ng)[0] / n_pos
    gi = 0
    for idx in range(n_pos):
        i = order[idx]
        while gi + 1 < ng and gH[gi + 1] <= idx:
            gi += 1
        exp_rank = ga[gi] + (gt_[gi] + 1.0) / 2.0
        wsum += vals[i]
        psum += vals[i] * (exp_rank - 1.0) / (pool - 1.0)
    w[MPR] = psum / wsum if wsum > 0 else np.nan
    return w


@njit(cache=True)
def fill_average(pos_scores, vals, gt, eq, pool, plan, out, whole_out, u):
    """Expected value of every metric over all orderings of tied items (McSherry & Najork 2008).

    Positives sharing a score form a group ``g`` with ``a_g`` pool items strictly above it,
    ``t_g`` pool items in the tie, ``c_g`` positives among them and ``H_g`` positives above it. A
    uniformly random ordering of the tie puts each positive at ranks ``a_g + 1 .. a_g + t_g`` with
    equal probability, and the other ``c_g - 1`` positives of the group before position ``j``
    ``(c_g - 1)(j - 1)/(t_g - 1)`` times on average; every metric below is linear in those
    expectations (P, TP, R, AP, TAP, DCG and the NDCG numerators), or (Hit, RR) computed from the
    hypergeometric law of the first positive. The in-list AUC has no expectation implemented: it
    is NaN here (evaluate() refuses to ask for it).

    Parameters
    ----------
    pos_scores, vals : arrays (n_pos,)
        The positives' scores and test values.
    gt, eq : int64 arrays (n_pos,)
        Exact counts of pool items above and tied with each positive.
    pool : int
    plan : records.Plan
    out, whole_out : float64 arrays
        The @k and whole-ranking outputs.
    u : int
    """
    n_pos = pos_scores.shape[0]
    n_neg = pool - n_pos
    K = plan.K
    order, ga, gt_, gc, gH, gG, ng = _tie_groups(pos_scores, vals, gt, eq)
    only_pos = n_neg == 0
    ideal = _all_ideal_gains(vals)
    for kc in range(1, K + 1):
        if not plan.cumulative and kc < K:
            continue
        col = kc - 1 if plan.cumulative else 0
        hits, ap, dcg, p_none, rr = _expected_at(kc, ga, gt_, gc, gH, gG, ng)
        ndcg = np.full(3, np.nan)
        for kind in range(3):
            if ideal[kind].shape[0] > 0:
                idcg = 0.0
                for j in range(min(kc, ideal[kind].shape[0])):
                    idcg += ideal[kind][j] / np.log2(j + 2.0)
                ndcg[kind] = dcg[kind] / idcg
        _put_topk(
            out,
            plan.slots,
            u,
            col,
            kc,
            n_pos,
            only_pos,
            pool <= kc,
            hits,
            ap,
            dcg,
            ndcg,
            1.0 - p_none,
            rr,
            np.nan,
        )
    if plan.full_ranks:
        w = np.full(_NW, np.nan)
        if not only_pos:
            w = _expected_whole(order, vals, ga, gt_, gc, gH, gG, ng, n_neg, pool)
        _put_whole(w, plan.wslots, whole_out, u)
