"""Factors whose every score is finite spare the kernels the pass that looks for a NaN
(``factors_finite``, ``EngineInput.finite``); factors whose products overflow keep it, so that
their NaN and +-inf scores follow the NaN rules exactly as the same scores given densely."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.engine.driver import factors_finite
from recoeval_tracking.metrics.evaluate import _finite
from recoeval_tracking.scores import BiasScores, DenseScores, FactorScores

F32_MAX = float(np.finfo(np.float32).max)


def test_the_bound_holds_for_ordinary_factors_and_not_past_overflow():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 8)).astype(np.float32)
    B = rng.standard_normal((70, 8)).astype(np.float32)
    assert factors_finite(A, B)
    # ||A[u]||_1 max |B| = 2e19 * 1e19 = 2e38: its double is past float32's 3.4e38
    big = np.array([[1e19, 1e19]], dtype=np.float32)
    assert not factors_finite(big, np.array([[1e19, 0.0]], dtype=np.float32))
    # 1e37 * 1e0 doubled is 2e37: finite whatever the order of the sums
    assert factors_finite(np.array([[1e37, 0.0]], np.float32), np.array([[1.0, 1.0]], np.float32))
    # the biases' column of ones counts: 1.0 + |A| row norm 0
    assert not factors_finite(
        np.zeros((1, 1), np.float32), np.array([[0.0, 2e38]], np.float32), ones=True
    )
    assert factors_finite(np.zeros((1, 1), np.float32), np.array([[0.0, 1e38]], np.float32), True)
    # float64 scores: the bound is float64's
    assert factors_finite(np.array([[1e150]]), np.array([[1e150]]))
    assert not factors_finite(np.array([[1e155]]), np.array([[1e155]]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_nan_or_infinite_factor_is_not_bounded(bad):
    A = np.ones((40_000, 3), dtype=np.float32)  # more rows than one slice of the scan
    B = np.ones((5, 3), dtype=np.float32)
    assert factors_finite(A, B)
    A[33_000, 1] = bad  # in the third slice
    assert not factors_finite(A, B)
    B2 = B.copy()
    B2[4, 2] = bad
    assert not factors_finite(np.ones((2, 3), np.float32), B2)


def test_which_sources_are_known_finite():
    A, B = np.ones((3, 2)), np.ones((4, 2))
    assert _finite(FactorScores(A, B))
    assert not _finite(FactorScores(A * 1e200, B * 1e200))
    assert _finite(BiasScores(np.zeros(4)))
    assert not _finite(BiasScores(np.array([0.0, np.inf, 1.0, 2.0])))
    assert not _finite(DenseScores(np.ones((3, 4))))  # not read for it: the kernel looks


def _overflowing(seed=5, m=30, n=40):
    """float32 factors of random scores whose products overflow for three users: user 0 scores
    +inf on one pool item, user 1 -inf on one, user 2 +inf on a train item only; user 3 has a
    NaN factor (every score NaN)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, 3)).astype(np.float32)
    B = rng.standard_normal((n, 3)).astype(np.float32)
    cells = rng.random((m, n))
    tr = sp.csr_array((cells < 0.2).astype(np.float64))
    te = sp.csr_array(((cells > 0.8) * rng.integers(1, 4, (m, n))).astype(np.float64))
    pool0 = np.flatnonzero(cells[0] >= 0.2)[0]
    pool1 = np.flatnonzero(cells[1] >= 0.2)[1]
    train2 = np.flatnonzero(cells[2] < 0.2)[0]
    A[0] = [1e20, 0.0, 0.0]
    B[pool0] = [1e20, 0.0, 0.0]
    A[1] = [0.0, 1e20, 0.0]
    B[pool1] = [0.0, -1e20, 0.0]
    A[2] = [0.0, 0.0, 1e20]
    B[train2] = [0.0, 0.0, 1e20]
    A[3, 1] = np.nan
    return tr, te, A, B


@pytest.mark.parametrize("inf_scores", ["rank", "nan"])
def test_overflowing_factors_follow_the_nan_rules_of_their_scores(inf_scores):
    tr, te, A, B = _overflowing()
    A_ok = A.copy()
    A_ok[3, 1] = 0.0
    assert not factors_finite(A_ok, B)  # overflow alone, without the NaN factor
    with np.errstate(over="ignore", invalid="ignore"):
        S = A @ B.T
    assert S[0].max() == np.inf and S[1].min() == -np.inf and S[2].max() == np.inf
    kw = dict(metrics=["p", "ap", "ndcg"], k=5, cumulative=True, inf_scores=inf_scores)
    got = rt.evaluate(tr, te, A=A, B=B, **kw)
    want = rt.evaluate(tr, te, scores=S, **kw)
    pd.testing.assert_frame_equal(got.per_user, want.per_user, check_exact=True)
    # +-inf in the pool is undefined under "nan" only, a NaN under either rule; a train item's
    # score never counts
    ranked = "nan_score" if inf_scores == "nan" else ""
    assert list(got.per_user["nan_reason"][:4]) == [ranked, ranked, "", "nan_score"]
    assert np.isfinite(got.per_user["ndcg_at_5"][4:]).sum() > 15
