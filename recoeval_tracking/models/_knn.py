r"""Item-based nearest neighbours with cosine similarity (Sarwar et al. 2001; Deshpande & Karypis 2004).

The similarity of items :math:`i` and :math:`j` is the cosine of their training columns, with an
optional shrinkage term :math:`h \ge 0` that damps similarities computed from little support
(as in the ItemKNN-CF baseline of Ferrari Dacrema, Cremonesi & Jannach 2019):

.. math:: s_{ij} = \frac{r_{\cdot i}^\top r_{\cdot j}}{\lVert r_{\cdot i}\rVert\,\lVert r_{\cdot j}\rVert + h},
          \qquad s_{ii} = 0.

Each row of the similarity matrix keeps only its ``neighbours`` largest entries (ties broken by
the lower item index), giving a sparse :math:`S`. The score of user :math:`u` for item :math:`j` is

.. math:: \hat r_{uj} = \sum_i r_{ui}\, s_{ij},

i.e. each item of the user's history votes for its neighbours. Scores are computed for a block
of users at a time as ``X[users] @ S`` (accumulated straight into the dense block) through
:class:`~recoeval_tracking.scores.CallableScores`; no factors are involved.

References
----------
B. Sarwar, G. Karypis, J. Konstan and J. Riedl, "Item-based collaborative filtering
recommendation algorithms", WWW 2001.
M. Deshpande and G. Karypis, "Item-based top-N recommendation algorithms", ACM TOIS 22(1), 2004.
M. Ferrari Dacrema, P. Cremonesi and D. Jannach, "Are we really making much progress? A worrying
analysis of recent neural recommendation approaches", RecSys 2019.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from .._validation import as_csr, check_float, check_int
from ..scores import ScoreSource
from ._base import Model

__all__ = ["ItemKNNModel", "cosine_topk"]

# Bound on the entries of one block of the item x item co-occurrence product (about 100 MB).
_BLOCK_ENTRIES = 1 << 23


@njit(parallel=True, cache=True)
def _prune_rows(
    indptr: np.ndarray,
    indices: np.ndarray,
    dots: np.ndarray,
    norms: np.ndarray,
    row0: int,
    shrinkage: float,
    k: int,
    out_idx: np.ndarray,
    out_val: np.ndarray,
    out_cnt: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Turn rows of co-occurrence dot products into their top-``k`` cosine similarities."""
    n_rows = indptr.shape[0] - 1
    for r in prange(n_rows):
        i = row0 + r
        start = indptr[r]
        cnt = indptr[r + 1] - start
        sims = np.empty(cnt, dtype=np.float64)
        for t in range(cnt):
            j = indices[start + t]
            denom = norms[i] * norms[j] + shrinkage
            if j == i or denom <= 0.0:
                sims[t] = 0.0
            else:
                sims[t] = dots[start + t] / denom
        neg = np.empty(cnt, dtype=np.float64)
        for t in range(cnt):
            neg[t] = -sims[t]
        order = np.argsort(neg, kind="mergesort")  # stable: ties keep the column order
        c = 0
        for t in order:
            if c == k:
                break
            if sims[t] == 0.0:
                continue
            out_idx[i, c] = indices[start + t]
            out_val[i, c] = sims[t]
            c += 1
        out_cnt[i] = c


@njit(parallel=True, cache=True)
def _score_block(
    users: np.ndarray,
    x_indptr: np.ndarray,
    x_indices: np.ndarray,
    x_data: np.ndarray,
    s_indptr: np.ndarray,
    s_indices: np.ndarray,
    s_data: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[b] = X[users[b]] @ S`` for sparse ``X`` and ``S``, one user per iteration.

    Each user's row is accumulated in a fixed order (history items, then their neighbours), so
    the result does not depend on the thread count.
    """
    for b in prange(users.shape[0]):
        u = users[b]
        for j in range(out.shape[1]):
            out[b, j] = 0.0
        for t in range(x_indptr[u], x_indptr[u + 1]):
            i = x_indices[t]
            r = x_data[t]
            for q in range(s_indptr[i], s_indptr[i + 1]):
                out[b, s_indices[q]] += r * s_data[q]


def cosine_topk(X: Any, neighbours: int, shrinkage: float = 0.0) -> sp.csr_array:
    r"""Sparse item x item cosine similarities of the columns of ``X``, top ``neighbours`` per row.

    Parameters
    ----------
    X : scipy.sparse array or matrix, shape (n_users, n_items)
    neighbours : int
        Number of entries kept per row (the most similar items, ties broken by lower index).
    shrinkage : float, default 0
        :math:`h` in :math:`s_{ij} = r_{\cdot i}^\top r_{\cdot j} / (\lVert r_{\cdot i}\rVert
        \lVert r_{\cdot j}\rVert + h)`.

    Returns
    -------
    scipy.sparse.csr_array, shape (n_items, n_items), float64
        Row :math:`i` holds the kept similarities of item :math:`i` to its neighbours; the
        diagonal and zero similarities are not stored.
    """
    func = "cosine_topk"
    X = as_csr(X, "X", func)
    neighbours = check_int(neighbours, "neighbours", func, minimum=1)
    shrinkage = check_float(shrinkage, "shrinkage", func, minimum=0.0)
    X64 = sp.csr_array(X, dtype=np.float64)
    n_items = X64.shape[1]
    k = min(neighbours, max(n_items - 1, 1))
    norms = np.sqrt(np.bincount(X64.indices, weights=X64.data**2, minlength=n_items))
    XT = sp.csr_array(X64.T)
    out_idx = np.zeros((n_items, k), dtype=np.int64)
    out_val = np.zeros((n_items, k), dtype=np.float64)
    out_cnt = np.zeros(n_items, dtype=np.int64)
    step = max(1, min(n_items, _BLOCK_ENTRIES // max(n_items, 1)))
    for row0 in range(0, n_items, step):
        D = sp.csr_array(XT[row0 : row0 + step] @ X64)
        D.sum_duplicates()
        D.sort_indices()
        _prune_rows(
            np.asarray(D.indptr, dtype=np.int64),
            np.asarray(D.indices, dtype=np.int64),
            np.asarray(D.data, dtype=np.float64),
            norms,
            row0,
            shrinkage,
            k,
            out_idx,
            out_val,
            out_cnt,
        )
    indptr = np.zeros(n_items + 1, dtype=np.int64)
    np.cumsum(out_cnt, out=indptr[1:])
    keep = np.arange(k)[None, :] < out_cnt[:, None]
    cols = out_idx[keep]
    vals = out_val[keep]
    S = sp.csr_array((vals, cols, indptr), shape=(n_items, n_items))
    S.sort_indices()
    return S


class ItemKNNModel(Model):
    r"""Item-based k-nearest-neighbours with (shrunk) cosine similarity.

    ``fit`` computes :math:`S` with :func:`cosine_topk`; the score of user :math:`u` for item
    :math:`j` is :math:`\sum_i r_{ui} s_{ij}` (see the module docstring for the formulas and the
    references). Scores reach the evaluator through a scorer callable, one block of users at a
    time, as ``X[users] @ S``.

    Parameters
    ----------
    neighbours : int, default 100
        Most similar items kept per item.
    shrinkage : float, default 0.0
        Shrinkage :math:`h \ge 0` added to the cosine denominator.
    """

    name = "item_knn"

    def __init__(self, neighbours: int = 100, shrinkage: float = 0.0) -> None:
        super().__init__()
        self.neighbours = check_int(neighbours, "neighbours", "ItemKNNModel", minimum=1)
        self.shrinkage = check_float(shrinkage, "shrinkage", "ItemKNNModel", minimum=0.0)
        self.similarity_: sp.csr_array | None = None
        self._kernel_args: tuple[np.ndarray, ...] = ()

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        X64 = sp.csr_array(X, dtype=np.float64)
        self.similarity_ = cosine_topk(X64, self.neighbours, self.shrinkage)
        self._kernel_args = tuple(
            np.asarray(a, dtype=dt)
            for a, dt in (
                (X64.indptr, np.int64),
                (X64.indices, np.int64),
                (X64.data, np.float64),
                (self.similarity_.indptr, np.int64),
                (self.similarity_.indices, np.int64),
                (self.similarity_.data, np.float64),
            )
        )

    def scores(self, users: np.ndarray) -> np.ndarray:
        """Dense scores ``X[users] @ S`` of shape ``(len(users), n_items)``."""
        users = np.asarray(users, dtype=np.int64)
        out = np.empty((users.shape[0], int(self.n_items_ or 0)), dtype=np.float64)
        _score_block(users, *self._kernel_args, out)
        return out

    def _score_source(self) -> ScoreSource:
        return self._blocks_of(self.scores)
