"""A user's ``score_users`` runs one block ahead of the evaluation: block ``i + 1`` is scored
while block ``i``'s users are evaluated, never two calls at once, with the same values as when
the blocks are scored in turn, and the model's exception reaches the caller unchanged."""

from __future__ import annotations

import threading

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import evaluate
from recoeval_tracking.models import UserModel
from recoeval_tracking.models._user import ModelCodeError

K = 5
METRICS = ["p", "r", "ndcg", "ap", "roc_auc", "rr"]


def _data(m: int = 60, n: int = 40):
    rng = np.random.default_rng(7)
    cells = rng.random((m, n))
    train = sp.csr_array((cells < 0.15).astype(np.float64))
    test = sp.csr_array((cells > 0.9).astype(np.float64))
    return train, test, rng.standard_normal((m, 4)), rng.standard_normal((n, 4))


class Recording:
    """Scores ``A[users] @ B.T``, noting each call's first user, its thread and how many calls
    ran at once."""

    def __init__(self, A, B, fail_at=None):
        self.A, self.B, self.fail_at = A, B, fail_at
        self.first_users, self.threads = [], set()
        self.running = self.most_at_once = 0
        self.lock = threading.Lock()
        self.called = threading.Condition(self.lock)

    def fit(self, train):
        return self

    def forget(self):
        """Drops what the calls before the evaluation noted (fit's probe of one user)."""
        self.first_users.clear()
        self.threads.clear()

    def score_users(self, user_indices):
        with self.lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.first_users.append(int(user_indices[0]))
            self.threads.add(threading.current_thread().name)
            self.called.notify_all()
        try:
            if self.fail_at is not None and self.fail_at in user_indices:
                raise KeyError(f"no scores for user {self.fail_at}")
            return self.A[user_indices] @ self.B.T
        finally:
            with self.lock:
                self.running -= 1


def _run(model, train, test, **kw):
    um = UserModel(model)
    um.fit(train)
    inputs = um.eval_inputs(K)
    model.forget()  # the calls of the evaluation alone
    return evaluate(train, test, **inputs, k=K, ties="index", metrics=METRICS, **kw)


def _blocks(train, test, A, B):
    """The first user of each block the engine scores (blocks of 7, in turn)."""
    model = Recording(A, B)
    _run(model, train, test, block_rows=7, nthreads=1)
    return list(model.first_users)


def test_the_next_block_is_scored_while_this_one_is_evaluated():
    train, test, A, B = _data()
    blocks = _blocks(train, test, A, B)
    assert len(blocks) > 3
    model = Recording(A, B)
    seen_ahead = []

    def progress(n):  # called once a block is evaluated: by then the next one was asked for
        with model.lock:
            evaluated = len(seen_ahead) + 1
            ahead = evaluated == len(blocks) or model.called.wait_for(
                lambda: len(model.first_users) > evaluated, timeout=10
            )
            seen_ahead.append(ahead)

    _run(model, train, test, block_rows=7, nthreads=2, progress=progress)
    assert model.first_users == blocks  # every block once, in order
    assert seen_ahead == [True] * len(blocks)
    assert model.most_at_once == 1  # never two calls at once
    assert threading.main_thread().name not in model.threads


def test_one_thread_scores_between_the_evaluations():
    train, test, A, B = _data()
    model = Recording(A, B)
    _run(model, train, test, block_rows=7, nthreads=1)
    assert model.threads == {threading.main_thread().name}
    assert len(model.first_users) > 3 and model.first_users == sorted(set(model.first_users))


@pytest.mark.parametrize("block_rows", [7, 25, None])
def test_values_are_those_of_the_factors(block_rows):
    train, test, A, B = _data()
    ahead = _run(Recording(A, B), train, test, block_rows=block_rows, nthreads=2)
    alone = _run(Recording(A, B), train, test, block_rows=block_rows, nthreads=1)
    direct = evaluate(train, test, A=A, B=B, k=K, ties="index", metrics=METRICS)
    for got in (ahead, alone):
        for column in direct.per_user.columns:
            assert got.per_user[column].equals(direct.per_user[column]), column


def test_the_models_exception_reaches_the_caller_with_its_name():
    train, test, A, B = _data()
    with pytest.raises(ModelCodeError, match=r"Recording\.score_users .*KeyError.*user 30") as e:
        _run(Recording(A, B, fail_at=30), train, test, block_rows=7, nthreads=2)
    assert isinstance(e.value.__cause__, KeyError)


class BlasThreads(Recording):
    """Notes how many threads BLAS may use while each block is scored."""

    def __init__(self, A, B):
        super().__init__(A, B)
        self.blas = []

    def forget(self):
        super().forget()
        self.blas.clear()

    def score_users(self, user_indices):
        from threadpoolctl import threadpool_info

        self.blas.append({d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"})
        return super().score_users(user_indices)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two threads")
def test_the_models_blas_gets_every_thread():
    """The model's own GEMM runs on every thread of the evaluation (on one, it took twice the
    time of the factors path), one block ahead of the evaluation as before."""
    from threadpoolctl import threadpool_limits

    train, test, A, B = _data()
    model = BlasThreads(A, B)
    with threadpool_limits(limits=1, user_api="blas"):  # as an earlier test may leave it
        _run(model, train, test, block_rows=7, nthreads=2)
    assert len(model.blas) > 3 and all(seen == {2} for seen in model.blas), model.blas
    assert threading.main_thread().name not in model.threads and model.most_at_once == 1


_LATE_BLAS = """
import numpy as np, scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits
from recoeval_tracking import evaluate
from recoeval_tracking.models import UserModel

def blas_threads():
    return {d["filepath"]: d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"}

class Model:
    def __init__(self, A, B, thread_safe):
        self.A, self.B, self.seen = A, B, []
        self.score_users_thread_safe = thread_safe
    def fit(self, train):
        return self
    def score_users(self, users):
        self.seen.append(set(blas_threads().values()))
        return self.A[users] @ self.B.T

rng = np.random.default_rng(7)
cells = rng.random((60, 40))
train = sp.csr_array((cells < 0.15).astype(np.float64))
test = sp.csr_array((cells > 0.9).astype(np.float64))
A, B = rng.standard_normal((60, 4)), rng.standard_normal((40, 4))
evaluate(train, test, A=A, B=B, k=5, metrics=["p"], nthreads=2)  # the engine looks at BLAS
import scipy.linalg.cython_blas  # scipy's own OpenBLAS, loaded by now
from recoeval_tracking.engine import driver
seen_first = {d["filepath"] for d in driver._CONTROLLER.info()}  # the engine's first look
assert set(blas_threads()) - seen_first, "no BLAS was loaded after the engine's first look"
threadpool_limits(limits=1, user_api="blas")  # every BLAS left at one thread, not restored
for thread_safe, expected in ((False, {2}), (True, {1})):
    model = Model(A, B, thread_safe)
    um = UserModel(model)
    um.fit(train)
    inputs = um.eval_inputs(5)
    model.seen.clear()  # the evaluation's calls alone
    evaluate(train, test, **inputs, k=5, metrics=["p"], nthreads=2, block_rows=7)
    assert model.seen and all(s == expected for s in model.seen), (thread_safe, model.seen)
print("ok")
"""


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two threads")
def test_a_blas_loaded_after_the_first_evaluation_gets_the_engines_limits():
    """The engine's thread limits reach a BLAS library loaded after its first evaluation (scipy's
    own OpenBLAS, loaded by ``scipy.linalg``): every thread for a model called in turn, one for
    a model whose blocks run on the engine's threads. A fresh process, so that the library is
    loaded late."""
    from ._process import run_python

    proc = run_python(["-c", _LATE_BLAS], timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
