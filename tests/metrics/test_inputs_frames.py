"""DataFrames as ``train`` and ``test`` of :func:`recoeval_tracking.evaluate` (one row per
(user, item[, rating]), as ranx and LensKit take them), and the views of :class:`Results` a
notebook uses (the headline table, the plot). Expected values are worked out by hand from the
definitions: P@k = hits in the top k / k; NDCG@k = DCG / ideal DCG with binary gains here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.metrics.results import headline_metrics

# Items sorted by id: a, b, c, d; users 10, 20. Item scores a > b > c > d for everyone.
TRAIN = pd.DataFrame({"user": [10, 20], "item": ["a", "b"]})
TEST = pd.DataFrame({"user": [10, 10, 20], "item": ["c", "d", "a"]})
SCORES = np.array([4.0, 3.0, 2.0, 1.0])


def _by_user(res):
    return res.per_user.set_index("user_id")


def test_two_dataframes_are_aligned_and_evaluated():
    res = rt.evaluate(TRAIN, TEST, item_biases=SCORES, k=2, metrics=["p", "ndcg"])
    pu = _by_user(res)
    assert list(pu.index) == [10, 20]
    # user 10: train a; ranking b, c, d; test c, d -> top 2 = b, c: one hit
    assert pu.loc[10, "p_at_2"] == pytest.approx(0.5)
    assert pu.loc[10, "ndcg_at_2"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # user 20: train b; ranking a, c, d; test a -> hit at rank 1
    assert pu.loc[20, "p_at_2"] == pytest.approx(0.5)
    assert pu.loc[20, "ndcg_at_2"] == pytest.approx(1.0)


def test_the_same_numbers_as_the_aligned_matrices():
    train = sp.csr_array(np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=float))
    test = sp.csr_array(np.array([[0, 0, 1, 1], [1, 0, 0, 0]], dtype=float))
    a = rt.evaluate(train, test, item_biases=SCORES, k=2, metrics=["p", "ndcg", "r"])
    b = rt.evaluate(TRAIN, TEST, item_biases=SCORES, k=2, metrics=["p", "ndcg", "r"])
    for col in ("p_at_2", "ndcg_at_2", "r_at_2"):
        np.testing.assert_array_equal(a.per_user[col].to_numpy(), b.per_user[col].to_numpy())


def test_named_columns_and_ratings_as_values():
    train = TRAIN.rename(columns={"user": "userId", "item": "movieId"})
    test = TEST.rename(columns={"user": "userId", "item": "movieId"}).assign(rating=[5, 1, 4])
    res = rt.evaluate(train, test, item_biases=SCORES, k=2, metrics=["ndcg"])
    pu = _by_user(res)
    # user 10: top 2 = b, c with gain 5 for c at rank 2; ideal: c (5) then d (1)
    dcg = 5 / math.log2(3)
    assert pu.loc[10, "ndcg_at_2"] == pytest.approx(dcg / (5 + 1 / math.log2(3)))


def test_test_frame_with_an_interactions_train_uses_its_id_maps():
    from recoeval_tracking.data import from_dataframe

    train = from_dataframe(pd.DataFrame({"user": [10, 20, 20], "item": ["a", "b", "d"]}))
    # train's items: a, b, d (no c): the test frame must use known ids
    test = pd.DataFrame({"user": [10], "item": ["d"]})
    res = rt.evaluate(train, test, item_biases=np.array([3.0, 2.0, 1.0]), k=1, metrics=["p"])
    pu = _by_user(res)
    assert pu.loc[10, "p_at_1"] == 0.0  # top 1 of user 10 is b
    with pytest.raises(
        InputError, match="1 item ids of the 'test' DataFrame .* not in the id map of 'train'"
    ):
        rt.evaluate(
            train,
            pd.DataFrame({"user": [10], "item": ["c"]}),
            item_biases=np.array([3.0, 2.0, 1.0]),
            k=1,
        )


def test_test_frame_with_a_bare_matrix_takes_positions():
    train = sp.csr_array(np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=float))
    test = pd.DataFrame({"user": [0, 0, 1], "item": [2, 3, 0]})
    res = rt.evaluate(train, test, item_biases=SCORES, k=2, metrics=["p"])
    assert res.per_user["p_at_2"].tolist() == [0.5, 0.5]
    with pytest.raises(InputError, match="must be item positions"):
        rt.evaluate(train, pd.DataFrame({"user": [0], "item": ["x"]}), item_biases=SCORES)


def test_a_frame_without_id_columns_names_the_argument():
    with pytest.raises(
        InputError,
        match="The 'test' parameter of evaluate must be a DataFrame with a user id column",
    ):
        rt.evaluate(TRAIN, pd.DataFrame({"who": [10], "item": ["a"]}), item_biases=SCORES)


def test_headline_metrics_order_and_fallback():
    names = ["aclt_at_10", "r_at_10", "ndcg_at_10", "roc_auc", "ndcg_exp_at_10", "hit_at_10"]
    assert headline_metrics(names) == ["ndcg_at_10", "r_at_10", "hit_at_10"]
    assert headline_metrics(names, k=5) == names[:7]  # none at K=5: the first ones
    assert headline_metrics(["roc_auc", "mpr"], limit=1) == ["roc_auc"]


def test_headline_summary_and_plot():
    res = rt.evaluate(
        TRAIN, TEST, item_biases=SCORES, k=2, metrics=["p", "ndcg", "roc_auc"], cumulative=True
    )
    text = res.summary("headline")
    assert "ndcg_at_2" in text and "p_at_2" in text and "roc_auc" not in text
    assert "(and 1 more metrics" in text
    assert res.summary().count("\n") > text.count("\n") - 1
    ax = res.plot()
    assert sorted(line.get_label() for line in ax.get_lines()) == ["ndcg_at_k", "p_at_k"]
    ndcg = next(line for line in ax.get_lines() if line.get_label() == "ndcg_at_k")
    np.testing.assert_allclose(ndcg.get_ydata(), res.curves["ndcg_at_k"].to_numpy())
    flat = rt.evaluate(TRAIN, TEST, item_biases=SCORES, k=2, metrics=["p", "ndcg"])
    bars = flat.plot().patches
    assert [b.get_width() for b in bars] == pytest.approx(
        [flat.means["ndcg_at_2"], flat.means["p_at_2"]]
    )
    with pytest.raises(InputError, match="'metrics'"):
        flat.plot(["nope_at_2"])
