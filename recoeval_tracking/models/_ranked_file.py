"""Recommendations made elsewhere: ranked top-K lists read from a file, matched to the dataset
by id.

Evaluates what another framework (RecBole, LensKit, implicit, a production ranker...) wrote,
under this package's definitions, splits, tracking and reports. Only the top-K metrics are
defined for lists; the whole-ranking metrics (ROC-AUC, PR-AUC...) are left out, and the run's
``definitions.json`` says which and why.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, check_file, param_error
from ..scores import MISSING_USERS, RankedLists, id_order, order_key
from ._base import Model

__all__ = ["RankedFileModel", "read_ranked_file", "FORMATS"]

logger = logging.getLogger(__name__)

_FUNC = "RankedFileModel"
#: File formats read, and the suffixes ``format="auto"`` maps to them.
FORMATS = {
    "csv": (".csv", ".tsv", ".txt"),
    "parquet": (".parquet", ".pq"),
    "trec": (".trec", ".run"),
}
_TREC_COLUMNS = ["user", "q0", "item", "rank", "score", "tag"]


def _format_of(path: Path, fmt: str) -> str:
    if fmt != "auto":
        if fmt not in FORMATS:
            raise param_error("format", _FUNC, f"one of {['auto', *FORMATS]}", fmt)
        return fmt
    suffix = path.suffix.lower()
    for name, suffixes in FORMATS.items():
        if suffix in suffixes:
            return name
    raise param_error(
        "format",
        _FUNC,
        "given for a file whose suffix is not one of "
        f"{[s for v in FORMATS.values() for s in v]} (format=csv, parquet or "
        "trec)",
        f"the file {path.name!r} with format='auto'",
        got_is_text=True,
    )


def _refused(path: Path, expected: str, got: str, fix: str = "") -> InputError:
    """The error for a file whose content cannot be read as ranked lists: the file, what was
    expected and what was got (with the line, 1-based, where there is one)."""
    return InputError(
        f"The 'path' parameter of {_FUNC} must be a file of ranked "
        f"recommendations with {expected}. Got {got} in {str(path)!r} instead."
        + (f" {fix}" if fix else "")
    )


def _shown(value: Any) -> str:
    """A value of a file or frame as its plain ``repr`` (``-1``, not ``np.int64(-1)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _read_trec(p: Path) -> pd.DataFrame:
    """A TREC run, every line checked: six fields, a numeric rank and score; ordered as
    trec_eval orders it (by score descending, tied scores by docno descending, as text)."""
    names = [*_TREC_COLUMNS, "more"]
    try:
        df = pd.read_csv(
            p,
            sep=r"\s+",
            header=None,
            names=names,
            dtype=str,
            engine="c",
            skip_blank_lines=False,
            keep_default_na=False,
            na_values=[""],
        )
    except pd.errors.EmptyDataError:
        df = pd.DataFrame(columns=names)
    df = df[df.notna().any(axis=1)]
    n_fields = df.notna().sum(axis=1).to_numpy()
    wrong = np.flatnonzero(n_fields != 6)
    if wrong.size:
        i = int(wrong[0])
        fields = [str(v) for v in df.iloc[i] if isinstance(v, str)]
        line = " ".join(fields)
        fix = "It looks like a CSV file: read it with format=csv." if "," in line else ""
        raise _refused(
            p,
            "6 whitespace-separated fields on every line of a TREC run (qid Q0 "
            "docno rank score tag)",
            f"{n_fields[i]} field(s), {line[:80]!r}, on line {df.index[i] + 1}",
            fix,
        )
    if not len(df):
        raise _refused(p, "at least one line (qid Q0 docno rank score tag)", "no line")
    for col, is_score in (("rank", False), ("score", True)):
        _, bad, expected = order_key(df[col].to_numpy(), is_score=is_score)
        if bad is not None:
            raise _refused(
                p,
                f"a {col} field that is {expected} on every line",
                f"{_shown(df[col].iloc[bad])} on line {df.index[bad] + 1}",
            )
    df = df.assign(score=pd.to_numeric(df["score"]))
    df = df.sort_values(["user", "score", "item"], ascending=[True, False, False], kind="stable")
    key = df.groupby("user", sort=False).cumcount().to_numpy() + 1.0
    return pd.DataFrame({"user": df["user"].to_numpy(), "item": df["item"].to_numpy(), "key": key})


def read_ranked_file(
    path: str | Path,
    *,
    format: str = "auto",
    user_col: str = "user",
    item_col: str = "item",
    rank_col: str | None = None,
    score_col: str | None = None,
    sep: str | None = None,
) -> pd.DataFrame:
    """Read ranked recommendations as a DataFrame with columns ``user``, ``item`` and ``key``
    (ascending: 1 is best).

    Parameters
    ----------
    path : str or Path
        A CSV/TSV file with a header, a Parquet file, or a TREC run file
        (``qid Q0 docno rank score tag``, whitespace separated, no header).
    format : {"auto", "csv", "parquet", "trec"}
        ``auto`` picks by suffix (``.csv .tsv .txt``, ``.parquet .pq``, ``.trec .run``).
    user_col, item_col : str
        The columns holding the dataset's own user and item ids (CSV and Parquet).
    rank_col, score_col : str, optional
        The column that orders each list: a rank (smaller = better, 1 = best; a finite number
        >= 0) or a score (higher = better; any number but NaN). By default ``rank`` when the
        file has it, else ``score``. :class:`RankedFileModel` puts a tied score (or rank) to
        the lower item id, whatever the rows' order in the file. A TREC run is ordered as trec_eval orders it: by score,
        descending, ties by docno descending (its rank column is checked, then ignored).
    sep : str, optional
        CSV separator (default ``,``, or a tab for ``.tsv``).

    Raises
    ------
    InputError
        A file that cannot be read as ranked lists, naming the file, the line (CSV, TREC) or
        row (Parquet), what was expected and what was got: a TREC line without exactly six
        fields (a CSV read with ``format="trec"``), a rank or score that is not a number, a
        negative rank, a NaN score, a file without a single row.
    """
    p = Path(path)
    fmt = _format_of(p, format)
    try:
        if fmt == "trec":
            return _read_trec(p)
        if fmt == "parquet":
            df = pd.read_parquet(p)
        else:
            df = pd.read_csv(
                p, sep=sep or ("\t" if p.suffix.lower() == ".tsv" else ","), skip_blank_lines=False
            )
            df = df[df.notna().any(axis=1)]
    except (ValueError, pd.errors.ParserError, OSError) as err:
        if isinstance(err, (FileNotFoundError, InputError)):
            raise
        raise InputError(
            f"The 'path' parameter of {_FUNC} must be a readable {fmt} file of "
            f"ranked recommendations. Reading {str(p)!r} failed: "
            f"{' '.join(str(err).split())}"
        ) from err
    cols = list(df.columns)
    for name, col in (("user_col", user_col), ("item_col", item_col)):
        if col not in cols:
            raise param_error(name, _FUNC, f"a column of the file (columns: {cols})", col)
    order_col = (
        rank_col
        or score_col
        or ("rank" if "rank" in cols else "score" if "score" in cols else None)
    )
    if order_col is None or order_col not in cols:
        raise param_error(
            "rank_col" if rank_col or not score_col else "score_col",
            _FUNC,
            f"a column of the file that orders each list (a rank, 1 = best, or "
            f"a score, higher = better; columns: {cols})",
            order_col,
            got_is_text=order_col is None,
        )
    where = (
        (lambda i: f"row {i + 1}") if fmt == "parquet" else (lambda i: f"line {df.index[i] + 2}")
    )  # line 1 is the header
    if not len(df):
        raise _refused(p, "at least one row under its header", f"a header {cols} and no row")
    is_score = order_col == score_col or (
        rank_col is None and score_col is None and order_col == "score"
    )
    key, bad, expected = order_key(df[order_col].to_numpy(), is_score=is_score)
    if bad is not None:
        raise _refused(
            p,
            f"a {order_col!r} column that is {expected} in every row",
            f"{_shown(df[order_col].iloc[bad])} on {where(bad)}",
        )
    return pd.DataFrame(
        {"user": df[user_col].to_numpy(), "item": df[item_col].to_numpy(), "key": key}
    )


def _positions(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of each of ``values`` in ``ids`` (-1 when absent); ids compared as text when the
    file and the dataset store them with different types (``"42"`` in a file, 42 in the data)."""
    index = pd.Index(ids)
    pos = index.get_indexer(values)
    if (pos < 0).all() and len(values) and pd.Index(values).dtype != index.dtype:
        pos = pd.Index(ids.astype(str)).get_indexer(np.asarray(values).astype(str))
    return pos


class RankedFileModel(Model):
    """Ranked recommendation lists made elsewhere, read from a file (CSV, Parquet or a TREC run).

    ``fit`` reads the file and matches its users and items to the dataset's own ids (the id maps
    ``fit`` is given; without them, ids are row and column indices). Users and items the dataset
    does not know are counted and logged as a warning, never dropped silently; an item listed
    twice for a user counts once, at its best rank; a tied score goes to the lower item id,
    whatever the rows' order (a TREC run: as trec_eval orders it, tied scores by docno
    descending); lists may be shorter than K (the missing ranks hold no item); items the user
    has in train are skipped, as in every ranking here.
    Evaluated users the file has no list for are counted, in a warning and in the run's
    ``definitions.json`` (``definitions.source``), and treated by ``missing_users``.

    Parameters
    ----------
    path : str or Path
        The file (relative paths are taken from the directory the command was started from).
    format, user_col, item_col, rank_col, score_col, sep
        As for :func:`read_ranked_file`.
    missing_users : {"zero", "skip", "error"}
        What an evaluated user without a list gets: an empty list, so every metric 0, averaged
        in (``"zero"``, the default); NaN with reason ``no_list``, left out of the means
        (``"skip"``); or the evaluation is refused, naming their count and a few ids
        (``"error"``: a truncated export should not pass as a bad model).
    """

    name = "ranked_file"

    def __init__(
        self,
        path: str | Path,
        *,
        format: str = "auto",
        user_col: str = "user",
        item_col: str = "item",
        rank_col: str | None = None,
        score_col: str | None = None,
        sep: str | None = None,
        missing_users: str = "zero",
    ) -> None:
        super().__init__()
        if not isinstance(path, (str, Path)):
            raise param_error("path", _FUNC, "a file path (str)", path)
        check_file(
            path,
            "path",
            _FUNC,
            fix="Check the path (relative paths are read from the "
            "directory the command was started from).",
        )
        _format_of(Path(path), format)
        if rank_col is not None and score_col is not None:
            raise InputError(
                f"{_FUNC} takes 'rank_col' or 'score_col', not both. Got "
                f"rank_col={rank_col!r} and score_col={score_col!r}."
            )
        if missing_users not in MISSING_USERS:
            raise param_error(
                "missing_users", _FUNC, f"one of {list(MISSING_USERS)}", missing_users
            )
        self.path, self.format, self.sep = path, format, sep
        self.missing_users = missing_users
        self.user_col, self.item_col = user_col, item_col
        self.rank_col, self.score_col = rank_col, score_col
        self.counts: dict[str, int] = {}

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        # read_ranked_file's options are this model's parameters but the list's own
        reading = {k: v for k, v in self.params().items() if k not in ("path", "missing_users")}
        df = read_ranked_file(self.path, **reading)
        m, n = X.shape
        users = _positions(
            user_ids if user_ids is not None else np.arange(m), df["user"].to_numpy()
        )
        items = _positions(
            item_ids if item_ids is not None else np.arange(n), df["item"].to_numpy()
        )
        unknown_u, unknown_i = users < 0, items < 0
        keep = ~unknown_u & ~unknown_i
        key = df["key"].to_numpy()[keep]
        users, items = users[keep], items[keep]
        rank = id_order(item_ids) if item_ids is not None else None
        tie = items if rank is None else rank[items]  # a tied score: the lower item id first
        order = np.lexsort((tie, key, users))
        users, items = users[order], items[order]
        pair = users.astype(np.int64) * n + items
        _, first = np.unique(pair, return_index=True)
        dup = np.ones(pair.shape[0], dtype=bool)
        dup[first] = False
        self._users, self._items = users[~dup], items[~dup]
        self.counts = {
            "rows": int(len(df)),
            "users_in_file": int(df["user"].nunique()),
            "unknown_users": int(pd.unique(df["user"].to_numpy()[unknown_u]).shape[0]),
            "unknown_items": int(pd.unique(df["item"].to_numpy()[unknown_i]).shape[0]),
            "rows_dropped_unknown": int((~keep).sum()),
            "repeated_items": int(dup.sum()),
            "users_with_lists": int(np.unique(self._users).shape[0]),
        }
        c = self.counts
        if c["rows_dropped_unknown"]:
            logger.warning(
                "%s: %d of %d rows name a user or item the dataset does not have (%d unknown "
                "users, %d unknown items); those rows are not evaluated. Check that the file "
                "uses the dataset's own ids (user_col=%r, item_col=%r).",
                self.path,
                c["rows_dropped_unknown"],
                c["rows"],
                c["unknown_users"],
                c["unknown_items"],
                self.user_col,
                self.item_col,
            )
        if c["repeated_items"]:
            logger.warning(
                "%s: %d repeated (user, item) rows; each item counts once, at its best rank.",
                self.path,
                c["repeated_items"],
            )

    def eval_inputs(self, k: int, users: np.ndarray | None = None) -> dict[str, Any]:
        """``{"ranked": RankedLists}``: every user's list, padded to at least ``k`` ranks."""
        self.score_source()  # NotFittedError before fit
        ranks = np.arange(self._users.shape[0])  # already in each user's list order
        return {
            "ranked": RankedLists.from_pairs(
                self._users,
                self._items,
                ranks,
                int(self.n_users_ or 0),
                int(k),
                func=_FUNC,
                missing_users=self.missing_users,
            )
        }

    def _score_source(self) -> Any:
        return None

    def params(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "format": self.format,
            "user_col": self.user_col,
            "item_col": self.item_col,
            "rank_col": self.rank_col,
            "score_col": self.score_col,
            "sep": self.sep,
            "missing_users": self.missing_users,
        }
