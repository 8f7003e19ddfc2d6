"""evaluate_spark leaves nothing persisted behind: after ``res.unpersist()`` the executors hold
no RDD the call persisted (the per-user output, the numbered users of a factor model), and an
input refused after the tasks ran (their counts decide it) frees what the call had persisted
before raising."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.spark import evaluate_spark


def persisted(spark) -> set[int]:
    """The ids of the RDDs the session's executors hold persisted."""
    return {int(k) for k in spark.sparkContext._jsc.getPersistentRDDs().keySet()}


def frames(spark):
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(30) + 100, 2)
    test = pd.DataFrame(
        {"user": users, "item": np.concatenate([rng.permutation(12)[:2] for _ in range(30)])}
    )
    lists = pd.DataFrame(
        {
            "user": np.repeat(np.arange(30) + 100, 4),
            "item": np.concatenate([rng.permutation(12)[:4] for _ in range(30)]),
            "rank": np.tile(np.arange(1, 5), 30),
        }
    )
    return spark.createDataFrame(test), spark.createDataFrame(lists)


def test_unpersist_leaves_no_persisted_rdd_for_lists_and_factors(spark):
    before = persisted(spark)
    test, ranked = frames(spark)
    res = evaluate_spark(test, ranked=ranked, k=3, metrics=["p", "ndcg"])
    assert persisted(spark) - before  # the per-user values, kept for per_user_spark
    assert res.per_user_spark.count() == 30
    res.unpersist()
    assert persisted(spark) == before
    factors = pd.DataFrame({"id": np.arange(100, 130), "features": [[1.0, 0.5]] * 30})
    items = pd.DataFrame({"id": np.arange(12), "features": [[0.1 * i, 1.0] for i in range(12)]})
    res = evaluate_spark(
        test,
        user_factors=spark.createDataFrame(factors),
        item_factors=spark.createDataFrame(items),
        k=3,
        metrics=["p"],
    )
    assert len(persisted(spark) - before) == 2  # the per-user values and the numbered users
    res.unpersist()
    assert persisted(spark) == before


def test_a_refusal_after_the_tasks_leaves_nothing_persisted(spark):
    test, ranked = frames(spark)
    before = persisted(spark)
    from pyspark.sql import functions as F

    again = ranked.where("user = 100 and rank = 1").withColumn("rank", F.lit(9).cast("long"))
    twice = ranked.unionByName(again)
    with pytest.raises(rt.InputError, match=r"'ranked'.*repeated item under profile='spark'"):
        evaluate_spark(test, ranked=twice, k=3, profile="spark")
    assert persisted(spark) == before
