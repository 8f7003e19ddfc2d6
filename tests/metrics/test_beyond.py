"""Beyond-accuracy metrics, aggregates, tie policies and profiles against hand-computed values.

Every expected value below is worked out by hand from the formulas in the Recommendation.jl
documentation (seed 003), Hu, Koren & Volinsky 2008 (MPR), RecBole (GAUC) and implicit (pooled
precision); none is read back from the code under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics import beyond
from recoeval_tracking.metrics.profiles import PROFILES

# Three users, five items, lists of length 2:
#   u0: [0, 1]   u1: [0, 2]   u2: [3, 0]
LISTS = np.array([[0, 1], [0, 2], [3, 0]])
N_ITEMS = 5


def test_aggregates_by_hand():
    # counts per item: item0 in 3 lists, item1 1, item2 1, item3 1, item4 0; N*|U| = 6
    assert beyond.coverage(LISTS, N_ITEMS) == pytest.approx(4 / 5)
    assert beyond.aggregated_diversity(LISTS, N_ITEMS) == 4
    p = np.array([3, 1, 1, 1]) / 6
    assert beyond.shannon_entropy(LISTS, N_ITEMS) == pytest.approx(-(p * np.log(p)).sum())
    # Gini: p sorted ascending = [0, 1/6, 1/6, 1/6, 3/6], weights (2j - 5 - 1) = -4, -2, 0, 2, 4
    gini = (-4 * 0 - 2 / 6 + 0 + 2 / 6 + 4 * 3 / 6) / 4
    assert beyond.gini_index(LISTS, N_ITEMS) == pytest.approx(gini)
    # pairs: (u0,u1) share {0}, (u0,u2) share {0}, (u1,u2) share {0}: mean overlap 1/2
    assert beyond.personalisation(LISTS, N_ITEMS) == pytest.approx(1 - 0.5)


def test_gini_zero_when_even_and_personalisation_one_when_disjoint():
    even = np.array([[0, 1], [2, 3]])
    assert beyond.gini_index(even, 4) == pytest.approx(0.0)
    assert beyond.personalisation(even, 4) == pytest.approx(1.0)
    same = np.array([[0, 1], [0, 1], [1, 0]])
    assert beyond.personalisation(same, 4) == pytest.approx(0.0)


def test_personalisation_matches_pairwise_brute_force():
    rng = np.random.default_rng(3)
    lists = np.array([rng.choice(12, size=4, replace=False) for _ in range(25)])
    overlaps = [len(set(a) & set(b)) / 4 for a, b in itertools.combinations(lists, 2)]
    assert beyond.personalisation(lists, 12) == pytest.approx(1 - np.mean(overlaps))


def _csr(rows: list[list[int]]) -> sp.csr_array:
    return sp.csr_array(np.array(rows, dtype=float))


def test_novelty_serendipity_ils_by_hand():
    # train: item 0 seen by 3 users, item 1 by 2, item 2 by 1, items 3-4 by nobody; 4 users
    train = _csr([[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0]])
    # user 3 has no train entry: |U_train| = 3 users with an interaction
    lists = np.array([[0, 1], [2, 3], [3, 4], [-1, -1]])
    got = beyond.novelty(lists, train)
    info = {
        0: -math.log2(3 / 3),
        1: -math.log2(2 / 3),
        2: -math.log2(1 / 3),
        3: -math.log2(1 / 3),
        4: -math.log2(1 / 3),
    }
    assert got[0] == pytest.approx((info[0] + info[1]) / 2)
    assert got[1] == pytest.approx((info[2] + info[3]) / 2)
    assert got[2] == pytest.approx((info[3] + info[4]) / 2)
    assert math.isnan(got[3])
    test = _csr([[0, 0, 0, 1, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]])
    # top-1 popular item is item 0: relevant and unexpected = in test and not item 0
    ser = beyond.serendipity(lists, test, train, top_n_popular=1)
    np.testing.assert_allclose(ser[:3], [0 / 2, 2 / 2, 1 / 2])
    vectors = np.array([[1.0, 0], [0, 1.0], [1, 1.0], [-1, 0.0], [2, 0.0]])
    ils = beyond.intra_list_similarity(lists, vectors)
    assert ils[0] == pytest.approx(0.0)  # orthogonal
    assert ils[1] == pytest.approx(-1 / math.sqrt(2))  # (1,1) vs (-1,0)
    assert ils[2] == pytest.approx(-1.0)  # opposite directions
    assert math.isnan(ils[3])


def test_evaluate_fills_beyond_metrics_consistently():
    rng = np.random.default_rng(0)
    m, n, k = 40, 30, 5
    tr = sp.random_array((m, n), density=0.2, rng=rng, format="csr")
    tr.data[:] = 1
    te = sp.random_array((m, n), density=0.1, rng=rng, format="csr")
    te = sp.csr_array(te - te.multiply(tr > 0))
    te.eliminate_zeros()
    A, B = rng.standard_normal((m, 4)), rng.standard_normal((n, 4))
    res = rt.evaluate(
        tr,
        te,
        A=A,
        B=B,
        k=k,
        metrics=["novelty", "ils", "coverage", "gini", "personalisation", "entropy"],
        nthreads=1,
    )
    # the lists are the top-k of the scores among items not in train
    S = A @ B.T
    for u in range(m):
        if res.per_user.nan_reason[u]:
            continue
        pool = [i for i in range(n) if tr[u, i] == 0]
        best = sorted(pool, key=lambda i: -S[u, i])[:k]
        assert list(res.topk[u]) == best
    ok = (res.per_user.nan_reason == "").to_numpy()
    assert res.aggregates[f"coverage_at_{k}"] == pytest.approx(beyond.coverage(res.topk[ok], n))
    assert res.means[f"gini_at_{k}"] == res.aggregates[f"gini_at_{k}"]
    np.testing.assert_allclose(
        res.per_user[f"ils_at_{k}"][ok], beyond.intra_list_similarity(res.topk[ok], B)
    )


def test_gauc_and_pooled_precision_by_hand():
    auc = np.array([1.0, 0.5, np.nan])
    n_test = np.array([3, 1, 5])
    assert beyond.gauc(auc, n_test) == pytest.approx((3 * 1.0 + 1 * 0.5) / 4)
    tp = np.array([2 / 3, 1.0, np.nan])  # hits 2 of min(5, 3), 1 of min(5, 1)
    assert beyond.pooled_precision(tp, n_test, 5) == pytest.approx(3 / 4)


def test_mpr_by_hand():
    # pool of 5 items, positives at ranks 1 and 4 with values 1 and 3
    scores = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])
    te = sp.csr_array((np.array([1.0, 3.0]), [0, 3], [0, 2]), shape=(1, 5))
    res = rt.evaluate(None, te, scores=scores, metrics=["mpr"], k=2)
    assert res.per_user["mpr"][0] == pytest.approx((1 * 0 / 4 + 3 * 3 / 4) / 4)


@pytest.fixture(scope="module")
def tied_case():
    rng = np.random.default_rng(11)
    m, n = 30, 12
    tr = sp.random_array((m, n), density=0.15, rng=rng, format="csr")
    tr.data[:] = 1
    te = sp.random_array((m, n), density=0.25, rng=rng, format="csr")
    te = sp.csr_array(te - te.multiply(tr > 0))
    te.eliminate_zeros()
    te.data[:] = rng.integers(1, 4, size=te.nnz)
    S = rng.integers(0, 3, size=(m, n)).astype(float)
    return tr, te, S


ORDERED = [
    "p",
    "tp",
    "r",
    "ap",
    "tap",
    "ndcg",
    "ndcg_exp",
    "ndcg_bin",
    "hit",
    "rr",
    "roc_auc",
    "pr_auc",
    "dcg",
]


def test_optimistic_ge_average_ge_pessimistic(tied_case):
    tr, te, S = tied_case
    out = {
        t: rt.evaluate(tr, te, scores=S, metrics=ORDERED, k=4, ties=t, cumulative=True)
        for t in ("optimistic", "average", "pessimistic")
    }
    for col in out["average"].metric_columns:
        o, a, p = (
            out[t].per_user[col].to_numpy() for t in ("optimistic", "average", "pessimistic")
        )
        ok = ~np.isnan(a)
        assert np.all(o[ok] >= a[ok] - 1e-12), col
        assert np.all(a[ok] >= p[ok] - 1e-12), col
    # ties exist and matter in this case
    assert (out["optimistic"].per_user["ap_at_4"] > out["pessimistic"].per_user["ap_at_4"]).any()


def test_average_is_the_mean_over_every_ordering():
    # one user, 6 items, item 5 in train; two tie groups; brute force over all 6! orderings
    scores = np.array([3.0, 1.0, 1.0, 1.0, 2.0, 2.0])
    tr = sp.csr_array((np.ones(1), [5], [0, 1]), shape=(1, 6))
    te = sp.csr_array((np.array([2.0, 1.0, 3.0]), [1, 3, 4], [0, 3]), shape=(1, 6))
    avg = rt.evaluate(tr, te, scores=scores[None, :], metrics=ORDERED, k=3, ties="average")
    total = None
    count = 0
    for perm in itertools.permutations(range(6)):
        # strict order consistent with the scores, ties in the order of the permutation
        keyed = scores - np.array([perm.index(j) for j in range(6)]) * 1e-6
        r = rt.evaluate(tr, te, scores=keyed[None, :], metrics=ORDERED, k=3, ties="index")
        v = r.per_user[r.metric_columns].to_numpy()[0]
        total = v if total is None else total + v
        count += 1
    np.testing.assert_allclose(
        avg.per_user[avg.metric_columns].to_numpy()[0], total / count, atol=1e-9
    )


def test_without_ties_every_policy_agrees():
    rng = np.random.default_rng(5)
    m, n = 20, 15
    te = sp.random_array((m, n), density=0.3, rng=rng, format="csr")
    S = rng.standard_normal((m, n))
    base = rt.evaluate(None, te, scores=S, metrics=ORDERED, k=5, ties="index")
    for t in ("noise", "optimistic", "pessimistic", "average"):
        other = rt.evaluate(None, te, scores=S, metrics=ORDERED, k=5, ties=t)
        np.testing.assert_allclose(
            other.per_user[base.metric_columns].to_numpy(),
            base.per_user[base.metric_columns].to_numpy(),
            atol=1e-12,
            err_msg=t,
        )


def test_tied_items_are_counted_per_user():
    # pool scores: item0 5, item1 4, item2 4, item3 4, item4 1; top-2 = item0 and one 4
    S = np.array([[5.0, 4.0, 4.0, 4.0, 1.0]])
    te = sp.csr_array((np.ones(1), [4], [0, 1]), shape=(1, 5))
    res = rt.evaluate(None, te, scores=S, metrics=["p"], k=2, return_topk=True, ties="index")
    assert list(res.topk[0]) == [0, 1]
    assert res.per_user["n_tied_topk"][0] == 3


def test_profiles_reference_registered_metrics_and_change_the_fingerprint(tied_case):
    tr, te, S = tied_case
    prints = set()
    for name, prof in PROFILES.items():
        assert set(prof["metrics"]) <= set(rt.METRICS), name
        assert set(prof["aliases"].values()) <= set(rt.METRICS), name
        res = rt.evaluate(tr, te, scores=S, k=4, profile=name)
        assert res.definitions["profile"] == name
        assert res.definitions["ties"] == prof["ties"]
        prints.add(res.fingerprint)
    assert len(prints) == len(PROFILES)
    with pytest.raises(rt.InputError, match="'profile'"):
        rt.evaluate(tr, te, scores=S, k=4, profile="nope")


def test_hivemall_profile_reproduces_the_published_example():
    # Hivemall "Ranking Measures": ranking [1, 3, 2, 6] (items 4, 5 below), truth {1, 2, 4}
    scores = np.zeros(6)
    for r, item in enumerate([1, 3, 2, 6, 4, 5]):
        scores[item - 1] = 10 - r
    te = sp.csr_array((np.ones(3), [0, 1, 3], [0, 3]), shape=(1, 6))
    res = rt.evaluate(None, te, item_biases=scores, k=4, profile="hivemall")
    pu = res.per_user.iloc[0]
    assert pu["r_at_4"] == pytest.approx(0.6666666666666666)
    assert pu["p_at_4"] == pytest.approx(0.5)
    # MAP: Hivemall's code divides by the hits in the list (BinaryResponsesMeasuresTest.testAP:
    # 1/2 (1/1 + 2/3)); the documentation page's 0.5556 divides by |truth| (our `ap`)
    assert pu["ap_hits_at_4"] == pytest.approx(1.0 / 2.0 * (1.0 / 1.0 + 2.0 / 3.0))
    doc = rt.evaluate(None, te, item_biases=scores, k=4, metrics=["ap"], ties="index")
    assert doc.per_user["ap_at_4"][0] == pytest.approx(0.5555555555555555)
    assert pu["auc_topk_at_4"] == pytest.approx(0.75)
    assert pu["rr_at_4"] == pytest.approx(1.0)
    assert pu["ndcg_bin_at_4"] == pytest.approx(0.7039180890341349)
