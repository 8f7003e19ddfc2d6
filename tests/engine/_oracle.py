"""Expected engine outputs built from the slow reference (tests/reference.py) and the definitions.

The per-user accuracy metrics come from :func:`reference.metrics_at_k` on a ranking of the pool
that :func:`reference.rank_pool` (or, for ``index_desc``, the same sort with the index order
reversed) produces; ``average`` uses :func:`reference.user_metrics`, which enumerates every
ordering of the tied items; the NaN reason is the first of :func:`reference.applicable_reasons`
(the README's order). The top-K lists and the beyond-accuracy metrics are written out here from
the README ("Definitions", "Beyond accuracy") and the formulas recorded in the registry, never
read from the package.

Nothing here imports the package: these are the yardsticks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from reference import (
    ALL_METRICS,
    TOPK_METRICS,
    WHOLE_RANKING_METRICS,
    applicable_reasons,
    metrics_at_k,
    rank_pool,
    user_metrics,
)

#: Metrics the kernel computes per user from the ranks (all checked against the reference).
KERNEL_METRICS = ALL_METRICS
#: Per-user metrics computed from the top-K list.
LIST_METRICS = (
    "novelty",
    "ils",
    "diversity",
    "serendipity",
    "rbp",
    "bpref",
    "ndcg_spark",
    "ndcg_exp1",
    "ap_elliot",
    "arp",
    "tailpercentage",
    "aplt",
    "aclt",
    "p_list",
    "tap_list",
    "ndcg_bin_jk",
    "ndcg_jk",
    "ndcg_bin_idealk",
    "ncrr",
    "unj",
)
#: One number over all users.
AGGREGATE_METRICS = (
    "coverage",
    "aggregated_diversity",
    "entropy",
    "gini",
    "personalisation",
    "gauc",
    "p_pooled",
    "gm_map",
    "pop_rsp",
    "pop_reo",
    "gini_items",
    "entropy_mean",
    "gini_complement",
)


def rows_of(X: Any, m: int) -> list[dict[int, float]]:
    """Stored entries of each CSR row as ``{column: value}`` (``[]`` rows for ``X=None``)."""
    if X is None:
        return [{} for _ in range(m)]
    X = sp.csr_array(X)
    out = []
    for u in range(m):
        lo, hi = X.indptr[u], X.indptr[u + 1]
        out.append({int(j): float(v) for j, v in zip(X.indices[lo:hi], X.data[lo:hi])})
    return out


def reason_of(
    scores: Sequence[float],
    train_items: Sequence[int] | None,
    test: Mapping[int, float],
    **thresholds: Any,
) -> str:
    """The user's NaN reason: the first rule that applies, in the README's order
    (:data:`reference.NAN_REASONS`); the thresholds as in :func:`reference.applicable_reasons`."""
    rules = applicable_reasons(scores, train_items, test, **thresholds)
    return rules[0] if rules else ""


def ranking(
    pool: Sequence[int], scores: Sequence[float], test: Mapping[int, float], ties: str
) -> list[int]:
    """The pool ranked by score under a deterministic tie policy."""
    if ties == "index_desc":  # trec_eval: tied items by decreasing index
        return sorted(pool, key=lambda i: (-float(scores[i]), -i))
    return rank_pool(pool, scores, test, ties)


def list_ranking(pool: Sequence[int], scores: Sequence[float], ties: str) -> list[int]:
    """The order of the top-K list: ties by decreasing index under ``index_desc``, else by index.

    (Only the noise policy orders the list otherwise; it is checked apart.)
    """
    if ties == "index_desc":
        return sorted(pool, key=lambda i: (-float(scores[i]), -i))
    return sorted(pool, key=lambda i: (-float(scores[i]), i))


def at_cutoffs(
    order: Sequence[int], test: Mapping[int, float], cutoffs: Sequence[int]
) -> list[dict[str, float]]:
    """:func:`reference.metrics_at_k` at every cutoff, without paying its whole-pool pair count
    once per cutoff.

    The largest cutoff is computed on the full ranking. A smaller cutoff ``c`` only depends on the
    first ``c`` items, the positives and whether the pool is longer than ``c`` or holds a
    negative, so it is computed on the first ``c`` items followed by the remaining positives and
    at most one remaining negative: the same value, from the same function.
    """
    order = list(order)
    out = []
    last = max(cutoffs)
    for c in cutoffs:
        if c == last:
            out.append(metrics_at_k(order, test, c))
            continue
        rest = order[c:]
        rest_pos = [i for i in rest if i in test]
        rest_neg = [i for i in rest if i not in test][:1]
        out.append(metrics_at_k(order[:c] + rest_pos + rest_neg, test, c))
    return out


def user_expected(
    scores: Sequence[float],
    train_items: Sequence[int] | None,
    test: Mapping[int, float],
    k: int,
    *,
    ties: str,
    cumulative: bool,
    min_pos_test: int = 1,
    min_items_pool: int = 2,
    consider_cold_start: bool = True,
) -> tuple[str, dict[str, Any]]:
    """(reason, values) of one user: values of every metric of :data:`KERNEL_METRICS`, a list of
    ``k`` values for the top-K ones when ``cumulative``."""
    kw = dict(
        min_pos_test=min_pos_test,
        min_items_pool=min_items_pool,
        consider_cold_start=consider_cold_start,
    )
    reason = reason_of(scores, train_items, test, **kw)
    cutoffs = list(range(1, k + 1)) if cumulative else [k]
    if reason:
        return reason, {
            m: ([math.nan] * k if cumulative and m in TOPK_METRICS else math.nan)
            for m in KERNEL_METRICS
        }
    if ties == "average":
        ref_reason, values = user_metrics(
            list(scores), train_items, test, k, ties="average", cumulative=cumulative, **kw
        )
        assert not ref_reason, ref_reason
        return "", values
    train = set() if train_items is None else set(train_items)
    pool = [i for i in range(len(scores)) if i not in train]
    rows = at_cutoffs(ranking(pool, scores, test, ties), test, cutoffs)
    values: dict[str, Any] = {}
    for m in KERNEL_METRICS:
        if cumulative and m in TOPK_METRICS:
            values[m] = [r[m] for r in rows]
        else:
            values[m] = rows[-1][m]
    return "", values


def topk_list(pool: Sequence[int], scores: Sequence[float], k: int, ties: str) -> list[int]:
    """The top-``k`` list, -1 padded to ``k``."""
    best = list_ranking(pool, scores, ties)[:k]
    return best + [-1] * (k - len(best))


def n_tied_with_list(pool: Sequence[int], scores: Sequence[float], listed: Sequence[int]) -> int:
    """Pool items whose score is shared by another pool item and by a listed item (README: "counts
    the pool items tied with a listed item")."""
    listed_scores = {float(scores[i]) for i in listed if i >= 0}
    count: dict[float, int] = {}
    for i in pool:
        count[float(scores[i])] = count.get(float(scores[i]), 0) + 1
    return sum(c for s, c in count.items() if s in listed_scores and c > 1)


# --------------------------------------------------------------------------------------------
# Beyond accuracy, from the lists (README "Beyond accuracy" and the registry's formulas)
# --------------------------------------------------------------------------------------------


def train_popularity(train_rows: Sequence[Mapping[int, float]], n_items: int) -> np.ndarray:
    """Number of train users of each item."""
    n = np.zeros(n_items)
    for row in train_rows:
        for i in row:
            n[i] += 1
    return n


def novelty(
    listed: Sequence[int], train_rows: Sequence[Mapping[int, float]], n_items: int
) -> float:
    """Mean of -log2(max(n_i, 1) / |U_train|) over the listed items; |U_train| counts the users
    with a train entry (at least 1)."""
    items = [i for i in listed if i >= 0]
    if not items:
        return math.nan
    pop = train_popularity(train_rows, n_items)
    users = max(sum(1 for r in train_rows if r), 1)
    return sum(-math.log2(max(pop[i], 1.0) / users) for i in items) / len(items)


def ils_prefixes(listed: Sequence[int], vectors: np.ndarray) -> list[float]:
    """Intra-list similarity of the first j listed items for j = 1..len(listed): the mean cosine
    similarity over their pairs (NaN below two items; a zero vector has similarity 0)."""
    items = [i for i in listed if i >= 0]
    V = np.asarray(vectors, dtype=np.float64)[items]
    norms = np.sqrt((V * V).sum(axis=1))
    unit = V / np.where(norms > 0, norms, 1.0)[:, None]
    cos = unit @ unit.T
    out = []
    total = 0.0  # sum of the similarities of the pairs among the first h items
    for j in range(1, len(listed) + 1):
        h = min(j, len(items))
        if j <= len(items):
            total += float(cos[j - 1, : j - 1].sum())
        pairs = h * (h - 1) // 2
        out.append(total / pairs if pairs else math.nan)
    return out


def ils(listed: Sequence[int], vectors: np.ndarray) -> float:
    """Mean cosine similarity over the pairs of listed items (NaN below two items)."""
    return ils_prefixes(listed, vectors)[-1] if len(listed) else math.nan


def serendipity(
    listed: Sequence[int],
    test: Mapping[int, float],
    train_rows: Sequence[Mapping[int, float]],
    n_items: int,
    top_n: int,
) -> float:
    """Share of the list that is a test item outside the ``top_n`` most popular train items
    (popularity ties by lower index)."""
    items = [i for i in listed if i >= 0]
    if not items:
        return math.nan
    pop = train_popularity(train_rows, n_items)
    popular = set(sorted(range(n_items), key=lambda i: (-pop[i], i))[:top_n])
    return sum(1 for i in items if i in test and i not in popular) / len(items)


def aggregates(lists: Sequence[Sequence[int]], n_items: int, k: int) -> dict[str, float]:
    """coverage, aggregated_diversity, entropy, gini and personalisation of the lists of the users
    that have one."""
    lists = [[i for i in row if i >= 0] for row in lists]
    lists = [row for row in lists if row]
    if not lists:
        return {
            name: math.nan
            for name in ("coverage", "aggregated_diversity", "entropy", "gini", "personalisation")
        }
    counts = np.zeros(n_items)
    for row in lists:
        for i in row:
            counts[i] += 1
    union = int((counts > 0).sum())
    share = counts / (k * len(lists))
    entropy = -sum(p * math.log(p) for p in share if p > 0)
    srt = sorted(share)
    gini = (
        sum((2 * j - n_items - 1) * p for j, p in enumerate(srt, start=1)) / (n_items - 1)
        if n_items > 1
        else math.nan
    )
    if len(lists) > 1:
        overlaps = [len(set(a) & set(b)) / k for x, a in enumerate(lists) for b in lists[x + 1 :]]
        personal = 1.0 - sum(overlaps) / len(overlaps)
    else:
        personal = math.nan
    return {
        "coverage": union / n_items,
        "aggregated_diversity": float(union),
        "entropy": entropy,
        "gini": gini,
        "personalisation": personal,
    }


def gauc(roc: Sequence[float], n_test: Sequence[int]) -> float:
    """RecBole's GAUC: sum_u |T_u| AUC_u / sum_u |T_u| over users with a defined AUC."""
    pairs = [(a, t) for a, t in zip(roc, n_test) if not math.isnan(a)]
    w = sum(t for _, t in pairs)
    return sum(a * t for a, t in pairs) / w if w else math.nan


def p_pooled(
    hits: Sequence[float], n_test: Sequence[int], k: int, defined: Sequence[bool]
) -> float:
    """implicit's precision: sum_u hits_u / sum_u min(k, |T_u|) over users with defined P."""
    num = sum(h for h, d in zip(hits, defined) if d)
    den = sum(min(k, t) for t, d in zip(n_test, defined) if d)
    return num / den if den else math.nan


__all__ = [
    "KERNEL_METRICS",
    "LIST_METRICS",
    "AGGREGATE_METRICS",
    "TOPK_METRICS",
    "WHOLE_RANKING_METRICS",
    "rows_of",
    "reason_of",
    "ranking",
    "list_ranking",
    "at_cutoffs",
    "user_expected",
    "topk_list",
    "n_tied_with_list",
    "novelty",
    "ils",
    "ils_prefixes",
    "serendipity",
    "aggregates",
    "gauc",
    "p_pooled",
]


def peer_list_metrics(listed: Sequence[int], test: Mapping[int, float], width: int) -> dict:
    """Other libraries' list metrics of one list (``listed``: the items, in order; ``width``:
    the cutoff), written out from their definitions (LensKit's Precision, AveragePrecision and
    NDCG with the discount max(1, log2 j); RecTools' NDCG over the ideal of ``width`` items;
    Cornac's NCRR; trec_eval 10.0's unj), without the package."""
    n_t = len(test)
    hits = [i in test for i in listed]
    nan = math.nan
    out: dict[str, float] = {}
    n = len(listed)
    out["p_list"] = sum(hits) / n if n else nan
    seen, total = 0, 0.0
    for j, h in enumerate(hits, start=1):
        if h:
            seen += 1
            total += seen / j
    out["tap_list"] = total / min(n_t, n) if n else nan

    def jk(j: int) -> float:
        return max(1.0, math.log2(j))

    dcg_bin = sum(1.0 / jk(j) for j, h in enumerate(hits, start=1) if h)
    ideal_bin = sum(1.0 / jk(j) for j in range(1, min(n_t, width) + 1))
    out["ndcg_bin_jk"] = dcg_bin / ideal_bin if ideal_bin > 0 else 0.0
    gains = sorted((max(float(v), 0.0) for v in test.values()), reverse=True)[:width]
    dcg = sum(max(float(test[i]), 0.0) / jk(j) for j, i in enumerate(listed, start=1) if i in test)
    ideal = sum(g / jk(j) for j, g in enumerate(gains, start=1))
    out["ndcg_jk"] = dcg / ideal if ideal > 0 else 0.0
    out["ndcg_bin_idealk"] = sum(
        1.0 / math.log2(j + 1) for j, h in enumerate(hits, start=1) if h
    ) / sum(1.0 / math.log2(j + 1) for j in range(1, width + 1))
    crr = sum(1.0 / j for j, h in enumerate(hits, start=1) if h)
    icrr = sum(1.0 / j for j in range(1, min(n_t, n) + 1))
    out["ncrr"] = crr / icrr if crr > 0 else 0.0
    out["unj"] = sum(1 for h in hits if not h) / width if n_t else nan
    return out
