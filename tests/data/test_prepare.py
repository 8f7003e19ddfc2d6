"""Preparation: filters, k-core, implicit conversion, statistics and fingerprints."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking import InputError
from recoeval_tracking.data import (
    filter_min_interactions,
    from_dataframe,
    gini,
    k_core,
    make_synthetic,
    to_implicit,
)


def _df(pairs, values=None):
    u, i = zip(*pairs)
    d = {"user": list(u), "item": list(i)}
    d["value"] = values if values is not None else [1.0] * len(pairs)
    return from_dataframe(pd.DataFrame(d))


def _naive_k_core(pairs, k_user, k_item):
    pairs = set(pairs)
    while True:
        uc, ic = {}, {}
        for u, i in pairs:
            uc[u] = uc.get(u, 0) + 1
            ic[i] = ic.get(i, 0) + 1
        keep = {(u, i) for u, i in pairs if uc[u] >= k_user and ic[i] >= k_item}
        if keep == pairs:
            return keep
        pairs = keep


def test_k_core_matches_naive_fixed_point():
    rng = np.random.default_rng(5)
    pairs = sorted(
        {(int(u), int(i)) for u, i in zip(rng.integers(0, 60, 500), rng.integers(0, 40, 500))}
    )
    X = _df(pairs)
    Y = k_core(X, 6, 8)
    got = set(zip(Y.to_dataframe().user, Y.to_dataframe().item))
    assert got == _naive_k_core(pairs, 6, 8)
    assert np.all(Y.user_counts() >= 6) and np.all(Y.item_counts() >= 8)
    rep = Y.reports[-1]
    assert rep.step == "k_core" and rep.details["converged"]
    assert rep.interactions_removed == len(pairs) - len(got)
    assert rep.users_removed == X.n_users - Y.n_users


def test_filter_single_pass_reports_and_keeps_shape_when_asked():
    # user 0 has 3 items, user 1 has 1; item "c" is seen once
    X = _df([(0, "a"), (0, "b"), (0, "c"), (1, "a")])
    Y = filter_min_interactions(X, min_user=2, min_item=1, drop_empty=False)
    assert Y.shape == X.shape and Y.nnz == 3
    assert Y.reports[-1].interactions_removed == 1
    Z = filter_min_interactions(X, min_user=2, min_item=2)
    # single pass on input counts: user 1 removed, item "a" (2) kept, b and c (1) removed
    assert Z.to_dataframe()[["user", "item"]].values.tolist() == [[0, "a"]]
    assert (Z.reports[-1].users_removed, Z.reports[-1].items_removed) == (1, 2)


def test_to_implicit_formulas():
    X = _df([(0, 0), (0, 1), (1, 0)], values=[1.0, 4.0, 5.0])
    b = to_implicit(X, "binarize", threshold=4)
    assert b.matrix.toarray().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert b.reports[-1].interactions_removed == 1
    c = to_implicit(X, "confidence", alpha=40.0)
    assert c.matrix.data.tolist() == [1 + 40 * 1.0, 1 + 40 * 4.0, 1 + 40 * 5.0]
    lg = to_implicit(X, "log", alpha=2.0, epsilon=0.5)
    np.testing.assert_allclose(lg.matrix.data, [1 + 2 * math.log(1 + r / 0.5) for r in (1, 4, 5)])
    with pytest.raises(InputError, match="'method' parameter of to_implicit"):
        to_implicit(X, "square")


def test_stats_and_gini_by_definition():
    X = _df([(0, 0), (0, 1), (1, 0)])
    s = X.stats()
    assert (s["users"], s["items"], s["interactions"]) == (2, 2, 3)
    assert s["density"] == 3 / 4
    # item counts (2, 1): G = 2*(1*1 + 2*2)/(2*3) - 3/2 = 1/6
    assert s["popularity_gini"] == pytest.approx(1 / 6)
    assert gini(np.array([5, 5, 5])) == pytest.approx(0.0)
    assert gini(np.array([0, 0, 0, 9])) == pytest.approx(0.75)  # (n-1)/n when one holds all


def test_fingerprint_stable_and_sensitive():
    a = _df([(0, 0), (1, 1)])
    b = _df([(1, 1), (0, 0)])  # same content, other row order
    assert a.fingerprint() == b.fingerprint() and len(a.fingerprint()) == 16
    c = _df([(0, 0), (1, 1)], values=[1.0, 2.0])
    assert c.fingerprint() != a.fingerprint()


def test_synthetic_seeded_and_shaped():
    a = make_synthetic(300, 120, 4000, seed=11)
    b = make_synthetic(300, 120, 4000, seed=11)
    c = make_synthetic(300, 120, 4000, seed=12)
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert a.shape == (300, 120) and a.nnz == 4000 - a.reports[0].details["capped_by_catalogue"]
    assert np.all(a.user_counts() >= 1)
    assert set(np.unique(a.matrix.data)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert a.matrix.has_canonical_format
    t = a.timestamps.data
    assert t.min() >= 1_000_000_000 and t.max() < 1_000_000_000 + 3 * 365 * 86400
    # power-law popularity: the item counts are far from uniform
    assert a.stats()["popularity_gini"] > 0.3


def test_synthetic_has_learnable_structure():
    # users share topics: a rank-8 truncated SVD explains much more of the matrix than
    # the same rank on a matrix with the same row/column counts and random placement
    X = make_synthetic(400, 200, 8000, n_factors=8, noise=0.0, seed=4)
    A = (X.matrix.toarray() > 0).astype(float)
    rng = np.random.default_rng(0)
    R = np.zeros_like(A)
    for u, n in enumerate(A.sum(1).astype(int)):
        R[u, rng.choice(200, n, replace=False, p=A.sum(0) / A.sum())] = 1.0

    def explained(M):
        s = np.linalg.svd(M, compute_uv=False)
        return (s[:8] ** 2).sum() / (s**2).sum()

    assert explained(A) > explained(R) + 0.1


def test_synthetic_rejects_bad_sizes():
    with pytest.raises(InputError, match="'n_users' parameter of make_synthetic"):
        make_synthetic(0, 10)
    with pytest.raises(InputError, match="'noise' parameter of make_synthetic"):
        make_synthetic(10, 10, noise=2.0)
