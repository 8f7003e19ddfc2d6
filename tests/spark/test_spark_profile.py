"""The ``spark`` profile gives pyspark's own numbers: ``mllib.evaluation.RankingMetrics`` and
``ml.evaluation.RankingEvaluator`` run on the same top-10 lists of MovieLens 100K, including
users whose list is shorter than k and users with a list but no ground truth (Spark scores them
0 and counts them in the mean)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
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


def spark_user(pred: list, lab: list, k: int) -> dict[str, float]:
    """One user's values as RankingMetrics.scala computes them (Spark 3.5/4.x), written out
    from its code: precisionAt, recallAt, averagePrecision at k and over the whole list, and
    the binary ndcgAt (natural log, ideal over min(max(|pred|, |T|), k) positions)."""
    labset = set(lab)
    if not labset:
        return dict.fromkeys(SPARK, 0.0)
    hits = sum(1 for i in pred[: min(len(pred), k)] if i in labset)

    def average_precision(kk):
        cnt, total = 0, 0.0
        for i in range(min(kk, len(pred))):
            if pred[i] in labset:
                cnt += 1
                total += cnt / (i + 1)
        return total / min(len(labset), kk)

    dcg = ideal = 0.0
    for i in range(min(max(len(pred), len(labset)), k)):
        gain = 1.0 / np.log(i + 2)
        dcg += gain if i < len(pred) and pred[i] in labset else 0.0
        ideal += gain if i < len(labset) else 0.0
    return {
        "precisionAtK": hits / k,
        "recallAtK": hits / len(labset),
        "meanAveragePrecisionAtK": average_precision(k),
        "meanAveragePrecision": average_precision(max(len(pred), len(labset))),
        "ndcgAtK": dcg / ideal,
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
        col = f"{PROFILES['spark']['aliases'][name]}_at_{K}"
        want = [spark_user([i for i in lists[u] if i >= 0], truth[u], K)[name] for u in range(m)]
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
    assert set(prof["aliases"]) == set(SPARK)
    assert prof["ties"] == "index" and prof["no_ground_truth"] == "zero"


def test_spark_profile_equals_ranking_metrics_and_ranking_evaluator(spark, ml100k_lists):
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.mllib.evaluation import RankingMetrics

    test, lists, truth = ml100k_lists
    pairs = [(lists[u], truth.get(u, [])) for u in sorted(lists)]
    metrics = RankingMetrics(spark.sparkContext.parallelize(pairs, 2))
    want = {name: f(metrics) for name, f in SPARK.items()}
    assert want["precisionAtK"] > 0.05  # a real ranking, not an empty one

    ranked = spark.createDataFrame(
        pd.DataFrame(
            [(u, i, r + 1) for u, items in lists.items() for r, i in enumerate(items)],
            columns=["user", "item", "rank"],
        )
    )
    res = evaluate_spark(
        spark.createDataFrame(test[["user", "item"]]), ranked=ranked, k=K, profile="spark"
    )
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
