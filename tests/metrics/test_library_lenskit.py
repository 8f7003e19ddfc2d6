"""The ``lenskit`` profile against LensKit's metric code (2025.8.1 and 2026.3.0, which agree on
these metrics: ``lenskit/metrics/ranking/_pr.py``, ``_map.py``, ``_dcg.py``, ``_hit.py``,
``_recip.py``, ``_weighting.py``).

``lenskit_user`` below is that code written out for one list, independently of the package; it
gives the expected values on a hand-checked user, on MovieLens 100K lists (short lists, empty
lists, k past the lists) and on tied scores. With LensKit installed (an optional cross-check, it
skips without it: LensKit 2025.8 wants pandas 2; docs/guides/profiles.md gives the commands), its own
``measure_list`` gives the same numbers user by user.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

from ._peer_lists import lists, ml100k, top_lists, truth, user_lists

K = 10
NAMES = ["Precision", "Recall", "AveragePrecision", "NDCG", "NDCG(gain=...)", "Hit", "RecipRank"]


def _weight(rank: int) -> float:
    """LogRankWeight(): log(2) / log(max(rank, 2))."""
    return math.log(2) / math.log(max(rank, 2))


def lenskit_user(recs: list[int], test: dict[int, float], n: int) -> dict[str, float]:
    """One list's values as LensKit's measure_list computes them (the list truncated to n)."""
    recs = recs[:n]
    good = [i in test for i in recs]
    hits = sum(good)
    precision = hits / len(recs) if recs else math.nan
    recall = hits / min(len(test), n)
    if recs:
        cnt, total = 0, 0.0
        for j, g in enumerate(good, start=1):
            if g:
                cnt += 1
                total += cnt / j
        ap = total / min(len(test), len(recs))
    else:
        ap = math.nan
    dcg = sum(_weight(j) for j, g in enumerate(good, start=1) if g)
    ndcg = dcg / sum(_weight(j) for j in range(1, min(len(test), n) + 1))
    gains = {i: max(v, 0.0) for i, v in test.items()}
    realized = sum(gains[i] * _weight(j) for j, i in enumerate(recs, start=1) if i in gains)
    top = sorted(gains.values(), reverse=True)[:n]
    ideal = sum(g * _weight(j) for j, g in enumerate(top, start=1))
    first = next((j for j, g in enumerate(good, start=1) if g), None)
    return {
        "Precision": precision,
        "Recall": recall,
        "AveragePrecision": ap,
        "NDCG": ndcg,
        "NDCG(gain=...)": realized / ideal if ideal > 0 else 0.0,
        "Hit": 1.0 if hits else 0.0,
        "RecipRank": 1.0 / first if first else 0.0,
    }


def _column(res: rt.Results, name: str, k: int = K) -> np.ndarray:
    return res.per_user[f"{PROFILES['lenskit']['aliases'][name]}_at_{k}"].to_numpy(float)


def _expected(L: np.ndarray, tru: list[dict[int, float]], name: str, k: int = K) -> list[float]:
    return [lenskit_user(r, t, k)[name] for r, t in zip(user_lists(L), tru, strict=True)]


def test_a_user_by_hand():
    """A list of 3 for k = 5, hits at positions 1 and 3, four test items rated 4, 0, 2 and 5:
    Precision 2/3 (its own length), Recall 2/4 (min(|T|, 5) = 4), AveragePrecision
    (1 + 2/3) / min(4, 3), NDCG (1 + 1/log2 3) / (1 + 1 + 1/log2 3 + 1/2): positions 1 and 2
    both undiscounted; NDCG(gain=) (4 + 2/log2 3) / (5 + 4 + 2/log2 3 + 0)."""
    # item 6 is a stored test entry of value 0 (a positive with gain 0)
    test = sp.csr_array((np.array([4.0, 2.0, 0.0, 5.0]), np.array([1, 3, 6, 8]), [0, 4]), (1, 10))
    res = rt.evaluate(None, test, ranked=np.array([[1, 2, 3]]), k=5, profile="lenskit")
    l3 = math.log2(3)
    want = {
        "Precision": 2 / 3,
        "Recall": 2 / 4,
        "AveragePrecision": (1 + 2 / 3) / 3,
        "NDCG": (1 + 1 / l3) / (2 + 1 / l3 + 1 / 2),
        "NDCG(gain=...)": (4 + 2 / l3) / (5 + 4 + 2 / l3),
        "Hit": 1.0,
        "RecipRank": 1.0,
    }
    for name, value in want.items():
        assert _column(res, name, 5)[0] == pytest.approx(value, rel=1e-13), name
        assert lenskit_user([1, 2, 3], {1: 4.0, 6: 0.0, 3: 2.0, 8: 5.0}, 5)[name] == pytest.approx(
            value, rel=1e-13
        )
    # the variants it could be confused with give other numbers here
    other = rt.evaluate(
        None, test, ranked=np.array([[1, 2, 3]]), k=5, metrics=["p", "tap"], profile="spark"
    )
    assert other.per_user["p_at_5"][0] == pytest.approx(2 / 5)
    assert other.per_user["tap_at_5"][0] == pytest.approx((1 + 2 / 3) / 4)


@pytest.fixture(scope="module")
def data():
    return ml100k()


@pytest.mark.parametrize("k", [K, 12])  # 12: past every list (computed as LensKit does)
def test_ml100k_lists_user_by_user(data, k):
    train, test, scores = data
    L = lists(train, scores["untied"], K)  # short lists, empty lists
    res = rt.evaluate(None, test, ranked=L, k=k, profile="lenskit")
    tru = truth(test)
    for name in NAMES:
        np.testing.assert_allclose(
            _column(res, name, k), _expected(L, tru, name, k), rtol=1e-12, err_msg=name
        )


def test_scores_with_tied_values_follow_the_index_order(data):
    """From scores, ties go to the lower item index (the profile's order); train items are out of
    the lists, as LensKit's candidate selection leaves them out."""
    train, test, scores = data
    res = rt.evaluate(train, test, scores=scores["tied"], k=K, profile="lenskit")
    L = top_lists(train, scores["tied"], K)
    for name in NAMES:
        np.testing.assert_allclose(
            _column(res, name), _expected(L, truth(test), name), rtol=1e-12, err_msg=name
        )


def test_repeated_items_are_refused_by_name():
    assert lenskit_user([1, 1, 2], {1: 1.0, 3: 1.0}, 3)["Precision"] == 2 / 3  # both copies
    test = sp.csr_array((np.ones(2), ([0, 0], [1, 3])), shape=(1, 5))
    frame = pd.DataFrame({"user": [0, 0, 0], "item": [1, 1, 2], "rank": [1, 2, 3]})
    with pytest.raises(rt.InputError, match=r"'ranked'.*profile='lenskit'.*every copy"):
        rt.evaluate(None, test, ranked=frame, k=3, profile="lenskit")


# -- with LensKit installed -----------------------------------------------------------------


def _lenskit_metrics(k: int):
    metrics = pytest.importorskip("lenskit.metrics.ranking")
    return {
        "Precision": metrics.Precision(k),
        "Recall": metrics.Recall(k),
        "AveragePrecision": metrics.AveragePrecision(k),
        "NDCG": metrics.NDCG(k),
        "NDCG(gain=...)": metrics.NDCG(k, gain="rating"),
        "Hit": metrics.Hit(k),
        "RecipRank": metrics.RecipRank(k),
    }


def _measured(L: np.ndarray, tru: list[dict[int, float]], k: int) -> dict[str, list[float]]:
    from lenskit.data import ItemList

    out: dict[str, list[float]] = {name: [] for name in NAMES}
    for recs, t in zip(user_lists(L), tru, strict=True):
        rl = ItemList(item_ids=np.array(recs, dtype=np.int64), ordered=True)
        tl = ItemList(item_ids=np.array(list(t), dtype=np.int64), rating=np.array(list(t.values())))
        for name, metric in _lenskit_metrics(k).items():
            out[name].append(float(metric.measure_list(rl, tl)))
    return out


@pytest.mark.parametrize("k", [K, 12])
def test_installed_lenskit_user_by_user(data, k):
    _lenskit_metrics(k)
    train, test, scores = data
    L = lists(train, scores["untied"], K)
    res = rt.evaluate(None, test, ranked=L, k=k, profile="lenskit")
    got = _measured(L, truth(test), k)
    for name in NAMES:
        np.testing.assert_allclose(_column(res, name, k), got[name], rtol=1e-12, err_msg=name)


def test_installed_lenskit_counts_every_copy_and_orders_ties_its_own_way():
    """Why the profile refuses repeated items and documents the tie order: LensKit counts both
    copies of an item, and its top-N selection does not order tied scores by item index."""
    _lenskit_metrics(3)
    from lenskit.data import ItemList

    recs = ItemList(item_ids=np.array([1, 1, 2]), ordered=True)
    test = ItemList(item_ids=np.array([1, 3]))
    assert _lenskit_metrics(3)["Precision"].measure_list(recs, test) == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, 500).astype(np.float64)
    picked = ItemList(item_ids=np.arange(500), scores=scores).top_n(10).ids()
    assert not np.array_equal(picked, np.lexsort((np.arange(500), -scores))[:10])
