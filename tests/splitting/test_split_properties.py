"""Properties every split strategy of ``recoeval_tracking.SPLITS`` keeps, strategy by strategy.

* the same seed gives the same split, another seed another split (the global temporal cut is the
  one deterministic strategy: it documents that its seed is unused);
* train, test (and validation) are disjoint and together hold every input entry once, with its
  value and timestamp;
* k-fold: each entry is in exactly one test fold; per user, fold sizes differ by at most one;
  over users, the folds that get the odd entries are spread (dealing always from fold 0 piles
  them on the first folds);
* user k-fold: each user is tested in one fold; the groups of users differ in size by at most
  one, are drawn at random (not blocks, nor every n-th user) and change with the seed;
* temporal strategies never put a test entry before a train entry (globally, or per user).

The data have few distinct timestamps, so ties at the temporal boundaries are common (that is
where a per-user temporal split uses its seed), and many users with fewer entries than folds.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoeval_tracking as rt
from recoeval_tracking.data import from_dataframe

N_FOLDS = 4

#: Every registered strategy with parameters that make a non-trivial split of the data below.
PARAMS: dict[str, dict] = {
    "random": {"test_fraction": 0.3},
    "leave_one_out": {"order": "random"},
    "leave_n_out": {"n": 2, "order": "latest", "validation_n": 1},
    "temporal_global": {"quantile": 0.7, "validation_quantile": 0.4},
    "temporal_user": {"test_fraction": 0.4},
    "kfold": {"n_folds": N_FOLDS},
    "user_kfold": {"n_folds": N_FOLDS, "test_count": 1, "min_train": 0},
    "recometrics": {
        "users_test_fraction": 0.5,
        "items_test_fraction": 0.4,
        "max_test_users": None,
        "min_items_pool": 1,
    },
}
#: More parameter sets for the parts the first ones leave out (validation, latest order).
EXTRA: list[tuple[str, dict]] = [
    ("random", {"test_fraction": 0.25, "validation_fraction": 0.25}),
    ("leave_one_out", {"order": "latest", "validation": True}),
    ("leave_n_out", {"n": 3, "order": "random"}),
    ("temporal_user", {"test_count": 2, "min_train": 0}),
    ("user_kfold", {"n_folds": 3, "test_fraction": 0.5}),
]
ALL_PARAMS = list(PARAMS.items()) + EXTRA
#: Strategies documented as deterministic (their seed is accepted and unused).
SEEDLESS = {"temporal_global"}
TEMPORAL = {"temporal_global", "temporal_user"}


def test_every_registered_strategy_is_covered():
    assert set(PARAMS) == set(rt.SPLITS)


def make_data(seed: int, n_users: int = 150, n_items: int = 40) -> rt.Interactions:
    """Users with 1 to 14 entries (many with fewer than N_FOLDS), values 1..5, timestamps from a
    handful of values (ties everywhere)."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        n_u = int(rng.choice([1, 1, 2, 3, 5, 8, 14]))
        items = rng.choice(n_items, size=n_u, replace=False)
        ts = rng.integers(0, 6, n_u) * 100
        rows += [
            (f"u{u:03d}", int(i), float(rng.integers(1, 6)), int(t)) for i, t in zip(items, ts)
        ]
    df = pd.DataFrame(rows, columns=["user", "item", "value", "timestamp"])
    return from_dataframe(df)


def _entries(X: rt.Interactions) -> list[tuple]:
    """(row, col, value, timestamp) of every stored entry."""
    rows = X.row_of_entries()
    ts = X.timestamps.data if X.timestamps is not None else np.zeros(X.nnz, np.int64)
    return list(zip(rows.tolist(), X.matrix.indices.tolist(), X.matrix.data.tolist(), ts.tolist()))


def _splits(name: str, X, seed: int, params: dict) -> list:
    out = rt.make_split(name, X, seed=seed, **params)
    return out if isinstance(out, list) else [out]


def _parts(split) -> list:
    return [split.train, split.test] + ([split.validation] if split.validation is not None else [])


def _labels(split, X) -> dict[tuple, int]:
    """Which part (0 train, 1 test, 2 validation) holds each entry."""
    out = {}
    for p, part in enumerate(_parts(split)):
        for e in _entries(part):
            out[e[:2]] = p
    return out


def _expects_validation(params: dict) -> bool:
    return bool(
        params.get("validation")
        or params.get("validation_n")
        or params.get("validation_fraction")
        or params.get("validation_quantile")
    )


@pytest.fixture(scope="module")
def data() -> rt.Interactions:
    return make_data(7)


@pytest.mark.parametrize(
    "name, params", ALL_PARAMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ALL_PARAMS)]
)
def test_parts_are_disjoint_and_cover_the_input(name, params, data):
    everything = Counter(_entries(data))
    for split in _splits(name, data, 3, params):
        parts = _parts(split)
        for part in parts:
            assert part.shape == data.shape
            assert part.user_ids is data.user_ids and part.item_ids is data.item_ids
        union = Counter()
        for part in parts:
            union.update(_entries(part))
        assert union == everything, f"{name} {params}: the parts do not partition the input"
        assert split.test.nnz > 0
        if _expects_validation(params):
            assert split.validation is not None and split.validation.nnz > 0, name
        else:
            assert split.validation is None, name


@pytest.mark.parametrize(
    "name, params", ALL_PARAMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ALL_PARAMS)]
)
def test_same_seed_same_split_other_seed_other_split(name, params, data):
    one = _splits(name, data, 11, params)
    again = _splits(name, data, 11, params)
    other = _splits(name, data, 12, params)
    assert [s.fingerprint for s in one] == [s.fingerprint for s in again]
    assert [_labels(s, data) for s in one] == [_labels(s, data) for s in again]
    if name in SEEDLESS:
        assert [_labels(s, data) for s in one] == [_labels(s, data) for s in other]
    else:
        assert [_labels(s, data) for s in one] != [_labels(s, data) for s in other], (
            f"{name} {params} ignores its seed"
        )
        assert [s.fingerprint for s in one] != [s.fingerprint for s in other]


@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    data_seed=st.integers(0, 2**32 - 1), seed=st.integers(0, 2**31 - 1), n_folds=st.integers(2, 6)
)
def test_kfold_partitions_every_user_evenly(data_seed, seed, n_folds):
    X = make_data(data_seed, n_users=80)
    folds = rt.make_split("kfold", X, n_folds=n_folds, seed=seed)
    assert len(folds) == n_folds and [f.fold for f in folds] == list(range(n_folds))
    test_fold: dict[tuple, int] = {}
    for f, split in enumerate(folds):
        assert Counter(_entries(split.train)) + Counter(_entries(split.test)) == Counter(
            _entries(X)
        )
        for e in _entries(split.test):
            assert e[:2] not in test_fold, "an entry is in two test folds"
            test_fold[e[:2]] = f
    assert len(test_fold) == X.nnz  # every entry is tested once
    per_user = np.zeros((X.n_users, n_folds), dtype=int)
    for (u, _), f in test_fold.items():
        per_user[u, f] += 1
    counts = X.user_counts()
    active = counts > 0
    assert np.all(per_user.max(axis=1)[active] - per_user.min(axis=1)[active] <= 1)
    np.testing.assert_array_equal(per_user.sum(axis=1), counts)


def test_kfold_spreads_the_odd_entries_over_the_folds():
    """Users whose entry count is not a multiple of the folds give one fold an extra entry; with
    a random starting fold per user those extras spread evenly (sizes within a binomial
    margin). Dealing every user from fold 0 would give fold 0 all of them."""
    X = make_data(1, n_users=1200)
    folds = rt.make_split("kfold", X, n_folds=N_FOLDS, seed=5)
    counts = X.user_counts()
    extras = np.zeros(N_FOLDS)
    for f, split in enumerate(folds):
        per_user = split.test.user_counts()
        extras[f] = np.count_nonzero(per_user > counts // N_FOLDS)
    n_odd = np.count_nonzero(counts % N_FOLDS)
    assert extras.sum() == (counts % N_FOLDS).sum()
    mean = extras.sum() / N_FOLDS
    assert np.all(np.abs(extras - mean) < 5 * np.sqrt(mean)), (extras, n_odd)
    sizes = np.array([s.test.nnz for s in folds])
    assert sizes.max() - sizes.min() < 5 * np.sqrt(mean), sizes


def _user_groups(folds) -> np.ndarray:
    """The fold in which each user is tested (-1 if never)."""
    group = np.full(folds[0].test.n_users, -1)
    for f, split in enumerate(folds):
        tested = np.flatnonzero(split.test.user_counts() > 0)
        assert np.all(group[tested] == -1), "a user is tested in two folds"
        group[tested] = f
    return group


@pytest.mark.parametrize("n_folds", [2, 3, 4, 7])
def test_user_kfold_groups_are_random_balanced_and_seeded(n_folds, data):
    params = {"n_folds": n_folds, "test_count": 1, "min_train": 0}
    one = _user_groups(rt.make_split("user_kfold", data, seed=1, **params))
    active = np.flatnonzero(data.user_counts() > 0)
    assert np.all(one[active] >= 0), "an active user is never tested"
    sizes = np.bincount(one[active], minlength=n_folds)
    assert sizes.max() - sizes.min() <= 1, sizes
    idx = np.arange(active.size)
    # not contiguous blocks of user index, nor every n-th user
    assert np.any(np.diff(one[active]) < 0), "groups are blocks of consecutive users"
    assert not np.array_equal(one[active], idx % n_folds), "groups are every n-th user"
    assert not np.array_equal(one[active], np.sort(one[active]))
    other = _user_groups(rt.make_split("user_kfold", data, seed=2, **params))
    assert not np.array_equal(one, other), "the groups ignore the seed"
    # each fold's test users hold out exactly one entry and keep the rest in train
    for split in rt.make_split("user_kfold", data, seed=1, **params):
        tested = split.test.user_counts() > 0
        assert np.all(split.test.user_counts()[tested] == 1)
        np.testing.assert_array_equal(
            split.train.user_counts() + split.test.user_counts(), data.user_counts()
        )


def _times_by_user(X) -> list[np.ndarray]:
    ts = X.timestamps
    return [ts.data[ts.indptr[u] : ts.indptr[u + 1]] for u in range(X.n_users)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_temporal_splits_respect_time_order(seed, data):
    g = rt.make_split("temporal_global", data, seed=seed, **PARAMS["temporal_global"])
    tr, va, te = (g.train.timestamps.data, g.validation.timestamps.data, g.test.timestamps.data)
    assert tr.max() < va.min() and va.max() < te.min()  # train < validation cut <= ... < test cut
    assert te.min() == g.params["cut"] and va.min() >= g.params["validation_cut"]
    for name, params in (
        ("temporal_user", PARAMS["temporal_user"]),
        ("temporal_user", {"test_count": 2, "min_train": 0}),
        ("leave_n_out", PARAMS["leave_n_out"]),
        ("leave_one_out", {"order": "latest", "validation": True}),
    ):
        s = rt.make_split(name, data, seed=seed, **params)
        train = _times_by_user(s.train)
        test = _times_by_user(s.test)
        val = _times_by_user(s.validation) if s.validation is not None else None
        for u in range(data.n_users):
            a, b = train[u], test[u]
            if a.size and b.size:
                assert b.min() >= a.max(), f"{name} {params}: user {u} tests before train"
            if val is not None and val[u].size:
                c = val[u]
                assert not a.size or c.min() >= a.max(), f"{name}: validation before train"
                assert not b.size or b.min() >= c.max(), f"{name}: test before validation"


def test_per_user_temporal_ties_are_broken_by_the_seed():
    """All of one user's entries share a timestamp: which of them are the latest is the seed's
    choice, and the choice changes with it."""
    df = pd.DataFrame({"user": ["a"] * 12, "item": list(range(12)), "value": 1.0, "timestamp": 500})
    X = from_dataframe(df)
    picks = {
        frozenset(
            e[1] for e in _entries(rt.make_split("temporal_user", X, seed=s, test_count=3).test)
        )
        for s in range(6)
    }
    assert len(picks) > 1
    picks = {
        frozenset(
            e[1] for e in _entries(rt.make_split("leave_one_out", X, seed=s, order="latest").test)
        )
        for s in range(6)
    }
    assert len(picks) > 1
