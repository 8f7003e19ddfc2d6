"""The executors' side without Spark: one shard's long frame (pandas) evaluated by
``evaluate_group`` gives the rows of a local run over the same global rows, and a user without
factor rows is NaN with reason ``nan_score``."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import apply_profile
from recoeval_tracking.options import EvalOptions
from recoeval_tracking.scores import FactorScores
from recoeval_tracking.spark._shard import (
    KIND_FACTORS,
    KIND_TEST,
    STATS,
    ShardSpec,
    evaluate_cogroup,
)


def test_a_shard_of_factors_matches_the_local_rows_and_missing_factors_are_nan():
    rng = np.random.default_rng(2)
    m, n, p = 12, 9, 3
    test = (rng.random((m, n)) < 0.3).astype(np.float64)
    A = rng.integers(-1, 2, (m, p)).astype(np.float32)
    B = rng.integers(-1, 2, (n, p)).astype(np.float32)
    lo, hi = 4, 12  # the second of two shards: global rows 4..11
    missing = 6  # this user has no factor row
    r, c = np.nonzero(test[lo:hi])
    inter = pd.DataFrame({"shard": 1, "row": r + lo, "kind": KIND_TEST, "item": c, "value": 1.0})
    have = [u for u in range(lo, hi) if u != missing]
    factors = pd.DataFrame(
        {
            "shard": 1,
            "row": have,
            "kind": KIND_FACTORS,
            "item": -1,
            "value": 0.0,
            "features": [A[u] for u in have],
        }
    )
    opts = apply_profile(EvalOptions(k=3, metrics=["p", "ndcg"]).checked())
    shared = {
        "source": FactorScores(A[:0], B),
        "item_features": None,
        "popularity": (np.zeros(n, dtype=np.int64), 0),
    }
    spec = ShardSpec(np.array([0, lo, hi]), n, opts, 0, p, "float32", False, False, shared)
    out = evaluate_cogroup(inter, factors, spec)
    rows = out[out["row"] >= 0].reset_index(drop=True)
    A_nan = A.copy()
    A_nan[missing] = np.nan
    local = rt.evaluate(None, sp.csr_array(test), A=A_nan, B=B, k=3, metrics=["p", "ndcg"])
    want = local.per_user.iloc[lo:hi].reset_index(drop=True)
    assert list(rows["row"]) == list(range(lo, hi))
    assert list(rows["nan_reason"]) == list(want["nan_reason"])
    for col in ("n_test", "p_at_3", "ndcg_at_3"):  # the statistics row made them objects
        np.testing.assert_array_equal(rows[col].to_numpy(dtype=float), want[col].to_numpy())
    assert rows.loc[missing - lo, "nan_reason"] == "nan_score"
    stats = pickle.loads(out.loc[out["row"] < 0, STATS].iloc[0])
    assert stats.index == 1 and stats.per_user.empty
    assert int(stats.moments["p_at_3"].n) == int((want["nan_reason"] == "").sum())
