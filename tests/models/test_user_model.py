"""The user's own model through the protocol: fit, then score_users, factors or recommend.

Expected values come from the slow pure-Python reference (tests/reference.py) on the same dense
scores, never from the engine path under test; the errors are checked for the class, the
method and what was expected.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reference import reference_metrics

from recoeval_tracking import evaluate
from recoeval_tracking.models import ModelCodeError, ModelProtocolError, UserModel

K = 5


def _data(seed: int = 0, m: int = 40, n: int = 30):
    rng = np.random.default_rng(seed)
    train = sp.random(
        m, n, density=0.15, random_state=rng, format="csr", data_rvs=lambda s: np.ones(s)
    )
    test = sp.random(
        m, n, density=0.1, random_state=rng, format="csr", data_rvs=lambda s: np.ones(s)
    )
    test = sp.csr_array(test - test.multiply(train > 0))
    test.eliminate_zeros()
    A = rng.standard_normal((m, 4))
    B = rng.standard_normal((n, 4))
    bias = rng.standard_normal(n)
    return sp.csr_array(train), test, A, B, bias


class Scorer:
    """score_users over stored factors (fit records what it was given)."""

    def __init__(self, A, B):
        self.A, self.B, self.seen = A, B, None

    def fit(self, train):
        self.seen = train
        return self

    def score_users(self, user_indices):
        return self.A[user_indices] @ self.B.T


class Factors:
    def __init__(self, A, B, bias=None):
        self.A, self.B, self.bias = A, B, bias

    def fit(self, train):
        return None  # fitted in place: taken as the model itself

    def factors(self):
        return (self.A, self.B) if self.bias is None else (self.A, self.B, self.bias)


class Recommender:
    """recommend() from dense scores, excluding nothing (the evaluator skips train items)."""

    def __init__(self, S):
        self.S = S

    def fit(self, train, *, user_ids=None, item_ids=None):
        self.ids = (user_ids, item_ids)
        return self

    def recommend(self, user_indices, k):
        return [list(np.argsort(-self.S[u], kind="stable")[:k]) for u in user_indices]


def _eval(model, train, test, **kw):
    um = UserModel(model, label="mine")
    um.fit(train)
    return evaluate(
        train, test, **um.eval_inputs(K), k=K, ties="index", metrics=["p", "r", "ndcg", "ap"], **kw
    )


@pytest.mark.parametrize("with_bias", [False, True])
def test_score_users_and_factors_match_the_reference(with_bias):
    train, test, A, B, bias = _data()
    S = A @ B.T + (bias[None, :] if with_bias else 0.0)
    ref = reference_metrics(train, test, S, K, ties="index")
    models = [Factors(A, B, bias if with_bias else None)]
    if with_bias:
        models.append(
            Scorer(np.hstack([A, np.ones((A.shape[0], 1))]), np.hstack([B, bias[:, None]]))
        )
    else:
        models.append(Scorer(A, B))
    for model in models:
        res = _eval(model, train, test)
        for name in ("p", "r", "ndcg", "ap"):
            np.testing.assert_allclose(
                res.per_user[f"{name}_at_{K}"].to_numpy(),
                ref.values[name],
                rtol=1e-9,
                atol=1e-12,
                equal_nan=True,
            )


def test_recommend_lists_match_the_reference_on_the_users_pool():
    train, test, A, B, _ = _data(seed=1)
    S = A @ B.T
    # the lists leave train items in (the model does not know them): the evaluator skips them,
    # so a list of K + max train items covers the top-K of every pool
    width = K + int(np.diff(train.indptr).max())
    model = Recommender(S)
    um = UserModel(model)
    um.fit(train, user_ids=np.arange(40) + 100, item_ids=np.arange(30) + 7)
    assert model.ids[0][0] == 100 and model.ids[1][0] == 7  # fit got the id maps it accepts
    inputs = um.eval_inputs(width)
    res = evaluate(train, test, **inputs, k=K, ties="index", metrics=["p", "ndcg"])
    ref = reference_metrics(train, test, S, K, ties="index")
    np.testing.assert_allclose(res.per_user[f"p_at_{K}"], ref.values["p"], equal_nan=True)
    np.testing.assert_allclose(res.per_user[f"ndcg_at_{K}"], ref.values["ndcg"], equal_nan=True)
    assert res.topk_only


def test_fit_without_ids_gets_the_matrix_only():
    train, test, A, B, _ = _data()
    model = Scorer(A, B)
    UserModel(model).fit(train, user_ids=np.arange(40), item_ids=np.arange(30))
    assert isinstance(model.seen, sp.csr_array) and model.seen.shape == (40, 30)


def test_a_class_without_the_protocol_is_refused_at_once_naming_it():
    class NoScores:
        def fit(self, train):
            return self

        def predict(self, x):
            return x

    with pytest.raises(ModelProtocolError) as err:
        UserModel(NoScores())
    text = str(err.value)
    assert (
        "NoScores" in text
        and "score_users" in text
        and "factors" in text
        and "recommend" in text
        and "predict" in text
    )


@pytest.mark.parametrize(
    "bad, method, expected",
    [
        (
            lambda A, B: type(
                "W", (), {"fit": lambda s, t: s, "score_users": lambda s, u: np.zeros((len(u), 29))}
            )(),
            "score_users",
            "(2, 30)",
        ),
        (
            lambda A, B: type("F", (), {"fit": lambda s, t: s, "factors": lambda s: (A[:-1], B)})(),
            "factors",
            "(40, p)",
        ),
        (
            lambda A, B: type(
                "R", (), {"fit": lambda s, t: s, "recommend": lambda s, u, k: [[99]] * len(u)}
            )(),
            "recommend",
            "[0, 30)",
        ),
    ],
)
def test_wrong_outputs_name_the_method_and_what_was_expected(bad, method, expected):
    train, test, A, B, _ = _data()
    um = UserModel(bad(A, B), label="bad")
    um.fit(train)
    with pytest.raises(ModelProtocolError) as err:
        um.eval_inputs(K)
    text = str(err.value)
    assert f".{method}" in text and expected in text and "Got" in text


def test_an_exception_in_fit_says_where_it_was_raised():
    class Fails:
        def fit(self, train):
            raise ValueError("too sparse")

        def score_users(self, u):
            return None

    train, *_ = _data()
    with pytest.raises(ModelCodeError) as err:
        UserModel(Fails(), where="model=fails").fit(train)
    text = str(err.value)
    assert "Fails.fit" in text and "ValueError: too sparse" in text
    assert "test_user_model.py:" in err.value.where and "in fit" in err.value.where


def test_fit_returning_another_object_without_the_protocol_is_refused():
    class ReturnsTrain:
        def fit(self, train):
            return train

        def score_users(self, u):
            return None

    train, *_ = _data()
    with pytest.raises(ModelProtocolError, match="return self"):
        UserModel(ReturnsTrain()).fit(train)


# ---------------------------------------------------------------------------------------------
# outputs that used to pass silently or fail as an internal error
# ---------------------------------------------------------------------------------------------


def _model(**methods):
    return type("Mine", (), {"fit": lambda s, t: s, **methods})()


@pytest.mark.parametrize("bad", [-7, -2])
def test_recommend_with_a_negative_item_other_than_padding_is_refused(bad):
    """Only -1 pads a list: -7 used to be dropped like padding (every list empty)."""
    train, test, *_ = _data()
    um = UserModel(_model(recommend=lambda s, u, k: [[bad] * k for _ in u]), label="mine")
    um.fit(train)
    with pytest.raises(ModelProtocolError) as err:
        um.eval_inputs(K)
    text = str(err.value)
    assert "Mine.recommend" in text and f"the item index {bad} in the list of user (row) 0" in text
    padded = UserModel(_model(recommend=lambda s, u, k: [[3, -1, -1]] * len(u)), label="ok")
    padded.fit(train)
    lists = padded.eval_inputs(K)["ranked"].items
    assert lists.shape == (40, K) and (lists[:, 0] == 3).all() and (lists[:, 1:] == -1).all()


@pytest.mark.parametrize(
    "scores", [lambda u: np.full((len(u), 30), "high"), lambda u: np.ones((len(u), 30)) * 1j]
)
def test_score_users_returning_non_real_values_is_refused_naming_the_method(scores):
    train, *_ = _data()
    um = UserModel(_model(score_users=lambda s, u: scores(u)), label="mine")
    um.fit(train)
    with pytest.raises(ModelProtocolError) as err:
        um.eval_inputs(K)
    text = str(err.value)
    assert "Mine.score_users" in text and "must return real numbers" in text


def _no_test_users(test) -> int:
    return int((np.diff(test.indptr) == 0).sum())


@pytest.mark.parametrize("every", [1, 3])
def test_nan_scores_for_every_user_warn_with_the_reasons(every):
    """NaN for every item (or every third item) leaves no user evaluated: a warning counts the
    users by reason (a user without test entries is 'no_test' first, by the rule order)."""
    train, test, *_ = _data()

    def nan_scores(self, u):
        s = np.ones((len(u), 30))
        s[:, ::every] = np.nan
        return s

    um = UserModel(_model(score_users=nan_scores), label="mine")
    um.fit(train)
    no_test = _no_test_users(test)
    assert 0 < no_test < 40
    with pytest.warns(UserWarning) as caught:
        res = evaluate(train, test, **um.eval_inputs(K), k=K, metrics=["p", "ndcg"])
    text = " ".join(str(w.message) for w in caught)
    assert "evaluate evaluated none of the 40 users" in text
    assert f"nan_score: {40 - no_test}" in text and f"no_test: {no_test}" in text
    assert res.n_users_evaluated == 0


def test_no_warning_when_some_user_is_evaluated():
    train, test, A, B, _ = _data()
    um = UserModel(Scorer(A, B), label="mine")
    um.fit(train)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = evaluate(train, test, **um.eval_inputs(K), k=K, metrics=["p"])
    assert res.n_users_evaluated == 40 - _no_test_users(test)
