"""The ``spark`` profile gives pyspark's own numbers: ``mllib.evaluation.RankingMetrics`` and
``ml.evaluation.RankingEvaluator`` run on the same top-10 lists of MovieLens 100K, including
users whose list is shorter than k and users with a list but no ground truth (Spark scores them
0 and counts them in the mean)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from reference import spark_ranking_metrics
from shared_paths import shared_file

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.spark import evaluate_spark

K = 10
#: pyspark's metric -> how RankingMetrics computes it
SPARK = {
    "precisionAtK": lambda m: m.precisionAt(K),
    "recallAtK": lambda m: m.recallAt(K),
    "meanAveragePrecisionAtK": lambda m: m.meanAveragePrecisionAt(K),
    "meanAveragePrecision": lambda m: m.meanAveragePrecision,
    "ndcgAtK": lambda m: m.ndcgAt(K),
}


def test_local_profile_follows_rankingmetrics_user_by_user():
    """Without Spark: evaluate(profile="spark") on lists of K items or fewer (a shorter list is
    still divided by K) against the formulas of RankingMetrics.scala, user by user."""
    rng = np.random.default_rng(3)
    m, n = 40, 25
    lists = np.full((m, K), -1)
    truth = []
    for u in range(m):
        length = int(rng.integers(3, K + 1))
        lists[u, :length] = rng.permutation(n)[:length]
        truth.append(sorted(rng.permutation(n)[: int(rng.integers(1, 14))]))
    rows = np.repeat(np.arange(m), [len(t) for t in truth])
    test = sp.csr_array((np.ones(rows.size), (rows, np.concatenate(truth))), shape=(m, n))
    res = rt.evaluate(None, test, ranked=lists, k=K, profile="spark")
    for name in SPARK:
        alias = PROFILES["spark"]["aliases"][name]
        want = [
            spark_ranking_metrics([i for i in lists[u] if i >= 0], truth[u], K)[alias]
            for u in range(m)
        ]
        col = f"{alias}_at_{K}"
        np.testing.assert_allclose(res.per_user[col], want, rtol=1e-13, atol=0, err_msg=name)


@pytest.fixture(scope="module")
def ml100k_lists():
    """Test entries (a random 20%) and top-10 lists of the items not in train by popularity
    plus per-user noise; users 1-30 have their test entries removed (a list, no ground truth)
    and users 31-60 get lists of 4 items (shorter than k)."""
    df = pd.read_csv(
        shared_file("ml-100k", "u.data"), sep="\t", names=["user", "item", "rating", "ts"]
    )
    rng = np.random.default_rng(0)
    is_test = rng.random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test & (df["user"] > 30)]
    users, items = np.sort(df["user"].unique()), np.sort(df["item"].unique())
    pop = np.bincount(items.searchsorted(train["item"]), minlength=len(items)).astype(float)
    S = pop[None, :] + 40.0 * rng.random((len(users), len(items)))
    S[users.searchsorted(train["user"]), items.searchsorted(train["item"])] = -np.inf
    top = np.argsort(-S, axis=1, kind="stable")[:, :K]
    lists = {int(u): [int(items[i]) for i in top[r]] for r, u in enumerate(users)}
    for u in range(31, 61):
        lists[u] = lists[u][:4]
    truth = test.groupby("user")["item"].apply(list).to_dict()
    return test, lists, truth


def test_the_profile_names_pysparks_metrics():
    prof = PROFILES["spark"]
    assert set(prof["aliases"]) == set(SPARK) | {"ndcgAtK_graded"}
    assert prof["ties"] == "index" and prof["no_ground_truth"] == "zero"


@pytest.fixture(scope="module")
def spark_lists(spark, ml100k_lists):
    """The (list, ground truth) pairs of every user in user order, pyspark's RankingMetrics of
    them (every metric of SPARK, in a dict), and the lists and test pairs as Spark frames: both
    tests below read them."""
    from pyspark.mllib.evaluation import RankingMetrics

    test, lists, truth = ml100k_lists
    pairs = [(lists[u], truth.get(u, [])) for u in sorted(lists)]
    metrics = RankingMetrics(spark.sparkContext.parallelize(pairs, 2))
    want = {name: f(metrics) for name, f in SPARK.items()}
    ranked = spark.createDataFrame(
        pd.DataFrame(
            [(u, i, r + 1) for u, items in lists.items() for r, i in enumerate(items)],
            columns=["user", "item", "rank"],
        )
    )
    return pairs, want, ranked, spark.createDataFrame(test[["user", "item"]])


def test_spark_profile_equals_ranking_metrics_and_ranking_evaluator(
    spark, ml100k_lists, spark_lists
):
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.mllib.evaluation import RankingMetrics

    test, lists, truth = ml100k_lists
    pairs, want, ranked, test_df = spark_lists
    assert want["precisionAtK"] > 0.05  # a real ranking, not an empty one

    res = evaluate_spark(test_df, ranked=ranked, k=K, profile="spark")
    assert res.n_users_evaluated == len(lists)  # users without ground truth counted
    for name, value in want.items():
        col = f"{PROFILES['spark']['aliases'][name]}_at_{K}"
        assert res.means[col] == pytest.approx(value, rel=1e-12, abs=1e-15), name

    # RankingEvaluator (pyspark.ml) on the same rows as double arrays
    rows = spark.createDataFrame(
        pd.DataFrame(
            {
                "prediction": [[float(x) for x in p] for p, _ in pairs],
                "label": [[float(x) for x in t] for _, t in pairs],
            }
        )
    )
    for name, value in want.items():
        ev = RankingEvaluator(metricName=name, k=K)
        assert ev.evaluate(rows) == pytest.approx(value, rel=1e-12, abs=1e-15), name

    # the local engine with the profile: the same numbers over the users with ground truth
    have = [u for u in sorted(lists) if u in truth]
    sub = RankingMetrics(spark.sparkContext.parallelize([(lists[u], truth[u]) for u in have], 2))
    items = np.sort(
        np.unique(np.concatenate([test["item"].to_numpy(), [i for u in have for i in lists[u]]]))
    )
    rows_ = np.searchsorted(have, test["user"].to_numpy())
    te = sp.csr_array(
        (np.ones(len(test)), (rows_, items.searchsorted(test["item"]))),
        shape=(len(have), len(items)),
    )
    ranked_np = np.full((len(have), K), -1)
    for r, u in enumerate(have):
        ranked_np[r, : len(lists[u])] = items.searchsorted(lists[u])
    local = rt.evaluate(None, te, ranked=ranked_np, k=K, profile="spark")
    for name, f in SPARK.items():
        col = f"{PROFILES['spark']['aliases'][name]}_at_{K}"
        assert local.means[col] == pytest.approx(f(sub), rel=1e-12, abs=1e-15), name


def spark_graded_ndcg(pred: list, lab: list, rel: list, k: int) -> float:
    """One user's graded ndcgAt as RankingMetrics.scala (Spark >= 3.4) computes it, written out
    from its code: relMap = lab zip rel; n = min(max(|pred|, |labSet|), k); dcg adds
    (2^relMap(pred(i)) - 1) / ln(i + 2) for i < |pred|, the ideal (2^relMap(lab(i)) - 1) /
    ln(i + 2) for i < |labSet|: the labels in the order given; 0 for an empty label set or a
    zero ideal."""
    rel_of = dict(zip(lab, rel))
    if not set(lab):
        return 0.0
    dcg = ideal = 0.0
    for i in range(min(max(len(pred), len(set(lab))), k)):
        if i < len(pred):
            dcg += (2.0 ** rel_of.get(pred[i], 0.0) - 1) / np.log(i + 2)
        if i < len(set(lab)):
            ideal += (2.0 ** rel_of.get(lab[i], 0.0) - 1) / np.log(i + 2)
    return 0.0 if ideal == 0.0 else dcg / ideal


def test_graded_ndcg_worked_example_ideal_in_label_order():
    """By hand: list (3, 1) and labels 1, 2 with relevances 5, 1 (item order), k = 3. DCG =
    (2^5 - 1) / ln 3 (item 3 is no label); Spark's ideal takes the labels in the order given,
    (2^5 - 1) / ln 2 + (2^1 - 1) / ln 3. Second user: list (0, 2, 4), labels 0, 4 with
    relevances 2, 3: DCG = 3 / ln 2 + 7 / ln 4, ideal 3 / ln 2 + 7 / ln 3 (in label order,
    below the ideal sorted by relevance, 7 / ln 2 + 3 / ln 3), so the value differs from a
    sorted-ideal NDCG."""
    lists = np.array([[3, 1, -1], [0, 2, 4]])
    test = sp.csr_array(
        (np.array([5.0, 1.0, 2.0, 3.0]), ([0, 0, 1, 1], [1, 2, 0, 4])), shape=(2, 8)
    )
    res = rt.evaluate(None, test, ranked=lists, k=3, profile="spark")
    col = f"{PROFILES['spark']['aliases']['ndcgAtK_graded']}_at_3"
    want = [
        (31 / np.log(3)) / (31 / np.log(2) + 1 / np.log(3)),
        (3 / np.log(2) + 7 / np.log(4)) / (3 / np.log(2) + 7 / np.log(3)),
    ]
    np.testing.assert_allclose(res.per_user[col], want, rtol=1e-14, atol=0)
    sorted_ideal = (3 / np.log(2) + 7 / np.log(4)) / (7 / np.log(2) + 3 / np.log(3))
    assert abs(want[1] - sorted_ideal) > 0.1  # the label order matters here
    # k = 2: the second user's ideal stops after the first two labels, DCG after item 2
    res2 = rt.evaluate(None, test, ranked=lists, k=2, metrics=["ndcg_spark"])
    assert res2.per_user["ndcg_spark_at_2"][1] == pytest.approx(
        (3 / np.log(2)) / (3 / np.log(2) + 7 / np.log(3)), rel=1e-14
    )


def test_local_graded_ndcg_follows_the_scala_code_user_by_user():
    """Random lists (some shorter than k), graded test values in item order, some users whose
    listed items are all non-relevant: every user against the Scala formula written out."""
    rng = np.random.default_rng(5)
    m, n = 50, 30
    lists = np.full((m, K), -1)
    truth, rels = [], []
    for u in range(m):
        length = int(rng.integers(2, K + 1))
        lists[u, :length] = rng.permutation(n)[:length]
        t = np.sort(rng.permutation(n)[: int(rng.integers(1, 15))])
        truth.append(t)
        rels.append(rng.integers(1, 6, t.size).astype(float))
    rows = np.repeat(np.arange(m), [len(t) for t in truth])
    test = sp.csr_array((np.concatenate(rels), (rows, np.concatenate(truth))), shape=(m, n))
    res = rt.evaluate(None, test, ranked=lists, k=K, profile="spark")
    want = [
        spark_graded_ndcg(
            [int(i) for i in lists[u] if i >= 0], truth[u].tolist(), rels[u].tolist(), K
        )
        for u in range(m)
    ]
    np.testing.assert_allclose(res.per_user[f"ndcg_spark_at_{K}"], want, rtol=1e-13, atol=0)


def graded_ranking_metrics(sc, triples):
    """Spark's own RankingMetrics on (prediction, label, relevance) triples. pyspark's Python
    ``RankingMetrics`` documents the triples form but its bridge
    (``PythonMLLibAPI.newRankingMetrics``, pyspark 4.3) keeps only the first two columns, so the
    relevances are dropped and ndcgAt is binary; the Scala class is built here through its Java
    entry point ``RankingMetrics.of``, which takes ``scala.Tuple3`` rows."""
    from py4j.java_collections import ListConverter

    def java(xs):
        return ListConverter().convert(list(xs), sc._gateway._gateway_client)

    jvm = sc._jvm
    rows = [jvm.scala.Tuple3(java(p), java(lab), java(map(float, rel))) for p, lab, rel in triples]
    return jvm.org.apache.spark.mllib.evaluation.RankingMetrics.of(
        sc._jsc.parallelize(java(rows), 2)
    )


def test_graded_ndcg_equals_ranking_metrics_triples(spark, ml100k_lists, spark_lists):
    """Spark's RankingMetrics on (prediction, label, relevance) triples, the labels in item id
    order and the ratings as relevances, against evaluate_spark(rating_col="rating") and the
    local engine; users without ground truth score 0 and count. RankingEvaluator takes no
    relevance column: RankingMetrics is the only graded form."""
    test, lists, truth = ml100k_lists
    _, binary_want, ranked, test_df = spark_lists
    rated = test.sort_values(["user", "item"])
    by_user = {u: g for u, g in rated.groupby("user")}

    def triple(u, order=("item",), ascending=True):
        g = by_user[u].sort_values(list(order), ascending=ascending, kind="stable")
        return (lists[u], g["item"].tolist(), g["rating"].astype(float).tolist())

    users = sorted(lists)
    triples = [triple(u) if u in by_user else (lists[u], [], []) for u in users]
    want = graded_ranking_metrics(spark.sparkContext, triples).ndcgAt(K)
    assert want == pytest.approx(np.mean([spark_graded_ndcg(*t, K) for t in triples]), rel=1e-12)
    # the quirk is real on this data: labels sorted by rating give another number
    by_rating = [
        triple(u, ("rating", "item"), False) if u in by_user else (lists[u], [], []) for u in users
    ]
    other = graded_ranking_metrics(spark.sparkContext, by_rating).ndcgAt(K)
    assert abs(other - want) > 1e-3

    frame = spark.createDataFrame(test[["user", "item", "rating"]])
    res = evaluate_spark(frame, ranked=ranked, k=K, profile="spark", rating_col="rating")
    assert res.n_users_evaluated == len(lists)
    assert res.means[f"ndcg_spark_at_{K}"] == pytest.approx(want, rel=1e-12, abs=1e-15)
    # without ratings every relevance is 1: the graded value is the binary one (RankingMetrics'
    # ndcgAt(K) on the (list, ground truth) pairs of every user)
    binary = binary_want["ndcgAtK"]
    plain = evaluate_spark(
        test_df,
        ranked=ranked,
        k=K,
        profile="spark",
        metrics=["ndcg_spark"],
    )
    assert plain.means[f"ndcg_spark_at_{K}"] == pytest.approx(binary, rel=1e-12, abs=1e-15)

    # the local engine, items numbered in id order, over the users with ground truth (Spark's
    # mean over all users has 0 for the others)
    have = [u for u in users if u in by_user]
    items = np.sort(
        np.unique(np.concatenate([test["item"].to_numpy(), [i for u in have for i in lists[u]]]))
    )
    te = sp.csr_array(
        (
            test["rating"].to_numpy(dtype=float),
            (np.searchsorted(have, test["user"].to_numpy()), items.searchsorted(test["item"])),
        ),
        shape=(len(have), len(items)),
    )
    ranked_np = np.full((len(have), K), -1)
    for r, u in enumerate(have):
        ranked_np[r, : len(lists[u])] = items.searchsorted(lists[u])
    local = rt.evaluate(
        None, te, ranked=ranked_np, k=K, metrics=["ndcg_spark", "ndcg_exp"], ties="index"
    )
    assert local.means[f"ndcg_spark_at_{K}"] == pytest.approx(
        want * len(users) / len(have), rel=1e-12
    )
    # labels given by descending rating make Spark's ideal the sorted one: ndcg_exp
    assert local.means[f"ndcg_exp_at_{K}"] == pytest.approx(
        other * len(users) / len(have), rel=1e-12
    )
