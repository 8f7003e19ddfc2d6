r"""Other libraries' definitions that the kernels do not compute, from each user's top-K list:
Elliot's and WarpRec's nDCG gain, Elliot's MAP and Elliot's Gini.

With ``L_u = (i_1, ..., i_K)`` the user's list (train items left out, -1 padded; its width is
the cutoff, so a curve's prefix is the metric at that cutoff), ``T_u`` the positives with test
values ``v_i`` and ``hits(n)`` the positives among the first ``n`` listed items:

* ``ndcg_exp1``: :math:`DCG = \sum_{j \le K} g_{i_j} / \log_2(j + 1)` with the gain
  :math:`g_i = 2^{v_i + 1} - 1` of a listed positive (0 otherwise), divided by the same sum over
  the :math:`\min(K, |T_u|)` largest gains; 0 when that ideal is 0. Elliot's ``nDCG``
  (``DiscountedRelevance``: :math:`2^{v - t + 1} - 1` for :math:`v \ge t`, ``t`` its
  ``relevance_threshold``, 0 by default) and WarpRec's ``nDCG`` (``discounted_relevance``:
  :math:`2^{v + 1} - 1` for :math:`v > 0`; it keeps a negative value as its gain, where the
  warprec profile, whose level leaves out every value :math:`\le 0`, gains 0).
* ``ap_elliot``: :math:`\frac{1}{K}\sum_{n \le K} hits(n) / n`, the mean precision at every
  rank ``1..K``, hits or not (Elliot's ``MAP``); it is not an average precision and stays below
  1 for a perfect list when :math:`|T_u| < K`.
* ``gini_complement``: :math:`1 - \sum_j (2j - |I| - 1)\, c_{(j)} / ((|I| - 1) \sum c)`, the
  item counts ``c`` of the lists sorted ascending: one minus the Gini index of the
  recommendations (Elliot's ``Gini``), higher when the lists spread over more items.

References
----------
.. [1] V. W. Anelli et al., "Elliot: a comprehensive and rigorous framework for reproducible
   recommender systems evaluation", SIGIR 2021; code: sisinflab/elliot,
   ``elliot/evaluation/metrics/accuracy/ndcg/ndcg.py``, ``accuracy/map/map.py``,
   ``diversity/gini_index/gini_index.py`` and ``evaluation/relevance/relevance.py`` (metric
   modules version 0.3.1, package 1.0.0).
.. [2] M. Avolio et al., "WarpRec: unifying academic rigor and industrial scale for responsible,
   reproducible, and efficient recommendation", RecSys 2026; code: sisinflab/warprec 2.2.8,
   ``warprec/evaluation/metrics/accuracy/ndcg.py`` and ``metrics/base_metric.py``; checked
   against the installed library in tests/metrics/test_library_warprec.py.
"""

from __future__ import annotations

import math

import numpy as np

from .beyond import ListContext, _of_counts
from .listrank import _lookup

__all__ = ["ndcg_exp1_of", "ap_elliot_of", "gini_complement"]


def _shifted_gain(values: np.ndarray) -> np.ndarray:
    return 2.0 ** (np.asarray(values, dtype=np.float64) + 1.0) - 1.0


def ndcg_exp1_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """NDCG with the gain ``2^(v + 1) - 1`` (Elliot's and WarpRec's nDCG), the list's width as
    the cutoff; 0 for an evaluated user whose ideal DCG is 0 (as both libraries give), NaN for
    the users not evaluated."""
    m, K = topk.shape
    vals, found = _lookup(ctx.test, topk)
    disc = 1.0 / np.log2(np.arange(K, dtype=np.float64) + 2.0)
    dcg = (np.where(found, _shifted_gain(vals), 0.0) * disc).sum(axis=1)
    indptr = ctx.test.indptr
    n_t = np.diff(indptr)
    rows = np.repeat(np.arange(m), n_t)
    gains = _shifted_gain(ctx.test.data)
    order = np.lexsort((-gains, rows))  # each row's gains, largest first
    pos = np.arange(ctx.test.nnz, dtype=np.int64) - np.repeat(indptr[:-1], n_t)
    keep = pos < K
    srt_rows, srt_gains = rows[order][keep], gains[order][keep]
    ideal = np.bincount(srt_rows, weights=srt_gains * disc[pos[keep]], minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(ideal > 0.0, dcg / ideal, 0.0)
    return np.where(ctx.ok, out, np.nan)


def ap_elliot_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """Elliot's MAP of each list: the mean over ``n = 1..K`` (the list's width) of ``hits(n) /
    n``; 0 for an evaluated user whose list is empty, NaN for the users not evaluated."""
    K = topk.shape[1]
    _, found = _lookup(ctx.test, topk)
    precision = np.cumsum(found, axis=1) / np.arange(1, K + 1, dtype=np.float64)
    out = precision.sum(axis=1) / K
    return np.where(ctx.ok, out, np.nan)


@_of_counts
def gini_complement(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """One minus the Gini index of the item counts of the lists, each count over their sum
    (Elliot's Gini: 1 for lists spread evenly over the catalogue, near 0 for one item)."""
    total = float(c.sum())
    if not users or n_items < 2 or total == 0.0:
        return math.nan
    p = np.sort(c / total)
    j = np.arange(1, n_items + 1)
    return float(1.0 - ((2 * j - n_items - 1) * p).sum() / (n_items - 1))
