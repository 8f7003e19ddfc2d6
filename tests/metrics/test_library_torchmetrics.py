"""The ``torchmetrics`` profile against torchmetrics 1.9.0's retrieval metrics
(``torchmetrics/functional/retrieval/{precision,recall,average_precision,ndcg,reciprocal_rank,
hit_rate,r_precision}.py``; ``retrieval/base.py`` for the queries without a positive).

Each user is a query whose documents are the items not in its train row, ``preds`` the scores
and ``target`` the test values (graded for NDCG, ``> 0`` for the others). ``torchmetrics_user``
below is that code written out for one query, independently of the package (ties by item
index, the profile's order); it gives the expected values on MovieLens 100K with positive scores
and at relevance level 4 (users without a positive score 0, ``empty_target_action="neg"``). Two
departures are shown, not hidden: torchmetrics >= 1.8 drops a relevant document whose score is
<= 0 from precision, recall, MAP and MRR (the profile counts it), and its NDCG averages over
tied scores (the profile's NDCG follows the tie order; ``ties="average"`` gives torchmetrics'
number). With torchmetrics installed (the ``crosscheck`` extra), its own functions give the
same numbers user by user.
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
NAMES = list(PROFILES["torchmetrics"]["aliases"])


def torchmetrics_user(preds: np.ndarray, target: np.ndarray, k: int) -> dict[str, float]:
    """One query as torchmetrics' functional retrieval code computes it; documents sorted by
    score, ties by index."""
    order = np.lexsort((np.arange(preds.size), -preds))
    rel = target > 0
    if not rel.any():  # every function returns 0 for a query without a positive target
        return dict.fromkeys(NAMES, 0.0)
    kept = rel & (preds > 0)  # precision, recall, MAP and MRR since 1.8 (PR #3160)
    top = order[: min(k, preds.size)]
    hits = kept[top]
    positions = np.flatnonzero(hits) + 1
    disc = 1.0 / np.log2(np.arange(preds.size) + 2.0)
    disc[k:] = 0.0
    ideal = float((np.sort(target)[::-1] * disc).sum())
    dcg = float((target[order] * disc).sum())
    n_rel = int(rel.sum())
    return {
        "RetrievalPrecision": hits.sum() / k,
        "RetrievalRecall": hits.sum() / n_rel,
        "RetrievalMAP": float(np.mean(np.arange(1, positions.size + 1) / positions))
        if positions.size
        else 0.0,
        "RetrievalNormalizedDCG": dcg / ideal if ideal else 0.0,
        "RetrievalMRR": 1.0 / positions[0] if positions.size else 0.0,
        "RetrievalHitRate": float(rel[top].any()),
        "RetrievalRPrecision": rel[order[:n_rel]].sum() / n_rel,
    }


def _queries(train: sp.csr_array, test: sp.csr_array, scores: np.ndarray, level: float | None):
    """Each user with a test entry: (preds, target) over the items not in its train row."""
    out = []
    for u in range(test.shape[0]):
        lo, hi = test.indptr[u], test.indptr[u + 1]
        if hi == lo:
            continue
        pool = np.setdiff1d(
            np.arange(test.shape[1]), train.indices[train.indptr[u] : train.indptr[u + 1]]
        )
        target = np.zeros(test.shape[1])
        vals = test.data[lo:hi]
        target[test.indices[lo:hi]] = vals if level is None else np.where(vals >= level, vals, 0.0)
        out.append((u, scores[u, pool], target[pool]))
    return out


def _column(res: rt.Results, name: str) -> np.ndarray:
    metric = PROFILES["torchmetrics"]["aliases"][name]
    col = f"{metric}_at_{K}" if rt.METRICS[metric].at_k else metric
    return res.per_user[col].to_numpy(float)


@pytest.fixture(scope="module")
def data():
    train, test, scores = ml100k()
    positive = 1.0 / (1.0 + np.exp(-scores["untied"]))  # sigmoid: > 0, no ties
    return train, test, {**scores, "positive": positive}


@pytest.mark.parametrize("level", [None, 4.0])
def test_positive_scores_user_by_user(data, level):
    """At level 4, users whose test ratings are all below 4 have no positive: 0, averaged in."""
    train, test, scores = data
    res = rt.evaluate(
        train, test, scores=scores["positive"], k=K, profile="torchmetrics", relevance_level=level
    )
    queries = _queries(train, test, scores["positive"], level)
    rows = [u for u, _, _ in queries]
    if level is not None:
        assert any(not (t > 0).any() for _, _, t in queries)  # the case is exercised
    values = [torchmetrics_user(p, t, K) for _, p, t in queries]
    for name in NAMES:
        want = [v[name] for v in values]
        np.testing.assert_allclose(_column(res, name)[rows], want, rtol=1e-12, err_msg=name)


def test_nonpositive_scores_are_where_the_profile_departs(data):
    """torchmetrics >= 1.8 does not count a relevant document scored <= 0 in precision, recall,
    MAP and MRR; the profile counts it (documented in docs/guides/profiles.md). NDCG, hit rate
    and R-precision keep it, and agree."""
    train, test, scores = data
    negative = scores["untied"] - 100.0  # the same ranking, every score < 0
    res = rt.evaluate(train, test, scores=negative, k=K, profile="torchmetrics")
    queries = _queries(train, test, negative, None)
    rows = [u for u, _, _ in queries]
    values = [torchmetrics_user(p, t, K) for _, p, t in queries]
    for name in NAMES:
        want = [v[name] for v in values]
        same = np.allclose(_column(res, name)[rows], want, rtol=1e-12)
        departs = name in ("RetrievalPrecision", "RetrievalRecall", "RetrievalMAP", "RetrievalMRR")
        assert same != departs, name


def test_ndcg_averages_tied_scores(data):
    """torchmetrics' NDCG gives tied documents their average discount (sklearn's
    ``_tie_average_dcg``): the engine's ``ties="average"``, not the profile's index order."""
    train, test, scores = data
    res = rt.evaluate(train, test, scores=scores["tied"], k=K, metrics=["ndcg"], ties="average")
    queries = _queries(train, test, scores["tied"], None)
    want = []
    for _, p, t in queries:  # the expectation over tied orders, by hand: group by score
        disc = 1.0 / np.log2(np.arange(p.size) + 2.0)
        disc[K:] = 0.0
        order = np.argsort(-p, kind="stable")
        ps, ts = p[order], t[order]
        dcg, start = 0.0, 0
        for end in np.append(np.flatnonzero(np.diff(ps)) + 1, p.size):
            dcg += ts[start:end].mean() * disc[start:end].sum()
            start = end
        want.append(dcg / (np.sort(t)[::-1] * disc).sum())
    rows = [u for u, _, _ in queries]
    np.testing.assert_allclose(res.per_user["ndcg_at_10"].to_numpy(float)[rows], want, rtol=1e-12)
    prof = rt.evaluate(train, test, scores=scores["tied"], k=K, profile="torchmetrics")
    assert not np.allclose(prof.per_user["ndcg_at_10"].to_numpy(float)[rows], want)


# -- with torchmetrics installed --------------------------------------------------------------


def _functional():
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchmetrics.functional.retrieval")
    return torch, {
        "RetrievalPrecision": lambda p, t: F.retrieval_precision(p, t > 0, top_k=K),
        "RetrievalRecall": lambda p, t: F.retrieval_recall(p, t > 0, top_k=K),
        "RetrievalMAP": lambda p, t: F.retrieval_average_precision(p, t > 0, top_k=K),
        "RetrievalNormalizedDCG": lambda p, t: F.retrieval_normalized_dcg(p, t, top_k=K),
        "RetrievalMRR": lambda p, t: F.retrieval_reciprocal_rank(p, t > 0, top_k=K),
        "RetrievalHitRate": lambda p, t: F.retrieval_hit_rate(p, t > 0, top_k=K),
        "RetrievalRPrecision": lambda p, t: F.retrieval_r_precision(p, t > 0),
    }


@pytest.mark.parametrize("level", [None, 4.0])
def test_installed_torchmetrics_user_by_user(data, level):
    torch, fns = _functional()
    train, test, scores = data
    res = rt.evaluate(
        train, test, scores=scores["positive"], k=K, profile="torchmetrics", relevance_level=level
    )
    queries = _queries(train, test, scores["positive"], level)[:60]  # 60 users: fast enough
    rows = [u for u, _, _ in queries]
    for name, fn in fns.items():
        want = [
            float(fn(torch.from_numpy(p), torch.from_numpy(t))) if (t > 0).any() else 0.0
            for _, p, t in queries
        ]
        np.testing.assert_allclose(_column(res, name)[rows], want, rtol=1e-6, err_msg=name)


def test_installed_torchmetrics_means_and_ties(data):
    """The module API's mean over the queries (``empty_target_action="neg"``) at level 4, and the
    tie-averaged NDCG on tied popularity scores."""
    torch, _ = _functional()
    from torchmetrics.retrieval import RetrievalNormalizedDCG, RetrievalPrecision

    train, test, scores = data
    queries = _queries(train, test, scores["positive"], 4.0)
    idx = torch.cat([torch.full((p.size,), u) for u, p, _ in queries])
    preds = torch.cat([torch.from_numpy(p) for _, p, _ in queries])
    target = torch.cat([torch.from_numpy(t > 0) for _, _, t in queries])
    res = rt.evaluate(
        train, test, scores=scores["positive"], k=K, profile="torchmetrics", relevance_level=4.0
    )
    got = float(RetrievalPrecision(top_k=K)(preds, target, indexes=idx))
    assert res.means["p_at_10"] == pytest.approx(got, rel=1e-6)
    tied = _queries(train, test, scores["tied"], None)
    avg = rt.evaluate(train, test, scores=scores["tied"], k=K, metrics=["ndcg"], ties="average")
    metric = RetrievalNormalizedDCG(top_k=K)
    got = float(
        metric(
            torch.cat([torch.from_numpy(p) for _, p, _ in tied]),
            torch.cat([torch.from_numpy(t) for _, _, t in tied]).long(),
            indexes=torch.cat([torch.full((p.size,), u) for u, p, _ in tied]),
        )
    )
    assert avg.means["ndcg_at_10"] == pytest.approx(got, rel=1e-5)
    assert not math.isnan(got)
