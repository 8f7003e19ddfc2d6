"""MovieLens 100K lists for the library cross-checks (tests/metrics/test_library_*.py).

The package's random per-user holdout (20 %, seed 0) of the first ``N_USERS`` users, scored by
seeded random float64 factors (no tied scores, some of them negative) and by item popularity plus
one (heavy ties, every score > 0); ``lists(...)`` gives each user's top-k list of the items not
in train, tied scores by item index (the profiles' order), with every 7th user's list cut to 4
items (shorter than k) and every 11th user left without a list.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from shared_paths import shared_file

N_USERS = 150


def ml100k() -> tuple[sp.csr_array, sp.csr_array, dict[str, np.ndarray]]:
    """``(train, test, scores)``: the ratings as test values, ``scores["untied"]`` and
    ``scores["tied"]`` dense (users x items)."""
    from recoeval_tracking.data import load_movielens_100k
    from recoeval_tracking.splitting import random_holdout

    split = random_holdout(load_movielens_100k(shared_file("ml-100k", "u.data")), 0.2, seed=0)
    tr = sp.csr_array(split.train.matrix)[:N_USERS]
    te = sp.csr_array(split.test.matrix)[:N_USERS]
    n = tr.shape[1]
    rng = np.random.default_rng(0)
    factors = rng.standard_normal((N_USERS, 8)) @ rng.standard_normal((n, 8)).T
    pop = np.bincount(tr.indices, minlength=n).astype(np.float64) + 1.0
    return tr, te, {"untied": factors, "tied": np.tile(pop, (N_USERS, 1))}


def top_lists(train: sp.csr_array, scores: np.ndarray, k: int) -> np.ndarray:
    """Each user's top-k items not in train, tied scores by item index (-1 padded)."""
    S = np.array(scores, dtype=np.float64)
    S[train.nonzero()] = -np.inf
    order = np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)[:, :k]
    return np.where(np.isfinite(np.take_along_axis(S, order, axis=1)), order, -1)


def lists(train: sp.csr_array, scores: np.ndarray, k: int) -> np.ndarray:
    """:func:`top_lists` with every 7th user's list cut to 4 items and every 11th emptied."""
    out = top_lists(train, scores, k)
    out[::7, 4:] = -1
    out[::11] = -1
    return out


def user_lists(L: np.ndarray) -> list[list[int]]:
    return [[int(i) for i in row if i >= 0] for row in L]


def truth(test: sp.csr_array) -> list[dict[int, float]]:
    """Each user's test items with their values."""
    return [
        dict(
            zip(
                test.indices[test.indptr[u] : test.indptr[u + 1]].tolist(),
                test.data[test.indptr[u] : test.indptr[u + 1]].tolist(),
                strict=True,
            )
        )
        for u in range(test.shape[0])
    ]
