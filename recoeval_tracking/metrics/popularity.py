r"""Popularity-bias metrics of the top-K lists, and RecBole's normalisations of Gini and entropy.

Notation: ``L_u`` the top-K list of user ``u`` (``|L_u| = K``), ``U`` the evaluated users with a
list, ``pop_i`` the number of train entries of item ``i``, ``T_u`` the user's test items
(positives), ``R_u`` the user's train items, ``c_i`` the number of lists holding ``i``.

Per user:

* ``arp`` (RecBole's ``AveragePopularity``; Abdollahpouri et al., FLAIRS 2019):
  :math:`\frac{1}{|L_u|}\sum_{i \in L_u} pop_i`.
* ``tailpercentage`` (RecBole's ``TailPercentage``): :math:`|L_u \cap \Theta| / |L_u|`, with the
  tail :math:`\Theta` the ``max(1, floor(tail_ratio * |I_train|))`` least popular of the items
  that have a train entry (``I_train``), ties by item index (RecBole's
  ``sorted(count_items, key=(count, item))``); items without a train entry are not in it, as in
  RecBole.
* ``aplt`` (average percentage of long tail) and ``aclt`` (average coverage of long tail),
  :math:`|L_u \cap \Phi| / |L_u|` and :math:`|L_u \cap \Phi|` (Abdollahpouri, Burke & Mobasher,
  RecSys 2017 / FLAIRS 2019; Elliot), with Elliot's groups: the short head :math:`\Phi^c` is the
  shortest prefix of the items by decreasing popularity (ties by index) whose popularity sums
  to at least ``short_head_share`` (0.8) of the train entries; the long tail :math:`\Phi` is
  every other item.

Over the users (one number each):

* ``pop_rsp`` / ``pop_reo``: popularity-based ranking-based statistical parity / equal opportunity
  (Zhu, Wang & Caverlee, SIGIR 2020; Elliot's ``PopRSP`` and ``PopREO``):
  :math:`\mathrm{std}(p_h, p_t) / \mathrm{mean}(p_h, p_t)` (population std) with, for
  RSP, :math:`p_g = \sum_u |L_u \cap g| / \sum_u |g \setminus R_u|` and, for REO,
  :math:`p_g = \sum_u |L_u \cap g \cap T_u| / \sum_u |(g \cap T_u) \setminus R_u|`.
* ``gini_items``: RecBole's ``GiniIndex``, :math:`\sum_j (2j - |I| - 1) c_{(j)} / (|I| \sum c)`
  (ours, ``gini``, divides by :math:`|I| - 1` instead).
* ``entropy_mean``: RecBole's ``ShannonEntropy``, :math:`-\sum_i p_i \ln p_i` over the
  recommended items divided by their number.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .beyond import ListContext, _contains, _of_counts

__all__ = [
    "item_popularity",
    "tail_items",
    "long_tail",
    "arp_of",
    "tailpercentage_of",
    "aplt_of",
    "aclt_of",
    "pop_rsp_of",
    "pop_reo_of",
    "gini_items",
    "entropy_mean",
]


def item_popularity(train: sp.csr_array, n_items: int) -> np.ndarray:
    """Train entries per item."""
    return np.bincount(train.indices, minlength=n_items).astype(np.float64)


def tail_items(pop: np.ndarray, tail_ratio: float) -> np.ndarray:
    """RecBole's tail: the ``max(1, int(tail_ratio * #items with pop > 0))`` least popular items
    among those with a train entry, ties by item index (boolean mask)."""
    seen = np.flatnonzero(pop > 0)
    mask = np.zeros(pop.shape[0], dtype=bool)
    if seen.size == 0:
        return mask
    order = seen[np.lexsort((seen, pop[seen]))]
    mask[order[: max(int(seen.size * tail_ratio), 1)]] = True
    return mask


def long_tail(pop: np.ndarray, short_head_share: float) -> np.ndarray:
    """Elliot's long tail (boolean mask): every item outside the short head, the shortest prefix
    of the items by decreasing popularity (ties by index) holding ``short_head_share`` of the
    train entries."""
    order = np.lexsort((np.arange(pop.shape[0]), -pop))
    cum = np.cumsum(pop[order])
    limit = pop.sum() * short_head_share
    # Elliot's loop adds an item before it checks the limit: at least one item is in the head
    n_head = int(np.searchsorted(cum, limit, side="left")) + 1
    mask = np.ones(pop.shape[0], dtype=bool)
    mask[order[: min(n_head, pop.shape[0])]] = False
    return mask


def _popularity(ctx: ListContext) -> np.ndarray:
    """Train users of each item: of the whole train matrix when the context carries it (a shard
    of users, :attr:`ListContext.popularity`), else of ``ctx.train``."""
    if ctx.popularity is not None:
        return np.asarray(ctx.popularity[0], dtype=np.float64)
    return item_popularity(ctx.train, ctx.n_items)


def _share(topk: np.ndarray, flag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    listed = topk >= 0
    hit = np.where(listed, flag[np.where(listed, topk, 0)], False)
    return hit.sum(axis=1).astype(np.float64), listed.sum(axis=1)


def _mean_over_list(topk: np.ndarray, values: np.ndarray) -> np.ndarray:
    listed = topk >= 0
    total = np.where(listed, values[np.where(listed, topk, 0)], 0.0).sum(axis=1)
    cnt = listed.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, total / cnt, np.nan)


def arp_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``arp``: mean train popularity of each user's list."""
    return _mean_over_list(topk, _popularity(ctx))


def tailpercentage_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``tailpercentage``: share of each list in RecBole's tail."""
    tail = tail_items(_popularity(ctx), ctx.tail_ratio)
    return _mean_over_list(topk, tail.astype(np.float64))


def aplt_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``aplt``: share of each list in Elliot's long tail."""
    tail = long_tail(_popularity(ctx), ctx.short_head_share)
    return _mean_over_list(topk, tail.astype(np.float64))


def aclt_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``aclt``: number of long-tail items in each list (NaN without a list)."""
    tail = long_tail(_popularity(ctx), ctx.short_head_share)
    hits, cnt = _share(topk, tail)
    return np.where(cnt > 0, hits, np.nan)


def _group_parts(ctx: ListContext, relevant_only: bool) -> tuple[float, ...]:
    """The additive parts of the group rates: ``(num_head, num_tail, den_head, den_tail)``."""
    pop = _popularity(ctx)
    tail = long_tail(pop, ctx.short_head_share)
    topk = ctx.topk[ctx.ok]
    users = np.flatnonzero(ctx.ok)
    m, K = topk.shape
    rows = np.repeat(users, K)
    items = topk.ravel()
    keep = items >= 0
    rows, items = rows[keep], items[keep]
    if relevant_only:
        rel = _contains(ctx.test, rows, items)
        rows, items = rows[rel], items[rel]
    num = np.array([(~tail[items]).sum(), tail[items].sum()], dtype=np.float64)
    if relevant_only:
        test = ctx.test[users] if users.size else ctx.test[:0]
        t_items = test.indices  # test items are never train items (checked on input)
        den = np.array([(~tail[t_items]).sum(), tail[t_items].sum()], dtype=np.float64)
    else:
        n_train = np.diff(ctx.train.indptr)[users]
        tr = ctx.train[users] if users.size else ctx.train[:0]
        head_train = (~tail[tr.indices]).sum()
        den = np.array(
            [
                (~tail).sum() * users.size - head_train,
                tail.sum() * users.size - (n_train.sum() - head_train),
            ],
            dtype=np.float64,
        )
    return (float(num[0]), float(num[1]), float(den[0]), float(den[1]))


def _rates_from_parts(num_head: float, num_tail: float, den_head: float, den_tail: float) -> float:
    """std / mean of the two groups' rates ``num / den``; NaN when one is undefined or both 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.array([num_head, num_tail]) / np.array([den_head, den_tail])
    if not np.all(np.isfinite(p)) or p.mean() == 0:
        return math.nan
    return float(np.std(p) / np.mean(p))


def _group_rates(ctx: ListContext, relevant_only: bool) -> float:
    if not ctx.ok.any():
        return math.nan
    return _rates_from_parts(*_group_parts(ctx, relevant_only))


def pop_rsp_of(ctx: ListContext) -> float:
    """``pop_rsp``: std / mean of the recommendation rates of the short head and the long tail."""
    return _group_rates(ctx, relevant_only=False)


def pop_reo_of(ctx: ListContext) -> float:
    """``pop_reo``: std / mean of the rates at which each group's test items are recommended."""
    return _group_rates(ctx, relevant_only=True)


@_of_counts
def gini_items(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """RecBole's Gini index: ``sum_j (2j - |I| - 1) c_(j) / (|I| sum c)``, c ascending."""
    if not users:
        return math.nan
    p = np.sort(c) / float(c.sum())
    j = np.arange(1, n_items + 1)
    return float(((2 * j - n_items - 1) * p).sum() / n_items)


@_of_counts
def entropy_mean(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """RecBole's Shannon entropy: the entropy of the recommendations over the items, divided by
    the number of distinct recommended items."""
    if not users:
        return math.nan
    p = c[c > 0] / float(c.sum())
    return float(-(p * np.log(p)).sum() / p.shape[0])


pop_rsp_of.parts = lambda ctx: _group_parts(ctx, relevant_only=False)  # type: ignore
pop_rsp_of.from_parts = _rates_from_parts  # type: ignore[attr-defined]
pop_reo_of.parts = lambda ctx: _group_parts(ctx, relevant_only=True)  # type: ignore
pop_reo_of.from_parts = _rates_from_parts  # type: ignore[attr-defined]
