"""The executors' side without Spark: one shard's Arrow input evaluated by ``evaluate_table``
gives the rows of a local run over the same global rows (the users' own ids and items mapped
through the catalogue), a user without factor rows is NaN with reason ``nan_score``; a shard of
ranked lists counts what the driver's checks read (duplicate rows, two items at one rank, the
longest list, test users without a list), each by hand; and the module a worker imports to run
a task loads neither the engine nor pandas."""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import apply_profile
from recoeval_tracking.options import EvalOptions
from recoeval_tracking.scores import FactorScores
from recoeval_tracking.spark._shard import (
    CHECKS,
    KIND_FACTORS,
    KIND_LIST,
    KIND_TEST,
    KIND_TRAIN,
    STATS,
    ShardSpec,
    evaluate_cogroup,
    evaluate_table,
)

from ._python import fresh_python


def _rows(table):
    frame = table.to_pandas()
    return frame[frame[STATS].isna()].reset_index(drop=True), frame[frame[STATS].notna()]


def test_a_shard_of_factors_matches_the_local_rows_and_missing_factors_are_nan():
    rng = np.random.default_rng(2)
    m, n, p = 12, 9, 3
    test = (rng.random((m, n)) < 0.3).astype(np.float64)
    A = rng.integers(-1, 2, (m, p)).astype(np.float32)
    B = rng.integers(-1, 2, (n, p)).astype(np.float32)
    iid = np.arange(n) * 5 + 2  # item ids, numbered by the sorted catalogue
    lo, hi = 4, 12  # the second of two shards: global rows 4..11
    missing = 6  # this user has no factor row
    r, c = np.nonzero(test[lo:hi])
    inter = pa.table(
        {
            "user": 1000 + r + lo,
            "kind": pa.array(np.full(r.size, KIND_TEST), type=pa.int8()),
            "item": iid[c],
            "value": np.ones(r.size),
            "row": r + lo,
            "shard": pa.array(np.ones(r.size), type=pa.int32()),
        }
    )
    have = np.array([u for u in range(lo, hi) if u != missing])
    factors = pa.table(
        {
            "user": 1000 + have,
            "kind": pa.array(np.full(have.size, KIND_FACTORS), type=pa.int8()),
            "item": pa.nulls(have.size, type=pa.int64()),
            "value": np.zeros(have.size),
            "row": have,
            "shard": pa.array(np.ones(have.size), type=pa.int32()),
            "features": pa.array([A[u].tolist() for u in have], type=pa.list_(pa.float32())),
        }
    )
    opts = apply_profile(EvalOptions(k=3, metrics=["p", "ndcg"]).checked())
    shared = {
        "source": FactorScores(A[:0], B),
        "item_features": None,
        "popularity": (np.zeros(n, dtype=np.int64), 0),
        "items": pa.array(iid),
    }
    spec = ShardSpec(n, opts, 0, p, "float32", False, False, shared, np.array([0, lo, hi]))
    out = evaluate_cogroup(inter, factors, spec)
    rows, stats_row = _rows(out)
    A_nan = A.copy()
    A_nan[missing] = np.nan
    local = rt.evaluate(None, sp.csr_array(test), A=A_nan, B=B, k=3, metrics=["p", "ndcg"])
    want = local.per_user.iloc[lo:hi].reset_index(drop=True)
    assert list(rows["user_id"]) == list(1000 + np.arange(lo, hi))
    assert list(rows["nan_reason"]) == list(want["nan_reason"])
    for col in ("n_test", "p_at_3", "ndcg_at_3"):
        np.testing.assert_array_equal(rows[col].to_numpy(dtype=float), want[col].to_numpy())
    assert rows.loc[missing - lo, "nan_reason"] == "nan_score"
    stats = pickle.loads(stats_row[STATS].iloc[0])
    assert stats.index == 1 and stats.per_user.empty
    assert int(stats.moments["p_at_3"].n) == int((want["nan_reason"] == "").sum())
    tested = int((test[lo:hi].sum(axis=1) > 0).sum())  # test users of the shard
    assert test[missing].any()  # user 6 is one of them, without factors
    assert getattr(stats, CHECKS).unlisted == (1, tested, [1000 + missing])


def test_a_shard_of_lists_counts_what_the_checks_read():
    # user 'a': item 7 listed twice (one extra row), items 5 and 6 both at rank 2; user 'b':
    # one item; user 'c': a test item, no list; user 'd': two test rows of one item, a train row;
    # user 'e': a test row without an item (Spark's collect_list skips it: counted, left out)
    rows = [
        ("a", KIND_LIST, 7, 1.0),
        ("a", KIND_LIST, 5, 2.0),
        ("a", KIND_LIST, 6, 2.0),
        ("a", KIND_LIST, 7, 3.0),
        ("b", KIND_LIST, 6, 1.0),
        ("a", KIND_TEST, 5, 1.0),
        ("b", KIND_TEST, 7, 1.0),
        ("c", KIND_TEST, 6, 1.0),
        ("d", KIND_TEST, 8, 1.0),
        ("d", KIND_TEST, 8, 1.0),
        ("d", KIND_TRAIN, 5, 1.0),
        ("d", KIND_LIST, 6, 1.0),
        ("e", KIND_TEST, None, 1.0),
    ]
    users = sorted({r[0] for r in rows})
    mine = [[r for r in rows if r[0] == u] for u in users]  # one row per user, as Spark groups
    table = pa.table(
        {
            "user": users,
            "kinds": pa.array([[r[1] for r in x] for x in mine], type=pa.list_(pa.int8())),
            "items": [[r[2] for r in x if r[2] is not None] for x in mine],  # collect_list
            "values": [[r[3] for r in x] for x in mine],
            "shard": pa.array([3] * len(users), type=pa.int32()),
        }
    )
    opts = apply_profile(EvalOptions(k=2, metrics=["p"]).checked())
    shared = {
        "source": None,
        "item_features": None,
        "popularity": (np.zeros(4, dtype=np.int64), 0),
        "items": pa.array([5, 6, 7, 8]),
    }
    spec = ShardSpec(4, opts, 2, 0, "float64", True, False, shared, unique_ranks=True)
    out, stats_row = _rows(evaluate_table(table, spec))
    checks = getattr(pickle.loads(stats_row[STATS].iloc[0]), CHECKS)
    assert checks.duplicates[KIND_LIST] == (1, 1, ("a", 7))
    assert checks.duplicates[KIND_TEST] == (1, 1, ("d", 8))
    assert checks.duplicates[KIND_TRAIN] == (0, 0, None)
    assert checks.tied_ranks == (1, ("a", 2.0))
    assert checks.width == 4 and checks.users == 4
    assert checks.unlisted == (1, 4, ["c"])
    assert checks.rows == {KIND_TEST: 6, KIND_TRAIN: 1, KIND_LIST: 6}
    assert checks.nulls == 1  # user 'e' left out (the driver then counts the nulls by frame)
    # P@2 by hand: a's list [7, 5] (rank 2: the lower item id first) hits 5; b's [6] misses 7;
    # c has no list: 0; d's [6] misses 8
    p = dict(zip(out["user_id"], out["p_at_2"], strict=True))
    assert p == {"a": 0.5, "b": 0.0, "c": 0.0, "d": 0.0}


def test_the_worker_imports_neither_the_engine_nor_pandas():
    code = (
        "import sys, recoeval_tracking.spark._shard; "
        "print(sorted(m for m in ('numba', 'scipy', 'pandas', 'pyspark') if m in sys.modules))"
    )
    assert fresh_python(code) == "[]"


@pytest.mark.parametrize("full", [False, True])  # lists of 0 to 6 items; every list of 6
def test_lists_in_order_or_not_give_each_users_items_by_key_then_item(full):
    """A task orders each user's list entries by key, then item index: entries that come in
    that order already are placed as they are, others sorted; both against a per-user sort
    (ties of a key, a score's, go to the lower item)."""
    from recoeval_tracking.spark._shard import _sorted_lists

    rng = np.random.default_rng(4)
    m, width = 40, 6
    lengths = np.full(m, width) if full else rng.integers(0, width + 1, m)
    rows = np.repeat(np.arange(m), lengths)
    keys = rng.integers(1, 4, rows.size).astype(np.float64)  # many ties of a key
    items = np.concatenate([rng.permutation(30)[:n] for n in lengths])
    want_items = np.full((m, width), -1)
    want_keys = np.full((m, width), np.nan)
    for u in range(m):
        pairs = sorted((k, i) for k, i in zip(keys[rows == u], items[rows == u], strict=True))
        want_items[u, : len(pairs)] = [i for _, i in pairs]
        want_keys[u, : len(pairs)] = [k for k, _ in pairs]
    ordered = np.lexsort((items, keys, rows))  # each user's entries already in order
    for order in (
        ordered,
        np.arange(rows.size),
        ordered[::-1][np.argsort(rows[ordered[::-1]], kind="stable")],
    ):
        got_items, got_keys = _sorted_lists(rows[order], keys[order], items[order], m, width)
        np.testing.assert_array_equal(got_items, want_items)
        np.testing.assert_array_equal(got_keys, want_keys)
