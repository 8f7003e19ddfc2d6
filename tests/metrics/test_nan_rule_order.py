"""The NaN rules take precedence in their documented order (README "NaN rules", the keys of
``NAN_RULES``): a user that breaks several rules is reported under the first one."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from reference import NAN_REASONS

import recoeval_tracking as rt
from recoeval_tracking.metrics.evaluate import NAN_RULES


def _reasons(train, test, scores, **kw):
    res = rt.evaluate(
        sp.csr_array(train) if train is not None else None,
        sp.csr_array(test),
        scores=np.asarray(scores, dtype=np.float64),
        metrics=["p"],
        k=1,
        nthreads=1,
        **kw,
    )
    return res.per_user["nan_reason"].tolist()


def test_documented_order():
    """The engine's rules in the order the slow reference checks them (tests/reference.py)."""
    assert tuple(NAN_RULES)[:6] == NAN_REASONS


def test_each_rule_wins_over_the_later_ones():
    # 3 items, min_pos_test=2, min_items_pool=4, consider_cold_start=False. user 0: no test entry
    # (also cold, pool 3 < 4); user 1: one test entry (also cold); user 2: no train entry, pool
    # 3 < 4; user 3: one train item, pool 2 < 4, and a NaN score in its pool
    test = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=float)
    train = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0]], dtype=float)
    scores = [[0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1], [0.1, np.nan, 0.2]]
    got = _reasons(train, test, scores, min_pos_test=2, min_items_pool=4, consider_cold_start=False)
    assert got == ["no_test", "min_pos_test", "cold_start", "min_items_pool"]


def test_nan_score_before_all_equal():
    test = np.array([[1, 0, 0]], dtype=float)
    assert _reasons(None, test, [[np.nan, np.nan, np.nan]]) == ["nan_score"]
    assert _reasons(None, test, [[1.0, 1.0, 1.0]]) == ["all_equal"]


def test_implicit_ties_flag_nan_score_users_without_lists():
    """``ties="implicit"`` selects the lists outside the engine and flags users with a NaN score
    there; with only rank metrics (no list kept) they are NaN by the ``nan_score`` rule and the
    others equal ``ties="index"`` (the scores have no ties)."""
    rng = np.random.default_rng(0)
    te = sp.csr_array((rng.random((6, 12)) < 0.3).astype(float))
    S = rng.random((6, 12))
    S[2, :] = np.nan
    S[4, 3] = np.nan
    got = rt.evaluate(None, te, scores=S, metrics=["p", "ndcg"], k=3, ties="implicit")
    want = rt.evaluate(None, te, scores=S, metrics=["p", "ndcg"], k=3, ties="index")
    assert list(got.per_user["nan_reason"]) == ["", "", "nan_score", "", "nan_score", ""]
    assert got.per_user.loc[[2, 4], ["p_at_3", "ndcg_at_3"]].isna().all().all()
    np.testing.assert_array_equal(
        got.per_user[["p_at_3", "ndcg_at_3"]].to_numpy(),
        want.per_user[["p_at_3", "ndcg_at_3"]].to_numpy(),
    )
