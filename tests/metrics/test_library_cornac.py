"""The ``cornac`` profile against Cornac 3.0.1 (``cornac/metrics/ranking.py``,
``cornac/eval_methods/base_method.py:ranking_eval``, ``cornac/models/recommender.py:rank``).

By hand, from the code: NCRR (reciprocal ranks of the hits over their ideal sum), MRR over the
whole ranking, AUC counting a tied (positive, negative) pair as wrong (``>``) and MAP giving tied
items their largest rank (``rankdata(..., "max")``), which the profile's pessimistic ties give.
With Cornac installed (the ``crosscheck`` extra), its own ``ranking_eval`` on MovieLens 100K, a
model returning the same scores: every metric user by user (untied scores), AUC on tied
popularity scores, and ``rating_threshold=4`` (train items rated below 4 stay candidates in
Cornac: the profile moves them into the pool).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

from ._peer_lists import ml100k

K = 10


def test_by_hand():
    """Pool of 6 items (item 6 is in train), positives 1 and 4; item 4 tied with the negatives 2
    and 5. Cornac: NCRR@3 = (1/2) / (1 + 1/2) (item 1 at rank 2, item 0 above it); MRR = 1/2;
    AUC over the (positive, negative) pairs, a tied pair wrong (``>``): item 1 above 2, 3, 5,
    below 0 (3 of 4); item 4 above 3 only (1 of 4): 4/8; MAP = mean(1/2, 2/5): item 4 gets the
    largest rank of its tie, 5 (``rankdata(-scores, "max")``), and rank 2 among the positives."""
    train = sp.csr_array((np.ones(1), ([0], [6])), shape=(1, 7))
    test = sp.csr_array((np.ones(2), ([0, 0], [1, 4])), shape=(1, 7))
    scores = np.array([[5.0, 4.0, 3.0, 0.5, 3.0, 3.0, 9.0]])
    res = rt.evaluate(train, test, scores=scores, k=3, profile="cornac")
    row = res.per_user.iloc[0]
    assert row["ncrr_at_3"] == pytest.approx(0.5 / 1.5)
    assert row["rr_full"] == pytest.approx(0.5)
    assert row["roc_auc"] == pytest.approx(4 / 8)
    assert row["pr_auc"] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert row["p_at_3"] == pytest.approx(1 / 3)
    # under the index order item 4 would be at rank 3: the pessimistic order matters here
    index = rt.evaluate(train, test, scores=scores, k=3, metrics=["roc_auc", "p"], ties="index")
    assert index.per_user.iloc[0]["roc_auc"] != pytest.approx(4 / 8)


def test_train_below_the_level_stays_a_candidate():
    """rating_threshold 4 (relevance_level=4): a train item rated 2 is a negative of the pool,
    as in Cornac's ranking_eval; rated 5 it is left out."""
    train = sp.csr_array((np.array([2.0, 5.0]), ([0, 0], [0, 1])), shape=(1, 5))
    test = sp.csr_array((np.array([4.0]), ([0], [3])), shape=(1, 5))
    scores = np.array([[9.0, 8.0, 1.0, 5.0, 0.0]])  # item 0 (rated 2 in train) above item 3
    res = rt.evaluate(train, test, scores=scores, k=2, profile="cornac", relevance_level=4.0)
    assert res.per_user.iloc[0]["rr_full"] == pytest.approx(1 / 2)
    assert res.per_user.iloc[0]["n_train"] == 1


# -- with Cornac installed ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cornac_run():
    pytest.importorskip("cornac")
    from cornac.data import Dataset
    from cornac.eval_methods.base_method import ranking_eval
    from cornac.models import Recommender

    train, test, scores = ml100k()
    known = np.flatnonzero(np.bincount(train.indices, minlength=train.shape[1]) > 0)
    train, test = train[:, known], test[:, known]  # Cornac leaves unknown items out

    def triplets(X):
        c = X.tocoo()
        return [(str(u), str(i), float(v)) for u, i, v in zip(c.row, c.col, c.data, strict=True)]

    tr = Dataset.build(triplets(train), seed=0)
    te = Dataset.build(triplets(test), global_uid_map=tr.uid_map, global_iid_map=tr.iid_map, seed=0)
    cols = np.array([int(i) for i in tr.item_ids])
    users = np.array([int(u) for u in tr.user_ids])

    class Fixed(Recommender):
        def __init__(self, S):
            super().__init__(name="fixed")
            self.S = S

        def score(self, user_idx, item_idx=None):
            row = self.S[users[user_idx], cols]
            return row if item_idx is None else row[item_idx]

    def run(S, metrics, threshold=1.0):
        model = Fixed(S)
        model.fit(tr)
        _, per = ranking_eval(model, metrics, tr, te, rating_threshold=threshold)
        out = []
        for values in per:
            col = np.full(test.shape[0], np.nan)
            for idx, v in values.items():
                col[users[idx]] = v
            out.append(col)
        return out

    return train, test, {s: v[:, known] for s, v in scores.items()}, run


def _ours(res, name):
    metric = PROFILES["cornac"]["aliases"][name]
    col = f"{metric}_at_{K}" if rt.METRICS[metric].at_k else metric
    return res.per_user[col].to_numpy(float)


@pytest.mark.parametrize("threshold", [1.0, 4.0])
def test_installed_cornac_user_by_user(cornac_run, threshold):
    from cornac import metrics as cm

    train, test, scores, run = cornac_run
    S = scores["untied"]
    at_k = {
        "Precision": cm.Precision(k=K),
        "Recall": cm.Recall(k=K),
        "FMeasure": cm.FMeasure(k=K),
        "HitRatio": cm.HitRatio(k=K),
        "NDCG": cm.NDCG(k=K),
        "NCRR": cm.NCRR(k=K),
    }
    whole = {"MRR": cm.MRR(), "AUC": cm.AUC(), "MAP": cm.MAP()}  # a full ranking: k = -1
    got = dict(zip(at_k, run(S, list(at_k.values()), threshold), strict=True))
    got |= dict(zip(whole, run(S, list(whole.values()), threshold), strict=True))
    res = rt.evaluate(train, test, scores=S, k=K, profile="cornac", relevance_level=threshold)
    for name, values in got.items():
        np.testing.assert_allclose(_ours(res, name), values, rtol=1e-12, err_msg=name)
        assert math.isclose(np.nanmean(values), np.nanmean(_ours(res, name)), rel_tol=1e-12)


def test_installed_cornac_auc_on_tied_scores(cornac_run):
    from cornac import metrics as cm

    train, test, scores, run = cornac_run
    (auc,) = run(scores["tied"], [cm.AUC()])
    res = rt.evaluate(train, test, scores=scores["tied"], k=K, profile="cornac")
    np.testing.assert_allclose(res.per_user["roc_auc"].to_numpy(float), auc, rtol=1e-12)
    index = rt.evaluate(train, test, scores=scores["tied"], k=K, metrics=["roc_auc"], ties="index")
    assert not np.allclose(index.per_user["roc_auc"].to_numpy(float), auc)  # ties matter here
