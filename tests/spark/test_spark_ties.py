"""One tie rule for ranked (user, item, score) rows: a tied score goes to the lower item id,
whatever the frame's row order (a Spark frame has none that survives a shuffle), in
evaluate_spark and in evaluate(ranked=DataFrame) alike; two items at one rank are refused, as
evaluate() refuses them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.spark import evaluate_spark


def test_a_tied_score_goes_to_the_lower_item_id(spark):
    # user 1: items 5 and 3 tied at the top, the test item is 3 -> 3 first: P@1 = 1 by definition
    # (row order would put 5 first: P@1 = 0)
    rows = pd.DataFrame({"user": [1, 1, 1], "item": [5, 3, 4], "score": [1.0, 1.0, 0.5]})
    test = spark.createDataFrame(pd.DataFrame({"user": [1], "item": [3]}))
    res = evaluate_spark(test, ranked=spark.createDataFrame(rows), k=1, metrics=["p"])
    assert res.means["p_at_1"] == 1.0


def tied_frame(m=60, n=30, width=12, seed=4):
    rng = np.random.default_rng(seed)
    users, items, scores = [], [], []
    for u in range(m):
        chosen = rng.permutation(n)[:width]
        users += [u] * width
        items += list(chosen)
        scores += list(rng.integers(0, 3, width).astype(float))  # many ties
    frame = pd.DataFrame({"user": users, "item": items, "score": scores})
    test = (rng.random((m, n)) < 0.2).astype(np.float64)
    test[np.arange(m), rng.integers(0, n, m)] = 1.0
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True), test


def by_rule(frame, m):
    """Each user's list by the rule: score descending, then item id ascending."""
    ordered = frame.sort_values(["user", "score", "item"], ascending=[True, False, True])
    return np.stack([ordered.loc[ordered["user"] == u, "item"].to_numpy() for u in range(m)])


def test_spark_follows_the_rule_user_by_user(spark):
    frame, test = tied_frame()
    m, n = test.shape
    r, c = np.nonzero(test)
    test_df = spark.createDataFrame(pd.DataFrame({"user": r, "item": c}))
    kw = dict(k=10, metrics=["ap", "ndcg", "p"])
    res = evaluate_spark(test_df, ranked=spark.createDataFrame(frame), **kw)
    local = rt.evaluate(None, sp.csr_array(test), ranked=by_rule(frame, m), **kw)
    got = res.per_user_spark.toPandas().sort_values("user_id")
    for col in ("ap_at_10", "ndcg_at_10", "p_at_10"):
        np.testing.assert_array_equal(got[col].to_numpy(), local.per_user[col].to_numpy())


def test_local_evaluate_of_the_same_frame_follows_the_same_rule():
    # no Spark here: evaluate(ranked=DataFrame) on the shuffled frame gives the rule's lists
    frame, test = tied_frame()
    m = test.shape[0]
    kw = dict(k=10, metrics=["ap"])
    from_frame = rt.evaluate(None, sp.csr_array(test), ranked=frame, **kw)
    by_hand = rt.evaluate(None, sp.csr_array(test), ranked=by_rule(frame, m), **kw)
    np.testing.assert_array_equal(from_frame.per_user["ap_at_10"], by_hand.per_user["ap_at_10"])


def test_two_items_at_one_rank_are_refused(spark):
    rows = pd.DataFrame({"user": [1, 1, 2], "item": [5, 3, 4], "rank": [1, 1, 1]})
    test = spark.createDataFrame(pd.DataFrame({"user": [1, 2], "item": [3, 4]}))
    with pytest.raises(rt.InputError, match=r"'ranked'.*own rank.*user 1 at rank 1"):
        evaluate_spark(test, ranked=spark.createDataFrame(rows), k=1, metrics=["p"])
