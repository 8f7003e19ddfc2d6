"""User slices of a report: groups of users (activity quantiles, cold and warm users, popular
and long-tail test items, any per-user column) each reported with the same tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, param_error

__all__ = ["SLICE_KINDS", "user_popularity_share", "slice_groups"]

#: Kinds of user slices accepted by :func:`~recoeval_tracking.reporting.report.build_report`.
SLICE_KINDS = ("quantiles", "threshold", "activity", "cold_warm", "popularity")


def user_popularity_share(
    train: Any, test: Any, *, user_ids: Any = None, head: float = 0.2
) -> pd.DataFrame:
    """Share of each user's test items that are popular, for the popular/long-tail slice.

    The popular head is the ``ceil(head * n_items)`` items with the most training interactions
    (ties by lower item index); a user's share is ``|T_u ∩ head| / |T_u|`` over their test items
    ``T_u`` (NaN without test items).

    Parameters
    ----------
    train, test : scipy.sparse matrix or Interactions
        Users x items, same shape.
    user_ids : array-like, optional
        Original id of each row (taken from an Interactions container when given one).
    head : float
        Fraction of the catalogue counted as popular, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``user_id`` and ``test_popular_share``.
    """
    import scipy.sparse as sp

    func = "user_popularity_share"
    if user_ids is None and hasattr(test, "user_ids"):
        user_ids = test.user_ids
    train_m = getattr(train, "matrix", train)
    test_m = getattr(test, "matrix", test)
    if not sp.issparse(train_m) or not sp.issparse(test_m) or train_m.shape != test_m.shape:
        raise param_error(
            "test",
            func,
            "a sparse users x items matrix of the same shape as 'train' (or Interactions)",
            test_m,
        )
    if isinstance(head, bool) or not isinstance(head, (int, float)) or not 0 < head < 1:
        raise param_error("head", func, "a fraction strictly between 0 and 1", head)
    n_items = train_m.shape[1]
    counts = np.asarray((sp.csr_array(train_m) != 0).sum(axis=0)).ravel()
    n_head = math.ceil(head * n_items)
    order = np.lexsort((np.arange(n_items), -counts))
    popular = np.zeros(n_items, dtype=np.float64)
    popular[order[:n_head]] = 1.0
    T = (sp.csr_array(test_m) != 0).astype(np.float64)
    n_test = np.asarray(T.sum(axis=1)).ravel()
    hits = T @ popular
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n_test > 0, hits / np.maximum(n_test, 1), np.nan)
    ids = np.arange(T.shape[0]) if user_ids is None else np.asarray(user_ids)
    return pd.DataFrame({"user_id": ids, "test_popular_share": share})


def slice_groups(
    spec: Mapping[str, Any], users: pd.DataFrame, func: str
) -> tuple[str, list[tuple[str, np.ndarray]]]:
    """Name of the slice and its groups as (label, row positions) over the aligned users."""
    if not isinstance(spec, Mapping):
        raise param_error("slices", func, "a list of dicts with a 'kind' key", spec)
    kind = spec.get("kind")
    if kind not in SLICE_KINDS:
        raise param_error(
            "slices", func, f"slices whose 'kind' is one of {list(SLICE_KINDS)}", kind
        )
    defaults = {
        "activity": ("quantiles", "n_train", None),
        "cold_warm": ("threshold", "n_train", ["cold", "warm"]),
        "popularity": ("threshold", "test_popular_share", ["long_tail", "popular"]),
    }
    base, column, labels = defaults.get(kind, (kind, None, None))
    column = spec.get("column", column)
    labels = spec.get("labels", labels)
    name = str(spec.get("name", kind))
    if column is None or column not in users.columns:
        raise param_error(
            "slices",
            func,
            f"a slice over a known user column {[c for c in users.columns if c != 'user_id']}",
            f"{name!r} over {column!r}",
            "Give user_features with that column (e.g. user_popularity_share(train, test)); "
            "a per-user file has n_train when read with rt.read_per_user(path, train=train), "
            "or pass slices=[].",
            got_is_text=True,
        )
    values = pd.to_numeric(users[column], errors="coerce")
    groups: list[tuple[str, np.ndarray]] = []
    if base == "quantiles":
        q = check_int(spec.get("q", 4), "slices.q", func, minimum=2)
        cats = pd.qcut(values, q, duplicates="drop")
        for i, interval in enumerate(cats.cat.categories):
            idx = np.flatnonzero((cats == interval).to_numpy())
            lo = max(float(interval.left), float(values.min()))
            groups.append((f"Q{i + 1}: {column} {lo:g} to {float(interval.right):g}", idx))
    else:
        default_threshold = {"cold_warm": 5, "popularity": 0.5}.get(kind)
        threshold = spec.get("threshold", default_threshold)
        if (
            threshold is None
            or isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
        ):
            raise param_error(
                "slices", func, "a numeric 'threshold' for a threshold slice", threshold
            )
        lab = list(labels or [f"{column} < {threshold:g}", f"{column} >= {threshold:g}"])
        below = (values < threshold).to_numpy()
        above = (values >= threshold).to_numpy()
        groups = [
            (f"{lab[0]} ({column} < {threshold:g})", np.flatnonzero(below)),
            (f"{lab[1]} ({column} >= {threshold:g})", np.flatnonzero(above)),
        ]
        if values.isna().any():
            groups.append((f"{column} unknown", np.flatnonzero(values.isna().to_numpy())))
    return name, [(label, idx) for label, idx in groups if idx.size]
