"""Bad input raises recoeval_tracking.InputError (a ValueError) naming the argument and what was got.

Both public entry points are checked: calc_reco_metrics (recometrics' interface) and evaluate.
Unsorted CSR indices are not an error: they are sorted on a copy, the caller's matrix untouched.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

from ._engine_adapter import calc

M, N, P = 9, 13, 3


@pytest.fixture()
def inputs():
    rng = np.random.default_rng(0)
    cell = rng.choice(3, size=(M, N), p=[0.5, 0.25, 0.25])
    cell[:, 0] = 2  # every user has a test item
    cell[:, 1] = 0
    Xtr = sp.csr_array((cell == 1).astype(float))
    Xte = sp.csr_array((cell == 2).astype(float))
    A = rng.standard_normal((M, P))
    B = rng.standard_normal((N, P))
    return Xtr, Xte, A, B


def _raises(fn, *names: str, got: str | None = None) -> str:
    """Call ``fn``; it must raise InputError whose message names one of the parameters ``names``
    (as a whole word, quoted or not) and says what was got (``got``)."""
    with pytest.raises(rt.InputError) as info:
        fn()
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", msg) for n in names), (
        f"message names none of the parameters {names}: {msg}"
    )
    if got is not None:
        assert got in msg, f"message does not say what was got ({got!r}): {msg}"
    return msg


def test_input_error_is_a_value_error():
    assert issubclass(rt.InputError, ValueError)


def test_factor_shapes_must_match(inputs):
    Xtr, Xte, A, B = inputs
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A[:-2], B), "A", "X_test", got="(7, 3)")
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B[:-1]), "B", "X_test", got="(12, 3)")
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B[:, :2]), "A", "B", got="(13, 2)")
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A[:-2], B=B), "A", "test", got="(7, 3)")
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A, B=B[:-1]), "B", "test", got="(12, 3)")


def test_train_and_test_shapes_must_match(inputs):
    Xtr, Xte, A, B = inputs
    # a relation between two arguments: naming the train matrix in words is enough
    _raises(lambda: rt.calc_reco_metrics(Xtr[:, :-1], Xte, A, B), "X_train", "train", got="(9, 12)")
    _raises(lambda: rt.evaluate(Xtr[:-1], Xte, A=A, B=B), "train", got="(8, 13)")


def test_item_biases_shape(inputs):
    Xtr, Xte, A, B = inputs
    _raises(
        lambda: rt.calc_reco_metrics(Xtr, Xte, A, B, item_biases=np.zeros(N + 1)),
        "item_biases",
        got="(14,)",
    )
    _raises(
        lambda: rt.calc_reco_metrics(Xtr, Xte, None, None, item_biases=np.zeros(N - 1)),
        "item_biases",
        "X_test",
        got="(12,)",
    )


def test_scores_shape_and_scorer_output(inputs):
    Xtr, Xte, _, _ = inputs
    _raises(lambda: rt.evaluate(Xtr, Xte, scores=np.zeros((M, N + 1))), "scores", got="(9, 14)")
    _raises(
        lambda: rt.evaluate(Xtr, Xte, scorer=lambda users: np.zeros((len(users), N - 1))),
        "scorer",
        got="13)",
    )


def test_dense_matrices_are_refused(inputs):
    Xtr, Xte, A, B = inputs
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte.toarray(), A, B), "X_test", got="numpy array")
    _raises(lambda: rt.calc_reco_metrics(Xtr.toarray(), Xte, A, B), "X_train", got="numpy array")
    _raises(lambda: rt.evaluate(Xtr, Xte.toarray(), A=A, B=B), "test", got="numpy array")


def test_string_dtypes_are_refused(inputs):
    Xtr, Xte, A, B = inputs
    strA = A.astype(str)
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, strA, B), "A", got="<U")
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B.astype(str)), "B", got="<U")
    _raises(
        lambda: rt.calc_reco_metrics(Xtr, Xte, None, None, item_biases=np.array(["x"] * N)),
        "item_biases",
    )
    _raises(lambda: rt.evaluate(Xtr, Xte, scores=np.full((M, N), "a")), "scores")
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B, k="3"), "k", got="'3'")


@pytest.mark.parametrize("k", [0, -1, N + 1])
def test_k_out_of_range(inputs, k):
    Xtr, Xte, A, B = inputs
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B, k=k), "k", got=f"Got {k}")
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A, B=B, k=k), "k", got=f"Got {k}")


def test_k_must_be_an_int(inputs):
    Xtr, Xte, A, B = inputs
    _raises(lambda: rt.calc_reco_metrics(Xtr, Xte, A, B, k=2.5), "k", got="2.5")
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A, B=B, k=2.5), "k", got="2.5")


def test_train_test_overlap_names_a_user_and_an_item(inputs):
    Xtr, Xte, A, B = inputs
    dense = Xtr.toarray()
    dense[7, 11] = 1.0
    test_dense = Xte.toarray()
    test_dense[7, 11] = 1.0
    overlapping = sp.csr_array(dense)
    test_overlap = sp.csr_array(test_dense)
    for fn in (
        lambda: rt.calc_reco_metrics(overlapping, test_overlap, A, B),
        lambda: rt.evaluate(overlapping, test_overlap, A=A, B=B),
    ):
        msg = _raises(fn, "X_train", "X_test", "train", "test")
        numbers = set(re.findall(r"\d+", msg))
        assert "7" in numbers and "11" in numbers, msg


@pytest.mark.parametrize("bad", [N, N + 5, -1])
def test_out_of_range_indices(inputs, bad):
    Xtr, Xte, A, B = inputs
    broken = sp.csr_array(
        (np.array([1.0, 1.0]), np.array([2, bad]), np.array([0, 1, 2] + [2] * (M - 2))),
        shape=(M, N),
    )
    _raises(lambda: rt.calc_reco_metrics(None, broken, A, B), "X_test", got=str(bad))
    _raises(lambda: rt.calc_reco_metrics(broken, Xte, A, B), "X_train", got=str(bad))
    _raises(lambda: rt.evaluate(None, broken, A=A, B=B), "test", got=str(bad))


@pytest.mark.parametrize("bad", [N, -2])
def test_ranked_lists_out_of_range(inputs, bad):
    Xtr, Xte, _, _ = inputs
    ranked = np.tile(np.arange(2, 5), (M, 1))
    ranked[3, 1] = bad
    _raises(lambda: rt.evaluate(Xtr, Xte, ranked=ranked, k=3), "ranked", got=str(bad))


def test_unknown_names(inputs):
    Xtr, Xte, A, B = inputs
    _raises(
        lambda: rt.evaluate(Xtr, Xte, A=A, B=B, metrics=["p", "precision_at"]),
        "metrics",
        got="precision_at",
    )
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A, B=B, ties="random"), "ties", got="random")
    _raises(lambda: rt.evaluate(Xtr, Xte, A=A, B=B, profile="cubic"), "profile", got="cubic")


def test_no_score_source(inputs):
    Xtr, Xte, _, _ = inputs
    with pytest.raises(rt.InputError):
        rt.calc_reco_metrics(Xtr, Xte, None, None)
    with pytest.raises(rt.InputError):
        rt.evaluate(Xtr, Xte)


def test_unsorted_indices_are_sorted_on_a_copy(inputs):
    _, _, A, B = inputs
    # Row 0 stores items (9, 2, 5) out of order, row 1 (4, 0); test items in rows 0 and 1 too.
    tr_indptr = np.array([0, 3, 5] + [5] * (M - 2))
    tr_indices = np.array([9, 2, 5, 4, 0])
    tr_data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    Xtr = sp.csr_array((tr_data.copy(), tr_indices.copy(), tr_indptr.copy()), shape=(M, N))
    te_indptr = np.array([0, 2, 4] + [4] * (M - 2))
    te_indices = np.array([7, 1, 12, 3])
    te_data = np.array([1.0, 3.0, 2.0, 1.0])
    Xte = sp.csr_array((te_data.copy(), te_indices.copy(), te_indptr.copy()), shape=(M, N))
    assert not Xtr.has_sorted_indices and not Xte.has_sorted_indices

    got = calc(Xtr, Xte, A, B, 4, noise=False)
    res = rt.evaluate(Xtr, Xte, A=A, B=B, metrics="all", k=4, ties="index")

    # the caller's matrices are untouched
    for X, (data, indices, indptr) in (
        (Xtr, (tr_data, tr_indices, tr_indptr)),
        (Xte, (te_data, te_indices, te_indptr)),
    ):
        np.testing.assert_array_equal(X.indices, indices)
        np.testing.assert_array_equal(X.data, data)
        np.testing.assert_array_equal(X.indptr, indptr)
    # and the results are those of the sorted matrices
    Str, Ste = Xtr.copy(), Xte.copy()
    Str.sort_indices()
    Ste.sort_indices()
    want = calc(Str, Ste, A, B, 4, noise=False)
    for name in got:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    want_res = rt.evaluate(Str, Ste, A=A, B=B, metrics="all", k=4, ties="index")
    np.testing.assert_array_equal(
        res.per_user[res.metric_columns].to_numpy(),
        want_res.per_user[want_res.metric_columns].to_numpy(),
    )


def test_repeated_user_ids_are_counted_and_shown():
    te = sp.csr_array(np.eye(4))
    ids = np.array(["a", "b", "a", "b"])
    with pytest.raises(rt.InputError) as err:
        rt.evaluate(None, te, scores=np.ones((4, 4)), user_ids=ids)
    assert str(err.value).endswith(
        "must be unique ids (one per test row). Got 2 repeated ids, e.g. ['a', 'b'] instead."
    ), str(err.value)


def test_ranked_lists_with_repeated_items_count_each_item_once():
    """A repeated item counts at its first (best) rank; the later copies are dropped and the rest
    of the list moves up: the same values as the list written without them."""
    te = sp.csr_array(np.array([[0, 1, 1, 0, 0, 1], [1, 0, 0, 1, 0, 0]], dtype=float))
    repeated = np.array([[2, 0, 2, 1, 0, 5], [3, 3, 3, 4, 0, -1]])
    by_hand = np.array([[2, 0, 1, 5, -1, -1], [3, 4, 0, -1, -1, -1]])
    kw = dict(metrics=["p", "ap", "ndcg", "rr"], k=3)
    with pytest.warns(UserWarning, match="repeat an item 4 times"):
        got = rt.evaluate(None, te, ranked=repeated, **kw)
    want = rt.evaluate(None, te, ranked=by_hand, **kw)
    np.testing.assert_array_equal(got.per_user.to_numpy(), want.per_user.to_numpy())
    # user 0: list (2, 0, 1), positives {1, 2, 5}: hits at ranks 1 and 3
    assert got.per_user.loc[0, "p_at_3"] == pytest.approx(2 / 3)
    assert got.per_user.loc[0, "ap_at_3"] == pytest.approx((1 + 2 / 3) / 3)


def test_a_model_object_given_as_scores_is_told_how_to_pass_it():
    class MyKNN:
        def score_users(self, users):
            return np.zeros((len(users), 4))

    train = sp.csr_array(np.eye(3, 4))
    test = sp.csr_array(np.fliplr(np.eye(3, 4)))
    with pytest.raises(rt.InputError) as err:
        rt.evaluate(train, test, scores=MyKNN(), k=2)
    text = str(err.value)
    assert "'scores' parameter of evaluate" in text and "Got a MyKNN, a model object" in text
    assert "scorer=model.score_users" in text and "UserModel(model).eval_inputs(k)" in text
