"""Bad inputs to the Python API that used to give a wrong answer or a raw error: id maps paired
by position, duplicates accepted silently, ids that break the per-user table, options the
engine cannot hold. Each now follows a stated policy (with a warning) or raises an
``InputError`` naming the argument."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recoeval_tracking import InputError, evaluate
from recoeval_tracking.data import align, from_dataframe, load_csv
from recoeval_tracking.options import EvalOptions


def _frame(users, items):
    return from_dataframe(pd.DataFrame({"user": users, "item": items}))


# ---------------------------------------------------------------------------------------------
# id maps
# ---------------------------------------------------------------------------------------------


def test_train_and_test_with_different_id_maps_are_refused():
    train = _frame([1, 2, 3, 3], [1, 2, 3, 1])
    test = _frame([1, 2, 4], [2, 3, 1])  # user 4 is cold; users 1, 2 keep their ids
    with pytest.raises(
        InputError,
        match=r"different user id maps .*1 test ids are not in "
        r"train \(e.g. \[4\]\).*align",
    ):
        evaluate(train, test, item_biases=np.arange(3.0))
    same_users = _frame([1, 2, 3], [5, 6, 7])
    with pytest.raises(InputError, match="different item id maps"):
        evaluate(train, same_users, item_biases=np.arange(3.0))


def test_aligned_ids_report_a_cold_user_as_cold():
    train, test = align(_frame([1, 2, 3, 3], [1, 2, 3, 1]), _frame([1, 2, 4], [2, 3, 5]))
    assert list(train.user_ids) == list(test.user_ids) == [1, 2, 3, 4]
    assert list(train.item_ids) == [1, 2, 3, 5]
    res = evaluate(train, test, item_biases=np.arange(4.0), k=2, metrics=["p"])
    row = res.per_user.set_index("user_id").loc[4]
    assert row["n_train"] == 0 and row["n_test"] == 1  # not another user's train count
    assert res.per_user.set_index("user_id").loc[3, "nan_reason"] == "no_test"


def test_repeated_user_ids_are_refused():
    test = sp.csr_array(np.eye(3))
    with pytest.raises(InputError, match="'user_ids' parameter of evaluate must be unique"):
        evaluate(None, test, item_biases=np.arange(3.0), user_ids=["a", "a", "b"])


# ---------------------------------------------------------------------------------------------
# duplicates
# ---------------------------------------------------------------------------------------------


def test_duplicate_test_entries_are_summed_with_a_warning():
    rows, cols = [0, 0, 0, 1], [1, 1, 2, 2]
    dup = sp.coo_array((np.ones(4), (rows, cols)), shape=(2, 4))
    merged = sp.csr_array(dup)  # scipy's rule: one entry, value 2
    with pytest.warns(UserWarning, match=r"'test' matrix .* 1 duplicate \(user, item\) entries"):
        got = evaluate(None, dup, item_biases=np.arange(4.0)[::-1].copy(), k=2, metrics=["ndcg"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = evaluate(
            None, merged, item_biases=np.arange(4.0)[::-1].copy(), k=2, metrics=["ndcg"]
        )
    pd.testing.assert_frame_equal(got.per_user, want.per_user)


def test_repeated_items_in_ranked_lists_count_once_with_a_warning():
    test = sp.csr_array(([1.0, 1.0], ([0, 0], [1, 2])), shape=(1, 5))
    with pytest.warns(UserWarning, match="repeat an item 2 times"):
        got = evaluate(None, test, ranked=np.array([[1, 1, 1, 2]]), k=2, metrics=["p", "hit"])
    assert got.per_user["p_at_2"].iloc[0] == 1.0  # [1, 2]: both relevant, counted once each
    df = pd.DataFrame({"user": [0, 0, 0], "item": [3, 1, 3], "rank": [1, 2, 3]})
    with pytest.warns(UserWarning, match="repeat an item 1 times"):
        got = evaluate(None, test, ranked=df, k=2, metrics=["p"])
    assert got.per_user["p_at_2"].iloc[0] == 0.5


# ---------------------------------------------------------------------------------------------
# ids at load
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "users,match",
    [
        ([10**30, 1], "out of the 64-bit integer range"),
        ([1.5, 2.0], "not an integer in the 64-bit range"),
        ([1, "a"], "mix types"),
        ([True, False], "of type bool"),
    ],
)
def test_bad_ids_are_refused_at_load(users, match):
    with pytest.raises(InputError, match=match):
        from_dataframe(pd.DataFrame({"user": users, "item": [1, 2]}))


def test_good_ids_load():
    assert list(_frame(["b", "a"], [1, 2]).user_ids) == ["a", "b"]
    assert list(_frame([2.0, 1.0], [1, 2]).user_ids) == [1.0, 2.0]
    assert list(_frame([-3, 2**62], [1, 2]).user_ids) == [-3, 2**62]


def test_csv_ids_beyond_64_bits_name_the_line(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text(f"user,item\n1,1\n{10**30},2\n")
    with pytest.raises(InputError, match=r"user id 10{30} in column 'user' at line 3 of"):
        load_csv(p)
    p.write_text("user,item,value,timestamp\n1,2\n")
    with pytest.raises(InputError, match="as many fields as the header"):
        load_csv(p)
    p.write_text("user,item\n1,2\n")
    with pytest.raises(InputError, match="'encoding' parameter of load_csv"):
        load_csv(p, encoding="no-such-encoding")


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,match",
    [
        ({"seed": 2**64}, "'seed' parameter of evaluate must be an int between 0 and"),
        ({"seed": -1}, "'seed' parameter"),
        ({"block_rows": -1.0}, "'block_rows' parameter"),
        ({"block_rows": 2.5}, "'block_rows' parameter"),
        ({"block_rows": 2**65}, "'block_rows' parameter"),
        ({"profile": ["a"]}, "'profile' parameter of evaluate must be a name"),
        ({"profile": {"a": 1}}, "'profile' parameter"),
        ({"ties": ["a"]}, "'ties' parameter of evaluate must be a name"),
        ({"metrics": 5}, "'metrics' parameter of evaluate must be a metric name"),
        ({"cumulative": "yes"}, "'cumulative' parameter of evaluate must be a bool"),
        ({"consider_cold_start": "no"}, "'consider_cold_start' parameter"),
        ({"nthreads": 0}, "'nthreads' parameter"),
        ({"nthreads": -5}, "'nthreads' parameter"),
        ({"nthreads": 2**70}, "'nthreads' parameter"),
        ({"serendipity_top_n": 2**70}, "'serendipity_top_n' parameter"),
        ({"min_pos_test": 2**65}, "'min_pos_test' parameter"),
        ({"backend": None}, "'backend' parameter"),
    ],
)
def test_bad_options_name_the_argument(options, match):
    test = sp.csr_array(np.eye(4))
    with pytest.raises(InputError, match=match):
        evaluate(None, test, item_biases=np.arange(4.0), k=2, **options)
    with pytest.raises(InputError, match=match):
        EvalOptions(k=2, **options).checked()
