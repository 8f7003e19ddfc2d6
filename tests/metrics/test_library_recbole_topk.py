"""RecBole's top-K order (``recbole/evaluator/collector.py``, 1.2.1: ``torch.topk(scores,
max(topk), dim=-1)`` over each user's full scores, train items at -inf) against the ``recbole``
profile's, with torch installed (the ``crosscheck`` extra; skipped without it).

Without tied scores the profile's top-K lists are torch's, item for item, and so are its
metrics (RecBole's formulas on torch's lists: tests/metrics/test_profile_formulas.py writes them
out). With tied scores ``torch.topk`` does not order them by item index (its order follows its
selection algorithm), so the profile, which breaks ties by item index, reproduces RecBole only
for the users whose top-K holds no tie across the cutoff: the per-user ``n_tied_topk``
(``return_topk=True``) says which users those are, and every user whose list differs has one.

torch's own order among tied scores, read from torch on CPU (not from this package): its
``topk`` picks the tied items by its selection algorithm, neither in index order nor, in general,
the lowest indices at all (20 equal scores, k = 10: items 10 to 19), also on rows far longer
than a SIMD register; the pick is repeatable and the same for every row of a batch, but depends
on the row's length and k, an implementation detail of torch. The profile's order is that of
torch's stable sort (``torch.sort(..., descending=True, stable=True)``), item index among ties.
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


@pytest.mark.parametrize("n", [20, 64, 100, 1682])
def test_torch_topk_tie_pick_is_its_own_on_rows_past_the_simd_width(n):
    """``n`` equal scores: ``torch.topk`` returns ``K`` distinct items of the tie, not those of
    the stable sort (the first ``K`` indices, in order); the pick is repeatable and every row of a
    batch gets the same one."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(n)
    picked = torch.topk(x, K).indices
    stable = torch.sort(x, descending=True, stable=True).indices[:K]
    np.testing.assert_array_equal(stable.numpy(), np.arange(K))
    assert len(set(picked.tolist())) == K
    assert not torch.equal(picked, stable)
    assert torch.equal(torch.topk(x, K).indices, picked)
    assert torch.equal(torch.topk(x.repeat(3, 1), K, dim=-1).indices, picked.repeat(3, 1))


def test_torch_topk_tie_pick_leaves_out_the_lowest_indices():
    """Not only the order: which tied items make the top ``K`` is torch's too (20 equal scores
    give none of the items 0 to 9 with torch 2.x on CPU)."""
    torch = pytest.importorskip("torch")
    picked = {int(i) for i in torch.topk(torch.zeros(20), K).indices}
    assert picked != set(range(K))


@pytest.mark.parametrize("kind", ["untied", "tied", "two_values"])
def test_profile_lists_are_torchs_stable_sort(torch_topk, kind):
    """The order the profile assumes, from torch itself: its lists are those of torch's stable
    descending sort, train items at -inf (popularity scores tie heavily; two values tie some
    560 items of a 1682-item row at the top)."""
    torch = pytest.importorskip("torch")
    train, test, scores, _ = torch_topk
    n = scores["tied"].shape[1]
    two = np.tile((np.arange(n) % 3 == 0).astype(np.float64), (scores["tied"].shape[0], 1))
    S = two if kind == "two_values" else scores[kind]
    t = torch.from_numpy(np.array(S, dtype=np.float64))
    rows, cols = train.nonzero()
    t[rows, cols] = -np.inf
    stable = torch.sort(t, dim=-1, descending=True, stable=True).indices[:, :K].numpy()
    res = rt.evaluate(train, test, scores=S, k=K, profile="recbole", return_topk=True)
    np.testing.assert_array_equal(res.topk, stable)
