r"""Other libraries' variants of the rank metrics, computed from each user's top-K list.

Each reproduces one library's code where its definition departs from the kernel metrics (the
short-list rule, the discount, the ideal DCG, a metric of its own); each costs ``O(K)`` per user,
vectorised over users. With ``L_u = (i_1, ..., i_n)`` the user's list cut at k (``n = |L_u| <=
k``: shorter when the pool or a ranked list has fewer items), ``T_u`` the positives with test
values ``v``, ``h_j = [i_j \in T_u]`` and ``H_j = h_1 + ... + h_j``:

* ``p_list`` (LensKit ``Precision``): :math:`H_n / n`, NaN for an empty list.
* ``tap_list`` (LensKit ``AveragePrecision``):
  :math:`\frac{1}{\min(|T_u|, n)} \sum_{j \le n} h_j H_j / j`, NaN for an empty list.
* ``ndcg_bin_jk`` and ``ndcg_jk`` (LensKit ``NDCG``, without and with ``gain=``): the discount
  of Jarvelin & Kekalainen (2002) with base 2, :math:`d(j) = \max(1, \log_2 j)` (positions 1
  and 2 both undiscounted: LensKit's ``LogRankWeight``), binary gains with the ideal over
  :math:`\min(|T_u|, k)` ones, or the test values clipped at 0 with the ideal over the k
  largest; 0 when that ideal is 0.
* ``ndcg_bin_idealk`` (RecTools ``NDCG``, ``divide_by_achievable=False``, its default): binary
  DCG with the discount :math:`\log_2(j + 1)` divided by the DCG of k relevant items, whatever
  :math:`|T_u|`.
* ``unj`` (trec_eval 10.0 ``unj_k``): the share of the first k positions holding an unjudged
  item (neither a positive nor a judged non-relevant test entry), a shorter list still over k;
  NaN for a user without a positive.
* ``ncrr`` (Cornac ``NCRR``): :math:`\sum_{j \le n} h_j / j` divided by
  :math:`\sum_{j \le \min(|T_u|, n)} 1 / j`, 0 without a hit.

All are NaN for the users not evaluated (``ctx.ok`` False: their ``nan_reason`` says why).
"""

from __future__ import annotations

import numpy as np

from .beyond import ListContext
from .listrank import _lookup

__all__ = [
    "p_list_of",
    "tap_list_of",
    "ndcg_bin_jk_of",
    "ndcg_jk_of",
    "ndcg_bin_idealk_of",
    "ncrr_of",
    "unj_of",
    "jk_discount",
]


def _hits(ctx: ListContext, topk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(h, values, n)``: whether each listed item is a positive, its test value (0 if not)
    and each user's list length."""
    vals, found = _lookup(ctx.test, topk)
    return found, vals, (topk >= 0).sum(axis=1)


def _per_user(ctx: ListContext, out: np.ndarray) -> np.ndarray:
    return np.where(ctx.ok, out, np.nan)


def jk_discount(positions: np.ndarray) -> np.ndarray:
    """``max(1, log2 j)`` for 1-based positions ``j`` (LensKit's default ``LogRankWeight``)."""
    return np.maximum(np.log2(np.maximum(positions, 1).astype(np.float64)), 1.0)


def p_list_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """LensKit's ``Precision``: hits over the list's own length, NaN for an empty list."""
    h, _, n = _hits(ctx, topk)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _per_user(ctx, np.where(n > 0, h.sum(axis=1) / n, np.nan))


def tap_list_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """LensKit's ``AveragePrecision``: the precisions at the hits over ``min(|T|, |L|)``, NaN
    for an empty list."""
    h, _, n = _hits(ctx, topk)
    pos = np.arange(1, topk.shape[1] + 1, dtype=np.float64)
    total = np.where(h, np.cumsum(h, axis=1) / pos, 0.0).sum(axis=1)
    n_test = np.diff(ctx.test.indptr)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _per_user(ctx, np.where(n > 0, total / np.minimum(n_test, n), np.nan))


def ndcg_bin_jk_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """LensKit's ``NDCG()`` (binary gains, discount ``max(1, log2 j)``, ideal over
    ``min(|T|, k)`` positions)."""
    h, _, _ = _hits(ctx, topk)
    w = 1.0 / jk_discount(np.arange(1, topk.shape[1] + 1))
    dcg = np.where(h, w, 0.0).sum(axis=1)
    K = topk.shape[1]  # the cutoff (a curve passes the lists cut at 1..k)
    ideal_len = np.minimum(np.diff(ctx.test.indptr), K)
    cum = np.concatenate([[0.0], np.cumsum(1.0 / jk_discount(np.arange(1, K + 1)))])
    ideal = cum[ideal_len]
    with np.errstate(invalid="ignore", divide="ignore"):
        return _per_user(ctx, np.where(ideal > 0, dcg / ideal, 0.0))


def _top_values(ctx: ListContext, k: int) -> np.ndarray:
    """Each user's ``k`` largest test values clipped at 0, descending (0-padded), ``(m, k)``."""
    m = ctx.test.shape[0]
    out = np.zeros((m, k))
    indptr = ctx.test.indptr
    data = np.clip(np.asarray(ctx.test.data, dtype=np.float64), 0.0, None)
    rows = np.repeat(np.arange(m), np.diff(indptr))
    order = np.lexsort((-data, rows))  # by user, then value descending
    pos = np.arange(data.shape[0]) - np.repeat(indptr[:-1], np.diff(indptr))
    keep = pos < k
    out[rows[order][keep], pos[keep]] = data[order][keep]
    return out


def ndcg_jk_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """LensKit's ``NDCG(gain=...)``: the test values clipped at 0 as gains, discount
    ``max(1, log2 j)``, ideal over the k largest gains; 0 when that ideal is 0 (LensKit 2026;
    2025.8 divides by 0 there)."""
    K = topk.shape[1]
    h, vals, _ = _hits(ctx, topk)
    w = 1.0 / jk_discount(np.arange(1, K + 1))
    dcg = (np.where(h, np.clip(vals, 0.0, None), 0.0) * w).sum(axis=1)
    ideal = (_top_values(ctx, K) * w).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _per_user(ctx, np.where(ideal > 0, dcg / ideal, 0.0))


def ndcg_bin_idealk_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """RecTools' ``NDCG`` by default: binary DCG over the DCG of k relevant items."""
    h, _, _ = _hits(ctx, topk)
    disc = 1.0 / np.log2(np.arange(2, topk.shape[1] + 2, dtype=np.float64))
    ideal = disc.sum()  # k relevant items (k: the lists' width, the cutoff)
    return _per_user(ctx, np.where(h, disc, 0.0).sum(axis=1) / ideal)


def ncrr_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """Cornac's ``NCRR``: the reciprocal ranks of the hits over their ideal sum, the first
    ``min(|T|, |L|)`` positions; 0 without a hit."""
    h, _, n = _hits(ctx, topk)
    inv = 1.0 / np.arange(1, topk.shape[1] + 1, dtype=np.float64)
    crr = np.where(h, inv, 0.0).sum(axis=1)
    cum = np.concatenate([[0.0], np.cumsum(inv)])
    icrr = cum[np.minimum(np.diff(ctx.test.indptr), n)]
    with np.errstate(invalid="ignore", divide="ignore"):
        return _per_user(ctx, np.where(crr > 0, crr / icrr, 0.0))


def unj_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """trec_eval 10.0's ``unj``: unjudged listed items over k (the lists' width); NaN for a user
    without a positive (whose list the engine does not rank)."""
    h, _, _ = _hits(ctx, topk)
    judged = h.copy()
    if ctx.judged is not None:
        judged |= _lookup(ctx.judged, topk)[1]
    unjudged = ((topk >= 0) & ~judged).sum(axis=1) / topk.shape[1]
    return np.where(ctx.ok & (np.diff(ctx.test.indptr) > 0), unjudged, np.nan)
