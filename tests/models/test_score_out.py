"""``score_users(user_indices, out=...)``: a model that accepts ``out`` writes its scores into
the engine's block buffer, and the engine uses them without a copy."""

from __future__ import annotations

import threading
import tracemalloc

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import evaluate
from recoeval_tracking.models import ModelProtocolError, UserModel
from recoeval_tracking.scores import CallableScores

K = 5
METRICS = ["p", "r", "ndcg", "ap", "roc_auc", "rr"]


def _data(seed: int = 0, m: int = 60, n: int = 40):
    rng = np.random.default_rng(seed)
    cells = rng.random((m, n))
    train = sp.csr_array((cells < 0.15).astype(np.float64))
    test = sp.csr_array((cells > 0.9).astype(np.float64))
    return train, test, rng.standard_normal((m, 4)), rng.standard_normal((n, 4))


class Plain:
    def __init__(self, A, B):
        self.A, self.B = A, B

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        return self.A[user_indices] @ self.B.T


class IntoOut(Plain):
    """Writes into ``out`` when given one; records every buffer it was handed."""

    def __init__(self, A, B, give_back="out"):
        super().__init__(A, B)
        self.buffers = []
        self.give_back = give_back

    def score_users(self, user_indices, out=None):
        if out is None:
            return self.A[user_indices] @ self.B.T
        self.buffers.append(out)
        np.matmul(self.A[user_indices], self.B.T, out=out)
        if self.give_back == "copy":  # another array than the buffer: copied, as before
            return out.copy()
        return out if self.give_back == "out" else None


def _eval(model, train, test, **kw):
    um = UserModel(model)
    um.fit(train)
    return evaluate(train, test, **um.eval_inputs(K), k=K, ties="index", metrics=METRICS, **kw)


@pytest.mark.parametrize("give_back", ["out", "none", "copy"])
@pytest.mark.parametrize("block_rows", [None, 7])
def test_values_identical_with_and_without_out(give_back, block_rows):
    train, test, A, B = _data()
    plain = _eval(Plain(A, B), train, test, block_rows=block_rows)
    model = IntoOut(A, B, give_back)
    got = _eval(model, train, test, block_rows=block_rows)
    assert model.buffers, "the engine passed no buffer to a score_users that accepts out"
    for col in plain.per_user.columns:
        np.testing.assert_array_equal(got.per_user[col].to_numpy(), plain.per_user[col].to_numpy())


def test_the_buffer_passed_is_the_engines_own_and_used_without_a_copy():
    train, test, A, B = _data()
    model = IntoOut(A, B)
    um = UserModel(model)
    um.fit(train)
    source = um.eval_inputs(K)["scorer"]
    assert isinstance(source, CallableScores)
    buf = np.empty((5, 40), dtype=source.dtype)
    users = np.arange(5, dtype=np.int64)
    assert source.block(users, buf) is buf  # the engine's buffer comes back, not a copy
    assert model.buffers[-1] is buf  # and it is what the model was handed
    np.testing.assert_array_equal(buf, A[:5] @ B.T)
    # in a whole evaluation, every block is a slice of one engine buffer (no block allocated)
    model.buffers.clear()
    evaluate(train, test, **um.eval_inputs(K), k=K, metrics=["p"], block_rows=7, nthreads=1)
    bases = {id(b.base if b.base is not None else b) for b in model.buffers}
    assert len(model.buffers) == 9 and len(bases) == 1  # 60 users in blocks of 7


def test_no_extra_users_by_items_block_is_allocated():
    m, n = 1000, 500
    rng = np.random.default_rng(3)
    train = sp.csr_array((rng.random((m, n)) < 0.02).astype(np.float64))
    A, B = rng.standard_normal((m, 4)), rng.standard_normal((n, 4))
    users = np.arange(m, dtype=np.int64)
    buf = np.empty((m, n))  # the engine's block buffer

    def peak(model):
        um = UserModel(model)
        um.fit(train)
        source = um.eval_inputs(K)["scorer"]
        tracemalloc.start()
        try:
            source.block(users, buf)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    block_bytes = m * n * 8
    assert peak(Plain(A, B)) >= block_bytes  # the model's own array, copied into the buffer
    assert peak(IntoOut(A, B)) < 0.1 * block_bytes  # A[users] (m x 4) only


def test_a_scorer_without_out_is_called_as_before():
    calls = []

    def scorer(users):
        calls.append(len(users))
        return np.ones((len(users), 3))

    src = CallableScores(scorer, 3)
    assert src.accepts_out is False
    buf = np.zeros((2, 3))
    assert np.array_equal(src.block(np.arange(2), buf), np.ones((2, 3)))
    assert calls == [2]
    assert CallableScores(lambda users, out=None: out, 3).accepts_out is True
    assert CallableScores(lambda users, **kw: None, 3).accepts_out is False


class MeetsAnother(IntoOut):
    """Declared thread-safe; its first two block calls each wait (up to 10 s) for the other to
    be under way, which only happens when the engine calls it from two threads at once."""

    score_users_thread_safe = True

    def __init__(self, A, B):
        super().__init__(A, B)
        self.armed = False
        self.meet = threading.Barrier(2, timeout=10)
        self.met = 0
        self.threads = set()

    def score_users(self, user_indices, out=None):
        if self.armed:
            self.threads.add(threading.get_ident())
            if self.met < 2:
                self.met += 1
                self.meet.wait()  # BrokenBarrierError after 10 s alone
        return super().score_users(user_indices, out=out)


@pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="two threads at once need two cores for numba"
)
def test_a_thread_safe_model_is_called_from_every_thread_with_the_same_values():
    train, test, A, B = _data()
    plain = _eval(Plain(A, B), train, test, block_rows=7, nthreads=1)
    model = MeetsAnother(A, B)
    um = UserModel(model)
    um.fit(train)
    inputs = um.eval_inputs(K)  # its probe, in this thread
    assert inputs["scorer"].thread_safe is True
    model.armed = True
    got = evaluate(
        train, test, **inputs, k=K, ties="index", metrics=METRICS, block_rows=7, nthreads=2
    )
    assert len(model.threads) == 2 and len(model.buffers) == 9  # 60 users in blocks of 7
    for col in plain.per_user.columns:
        np.testing.assert_array_equal(got.per_user[col].to_numpy(), plain.per_user[col].to_numpy())
    # a model that does not say so is never called twice at once
    assert UserModel(IntoOut(A, B)).fit(train).eval_inputs(K)["scorer"].thread_safe is False


def test_a_thread_safety_that_is_not_a_bool_is_refused_naming_it():
    train, test, A, B = _data()
    model = IntoOut(A, B)
    model.score_users_thread_safe = "yes"
    with pytest.raises(ModelProtocolError) as err:
        UserModel(model).fit(train).eval_inputs(K)
    text = str(err.value)
    assert "IntoOut.score_users_thread_safe" in text and "True or False" in text
    assert "Got 'yes' instead" in text
