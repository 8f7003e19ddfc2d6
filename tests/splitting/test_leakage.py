"""How much a split lets training see the future: :func:`measure_leakage` and its line.

Expected values come from the definitions (strict inequalities; the users measured are those with
both evaluated and training entries; the test phase trains on train + validation), on small
hand-built splits and, as a property, against a slow pure-Python reference on random ones.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_paths import shared_file

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.data import from_dataframe, load_movielens_100k
from recoeval_tracking.splitting import (
    TEST,
    TRAIN,
    VALIDATION,
    leakage_line,
    measure_leakage,
    split_from_parts,
)

PART = {"train": TRAIN, "test": TEST, "validation": VALIDATION}


def hand_split(entries: list[tuple[str, int, int, str]]) -> rt.Split:
    """A split of ``(user, item, timestamp, part)`` entries, each in the part named."""
    df = pd.DataFrame(entries, columns=["user", "item", "timestamp", "part"])
    X = from_dataframe(df.assign(value=1.0)[["user", "item", "value", "timestamp"]])
    rows = X.user_index(df["user"].to_numpy())
    cols = X.item_index(df["item"].to_numpy())
    label = dict(zip(zip(rows.tolist(), cols.tolist()), df["part"].map(PART)))
    keys = zip(X.row_of_entries().tolist(), X.matrix.indices.tolist())
    part = np.array([label[k] for k in keys], dtype=np.int8)
    return split_from_parts(X, part, "hand", {})


def three_phases(b_train_at: int) -> rt.Split:
    """Two users with an entry in each part: a trains at 1, validates at 50 and is tested at
    30; b trains at ``b_train_at``, validates at 5 and is tested at 40."""
    return hand_split(
        [
            ("a", 0, 1, "train"),
            ("a", 1, 50, "validation"),
            ("a", 2, 30, "test"),
            ("b", 3, b_train_at, "train"),
            ("b", 4, 5, "validation"),
            ("b", 5, 40, "test"),
        ]
    )


# ------------------------------------------------------------------ the slow reference
def _entries(X: rt.Interactions) -> list[tuple[int, int]]:
    """(row, timestamp) of every entry, from plain Python lists."""
    assert X.timestamps is not None
    return list(zip(X.row_of_entries().tolist(), X.timestamps.data.tolist()))


def reference_phase(training: list[rt.Interactions], evaluated: rt.Interactions) -> dict:
    """The definitions, one entry and one user at a time."""
    train = [e for part in training for e in _entries(part)]
    evaluated_entries = _entries(evaluated)
    newest = max((t for _, t in train), default=None)
    older = sum(1 for _, t in evaluated_entries if newest is not None and t < newest)
    newest_of: dict[int, int] = {}
    for u, t in train:
        newest_of[u] = max(newest_of.get(u, t), t)
    first_of: dict[int, int] = {}
    for u, t in evaluated_entries:
        first_of[u] = min(first_of.get(u, t), t)
    measured = [u for u in first_of if u in newest_of]
    leaking = [u for u in measured if newest_of[u] > first_of[u]]
    n = len(evaluated_entries)
    return {
        "entries": n,
        "entries_older": older,
        "entries_share": older / n if n else None,
        "newest_training": newest,
        "users": len(measured),
        "users_leaking": len(leaking),
        "users_share": len(leaking) / len(measured) if measured else None,
        "users_without_training": len(first_of) - len(measured),
    }


def reference(split: rt.Split) -> dict:
    out = {}
    if split.validation is not None and split.validation.nnz:
        out["test"] = reference_phase([split.train, split.validation], split.test)
        out["validation"] = reference_phase([split.train], split.validation)
    else:
        out["test"] = reference_phase([split.train], split.test)
    return out


def figures(record: dict) -> dict:
    """The record without its labels (what the reference computes)."""
    return {
        part: {k: v for k, v in record[part].items() if k != "training"}
        for part in ("test", "validation")
        if part in record
    }


# ------------------------------------------------------------------ hand-built examples
def test_older_and_newer_are_strict():
    split = hand_split(
        [
            ("a", 0, 10, "train"),
            ("a", 1, 20, "test"),  # as old as the newest training entry: no leak
            ("b", 2, 20, "train"),  # the newest training entry
            ("b", 3, 19, "test"),  # one second older: a leak, entry and user
            ("c", 4, 20, "train"),
            ("c", 5, 20, "test"),  # tied with its own training: no leak either way
            ("c", 6, 25, "test"),
        ]
    )
    got = measure_leakage(split)
    assert got is not None
    test = got["test"]
    assert test["entries"] == 4 and test["entries_older"] == 1
    assert test["entries_share"] == 0.25
    assert test["newest_training"] == 20
    assert test["users"] == 3 and test["users_leaking"] == 1
    assert test["users_share"] == pytest.approx(1 / 3)
    assert test["training"] == "train" and "validation" not in got
    assert got["split_fingerprint"] == split.fingerprint


def test_users_compare_their_newest_training_with_their_first_evaluated_entry():
    split = hand_split(
        [
            ("early", 0, 15, "train"),  # newer than the first test entry (10), older than the
            ("early", 1, 10, "test"),  # last (30): a leak (the first test entry decides)
            ("early", 2, 30, "test"),
            ("span", 3, 5, "train"),  # the oldest training entry is before the test entry,
            ("span", 4, 40, "train"),  # the newest after it: a leak (the newest decides)
            ("span", 5, 30, "test"),
            ("clean", 6, 1, "train"),
            ("clean", 7, 2, "test"),
            ("cold", 8, 3, "test"),  # no training entry: not measured, counted apart
            ("cold", 9, 50, "test"),
            ("trained", 0, 60, "train"),  # no test entry: not measured
        ]
    )
    test = measure_leakage(split)["test"]
    assert test["users"] == 3 and test["users_leaking"] == 2
    assert test["users_without_training"] == 1
    # the entries: the newest training entry is 60, so every test entry is older
    assert test["entries"] == 6 and test["entries_older"] == 6 and test["entries_share"] == 1.0


def test_the_test_phase_trains_on_train_and_validation():
    split = three_phases(b_train_at=2)
    got = measure_leakage(split)
    # test: training holds a's validation entry at 50, newer than both test entries and than
    # a's first test entry; b's training (2, 5) is older than b's test entry
    assert got["test"]["training"] == "train + validation"
    assert got["test"]["newest_training"] == 50
    assert (got["test"]["entries_older"], got["test"]["users_leaking"]) == (2, 1)
    assert got["test"]["users"] == 2
    # validation: training is train alone (1, 2), older than every validation entry
    assert got["validation"]["training"] == "train"
    assert got["validation"]["newest_training"] == 2
    assert (got["validation"]["entries_older"], got["validation"]["users_leaking"]) == (0, 0)
    assert got["validation"]["entries_share"] == 0.0 and got["validation"]["users_share"] == 0.0


def test_the_phase_views_measure_what_they_evaluate():
    split = three_phases(b_train_at=60)
    whole = measure_leakage(split)
    on_validation = measure_leakage(split.validation_split())
    on_test = measure_leakage(split.test_split())
    assert set(on_validation) == {"split_fingerprint", "validation"}
    assert on_validation["validation"] == whole["validation"]
    assert set(on_test) == {"split_fingerprint", "test"}
    assert on_test["test"] == whole["test"]


def test_negative_timestamps_and_users_without_any_training():
    split = hand_split(
        [
            ("a", 0, -100, "train"),
            ("a", 1, -200, "test"),
            ("b", 2, -50, "test"),
        ]
    )
    test = measure_leakage(split)["test"]
    assert test["newest_training"] == -100
    assert (test["entries_older"], test["users"], test["users_leaking"]) == (1, 1, 1)
    assert test["users_without_training"] == 1


def test_no_training_entry_at_all():
    split = hand_split([("a", 0, 5, "test"), ("b", 1, 6, "test")])
    test = measure_leakage(split)["test"]
    assert test["newest_training"] is None and test["entries_older"] == 0
    assert test["users"] == 0 and test["users_share"] is None
    assert test["entries_share"] == 0.0 and test["users_without_training"] == 2
    assert leakage_line(measure_leakage(split)).startswith("no leakage")
    # entries older than another user's training, and no user measured
    split = hand_split([("a", 0, 10, "train"), ("b", 1, 5, "test")])
    test = measure_leakage(split)["test"]
    assert (test["entries_older"], test["users"], test["users_share"]) == (1, 0, None)
    assert "100.0% of test entries" in leakage_line(measure_leakage(split))
    assert "n/a of test users" in leakage_line(measure_leakage(split))


def test_data_without_timestamps_is_not_measured():
    X = from_dataframe(
        pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 3], "value": [1.0] * 4})
    )
    split = rt.make_split("random", X, test_fraction=0.5, seed=0)
    assert measure_leakage(split) is None
    assert leakage_line(None) == "leakage: not measured (the data has no timestamps)"


@pytest.mark.parametrize("bad", [None, "split", {"train": 1}])
def test_a_bad_split_is_named(bad):
    with pytest.raises(InputError, match=r"'split' parameter of measure_leakage.*Split"):
        measure_leakage(bad)


def test_a_bad_record_is_named():
    with pytest.raises(InputError, match=r"'record' parameter of leakage_line"):
        leakage_line(["test"])


# ------------------------------------------------------------------ the line
def test_line_says_how_much_leaks():
    record = {
        "test": {
            "entries_share": 0.413,
            "entries_older": 413,
            "users_share": 0.88,
            "users_leaking": 88,
        }
    }
    assert leakage_line(record) == (
        "leakage: 41.3% of test entries are older than the newest training entry; "
        "88.0% of test users have training entries newer than their first test entry"
    )
    record["validation"] = {
        "entries_share": 0.2,
        "entries_older": 2,
        "users_share": 0.0,
        "users_leaking": 0,
    }
    assert leakage_line(record).endswith("; validation: 20.0% of entries, 0.0% of users")


def test_line_never_rounds_a_leak_to_none_or_to_all():
    record = {
        "test": {
            "entries_share": 19_999 / 20_000,
            "entries_older": 19_999,
            "users_share": 1 / 100_000,
            "users_leaking": 1,
        }
    }
    line = leakage_line(record)
    assert "99.995% of test entries" in line and "0.001% of test users" in line


def test_line_without_leakage():
    record = {
        "test": {"entries_share": 0.0, "entries_older": 0, "users_share": 0.0, "users_leaking": 0}
    }
    assert leakage_line(record).startswith("no leakage: no test entry is older")


# ------------------------------------------------------------------ against the reference
@st.composite
def random_splits(draw) -> rt.Split:
    n_users = draw(st.integers(1, 8))
    n_items = draw(st.integers(1, 8))
    cells = draw(
        st.lists(
            st.tuples(st.integers(0, n_users - 1), st.integers(0, n_items - 1)),
            min_size=1,
            max_size=40,
            unique=True,
        )
    )
    with_validation = draw(st.booleans())
    parts = ["train", "test", "validation"] if with_validation else ["train", "test"]
    entries = [
        (f"u{u}", i, draw(st.integers(-3, 3)), draw(st.sampled_from(parts))) for u, i in cells
    ]
    if not any(p == "test" for *_, p in entries):
        entries[0] = (*entries[0][:3], "test")
    return hand_split(entries)


@given(random_splits())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_matches_the_slow_reference(split):
    assert figures(measure_leakage(split)) == reference(split)


@pytest.mark.parametrize(
    "name, params",
    [
        ("random", {"test_fraction": 0.3, "validation_fraction": 0.2}),
        ("leave_one_out", {"order": "latest", "validation": True}),
        ("temporal_user", {"test_fraction": 0.4}),
        ("kfold", {"n_folds": 3}),
    ],
)
def test_strategies_match_the_slow_reference(name, params):
    X = rt.make_synthetic(n_users=80, n_items=40, n_interactions=900, seed=1)
    out = rt.make_split(name, X, seed=2, **params)
    for split in out if isinstance(out, list) else [out]:
        assert figures(measure_leakage(split)) == reference(split)


# ------------------------------------------------------------------ what strategies give
def test_a_temporal_global_split_does_not_leak():
    X = rt.make_synthetic(n_users=200, n_items=60, n_interactions=4000, seed=3)
    split = rt.make_split("temporal_global", X, quantile=0.8, validation_quantile=0.6)
    got = measure_leakage(split)
    for part in ("test", "validation"):
        assert got[part]["entries"] > 0 and got[part]["users"] > 0
        assert got[part]["entries_share"] == 0.0 and got[part]["users_share"] == 0.0
    assert leakage_line(got).startswith("no leakage")


def test_leave_last_out_leaks_across_users_only():
    X = load_movielens_100k(shared_file("ml-100k", "u.data"))
    split = rt.make_split("leave_one_out", X, order="latest", seed=0)
    test = measure_leakage(split)["test"]
    assert test["users_share"] == 0.0 and test["users"] == X.n_users
    assert test["entries_share"] > 0.5


def test_a_random_split_of_movielens_100k_leaks():
    X = load_movielens_100k(shared_file("ml-100k", "u.data"))
    split = rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.1, seed=0)
    got = measure_leakage(split)
    assert figures(got) == reference(split)
    for part in ("test", "validation"):
        assert got[part]["entries_share"] > 0.5 and got[part]["users_share"] > 0.5
    assert leakage_line(got).startswith("leakage: ")


def test_a_million_entries_take_well_under_a_second():
    X = rt.make_synthetic(n_users=6000, n_items=3000, n_interactions=1_000_000, seed=0)
    split = rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.1, seed=0)
    measure_leakage(split)  # first call: imports
    start = time.perf_counter()
    measure_leakage(split)
    assert time.perf_counter() - start < 0.5
