"""Build a canonical :class:`Interactions` from id columns (factorise ids, merge duplicates)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, param_error
from ._interactions import DUPLICATE_POLICIES, Interactions, PrepReport

__all__ = ["factorize_sorted", "build_interactions", "checked_ids"]


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


_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def checked_ids(
    values: Any, role: str, col: str, prefix: str, where: str, pos: Callable[[int], str]
) -> np.ndarray:
    """The ids of one column, checked: integers (that fit in 64 bits; integral floats are
    accepted) or text, one kind per column; missing values are left for the caller.

    Raises :class:`InputError` naming the column, the first bad line (``pos``) and the fix, so a
    bad id fails at load rather than when the per-user table is written.
    """
    arr = np.asarray(values)
    kind = arr.dtype.kind
    fix = "Ids must be integers in the 64-bit range, or text; check the column mapping."
    if kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
        i = int(np.argmax(arr))
        raise InputError(
            f"{prefix}{role} id {arr[i]} in column '{col}' at {pos(i)}{where} is "
            f"out of the 64-bit integer range. {fix}"
        )
    if kind == "f":
        finite = np.isfinite(arr)
        bad = np.flatnonzero(finite & ((arr != np.round(arr)) | (np.abs(arr) >= 2.0**63)))
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"{prefix}{role} id {arr[i].item()!r} in column '{col}' at "
                f"{pos(i)}{where} is not an integer in the 64-bit range "
                f"({bad.size} such rows). {fix}"
            )
    if kind == "b" or kind in "cmM":
        raise InputError(
            f"{prefix}{role} ids in column '{col}'{where} are of type {arr.dtype}. {fix}"
        )
    if kind == "O":
        arr = _object_ids(arr, role, col, prefix, where, pos, fix)
    return arr


def _object_ids(
    arr: np.ndarray,
    role: str,
    col: str,
    prefix: str,
    where: str,
    pos: Callable[[int], str],
    fix: str,
) -> np.ndarray:
    """Object ids: all text, or all integers (then returned as int64)."""
    inferred = pd.api.types.infer_dtype(arr, skipna=True)
    if inferred in ("string", "empty"):
        return arr
    if inferred == "integer":
        for i, v in enumerate(arr):
            if (
                v is not None
                and not (isinstance(v, float) and v != v)
                and not _INT64_MIN <= int(v) <= _INT64_MAX
            ):
                raise InputError(
                    f"{prefix}{role} id {v} in column '{col}' at {pos(i)}{where} is "
                    f"out of the 64-bit integer range. {fix}"
                )
        return arr if pd.isna(arr).any() else arr.astype(np.int64)
    kinds = sorted({type(v).__name__ for v in arr if not pd.isna(v)})
    raise InputError(
        f"{prefix}{role} ids in column '{col}'{where} mix types ({', '.join(kinds)});"
        f" they must be all integers or all text. Convert the column first "
        f"(e.g. df['{col}'].astype(str))."
    )


def _codes(
    values: Any, role: str, col: str, prefix: str, where: str, pos: Callable[[int], str]
) -> tuple[np.ndarray, np.ndarray]:
    """Checked ids of one column factorised (sorted uniques); missing ids raise."""
    codes, ids = factorize_sorted(checked_ids(values, role, col, prefix, where, pos))
    if (bad := np.flatnonzero(codes < 0)).size:
        raise InputError(
            f"{prefix}missing (NaN) {role} id in column '{col}' at "
            f"{pos(int(bad[0]))}{where} ({bad.size} rows with a missing {role} id)."
        )
    return codes, ids


def build_interactions(
    users: np.ndarray,
    items: np.ndarray,
    values: np.ndarray | None,
    timestamps: np.ndarray | None = None,
    *,
    duplicates: str = "error",
    func: str = "from_dataframe",
    source: str = "",
    line_offset: int | None = None,
    user_col: str = "user",
    item_col: str = "item",
    name: str = "",
) -> Interactions:
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

    u_codes, user_ids = _codes(users, "user", user_col, f"{func}: ", where, _pos)
    i_codes, item_ids = _codes(items, "item", item_col, f"{func}: ", where, _pos)
    n_users, n_items = user_ids.shape[0], item_ids.shape[0]
    vals = np.ones(n, dtype=np.float64) if values is None else np.asarray(values, np.float64)
    if (bad := np.flatnonzero(~np.isfinite(vals))).size:
        raise InputError(
            f"{func}: non-finite value {vals[bad[0]]} at {_pos(int(bad[0]))}{where} "
            f"({bad.size} rows with NaN or infinite values)."
        )
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
                "pairs in all. Pass duplicates='sum', 'max' or 'last' to merge them."
            )
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
        report = PrepReport(
            "duplicates",
            {"policy": duplicates},
            n,
            int(key.shape[0]),
            details={"pairs_merged": n_dup},
        ).log()
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
    return Interactions(
        matrix=m,
        user_ids=user_ids,
        item_ids=item_ids,
        timestamps=t,
        reports=[report] if report is not None else [],
        name=name,
    )
