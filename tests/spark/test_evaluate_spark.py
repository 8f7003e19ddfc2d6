"""evaluate_spark against the local engine: the same per-user values bit for bit (factors with
many tied scores under seeded noise ties, and ranked lists), the same definitions, fingerprint,
means, intervals and curves; and its errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.spark import evaluate_spark


def tied_data(m=120, n=40, p=3, seed=0):
    """Train and test (disjoint, values 1..3), integer factors in {-1, 0, 1} (many tied
    scores), users and items with ids that are not row numbers, and a few users without test
    entries."""
    rng = np.random.default_rng(seed)
    train = (rng.random((m, n)) < 0.1).astype(np.float64)
    test = ((rng.random((m, n)) < 0.08) & (train == 0)) * rng.integers(1, 4, (m, n))
    test = test.astype(np.float64)
    test[:4] = 0
    A = rng.integers(-1, 2, (m, p)).astype(np.float32)
    B = rng.integers(-1, 2, (n, p)).astype(np.float32)
    uid = np.arange(m) * 3 + 7
    iid = np.arange(n) * 5 + 2
    return train, test, A, B, uid, iid


def frame(spark, M, uid, iid):
    r, c = np.nonzero(M)
    return spark.createDataFrame(pd.DataFrame({"user": uid[r], "item": iid[c], "rating": M[r, c]}))


def same_per_user(spark_res, local):
    got = spark_res.per_user_spark.toPandas().sort_values("user_id").reset_index(drop=True)
    want = local.per_user
    assert list(got.columns[: want.shape[1]]) == list(want.columns)
    for c in want.columns:
        a, b = got[c].to_numpy(), want[c].to_numpy()
        if b.dtype.kind == "f":
            assert np.array_equal(a.astype(np.float64), b, equal_nan=True), c
        else:
            assert list(a) == list(b), c
    return got


METRICS = ["p", "ap", "ndcg", "roc_auc", "coverage", "novelty"]


def test_factors_bit_identical_to_the_local_engine(spark):
    train, test, A, B, uid, iid = tied_data()
    uf = spark.createDataFrame(pd.DataFrame({"id": uid, "features": list(A)}))
    itf = spark.createDataFrame(pd.DataFrame({"id": iid, "features": list(B)}))
    kw = dict(k=5, metrics=METRICS, cumulative=True, seed=3)

    def on_spark(**mode):
        test_df, train_df = frame(spark, test, uid, iid), frame(spark, train, uid, iid)
        factors = dict(user_factors=uf, item_factors=itf)
        return evaluate_spark(
            test_df, train_df, **factors, rating_col="rating", gains="graded", **mode, **kw
        )

    res = on_spark(shards=3)
    local = rt.evaluate(sp.csr_array(train), sp.csr_array(test), A=A, B=B, user_ids=uid, **kw)
    got = same_per_user(res, local)
    assert res.fingerprint == local.fingerprint and res.definitions == local.definitions
    assert res.n_shards == 3 and res.n_users == len(uid)
    for name, curve in local.curves_per_user.items():  # per-user curves as array columns
        np.testing.assert_array_equal(np.stack(got[name].to_numpy()), curve)
    assert res.aggregates == local.aggregates  # coverage from merged integer counts
    pd.testing.assert_frame_equal(res.mean_ci(), local.mean_ci(), rtol=1e-12)
    pd.testing.assert_frame_equal(res.curves, local.curves, rtol=1e-12)
    assert res.nan_counts == local.nan_counts
    assert list(res.per_user.columns) == list(local.per_user.columns)
    # the other execution mode: the factors in a column of one frame, mapInArrow
    same_per_user(on_spark(mode="map"), local)


def test_ranked_lists_exploded_and_nested_in_both_modes(spark):
    train, test, A, B, uid, iid = tied_data(seed=1)
    S = A @ B.T
    order = np.argsort(-S, axis=1, kind="stable")[:, :8]  # ties: lower index first
    rows = np.repeat(np.arange(len(uid)), 8)
    exploded = pd.DataFrame(
        {"user": uid[rows], "item": iid[order.ravel()], "rank": np.tile(np.arange(1, 9), len(uid))}
    )
    ranked = spark.createDataFrame(exploded.sample(frac=1.0, random_state=0))  # any row order
    kw = dict(k=5, metrics=["p", "ap", "ndcg", "hit"], cumulative=True)
    local = rt.evaluate(
        sp.csr_array(train),
        sp.csr_array(test),
        ranked=iid.searchsorted(iid[order]),
        user_ids=uid,
        **kw,
    )
    res = evaluate_spark(
        frame(spark, test, uid, iid),
        frame(spark, train, uid, iid),
        ranked=ranked,
        rating_col="rating",
        gains="graded",  # the rule of these values: every entry a positive, its value its gain
        **kw,
    )
    same_per_user(res, local)
    assert res.fingerprint == local.fingerprint
    # recommendForAllUsers' form (one row per user, an array of (item, rating) structs), run
    # with the other execution mode (groupBy(shard).applyInArrow)
    nested = spark.createDataFrame(
        pd.DataFrame(
            {
                "user": uid,
                "recommendations": [
                    [{"item": int(iid[i]), "rating": float(S[u, i])} for i in order[u]]
                    for u in range(len(uid))
                ],
            }
        )
    )
    res = evaluate_spark(
        frame(spark, test, uid, iid),
        frame(spark, train, uid, iid),
        ranked=nested,
        rating_col="rating",
        gains="graded",
        mode="apply",
        **kw,
    )
    same_per_user(res, local)


def test_errors_name_the_argument(spark):
    train, test, A, B, uid, iid = tied_data(m=10, n=6)
    te = frame(spark, test, uid, iid)
    with pytest.raises(rt.InputError, match="'test'.*columns"):
        evaluate_spark(te, user_col="customer", ranked=te)
    with pytest.raises(rt.InputError, match="'ranked'.*exactly one model"):
        evaluate_spark(te)
    with pytest.raises(rt.InputError, match="'item_factors'"):
        evaluate_spark(te, user_factors=te)
    with pytest.raises(rt.InputError, match="'test'.*Spark DataFrame"):
        evaluate_spark(pd.DataFrame({"user": [1], "item": [2]}), ranked=te)
    with pytest.raises(rt.InputError, match="'kk'"):
        evaluate_spark(te, ranked=te, kk=3)
    with pytest.raises(rt.InputError, match="'mode'"):
        evaluate_spark(te, ranked=te, mode="rdd")
