"""The ``rectools`` profile against RecTools 0.19.0 (``rectools/metrics/classification.py``,
``rectools/metrics/ranking.py``, ``rectools/metrics/base.py:merge_reco``).

``rectools_user`` is that code written out for one user, independently of the package: every
test user counts (``merge_reco`` starts from the interactions: a user without a recommendation
scores 0), and NDCG divides by the DCG of k relevant items unless ``divide_by_achievable``. It
gives the expected values on MovieLens 100K lists (short lists, users without a list, k past the
lists). With RecTools installed (it pins numpy < 2 and pandas < 3, so it is not in the
``crosscheck`` extra: docs/guides/profiles.md gives the commands that install it beside the
package), its own ``calc_per_user`` gives the same numbers user by user.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

from ._peer_lists import lists, ml100k, truth, user_lists

K = 10
NAMES = list(PROFILES["rectools"]["aliases"])


def rectools_user(recs: list[int], test: dict[int, float], k: int) -> dict[str, float]:
    """One user's values as RecTools computes them (ranks 1, 2, ... in list order)."""
    ranks = [r for r, i in enumerate(recs, start=1) if i in test and r <= k]
    tp, liked = len(ranks), len(test)
    p, r = tp / k, tp / liked
    prec_sum = sum((j + 1) / rank for j, rank in enumerate(sorted(ranks)))
    dcg = sum(1 / math.log2(rank + 1) for rank in ranks)
    ideal = [1 / math.log2(i + 1) for i in range(1, k + 1)]
    return {
        "Precision": p,
        "Precision(r_precision=True)": tp / min(k, liked),
        "Recall": r,
        "F1Beta": 2 * p * r / (p + r) if p + r else 0.0,
        "MAP": prec_sum / liked,
        "NDCG": dcg / sum(ideal),
        "NDCG(divide_by_achievable=True)": dcg / sum(ideal[: min(liked, k)]),
        "MRR": 1 / min(ranks) if ranks else 0.0,
        "HitRate": float(tp > 0),
    }


def _column(res: rt.Results, name: str, k: int) -> np.ndarray:
    return res.per_user[f"{PROFILES['rectools']['aliases'][name]}_at_{k}"].to_numpy(float)


def _frame(L: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        [(u, i, r + 1) for u, items in enumerate(user_lists(L)) for r, i in enumerate(items)],
        columns=["user", "item", "rank"],
    )


@pytest.fixture(scope="module")
def data():
    train, test, scores = ml100k()
    return train, test, lists(train, scores["untied"], K)


@pytest.mark.parametrize("k", [K, 12])
def test_ml100k_lists_user_by_user(data, k):
    _, test, L = data
    with pytest.warns(UserWarning, match="no list"):
        res = rt.evaluate(None, test, ranked=_frame(L), k=k, profile="rectools")
    tru = truth(test)
    for name in NAMES:
        want = [rectools_user(r, t, k)[name] for r, t in zip(user_lists(L), tru, strict=True)]
        np.testing.assert_allclose(_column(res, name, k), want, rtol=1e-12, err_msg=name)


def test_ndcg_ideal_of_k_items_by_hand():
    """One test item, listed first, k = 3: RecTools' default NDCG is 1 / (1 + 1/log2 3 + 1/2),
    not 1 (its ideal holds k relevant items whatever the user has)."""
    test = sp.csr_array((np.ones(1), ([0], [2])), shape=(1, 6))
    res = rt.evaluate(None, test, ranked=np.array([[2, 0, 1]]), k=3, profile="rectools")
    assert res.per_user["ndcg_bin_idealk_at_3"][0] == pytest.approx(
        1 / (1 + 1 / math.log2(3) + 1 / 2)
    )
    assert res.per_user["ndcg_bin_at_3"][0] == pytest.approx(1.0)


# -- with RecTools installed ------------------------------------------------------------------


@pytest.mark.parametrize("k", [K, 12])
def test_installed_rectools_user_by_user(data, k):
    metrics = pytest.importorskip("rectools.metrics")
    from rectools import Columns

    _, test, L = data
    reco = _frame(L).rename(columns={"user": Columns.User, "item": Columns.Item})
    tru = truth(test)
    inter = pd.DataFrame(
        [(u, i, v, "2026-01-01") for u, t in enumerate(tru) for i, v in t.items()],
        columns=[Columns.User, Columns.Item, Columns.Weight, Columns.Datetime],
    )
    ours = {
        "Precision": metrics.Precision(k),
        "Precision(r_precision=True)": metrics.Precision(k, r_precision=True),
        "Recall": metrics.Recall(k),
        "F1Beta": metrics.F1Beta(k),
        "MAP": metrics.MAP(k),
        "NDCG": metrics.NDCG(k),
        "NDCG(divide_by_achievable=True)": metrics.NDCG(k, divide_by_achievable=True),
        "MRR": metrics.MRR(k),
        "HitRate": metrics.HitRate(k),
    }
    with pytest.warns(UserWarning, match="no list"):
        res = rt.evaluate(None, test, ranked=_frame(L), k=k, profile="rectools")
    for name, metric in ours.items():
        per_user = metric.calc_per_user(reco, inter).reindex(range(test.shape[0])).fillna(0.0)
        np.testing.assert_allclose(_column(res, name, k), per_user, rtol=1e-12, err_msg=name)
        assert res.means[f"{PROFILES['rectools']['aliases'][name]}_at_{k}"] == pytest.approx(
            metric.calc(reco, inter), rel=1e-12
        )
