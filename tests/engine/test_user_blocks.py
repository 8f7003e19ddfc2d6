"""A user's ``score_users`` block is evaluated where the model put it when the model returns a
new array that nothing else refers to, and copied otherwise: the engine masks train items in
place, which a model that kept or shares its result must never see."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import evaluate
from recoeval_tracking.models import UserModel
from recoeval_tracking.models._user import _exclusive

K = 5
METRICS = ["p", "ndcg", "ap", "roc_auc"]


def _data(m: int = 60, n: int = 40):
    """Every user has train and test items (so every row is scored, in order)."""
    rng = np.random.default_rng(11)
    cells = rng.random((m, n))
    cells[:, 0] = 0.0  # a train item for everyone
    cells[:, 1] = 0.99  # a test item for everyone
    train = sp.csr_array((cells < 0.15).astype(np.float64))
    test = sp.csr_array((cells > 0.9).astype(np.float64))
    A = rng.standard_normal((m, 4)).astype(np.float32)
    B = rng.standard_normal((n, 4)).astype(np.float32)
    return train, test, A, B


class Fresh:
    """Returns a new array each call and keeps only a weak reference to it."""

    def __init__(self, A, B):
        self.A, self.B, self.returned = A, B, []

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        S = self.A[user_indices] @ self.B.T
        self.returned.append((np.asarray(user_indices).copy(), weakref.ref(S)))
        return S


class Keeps(Fresh):
    """Keeps every array it returned."""

    def score_users(self, user_indices):
        S = self.A[user_indices] @ self.B.T
        self.returned.append((np.asarray(user_indices).copy(), S))
        return S


class Slices(Fresh):
    """Returns views of one matrix it holds (the rows asked are consecutive here)."""

    def fit(self, train):
        self.S = self.A @ self.B.T
        self.original = self.S.copy()
        return self

    def score_users(self, user_indices):
        return self.S[user_indices[0] : user_indices[-1] + 1]


def _evaluate(model, train, test, **kw):
    um = UserModel(model)
    um.fit(train)
    inputs = um.eval_inputs(K)
    model.returned.clear()
    return evaluate(train, test, **inputs, k=K, ties="index", metrics=METRICS, **kw)


def _same_as_factors(res, train, test, A, B):
    direct = evaluate(train, test, A=A, B=B, k=K, ties="index", metrics=METRICS)
    for column in direct.per_user.columns:
        assert res.per_user[column].equals(direct.per_user[column]), column


@pytest.mark.parametrize("nthreads", [1, 2])
def test_a_fresh_block_is_evaluated_where_the_model_put_it(nthreads):
    train, test, A, B = _data()
    model = Fresh(A, B)
    masked = []

    def progress(n):  # the block just evaluated is still alive here: its train items masked
        users, ref = model.returned[len(masked)]
        S = ref()
        masked.append(S is not None and bool(np.isneginf(S[:, 0]).all()))

    res = _evaluate(model, train, test, block_rows=16, nthreads=nthreads, progress=progress)
    assert len(masked) == 4 and all(masked)
    _same_as_factors(res, train, test, A, B)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_a_block_the_model_keeps_or_shares_is_copied(nthreads):
    train, test, A, B = _data()
    keeps = Keeps(A, B)
    res = _evaluate(keeps, train, test, block_rows=16, nthreads=nthreads)
    assert len(keeps.returned) == 4
    for users, S in keeps.returned:
        np.testing.assert_array_equal(S, A[users] @ B.T)  # no -inf written into it
    _same_as_factors(res, train, test, A, B)
    slices = Slices(A, B)
    res = _evaluate(slices, train, test, block_rows=16, nthreads=nthreads)
    np.testing.assert_array_equal(slices.S, slices.original)
    _same_as_factors(res, train, test, A, B)


def test_what_counts_as_exclusive():
    def made():
        got = np.ones((2, 3))
        return _exclusive(got)

    assert made()
    kept = np.ones((2, 3))

    def held():
        got = kept
        return _exclusive(got)

    assert not held()

    def view():
        got = np.ones((4, 3))[1:3]
        return _exclusive(got)

    assert not view()

    def matrix():
        got = np.asmatrix(np.ones((2, 3)))
        return _exclusive(got)

    assert not matrix()


class Given:
    """Returns rows of a score matrix it was given (new arrays: fancy indexing)."""

    def __init__(self, S):
        self.S, self.returned = S, []

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        return self.S[user_indices]


@pytest.mark.parametrize("inf_scores", ["rank", "nan"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_nan_and_inf_in_a_models_blocks_follow_the_rules(inf_scores, nthreads):
    """A model's blocks, evaluated where the model put them (in blocks of 16), follow the NaN
    rules as the same scores given densely: a NaN on a train item does not count, a NaN in the
    pool makes the user undefined, +-inf does under inf_scores="nan" only."""
    train, test, A, B = _data()
    S = A @ B.T
    S[3, 0] = np.nan  # a train item: the user stays defined
    S[20, 5:7] = np.nan  # in the pool: undefined
    S[40, 3], S[40, 4] = np.inf, -np.inf  # defined under "rank"
    S[55, 2] = np.inf  # in the pool: undefined under "nan"
    kw = dict(k=K, ties="index", metrics=METRICS, inf_scores=inf_scores)
    model = Given(S)
    um = UserModel(model)
    um.fit(train)
    got = evaluate(train, test, **um.eval_inputs(K), block_rows=16, nthreads=nthreads, **kw)
    want = evaluate(train, test, scores=S, **kw)
    for column in want.per_user.columns:
        assert got.per_user[column].equals(want.per_user[column]), column
    reasons = got.per_user["nan_reason"]
    ranked = "nan_score" if inf_scores == "nan" else ""
    assert [reasons[3], reasons[20], reasons[40], reasons[55]] == ["", "nan_score", ranked, ranked]
