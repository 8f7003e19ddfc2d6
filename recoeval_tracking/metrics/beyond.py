r"""Beyond-accuracy metrics, computed from the top-K lists the engine extracts in its one pass.

Notation: ``U`` the users with a list, ``L_u`` the top-K list of user ``u`` (``N = K`` items),
``I`` the catalogue, ``c_i = #{u : i in L_u}`` how many lists contain item ``i``, ``n_i`` the
number of train users of item ``i``, ``T_u`` the user's test items.

Per user (a column of the per-user table):

* ``novelty``: mean self-information of the listed items,
  :math:`\frac{1}{|L_u|}\sum_{i \in L_u} -\log_2 \frac{\max(n_i, 1)}{|U_{train}|}` (Zhou et al.,
  PNAS 2010); an item nobody interacted with in train counts as seen once.
* ``ils``: intra-list similarity, the mean cosine similarity over the pairs of listed items, from
  item factors or an item-feature matrix (Ziegler et al., WWW 2005); ``diversity = 1 - ils``.
* ``serendipity``: :math:`\frac{1}{|L_u|}\sum_{i \in L_u} [i \in T_u] \cdot [i \notin P_N]`, the
  share of the list that is relevant and unexpected, where ``P_N`` are the ``N`` most popular
  train items (Ge et al., RecSys 2010; Recommendation.jl's relevance x unexpectedness).

Over the whole set of users (one number each):

* ``coverage``: catalog coverage :math:`|\bigcup_u L_u| / |I|`.
* ``aggregated_diversity``: :math:`|\bigcup_u L_u|`.
* ``entropy``: Shannon entropy :math:`-\sum_i p_i \ln p_i`, :math:`p_i = c_i / (N |U|)`.
* ``gini``: Gini index :math:`\frac{1}{|I|-1}\sum_{j=1}^{|I|} (2j - |I| - 1) p_{(j)}` with the
  :math:`p` sorted ascending (Recommender Systems Handbook, eqs. 20-21; Recommendation.jl).
* ``personalisation``: :math:`1 - \overline{|L_u \cap L_v| / N}` over all pairs of users, computed
  exactly as :math:`\sum_{u<v} |L_u \cap L_v| = \sum_i \binom{c_i}{2}`.
* ``gauc``: RecBole's GAUC, the per-user ROC-AUC weighted by the user's number of test items.
* ``p_pooled``: implicit's precision, :math:`\sum_u hits_u(K) / \sum_u \min(K, |T_u|)`.

An evaluated user whose list is empty (ranked input that lists nothing for it) has no mean over
its list: ``novelty``, ``ils``, ``diversity`` and ``serendipity`` are NaN for it (its rank
metrics, ``rbp`` and ``bpref`` included, are 0); users not evaluated are NaN with their
``nan_reason``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = [
    "novelty",
    "intra_list_similarity",
    "serendipity",
    "coverage",
    "aggregated_diversity",
    "shannon_entropy",
    "gini_index",
    "personalisation",
    "gauc",
    "pooled_precision",
    "list_counts",
    "train_popularity",
    "ListContext",
]


@dataclass
class ListContext:
    """What the list and aggregate metrics of the registry are computed from.

    ``topk`` holds every user's top-K items (-1 padded, -1 rows for users not evaluated), ``ok``
    flags the evaluated users, ``columns`` the per-user columns computed so far (``roc_auc``,
    ``tp_at_10``...), ``vectors`` the item vectors (None when there are none), ``judged`` the
    test entries below the relevance level (judged non-relevant; None without a level); the
    other fields are the metrics' parameters (:class:`~recoeval_tracking.options.EvalOptions`).
    """

    topk: np.ndarray
    train: sp.csr_array
    test: sp.csr_array
    n_items: int
    k: int
    ok: np.ndarray
    n_test: np.ndarray
    columns: Mapping[str, np.ndarray]
    vectors: np.ndarray | None = None
    serendipity_top_n: int = 100
    popularity: tuple[np.ndarray, int] | None = None  # of a larger train: see train_popularity
    rbp_persistence: float = 0.8
    tail_ratio: float = 0.1
    short_head_share: float = 0.8
    judged: sp.csr_array | None = None
    #: values shared by several metrics of one list (``ils`` and ``diversity``), computed once
    memo: dict = field(default_factory=dict, repr=False)


def _listed(topk: np.ndarray) -> np.ndarray:
    return topk >= 0


def train_popularity(train: sp.csr_array) -> tuple[np.ndarray, int]:
    """``(n_i, |U_train|)``: train users of each item and users with a train entry. A shard of
    users passes those of the whole train matrix (``ListContext.popularity``)."""
    return (
        np.bincount(train.indices, minlength=train.shape[1]).astype(np.int64),
        int((np.diff(train.indptr) > 0).sum()),
    )


def novelty(
    topk: np.ndarray, train: sp.csr_array, popularity: tuple[np.ndarray, int] | None = None
) -> np.ndarray:
    """Per-user mean self-information of the listed items (NaN for users without a list)."""
    n_i, n_users = popularity if popularity is not None else train_popularity(train)
    n_users = max(n_users, 1)
    n_i = n_i.astype(np.float64)
    info = -np.log2(np.maximum(n_i, 1.0) / n_users)
    mask = _listed(topk)
    vals = np.where(mask, info[np.where(mask, topk, 0)], 0.0)
    cnt = mask.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, vals.sum(axis=1) / cnt, np.nan)


#: Users whose list sums :func:`intra_list_similarity` holds at once.
_ILS_USERS = 16384


def intra_list_similarity(topk: np.ndarray, item_vectors: np.ndarray) -> np.ndarray:
    """Per-user mean pairwise cosine similarity of the listed items (NaN below two items).

    With ``e_i`` the unit vectors of a list's ``n`` items, the sum over ordered pairs
    ``i != j`` of ``cos(e_i, e_j)`` is ``|sum_i e_i|^2 - sum_i |e_i|^2``: one sparse product
    (lists x items) @ (items x d) gives every list's ``sum_i e_i``, in ``O(m K d)``."""
    V = np.asarray(item_vectors, dtype=np.float64)
    norms = np.linalg.norm(V, axis=1)
    Vn = V / np.where(norms > 0, norms, 1.0)[:, None]
    self_sim = np.einsum("ij,ij->i", Vn, Vn)  # |e_i|^2: 1, or 0 for a zero vector
    m, K = topk.shape
    out = np.full(m, np.nan)
    for start in range(0, m, _ILS_USERS):  # bounded memory: the sums are (users x d)
        t = topk[start : start + _ILS_USERS]
        mask = _listed(t)
        n = mask.sum(axis=1)
        items = t[mask]
        # each list's items in list order (not sorted): the sums add them in that order
        lists = sp.csr_array(
            (np.ones(items.shape[0]), items, np.concatenate([[0], np.cumsum(n)])),
            shape=(t.shape[0], V.shape[0]),
        )
        s = lists @ Vn
        pair_sum = (s * s).sum(axis=1) - lists @ self_sim
        pairs = n * (n - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + _ILS_USERS] = np.where(pairs > 0, pair_sum / pairs, np.nan)
    return out


def serendipity(
    topk: np.ndarray,
    test: sp.csr_array,
    train: sp.csr_array,
    top_n_popular: int = 100,
    popularity: tuple[np.ndarray, int] | None = None,
) -> np.ndarray:
    """Per-user share of the list that is a test item outside the ``top_n_popular`` train items."""
    n_i = (popularity if popularity is not None else train_popularity(train))[0]
    popular = np.zeros(train.shape[1], dtype=bool)
    if top_n_popular > 0:
        order = np.lexsort((np.arange(n_i.shape[0]), -n_i))
        popular[order[:top_n_popular]] = True
    mask = _listed(topk)
    m, K = topk.shape
    rows = np.repeat(np.arange(m), K)[mask.ravel()]
    items = topk.ravel()[mask.ravel()]
    rel = _contains(test, rows, items)
    good = (rel & ~popular[items]).astype(np.float64)
    per_user = np.bincount(rows, weights=good, minlength=m)
    cnt = mask.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, per_user / cnt, np.nan)


def _contains(X: sp.csr_array, rows: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Whether (row, item) is a stored entry of the CSR ``X`` (sorted indices), vectorised."""
    key_x = (
        np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr)) * X.shape[1] + X.indices
    )
    key_q = rows.astype(np.int64) * X.shape[1] + items
    if key_x.shape[0] == 0:
        return np.zeros(key_q.shape[0], dtype=bool)
    pos = np.minimum(np.searchsorted(key_x, key_q), key_x.shape[0] - 1)
    return key_x[pos] == key_q


def list_counts(topk: np.ndarray, n_items: int) -> tuple[np.ndarray, int, int]:
    """The sufficient statistics of the catalogue metrics: ``(c, |U|, N)``, with ``c_i`` the
    number of lists holding item ``i``, ``|U|`` the users with a list and ``N`` the list length.
    Those of disjoint sets of users add up (``N`` is shared)."""
    mask = _listed(topk)
    users = int(mask.any(axis=1).sum())
    c = np.bincount(topk[mask], minlength=n_items)
    return c, users, topk.shape[1]


def _of_counts(
    counted: Callable[[np.ndarray, int, int, int], float],
) -> Callable[[np.ndarray, int], float]:
    """The catalogue metric of top-K lists ``fn(topk, n_items)`` from its form over the counts
    ``counted(c, users, N, n_items)`` (kept as ``fn.from_counts``)."""

    def of_lists(topk: np.ndarray, n_items: int) -> float:
        return counted(*list_counts(topk, n_items), n_items)

    of_lists.__name__ = counted.__name__
    of_lists.__doc__ = counted.__doc__
    of_lists.from_counts = counted  # type: ignore[attr-defined]
    return of_lists


@_of_counts
def coverage(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """Catalog coverage: distinct recommended items over the number of items."""
    return float((c > 0).sum() / n_items) if users else math.nan


@_of_counts
def aggregated_diversity(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """Number of distinct items recommended across all users."""
    return float((c > 0).sum()) if users else math.nan


@_of_counts
def shannon_entropy(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """Shannon entropy (natural log) of the distribution of recommendations over items."""
    if not users:
        return math.nan
    p = c[c > 0] / (N * users)
    return float(-(p * np.log(p)).sum())


@_of_counts
def gini_index(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """Gini index of the distribution of recommendations over items (0 = perfectly even)."""
    if not users or n_items < 2:
        return math.nan
    p = np.sort(c / (N * users))
    j = np.arange(1, n_items + 1)
    return float(((2 * j - n_items - 1) * p).sum() / (n_items - 1))


@_of_counts
def personalisation(c: np.ndarray, users: int, N: int, n_items: int) -> float:
    """1 - mean overlap |L_u & L_v| / K over every pair of users with a list (exact)."""
    if users < 2:
        return math.nan
    shared = float((c * (c - 1) / 2.0).sum())
    return 1.0 - shared / (users * (users - 1) / 2.0 * N)


def ratio(parts: tuple[float, float]) -> float:
    """``num / den`` of an aggregate's additive parts; NaN when ``den`` is not positive."""
    num, den = parts
    return float(num / den) if den > 0 else math.nan


def gauc_parts(roc_auc: np.ndarray, n_test: np.ndarray) -> tuple[float, float]:
    """GAUC's additive parts ``(sum_u |T_u| AUC_u, sum_u |T_u|)`` over the defined users."""
    ok = ~np.isnan(roc_auc)
    w = n_test[ok].astype(np.float64)
    return float((roc_auc[ok] * w).sum()), float(w.sum())


def gauc(roc_auc: np.ndarray, n_test: np.ndarray) -> float:
    """RecBole's GAUC: per-user ROC-AUC weighted by the number of test items (defined users)."""
    return ratio(gauc_parts(roc_auc, n_test))


def pooled_precision_parts(tp: np.ndarray, n_test: np.ndarray, k: int) -> tuple[float, float]:
    """Pooled precision's additive parts ``(sum_u hits_u(K), sum_u min(K, |T_u|))``."""
    ok = ~np.isnan(tp)
    denom = np.minimum(k, n_test[ok]).astype(np.float64)
    return float((tp[ok] * denom).sum()), float(denom.sum())


def pooled_precision(tp: np.ndarray, n_test: np.ndarray, k: int) -> float:
    """implicit's precision@K: total hits over the total of min(K, |T_u|) (defined users)."""
    return ratio(pooled_precision_parts(tp, n_test, k))


# ---------------------------------------------------------------------------------------------
# The registry's compute functions: list metrics take (ctx, topk) so that the @1..K curves come
# from the first j columns of the lists; aggregates take ctx.
# ---------------------------------------------------------------------------------------------


def novelty_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``novelty`` of each user's list."""
    return novelty(topk, ctx.train, ctx.popularity)


def _ils(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """:func:`intra_list_similarity` of ``topk`` (the context's lists or their first columns),
    once per list for ``ils`` and ``diversity`` together."""
    key = ("ils", topk.__array_interface__["data"][0], topk.shape, topk.strides)
    if key not in ctx.memo:
        ctx.memo[key] = intra_list_similarity(topk, ctx.vectors)
    return ctx.memo[key]


def ils_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``ils`` of each user's list, from the item vectors."""
    return _ils(ctx, topk).copy()


def diversity_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``diversity = 1 - ils`` of each user's list."""
    return 1.0 - _ils(ctx, topk)


def serendipity_of(ctx: ListContext, topk: np.ndarray) -> np.ndarray:
    """``serendipity`` of each user's list."""
    return serendipity(topk, ctx.test, ctx.train, ctx.serendipity_top_n, ctx.popularity)


def over_lists(fn: Callable[[np.ndarray, int], float]) -> Callable[[ListContext], float]:
    """An aggregate over the lists of the evaluated users, from ``fn(topk, n_items)``; its
    ``from_counts`` (when ``fn`` has one) merges the :func:`list_counts` of shards of users."""

    def compute(ctx: ListContext) -> float:
        return fn(ctx.topk[ctx.ok], ctx.n_items)

    compute.__name__ = f"{fn.__name__}_over_lists"
    compute.__doc__ = fn.__doc__
    compute.from_counts = getattr(fn, "from_counts", None)  # type: ignore[attr-defined]
    return compute


#: The per-user column of ROC-AUC under average ranks for tied scores (RecBole's per-user AUC).
AUC_AVERAGE_TIES = "roc_auc_average_ties"


def gauc_of(ctx: ListContext) -> float:
    """``gauc`` from the per-user ROC-AUC under average ranks for ties (the ``roc_auc`` column
    itself when the evaluation's tie policy is ``average``)."""
    return ratio(gauc_parts_of(ctx))


def gauc_parts_of(ctx: ListContext) -> tuple[float, float]:
    """The additive parts of ``gauc`` (shards of users add them up)."""
    auc = ctx.columns.get(AUC_AVERAGE_TIES, ctx.columns["roc_auc"])
    return gauc_parts(auc, ctx.n_test)


def pooled_precision_of(ctx: ListContext) -> float:
    """``p_pooled`` from the per-user TP@K column."""
    return ratio(pooled_precision_parts_of(ctx))


def pooled_precision_parts_of(ctx: ListContext) -> tuple[float, float]:
    """The additive parts of ``p_pooled`` (shards of users add them up)."""
    return pooled_precision_parts(ctx.columns[f"tp_at_{ctx.k}"], ctx.n_test, ctx.k)


gauc_of.parts = gauc_parts_of  # type: ignore[attr-defined]
pooled_precision_of.parts = pooled_precision_parts_of  # type: ignore[attr-defined]
