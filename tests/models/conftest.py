"""Small synthetic implicit-feedback data shared by the model tests."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def low_rank_split(
    n_users: int = 500,
    n_items: int = 300,
    rank: int = 4,
    per_user: int = 30,
    test_fraction: float = 0.25,
    seed: int = 0,
) -> tuple[sp.csr_array, sp.csr_array]:
    """Interactions drawn from a low-rank taste model plus item popularity, split per user.

    User ``u`` picks ``per_user`` distinct items with probability proportional to
    ``exp(3 <a_u, b_i> + log pop_i)``; a random quarter of each user's items is held out.
    """
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_users, rank)) / np.sqrt(rank)
    B = rng.standard_normal((n_items, rank)) / np.sqrt(rank)
    log_pop = np.log(1.0 / np.arange(1, n_items + 1) ** 0.5)
    logits = 3.0 * A @ B.T + log_pop[None, :]
    train_rows, train_cols, test_rows, test_cols = [], [], [], []
    n_test = int(round(per_user * test_fraction))
    for u in range(n_users):
        p = np.exp(logits[u] - logits[u].max())
        items = rng.choice(n_items, size=per_user, replace=False, p=p / p.sum())
        test_rows += [u] * n_test
        test_cols += list(items[:n_test])
        train_rows += [u] * (per_user - n_test)
        train_cols += list(items[n_test:])
    train = sp.csr_array(
        (np.ones(len(train_rows)), (train_rows, train_cols)), shape=(n_users, n_items)
    )
    test = sp.csr_array((np.ones(len(test_rows)), (test_rows, test_cols)), shape=(n_users, n_items))
    train.sort_indices()
    test.sort_indices()
    return train, test


def brute_force_recall(
    scores: np.ndarray, train: sp.csr_array, test: sp.csr_array, k: int = 10
) -> float:
    """Mean recall@k: rank every non-train item by score (ties by item index), count test hits."""
    S = np.array(scores, dtype=np.float64)
    S[train.toarray() != 0] = -np.inf
    top = np.argsort(-S, axis=1, kind="stable")[:, :k]
    T = test.toarray() != 0
    hits = np.take_along_axis(T, top, axis=1).sum(axis=1)
    n_pos = T.sum(axis=1)
    ok = n_pos > 0
    return float(np.mean(hits[ok] / np.minimum(n_pos[ok], k)))


@pytest.fixture(scope="session")
def low_rank() -> tuple[sp.csr_array, sp.csr_array]:
    return low_rank_split()


@pytest.fixture(scope="session")
def recall_at_10():
    """The brute-force recall@10 reference, as a fixture (test modules do not import each other)."""
    return brute_force_recall
