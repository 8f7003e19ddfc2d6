"""Preparation: interaction filters, iterated k-core, implicit-feedback conversion, and
:func:`align` (a train and a test loaded apart, put on one id map).

Every step returns a new :class:`Interactions` with a :class:`PrepReport` appended to its
``reports`` (and logged), so nothing is dropped silently.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, param_error
from ._interactions import Interactions, PrepReport
from ._relevance import EVERY_ENTRY

__all__ = ["filter_min_interactions", "k_core", "to_implicit", "align", "IMPLICIT_METHODS"]

#: Methods accepted by :func:`to_implicit`.
IMPLICIT_METHODS = ("binarize", "confidence", "log")


def _compact(
    X: Interactions,
    keep: np.ndarray,
    drop_empty: bool,
    step: str,
    params: dict,
    details: dict | None = None,
) -> Interactions:
    """Keep the entries in ``keep``, optionally drop empty rows/columns, attach a report."""
    before = X.nnz
    Y = X.subset(keep)
    users_removed = items_removed = 0
    if drop_empty:
        rows = np.flatnonzero(Y.user_counts() > 0)
        cols = np.flatnonzero(Y.item_counts() > 0)
        users_removed = X.n_users - rows.shape[0]
        items_removed = X.n_items - cols.shape[0]
        if users_removed or items_removed:
            m = Y.matrix[rows][:, cols]
            m = sp.csr_array(m)
            m.sort_indices()
            t = None
            if Y.timestamps is not None:
                t = sp.csr_array(Y.timestamps[rows][:, cols])
                t.sort_indices()
            Y = Interactions(
                matrix=m,
                user_ids=Y.user_ids[rows],
                item_ids=Y.item_ids[cols],
                timestamps=t,
                reports=list(Y.reports),
                name=Y.name,
                relevance=Y.relevance,
            )
    report = PrepReport(
        step, params, before, Y.nnz, users_removed, items_removed, details or {}
    ).log()
    Y.reports.append(report)
    return Y


def filter_min_interactions(
    interactions: Interactions, min_user: int = 1, min_item: int = 1, *, drop_empty: bool = True
) -> Interactions:
    """Remove the interactions of users with fewer than ``min_user`` and of items with fewer
    than ``min_item`` interactions (one pass, counts taken on the input).

    A single pass can leave users or items below the thresholds again; :func:`k_core` iterates
    to a fixed point. With ``drop_empty`` (default), users and items left without interactions
    are removed from the id maps; otherwise the shape is kept.
    """
    func = "filter_min_interactions"
    X = Interactions.checked(interactions, func)
    min_user = check_int(min_user, "min_user", func, minimum=0)
    min_item = check_int(min_item, "min_item", func, minimum=0)
    rows = X.row_of_entries()
    keep = (X.user_counts() >= min_user)[rows] & (X.item_counts() >= min_item)[X.matrix.indices]
    return _compact(
        X, keep, drop_empty, "min_interactions", {"min_user": min_user, "min_item": min_item}
    )


def k_core(
    interactions: Interactions,
    k_user: int,
    k_item: int | None = None,
    *,
    max_iter: int = 1000,
    drop_empty: bool = True,
) -> Interactions:
    """Iterated k-core: repeatedly drop users with fewer than ``k_user`` and items with fewer
    than ``k_item`` interactions until every remaining user and item meets its threshold.

    The result is the largest sub-matrix in which each user has at least ``k_user`` and each
    item at least ``k_item`` interactions (the (k_user, k_item)-core of the bipartite graph;
    Batagelj & Zaversnik 2003, "An O(m) algorithm for cores decomposition of networks").
    ``k_item`` defaults to ``k_user``. The report records the number of iterations.
    """
    func = "k_core"
    X = Interactions.checked(interactions, func)
    k_user = check_int(k_user, "k_user", func, minimum=0)
    k_item = k_user if k_item is None else check_int(k_item, "k_item", func, minimum=0)
    max_iter = check_int(max_iter, "max_iter", func, minimum=1)
    rows = X.row_of_entries()
    cols = np.asarray(X.matrix.indices, dtype=np.int64)
    keep = np.ones(X.nnz, dtype=bool)
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        uc = np.bincount(rows[keep], minlength=X.n_users)
        ic = np.bincount(cols[keep], minlength=X.n_items)
        new_keep = keep & (uc >= k_user)[rows] & (ic >= k_item)[cols]
        if np.array_equal(new_keep, keep):
            converged = True
            break
        keep = new_keep
    return _compact(
        X,
        keep,
        drop_empty,
        "k_core",
        {"k_user": k_user, "k_item": k_item},
        {"iterations": it, "converged": converged},
    )


def to_implicit(
    interactions: Interactions,
    method: str = "binarize",
    *,
    threshold: float | None = None,
    alpha: float = 1.0,
    epsilon: float = 1.0,
) -> Interactions:
    r"""Convert explicit values (ratings, counts) to implicit-feedback values.

    Entries whose value is below ``threshold`` (when given) are removed first and counted in the
    report. Then, with :math:`r` the value:

    * ``"binarize"``: :math:`c = 1`;
    * ``"confidence"``: :math:`c = 1 + \alpha r` (Hu, Koren & Volinsky 2008, "Collaborative
      Filtering for Implicit Feedback Datasets", ICDM, eq. 2 ``c_ui = 1 + alpha r_ui``);
    * ``"log"``: :math:`c = 1 + \alpha \log(1 + r / \epsilon)` (the same paper's logarithmic
      variant).

    Parameters
    ----------
    interactions : Interactions
    method : {"binarize", "confidence", "log"}
    threshold : float, optional
        Keep only entries with value >= threshold (e.g. 4 for "liked" on a 1..5 scale).
    alpha, epsilon : float
        Scale (> 0) and the log variant's epsilon (> 0).

    Returns
    -------
    Interactions
        Same shape and id maps. The values are no longer ratings, so the relevance rule is the
        implicit one: every stored entry is a positive, its value its gain (a rating level
        such as MovieLens' 4 would judge every converted value non-relevant); the entries
        below ``threshold`` are gone.
    """
    func = "to_implicit"
    X = Interactions.checked(interactions, func)
    if method not in IMPLICIT_METHODS:
        raise param_error("method", func, f"one of {list(IMPLICIT_METHODS)}", method)
    for name, v in (("alpha", alpha), ("epsilon", epsilon)):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float, np.integer, np.floating))
            or not np.isfinite(v)
            or v <= 0
        ):
            raise param_error(name, func, "a finite number > 0", v)
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not np.isfinite(threshold)
    ):
        raise param_error("threshold", func, "a finite number or None", threshold)
    values = np.asarray(X.matrix.data, dtype=np.float64)
    keep = np.ones(X.nnz, dtype=bool) if threshold is None else values >= threshold
    Y = X.subset(keep)
    r = np.asarray(Y.matrix.data, dtype=np.float64)
    if method == "binarize":
        c = np.ones_like(r)
    elif method == "confidence":
        c = 1.0 + alpha * r
    else:
        if np.any(r / epsilon <= -1.0):
            raise param_error(
                "interactions",
                func,
                "values with 1 + r / epsilon > 0 for the log method",
                f"a minimum value of {r.min()}",
                got_is_text=True,
            )
        c = 1.0 + alpha * np.log1p(r / epsilon)
    m = sp.csr_array((c, Y.matrix.indices, Y.matrix.indptr), shape=Y.matrix.shape)
    report = PrepReport(
        "implicit",
        {"method": method, "threshold": threshold, "alpha": alpha, "epsilon": epsilon},
        X.nnz,
        Y.nnz,
    ).log()
    out = Y.with_data(m, Y.timestamps, report)
    out.relevance = EVERY_ENTRY
    return out


def _reindexed(X: Interactions, user_ids: np.ndarray, item_ids: np.ndarray) -> Interactions:
    import pandas as pd

    rows = pd.Index(user_ids).get_indexer(X.user_ids)[X.row_of_entries()]
    cols = pd.Index(item_ids).get_indexer(X.item_ids)[np.asarray(X.matrix.indices)]
    shape = (user_ids.shape[0], item_ids.shape[0])

    def build(data: np.ndarray) -> sp.csr_array:
        out = sp.csr_array(sp.coo_array((data, (rows, cols)), shape=shape))
        out.sort_indices()
        return out

    t = build(np.asarray(X.timestamps.data)) if X.timestamps is not None else None
    return Interactions(
        matrix=build(np.asarray(X.matrix.data)),
        user_ids=user_ids,
        item_ids=item_ids,
        timestamps=t,
        reports=list(X.reports),
        name=X.name,
        relevance=X.relevance,
    )


def align(train: Interactions, test: Interactions) -> tuple[Interactions, Interactions]:
    """``train`` and ``test`` on the same id maps: the sorted union of their user ids and of
    their item ids (a user or item missing from one side gets an empty row or column there).

    Evaluate with the aligned pair, and score the aligned ids: row ``u`` of every score source
    is ``aligned_train.user_ids[u]``, column ``i`` is ``aligned_train.item_ids[i]``.

    Raises
    ------
    InputError
        Ids of one side cannot be compared with the other's (integers on one side, text on the
        other).
    """
    from .._validation import InputError

    Interactions.checked(train, "align")
    Interactions.checked(test, "align")
    try:
        users = np.union1d(train.user_ids, test.user_ids)
        items = np.union1d(train.item_ids, test.item_ids)
    except TypeError as err:
        raise InputError(
            "align: the train and test ids cannot be compared (integers on one "
            f"side, text on the other?): {err}. Load both with ids of one type."
        ) from None
    return _reindexed(train, users, items), _reindexed(test, users, items)
