"""The within-row rank the splits are built on, against a plain per-row Python sort."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking.data import Interactions
from recoeval_tracking.splitting._split import within_row_rank


def _reference(indptr, key, tie):
    rank = np.empty(len(key), dtype=np.int64)
    for r in range(len(indptr) - 1):
        pos = list(range(indptr[r], indptr[r + 1]))
        # sorted by key, then tie, then CSR position (a stable sort)
        pos.sort(key=lambda p: (key[p], 0.0 if tie is None else tie[p], p))
        for j, p in enumerate(pos):
            rank[p] = j
    return rank


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_ties", [False, True])
def test_rank_matches_a_per_row_sort_with_many_ties(seed, with_ties):
    rng = np.random.default_rng(seed)
    M = sp.random(40, 30, density=0.3, format="csr", random_state=seed)
    M.data[:] = 1.0
    X = Interactions(sp.csr_array(M), np.arange(40), np.arange(30))
    key = rng.integers(0, 3, X.nnz).astype(np.float64)  # three values: many ties
    tie = rng.random(X.nnz) if with_ties else None
    got = within_row_rank(X, key, random_ties=tie)
    indptr = X.matrix.indptr
    assert np.array_equal(got, _reference(indptr, key, tie))


def test_worked_example():
    # row 0: keys 2, 1, 1 -> the two 1s first, in column order; row 1 empty; row 2: 0, 0
    M = sp.csr_array((np.ones(5), [0, 1, 2, 0, 1], [0, 3, 3, 5]), shape=(3, 3))
    X = Interactions(M, np.arange(3), np.arange(3))
    assert within_row_rank(X, np.array([2.0, 1, 1, 0, 0])).tolist() == [2, 0, 1, 0, 1]
    ties = np.array([0.0, 0.9, 0.1, 0.5, 0.2])
    assert within_row_rank(X, np.array([2.0, 1, 1, 0, 0]), random_ties=ties).tolist() == [
        2,
        1,
        0,
        1,
        0,
    ]
