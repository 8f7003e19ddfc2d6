"""Inputs that were accepted silently or failed with an unclear error (issue 44, item 8): each
is refused naming the parameter, what was expected and what was got, or now works."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking import InputError

# two users, four items; test {1}, {2}; train {0}, {3}
TRAIN = sp.csr_array((np.ones(2), ([0, 1], [0, 3])), shape=(2, 4))
TEST = sp.csr_array((np.ones(2), ([0, 1], [1, 2])), shape=(2, 4))
A = np.eye(2, 3)
B = np.arange(12.0).reshape(4, 3)


@pytest.mark.parametrize("fmt", ["dok", "lil", "dia"])
def test_a_test_matrix_in_any_scipy_format_is_evaluated_as_its_csr(fmt):
    expected = rt.evaluate(TRAIN, TEST, A=A, B=B, k=2, metrics=["p", "ndcg"])
    got = rt.evaluate(TRAIN, TEST.asformat(fmt), A=A, B=B, k=2, metrics=["p", "ndcg"])
    pd.testing.assert_frame_equal(got.per_user, expected.per_user)


def test_a_dok_test_with_a_negative_value_is_warned_about():
    test = TEST.todok()
    test[1, 2] = -1.0
    with pytest.warns(UserWarning, match=r"1 stored entries with a negative value"):
        rt.evaluate(TRAIN, test, A=A, B=B, k=2, metrics=["p"])


@pytest.mark.parametrize("progress", [5, "tqdm", True])
def test_progress_that_is_not_callable_is_refused_naming_what_it_takes(progress):
    with pytest.raises(InputError, match=r"'progress' parameter of evaluate must be None or a "):
        rt.evaluate(TRAIN, TEST, A=A, B=B, k=2, progress=progress)


def test_progress_is_called_with_the_users_done():
    done: list[int] = []
    rt.evaluate(TRAIN, TEST, A=A, B=B, k=2, progress=done.append)
    assert sum(done) == 2


def test_a_huge_coo_test_with_wrong_factors_is_refused_before_its_row_pointer_is_made(
    monkeypatch,
):
    # 2**31 rows: converting to CSR would ask for a 16 GiB row pointer; A's rows are checked
    # from the shapes first (a conversion here fails the test instead of filling the memory)
    import recoeval_tracking._validation as validation

    def no_conversion(*args, **kwargs):
        raise AssertionError("the COO test was converted before A's rows were checked")

    monkeypatch.setattr(validation, "_coo_to_csr", no_conversion)
    huge = sp.coo_array((np.ones(1), ([0], [0])), shape=(2**31, 4))
    with pytest.raises(InputError, match=r"'A' parameter of evaluate must be an array with one "):
        rt.evaluate(None, huge, A=A, B=B, k=2)
    with pytest.raises(InputError, match=r"'B' parameter.*one row per item \(4 rows"):
        rt.evaluate(None, TEST, A=A, B=B[:3], k=2)


def test_two_items_at_one_rank_of_a_user_are_refused_naming_the_user_and_rank():
    ranked = pd.DataFrame({"user": [0, 0, 1, 1], "item": [1, 2, 2, 1], "rank": [1, 2, 1, 1]})
    with pytest.raises(InputError, match=r"Got user 1 with 2 items at rank 1 \(2, 1\)"):
        rt.evaluate(TRAIN, TEST, ranked=ranked, k=1)


def test_the_same_item_twice_at_one_rank_is_a_copy_not_a_tie():
    ranked = pd.DataFrame({"user": [0, 0, 1], "item": [1, 1, 2], "rank": [1, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rt.evaluate(TRAIN, TEST, ranked=ranked, k=1, metrics=["p"])
    assert res.per_user["p_at_1"].tolist() == [1.0, 1.0]


def test_string_item_ids_with_bare_matrices_say_the_matrices_have_no_ids():
    ranked = pd.DataFrame({"user": [0, 1], "item": ["b", "c"], "rank": [1, 1]})
    with pytest.raises(
        InputError, match=r"'item' column holds column indices.*no item ids.*Got an item 'b'.*"
    ) as err:
        rt.evaluate(TRAIN, TEST, ranked=ranked, k=1)
    assert "rt.from_dataframe" in str(err.value)


def test_float_item_indices_with_bare_matrices_are_still_taken():
    ranked = pd.DataFrame({"user": [0, 1], "item": [1.0, 2.0], "rank": [1, 1]})
    res = rt.evaluate(TRAIN, TEST, ranked=ranked, k=1, metrics=["p"])
    assert res.per_user["p_at_1"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("role", "other"), [("user", "user_id"), ("item", "itemId")])
def test_a_test_frame_with_two_id_columns_of_one_role_is_refused_naming_both(role, other):
    frame = pd.DataFrame({"user": [0, 1], "item": [1, 2]})
    frame[other] = frame[role]
    with pytest.raises(
        InputError,
        match=rf"'test' parameter of evaluate must be a DataFrame with one {role} id column.*"
        rf"Got both '{role}' and '{other}'.*df.drop\(columns='{other}'\)",
    ):
        rt.evaluate(TRAIN, frame, A=A, B=B, k=1)


def test_split_refuses_a_negative_column_index():
    X = sp.random(30, 20, density=0.3, format="csr", random_state=0)
    X = sp.csr_array((X.data, X.indices.copy(), X.indptr), shape=X.shape)
    X.indices[0] = -1
    with pytest.raises(
        InputError,
        match=r"'X' parameter of split_reco_train_test must be a sparse matrix whose column "
        r"indices lie in \[0, 20\). Got a column index -1",
    ):
        rt.split_reco_train_test(X, items_test_fraction=0.3, seed=0)
