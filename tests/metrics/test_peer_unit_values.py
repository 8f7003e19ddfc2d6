"""The values of peers' own unit tests, reproduced through the profiles and metrics that name them.

Each case is transcribed from the peer's public test file (cited per test) and expressed as
users, scores or ranked lists; the expected values are the peer's, not ours. Cases a peer tests
that this project cannot express are named in the docstrings, with the reason.

RecBole is not installed here; its values come from ``tests/metrics/test_topk_metrics.py`` and
``tests/metrics/test_rank_metrics.py`` of RUCAIBox/RecBole (transcribed). ranx's from
``tests/unit/ranx/metrics/{bpref,rank_biased_precision,f1}_test.py`` of AmenRa/ranx. Hivemall's
``BinaryResponsesMeasuresTest`` values are in ``test_profile_formulas.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

# ------------------------------------------------------------------------------------ RecBole

#: RecBole test_topk_metrics.py: hit flags of the top-3 lists of four users and |T| of each.
POS_IDX = [[0, 0, 0], [1, 1, 1], [1, 0, 1], [0, 0, 1]]
POS_LEN = [1, 3, 4, 2]
L2 = np.log2


def _evaluate(train, test, **kw):
    """``rt.evaluate`` on one thread."""
    return rt.evaluate(train, test, nthreads=1, **kw)


def _recbole_users(n_items: int = 12):
    """Users whose top-3 lists have the hit pattern of POS_IDX, the other positives ranked
    right after the list, then the negatives (scores decrease with the position)."""
    m = len(POS_IDX)
    scores = np.zeros((m, n_items))
    rows, cols = [], []
    for u, (flags, n_pos) in enumerate(zip(POS_IDX, POS_LEN)):
        order = list(range(n_items))  # item j at position j + 1
        scores[u, order] = n_items - np.arange(n_items, dtype=float)
        positives = [j for j, f in enumerate(flags) if f]
        positives += list(range(3, 3 + n_pos - len(positives)))
        rows += [u] * len(positives)
        cols += positives
    test = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(m, n_items))
    return test, scores


@pytest.mark.parametrize(
    "library_name, expected",
    [
        ("hit", [[0, 0, 0], [1, 1, 1], [1, 1, 1], [0, 0, 1]]),
        (
            "ndcg",
            [
                [0, 0, 0],
                [1, 1, 1],
                [
                    1,
                    1 / L2(2) / (1 / L2(2) + 1 / L2(3)),
                    (1 / L2(2) + 1 / L2(4)) / (1 / L2(2) + 1 / L2(3) + 1 / L2(4)),
                ],
                [0, 0, 1 / L2(4) / (1 / L2(2) + 1 / L2(3))],
            ],
        ),
        ("mrr", [[0, 0, 0], [1, 1, 1], [1, 1, 1], [0, 0, 1 / 3]]),
        (
            "map",
            [[0, 0, 0], [1, 1, 1], [1, 1 / 2, 1 / 3 * (1 / 1 + 2 / 3)], [0, 0, 1 / 3 * (1 / 2)]],
        ),
        ("recall", [[0, 0, 0], [1 / 3, 2 / 3, 3 / 3], [1 / 4, 1 / 4, 2 / 4], [0, 0, 1 / 2]]),
        ("precision", [[0, 0, 0], [1, 1, 1], [1, 1 / 2, 2 / 3], [0, 0, 1 / 3]]),
    ],
)
def test_recbole_topk_metrics(library_name, expected):
    """RecBole TestTopKMetrics.test_{hit,ndcg,mrr,map,recall,precision}: the @1..3 values."""
    test, scores = _recbole_users()
    name = PROFILES["recbole"]["aliases"][library_name]
    res = _evaluate(
        None, test, scores=scores, k=3, cumulative=True, metrics=[name], profile="recbole"
    )
    np.testing.assert_allclose(res.curves_per_user[f"{name}_at_k"], expected, rtol=0, atol=1e-12)


#: RecBole test_topk_metrics.py: five top-3 lists over 8 items and the train counts.
ITEM_MATRIX = [[5, 7, 3], [4, 5, 2], [2, 3, 5], [1, 4, 6], [5, 3, 7]]
ITEM_COUNT = {1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 6: 5}


def _recbole_lists():
    """The five lists as ranked input (users 0-4, no train entry, one test item each: item 0,
    listed by none), and train-only users giving item i the count ITEM_COUNT[i] (users 5..)."""
    n_items, n_lists = 8, len(ITEM_MATRIX)
    n_train_users = max(ITEM_COUNT.values())
    m = n_lists + n_train_users
    tr_r, tr_c = [], []
    for item, count in ITEM_COUNT.items():
        tr_r += [n_lists + j for j in range(count)]
        tr_c += [item] * count
    train = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, n_items))
    test = sp.csr_array((np.ones(n_lists), (range(n_lists), [0] * n_lists)), shape=(m, n_items))
    lists = np.full((m, 3), -1, dtype=np.int64)
    lists[:n_lists] = ITEM_MATRIX
    return train, test, lists


def test_recbole_list_metrics():
    """RecBole test_itemcoverage, test_averagepopularity (the @1..3 means of each user),
    test_giniindex and test_shannonentropy on the five lists. Not expressible: the
    test_tailpercentage case, whose count table holds an item with a count of 0 (item 1) as a
    tail candidate; counts here come from train entries, and RecBole's own count table
    (``data.count_items``, a Counter of the train interactions) never holds a 0 either."""
    train, test, lists = _recbole_lists()
    with pytest.warns(UserWarning, match="left out: \\['gauc', 'roc_auc'\\]"):
        res = _evaluate(train, test, ranked=lists, k=3, cumulative=True, profile="recbole")
    assert res.aggregates["coverage_at_3"] == pytest.approx(7 / 8, abs=1e-12)
    arp = [
        [4 / 1, 4 / 2, 6 / 3],
        [3 / 1, 7 / 2, 8 / 3],
        [1 / 1, 3 / 2, 7 / 3],
        [0 / 1, 3 / 2, 8 / 3],
        [4 / 1, 6 / 2, 6 / 3],
    ]
    np.testing.assert_allclose(res.curves_per_user["arp_at_k"][:5], arp, rtol=0, atol=1e-12)
    gini = ((-7) * 0 + (-5) * 1 + (-3) * 1 + (-1) * 2 + 1 * 2 + 3 * 2 + 5 * 3 + 7 * 4) / (
        8 * (3 * 5)
    )
    assert res.aggregates["gini_items_at_3"] == pytest.approx(gini, abs=1e-12)
    p = np.array([1, 2, 3, 2, 4, 1, 2]) / 15
    assert res.aggregates["entropy_mean_at_3"] == pytest.approx(-np.mean(p * np.log(p)), abs=1e-12)
    # the profile's whole-ranking GAUC cannot come from ranked lists: left out and recorded
    assert "gauc" in res.definitions["left_out"] and "gauc" not in res.aggregates


@pytest.mark.parametrize(
    "case, users, expected",
    [
        # (pool size, positive ranks): pos_rank_sum0 = [1, 4, 9] over user_len0 = [2, 3, 5]
        (
            0,
            [(2, [1]), (3, [1, 3]), (5, [1, 3, 5])],
            (
                1 * ((2 - (1 - 1) / 2 - 1 / 1) / (2 - 1))
                + 2 * ((3 - (2 - 1) / 2 - 4 / 2) / (3 - 2))
                + 3 * ((5 - (3 - 1) / 2 - 9 / 3) / (5 - 3))
            )
            / (1 + 2 + 3),
        ),
        # case 1: a user without positives and one with only positives are left out
        (1, [(3, [3]), (6, []), (4, [1, 2, 3, 4])], (3 - 0 - 3 / 1) / (3 - 1)),
    ],
)
def test_recbole_gauc(case, users, expected):
    """RecBole TestRankMetrics.test_gauc: users given by their pool size and the ranks of their
    positives."""
    n = max(size for size, _ in users)
    m = len(users)
    scores = np.tile(n - np.arange(n, dtype=float), (m, 1))
    tr_r, tr_c, te_r, te_c = [], [], [], []
    for u, (size, ranks) in enumerate(users):
        tr_r += [u] * (n - size)
        tr_c += list(range(size, n))
        te_r += [u] * len(ranks)
        te_c += [r - 1 for r in ranks]
    train = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, n))
    test = sp.csr_array((np.ones(len(te_r)), (te_r, te_c)), shape=(m, n))
    res = _evaluate(
        train, test, scores=scores, k=1, metrics=["gauc"], profile="recbole", min_items_pool=1
    )
    assert res.aggregates["gauc"] == pytest.approx(expected, abs=1e-12)


def test_recbole_gauc_average_rank_example():
    """The issue's case: scores [2, 1, 1, 0] with positives 0 and 1: RecBole's average ranks
    give 0.875 where ranking ties by index gives 1.0."""
    test = sp.csr_array((np.ones(2), ([0, 0], [0, 1])), shape=(1, 4))
    scores = np.array([[2.0, 1.0, 1.0, 0.0]])
    res = _evaluate(None, test, scores=scores, k=1, profile="recbole", metrics=["gauc"])
    assert res.aggregates["gauc"] == pytest.approx(0.875, abs=1e-12)
    assert res.per_user["roc_auc"][0] == 1.0  # the profile's index order


# --------------------------------------------------------------------------------------- ranx

#: ranx bpref_test.py / f1_test.py: judgements (1 relevant, 0 judged non-relevant) and runs.
RANX_QRELS = {
    "q1": {"d2": 1, "d5": 1, "d1": 0, "d4": 0},
    "q2": {"d2": 1, "d5": 1, "d1": 0, "d6": 0},
    "q3": {"d2": 1, "d5": 1, "d7": 1, "d1": 0, "d6": 0, "d8": 0},
    "q4": {"d2": 1, "d4": 1, "d6": 1, "d9": 1, "d1": 0, "d3": 0, "d7": 0, "d8": 0},
}
RANX_RUN = {
    "q1": {"d1": 10, "d2": 9, "d3": 8, "d4": 7},
    "q2": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5},
    "q3": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5, "d7": 4, "d8": 3},
    "q4": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d6": 5, "d7": 4, "d8": 3},
}


def _query(qrels: dict, run: dict, n_items: int = 20):
    """One user: documents ``dN`` are item N; the run's documents keep their scores, every other
    item scores below them; judgements are the test values."""
    scores = np.full((1, n_items), -100.0)
    for doc, s in run.items():
        scores[0, int(doc[1:])] = s
    items = [int(d[1:]) for d in qrels]
    test = sp.csr_array(
        (np.array(list(qrels.values()), dtype=float), ([0] * len(items), items)), shape=(1, n_items)
    )
    return test, scores


@pytest.mark.parametrize(
    "q, expected",
    [
        ("q1", 1 / 2 * (1 - (1 / 2))),
        ("q2", 1 / 2 * ((1 - (1 / 2)) + (1 - (1 / 2)))),
        ("q3", 1 / 3 * ((1 - (1 / 3)) + (1 - (1 / 3)) + (1 - (2 / 3)))),
        ("q4", 1 / 4 * ((1 - (1 / 4)) + (1 - (2 / 4)) + (1 - (2 / 4)))),
    ],
)
def test_ranx_bpref(q, expected):
    """ranx bpref_test.py: bpref over the run, judgements below 1 judged non-relevant (the
    ranx profile with relevance_level=1, K = the run's length)."""
    test, scores = _query(RANX_QRELS[q], RANX_RUN[q])
    res = _evaluate(
        None,
        test,
        scores=scores,
        k=len(RANX_RUN[q]),
        profile="ranx",
        metrics=["bpref"],
        relevance_level=1,
    )
    assert res.per_user[f"bpref_at_{len(RANX_RUN[q])}"][0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("q", ["q1", "q2", "q3"])
def test_ranx_f1(q):
    """ranx f1_test.py: F1 = 2PR/(P+R) over the run (q4 of that test retrieves documents
    outside the item range used here and is the zero case, checked on q4's judgements with a
    run of non-relevant items)."""
    test, scores = _query(RANX_QRELS[q], RANX_RUN[q])
    k = len(RANX_RUN[q])
    res = _evaluate(
        None, test, scores=scores, k=k, metrics=["p", "r", "f1"], relevance_level=1, ties="index"
    ).per_user
    p, r = res[f"p_at_{k}"][0], res[f"r_at_{k}"][0]
    assert res[f"f1_at_{k}"][0] == pytest.approx(2 * p * r / (p + r), abs=1e-12)


def test_ranx_f1_without_a_hit_is_zero():
    run = {"d1": 10, "d12": 9, "d3": 8, "d14": 7, "d16": 5, "d7": 4, "d8": 3}
    test, scores = _query(RANX_QRELS["q4"], run)
    res = _evaluate(None, test, scores=scores, k=7, metrics=["f1"], relevance_level=1, ties="index")
    assert res.per_user["f1_at_7"][0] == 0.0


@pytest.mark.parametrize("p, expected", [(0.5, 0.7661), (0.8, 0.4526), (0.95, 0.1881)])
def test_ranx_rank_biased_precision(p, expected):
    """ranx rank_biased_precision_test.py: relevant d1, d2, d6, d11, d17 in a run of d1..d20
    scored 21 - i; ranx rounds to 4 decimals."""
    qrels = {f"d{i}": 1 for i in (1, 2, 6, 11, 17)}
    run = {f"d{i}": 21 - i for i in range(1, 21)}
    test, scores = _query(qrels, run, n_items=21)
    res = _evaluate(
        None, test, scores=scores, k=20, metrics=["rbp"], rbp_persistence=p, ties="index"
    )
    assert round(res.per_user["rbp_at_20"][0], 4) == expected
    assert res.definitions["rbp_persistence"] == p


#: Two queries with judged non-relevant documents (relevance 0): ``q0`` judges d0 relevant at
#: level 2, d1 non-relevant (0) and d3 relevant at level 1; ``q1`` judges only d2, non-relevant.
#: Both runs rank d0 > d1 > d2 > d3 > d4.
RANX_ZERO_QRELS = {"q0": {"d0": 2, "d1": 0, "d3": 1}, "q1": {"d2": 0}}


def _ranx_zero_queries():
    rows, cols, vals = [], [], []
    for u, q in enumerate(RANX_ZERO_QRELS.values()):
        for doc, rel in q.items():
            rows.append(u)
            cols.append(int(doc[1:]))
            vals.append(float(rel))
    test = sp.csr_array((np.array(vals), (rows, cols)), shape=(2, 5))
    scores = np.tile(np.array([5.0, 4.0, 3.0, 2.0, 1.0]), (2, 1))
    return test, scores


def test_ranx_profile_judged_non_relevant_and_query_without_relevant():
    """ranx's code (AmenRa/ranx 0.3.20, ranx/metrics/): ``clean_qrels`` keeps the judgements
    ``>= rel_lvl`` (default ``rel_lvl=1``), so a judgement of 0 is never relevant; ``_hits``,
    ``_reciprocal_rank``, ``_dcg``, ``_rank_biased_precision`` return 0.0 when nothing is left,
    ``_ndcg`` divides by an IDCG of 0 replaced by 1 (0.0), ``_bpref`` of a run with no
    judged relevant listed sums nothing; ``Report``/``evaluate`` average over every query of the
    qrels. Values by hand from those functions at k=3:

    * q0: hits in d0 d1 d2 = {d0}: precision 1/3, recall 1/2, mrr 1, ndcg (Jarvelin, gains
      are the judgements) 2/log2(2) / (2/log2(2) + 1/log2(3)); q1: 0 for every metric.
    * the means over the two queries: half of q0's values.

    ranx 0.3.21's ``evaluate(..., return_mean=False)`` on these qrels and runs, run once and
    recorded here, printed the same per-query values (ndcg@3 of q0 0.76018753).

    The project before the profile set relevance level 1 and the zero rule took every stored
    entry as a positive (q0 precision 2/3, q1 NaN or computed on d2)."""
    test, scores = _ranx_zero_queries()
    res = _evaluate(
        None,
        test,
        scores=scores,
        k=3,
        profile="ranx",
        metrics=["p", "r", "rr", "ndcg", "hits", "hit"],
    )
    pu = res.per_user
    ndcg_q0 = 2.0 / (2.0 + 1.0 / math.log2(3))
    expected = {
        "p_at_3": [1 / 3, 0.0],
        "r_at_3": [1 / 2, 0.0],
        "rr_at_3": [1.0, 0.0],
        "ndcg_at_3": [ndcg_q0, 0.0],
        "hits_at_3": [1.0, 0.0],
        "hit_at_3": [1.0, 0.0],
    }
    for col, values in expected.items():
        np.testing.assert_allclose(pu[col].to_numpy(), values, rtol=0, atol=1e-12, err_msg=col)
        assert pu[col].mean() == pytest.approx(sum(values) / 2, abs=1e-12)
    assert list(pu["nan_reason"]) == ["", ""]
    assert res.definitions["relevance_level"] == 1.0
    assert "zero" in res.definitions["no_positive"]


def test_ranx_profile_two_query_fixture_of_the_audit():
    """Two queries: q0 with d0 relevant at the top, q1 judging only d0, as non-relevant (0).
    ranx (the code cited above): q0 precision@2 1/2, mrr@2 1, ndcg@2 1; q1 0 for each; the
    means 0.25, 0.5 and 0.5."""
    test = sp.csr_array((np.array([1.0, 0.0]), ([0, 1], [0, 0])), shape=(2, 4))
    scores = np.tile(np.array([4.0, 3.0, 2.0, 1.0]), (2, 1))
    res = _evaluate(
        None, test, scores=scores, k=2, profile="ranx", metrics=["p", "rr", "ndcg"]
    ).per_user
    assert res["p_at_2"].mean() == pytest.approx(0.25, abs=1e-12)
    assert res["rr_at_2"].mean() == pytest.approx(0.5, abs=1e-12)
    assert res["ndcg_at_2"].mean() == pytest.approx(0.5, abs=1e-12)


# -------------------------------------------------------------------------------- recometrics


def _invalid_case_b(kind: str) -> np.ndarray:
    """recometrics tests/testthat/test-ndcg.R, "Invalid cases": the item factors (items x 5
    here; R's B is 5 x items) of each ``check.na.result`` call."""
    if kind == "zeros":
        return np.zeros((10, 5))
    if kind == "ones":
        return np.ones((10, 5))
    if kind == "nan":
        return np.full((10, 5), np.nan)
    if kind == "inf":
        return np.full((10, 5), np.inf)
    B = np.random.default_rng(1).standard_normal((10, 5))
    if kind == "two_nan":  # R: B[1,1] <- NA; B[3,3] <- NA
        B[0, 0], B[2, 2] = np.nan, np.nan
    elif kind == "minus_and_plus_inf":  # R: B[1,1] <- -Inf; B[3,3] <- Inf
        B[0, 0], B[2, 2] = -np.inf, np.inf
    return B


@pytest.mark.parametrize("kind", ["zeros", "ones", "nan", "inf", "two_nan", "minus_and_plus_inf"])
def test_recometrics_invalid_cases_are_na(kind):
    """recometrics test-ndcg.R "Invalid cases": one user with no train entry, four test
    entries (R draws them with ``rsparsematrix(1, 10, .4)``; any four positive values give the
    same NA), ``A`` of ones; every case expects ``is.na(res$ndcg_at_5)``, the "-Inf and +Inf"
    one included (recometrics 0.1.6's Python ``calc_reco_metrics`` on this fixture, run once,
    gives NaN in each case; the drop-in ranked the infinite scores before, 0.455 here)."""
    X_train = sp.csr_array((1, 10))
    X_test = sp.csr_array(
        (np.array([0.5, 1.2, 2.0, 0.7]), ([0, 0, 0, 0], [1, 3, 6, 8])), shape=(1, 10)
    )
    res = rt.calc_reco_metrics(
        X_train,
        X_test,
        np.ones((1, 5)),
        _invalid_case_b(kind),
        k=5,
        precision=False,
        average_precision=False,
        ndcg=True,
        nthreads=1,
    )
    assert np.isnan(res["NDCG@5"][0])


def test_calc_reco_metrics_ranks_infinite_scores_when_asked():
    """``inf_scores="rank"``: the +inf item (item 2, not a positive) is listed first, the -inf
    one (item 0) last; positives 1 and 3 with scores 2 > 1 follow: DCG@3 = 1/log2(3) +
    1/log2(4), ideal 1/log2(2) + 1/log2(3)."""
    X_test = sp.csr_array((np.ones(2), ([0, 0], [1, 3])), shape=(1, 5))
    B = np.array([[-np.inf], [2.0], [np.inf], [1.0], [0.0]])
    res = rt.calc_reco_metrics(
        None,
        X_test,
        np.ones((1, 1)),
        B,
        k=3,
        precision=False,
        average_precision=False,
        inf_scores="rank",
        nthreads=1,
    )
    want = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert res["NDCG@3"][0] == pytest.approx(want, abs=1e-12)
    default = rt.calc_reco_metrics(
        None, X_test, np.ones((1, 1)), B, k=3, precision=False, average_precision=False, nthreads=1
    )
    assert np.isnan(default["NDCG@3"][0])
