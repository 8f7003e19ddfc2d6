r"""Rank metrics computed from each user's top-K list rather than in the engine's kernels: those
with a real-valued parameter (``rbp``) or that need the judged non-relevant items (``bpref``),
and the geometric-mean aggregate ``gm_map``. Each costs ``O(K log |T_u|)`` per user.

With ``L_u = (i_1, ..., i_K)`` the user's list (train items left out), ``T_u`` the positives with
test values ``v_i`` and ``J_u`` the judged non-relevant items (test entries below the relevance
level):

* ``rbp`` (rank-biased precision; Moffat & Zobel, ACM TOIS 27(1), 2008; ranx's ``rbp``, which
  weighs each relevant item by its judgement):
  :math:`RBP@K = (1 - p) \sum_{j \le K} v_{i_j} [i_j \in T_u] \, p^{j-1}`, ``p`` the persistence.
* ``bpref`` (Buckley & Voorhees, SIGIR 2004; trec_eval's ``bpref`` on a run of the K listed
  items): with :math:`R = |T_u|`, :math:`N = |J_u|` and :math:`n_j` the judged non-relevant
  items above position ``j``,
  :math:`bpref@K = \frac{1}{R}\sum_{j : i_j \in T_u} \left(1 - \frac{\min(n_j, R)}{\min(N, R)}
  \right)` where a term with :math:`n_j = 0` counts 1 (unjudged items are skipped).

Both are 0 for an evaluated user whose list is empty (ranked input with nothing listed), the rule
P, R, AP and F1 follow and trec_eval's (a topic in the qrels with no document retrieved scores
0 under ``-c``); they are NaN only for users that are not evaluated, whose ``nan_reason`` names
the rule (with ranked input under ``missing_users="skip"``, a user without a list: ``no_list``).
* ``gm_map`` (trec_eval): :math:`\exp(\mathrm{mean}_u \ln \max(AP_u, 10^{-5}))` over the users
  with a defined PR-AUC (AP over the whole ranking).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .beyond import ListContext

__all__ = ["values_at", "rbp_of", "bpref_of", "ndcg_spark_of", "gm_map_of", "MIN_GEO_MEAN"]

#: trec_eval's floor of a value before its logarithm in geometric means.
MIN_GEO_MEAN = 1e-5


def values_at(
    X: sp.csr_array, rows: np.ndarray, items: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The stored value of each (row, item) of the CSR ``X`` (sorted indices) and whether it is
    stored (0.0 where not), vectorised."""
    key_x = (
        np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr)) * X.shape[1] + X.indices
    )
    key_q = rows.astype(np.int64) * X.shape[1] + items
    if key_x.shape[0] == 0:
        return np.zeros(key_q.shape[0]), np.zeros(key_q.shape[0], dtype=bool)
    pos = np.minimum(np.searchsorted(key_x, key_q), key_x.shape[0] - 1)
    found = key_x[pos] == key_q
    return np.where(found, np.asarray(X.data, dtype=np.float64)[pos], 0.0), found


def _lookup(X: sp.csr_array, topk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, K = topk.shape
    rows = np.repeat(np.arange(m), K)
    items = topk.ravel()
    listed = items >= 0
    vals = np.zeros(m * K)
    found = np.zeros(m * K, dtype=bool)
    vals[listed], found[listed] = values_at(X, rows[listed], items[listed])
    return vals.reshape(m, K), found.reshape(m, K)


def rbp_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``rbp`` of each user's list: 0 for an evaluated user whose list is empty (nothing
    relevant retrieved, as P, R and AP give; ranx and trec_eval give 0 too), NaN only for the
    users not evaluated (``ctx.ok`` False: their ``nan_reason`` says why)."""
    p = ctx.rbp_persistence
    vals, found = _lookup(ctx.test, topk)
    weights = p ** np.arange(topk.shape[1], dtype=np.float64)
    out = (1.0 - p) * (np.where(found, vals, 0.0) * weights).sum(axis=1)
    return np.where(ctx.ok, out, np.nan)


def bpref_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``bpref`` of each user's list: 0 for an evaluated user whose list is empty (no positive
    retrieved: the sum is empty, as in trec_eval, whose ``-c`` test files give 0, and ranx);
    NaN only for the users not evaluated (``ctx.ok`` False: their ``nan_reason`` says why) and
    for a user without a positive (R = 0: reason ``no_positive``, or 0 under
    ``no_positive="zero"``, set by the caller)."""
    m = topk.shape[0]
    _, rel = _lookup(ctx.test, topk)
    R = np.diff(ctx.test.indptr).astype(np.float64)
    if ctx.judged is not None:
        _, nonrel = _lookup(ctx.judged, topk)
        N = np.diff(ctx.judged.indptr).astype(np.float64)
    else:
        nonrel = np.zeros_like(rel)
        N = np.zeros(m)
    above = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant above position j
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.minimum(above, R[:, None]) / np.minimum(N, R)[:, None]
        term = np.where(above > 0, 1.0 - frac, 1.0)
        out = np.where(rel, term, 0.0).sum(axis=1) / R
    return np.where(ctx.ok & (R > 0), out, np.nan)


def ndcg_spark_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """Spark's graded ``ndcgAt`` (``RankingMetrics`` on (prediction, label, relevance) triples,
    Spark >= 3.4), with ``k`` the list width: ``DCG = sum_{j < min(|L|, k)} (2^v_(j) - 1) /
    ln(j + 2)`` over the listed items (0 for an item without a test value) and the ideal DCG
    over the first ``min(|T|, k)`` test items *in the order of the labels*, not sorted by value
    (Spark's quirk); here the labels are in item index order (the CSR row). 0 when the ideal DCG
    is 0 (no test entry, or only zero gains), as Spark; NaN for the users not evaluated."""
    m, K = topk.shape
    vals, _ = _lookup(ctx.test, topk)
    disc = np.log(np.arange(K, dtype=np.float64) + 2.0)
    dcg = np.zeros(m)
    for j in range(K):  # position by position, in Spark's order of summation
        dcg += (2.0 ** vals[:, j] - 1.0) / disc[j]
    indptr = ctx.test.indptr
    n_t = np.diff(indptr)
    pos = np.arange(ctx.test.nnz, dtype=np.int64) - np.repeat(indptr[:-1], n_t)
    keep = pos < K
    rows = np.repeat(np.arange(m), n_t)[keep]
    ideal_terms = (2.0 ** np.asarray(ctx.test.data, dtype=np.float64)[keep] - 1.0) / disc[pos[keep]]
    ideal = np.bincount(rows, weights=ideal_terms, minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(ideal == 0.0, 0.0, dcg / ideal)
    return np.where(ctx.ok, out, np.nan)


def gm_map_of(ctx: ListContext) -> float:
    """``gm_map`` from the per-user PR-AUC column."""
    return gm_map_from_parts(*gm_map_parts_of(ctx))


def gm_map_parts_of(ctx: ListContext) -> tuple[float, float]:
    """The additive parts of ``gm_map``, ``(sum_u ln max(AP_u, 1e-5), #users)`` over the users
    with a defined PR-AUC (shards of users add them up)."""
    ap = np.asarray(ctx.columns["pr_auc"], dtype=np.float64)
    ap = ap[~np.isnan(ap)]
    return float(np.sum(np.log(np.maximum(ap, MIN_GEO_MEAN)))), float(ap.size)


def gm_map_from_parts(log_sum: float, n: float) -> float:
    """``exp(log_sum / n)``; NaN without users."""
    return float(np.exp(log_sum / n)) if n > 0 else math.nan


gm_map_of.parts = gm_map_parts_of  # type: ignore[attr-defined]
gm_map_of.from_parts = gm_map_from_parts  # type: ignore[attr-defined]
