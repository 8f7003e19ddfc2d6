"""The slow reference (tests/reference.py) checked on its own, before it judges the engine.

Every value of the published worked examples (shared/reference/seed_examples.json) is reproduced
under its named variant, and a few hand-computed cases pin down the tie policies, the NaN rules and
the cumulative columns.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from reference import (
    METRICS,
    TOPK_METRICS,
    auc_topk_list,
    metrics_at_k,
    orderings,
    rank_pool,
    reference_metrics,
    reference_value,
    scores_from_factors,
    seed_checks,
    user_metrics,
)


def _all_checks(seed_examples):
    return [c for case in seed_examples["cases"] for c in seed_checks(case)]


def test_every_seed_value_is_reproduced(seed_examples):
    checks = _all_checks(seed_examples)
    # Every expected value in the file is turned into a check (seed_checks raises on unknown keys).
    n_expected = 0
    for case in seed_examples["cases"]:
        blocks = case.get("expected") or case.get("rankings")
        for v in blocks.values():
            n_expected += len(v) if isinstance(v, dict) else 1
    assert len(checks) == n_expected == 30
    failures = []
    for c in checks:
        got = reference_value(c)
        if not abs(got - c.expected) <= c.tol:
            failures.append(f"{c.case} {c.label} k={c.k}: got {got!r}, expected {c.expected!r}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "label, gain, expected",
    [
        ("ndcg_exponential(k=4)", "exponential", 0.7497534568197889),
        ("ndcg_linear(k=4)", "linear", 0.8288615669472547),
    ],
)
def test_blog_ndcg_gains(seed_examples, label, gain, expected):
    case = seed_examples["by_name"]["blog_dcg"]
    (check,) = [c for c in seed_checks(case) if c.label == label]
    assert check.ndcg_gain == gain
    assert reference_value(check) == pytest.approx(expected, abs=1e-12)


def test_hivemall_graded_exponential_by_hand():
    # Ranking [1, 3, 2, 6, 4] with relevances [5, 2, 4, 1, 3]; ideal order 5, 4, 3, 2, 1.
    order = [0, 1, 2, 3, 4]
    test = {0: 5.0, 1: 2.0, 2: 4.0, 3: 1.0, 4: 3.0}
    dcg2 = 31 + 3 / math.log2(3)
    idcg2 = 31 + 15 / math.log2(3)
    got = metrics_at_k(order, test, 2, "exponential")["ndcg"]
    assert got == pytest.approx(dcg2 / idcg2, abs=1e-12)
    assert got == pytest.approx(0.8128912838590544, abs=1e-9)


def test_hivemall_auc_in_list():
    assert auc_topk_list([1, 3, 2, 6, 4, 5], [1, 2, 4], 4) == 0.75
    assert auc_topk_list([1, 3, 2, 6, 4, 5], [1, 2, 4], 2) == 1.0
    assert math.isnan(auc_topk_list([1, 2], [1, 2, 4], 2))  # no negative in the list


def test_hand_computed_user():
    # 6 items, item 0 in train; scores rank the pool [5, 3, 1, 4, 2]; positives 3 (value 2) and 2.
    scores = [9.0, 1.0, 0.0, 4.0, 0.5, 5.0]
    reason, v = user_metrics(scores, [0], {3: 2.0, 2: 1.0}, 3)
    assert reason == ""
    assert v["p"] == pytest.approx(1 / 3)
    assert v["tp"] == pytest.approx(1 / 2)
    assert v["r"] == pytest.approx(1 / 2)
    assert v["ap"] == pytest.approx((1 / 2) / 2)
    assert v["tap"] == pytest.approx((1 / 2) / 2)
    assert v["hit"] == 1.0
    assert v["rr"] == pytest.approx(1 / 2)
    assert v["ndcg"] == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    # pairs: 3 beats {1, 4}, 2 beats none of {5, 1, 4} -> 2 of 6.
    assert v["roc_auc"] == pytest.approx(2 / 6)
    assert v["pr_auc"] == pytest.approx((1 / 2 + 2 / 5) / 2)


def test_tie_policies_by_hand():
    # Pool of 3, items 1 and 2 tied, the positive is item 2 (the higher index).
    scores = [2.0, 1.0, 1.0]
    test = {2: 1.0}
    assert rank_pool([0, 1, 2], scores, test, "index") == [0, 1, 2]
    assert rank_pool([0, 1, 2], scores, test, "optimistic") == [0, 2, 1]
    assert rank_pool([0, 1, 2], scores, test, "pessimistic") == [0, 1, 2]
    assert orderings([0, 1, 2], scores) == [[0, 1, 2], [0, 2, 1]]
    vals = {
        t: user_metrics(scores, None, test, 2, ties=t)[1]
        for t in ("index", "optimistic", "pessimistic", "average")
    }
    assert vals["index"]["roc_auc"] == 0.0
    assert vals["optimistic"]["roc_auc"] == 0.5
    assert vals["average"]["roc_auc"] == 0.25  # a tied pair counts one half
    assert vals["average"]["rr"] == pytest.approx((0 + 1 / 2) / 2)
    assert vals["average"]["p"] == pytest.approx(1 / 4)


def test_pessimistic_orders_values_upwards():
    scores = [1.0, 1.0, 1.0, 0.0]
    test = {0: 3.0, 1: 1.0}
    assert rank_pool(range(4), scores, test, "pessimistic") == [2, 1, 0, 3]
    assert rank_pool(range(4), scores, test, "optimistic") == [0, 1, 2, 3]


def test_average_roc_auc_is_mann_whitney_with_midranks():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = 7
        s = rng.integers(0, 3, n).astype(float)
        pos = rng.choice(n, size=3, replace=False)
        test = {int(i): 1.0 for i in pos}
        reason, v = user_metrics(s.tolist(), None, test, 2, ties="average")
        if reason:
            continue
        # Mann-Whitney U with ties counted one half, computed from the scores directly.
        neg = [i for i in range(n) if i not in test]
        u = sum((s[p] > s[q]) + 0.5 * (s[p] == s[q]) for p in test for q in neg)
        assert v["roc_auc"] == pytest.approx(u / (len(test) * len(neg)), abs=1e-12)


def test_nan_rules_one_at_a_time():
    s = [3.0, 2.0, 1.0, 0.0]
    assert user_metrics(s, [], {}, 2)[0] == "no_test"
    assert user_metrics(s, [], {1: 1.0}, 2, min_pos_test=2)[0] == "min_pos_test"
    assert user_metrics(s, [0, 1], {2: 1.0}, 1, min_items_pool=3)[0] == "min_items_pool"
    assert user_metrics(s, [], {2: 1.0}, 1, consider_cold_start=False)[0] == "cold_start"
    assert user_metrics(s, None, {2: 1.0}, 1, consider_cold_start=False)[0] == ""
    assert user_metrics([3.0, math.nan, 1.0, 0.0], [], {2: 1.0}, 1)[0] == "nan_score"
    assert user_metrics([3.0, math.nan, 1.0, 0.0], [1], {2: 1.0}, 1)[0] == ""  # NaN not in pool
    assert user_metrics([5.0, 1.0, 1.0, 1.0], [0], {2: 1.0}, 1)[0] == "all_equal"
    reason, v = user_metrics(s, [], {}, 2)
    assert all(math.isnan(v[m]) for m in METRICS)


def test_only_positives_and_small_pool():
    # Only positives: NDCG only.
    reason, v = user_metrics([2.0, 1.0, 0.0], [0], {1: 1.0, 2: 3.0}, 1)
    assert reason == ""
    assert v["ndcg"] == pytest.approx(1 / 3)
    assert all(math.isnan(v[m]) for m in METRICS if m != "ndcg")
    # Pool of 3 <= k = 3: P, TP, R, Hit NaN; the order-sensitive ones are computed.
    reason, v = user_metrics([2.0, 1.0, 0.0], None, {1: 1.0}, 3)
    assert [math.isnan(v[m]) for m in ("p", "tp", "r", "hit")] == [True] * 4
    assert v["ap"] == 0.5 and v["tap"] == 0.5 and v["rr"] == 0.5
    assert v["ndcg"] == pytest.approx(1 / math.log2(3))
    # Negative and zero test values are positives; NDCG uses only the values > 0 in the ideal DCG.
    reason, v = user_metrics([3.0, 2.0, 1.0, 0.0], None, {0: -1.0, 1: 0.0, 2: 2.0}, 2)
    assert v["p"] == 1.0 and v["hit"] == 1.0
    assert v["ndcg"] == pytest.approx((-1.0) / 2.0)
    reason, v = user_metrics([3.0, 2.0, 1.0, 0.0], None, {0: -1.0, 1: 0.0}, 2)
    assert math.isnan(v["ndcg"]) and v["p"] == 1.0


def test_cumulative_equals_single_cutoffs():
    rng = np.random.default_rng(1)
    m, n, k = 6, 9, 5
    S = rng.integers(0, 4, (m, n)).astype(float)
    cell = rng.choice(3, size=(m, n), p=[0.5, 0.2, 0.3])  # 0 unseen, 1 train, 2 test
    Xtr = sp.csr_array((cell == 1).astype(float))
    rows, cols = np.nonzero(cell == 2)
    Xte = sp.csr_array((rng.integers(-1, 4, rows.size).astype(float), (rows, cols)), shape=(m, n))
    assert Xte.nnz == rows.size  # zero test values stay stored
    for ties in ("index", "optimistic", "average"):
        cum = reference_metrics(Xtr, Xte, S, k, ties=ties, cumulative=True)
        for j in range(1, k + 1):
            single = reference_metrics(Xtr, Xte, S, j, ties=ties)
            for name in TOPK_METRICS:
                np.testing.assert_array_equal(cum[name][:, j - 1], single[name])
        for name in ("roc_auc", "pr_auc"):
            np.testing.assert_array_equal(cum[name], single[name])


def test_scores_from_factors_exact():
    A = np.array([[1.0, 2.0], [0.5, -1.0]], dtype=np.float32)
    B = np.array([[3.0, 1.0], [0.0, 2.0], [1.0, 1.0]], dtype=np.float32)
    b = np.array([0.25, 0.0, -1.0])
    np.testing.assert_array_equal(
        scores_from_factors(A, B, b), A.astype(float) @ B.T.astype(float) + b
    )
    np.testing.assert_array_equal(scores_from_factors(None, None, b, n_users=2), np.vstack([b, b]))


def test_variant_metrics_by_hand():
    # Pool ranked [0, 1, 2, 3, 4]; positives 1 (value 3) and 3 (value 1).
    order = [0, 1, 2, 3, 4]
    test = {1: 3.0, 3: 1.0}
    v = metrics_at_k(order, test, 3)
    # binary gains: DCG = 1/log2(3), IDCG = 1 + 1/log2(3)
    assert v["ndcg_bin"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # exponential gains: DCG = 7/log2(3), IDCG = 7 + 1/log2(3)
    assert v["ndcg_exp"] == pytest.approx((7 / math.log2(3)) / (7 + 1 / math.log2(3)))
    # in-list AUC over [0, 1, 2]: positive 1 beats 2, loses to 0 -> 1/2
    assert v["auc_topk"] == 0.5
    assert metrics_at_k(order, test, 4)["auc_topk"] == 0.25  # of 4 pairs only (1, 2) is right
    assert metrics_at_k([1, 0, 2, 3, 4], test, 1)["auc_topk"] == 0.5  # no negative in the list
    # MPR: ranks 2 and 4 of 5 -> percentiles 1/4 and 3/4, weighted by 3 and 1
    assert v["mpr"] == pytest.approx((3 * 0.25 + 1 * 0.75) / 4)
    assert metrics_at_k(order, test, 3)["mpr"] == metrics_at_k(order, test, 1)["mpr"]  # no k
    assert math.isnan(metrics_at_k(order, {1: -1.0, 3: 0.0}, 3)["mpr"])  # weights sum <= 0
