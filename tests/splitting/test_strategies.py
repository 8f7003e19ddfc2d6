"""Split invariants on real and synthetic data (hypothesis), and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_paths import shared_file

from recoeval_tracking import InputError
from recoeval_tracking.data import from_dataframe, load_movielens_100k, make_synthetic
from recoeval_tracking.splitting import (
    SPLITS,
    kfold,
    leave_n_out,
    leave_one_out,
    make_split,
    random_holdout,
    temporal_global,
    temporal_user,
    user_kfold,
)

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pairs(X):
    """Set of (row, col, value, timestamp) of the stored entries."""
    rows = X.row_of_entries()
    ts = X.timestamps.data if X.timestamps is not None else np.zeros(X.nnz, np.int64)
    return set(zip(rows.tolist(), X.matrix.indices.tolist(), X.matrix.data.tolist(), ts.tolist()))


def _check_partition(X, s):
    parts = [s.train, s.test] + ([s.validation] if s.validation is not None else [])
    for p in parts:
        assert p.shape == X.shape
        assert p.user_ids is X.user_ids and p.item_ids is X.item_ids
        assert p.matrix.has_canonical_format
    sets = [_pairs(p) for p in parts]
    assert sum(len(x) for x in sets) == X.nnz
    assert set().union(*sets) == _pairs(X)
    for a in range(len(sets)):
        for b in range(a + 1, len(sets)):
            assert not (sets[a] & sets[b])
    n = s.per_user
    assert n["user_id"].tolist() == X.user_ids.tolist()
    assert (
        n["n_train"] + n["n_test"] + n.get("n_validation", 0)
    ).tolist() == X.user_counts().tolist()


@st.composite
def small_data(draw):
    n_users = draw(st.integers(2, 25))
    n_items = draw(st.integers(2, 15))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    dense = rng.random((n_users, n_items)) < draw(st.floats(0.1, 0.9))
    dense[rng.integers(0, n_users), :] = True  # at least one active user
    u, i = np.nonzero(dense)
    ts = rng.integers(0, 20, u.shape[0])  # few values: plenty of ties
    return from_dataframe(
        pd.DataFrame(
            {"user": u * 7, "item": i, "value": rng.random(u.shape[0]) + 1, "timestamp": ts}
        )
    )


@SETTINGS
@given(X=small_data(), frac=st.floats(0.05, 0.95), seed=st.integers(0, 2**31))
def test_random_holdout_sizes_and_partition(X, frac, seed):
    s = random_holdout(X, frac, min_train=0, seed=seed) if _any_test(X, frac) else None
    if s is None:
        return
    _check_partition(X, s)
    n = X.user_counts()
    # recometrics rounding: round(n * f) with halves up (std::round)
    expected = [int(np.floor(k * frac)) + (k * frac - np.floor(k * frac) >= 0.5) for k in n]
    assert s.per_user["n_test"].tolist() == expected


def _any_test(X, frac):
    n = X.user_counts()
    return any(int(np.floor(k * frac)) + (k * frac - np.floor(k * frac) >= 0.5) > 0 for k in n)


@SETTINGS
@given(X=small_data(), seed=st.integers(0, 2**31))
def test_seed_reproducible_and_sensitive(X, seed):
    for name, params in [
        ("random", {"test_fraction": 0.5}),
        ("leave_one_out", {}),
        ("temporal_user", {"test_fraction": 0.5}),
    ]:
        try:
            a = make_split(name, X, seed=seed, **params)
        except InputError:
            continue
        b = make_split(name, X, seed=seed, **params)
        assert a.fingerprint == b.fingerprint
        assert _pairs(a.test) == _pairs(b.test)


def test_different_seed_different_split():
    X = make_synthetic(200, 100, 3000, seed=1)
    fps = {random_holdout(X, 0.3, seed=s).fingerprint for s in range(5)}
    assert len(fps) == 5
    tests = {frozenset(_pairs(leave_one_out(X, seed=s).test)) for s in range(3)}
    assert len(tests) == 3


@SETTINGS
@given(X=small_data(), seed=st.integers(0, 2**31), n=st.integers(1, 3))
def test_leave_n_out_latest_is_temporal(X, seed, n):
    try:
        s = leave_n_out(X, n, order="latest", min_train=1, seed=seed)
    except InputError:
        return
    _check_partition(X, s)
    counts = X.user_counts()
    assert s.per_user["n_test"].tolist() == np.minimum(n, np.maximum(counts - 1, 0)).tolist()
    _check_user_temporal(s)


def _check_user_temporal(s):
    tr, te = s.train, s.test
    for u in range(tr.n_users):
        a = tr.timestamps.data[tr.matrix.indptr[u] : tr.matrix.indptr[u + 1]]
        b = te.timestamps.data[te.matrix.indptr[u] : te.matrix.indptr[u + 1]]
        if a.size and b.size:
            assert b.min() >= a.max()


@SETTINGS
@given(X=small_data(), seed=st.integers(0, 2**31), frac=st.floats(0.1, 0.9))
def test_temporal_user_never_tests_before_train(X, seed, frac):
    try:
        s = temporal_user(X, frac, seed=seed)
    except InputError:
        return
    _check_partition(X, s)
    _check_user_temporal(s)


@SETTINGS
@given(X=small_data(), q=st.floats(0.05, 0.95))
def test_temporal_global_cut(X, q):
    try:
        s = temporal_global(X, quantile=q)
    except InputError:
        return
    _check_partition(X, s)
    cut = s.params["cut"]
    assert s.train.nnz == 0 or s.train.timestamps.data.max() < cut
    assert s.test.timestamps.data.min() >= cut


def test_temporal_global_with_validation_on_movielens():
    X = load_movielens_100k(shared_file("ml-100k", "u.data"))
    s = temporal_global(X, quantile=0.9, validation_quantile=0.8)
    _check_partition(X, s)
    ts = X.timestamps.data
    assert (
        s.train.timestamps.data.max()
        < s.params["validation_cut"]
        <= s.validation.timestamps.data.min()
    )
    assert s.validation.timestamps.data.max() < s.params["cut"] <= s.test.timestamps.data.min()
    assert s.test.nnz == np.count_nonzero(ts >= np.quantile(ts, 0.9, method="higher"))


@SETTINGS
@given(X=small_data(), seed=st.integers(0, 2**31), k=st.integers(2, 5))
def test_kfold_partitions_each_user(X, seed, k):
    folds = kfold(X, k, seed=seed)
    assert len(folds) == k
    tests = [_pairs(f.test) for f in folds]
    assert sum(len(t) for t in tests) == X.nnz and set().union(*tests) == _pairs(X)
    for f in folds:
        _check_partition(X, f)
    sizes = np.array([f.per_user["n_test"].to_numpy() for f in folds])
    assert np.all(sizes.max(0) - sizes.min(0) <= 1)


def test_user_kfold_partitions_users():
    X = make_synthetic(100, 60, 1500, seed=2)
    folds = user_kfold(X, 4, test_fraction=0.3, seed=5)
    test_users = [set(f.test_users.tolist()) for f in folds]
    assert set().union(*test_users) <= set(range(100))
    for a in range(4):
        for b in range(a + 1, 4):
            assert not (test_users[a] & test_users[b])
    for f in folds:
        _check_partition(X, f)


def test_random_holdout_validation_and_counts_on_movielens():
    X = load_movielens_100k(shared_file("ml-100k", "u.data"))
    s = random_holdout(X, test_count=5, validation_count=3, seed=9)
    _check_partition(X, s)
    assert (s.per_user["n_test"] == 5).all() and (s.per_user["n_validation"] == 3).all()
    assert s.test.nnz == 5 * 943


def test_registry_and_errors():
    assert set(SPLITS) == {
        "random",
        "leave_one_out",
        "leave_n_out",
        "temporal_global",
        "temporal_user",
        "kfold",
        "user_kfold",
        "recometrics",
    }
    X = make_synthetic(30, 20, 200, seed=0)
    with pytest.raises(InputError, match="'name' parameter of make_split"):
        make_split("bogus", X)
    with pytest.raises(InputError, match="leaves no test user"):
        leave_one_out(X, min_train=1000)
    with pytest.raises(InputError, match="'test_fraction' parameter of random_holdout"):
        random_holdout(X, 1.5)
    Y = from_dataframe(pd.DataFrame({"user": [1, 2], "item": [1, 2]}))
    with pytest.raises(InputError, match="with timestamps"):
        temporal_user(Y)
    with pytest.raises(InputError, match="'interactions' parameter of kfold"):
        kfold(X.matrix)


@pytest.mark.parametrize("name", ["random", "leave_one_out", "kfold", "temporal_global"])
def test_an_unknown_parameter_is_refused_naming_the_known_ones(name):
    X = make_synthetic(n_users=40, n_items=30, n_interactions=400, seed=0)
    with pytest.raises(InputError) as err:
        make_split(name, X, test_fractoin=0.2)  # a typo of a real parameter
    text = str(err.value)
    assert f"make_split({name!r})" in text and "Got 'test_fractoin' instead" in text
    assert "seed" in text  # the parameters it does take are listed
