r"""Every rank metric's definition on fixtures small enough to check by hand, with no peer
library installed (README's test command, the ``dev`` extra only).

The expected values are worked out in the comments from the formulas the metrics cite (the
papers, trec_eval's and ranx's documented formulas), not from this package. Peer cross-checks
(tests/metrics/test_crosscheck_*.py) skip without the peers; these never do.

Fixture ``ONE_USER``: 8 items, no train, item ``i`` scored ``8 - i`` (so ranked ``i + 1``);
positives item 0 (test value 1), item 2 (value 3) and item 5 (value 2): ranks 1, 3 and 6,
|T| = 3, pool 8 (negatives at ranks 2, 4, 5, 7, 8). Metrics at k = 1..6 from the curves.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

L2 = math.log2
K = 6
#: hits(k) for k = 1..6: positives at ranks 1, 3, 6
HITS = [1, 1, 2, 2, 2, 3]


def _one_user():
    test = sp.csr_array((np.array([1.0, 3.0, 2.0]), ([0, 0, 0], [0, 2, 5])), shape=(1, 8))
    scores = (8.0 - np.arange(8.0))[None, :]
    return test, scores


def _dcg(gains_at_rank: dict[int, float], k: int) -> float:
    return sum(g / L2(r + 1) for r, g in gains_at_rank.items() if r <= k)


def _ideal(gains: list[float], k: int) -> float:
    return sum(g / L2(j + 2) for j, g in enumerate(sorted(gains, reverse=True)[:k]))


#: rank -> test value of the fixture's positives
VALUES = {1: 1.0, 3: 3.0, 6: 2.0}
SUM_PREC = [1.0, 1.0, 1 + 2 / 3, 1 + 2 / 3, 1 + 2 / 3, 1 + 2 / 3 + 3 / 6]  # sum of i / r_i

AT_K = {
    # P@k = hits / k
    "p": [h / k for k, h in enumerate(HITS, 1)],
    # TP@k = hits / min(k, |T|)
    "tp": [h / min(k, 3) for k, h in enumerate(HITS, 1)],
    # R@k = hits / |T|
    "r": [h / 3 for h in HITS],
    # AP@k = (1/|T|) sum_{r_i <= k} i / r_i
    "ap": [s / 3 for s in SUM_PREC],
    # TAP@k = (1/min(k, |T|)) sum
    "tap": [s / min(k, 3) for k, s in enumerate(SUM_PREC, 1)],
    # Hivemall's AP over the hits: (1/hits(k)) sum
    "ap_hits": [s / h for s, h in zip(SUM_PREC, HITS)],
    "hit": [1.0] * K,
    "rr": [1.0] * K,  # the first positive is ranked 1
    "hits": [float(h) for h in HITS],
    # F1@k = 2 hits / (k + |T|)
    "f1": [2 * h / (k + 3) for k, h in enumerate(HITS, 1)],
    # trec_eval's set_map = P@k R@k = hits^2 / (k |T|)
    "set_map": [h * h / (k * 3) for k, h in enumerate(HITS, 1)],
    # DCG with the linear gain (the test value), Jarvelin & Kekalainen 2002
    "dcg": [_dcg(VALUES, k) for k in range(1, K + 1)],
    # DCG with the exponential gain 2^v - 1 (Burges et al. 2005)
    "dcg_exp": [_dcg({r: 2**v - 1 for r, v in VALUES.items()}, k) for k in range(1, K + 1)],
    # NDCG: DCG / the DCG of the gains sorted descending over min(k, |T|) ranks
    "ndcg": [_dcg(VALUES, k) / _ideal([1, 3, 2], k) for k in range(1, K + 1)],
    "ndcg_exp": [
        _dcg({r: 2**v - 1 for r, v in VALUES.items()}, k) / _ideal([1, 7, 3], k)
        for k in range(1, K + 1)
    ],
    "ndcg_bin": [
        _dcg(dict.fromkeys(VALUES, 1.0), k) / _ideal([1, 1, 1], k) for k in range(1, K + 1)
    ],
    # Hivemall's AUC inside the top-k list: (positive, negative) pairs of the list in order,
    # over h (L - h); 0.5 without pairs. Lists: k=1 [p] no pair; k=2 [p n] 1/1; k=3 [p n p]
    # 1/2; k=4 [p n p n] 3/4; k=5 [p n p n n] 5/6; k=6 [p n p n n p] (3 + 2 + 0)/9
    "auc_topk": [0.5, 1.0, 1 / 2, 3 / 4, 5 / 6, 5 / 9],
    # RBP (Moffat & Zobel 2008), p = 0.8, weighted by the test value: (1 - p) sum v_j p^(j-1)
    "rbp": [
        0.2 * (1 + (3 * 0.8**2 if k >= 3 else 0) + (2 * 0.8**5 if k >= 6 else 0))
        for k in range(1, K + 1)
    ],
    # bpref without judged non-relevant items: every listed positive counts 1, over R
    "bpref": [h / 3 for h in HITS],
}


@pytest.fixture(scope="module")
def one_user():
    test, scores = _one_user()
    names = [
        *AT_K,
        "roc_auc",
        "pr_auc",
        "mpr",
        "rprec",
        "11pt_avg",
        *[f"iprec_at_recall_{j / 10:.2f}" for j in range(11)],
    ]
    return rt.evaluate(
        None, test, scores=scores, k=K, cumulative=True, metrics=names, ties="index", nthreads=1
    )


@pytest.mark.parametrize("name", list(AT_K))
def test_rank_metric_at_every_k(one_user, name):
    np.testing.assert_allclose(
        one_user.curves_per_user[f"{name}_at_k"][0], AT_K[name], rtol=0, atol=1e-12, err_msg=name
    )
    assert one_user.per_user[f"{name}_at_{K}"][0] == pytest.approx(AT_K[name][-1], abs=1e-12)


def test_whole_ranking_metrics(one_user):
    pu = one_user.per_user
    # ROC-AUC: pairs (positive above negative) over 3 x 5: rank 1 beats 5, rank 3 beats 4
    # (ranks 4, 5, 7, 8), rank 6 beats 2 (ranks 7, 8)
    assert pu["roc_auc"][0] == pytest.approx(11 / 15, abs=1e-12)
    # PR-AUC: AP over the whole ranking, (1/3)(1/1 + 2/3 + 3/6)
    assert pu["pr_auc"][0] == pytest.approx(13 / 18, abs=1e-12)
    # MPR (Hu, Koren & Volinsky 2008): sum v (r - 1)/(|pool| - 1) / sum v
    #   = (1*0 + 3*2/7 + 2*5/7) / 6
    assert pu["mpr"][0] == pytest.approx((0 + 3 * 2 / 7 + 2 * 5 / 7) / 6, abs=1e-12)
    # R-precision: positives in the top |T| = 3 (ranks 1 and 3), over 3
    assert pu["rprec"][0] == pytest.approx(2 / 3, abs=1e-12)


def test_interpolated_precision_and_11pt_average(one_user):
    """trec_eval 9's iprec_at_recall (m_iprec_at_recall.c: the recall level x as a number of
    relevant documents "by adding 0.9 and casting to an integral type", in double arithmetic),
    then the best precision from that positive on; the precisions at the positives are 1/1,
    2/3 and 3/6. With |T| = 3: c = 0 or 1 for x <= 0.3, 2 for x = 0.4..0.7 (0.7 * 3 + 0.9 is
    2.9999999999999996 in doubles, cast to 2), 3 for x = 0.8..1.0."""
    at_pos = [1.0, 2 / 3, 3 / 6]
    levels = [j / 10 for j in range(11)]
    cuts = [max(1, int(x * 3 + 0.9)) for x in levels]
    assert cuts == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]
    want = [max(at_pos[c - 1 :]) for c in cuts]
    got = [one_user.per_user[f"iprec_at_recall_{x:.2f}"][0] for x in levels]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # 11pt_avg: their mean, (4 * 1 + 4 * 2/3 + 3 * 1/2) / 11
    assert one_user.per_user["11pt_avg"][0] == pytest.approx((4 + 8 / 3 + 3 / 2) / 11, abs=1e-12)


def test_bpref_denominator_is_min_of_judged_non_relevant_and_relevant():
    """bpref with fewer judged non-relevant items than relevant ones (N = 2 < R = 4), at
    relevance level 1 (Buckley & Voorhees 2004 as trec_eval computes it, m_bpref.c:
    ``1 - min(n, R) / min(R, N)`` for each relevant retrieved below n > 0 judged non-relevant).

    Ranking (item = rank - 1): 0 judged non-relevant, 1 relevant, 2 judged non-relevant,
    3 relevant, 4 relevant, 5 unjudged, 6 relevant, 7 and 8 unjudged. Terms: item 1 (n = 1)
    1 - 1/2; items 3, 4, 6 (n = 2) 1 - 2/2 = 0. bpref = (1/2) / 4 = 1/8 (a denominator of R
    would give (3/4 + 3 * 1/2) / 4 = 9/16)."""
    items = [0, 1, 2, 3, 4, 6]
    values = [0.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    test = sp.csr_array((np.array(values), ([0] * 6, items)), shape=(1, 9))
    scores = (9.0 - np.arange(9.0))[None, :]
    # at k = 2 only item 1 is listed among the positives: (1 - 1/2) / 4, the same 1/8
    for k in (8, 2):
        res = rt.evaluate(
            None,
            test,
            scores=scores,
            k=k,
            metrics=["bpref"],
            relevance_level=1,
            ties="index",
            nthreads=1,
        )
        assert res.per_user[f"bpref_at_{k}"][0] == pytest.approx(1 / 8, abs=1e-12)


def test_gm_map_floors_each_average_precision_at_1e5():
    """trec_eval's gm_map (Robertson 2006): exp of the mean of ln max(AP, 1e-5) (trec_eval's
    MIN_GEO_MEAN). User 0: one positive ranked 2nd, AP = 1/2; user 1: judged only
    non-relevant, counted 0 under no_positive="zero" (trec_eval's rule), floored to 1e-5:
    gm_map = exp((ln 0.5 + ln 1e-5) / 2) = sqrt(5e-6). Without the floor it would be 0."""
    test = sp.csr_array((np.array([1.0, 0.0]), ([0, 1], [1, 2])), shape=(2, 5))
    scores = np.tile(5.0 - np.arange(5.0), (2, 1))
    res = rt.evaluate(
        None,
        test,
        scores=scores,
        k=2,
        metrics=["pr_auc", "gm_map"],
        relevance_level=1,
        no_positive="zero",
        ties="index",
        nthreads=1,
    )
    np.testing.assert_allclose(res.per_user["pr_auc"], [0.5, 0.0], rtol=0, atol=1e-12)
    assert res.aggregates["gm_map"] == pytest.approx(math.sqrt(0.5 * 1e-5), rel=1e-12)
    # above the floor it is the plain geometric mean: APs 1/2 and 1/4 (ranks 2 and 4)
    test = sp.csr_array((np.ones(2), ([0, 1], [1, 3])), shape=(2, 5))
    res = rt.evaluate(
        None, test, scores=scores, k=2, metrics=["pr_auc", "gm_map"], ties="index", nthreads=1
    )
    assert res.aggregates["gm_map"] == pytest.approx(math.sqrt(0.5 * 0.25), rel=1e-12)


# ------------------------------------------------------------------------------ list metrics
#
# Fixture: 6 items. Four train-only users (rows 2-5) hold items {0, 1, 2, 3}, {0, 1, 2},
# {0, 1} and {0}: train popularity pop = n = (4, 3, 2, 1, 0, 0), 10 entries, |U_train| = 4.
# Two evaluated users without train entries, top-2 lists as ranked input:
# user 0 lists [1, 4] (positive 4), user 1 lists [3, 5] (positive 1).
# Elliot's short head: items by decreasing popularity until 0.8 * 10 = 8 entries: 4 + 3 + 2
# -> {0, 1, 2}; long tail {3, 4, 5}. RecBole's tail (tail_ratio 0.1): max(1, floor(0.1 * 4))
# = 1 least popular item with a train entry: {3}.
# Item features (for ils): items 0, 1, 2 = (1, 0), item 3 = (0, 1), 4 = (1, 1), 5 = (0, 1).


def _lists_fixture():
    train_rows = {2: [0, 1, 2, 3], 3: [0, 1, 2], 4: [0, 1], 5: [0]}
    r = [u for u, items in train_rows.items() for _ in items]
    c = [i for items in train_rows.values() for i in items]
    train = sp.csr_array((np.ones(len(r)), (r, c)), shape=(6, 6))
    test = sp.csr_array((np.ones(2), ([0, 1], [4, 1])), shape=(6, 6))
    lists = np.full((6, 2), -1, dtype=np.int64)
    lists[0], lists[1] = [1, 4], [3, 5]
    features = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [1, 1], [0, 1]], dtype=float)
    return train, test, lists, features


@pytest.fixture(scope="module")
def listed():
    train, test, lists, features = _lists_fixture()
    names = [
        "arp",
        "tailpercentage",
        "aplt",
        "aclt",
        "novelty",
        "ils",
        "diversity",
        "serendipity",
        "pop_rsp",
        "pop_reo",
        "coverage",
        "aggregated_diversity",
        "entropy",
        "gini",
        "gini_items",
        "entropy_mean",
        "personalisation",
        "p_pooled",
    ]
    return rt.evaluate(
        train,
        test,
        ranked=lists,
        k=2,
        metrics=names,
        item_features=features,
        serendipity_top_n=1,
        nthreads=1,
    )


def test_per_user_list_metrics(listed):
    pu = listed.per_user
    want = {
        # RecBole AveragePopularity: mean pop over the list: (3 + 0)/2, (1 + 0)/2
        "arp": [1.5, 0.5],
        # RecBole TailPercentage: share of the list in the tail {3}
        "tailpercentage": [0.0, 0.5],
        # Elliot APLT / ACLT: share / number of long-tail items {3, 4, 5} in the list
        "aplt": [0.5, 1.0],
        "aclt": [1.0, 2.0],
        # novelty: mean -log2(max(n_i, 1) / 4): item 1 n = 3, items 3 n = 1, 4 and 5 n = 0 -> 1
        "novelty": [(-L2(3 / 4) + 2) / 2, 2.0],
        # ILS: cosine of the one pair: (1, 0).(1, 1) / sqrt(2); (0, 1).(0, 1) = 1
        "ils": [1 / math.sqrt(2), 1.0],
        "diversity": [1 - 1 / math.sqrt(2), 0.0],
        # serendipity with N = 1 (item 0 the most popular): listed positives outside {0}
        # over the list: user 0 lists its positive 4, user 1 lists none of {1}
        "serendipity": [0.5, 0.0],
    }
    for name, values in want.items():
        np.testing.assert_allclose(
            pu[f"{name}_at_2"].to_numpy()[:2], values, rtol=0, atol=1e-12, err_msg=name
        )
        assert pu[f"{name}_at_2"].iloc[2:].isna().all()  # users not evaluated


def test_aggregate_list_metrics(listed):
    agg = listed.aggregates
    # lists {1, 4} and {3, 5}: 4 distinct items of 6, each in one list (p_i = 1/4)
    assert agg["aggregated_diversity_at_2"] == 4
    assert agg["coverage_at_2"] == pytest.approx(4 / 6, abs=1e-12)
    assert agg["entropy_at_2"] == pytest.approx(math.log(4), abs=1e-12)
    assert agg["entropy_mean_at_2"] == pytest.approx(math.log(4) / 4, abs=1e-12)
    # Gini over the 6 items, shares ascending (0, 0, 1/4, 1/4, 1/4, 1/4):
    # sum_j (2j - 7) p_(j) = (-1 + 1 + 3 + 5) / 4 = 2, over |I| - 1 = 5
    assert agg["gini_at_2"] == pytest.approx(2 / 5, abs=1e-12)
    # RecBole GiniIndex: counts (0, 0, 1, 1, 1, 1): (-1 + 1 + 3 + 5) / (6 * 4)
    assert agg["gini_items_at_2"] == pytest.approx(8 / 24, abs=1e-12)
    # no item shared between the two lists
    assert agg["personalisation_at_2"] == pytest.approx(1.0, abs=1e-12)
    # implicit's precision: (1 + 0) hits over min(2, 1) + min(2, 1)
    assert agg["p_pooled_at_2"] == pytest.approx(1 / 2, abs=1e-12)
    # PopRSP: p_head = (1 + 0) / (3 + 3), p_tail = (1 + 2) / (3 + 3); population std over
    # mean = (1/6) / (1/3)
    assert agg["pop_rsp_at_2"] == pytest.approx(1 / 2, abs=1e-12)
    # PopREO: head: user 1's positive 1 is in the head but not listed -> 0 / 1; tail: user
    # 0's positive 4 is listed -> 1 / 1; std / mean = 0.5 / 0.5
    assert agg["pop_reo_at_2"] == pytest.approx(1.0, abs=1e-12)
