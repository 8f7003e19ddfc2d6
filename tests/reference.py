"""A slow, literal pure-Python reference for the ranking metrics of recoeval_tracking.

This module is the independent yardstick the fast engine is tested against. It is written from the
written definitions only (recometrics' ``calc.reco.metrics`` documentation, the project's metric
contract and the worked examples of Apache Hivemall's "Ranking Measures" page), never from the
engine's code, and it favours being obviously right over being fast: for each user it builds the
pool as a Python list, sorts it with an explicit key and computes every metric by counting.

Semantics, for one user ``u``
-----------------------------
* **pool**: the items not stored in ``u``'s row of ``X_train`` (every item when ``X_train`` is
  None). **Positives**: the items stored in ``u``'s row of ``X_test`` (any stored value, even 0 or
  negative, is a positive for every metric but NDCG). **Negatives**: the rest of the pool.
* Every metric is NaN, with the reason in brackets, when (checked in this order): ``u`` has no
  positives (``no_test``); fewer positives than ``min_pos_test`` (``min_pos_test``); ``X_train``
  is given, ``u`` has no train entries and ``consider_cold_start`` is False (``cold_start``); a
  pool smaller than ``min_items_pool`` (``min_items_pool``); some pool score is NaN
  (``nan_score``); every pool score is equal (``all_equal``; a pool of one item counts as all
  equal). This is the order the README's "NaN rules" state.
* Only positives in the pool: NDCG and DCG are computed, every other metric is NaN.
* With a pool of at most ``k`` items, P@k, TP@k, R@k and Hit@k are NaN (the list would be the whole
  pool); AP@k, TAP@k, NDCG@k and RR@k are computed over the pool.
* ROC-AUC and PR-AUC rank the whole pool and ignore ``k``.

With the ranked pool :math:`i_1, i_2, \\dots`, :math:`L_k` its first :math:`\\min(k, |pool|)` items,
:math:`T` the positives, :math:`h_k = |L_k \\cap T|` and :math:`P@j = h_j / j`:

.. math::

    P@k = h_k / k, \\quad TP@k = h_k / \\min(k, |T|), \\quad R@k = h_k / |T|,
    \\quad Hit@k = [h_k > 0],

    AP@k = \\frac{1}{|T|} \\sum_{j \\le k} P@j \\, [i_j \\in T], \\quad
    TAP@k = \\frac{1}{\\min(k, |T|)} \\sum_{j \\le k} P@j \\, [i_j \\in T],

    RR@k = 1 / \\min\\{j \\le k : i_j \\in T\\} \\;(0 \\text{ if none}), \\quad
    PR\\text{-}AUC = AP@|pool|,

    ROC\\text{-}AUC = \\frac{|\\{(p, n) \\in T \\times N : p \\text{ ranked above } n\\}|}{|T|\\,|N|},

    NDCG@k = \\frac{\\sum_{j \\le k} g(r_{i_j}) / \\log_2(j + 1)}
                  {\\sum_{j \\le \\min(k, |T^+|)} g(r^+_{(j)}) / \\log_2(j + 1)},

and, as further named variants, NDCG with the exponential gain (``ndcg_exp``) or the binary gain
1 per test item (``ndcg_bin``), the unnormalised :math:`DCG@k = \\sum_{j \\le k,\\, i_j \\in T}
r_{i_j} / \\log_2(j + 1)` with linear gains (``dcg``, the NDCG numerator: defined whenever the
user is, also for a pool of positives only), ROC-AUC among the first k items only (``auc_topk``,
Hivemall's in-list AUC; 0.5 when the list lacks a positive or a negative) and the mean percentile
rank
:math:`MPR = \\sum_{i \\in T} r_i (j_i - 1) / (|pool| - 1) / \\sum_{i \\in T} r_i` with
:math:`j_i` the rank of item :math:`i` (Hu, Koren & Volinsky 2008; NaN when the weights sum to
:math:`\\le 0`), where :math:`r_i` is the test value of item :math:`i` (0 for negatives), :math:`r^+_{(1)} \\ge
r^+_{(2)} \\ge \\dots` are the test values that are :math:`> 0` (NDCG is NaN when there is none) and
the gain :math:`g` is ``linear`` (:math:`g(r) = r`, recometrics) or ``exponential``
(:math:`g(r) = 2^r - 1`, Burges et al. 2005, Hivemall, RecBole).

Ties
----
Items are ranked by score, highest first; ties between equal scores are resolved by ``ties``:

* ``"index"``: lower column index first (as trec_eval does);
* ``"optimistic"``: positives first, higher test value first (then index);
* ``"pessimistic"``: negatives first, then positives by increasing test value (then index);
* ``"average"``: the mean of each metric over every ordering of every group of tied items
  (brute force; only for small cases; McSherry & Najork 2008 compute the same expectation in
  closed form).

References
----------
* recometrics ``calc.reco.metrics`` documentation (D. Cortes), the project's primary specification.
* Apache Hivemall, "Ranking Measures" (docs/gitbook/eval/rank.md).
* C. Burges et al., "Learning to rank using gradient descent", ICML 2005 (exponential NDCG gain).
* K. Järvelin and J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 2002.
* Y. Hu, Y. Koren and C. Volinsky, "Collaborative filtering for implicit feedback datasets",
  ICDM 2008 (expected percentile rank).
* F. McSherry and M. Najork, "Computing information retrieval performance measures efficiently in
  the presence of tied scores", ECIR 2008.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "METRICS",
    "EXTRA_METRICS",
    "ALL_METRICS",
    "TOPK_METRICS",
    "WHOLE_RANKING_METRICS",
    "TIES",
    "NAN_REASONS",
    "ReferenceResult",
    "rank_pool",
    "orderings",
    "dcg_at_k",
    "ideal_dcg_at_k",
    "metrics_at_k",
    "applicable_reasons",
    "user_metrics",
    "reference_metrics",
    "scores_from_factors",
    "auc_topk_list",
    "rbp_at_k",
    "bpref_at_k",
    "auc_average_ranks",
    "train_counts",
    "recbole_tail",
    "elliot_long_tail",
    "list_share",
    "pop_parity",
    "recbole_gini",
    "recbole_entropy",
    "geometric_mean_ap",
]

#: Metric names in the project's order.
METRICS: tuple[str, ...] = ("p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr", "roc_auc", "pr_auc")
#: Further definition variants: NDCG with exponential (2^v - 1) and binary (1 per test item) gains,
#: ROC-AUC inside the top-k list (Hivemall), the mean percentile rank (Hu, Koren & Volinsky 2008)
#: and the unnormalised DCG with linear gains (Järvelin & Kekäläinen 2002); first those with a
#: cutoff k, then those over the whole ranked pool.
_EXTRA_TOPK: tuple[str, ...] = (
    "ndcg_exp",
    "ndcg_bin",
    "auc_topk",
    "dcg",
    "ap_hits",
    "hits",
    "f1",
    "dcg_exp",
    "set_map",
)
_EXTRA_WHOLE: tuple[str, ...] = (
    "mpr",
    "rprec",
    *[f"iprec_at_recall_{j / 10:.2f}" for j in range(11)],
    "11pt_avg",
    "rr_full",
    *[f"iprec10_at_recall_{j / 10:.2f}" for j in range(11)],
    "11pt_avg10",
)
EXTRA_METRICS: tuple[str, ...] = _EXTRA_TOPK + _EXTRA_WHOLE
#: Every metric the reference computes.
ALL_METRICS: tuple[str, ...] = METRICS + EXTRA_METRICS
#: Metrics with a cutoff k.
TOPK_METRICS: tuple[str, ...] = METRICS[:8] + _EXTRA_TOPK
#: Metrics over the whole ranked pool, independent of k.
WHOLE_RANKING_METRICS: tuple[str, ...] = METRICS[8:] + _EXTRA_WHOLE
#: Metrics that are NaN when the pool holds at most k items (their value would not depend on order).
ORDER_FREE_METRICS: tuple[str, ...] = ("p", "tp", "r", "hit", "hits", "f1", "set_map")
#: Tie policies the reference implements.
TIES: tuple[str, ...] = ("index", "optimistic", "pessimistic", "average")
#: NaN reasons, in the order they are checked.
NAN_REASONS: tuple[str, ...] = (
    "no_test",
    "min_pos_test",
    "cold_start",
    "min_items_pool",
    "nan_score",
    "all_equal",
)
NDCG_GAINS: tuple[str, ...] = ("linear", "exponential", "binary")

_NAN = float("nan")


def _gain(value: float, ndcg_gain: str) -> float:
    """NDCG gain of a test value: ``value`` (linear) or ``2**value - 1`` (exponential)."""
    if ndcg_gain == "linear":
        return float(value)
    if ndcg_gain == "binary":
        return 1.0
    return 2.0 ** float(value) - 1.0


def _discount(position: int) -> float:
    """``1 / log2(position + 1)`` for a 1-based rank ``position``."""
    return 1.0 / math.log2(position + 1)


def rank_pool(
    pool: Sequence[int],
    scores: Mapping[int, float] | Sequence[float],
    test: Mapping[int, float],
    ties: str = "index",
) -> list[int]:
    """Sort ``pool`` by score (highest first) and resolve ties by ``ties``.

    Parameters
    ----------
    pool : sequence of int
        Item indices that can be ranked for the user.
    scores : mapping or sequence of float
        ``scores[item]`` is the item's score (no NaN).
    test : mapping of int to float
        The user's positives and their test values.
    ties : {"index", "optimistic", "pessimistic"}
        How equal scores are ordered (see the module docstring). ``"average"`` is not an ordering:
        use :func:`orderings`.

    Returns
    -------
    list of int
        The pool, best first.
    """

    def key(item: int) -> tuple:
        s = -float(scores[item])
        if ties == "index":
            return (s, item)
        is_pos = item in test
        value = float(test[item]) if is_pos else 0.0
        if ties == "optimistic":
            return (s, 0 if is_pos else 1, -value, item)
        if ties == "pessimistic":
            return (s, 1 if is_pos else 0, value, item)
        raise ValueError(
            f"unknown tie policy {ties!r} for rank_pool; expected index, optimistic or pessimistic"
        )

    return sorted(pool, key=key)


def orderings(
    pool: Sequence[int], scores: Mapping[int, float] | Sequence[float], max_orderings: int = 50_000
) -> list[list[int]]:
    """Every ranking of ``pool`` consistent with the scores: each group of tied items in every order.

    Raises ``ValueError`` when there would be more than ``max_orderings`` of them.
    """
    ranked = sorted(pool, key=lambda i: (-float(scores[i]), i))
    groups: list[list[int]] = []
    for item in ranked:
        if groups and float(scores[groups[-1][0]]) == float(scores[item]):
            groups[-1].append(item)
        else:
            groups.append([item])
    count = math.prod(math.factorial(len(g)) for g in groups)
    if count > max_orderings:
        raise ValueError(
            f"ties='average' would need {count} orderings (limit {max_orderings}); "
            "use it on small cases only"
        )
    out = []
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        out.append([i for grp in combo for i in grp])
    return out


def dcg_at_k(
    order: Sequence[int], test: Mapping[int, float], k: int, ndcg_gain: str = "linear"
) -> float:
    """Discounted cumulative gain of the first ``k`` items of ``order``.

    :math:`DCG@k = \\sum_{j \\le k} g(r_{i_j}) / \\log_2(j + 1)` with :math:`r_i` the test value of
    item :math:`i` (0 for items not in ``test``) and :math:`g` the linear or exponential gain
    (Järvelin & Kekäläinen 2002; Burges et al. 2005).
    """
    total = 0.0
    for j, item in enumerate(list(order)[:k], start=1):
        if item in test:
            total += _gain(test[item], ndcg_gain) * _discount(j)
    return total


def ideal_dcg_at_k(values: Any, k: int, ndcg_gain: str = "linear") -> float:
    """The best DCG@k achievable with the test ``values``, using only the values that are > 0.

    0.0 when no value is > 0 (NDCG is then NaN).
    """
    if ndcg_gain == "binary":  # every test item has gain 1
        best = [1.0 for _ in values]
    else:
        best = sorted((float(v) for v in values if float(v) > 0), reverse=True)
    return sum(_gain(v, ndcg_gain) * _discount(j) for j, v in enumerate(best[:k], start=1))


def metrics_at_k(
    order: Sequence[int], test: Mapping[int, float], k: int, ndcg_gain: str = "linear"
) -> dict[str, float]:
    """All metrics for one ranked pool at cutoff ``k``, literally from their definitions.

    ``order`` is the whole pool, best first; ``test`` maps each positive item (all of which must be
    in ``order``) to its test value. The per-user NaN rules (no positives, thresholds, NaN or equal
    scores) are the caller's job; this function applies the rules that depend on the pool only: only
    positives -> everything but NDCG and DCG is NaN; pool <= k -> P, TP, R and Hit are NaN; NDCG is NaN
    when no test value is > 0.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n_pool = len(order)
    n_pos = sum(1 for i in order if i in test)
    if n_pos != len(test):
        raise ValueError("every positive must be in the pool")
    n_neg = n_pool - n_pos
    out: dict[str, float] = {}
    topk = list(order[:k])

    # NDCG: gains are the test values, the ideal DCG uses only the values > 0.
    for name, gain in (("ndcg", ndcg_gain), ("ndcg_exp", "exponential"), ("ndcg_bin", "binary")):
        idcg = ideal_dcg_at_k(test.values(), k, gain)
        out[name] = _NAN if idcg == 0.0 else dcg_at_k(order, test, k, gain) / idcg
    # DCG: the same sum with linear gains (the test values), not normalised; never NaN.
    out["dcg"] = dcg_at_k(order, test, k, "linear")
    out["dcg_exp"] = dcg_at_k(order, test, k, "exponential")

    if n_neg == 0:
        for name in ALL_METRICS:
            if not name.startswith("ndcg") and name not in ("dcg", "dcg_exp"):
                out[name] = _NAN
        return {name: out[name] for name in ALL_METRICS}

    hits_at = []  # hits among the first j items, j = 1..len(topk)
    hits = 0
    for item in topk:
        hits += item in test
        hits_at.append(hits)
    h = hits_at[-1]
    whole_pool_in_list = n_pool <= k
    out["p"] = _NAN if whole_pool_in_list else h / k
    out["tp"] = _NAN if whole_pool_in_list else h / min(k, n_pos)
    out["r"] = _NAN if whole_pool_in_list else h / n_pos
    out["hit"] = _NAN if whole_pool_in_list else float(h > 0)
    out["hits"] = _NAN if whole_pool_in_list else float(h)
    # F1 = 2PR / (P + R), 0 without a hit; trec_eval's set_map = P * R
    p_k, r_k = h / k, h / n_pos
    out["f1"] = _NAN if whole_pool_in_list else (2 * p_k * r_k / (p_k + r_k) if h else 0.0)
    out["set_map"] = _NAN if whole_pool_in_list else p_k * r_k

    prec_sum = sum(hits_at[j - 1] / j for j, item in enumerate(topk, start=1) if item in test)
    out["ap"] = prec_sum / n_pos
    out["tap"] = prec_sum / min(k, n_pos)
    # Hivemall's AveragePrecision: the same sum over the hits in the list (0 without one)
    out["ap_hits"] = prec_sum / h if h else 0.0

    rr = 0.0
    for j, item in enumerate(topk, start=1):
        if item in test:
            rr = 1.0 / j
            break
    out["rr"] = rr

    # ROC-AUC: every (positive, negative) pair, counted as correct when the positive comes first.
    position = {item: j for j, item in enumerate(order)}
    positives = [i for i in order if i in test]
    negatives = [i for i in order if i not in test]
    correct = sum(1 for p in positives for n in negatives if position[p] < position[n])
    out["roc_auc"] = correct / (n_pos * n_neg)

    # PR-AUC: AP over the whole ranked pool.
    full_hits = 0
    full_sum = 0.0
    for j, item in enumerate(order, start=1):
        if item in test:
            full_hits += 1
            full_sum += full_hits / j
    out["pr_auc"] = full_sum / n_pos

    # R-precision and interpolated precision (trec_eval): precision and positives seen after
    # each rank j of the whole pool; iprec(rho) is the best precision at the ranks where at
    # least c = int(rho |T| + 0.9) positives are seen (every rank when c = 0), the recall level
    # in positives as trec_eval 9 (bundled by pytrec_eval) counts it.
    prec_seen = []
    seen = 0
    for j, item in enumerate(order, start=1):
        seen += item in test
        prec_seen.append((seen / j, seen))
    out["rprec"] = sum(1 for item in order[:n_pos] if item in test) / n_pos
    levels = []
    for j in range(11):
        rho = j / 10
        x = rho * n_pos
        c = int(x + 0.9)
        name = f"iprec_at_recall_{rho:.2f}"
        out[name] = max(p for p, s in prec_seen if s >= c)
        levels.append(out[name])
    out["11pt_avg"] = sum(levels) / 11
    # trec_eval 10.0 counts the recall level as c = lround(rho |T|), rounded half away from 0
    levels = []
    for j in range(11):
        rho = j / 10
        x = rho * n_pos
        c = math.floor(x) + (1 if x - math.floor(x) >= 0.5 else 0)
        name = f"iprec10_at_recall_{rho:.2f}"
        out[name] = max(p for p, s in prec_seen if s >= c)
        levels.append(out[name])
    out["11pt_avg10"] = sum(levels) / 11
    # the reciprocal rank of the first positive over the whole ranked pool (no cutoff)
    out["rr_full"] = next(1.0 / j for j, item in enumerate(order, start=1) if item in test)

    # ROC-AUC among the items of the top-k list only; 0.5 when the list lacks a positive or a
    # negative (a list without a pair to order is neither good nor bad).
    auc_list = auc_topk_list(order, list(test), k)
    out["auc_topk"] = 0.5 if math.isnan(auc_list) else auc_list

    # Mean percentile rank: test-value-weighted mean of (rank - 1) / (|pool| - 1), 0 = best.
    weight = sum(float(v) for v in test.values())
    if weight <= 0:
        out["mpr"] = _NAN
    else:
        out["mpr"] = (
            sum(float(test[i]) * j / (n_pool - 1) for j, i in enumerate(order) if i in test)
            / weight
        )
    return {name: out[name] for name in ALL_METRICS}


def _metrics_over_orderings(
    ranks: list[list[int]], test: Mapping[int, float], k: int, ndcg_gain: str
) -> dict[str, float]:
    rows = [metrics_at_k(o, test, k, ndcg_gain) for o in ranks]
    out = {}
    for name in ALL_METRICS:
        vals = [r[name] for r in rows]
        out[name] = _NAN if any(math.isnan(v) for v in vals) else math.fsum(vals) / len(vals)
    return out


def applicable_reasons(
    scores: Sequence[float],
    train_items: Sequence[int] | None,
    test: Mapping[int, float],
    *,
    min_pos_test: int = 1,
    min_items_pool: int = 2,
    consider_cold_start: bool = True,
) -> list[str]:
    """Every NaN rule that applies to one user, in the order of :data:`NAN_REASONS`.

    The first one is the user's reason; an empty list means the metrics are defined. Arguments as
    in :func:`user_metrics`.
    """
    train = set() if train_items is None else {int(i) for i in train_items}
    pool = [i for i in range(len(scores)) if i not in train]
    pool_scores = [float(scores[i]) for i in pool]
    rules = {
        "no_test": len(test) == 0,
        "min_pos_test": len(test) < min_pos_test,
        "min_items_pool": len(pool) < min_items_pool,
        "cold_start": train_items is not None and len(train) == 0 and not consider_cold_start,
        "nan_score": any(math.isnan(v) for v in pool_scores),
        # a pool of one item (or none) has all its scores equal
        "all_equal": len(set(pool_scores)) <= 1 and not any(math.isnan(v) for v in pool_scores),
    }
    return [r for r in NAN_REASONS if rules[r]]


def user_metrics(
    scores: Sequence[float],
    train_items: Sequence[int] | None,
    test: Mapping[int, float],
    k: int,
    *,
    ties: str = "index",
    ndcg_gain: str = "linear",
    cumulative: bool = False,
    min_pos_test: int = 1,
    min_items_pool: int = 2,
    consider_cold_start: bool = True,
) -> tuple[str, dict[str, Any]]:
    """Metrics of one user.

    Parameters
    ----------
    scores : sequence of float
        The user's score for every item (length ``n_items``).
    train_items : sequence of int or None
        Items stored in the user's train row; None when there is no train matrix at all (then the
        cold-start rule does not apply).
    test : mapping of int to float
        The user's test items (positives) and their values.
    k : int
        Cutoff.
    ties : {"index", "optimistic", "pessimistic", "average"}
        Tie policy (module docstring).
    ndcg_gain : {"linear", "exponential"}
        NDCG gain.
    cumulative : bool
        Also compute the top-K metrics at every cutoff 1..k (arrays of shape (k,)).
    min_pos_test, min_items_pool : int
        Users with fewer positives / pool items get NaN.
    consider_cold_start : bool
        When False (and there is a train matrix), a user with no train entries gets NaN.

    Returns
    -------
    reason : str
        The NaN reason (one of :data:`NAN_REASONS`), or ``""`` when the metrics are defined.
    values : dict
        Metric name -> float (or a list of ``k`` floats for the top-K metrics when cumulative).
    """
    if ties not in TIES:
        raise ValueError(f"unknown tie policy {ties!r}; expected one of {TIES}")
    if ndcg_gain not in NDCG_GAINS:
        raise ValueError(f"unknown ndcg_gain {ndcg_gain!r}; expected one of {NDCG_GAINS}")
    n_items = len(scores)
    train = set() if train_items is None else set(int(i) for i in train_items)
    overlap = train & set(test)
    if overlap:
        raise ValueError(f"train and test share items {sorted(overlap)}")
    pool = [i for i in range(n_items) if i not in train]
    test = {int(i): float(v) for i, v in test.items()}

    reasons = applicable_reasons(
        scores,
        train_items,
        test,
        min_pos_test=min_pos_test,
        min_items_pool=min_items_pool,
        consider_cold_start=consider_cold_start,
    )
    reason = reasons[0] if reasons else ""

    cutoffs = list(range(1, k + 1)) if cumulative else [k]
    if reason:
        values: dict[str, Any] = {}
        for name in ALL_METRICS:
            if cumulative and name in TOPK_METRICS:
                values[name] = [_NAN] * k
            else:
                values[name] = _NAN
        return reason, values

    if ties == "average":
        ranks = orderings(pool, scores)
    else:
        ranks = [rank_pool(pool, scores, test, ties)]
    per_cutoff = [_metrics_over_orderings(ranks, test, c, ndcg_gain) for c in cutoffs]
    values = {}
    for name in ALL_METRICS:
        if cumulative and name in TOPK_METRICS:
            values[name] = [row[name] for row in per_cutoff]
        else:
            values[name] = per_cutoff[-1][name]
    return reason, values


@dataclass
class ReferenceResult:
    """Per-user reference values.

    Attributes
    ----------
    values : dict of str to ndarray
        Metric name (:data:`METRICS`) -> float64 array of shape ``(m,)``, or ``(m, k)`` for the
        top-K metrics when cumulative.
    nan_reason : ndarray of str
        Per-user NaN reason, ``""`` when defined.
    n_train, n_test : ndarray of int
        Stored entries per user in the train (0 when there is none) and test matrices.
    """

    values: dict[str, np.ndarray]
    nan_reason: np.ndarray
    n_train: np.ndarray
    n_test: np.ndarray
    k: int
    cumulative: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]


def _rows(X: Any, m: int, n: int, name: str) -> list[dict[int, float]]:
    """Stored entries of each row of a sparse matrix, read straight from its CSR arrays."""
    if not sp.issparse(X):
        raise TypeError(f"{name} must be a scipy.sparse matrix")
    X = sp.csr_array(X)
    if X.shape != (m, n):
        raise ValueError(f"{name} has shape {X.shape}, expected {(m, n)}")
    out = []
    for u in range(m):
        row: dict[int, float] = {}
        for pos in range(X.indptr[u], X.indptr[u + 1]):
            j = int(X.indices[pos])
            row[j] = row.get(j, 0.0) + float(X.data[pos])
        out.append(row)
    return out


def reference_metrics(
    X_train: Any, X_test: Any, scores: np.ndarray, k: int, **options: Any
) -> ReferenceResult:
    """Per-user metrics of a dense score matrix, computed literally (slow).

    Parameters
    ----------
    X_train : scipy.sparse matrix of shape (m, n) or None
        Train interactions; their items are excluded from the user's pool. None: every item is in
        the pool and the cold-start rule does not apply.
    X_test : scipy.sparse matrix of shape (m, n)
        Test interactions: every stored entry is a positive, its value the NDCG gain.
    scores : array of shape (m, n)
        Model scores, higher is better (NaN allowed: it makes the user NaN if in the pool).
    k : int
        Cutoff.
    **options
        ``ties``, ``ndcg_gain``, ``cumulative``, ``min_pos_test``, ``min_items_pool``,
        ``consider_cold_start``: every user's, as :func:`user_metrics` takes them.

    Returns
    -------
    ReferenceResult
    """
    scores = np.asarray(scores, dtype=np.float64)
    m, n = scores.shape
    test_rows = _rows(X_test, m, n, "X_test")
    train_rows = None if X_train is None else _rows(X_train, m, n, "X_train")
    shape = (m, k) if options.get("cumulative", False) else (m,)
    values = {
        name: np.full(shape if name in TOPK_METRICS else (m,), np.nan) for name in ALL_METRICS
    }
    reasons = []
    for u in range(m):
        reason, vals = user_metrics(
            scores[u].tolist(),
            None if train_rows is None else list(train_rows[u]),
            test_rows[u],
            k,
            **options,
        )
        reasons.append(reason)
        for name in ALL_METRICS:
            values[name][u] = vals[name]
    if train_rows is None:
        n_train = np.zeros(m, dtype=np.int64)
    else:
        n_train = np.array([len(r) for r in train_rows], dtype=np.int64)
    return ReferenceResult(
        values=values,
        nan_reason=np.array(reasons, dtype=object),
        n_train=n_train,
        n_test=np.array([len(r) for r in test_rows], dtype=np.int64),
        k=k,
        cumulative=bool(options.get("cumulative", False)),
    )


def scores_from_factors(
    A: np.ndarray | None,
    B: np.ndarray | None,
    item_biases: np.ndarray | None = None,
    n_users: int | None = None,
) -> np.ndarray:
    """Dense scores ``<A[u], B[i]> + item_biases[i]`` in float64, each a correctly rounded sum.

    With ``A = B = None`` the scores are ``item_biases`` for each of ``n_users`` users (a
    non-personalised model). The factors are read as float64 (float32 values convert exactly), and
    each dot product is summed with :func:`math.fsum`, so the result is exact whenever the exact
    value is representable (for instance for small integer factors).
    """
    if A is None or B is None:
        if item_biases is None or n_users is None:
            raise ValueError("A=B=None needs item_biases and n_users")
        b = np.asarray(item_biases, dtype=np.float64)
        return np.tile(b, (n_users, 1))
    A64 = np.asarray(A, dtype=np.float64)
    B64 = np.asarray(B, dtype=np.float64)
    m, n = A64.shape[0], B64.shape[0]
    out = np.empty((m, n))
    bias = None if item_biases is None else np.asarray(item_biases, dtype=np.float64)
    for u in range(m):
        for i in range(n):
            terms = [float(a) * float(b) for a, b in zip(A64[u], B64[i])]
            if bias is not None:
                terms.append(float(bias[i]))
            out[u, i] = math.fsum(terms)
    return out


def rbp_at_k(order: Sequence[int], test: Mapping[int, float], k: int, p: float) -> float:
    """Rank-biased precision of the first ``k`` items: ``(1 - p) sum_j v_(j) p^(j-1)`` with
    ``v`` the test value (0 for items not in ``test``; Moffat & Zobel 2008, ranx's weights)."""
    return (1 - p) * sum(float(test.get(i, 0.0)) * p**j for j, i in enumerate(order[:k]))


def bpref_at_k(
    order: Sequence[int], test: Mapping[int, float], judged: Sequence[int], k: int
) -> float:
    """bpref of a run of the first ``k`` items (Buckley & Voorhees 2004): each listed
    positive adds ``1 - min(n, R) / min(N, R)`` (1 when n = 0), n the judged non-relevant
    items listed above it; over R = |test|. Items neither positive nor judged are skipped."""
    R, N = len(test), len(judged)
    total, n = 0.0, 0
    for i in order[:k]:
        if i in judged:
            n += 1
        elif i in test:
            total += 1.0 if n == 0 else 1.0 - min(n, R) / min(N, R)
    return total / R


def auc_average_ranks(
    scores: Sequence[float], pool: Sequence[int], test: Mapping[int, float]
) -> float:
    """ROC-AUC with tied items given their average rank (RecBole's per-user AUC of GAUC):
    pairs (positive, negative) ordered right count 1, tied pairs 1/2."""
    pos = [i for i in pool if i in test]
    neg = [i for i in pool if i not in test]
    if not pos or not neg:
        return _NAN
    good = sum(
        1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0
        for a in pos
        for b in neg
    )
    return good / (len(pos) * len(neg))


def train_counts(train_rows: Sequence[Mapping[int, float]], n_items: int) -> list[int]:
    """Train entries per item."""
    counts = [0] * n_items
    for row in train_rows:
        for i in row:
            counts[i] += 1
    return counts


def recbole_tail(counts: Sequence[int], tail_ratio: float) -> set[int]:
    """RecBole's TailPercentage tail (ratio <= 1): ``count_items`` (items with a train entry)
    sorted by (count, item), the first ``max(int(len * ratio), 1)``."""
    seen = sorted(((c, i) for i, c in enumerate(counts) if c > 0))
    return {i for _, i in seen[: max(int(len(seen) * tail_ratio), 1)]} if seen else set()


def elliot_long_tail(counts: Sequence[int], pop_ratio: float = 0.8) -> set[int]:
    """Elliot's ``Popularity.get_long_tail``: walk the items by decreasing popularity (a stable
    sort keeps index order among ties) into the short head until the walked popularity reaches
    ``pop_ratio`` of the transactions; the rest is the long tail."""
    ordered = sorted(range(len(counts)), key=lambda i: -counts[i])
    limit = sum(counts) * pop_ratio
    head = []
    for i in ordered:
        head.append(i)
        limit -= counts[i]
        if limit <= 0:
            break
    return set(range(len(counts))) - set(head)


def list_share(listed: Sequence[int], group: set[int]) -> float:
    """Share of the listed items in ``group`` (NaN for an empty list)."""
    items = [i for i in listed if i >= 0]
    return sum(1 for i in items if i in group) / len(items) if items else _NAN


def pop_parity(
    lists: Sequence[Sequence[int]],
    train_rows: Sequence[Mapping[int, float]],
    test_rows: Sequence[Mapping[int, float]] | None,
    tail: set[int],
    n_items: int,
) -> float:
    """Elliot's PopRSP (``test_rows`` None) or PopREO: per group g in (short head, long tail),
    p_g = sum_u |L_u & g (& T_u)| / sum_u |(g (& T_u)) - R_u|; std(p) / mean(p)."""
    head = set(range(n_items)) - tail
    num, den = [0.0, 0.0], [0.0, 0.0]
    for u, listed in enumerate(lists):
        rec = {i for i in listed if i >= 0}
        if test_rows is not None:
            rec &= set(test_rows[u])
        for g, group in enumerate((head, tail)):
            num[g] += len(rec & group)
            cand = group & set(test_rows[u]) if test_rows is not None else set(group)
            den[g] += len(cand - set(train_rows[u]))
    if 0 in den:
        return _NAN
    p = [num[0] / den[0], num[1] / den[1]]
    mean = sum(p) / 2
    return math.sqrt(sum((x - mean) ** 2 for x in p) / 2) / mean if mean else _NAN


def recbole_gini(lists: Sequence[Sequence[int]], n_items: int) -> float:
    """RecBole's GiniIndex.get_gini: the sorted counts of the recommended items at indices
    ``n - n_rec + 1 .. n``; ``sum (2 idx - n - 1) count / total / n``."""
    counts: dict[int, int] = {}
    for row in lists:
        for i in row:
            counts[i] = counts.get(i, 0) + 1
    srt = sorted(counts.values())
    total = sum(srt)
    start = n_items - len(srt) + 1
    return sum((2 * (start + j) - n_items - 1) * c for j, c in enumerate(srt)) / total / n_items


def recbole_entropy(lists: Sequence[Sequence[int]]) -> float:
    """RecBole's ShannonEntropy.get_entropy: -sum p ln p over the recommended items, divided by
    their number."""
    counts: dict[int, int] = {}
    for row in lists:
        for i in row:
            counts[i] = counts.get(i, 0) + 1
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values()) / len(counts)


def geometric_mean_ap(values: Sequence[float]) -> float:
    """trec_eval's gm_map: exp of the mean of ln(max(AP, 1e-5)) over the defined values."""
    vals = [max(v, 1e-5) for v in values if not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else _NAN


def auc_topk_list(ranking: Sequence[int], truth: Sequence[int], k: int) -> float:
    """Hivemall's ``auc(rec, truth, k)``: ROC-AUC among the items of the top-k list only.

    The fraction of (positive, negative) pairs of the first ``k`` items of ``ranking`` in which the
    positive (an item of ``truth``) comes first. NaN when the list holds no positive or no negative.
    """
    topk = list(ranking[:k])
    truth_set = set(truth)
    pos = [j for j, i in enumerate(topk) if i in truth_set]
    neg = [j for j, i in enumerate(topk) if i not in truth_set]
    if not pos or not neg:
        return _NAN
    correct = sum(1 for p in pos for q in neg if p < q)
    return correct / (len(pos) * len(neg))


# --------------------------------------------------------------------------------------------
# The published worked examples (shared/reference/seed_examples.json) as evaluation inputs.
# --------------------------------------------------------------------------------------------

#: Expected-value keys of seed_examples.json -> (metric, NDCG gain). ``metric`` is a name of
#: :data:`METRICS` or one of the extra quantities ``"auc_topk_list"`` and ``"dcg"``.
SEED_KEYS: dict[str, tuple[str, str]] = {
    "p_at_k": ("p", "linear"),
    "r_at_k": ("r", "linear"),
    "ap_at_k": ("ap", "linear"),
    "tap_at_k": ("tap", "linear"),
    "rr_at_k": ("rr", "linear"),
    "ndcg_linear": ("ndcg", "linear"),
    "ndcg_exponential": ("ndcg", "exponential"),
    "dcg_linear": ("dcg", "linear"),
    "auc_topk_list": ("auc_topk_list", "linear"),
    "pr_auc": ("pr_auc", "linear"),
    "roc_auc_catalog": ("roc_auc", "linear"),
}


@dataclass
class SeedCheck:
    """One expected value of a worked example, with the inputs that realise it.

    Item ids of the example are mapped to columns ``id - min_id``; ``scores`` (one per column)
    realise ``ranking`` (the full ranking, best first, as column indices); ``test`` maps the
    positives' columns to their values; ``n_users`` identical users hold the same data.
    """

    case: str
    label: str
    metric: str
    ndcg_gain: str
    k: int | None
    expected: float
    tol: float
    n_items: int
    n_users: int
    scores: np.ndarray
    ranking: list[int]
    test: dict[int, float]

    @property
    def recometrics_defined(self) -> bool:
        """Whether recometrics' definitions (linear NDCG, catalog AUC...) cover this value."""
        return self.metric in METRICS and self.ndcg_gain == "linear"


def _parse_key(key: str) -> tuple[str, int | None]:
    """``'ap_at_k(k=6)'`` -> ``('ap_at_k', 6)``; ``'pr_auc'`` -> ``('pr_auc', None)``."""
    if "(" in key:
        base, arg = key[:-1].split("(")
        name, value = arg.split("=")
        if name != "k":
            raise ValueError(f"unknown argument in expected key {key!r}")
        return base, int(value)
    return key, None


def seed_checks(case: Mapping[str, Any], default_tol: float = 1e-9) -> list[SeedCheck]:
    """Every expected value of one case of seed_examples.json, as :class:`SeedCheck` objects.

    Unscored items are given scores below every scored one, in increasing id order, as the
    examples' notes say (e.g. Hivemall's items 4 and 5 go below item 6, item 4 above item 5).
    Raises ``KeyError`` on an expected key this module does not know, so no value is skipped.
    """
    name = case["name"]
    tol = float(case.get("tol", default_tol))
    n_users = int(case.get("users", 1))
    checks: list[SeedCheck] = []

    def realise(
        ranked_ids: Sequence[int], all_ids: Sequence[int], given: Mapping[int, float] | None = None
    ):
        ids = sorted(set(all_ids) | set(ranked_ids))
        lo = min(ids)
        n_items = max(ids) - lo + 1
        if given is not None:
            sc = {int(i): float(v) for i, v in given.items()}
        else:
            sc = {int(i): float(len(ranked_ids) - r) + 100.0 for r, i in enumerate(ranked_ids)}
        floor = min(sc.values())
        rest = [i for i in range(lo, lo + n_items) if i not in sc]
        for r, i in enumerate(rest):  # unscored: below every scored item, lower id first
            sc[i] = floor - 1.0 - r / (len(rest) + 1)
        scores = np.array([sc[i] for i in range(lo, lo + n_items)], dtype=np.float64)
        ranking = [int(c) for c in sorted(range(n_items), key=lambda c: (-scores[c], c))]
        return lo, n_items, scores, ranking

    def add(
        label: str,
        expected: float,
        k: int | None,
        lo: int,
        n_items: int,
        scores: np.ndarray,
        ranking: list[int],
        test_ids: Mapping[int, float],
    ) -> None:
        base, k_arg = _parse_key(label)
        metric, gain = SEED_KEYS[base]
        checks.append(
            SeedCheck(
                case=name,
                label=label,
                metric=metric,
                ndcg_gain=gain,
                k=k_arg if k_arg is not None else k,
                expected=float(expected),
                tol=tol,
                n_items=n_items,
                n_users=n_users,
                scores=scores,
                ranking=ranking,
                test={int(i) - lo: float(v) for i, v in test_ids.items()},
            )
        )

    def k_of(block_key: str) -> int:
        if not block_key.startswith("k="):
            raise ValueError(f"unknown expected block {block_key!r} in case {name}")
        return int(block_key[2:])

    if "items" in case:  # graded relevance table: every listed item is a positive
        given = {int(it["item"]): float(it["score"]) for it in case["items"]}
        rels = {int(it["item"]): float(it["rel"]) for it in case["items"]}
        lo, n_items, scores, ranking = realise([], list(given), given)
        for block, exp in case["expected"].items():
            for label, value in exp.items():
                add(label, value, k_of(block), lo, n_items, scores, ranking, rels)
    elif "relevance_in_rank_order" in case:  # relevances listed in rank order; 0 = not a positive
        rel = [float(v) for v in case["relevance_in_rank_order"]]
        ids = list(range(1, len(rel) + 1))
        lo, n_items, scores, ranking = realise(ids, ids)
        test_ids = {i: v for i, v in zip(ids, rel) if v != 0}
        for label, value in case["expected"].items():
            add(label, value, None, lo, n_items, scores, ranking, test_ids)
    elif "rankings" in case:  # several full rankings of the same items
        truth = {int(i): 1.0 for i in case["truth"]}
        for ranking_text, exp in case["rankings"].items():
            ranked = [int(x) for x in ranking_text.strip("[]").split(",")]
            ids = list(range(1, int(case["n_items"]) + 1))
            lo, n_items, scores, ranking = realise(ranked, ids)
            for label, value in exp.items():
                add(f"{label}", value, None, lo, n_items, scores, ranking, truth)
                checks[-1].label = f"{ranking_text} {label}"
    else:  # a top-k list (with or without scores) and a truth set
        truth = {int(i): 1.0 for i in case["truth"]}
        ranked = [int(x) for x in case["ranking_topk"]]
        if "n_items" in case:
            ids = list(range(1, int(case["n_items"]) + 1))
        else:
            ids = sorted(set(ranked) | set(truth))
        given = case.get("scores")
        lo, n_items, scores, ranking = realise(ranked, ids, given)
        if given is not None and [ranking[j] + lo for j in range(len(ranked))] != ranked:
            raise ValueError(f"scores of case {name} do not realise its ranking_topk")
        for block, exp in case["expected"].items():
            for label, value in exp.items():
                add(label, value, k_of(block), lo, n_items, scores, ranking, truth)
    return checks


def reference_value(check: SeedCheck) -> float:
    """The reference's value for one :class:`SeedCheck` (computed, never looked up)."""
    if check.metric == "auc_topk_list":
        return auc_topk_list(check.ranking, list(check.test), check.k)
    if check.metric == "dcg":
        return dcg_at_k(
            check.ranking, check.test, check.k if check.k else check.n_items, check.ndcg_gain
        )
    k = check.k if check.k is not None else check.n_items
    reason, values = user_metrics(
        check.scores.tolist(), None, check.test, k, ties="index", ndcg_gain=check.ndcg_gain
    )
    if reason:
        raise ValueError(f"{check.case} {check.label}: user is NaN ({reason})")
    return float(values[check.metric])


def spark_ranking_metrics(pred: list[Any], lab: list[Any], k: int) -> dict[str, float]:
    """One user's values as pyspark's ``RankingMetrics.scala`` (Spark 3.5 and 4.x) computes
    them, written out from its code, under the engine's names of the ``spark`` profile.

    ``pred`` is the list as given (every copy of an item counts, a list shorter than ``k`` is
    still divided by ``k``), ``lab`` the ground truth (its set). With :math:`h` the hits among
    the first :math:`\\min(|pred|, k)` items and :math:`s(j) = \\sum_{i \\le j} P@i [pred_i \\in
    T]`: ``p`` = precisionAt :math:`h / k`; ``r`` = recallAt :math:`h / |T|`; ``tap`` =
    meanAveragePrecisionAt :math:`s(k) / \\min(|T|, k)`; ``ap`` = meanAveragePrecision
    :math:`s(|pred|) / |T|` (the whole list); ``ndcg_bin`` = the binary ndcgAt, natural log,
    over :math:`\\min(\\max(|pred|, |T|), k)` positions, the ideal over the first
    :math:`|T|` of them. A user with an empty ground truth scores 0 for every metric (Spark
    logs a warning and counts the user)."""
    labset = set(lab)
    if not labset:
        return dict.fromkeys(("p", "r", "tap", "ap", "ndcg_bin"), 0.0)
    hits = sum(1 for i in pred[: min(len(pred), k)] if i in labset)

    def precision_sum(upto: int) -> float:
        cnt, total = 0, 0.0
        for i in range(min(upto, len(pred))):
            if pred[i] in labset:
                cnt += 1
                total += cnt / (i + 1)
        return total

    dcg = ideal = 0.0
    for i in range(min(max(len(pred), len(labset)), k)):
        gain = 1.0 / math.log(i + 2)
        dcg += gain if i < len(pred) and pred[i] in labset else 0.0
        ideal += gain if i < len(labset) else 0.0
    return {
        "p": hits / k,
        "r": hits / len(labset),
        "tap": precision_sum(k) / min(len(labset), k),
        "ap": precision_sum(len(pred)) / len(labset),
        "ndcg_bin": dcg / ideal,
    }


# -- WarpRec's tie key -------------------------------------------------------------------------

#: MurmurHash3's 32-bit finaliser as WarpRec 2.2.8's ``_fmix32_`` (warprec/data/ranking.py) loops:
#: xor with the value shifted right, then multiply modulo 2**32 (none after the last shift).
FMIX32_STEPS = ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None))
#: WarpRec's ``_GOLDEN`` (Fibonacci hashing's 2**32 / phi), unsigned.
WARPREC_GOLDEN = 0x9E3779B1


def fmix32(x: int) -> int:
    """MurmurHash3's finaliser of an unsigned 32-bit int (:data:`FMIX32_STEPS`)."""
    for shift, mult in FMIX32_STEPS:
        x ^= x >> shift
        if mult is not None:
            x = (x * mult) & 0xFFFFFFFF
    return x


def warprec_tie_key(seed: int, user: int, item: int) -> int:
    """WarpRec 2.2.8's ``_tie_keys(seed, [user], [item])`` with Python ints modulo 2**32: the
    seed folded to 32 bits (``seed ^ seed >> 32``) xor the user times ``_GOLDEN``, mixed twice,
    xor the item times ``_GOLDEN`` plus 1, mixed once; mixed, its top ``_KEY_BITS`` = 30 bits.
    Its Evaluator ranks equal scores by this key, larger first (``top_k_breaking_ties``)."""
    m32 = 0xFFFFFFFF
    folded = (seed ^ (seed >> 32)) & m32
    user_part = fmix32(fmix32(((user * WARPREC_GOLDEN) & m32) ^ folded))
    item_part = fmix32((item * WARPREC_GOLDEN + 1) & m32)
    return fmix32(user_part ^ item_part) >> (32 - 30)
