"""``inf_scores="nan"`` applied by the CPU engine itself gives the values of converting every
+-inf score to NaN before the engine (the rule: a user with a +-inf or NaN score in the pool is
undefined; the user's train items do not count), for scores from a dense matrix and from
factors, on one thread and on several."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

import recoeval_tracking as rt


def _case(seed=3, m=40, n=30):
    rng = np.random.default_rng(seed)
    S = rng.integers(-3, 4, (m, n)).astype(np.float64)
    cells = rng.random((m, n))
    tr = sp.csr_array((cells < 0.2).astype(np.float64))
    te = sp.csr_array(((cells > 0.85) * rng.integers(1, 4, (m, n))).astype(np.float64))
    S[0, np.flatnonzero(cells[0] < 0.2)[:1]] = np.inf  # on a train item only: still defined
    S[1, np.flatnonzero(cells[1] >= 0.2)[:1]] = -np.inf  # in the pool: undefined
    S[2, np.flatnonzero(cells[2] > 0.85)[:1]] = np.inf  # a positive: undefined
    S[3, np.flatnonzero(cells[3] >= 0.2)[:1]] = np.nan  # a NaN in the pool: undefined
    return tr, te, S


def test_the_engine_rule_equals_converting_the_scores_first():
    tr, te, S = _case()
    converted = np.where(np.isinf(S), np.nan, S)
    kw = dict(metrics="all", k=5, cumulative=True, return_topk=True)
    for nthreads, block_rows in ((1, None), (2, 7)):
        got = rt.evaluate(
            tr, te, scores=S, inf_scores="nan", nthreads=nthreads, block_rows=block_rows, **kw
        )
        want = rt.evaluate(
            tr,
            te,
            scores=converted,
            inf_scores="rank",
            nthreads=nthreads,
            block_rows=block_rows,
            **kw,
        )
        pd.testing.assert_frame_equal(got.per_user, want.per_user, check_exact=True)
        np.testing.assert_array_equal(got.topk, want.topk)
    reasons = got.per_user["nan_reason"]
    assert reasons[0] == "" and reasons[1] == reasons[2] == reasons[3] == "nan_score"


def test_factor_scores_with_infinite_biases():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((30, 3))
    B = rng.standard_normal((25, 3))
    bias = np.zeros(25)
    bias[[4, 9]] = [np.inf, -np.inf]
    te = sp.random_array((30, 25), density=0.15, format="csr", rng=rng)
    dense = np.zeros((30, 25))
    dense[np.arange(0, 30, 3)[:, None], [4, 9]] = 1.0  # every third user: both items in train
    tr = sp.csr_array(dense)
    te = sp.csr_array(te - te.multiply(tr > 0))
    got = rt.evaluate(tr, te, A=A, B=B, item_biases=bias, inf_scores="nan", nthreads=2)
    S = A @ B.T + bias
    want = rt.evaluate(tr, te, scores=np.where(np.isinf(S), np.nan, S), inf_scores="rank")
    pd.testing.assert_frame_equal(got.per_user, want.per_user, check_exact=True)
    defined = got.per_user["nan_reason"] == ""
    assert defined.sum() > 0 and (defined == (np.arange(30) % 3 == 0)[: len(defined)]).all()


def test_implicit_lists_are_selected_from_the_converted_scores():
    """With ``ties="implicit"`` the top-K lists are selected from the blocks before the engine
    runs, so the scores are converted there: users with a +-inf score in the pool stay NaN."""
    tr, te, S = _case()
    kw = dict(metrics=["p", "ndcg"], k=5, ties="implicit")
    got = rt.evaluate(tr, te, scores=S, inf_scores="nan", **kw)
    want = rt.evaluate(tr, te, scores=np.where(np.isinf(S), np.nan, S), inf_scores="rank", **kw)
    pd.testing.assert_frame_equal(got.per_user, want.per_user, check_exact=True)
    assert list(got.per_user["nan_reason"][:4]) == ["", "nan_score", "nan_score", "nan_score"]
