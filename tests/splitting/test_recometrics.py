"""split_reco_train_test: exact agreement with recometrics when installed, documented
properties always, and the std::mt19937 generator against the C++ standard."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from shared_paths import shared_file

from recoeval_tracking import InputError
from recoeval_tracking.data import Interactions, load_movielens_100k, make_synthetic
from recoeval_tracking.splitting import make_split, recometrics_split, split_reco_train_test
from recoeval_tracking.splitting._recometrics import mt19937_outputs


def test_mt19937_matches_the_standard():
    # C++11 [rand.predef]: the 10000th output of a default-constructed mt19937 is 4123659995
    assert mt19937_outputs(5489, 10000)[-1] == 4123659995


def _same(a, b):
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return (
        a.shape == b.shape
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.data, b.data)
    )


CASES = [
    ("all", {}),
    ("separated", {}),
    ("joined", {}),
    (
        "separated",
        {
            "users_test_fraction": 0.3,
            "items_test_fraction": 0.5,
            "seed": 7,
            "consider_cold_start": True,
        },
    ),
    ("joined", {"users_test_fraction": None, "max_test_users": 900, "min_pos_test": 5, "seed": 3}),
    ("all", {"items_test_fraction": 0.25, "seed": 123}),
]


@pytest.mark.parametrize("split_type,kw", CASES)
def test_matches_recometrics_exactly(split_type, kw):
    recometrics = pytest.importorskip("recometrics")
    X = load_movielens_100k(shared_file("ml-100k", "u.data")).matrix
    ours = split_reco_train_test(X, split_type, **kw)
    theirs = recometrics.split_reco_train_test(sp.csr_matrix(X), split_type, **kw)
    assert len(ours) == len(theirs)
    assert all(_same(a, b) for a, b in zip(ours, theirs))


def test_matches_recometrics_on_float32_synthetic():
    recometrics = pytest.importorskip("recometrics")
    X = make_synthetic(3000, 400, 40_000, seed=3).matrix.astype(np.float32)
    for st in ("all", "separated", "joined"):
        ours = split_reco_train_test(X, st, users_test_fraction=0.2, seed=11)
        theirs = recometrics.split_reco_train_test(
            sp.csr_matrix(X), st, users_test_fraction=0.2, seed=11
        )
        assert all(_same(a, b) for a, b in zip(ours, theirs))
        assert ours[0].dtype == np.float32


def test_documented_properties():
    X = make_synthetic(500, 200, 8000, seed=5).matrix
    X_rem, X_train, X_test, users = split_reco_train_test(X, "separated", seed=2)
    assert users.dtype == np.int32 and np.all(np.diff(users) > 0)
    assert users.shape[0] == round(500 * 0.1)
    rem_rows = np.setdiff1d(np.arange(500), users)
    assert _same(X_rem, sp.csr_array(X[rem_rows]))
    n = np.diff(X.indptr)[users]
    expected_test = np.floor(n * 0.3) + (n * 0.3 - np.floor(n * 0.3) >= 0.5)
    assert np.diff(X_test.indptr).tolist() == expected_test.astype(int).tolist()
    assert np.all(np.diff(X_train.indptr) >= 1)  # no cold start by default
    assert _same(sp.csr_array(X_train + X_test), sp.csr_array(X[users]))
    assert (X_train.multiply(X_test)).nnz == 0
    Xj_train, Xj_test, users_j = split_reco_train_test(X, "joined", seed=2)
    assert np.array_equal(users_j, users) and _same(Xj_test, X_test)
    assert _same(Xj_train, sp.csr_array(sp.vstack([X_train, X_rem])))
    A_train, A_test = split_reco_train_test(X, "all", seed=2)
    assert A_train.shape == A_test.shape == X.shape
    assert _same(sp.csr_array(A_train + A_test), sp.csr_array(X))


def test_registry_split_keeps_shape_and_matches():
    Xi = make_synthetic(300, 150, 5000, seed=8)
    s = make_split("recometrics", Xi, users_test_fraction=0.2, seed=4)
    _, _, X_test, users = split_reco_train_test(
        Xi.matrix, "separated", users_test_fraction=0.2, seed=4
    )
    assert s.train.shape == s.test.shape == Xi.shape
    assert np.array_equal(s.test_users, users)
    assert _same(sp.csr_array(s.test.matrix[users]), X_test)
    assert s.train.nnz + s.test.nnz == Xi.nnz


def test_bad_input():
    X = sp.csr_array(np.eye(4))
    with pytest.raises(InputError, match="'split_type' parameter of split_reco_train_test"):
        split_reco_train_test(X, "mixed")
    with pytest.raises(InputError, match="'items_test_fraction'"):
        split_reco_train_test(X, items_test_fraction=1.0)
    with pytest.raises(InputError, match="'X' parameter"):
        split_reco_train_test(np.eye(4))
    # one entry per user and a 0.3 fraction: round(0.3) = 0 test items < min_pos_test
    with (
        pytest.raises(InputError, match="^split_reco_train_test: no user satisfies"),
        pytest.warns(UserWarning, match="implies <1"),
    ):
        split_reco_train_test(X, "separated")


def test_no_eligible_user_names_the_function_called():
    """The same draw behind both entry points: its error names the one the user called."""
    X = Interactions(sp.csr_array(np.eye(4)), np.arange(4), np.arange(4))
    with (
        pytest.raises(InputError, match="^recometrics_split: no user satisfies"),
        pytest.warns(UserWarning, match="implies <1"),
    ):
        recometrics_split(X, "separated")
