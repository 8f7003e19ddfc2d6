"""RecBole's top-K order (``recbole/evaluator/collector.py``, 1.2.1: ``torch.topk(scores,
max(topk), dim=-1)`` over each user's full scores, train items at -inf) against the ``recbole``
profile's, with torch installed (the ``crosscheck`` extra; skipped without it).

Without tied scores the profile's top-K lists are torch's, item for item, and so are its
metrics (RecBole's formulas on torch's lists: tests/metrics/test_profile_formulas.py writes them
out). With tied scores ``torch.topk`` does not order them by item index (its order follows its
selection algorithm), so the profile, which breaks ties by item index, reproduces RecBole only
for the users whose top-K holds no tie across the cutoff: the per-user ``n_tied_topk``
(``return_topk=True``) says which users those are, and every user whose list differs has one.
"""

from __future__ import annotations

import numpy as np
import pytest

import recoeval_tracking as rt

from ._peer_lists import ml100k
from .test_profile_formulas import recbole_user

K = 10


@pytest.fixture(scope="module")
def torch_topk():
    torch = pytest.importorskip("torch")
    train, test, scores = ml100k()

    def topk(S: np.ndarray) -> np.ndarray:
        t = torch.from_numpy(np.asarray(S, dtype=np.float32).copy())
        rows, cols = train.nonzero()
        t[rows, cols] = -np.inf
        return torch.topk(t, K, dim=-1).indices.numpy()

    return train, test, scores, topk


def test_torch_topk_does_not_order_ties_by_index(torch_topk):
    torch = pytest.importorskip("torch")
    picked = torch.topk(torch.zeros(20), 5).indices.numpy()
    assert not np.array_equal(picked, np.arange(5))


def test_untied_scores_give_torchs_lists_and_recboles_numbers(torch_topk):
    train, test, scores, topk = torch_topk
    S = scores["untied"].astype(np.float32)
    lists = topk(S)
    res = rt.evaluate(train, test, scores=S, k=K, profile="recbole", return_topk=True)
    np.testing.assert_array_equal(res.topk, lists)
    tru = [
        dict.fromkeys(test.indices[test.indptr[u] : test.indptr[u + 1]], 1.0)
        for u in range(test.shape[0])
    ]
    values = [recbole_user(list(lists[u]), tru[u], K) for u in range(test.shape[0])]
    pairs = {"hit": "hit", "mrr": "rr", "ndcg": "ndcg_bin", "precision": "p", "recall": "r"}
    pairs["map"] = "tap"
    for name, metric in pairs.items():
        want = [v[name] for v in values]
        np.testing.assert_allclose(res.per_user[f"{metric}_at_{K}"], want, rtol=1e-12, err_msg=name)


def test_tied_scores_differ_only_where_the_list_holds_a_tie(torch_topk):
    train, test, scores, topk = torch_topk
    S = scores["tied"].astype(np.float32)
    lists = topk(S)
    res = rt.evaluate(train, test, scores=S, k=K, profile="recbole", return_topk=True)
    differ = (res.topk != lists).any(axis=1)
    assert differ.any()  # torch's tie order is not the index order on these scores
    assert (res.per_user["n_tied_topk"].to_numpy()[differ] > 0).all()
