"""``evaluate(..., profile="spark")`` on ranked lists, without Spark, where it used to depart from
pyspark's ``RankingMetrics``: lists longer than k (``meanAveragePrecision`` reads the whole list:
refused by name at a shorter k), k past the lists and past the catalogue (computed, as Spark does),
and repeated items (Spark counts every copy: refused by name). The expected values are
``RankingMetrics.scala`` (Spark 3.5 and 4.x) written out per user
(``reference.spark_ranking_metrics``); the same lists agree
with pyspark 4.3's own ``RankingMetrics`` (see tests/spark/test_spark_profile_edges.py for the
Spark frames)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from reference import spark_ranking_metrics

import recoeval_tracking as rt


def lists_and_truth(m=50, n=40, seed=7, lengths=(3, 12)):
    rng = np.random.default_rng(seed)
    width = lengths[1]
    lists = np.full((m, width), -1)
    truth = []
    for u in range(m):
        length = int(rng.integers(lengths[0], lengths[1] + 1))
        lists[u, :length] = rng.permutation(n)[:length]
        truth.append(sorted(int(i) for i in rng.permutation(n)[: int(rng.integers(1, 9))]))
    rows = np.repeat(np.arange(m), [len(t) for t in truth])
    test = sp.csr_array((np.ones(rows.size), (rows, np.concatenate(truth))), shape=(m, n))
    return lists, truth, test


def expected(lists, truth, k, name):
    return [
        spark_ranking_metrics([int(i) for i in row if i >= 0], truth[u], k)[name]
        for u, row in enumerate(lists)
    ]


def test_mean_average_precision_is_refused_at_a_k_shorter_than_the_lists():
    lists, truth, test = lists_and_truth()  # lists of 3 to 12 items
    with pytest.raises(rt.InputError, match=r"'k'.*lists' length \(12\).*meanAveragePrecision"):
        rt.evaluate(None, test, ranked=lists, k=10, profile="spark")
    res = rt.evaluate(None, test, ranked=lists, k=12, profile="spark")
    np.testing.assert_allclose(res.per_user["ap_at_12"], expected(lists, truth, 12, "ap"))
    # AP@10 here would stop at 10 (0.1035 against Spark's 0.1102 in the report that found it):
    # the two differ on these lists, so the refusal is not idle
    cut = expected(lists[:, :10], truth, 10, "ap")
    assert not np.allclose(cut, expected(lists, truth, 12, "ap"))
    # without ap, k = 10 gives Spark's @10 numbers
    res = rt.evaluate(None, test, ranked=lists, k=10, profile="spark", metrics=["p", "tap"])
    for name in ("p", "tap"):
        np.testing.assert_allclose(
            res.per_user[f"{name}_at_10"], expected(lists, truth, 10, name), err_msg=name
        )


@pytest.mark.parametrize("k", [15, 45])  # past every list; past the catalogue's 40 items
def test_k_past_the_lists_and_the_catalogue_is_computed_as_spark_does(k):
    lists, truth, test = lists_and_truth(lengths=(2, 9))
    res = rt.evaluate(None, test, ranked=lists, k=k, profile="spark")
    for name in ("p", "r", "tap", "ap", "ndcg_bin"):
        np.testing.assert_allclose(
            res.per_user[f"{name}_at_{k}"],
            expected(lists, truth, k, name),
            rtol=1e-13,
            err_msg=name,
        )
    assert (res.per_user["nan_reason"] == "").all()


def test_a_ranked_frame_past_its_lists_with_ids():
    lists, truth, test = lists_and_truth(lengths=(2, 6))
    frame = pd.DataFrame(
        [
            (u, int(i) + 100, r + 1)
            for u, row in enumerate(lists)
            for r, i in enumerate(row)
            if i >= 0
        ],
        columns=["user", "item", "rank"],
    )
    coo = test.tocoo()
    truth_df = pd.DataFrame({"user": coo.row, "item": coo.col + 100, "rating": 1.0})
    data = rt.from_dataframe(truth_df)
    res = rt.evaluate(None, data, ranked=frame, k=20, profile="spark")
    order = np.argsort(data.user_ids)  # the container's users, in their own order
    for name in ("p", "r", "ndcg_bin"):
        got = np.asarray(res.per_user[f"{name}_at_20"])[order]
        want = [expected(lists, truth, 20, name)[int(u)] for u in np.sort(data.user_ids)]
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=name)


def test_repeated_items_are_refused_by_name():
    pred, lab = [1, 1, 2], [1, 3]
    assert spark_ranking_metrics(pred, lab, 3)["r"] == 1.0  # Spark: both copies of item 1 hit
    test = sp.csr_array((np.ones(2), ([0, 0], lab)), shape=(1, 5))
    with pytest.raises(rt.InputError, match=r"'ranked'.*profile='spark'.*1 repeated"):
        rt.evaluate(None, test, ranked=np.array([pred]), k=3, profile="spark")
    frame = pd.DataFrame({"user": [0, 0, 0], "item": pred, "rank": [1, 2, 3]})
    with pytest.raises(rt.InputError, match=r"every copy"):
        rt.evaluate(None, test, ranked=frame, k=3, profile="spark")
    # without the profile a copy is dropped with a warning, as before
    with pytest.warns(UserWarning, match="repeat an item"):
        res = rt.evaluate(None, test, ranked=np.array([pred]), k=3, metrics=["r"])
    assert res.per_user["r_at_3"][0] == 0.5
