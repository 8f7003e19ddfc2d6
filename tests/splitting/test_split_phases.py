"""The two phases of a fair study on a :class:`Split`: ``validation_split`` (fit on train,
evaluate on validation) and ``test_split`` (train + validation known, evaluate on test)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.data import from_dataframe
from recoeval_tracking.splitting import union_of


def _entries(X) -> set[tuple[int, int, float, int]]:
    df = X.to_dataframe()
    ts = df["timestamp"] if "timestamp" in df else [0] * len(df)
    return set(zip(df["user"], df["item"], df["value"], ts))


@pytest.fixture
def split():
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "user": rng.integers(0, 30, n),
            "item": rng.integers(0, 40, n),
            "value": rng.integers(0, 6, n).astype(float),  # zeros kept as explicit entries
            "timestamp": rng.integers(0, 10_000, n),
        }
    ).drop_duplicates(["user", "item"])
    X = from_dataframe(frame)
    return rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.2, seed=4)


def test_validation_split_evaluates_the_validation_part_against_train(split):
    v = split.validation_split()
    assert _entries(v.train) == _entries(split.train)
    assert _entries(v.test) == _entries(split.validation)
    assert v.validation is None and v.details["evaluated_on"] == "validation"
    assert v.fingerprint != split.fingerprint


def test_test_split_knows_train_and_validation(split):
    t = split.test_split()
    # the entries of both parts, each once, with their values and timestamps
    assert _entries(t.train) == _entries(split.train) | _entries(split.validation)
    assert t.train.nnz == split.train.nnz + split.validation.nnz
    assert _entries(t.test) == _entries(split.test)
    assert t.details["evaluated_on"] == "test" and t.details["split_fingerprint"] == (
        split.fingerprint
    )
    # the two phases never share a fingerprint, and the same split gives the same ones
    assert len({t.fingerprint, split.validation_split().fingerprint, split.fingerprint}) == 3
    assert t.fingerprint == split.test_split(refit=False).fingerprint


def test_a_split_without_validation_is_its_own_test_phase():
    X = rt.make_synthetic(n_users=50, n_items=30, n_interactions=600, seed=0)
    s = rt.make_split("random", X, test_fraction=0.2, seed=1)
    assert not s.has_validation and s.test_split() is s
    with pytest.raises(rt.InputError, match="validation_fraction=0.1"):
        s.validation_split()


def test_union_refuses_overlapping_parts(split):
    with pytest.raises(ValueError, match="share an entry"):
        union_of(split.train, split.train)


def test_kfold_with_an_inner_validation_part_keeps_the_folds():
    X = rt.make_synthetic(n_users=60, n_items=50, n_interactions=1500, seed=3)
    plain = rt.make_split("kfold", X, n_folds=4, seed=5)
    inner = rt.make_split("kfold", X, n_folds=4, seed=5, validation_fraction=0.25)
    counts = X.user_counts()
    for p, s in zip(plain, inner):
        assert _entries(s.test) == _entries(p.test)  # the same folds
        assert _entries(s.train) | _entries(s.validation) == _entries(p.train)
        assert not _entries(s.train) & _entries(s.validation)
        n_val, n_train = s.validation.user_counts(), s.train.user_counts()
        for u in range(X.n_users):  # the rule, user by user
            trainable = int(p.train.user_counts()[u])
            want = min(int(np.floor(counts[u] * 0.25 + 0.5)), max(trainable - 1, 0))
            assert n_val[u] == want
            assert n_train[u] == trainable - want
        assert s.has_validation and s.fold == p.fold
    # each fold draws its validation part on its own
    assert _entries(inner[0].validation) != _entries(inner[1].validation)
