"""cross_validate: one row per fold, mean and sample std per metric."""

from __future__ import annotations

import numpy as np
import pytest

from recoeval_tracking import InputError
from recoeval_tracking.data import make_synthetic
from recoeval_tracking.splitting import cross_validate, kfold


def _evaluate(train, test):
    """Popularity hit rate at 5: the share of test users with a test item among the 5 most
    popular train items (a tiny model supplied by the caller, as the runner expects)."""
    top = np.argsort(-train.item_counts(), kind="stable")[:5]
    users = np.flatnonzero(test.user_counts() > 0)
    hits = [
        np.isin(test.matrix.indices[test.matrix.indptr[u] : test.matrix.indptr[u + 1]], top).any()
        for u in users
    ]
    return {"hit_at_5": float(np.mean(hits)), "n_test": float(test.nnz)}


def test_kfold_runner_aggregates():
    X = make_synthetic(200, 80, 3000, seed=1)
    out = cross_validate(X, _evaluate, "kfold", n_folds=4, seed=3)
    assert list(out.index) == [0, 1, 2, 3, "mean", "std"]
    folds = kfold(X, 4, seed=3)
    expected = [_evaluate(f.train, f.test)["hit_at_5"] for f in folds]
    assert out.loc[[0, 1, 2, 3], "hit_at_5"].tolist() == expected
    assert out.loc["mean", "hit_at_5"] == pytest.approx(np.mean(expected))
    assert out.loc["std", "hit_at_5"] == pytest.approx(np.std(expected, ddof=1))
    assert out.loc[[0, 1, 2, 3], "n_test"].sum() == X.nnz  # folds cover the data once
    assert out.loc[0, "fingerprint"] == folds[0].fingerprint


def test_leave_one_out_repeats_with_seeds():
    X = make_synthetic(150, 60, 2000, seed=2)
    out = cross_validate(X, _evaluate, "leave_one_out", n_folds=3, seed=10)
    # one test entry per user that keeps at least one train entry (min_train=1)
    n_eligible = float(np.count_nonzero(X.user_counts() >= 2))
    assert out.loc[[0, 1, 2], "n_test"].tolist() == [n_eligible] * 3
    assert len(set(out.loc[[0, 1, 2], "fingerprint"])) == 3


def test_runner_errors():
    X = make_synthetic(50, 30, 400, seed=0)
    with pytest.raises(InputError, match="'strategy' parameter of cross_validate"):
        cross_validate(X, _evaluate, "bogus")
    with pytest.raises(InputError, match="mapping"):
        cross_validate(X, lambda tr, te: 1.0, "kfold", n_folds=2)
