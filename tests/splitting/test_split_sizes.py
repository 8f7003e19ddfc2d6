"""Sizes and bounds the split strategies document, computed by hand: the random holdout's
validation share, the global temporal cut's validation bound, and the cross-validation
summary over folds with an undefined metric."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.data import from_dataframe
from recoeval_tracking.splitting import cross_validate


def _one_user(n=10):
    return from_dataframe(
        pd.DataFrame(
            {
                "user": ["a"] * n,
                "item": list(range(n)),
                "value": 1.0,
                "timestamp": np.arange(n) * 10,
            }
        )
    )


def test_random_holdout_validation_share():
    # 10 entries: round(10 * 0.2) = 2 test, round(10 * 0.3) = 3 validation, 5 train
    s = rt.make_split("random", _one_user(), test_fraction=0.2, validation_fraction=0.3, seed=4)
    assert (s.test.nnz, s.validation.nnz, s.train.nnz) == (2, 3, 5)


def test_temporal_validation_cut_may_equal_the_test_cut():
    # the validation cut must be <= the test cut: equal is allowed (an empty validation part)
    X = _one_user()
    s = rt.make_split("temporal_global", X, cut=70, validation_cut=70)
    assert s.test.nnz == 3  # timestamps 70, 80, 90
    with pytest.raises(rt.InputError, match="'validation_cut'"):
        rt.make_split("temporal_global", X, cut=70, validation_cut=80)


def test_cross_validation_summary_ignores_undefined_folds():
    X = from_dataframe(
        pd.DataFrame(
            {"user": np.repeat(np.arange(6), 5), "item": np.tile(np.arange(5), 6), "value": 1.0}
        )
    )
    values = iter([1.0, math.nan, 3.0])

    def fold(train, test):
        return {"m": next(values)}

    out = cross_validate(X, fold, strategy="kfold", n_folds=3, seed=0)
    assert out.loc["mean", "m"] == pytest.approx(2.0)
    assert out.loc["std", "m"] == pytest.approx(math.sqrt(2.0))  # of (1, 3), ddof 1


def test_random_holdout_validation_cap_leaves_min_train():
    """The validation part is capped at what test and ``min_train`` leave: 10 entries,
    test round(10 * 0.5) = 5, validation round(10 * 0.4) = 4 asked but 10 - 5 - 3 = 2 allowed
    with min_train=3, so 5 test, 2 validation, 3 train (one user capped)."""
    s = rt.make_split(
        "random", _one_user(), test_fraction=0.5, validation_fraction=0.4, min_train=3, seed=1
    )
    assert (s.test.nnz, s.validation.nnz, s.train.nnz) == (5, 2, 3)
    assert s.details["validation_users_capped"] == 1
    s = rt.make_split("random", _one_user(), test_count=6, validation_count=4, min_train=1, seed=2)
    assert (s.test.nnz, s.validation.nnz, s.train.nnz) == (6, 3, 1)


def test_fingerprint_follows_the_input_data():
    """Two datasets of the same shape split with the same settings (so the same part label for
    every entry) have different split fingerprints: the fingerprint is over the data too, so
    a report never takes them for one split. The same data split twice shares it."""
    a = _one_user()
    b = from_dataframe(
        pd.DataFrame(
            {
                "user": ["a"] * 10,
                "item": list(range(10)),
                "value": 2.0,
                "timestamp": np.arange(10) * 10,
            }
        )
    )
    assert a.fingerprint() != b.fingerprint()
    for name, kw in [
        ("random", {"test_fraction": 0.3, "seed": 0}),
        ("temporal_global", {"cut": 70}),
        ("leave_one_out", {"order": "latest"}),
    ]:
        sa, sb = rt.make_split(name, a, **kw), rt.make_split(name, b, **kw)
        assert sa.test.nnz == sb.test.nnz
        assert sa.fingerprint != sb.fingerprint, name
        assert rt.make_split(name, a, **kw).fingerprint == sa.fingerprint
