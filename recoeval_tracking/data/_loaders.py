"""Loaders: MovieLens files, generic CSV/TSV/Parquet, DataFrames, and the dataset registry.

Every loader returns an :class:`~recoeval_tracking.data.Interactions` whose ids are mapped to
row/column indices in the sorted order of the original ids. Bad input raises
:class:`~recoeval_tracking.InputError` naming the file, line and column.
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, check_file, param_error
from ._build import build_interactions
from ._interactions import Interactions
from ._partitioned import load_parquet_partitioned
from ._relevance import EVERY_ENTRY, RATINGS, Relevance
from ._synthetic import make_synthetic

__all__ = [
    "load_movielens_100k",
    "load_movielens_1m",
    "load_movielens_latest",
    "load_csv",
    "load_parquet",
    "from_dataframe",
    "load_dataset",
    "DATASETS",
]

ROLES = ("user", "item", "value", "timestamp")
#: The default of every ``columns`` parameter: empty, meaning the default mapping. Not None, so
#: that the config schema derived from the signature holds a dict a command line can fill in
#: (``++dataset.columns={user:userId,item:movieId}``, ``+dataset.columns.user=userId``).
DEFAULT_COLUMNS: Mapping[str, Any] = types.MappingProxyType({})
_REQUIRED = ("user", "item")
_SEP_CANDIDATES = (",", "\t", ";", "|", "::", " ")


def _check_columns(columns: Any, func: str, *, positional: bool) -> dict[str, Any]:
    if not isinstance(columns, Mapping):
        raise param_error(
            "columns",
            func,
            "a mapping of roles ('user', 'item', 'value', "
            "'timestamp') to column names or positions",
            columns,
        )
    unknown = [k for k in columns if k not in ROLES]
    if unknown:
        raise param_error(
            "columns",
            func,
            f"a mapping whose keys are among {list(ROLES)}",
            f"unknown keys {unknown}",
            got_is_text=True,
        )
    out = {k: v for k, v in columns.items() if v is not None}
    missing = [k for k in _REQUIRED if k not in out]
    if missing:
        raise param_error(
            "columns",
            func,
            "a mapping that names the 'user' and 'item' columns",
            f"no column for {missing}",
            got_is_text=True,
        )
    if positional:
        for k, v in out.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise param_error(
                    "columns",
                    func,
                    "column positions (ints >= 0) when header=False",
                    f"{v!r} for '{k}'",
                    got_is_text=True,
                )
    return out


def _numeric(
    series: pd.Series,
    role: str,
    col: Any,
    func: str,
    source: str,
    line_offset: int | None,
    *,
    integer: bool = False,
) -> np.ndarray:
    """Numeric values of a column, or an error naming the first bad line/row and the text."""
    where = f" of {source}" if source else ""

    def _pos(i: int) -> str:
        return f"line {i + line_offset}" if line_offset is not None else f"row {i}"

    if series.dtype.kind in "iufb":
        arr = series.to_numpy()
    else:
        arr = pd.to_numeric(series, errors="coerce").to_numpy()
        bad = np.flatnonzero(pd.isna(arr) & ~pd.isna(series.to_numpy()))
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"{func}: non-numeric {role} {series.iloc[i]!r} in column "
                f"{col!r} at {_pos(i)}{where} ({bad.size} non-numeric rows). "
                "Check the column mapping and the separator."
            )
    arr = np.asarray(arr, dtype=np.float64) if arr.dtype.kind in "fb" else arr
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"{func}: missing or non-finite {role} in column {col!r} at "
                f"{_pos(i)}{where} ({bad.size} such rows)."
            )
        if integer:
            if np.any(arr != np.round(arr)):
                i = int(np.flatnonzero(arr != np.round(arr))[0])
                raise InputError(
                    f"{func}: non-integer {role} {arr[i]!r} in column {col!r} at "
                    f"{_pos(i)}{where}; timestamps must be integers (e.g. seconds "
                    "since the epoch)."
                )
            arr = arr.astype(np.int64)
    return arr


def _frame_to_interactions(
    df: pd.DataFrame,
    cols: dict[str, Any],
    *,
    func: str,
    source: str,
    line_offset: int | None,
    duplicates: str,
    name: str,
    relevance: Relevance,
) -> Interactions:
    if df.shape[0] == 0:
        where = f" in {source}" if source else ""
        raise InputError(f"{func}: no interactions found{where}; the data is empty.")
    values = timestamps = None
    if "value" in cols:
        values = _numeric(df[cols["value"]], "value", cols["value"], func, source, line_offset)
    if "timestamp" in cols:
        timestamps = _numeric(
            df[cols["timestamp"]],
            "timestamp",
            cols["timestamp"],
            func,
            source,
            line_offset,
            integer=True,
        )
    X = build_interactions(
        df[cols["user"]].to_numpy(),
        df[cols["item"]].to_numpy(),
        values,
        timestamps,
        duplicates=duplicates,
        func=func,
        source=source,
        line_offset=line_offset,
        user_col=str(cols["user"]),
        item_col=str(cols["item"]),
        name=name,
    )
    X.relevance = relevance
    return X


def _check_encoding(encoding: Any, func: str) -> None:
    import codecs

    try:
        if not isinstance(encoding, str):
            raise LookupError(encoding)
        codecs.lookup(encoding)
    except LookupError:
        raise param_error(
            "encoding",
            func,
            "the name of a text encoding Python knows (utf-8, latin-1...)",
            encoding,
        ) from None


def _first_line(path: Path, encoding: str) -> str:
    with open(path, encoding=encoding, errors="replace") as fh:
        return fh.readline().rstrip("\r\n")


def _guess_sep(line: str, current: str) -> str | None:
    for cand in _SEP_CANDIDATES:
        if cand != current and len(line.split(cand)) >= 2:
            return cand
    return None


def _no_rows(func: str, path: Path, what: str) -> InputError:
    """The error of a data file without any interaction (the app names ``dataset.path``)."""
    return param_error(
        "path",
        func,
        "a file with at least one interaction",
        f"'{path}', {what or 'which holds no row'}",
        "Check the path, or write the interactions into the file.",
        got_is_text=True,
    )


def load_csv(
    path: str | os.PathLike,
    columns: Mapping[str, Any] | None = DEFAULT_COLUMNS,
    sep: str = ",",
    header: bool = True,
    *,
    duplicates: str = "error",
    encoding: str = "utf-8",
    name: str | None = None,
    relevance_level: float | None = EVERY_ENTRY.level,
    gains: str = EVERY_ENTRY.gains,
) -> Interactions:
    """Load interactions from a delimited text file (CSV, TSV, ``::``-separated, ...).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    columns : mapping, optional
        Role -> column: keys among ``user``, ``item``, ``value``, ``timestamp`` (``user`` and
        ``item`` required; a missing ``value`` means all ones, a missing ``timestamp`` means no
        timestamps). Column names when ``header=True``, 0-based positions otherwise. Default
        (None or empty):
        ``{"user": "user", "item": "item", "value": "value", "timestamp": "timestamp"}`` (the
        last two only when present) with a header, ``{"user": 0, "item": 1, "value": 2}``
        without (``value`` only when the file has a third field).
    sep : str
        Field separator. ``"::"`` (MovieLens 1M) is read with the fast C parser by splitting on
        ``":"`` and keeping every other field.
    header : bool
        Whether the first line holds column names.
    duplicates : {"error", "sum", "max", "last"}
        Policy for repeated (user, item) pairs (see :func:`build_interactions`).
    encoding : str
        Text encoding of the file.
    name : str, optional
        Label of the dataset (default: the file name).
    relevance_level, gains : float or None, {"graded", "binary"}
        The data's relevance rule (:class:`~recoeval_tracking.data.Relevance`, the returned
        object's ``relevance``), applied by the evaluation unless it is given another: test
        entries below ``relevance_level`` are judged non-relevant (None: every entry is a
        positive), a positive's gain is its value (``graded``) or 1 (``binary``).

    Returns
    -------
    Interactions

    Raises
    ------
    InputError
        A missing file, a separator that does not split the first line, missing columns,
        non-numeric values or timestamps, missing ids or an empty file; the message names the
        file, the line and the column.
    """
    func = "load_csv"
    rule = Relevance.checked(relevance_level, gains, func)
    p = check_file(path, "path", func)
    if not isinstance(sep, str) or not sep:
        raise param_error("sep", func, "a non-empty string", sep)
    _check_encoding(encoding, func)
    first = _first_line(p, encoding)
    if first == "" and p.stat().st_size <= 1:
        raise _no_rows(func, p, "which is empty")
    fields = first.split(sep)
    if columns is None or (isinstance(columns, Mapping) and not columns):
        if header:
            columns = {"user": "user", "item": "item"}
            columns.update({r: r for r in ("value", "timestamp") if r in fields})
        else:
            columns = {"user": 0, "item": 1} | ({"value": 2} if len(fields) > 2 else {})
    cols = _check_columns(columns, func, positional=not header)
    wanted = list(dict.fromkeys(cols.values()))
    if len(fields) < 2:
        guess = _guess_sep(first, sep)
        hint = f" Did you mean sep={guess!r}?" if guess else ""
        raise InputError(
            f"{func}: line 1 of {p} has a single field with sep={sep!r} "
            f"({first[:80]!r}); expected at least the user and item columns.{hint}"
        )
    if header:
        missing = [c for c in wanted if c not in fields]
        if missing:
            raise InputError(
                f"{func}: column(s) {missing} not found in the header (line 1) of "
                f"{p}; the columns are {fields}. Fix the 'columns' mapping or "
                "the separator."
            )
        positions = {c: fields.index(c) for c in wanted}
    else:
        too_far = [c for c in wanted if c >= len(fields)]
        if too_far:
            raise InputError(
                f"{func}: column position(s) {too_far} out of range on line 1 of "
                f"{p}, which has {len(fields)} fields with sep={sep!r}."
            )
        positions = {c: c for c in wanted}
    df = _read_columns(p, positions, sep=sep, header=header, encoding=encoding, func=func)
    line_offset = 2 if header else 1
    return _frame_to_interactions(
        df,
        cols,
        func=func,
        source=str(p),
        line_offset=line_offset,
        duplicates=duplicates,
        name=name or p.name,
        relevance=rule,
    )


def _read_columns(
    p: Path, positions: dict[Any, int], *, sep: str, header: bool, encoding: str, func: str
) -> pd.DataFrame:
    """The columns at ``positions`` (column key -> 0-based field) of a delimited file, named by
    their keys, read with pandas' C parser."""
    # the C engine; "::" becomes ":" with every other field empty
    if sep == "::":
        read_sep, scale = ":", 2
    else:
        read_sep, scale = sep, 1
    usecols = sorted({field * scale for field in positions.values()})
    try:
        df = pd.read_csv(
            p,
            sep=read_sep,
            header=None,
            skiprows=1 if header else 0,
            usecols=usecols,
            engine="c",
            encoding=encoding,
            skip_blank_lines=False,
            quoting=3 if sep == "::" else 0,
        )
    except pd.errors.ParserError as exc:
        raise InputError(f"{func}: could not parse {p} with sep={sep!r}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{func}: {p} is not valid {encoding} text ({exc}); pass the right 'encoding'."
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise _no_rows(func, p, "which has a header line and no row" if header else "") from exc
    except ValueError as exc:  # e.g. rows with fewer fields than the header names
        raise InputError(
            f"{func}: could not read the columns {sorted(positions)} of {p} with "
            f"sep={sep!r} ({exc}). Check that every line has as many fields as "
            "the header, and the separator."
        ) from exc
    return df.rename(columns={field * scale: c for c, field in positions.items()})


#: Each MovieLens file the loaders read: its name in the dataset's folder, its columns (0-based
#: positions without a header) and how :func:`load_csv` reads it.
_MOVIELENS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "movielens_100k": (
        "u.data",
        {"user": 0, "item": 1, "value": 2, "timestamp": 3},
        {"sep": "\t", "header": False},
    ),
    "movielens_1m": (
        "ratings.dat",
        {"user": 0, "item": 1, "value": 2, "timestamp": 3},
        {"sep": "::", "header": False, "encoding": "latin-1"},
    ),
    "movielens_latest": (
        "ratings.csv",
        {"user": "userId", "item": "movieId", "value": "rating", "timestamp": "timestamp"},
        {"sep": ",", "header": True},
    ),
}


def _load_movielens(
    name: str,
    path: str | os.PathLike,
    duplicates: str,
    relevance_level: float | None,
    gains: str,
) -> Interactions:
    """The MovieLens file ``name`` of :data:`_MOVIELENS` through :func:`load_csv`: ``path`` is
    the file or its folder; a bad relevance rule is named by the loader ``load_<name>``."""
    Relevance.checked(relevance_level, gains, f"load_{name}")
    file, columns, csv = _MOVIELENS[name]
    p = Path(path)
    p = p / file if p.is_dir() else p
    return load_csv(
        p,
        columns,
        duplicates=duplicates,
        name=name,
        relevance_level=relevance_level,
        gains=gains,
        **csv,
    )


def load_movielens_100k(
    path: str | os.PathLike,
    *,
    duplicates: str = "error",
    relevance_level: float | None = RATINGS.level,
    gains: str = RATINGS.gains,
) -> Interactions:
    """Load MovieLens 100K ``u.data`` (tab-separated ``user item rating timestamp``, no header).

    ``path`` may be the file or its folder. Harper & Konstan (2015), "The MovieLens Datasets:
    History and Context", ACM TiiS 5(4).

    The relevance rule (``relevance_level``, ``gains``; :func:`load_csv`) of every MovieLens
    loader is that of explicit ratings, :data:`~recoeval_tracking.data.RATINGS`: ratings >= 4
    are the positives, each with gain 1, lower ones are judged non-relevant. Pass
    ``relevance_level=None, gains="graded"`` to make every rating a positive with its value
    as gain.
    """
    return _load_movielens("movielens_100k", path, duplicates, relevance_level, gains)


def load_movielens_1m(
    path: str | os.PathLike,
    *,
    duplicates: str = "error",
    relevance_level: float | None = RATINGS.level,
    gains: str = RATINGS.gains,
) -> Interactions:
    """Load MovieLens 1M ``ratings.dat`` (``UserID::MovieID::Rating::Timestamp``, no header).

    ``path`` may be the file or its folder. Relevance as for :func:`load_movielens_100k`.
    """
    return _load_movielens("movielens_1m", path, duplicates, relevance_level, gains)


def load_movielens_latest(
    path: str | os.PathLike,
    *,
    duplicates: str = "error",
    relevance_level: float | None = RATINGS.level,
    gains: str = RATINGS.gains,
) -> Interactions:
    """Load MovieLens latest(-small) ``ratings.csv`` (``userId,movieId,rating,timestamp``).

    ``path`` may be the file or its folder. Relevance as for :func:`load_movielens_100k`.
    """
    return _load_movielens("movielens_latest", path, duplicates, relevance_level, gains)


def load_parquet(
    path: str | os.PathLike,
    columns: Mapping[str, str] | None = DEFAULT_COLUMNS,
    *,
    duplicates: str = "error",
    name: str | None = None,
    relevance_level: float | None = EVERY_ENTRY.level,
    gains: str = EVERY_ENTRY.gains,
) -> Interactions:
    """Load interactions from a Parquet file; ``columns`` maps roles to column names.

    Default mapping and relevance rule as in :func:`load_csv` with a header. Row numbers in
    error messages are 0-based positions in the file.
    """
    func = "load_parquet"
    rule = Relevance.checked(relevance_level, gains, func)
    p = check_file(path, "path", func)
    try:
        import pyarrow.parquet as pq

        schema_names = list(pq.read_schema(p).names)
    except Exception as exc:  # pyarrow raises several types for non-parquet input
        raise InputError(f"{func}: {p} could not be read as Parquet ({exc}).") from exc
    if columns is None or (isinstance(columns, Mapping) and not columns):
        columns = {"user": "user", "item": "item"}
        columns.update({r: r for r in ("value", "timestamp") if r in schema_names})
    cols = _check_columns(columns, func, positional=False)
    missing = [c for c in cols.values() if c not in schema_names]
    if missing:
        raise InputError(
            f"{func}: column(s) {missing} not found in {p}; the columns are "
            f"{schema_names}. Fix the 'columns' mapping."
        )
    df = pd.read_parquet(p, columns=list(dict.fromkeys(cols.values())))
    return _frame_to_interactions(
        df,
        cols,
        func=func,
        source=str(p),
        line_offset=None,
        duplicates=duplicates,
        name=name or p.name,
        relevance=rule,
    )


def from_dataframe(
    df: pd.DataFrame,
    columns: Mapping[str, Any] | None = DEFAULT_COLUMNS,
    *,
    duplicates: str = "error",
    name: str = "dataframe",
    relevance_level: float | None = EVERY_ENTRY.level,
    gains: str = EVERY_ENTRY.gains,
) -> Interactions:
    """Build interactions from a pandas DataFrame in memory.

    ``columns`` maps roles to column names (default as in :func:`load_csv` with a header), and
    ``relevance_level`` and ``gains`` set the relevance rule as there. Errors name the column
    and the 0-based row position.
    """
    func = "from_dataframe"
    rule = Relevance.checked(relevance_level, gains, func)
    if not isinstance(df, pd.DataFrame):
        raise param_error("df", func, "a pandas DataFrame", df)
    if columns is None or (isinstance(columns, Mapping) and not columns):
        columns = {"user": "user", "item": "item"}
        columns.update({r: r for r in ("value", "timestamp") if r in df.columns})
    cols = _check_columns(columns, func, positional=False)
    missing = [c for c in cols.values() if c not in df.columns]
    if missing:
        raise InputError(
            f"{func}: column(s) {missing} not found in the DataFrame; its columns "
            f"are {list(df.columns)}. Fix the 'columns' mapping."
        )
    return _frame_to_interactions(
        df.reset_index(drop=True),
        cols,
        func=func,
        source="",
        line_offset=None,
        duplicates=duplicates,
        name=name,
        relevance=rule,
    )


def _load_synthetic(
    relevance_level: float | None = EVERY_ENTRY.level, gains: str = EVERY_ENTRY.gains, **params: Any
) -> Interactions:
    """:func:`~recoeval_tracking.data.make_synthetic` as the ``synthetic`` dataset kind, with
    the relevance rule of :func:`load_csv`."""
    rule = Relevance.checked(relevance_level, gains, "load_dataset")
    X = make_synthetic(**params)
    X.relevance = rule
    return X


# What a config may set (the app derives the option's schema from this signature):
# make_synthetic's parameters except the timestamp range, which keeps its default, and the
# relevance rule.
_SYNTHETIC_SIGNATURE = inspect.signature(make_synthetic, eval_str=True)
_load_synthetic.__signature__ = _SYNTHETIC_SIGNATURE.replace(  # type: ignore[attr-defined]
    parameters=[
        p
        for p in _SYNTHETIC_SIGNATURE.parameters.values()
        if p.name not in ("start_time", "time_span")
    ]
    + [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for name, p in inspect.signature(_load_synthetic, eval_str=True).parameters.items()
        if name in ("relevance_level", "gains")
    ]
)


#: Dataset kinds accepted by :func:`load_dataset`, each a callable taking plain arguments.
DATASETS: dict[str, Callable[..., Interactions]] = {
    "synthetic": _load_synthetic,
    "movielens_100k": load_movielens_100k,
    "movielens_1m": load_movielens_1m,
    "movielens_latest": load_movielens_latest,
    "csv": load_csv,
    "parquet": load_parquet,
    "parquet_partitioned": load_parquet_partitioned,
    "dataframe": from_dataframe,
}


def load_dataset(kind: str, **params: Any) -> Interactions:
    """Load a dataset by kind with plain arguments (the entry point of the config layer).

    Parameters
    ----------
    kind : str
        One of the keys of :data:`DATASETS`.
    **params
        Passed to the loader (e.g. ``path``, ``columns``, ``sep``, ``duplicates``; the sizes and
        ``seed`` of :func:`make_synthetic`).
    """
    if kind not in DATASETS:
        raise param_error("kind", "load_dataset", f"one of {sorted(DATASETS)}", kind)
    try:
        return DATASETS[kind](**params)
    except TypeError as exc:
        if "argument" in str(exc):
            raise InputError(f"load_dataset: bad parameters for kind {kind!r}: {exc}") from exc
        raise
