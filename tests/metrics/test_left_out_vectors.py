"""ILS and diversity need item vectors: a run whose model gives none records them as left out,
with the reason, in its definitions and its summary (they were dropped without a word)."""

import numpy as np
import scipy.sparse as sp

import recoeval_tracking as rt


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    train = sp.csr_array((rng.random((30, 25)) < 0.2).astype(np.float64))
    test = sp.csr_array(((rng.random((30, 25)) < 0.15) & (train.toarray() == 0)).astype(float))
    return train, test, rng.random((30, 25))


def test_without_item_vectors_ils_and_diversity_are_left_out_with_the_reason():
    train, test, scores = _data()
    res = rt.evaluate(train, test, scores=scores, metrics="all", k=5)
    assert "ils_at_5" not in res.per_user.columns
    assert "diversity_at_5" not in res.per_user.columns
    left = res.definitions["left_out"]
    assert set(left) == {"ils", "diversity"}
    assert all("needs item vectors" in reason for reason in left.values())
    assert "left out: diversity, ils (needs item vectors" in res.summary()


def test_with_item_features_nothing_is_left_out():
    train, test, scores = _data()
    features = np.random.default_rng(1).random((25, 4))
    with_vectors = rt.evaluate(
        train, test, scores=scores, metrics="all", k=5, item_features=features
    )
    without = rt.evaluate(train, test, scores=scores, metrics=["ndcg", "p"], k=5)
    assert "left_out" not in with_vectors.definitions
    assert "ils_at_5" in with_vectors.per_user.columns
    assert "left out" not in with_vectors.summary() and "left out" not in without.summary()
    # named explicitly, ILS is left out the same way, and the others are computed
    named = rt.evaluate(train, test, scores=scores, metrics=["ndcg", "p", "ils"], k=5)
    assert list(named.definitions["left_out"]) == ["ils"]
    assert {"ndcg_at_5", "p_at_5"} <= set(named.per_user.columns)
