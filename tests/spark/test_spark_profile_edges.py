"""``profile="spark"`` on the inputs where it used to depart from pyspark (issue #44, item 11),
each compared with pyspark's own ``RankingMetrics`` on the same lists: lists longer than k
(``meanAveragePrecision`` reads the whole list: refused by name at a shorter k, equal at k = the
lists' length), k past the lists and past the catalogue (computed, as Spark does), short lists,
and repeated items (Spark counts every copy, a recall above 1: refused by name)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.spark import evaluate_spark

#: our column (at k) -> RankingMetrics at k
SPARK = {
    "p": lambda m, k: m.precisionAt(k),
    "r": lambda m, k: m.recallAt(k),
    "tap": lambda m, k: m.meanAveragePrecisionAt(k),
    "ndcg_bin": lambda m, k: m.ndcgAt(k),
}


def lists_and_truth(m=50, n=40, seed=7, lengths=(3, 12)):
    rng = np.random.default_rng(seed)
    preds, truth = [], []
    for _ in range(m):
        preds.append(
            [int(i) for i in rng.permutation(n)[: int(rng.integers(*lengths, endpoint=True))]]
        )
        truth.append([int(i) for i in rng.permutation(n)[: int(rng.integers(1, 9))]])
    return preds, truth


def frames(spark, preds, truth):
    ranked = pd.DataFrame(
        [(u, item, r + 1) for u, p in enumerate(preds) for r, item in enumerate(p)],
        columns=["user", "item", "rank"],
    )
    test = pd.DataFrame([(u, i) for u, t in enumerate(truth) for i in t], columns=["user", "item"])
    return spark.createDataFrame(test), spark.createDataFrame(ranked)


def ranking_metrics(spark, preds, truth):
    from pyspark.mllib.evaluation import RankingMetrics

    return RankingMetrics(spark.sparkContext.parallelize(list(zip(preds, truth)), 2))


def test_mean_average_precision_reads_the_whole_list(spark):
    preds, truth = lists_and_truth()  # lists of 3 to 12
    test, ranked = frames(spark, preds, truth)
    rm = ranking_metrics(spark, preds, truth)
    with pytest.raises(rt.InputError, match=r"'k'.*lists' length \(12\).*meanAveragePrecision"):
        evaluate_spark(test, ranked=ranked, k=10, profile="spark")
    res = evaluate_spark(test, ranked=ranked, k=12, profile="spark")
    assert res.means["ap_at_12"] == pytest.approx(rm.meanAveragePrecision, rel=1e-12)
    # without ap, k = 10 is Spark's @10 numbers
    res = evaluate_spark(test, ranked=ranked, k=10, profile="spark", metrics=["p", "tap"])
    for name in ("p", "tap"):
        assert res.means[f"{name}_at_10"] == pytest.approx(SPARK[name](rm, 10), rel=1e-12)


@pytest.mark.parametrize("k", [15, 45])  # past every list; past the catalogue's 40 items
def test_k_past_the_lists_and_the_catalogue_is_computed_as_spark_does(spark, k):
    preds, truth = lists_and_truth(lengths=(2, 9))
    test, ranked = frames(spark, preds, truth)
    rm = ranking_metrics(spark, preds, truth)
    res = evaluate_spark(test, ranked=ranked, k=k, profile="spark")
    for name, of in SPARK.items():
        assert res.means[f"{name}_at_{k}"] == pytest.approx(of(rm, k), rel=1e-12), name
    assert res.means[f"ap_at_{k}"] == pytest.approx(rm.meanAveragePrecision, rel=1e-12)


def test_repeated_items_are_refused_by_name(spark):
    preds, truth = [[1, 1, 2]], [[1, 3]]
    rm = ranking_metrics(spark, preds, truth)
    assert rm.recallAt(3) == 1.0  # Spark counts both copies of item 1: 2 hits of 2 labels
    test, ranked = frames(spark, preds, truth)
    with pytest.raises(rt.InputError, match=r"'ranked'.*repeated item under profile='spark'"):
        evaluate_spark(test, ranked=ranked, k=3, profile="spark")


def local_inputs(preds, truth, n=40):
    """The same lists and truth for evaluate(): a users x (longest list) matrix, -1 padded."""
    lists = np.full((len(preds), max(len(p) for p in preds)), -1)
    for u, p in enumerate(preds):
        lists[u, : len(p)] = p
    rows = np.repeat(np.arange(len(truth)), [len(t) for t in truth])
    test = sp.csr_array((np.ones(rows.size), (rows, np.concatenate(truth))), shape=(len(truth), n))
    return lists, test


def refusal(func, *args, **kwargs) -> str:
    with pytest.raises(rt.InputError) as err:
        func(*args, **kwargs)
    return str(err.value).replace("evaluate_spark", "evaluate")


def test_the_lists_rules_give_the_local_values_and_refusals(spark):
    """One set of list rules (metrics.profile_inputs) for evaluate() and evaluate_spark: the
    same per-user values past the lists, the same messages for ap at a k shorter than the
    lists and for a repeated item (the function's name aside)."""
    preds, truth = lists_and_truth(lengths=(2, 9))
    test, ranked = frames(spark, preds, truth)
    lists, test_csr = local_inputs(preds, truth)
    res = evaluate_spark(test, ranked=ranked, k=15, profile="spark")
    got = res.per_user_spark.toPandas().sort_values("user_id")
    local = rt.evaluate(None, test_csr, ranked=lists, k=15, profile="spark").per_user
    for c in ("p", "r", "tap", "ap", "ndcg_bin", "ndcg_spark"):
        np.testing.assert_array_equal(got[f"{c}_at_15"], local[f"{c}_at_15"], err_msg=c)
    res.unpersist()
    for k, (p, t) in ((5, (preds, truth)), (3, ([[1, 1, 2]], [[1, 3]]))):
        lists, test_csr = local_inputs(p, t)
        test, ranked = frames(spark, p, t)
        want = refusal(rt.evaluate, None, test_csr, ranked=lists, k=k, profile="spark")
        assert refusal(evaluate_spark, test, ranked=ranked, k=k, profile="spark") == want
