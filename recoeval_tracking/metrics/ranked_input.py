"""Ranked top-K lists given to ``evaluate(ranked=...)``, checked: an (m x L) array of item
indices, :class:`~recoeval_tracking.scores.RankedLists`, or a DataFrame of (user, item, rank or
score) rows.

Policies, each stated in the warning or error it raises:

* a DataFrame needs the columns ``user``, ``item`` and ``rank`` (smaller = better) or
  ``score`` (higher = better); a second column for the same role (``user`` and ``user_id``)
  is ambiguous and refused, and so is a frame without a row (every user would score 0);
  every user and item must be in the data's id maps;
* a rank must be a finite number >= 0 and a score a number other than NaN, in every row: the
  same rule as a ranked file (:func:`~recoeval_tracking.scores.order_key`); complex values are
  refused (their imaginary part would be dropped);
* two different items at one rank of one user's list are refused (their order would be
  chance), naming the user and the rank; a tied score goes to the lower item id, whatever the
  frame's row order (the rule of :func:`~recoeval_tracking.spark.evaluate_spark`);
* with bare matrices (no id maps) the ``item`` column must hold column indices: string ids
  are refused, pointing to interactions containers;
* an item listed twice in a user's list counts once, at its best rank (a warning gives the
  count of copies dropped);
* users the DataFrame gives no list are counted at evaluation time and treated by
  ``missing_users`` (:data:`~recoeval_tracking.scores.MISSING_USERS`; see
  :func:`.protocol.missing_lists`).
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import InputError, param_error
from ..scores import MISSING_USERS, RankedLists, id_order, order_key

if TYPE_CHECKING:  # imported where a frame is read: a first evaluate() needs no pandas
    import pandas as pd

__all__ = ["ranked_lists", "dedupe_lists", "RANKED_ALIASES"]

#: Other names of the user and item columns: a frame with one of them beside ``user`` or
#: ``item`` is ambiguous (which column holds the ids?).
RANKED_ALIASES = {
    "user": ("user_id", "userId", "userid", "uid"),
    "item": ("item_id", "itemId", "itemid", "iid", "movieId", "movie_id"),
}


def _frame_columns(df: pd.DataFrame, func: str) -> str:
    """The column that orders the lists (``rank``, else ``score``), the columns checked."""
    cols = list(df.columns)
    if not {"user", "item"} <= set(cols) or not ({"rank", "score"} & set(cols)):
        raise param_error(
            "ranked",
            func,
            "a DataFrame with columns 'user', 'item' and "
            "'rank' (1 = best) or 'score' (higher = better)",
            f"columns {cols}",
            got_is_text=True,
        )
    for role, aliases in RANKED_ALIASES.items():
        other = [c for c in aliases if c in cols]
        if other:
            raise param_error(
                "ranked",
                func,
                f"a DataFrame with one {role} id column ('{role}')",
                f"both '{role}' and {other[0]!r} (which holds the ids is ambiguous)",
                got_is_text=True,
                fix=f"Drop one, e.g. df.drop(columns={other[0]!r}).",
            )
    if not len(df):
        raise param_error(
            "ranked",
            func,
            "a DataFrame with at least one (user, item) row",
            f"columns {cols} and no row",
            got_is_text=True,
        )
    for col in ("user", "item"):
        if df[col].dtype.kind == "c":
            raise param_error(
                "ranked",
                func,
                f"a DataFrame whose '{col}' column holds ids",
                f"complex values ({df[col].dtype})",
                got_is_text=True,
            )
    return "rank" if "rank" in cols else "score"


def _shown(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _integral(values: np.ndarray) -> np.ndarray:
    """Which values are whole numbers (ints, or floats such as 3.0)."""
    if values.dtype.kind in "iub":
        return np.ones(values.shape, dtype=bool)
    if values.dtype.kind == "f":
        return np.isfinite(values) & (values == np.round(values))
    return np.array([isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values])


def _holds_indices(values: np.ndarray) -> bool:
    return bool(_integral(values).all())


def _refuse_shared_ranks(df: pd.DataFrame, func: str) -> None:
    """Two different items at one rank of one user's list leave their order to chance: refused,
    naming the first user and rank (the same item twice is a copy, dropped later)."""
    pairs = df[["user", "rank", "item"]].drop_duplicates()
    shared = pairs.duplicated(["user", "rank"], keep=False).to_numpy()
    if not shared.any():
        return
    first = pairs[shared].iloc[0]
    items = pairs[shared & (pairs["user"] == first["user"]).to_numpy()]
    items = items[items["rank"] == first["rank"]]["item"].tolist()
    raise param_error(
        "ranked",
        func,
        "a DataFrame whose 'rank' column gives each item of a user's list its own rank",
        f"user {_shown(first['user'])} with {len(items)} items at rank "
        f"{_shown(first['rank'])} ({', '.join(_shown(i) for i in items[:5])})",
        got_is_text=True,
        fix="Number each user's items 1, 2, 3... in the model's order, or give a 'score' "
        "column instead of 'rank' (a tied score goes to the lower item id).",
    )


def _positions(known: Any, ids: np.ndarray, what: str, where: str, func: str) -> np.ndarray:
    """The positions of the ``what`` ids ``ids`` among ``known`` (the ``where`` ids), refusing
    the first that is not there."""
    import pandas as pd

    pos = pd.Index(known).get_indexer(ids)
    if (pos < 0).any():
        bad = ids[np.flatnonzero(pos < 0)[0]]
        expected = f"{what}s that are in the {where} ids"
        raise param_error(
            "ranked", func, expected, f"an unknown {what} id {bad!r}", got_is_text=True
        )
    return pos


def _from_frame(df: pd.DataFrame, prep: Any, func: str, missing_users: str) -> RankedLists:
    m = prep.test.shape[0]
    order_col = _frame_columns(df, func)
    key, bad, expected = order_key(df[order_col].to_numpy(), is_score=order_col == "score")
    if bad is not None:
        raise param_error(
            "ranked",
            func,
            f"a DataFrame whose '{order_col}' column holds {expected} in every row",
            f"{_shown(df[order_col].iloc[bad])} in row {df.index[bad]!r}",
            got_is_text=True,
        )
    users = df["user"].to_numpy()
    items = df["item"].to_numpy()
    if order_col == "rank":
        _refuse_shared_ranks(df, func)
    if prep.item_ids is None and not _holds_indices(items):
        bad_item = items[np.flatnonzero(~_integral(items))[0]]
        raise param_error(
            "ranked",
            func,
            "a DataFrame whose 'item' column holds column indices (ints in "
            f"[0, {prep.test.shape[1]})) when train and test are bare matrices, which carry "
            "no item ids",
            f"an item {_shown(bad_item)} (dtype {items.dtype})",
            got_is_text=True,
            fix="Pass train and test as interactions (rt.from_dataframe(...) or "
            "rt.Interactions) whose item ids the frame's ids are looked up in, or map the ids "
            "to the matrices' column indices first.",
        )
    if prep.item_ids is not None:
        items = _positions(prep.item_ids, items, "item", "dataset's item", func)
    upos = _positions(prep.user_ids, users, "user", "evaluated user", func)
    rank = None if prep.item_ids is None else id_order(prep.item_ids)
    return RankedLists.from_pairs(
        upos,
        items,
        key,
        m,
        func=func,
        missing_users=missing_users,
        tie=None if rank is None else rank[items],
    )


def ranked_lists(
    ranked: Any, prep: Any, func: str, missing_users: str | None = None
) -> RankedLists:
    """The checked lists of ``ranked`` (an array, :class:`RankedLists` or a DataFrame), one per
    user of ``prep``; ``missing_users`` applies to lists made of (user, item) pairs."""
    m, n = prep.test.shape
    if missing_users is not None and missing_users not in MISSING_USERS:
        raise param_error("missing_users", func, f"one of {list(MISSING_USERS)}", missing_users)
    if "pandas" in sys.modules and isinstance(ranked, sys.modules["pandas"].DataFrame):
        ranked = _from_frame(ranked, prep, func, missing_users or "zero")
    elif missing_users is not None:
        if not isinstance(ranked, RankedLists) or ranked.listed is None:
            raise InputError(
                f"The 'missing_users' parameter of {func} applies to ranked (user, item) rows "
                "(a DataFrame, a ranked file): an array of lists has a row for every user, so "
                f"no user is missing (an empty row is an empty list). Got missing_users="
                f"{missing_users!r} with {type(ranked).__name__} lists."
            )
        ranked = dataclasses.replace(ranked, missing_users=missing_users)
    rl = ranked if isinstance(ranked, RankedLists) else RankedLists(ranked, func=func)
    items, n_dup = dedupe_lists(rl.items)
    if n_dup:
        warnings.warn(
            f"The 'ranked' lists passed to {func} repeat an item {n_dup} times; each "
            "item counts once, at its best rank (the later copies are dropped and the "
            "rest of the list moves up).",
            UserWarning,
            stacklevel=5,
        )
        rl = dataclasses.replace(rl, items=items)
    if rl.items.shape[0] != m:
        raise param_error("ranked", func, f"one list per user ({m} rows)", rl.items)
    if rl.items.size and (rl.items.max() >= n or rl.items.min() < -1):
        raise param_error(
            "ranked",
            func,
            f"item indices in [0, {n}) or -1 for padding",
            f"values from {rl.items.min()} to {rl.items.max()}",
            got_is_text=True,
        )
    # a copy: the evaluation records its count of users without a list on it, never on the
    # caller's object (evaluated again on other data, it would carry a stale count)
    return dataclasses.replace(rl) if rl is ranked else rl


def dedupe_lists(lists: np.ndarray) -> tuple[np.ndarray, int]:
    """Ranked lists without repeated items (first occurrence kept, the rest compacted, -1
    padding at the end), and the number of copies dropped."""
    if lists.ndim != 2 or lists.shape[1] < 2:
        return lists, 0
    srt = np.sort(lists, axis=1)  # the check alone: a quarter of the stable argsort's time
    if not ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any():
        return lists, 0
    order = np.argsort(lists, axis=1, kind="stable")
    srt = np.take_along_axis(lists, order, axis=1)
    repeat = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
    n_dup = int(repeat.sum())
    if not n_dup:
        return lists, 0
    later = np.zeros(lists.shape, dtype=bool)
    np.put_along_axis(later, order[:, 1:], repeat, axis=1)
    keep = ~later & (lists >= 0)
    pos = np.argsort(~keep, axis=1, kind="stable")
    return np.take_along_axis(np.where(keep, lists, -1), pos, axis=1), n_dup
