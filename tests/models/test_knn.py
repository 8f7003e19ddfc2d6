"""Item-KNN with (shrunk) cosine similarity, scored through the callable path."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import CallableScores, InputError
from recoeval_tracking.models import ItemKNNModel, PopularityModel, cosine_topk


def _brute_force_similarity(R: np.ndarray, k: int, shrinkage: float) -> np.ndarray:
    """Dense cosine of every column pair, zero diagonal, then the k largest per row (lower index wins ties)."""
    n = R.shape[1]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            den = np.linalg.norm(R[:, i]) * np.linalg.norm(R[:, j]) + shrinkage
            S[i, j] = R[:, i] @ R[:, j] / den if den > 0 else 0.0
    out = np.zeros_like(S)
    for i in range(n):
        order = sorted((j for j in range(n) if S[i, j] != 0), key=lambda j: (-S[i, j], j))[:k]
        out[i, order] = S[i, order]
    return out


@pytest.mark.parametrize("k, shrinkage", [(2, 0.0), (3, 1.0), (10, 0.0)])
def test_similarity_equals_brute_force_cosine(k, shrinkage):
    X = sp.random_array((25, 9), density=0.3, random_state=4, format="csr")
    S = cosine_topk(X, k, shrinkage)
    assert S.shape == (9, 9) and S.format == "csr"
    np.testing.assert_allclose(
        S.toarray(), _brute_force_similarity(X.toarray(), k, shrinkage), rtol=1e-12, atol=0
    )
    assert np.all(np.diff(S.indptr) <= k)


def test_ties_keep_the_lower_item_index():
    # items 0-3 are identical columns (cosine 1 with each other); item 4 is orthogonal to them
    R = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 0], [0, 0, 0, 0, 1]], dtype=float)
    S = cosine_topk(sp.csr_array(R), 2).toarray()
    np.testing.assert_allclose(S[0], [0, 1, 1, 0, 0], rtol=1e-15)
    np.testing.assert_allclose(S[3], [1, 1, 0, 0, 0], rtol=1e-15)
    np.testing.assert_array_equal(S[4], [0, 0, 0, 0, 0])


def test_small_blocks_give_the_same_similarity(monkeypatch):
    import recoeval_tracking.models._knn as knn

    X = sp.random_array((40, 30), density=0.2, random_state=5, format="csr")
    whole = cosine_topk(X, 4).toarray()
    monkeypatch.setattr(knn, "_BLOCK_ENTRIES", 70)  # blocks of 2 item rows
    np.testing.assert_array_equal(cosine_topk(X, 4).toarray(), whole)


def test_scores_are_history_times_similarity():
    X = sp.random_array((30, 12), density=0.25, random_state=6, format="csr")
    model = ItemKNNModel(neighbours=3).fit(X)
    src = model.score_source()
    assert isinstance(src, CallableScores)
    S = _brute_force_similarity(X.toarray(), 3, 0.0)
    users = np.array([5, 0, 29, 5])
    np.testing.assert_allclose(src.block(users), X.toarray()[users] @ S, rtol=1e-12, atol=1e-15)


def test_knn_beats_popularity_on_low_rank_data(low_rank, recall_at_10):
    train, test = low_rank
    users = np.arange(train.shape[0])
    r_knn = recall_at_10(
        ItemKNNModel(neighbours=50).fit(train).score_source().block(users), train, test
    )
    r_pop = recall_at_10(PopularityModel().fit(train).score_source().block(users), train, test)
    assert r_knn > 1.5 * r_pop


@pytest.mark.parametrize(
    "params, bad", [({"neighbours": 0}, "neighbours"), ({"shrinkage": -0.5}, "shrinkage")]
)
def test_bad_parameters(params, bad):
    with pytest.raises(InputError, match=f"'{bad}' parameter of ItemKNNModel"):
        ItemKNNModel(**params)
