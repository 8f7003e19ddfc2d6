"""Build a canonical :class:`Interactions` from id columns (factorise ids, merge duplicates)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, param_error
from ._interactions import DUPLICATE_POLICIES, Interactions, PrepReport

__all__ = ["factorize_sorted", "build_interactions"]


def factorize_sorted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes and unique values of ``values``, with codes in the sorted order of the uniques.

    Hash-based (pandas ``factorize``) then a sort of the uniques only, so it is linear in the
    number of values. Missing values get code -1.
    """
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=True)
    uniques = np.asarray(uniques)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    out = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1) if order.shape[0] else codes
    return out, uniques[order]


def build_interactions(users: np.ndarray, items: np.ndarray, values: np.ndarray | None,
                       timestamps: np.ndarray | None = None, *, duplicates: str = "error",
                       func: str = "from_dataframe", source: str = "",
                       line_offset: int | None = None,
                       user_col: str = "user", item_col: str = "item",
                       name: str = "") -> Interactions:
    """Factorise ids (sorted), merge duplicate pairs by ``duplicates`` and build the CSR.

    Parameters
    ----------
    users, items : array-like
        Original ids, one per interaction (any sortable dtype; no missing values).
    values : array-like or None
        Interaction values (None: all ones).
    timestamps : array-like or None
        Integer timestamps, one per interaction.
    duplicates : {"sum", "max", "last", "error"}
        What to do with repeated (user, item) pairs: add values (timestamp: the latest), keep the
        largest value (timestamp: the latest), keep the last occurrence in input order (its
        value and timestamp), or raise. Merged pairs are counted in a :class:`PrepReport`.
    func, source, line_offset, user_col, item_col : str, str, int or None, str, str
        Used in error messages: the calling function, the file, the line number of the first
        row (None: report row positions instead of lines) and the column names.
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise param_error("duplicates", func, f"one of {list(DUPLICATE_POLICIES)}", duplicates)
    where = f" of {source}" if source else ""
    n = len(users)
    if n == 0:
        raise InputError(f"{func}: no interactions found{where}; the data is empty.")

    def _pos(i: int) -> str:
        return f"line {i + line_offset}" if line_offset is not None else f"row {i}"

    u_codes, user_ids = factorize_sorted(np.asarray(users))
    if (bad := np.flatnonzero(u_codes < 0)).size:
        raise InputError(f"{func}: missing (NaN) user id in column '{user_col}' at "
                         f"{_pos(int(bad[0]))}{where} ({bad.size} rows with a missing user id).")
    i_codes, item_ids = factorize_sorted(np.asarray(items))
    if (bad := np.flatnonzero(i_codes < 0)).size:
        raise InputError(f"{func}: missing (NaN) item id in column '{item_col}' at "
                         f"{_pos(int(bad[0]))}{where} ({bad.size} rows with a missing item id).")
    n_users, n_items = user_ids.shape[0], item_ids.shape[0]
    vals = np.ones(n, dtype=np.float64) if values is None else np.asarray(values, np.float64)
    if (bad := np.flatnonzero(~np.isfinite(vals))).size:
        raise InputError(f"{func}: non-finite value {vals[bad[0]]} at {_pos(int(bad[0]))}{where} "
                         f"({bad.size} rows with NaN or infinite values).")
    ts = None if timestamps is None else np.asarray(timestamps, dtype=np.int64)

    key = u_codes * np.int64(n_items) + i_codes
    if n > 1 and not np.all(key[1:] > key[:-1]):
        order = np.argsort(key, kind="stable")
        key = key[order]
        vals = vals[order]
        ts = ts[order] if ts is not None else None
    else:
        order = None
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = key[1:] != key[:-1]
    n_dup = int(n - np.count_nonzero(new_group))
    report = None
    if n_dup:
        if duplicates == "error":
            first = int(np.flatnonzero(~new_group)[0])
            k = key[first]
            orig = int(order[first]) if order is not None else first
            raise InputError(
                f"{func}: duplicate (user, item) pair ({user_ids[k // n_items].tolist()!r}, "
                f"{item_ids[k % n_items].tolist()!r}) at {_pos(orig)}{where}; {n_dup} repeated "
                "pairs in all. Pass duplicates='sum', 'max' or 'last' to merge them.")
        starts = np.flatnonzero(new_group)
        ends = np.append(starts[1:], n)
        if duplicates == "sum":
            vals = np.add.reduceat(vals, starts)
        elif duplicates == "max":
            vals = np.maximum.reduceat(vals, starts)
        else:  # last
            vals = vals[ends - 1]
        if ts is not None:
            ts = ts[ends - 1] if duplicates == "last" else np.maximum.reduceat(ts, starts)
        key = key[starts]
        report = PrepReport("duplicates", {"policy": duplicates}, n, int(key.shape[0]),
                            details={"pairs_merged": n_dup}).log()
    # key is sorted: row boundaries by binary search (cheaper than an int64 division)
    idx_dtype = np.int32 if max(n_items, key.shape[0]) < 2**31 - 1 else np.int64
    indptr = np.searchsorted(key, np.arange(n_users + 1, dtype=np.int64) * n_items)
    cols = key - np.repeat(np.arange(n_users, dtype=np.int64) * n_items, np.diff(indptr))
    indptr = indptr.astype(idx_dtype)
    indices = cols.astype(idx_dtype)
    m = sp.csr_array((vals, indices, indptr), shape=(n_users, n_items))
    m.has_sorted_indices = True
    m.has_canonical_format = True
    t = None
    if ts is not None:
        t = sp.csr_array((ts, indices, indptr), shape=(n_users, n_items))
    return Interactions(matrix=m, user_ids=user_ids, item_ids=item_ids, timestamps=t,
                        reports=[report] if report is not None else [], name=name)
