"""What one Spark task does with one shard of users, on Arrow data (no pyspark, pandas, scipy or
numba at import: a Python worker's import of this module costs numpy; pyarrow, which the worker
already holds, and the engine are imported on the first shard).

The input's entries (:data:`INPUT_COLUMNS`) hold the users' and the items' own ids, the kind of
each entry (a test or train entry, a ranked-list entry, a user's factors) and its value (a
rating; a list entry's rank key, ascending = better). A lists' run gives the task one row per
user, its entries as lists (:data:`LISTED`, gathered by Spark before the shuffle); a factor run
one row per entry, with the user's global row. The task builds the engine's arrays with numpy
directly: the users numbered in the shard, the items numbered by the sorted catalogue the
driver broadcast (``pc.index_in``: item index order = item id order, the tie rule), the test
and train rows as CSR, the lists as a users x width matrix ordered by (key, item index), the
factors as a users x p matrix. It then
runs :func:`recoeval_tracking.distributed.shards.run_shard`, the Dask path's shard evaluation,
and answers an Arrow table: one row per user (``user_id``: the users' own ids) and one more row
holding the shard's statistics, pickled, with the counts the driver's input checks read
(duplicate pairs, tied ranks, the lists' width, test users without a list or factors), the
warnings the engine raised and the task's timings.

With factors the users carry their global row (``row``, their rank in sorted id order) and a
shard is a contiguous range of rows (``ShardSpec.bounds``), so that the engine's tie keys are
those of a local run; ranked lists carry no tie keys, and a shard is any set of users.
"""

from __future__ import annotations

import heapq
import pickle
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

__all__ = [
    "KIND_TEST",
    "KIND_TRAIN",
    "KIND_LIST",
    "KIND_FACTORS",
    "STATS",
    "WARNINGS",
    "CHECKS",
    "TIMES",
    "INPUT_COLUMNS",
    "LISTED",
    "COUNT_COLUMNS",
    "ShardSpec",
    "evaluate_table",
    "group_task",
    "evaluate_cogroup",
    "evaluate_batches",
    "empty_input",
]

KIND_TEST, KIND_TRAIN, KIND_LIST, KIND_FACTORS = 0, 1, 2, 3
#: Column of the statistics row (pickled ShardOutput without its per-user rows).
STATS = "_recoeval_stats"
#: Columns of the input frame every task reads; with factors also ``row`` (the user's global
#: row), ``shard`` and ``features`` (null beside the interactions when they share a frame).
INPUT_COLUMNS = ("user", "kind", "item", "value")
#: The list columns of the per-user input of a lists' run (one row per user: ``user`` and its
#: entries' kinds, items and values as lists; Spark's ``collect_list`` skips nulls, so an item
#: or value list shorter than the kinds' says the user has a null).
LISTED = ("kinds", "items", "values")
#: Per-user output columns that hold counts (longs); ``nan_reason`` is a string, curves are
#: arrays, every other column a double.
COUNT_COLUMNS = ("n_train", "n_test", "n_tied_topk")
#: Attributes of the statistics object: the shard's warnings ``[(category, message)]`` (the
#: warnings raised on an executor never reach the driver by themselves), its input counts
#: (:class:`ShardChecks`) and its timings in seconds.
WARNINGS, CHECKS, TIMES = "spark_warnings", "spark_checks", "spark_times"


@dataclass(frozen=True)
class ShardSpec:
    """What every task is given: the catalogue size (with ``items`` None: the items added to
    each shard's own), the resolved options, the lists' least
    width (every shard pads its lists to it; 0 without lists), the factor width and dtype (0
    without factors), whether train was given, whether users with a list and no test entry
    score 0 (the ``spark`` profile), the shared item side (a Spark broadcast or the dict itself:
    ``source``, ``item_features``, ``popularity`` and ``items``, the sorted catalogue as an
    Arrow array, or None where no metric nor rule reads it: each shard then numbers its own
    items, in id order), the shard bounds over the global rows (factors; None for lists), whether the
    list keys are ranks (two items at one rank are counted), the number of shards and the
    output columns in order."""

    n_items: int
    options: Any
    list_width: int
    n_factors: int
    factor_dtype: str
    has_train: bool
    zero_no_truth: bool
    shared: Any
    bounds: np.ndarray | None = None
    unique_ranks: bool = False
    n_shards: int = 1
    columns: tuple[str, ...] = ()

    def shared_value(self) -> dict[str, Any]:
        return getattr(self.shared, "value", self.shared)


@dataclass
class ShardChecks:
    """A shard's counts for the driver's input checks. ``duplicates[kind]``: (extra rows,
    (user, item) pairs repeated, the smallest such pair as ids); ``tied_ranks``: ((user, rank)
    pairs holding several items, the smallest such pair); ``width``: the longest list (rows of
    one user); ``unlisted``: (test users without a list or factors, test users, the five
    smallest ids of the former); ``users``: the shard's users; ``rows[kind]``: its rows;
    ``nulls``: the rows left out for a null id, item or value (with a grouped input, every row
    of a user that has one); ``unknown``: the test rows naming an item outside the catalogue
    (left out)."""

    rows: dict[int, int] = field(default_factory=dict)
    nulls: int = 0
    unknown: int = 0
    duplicates: dict[int, tuple[int, int, Any]] = field(default_factory=dict)
    tied_ranks: tuple[int, Any] = (0, None)
    width: int = 0
    unlisted: tuple[int, int, list[Any]] = (0, 0, [])
    users: int = 0


def empty_input(item_type: Any = None, grouped: bool = True) -> Any:
    """An input table without rows (the driver's probe of the output columns): grouped (a
    lists' run) or entries with the users' global rows (a factor run)."""
    import pyarrow as pa

    item_type = item_type or pa.int64()
    if grouped:
        return pa.table(
            {
                "user": pa.array([], type=pa.int64()),
                "kinds": pa.array([], type=pa.list_(pa.int8())),
                "items": pa.array([], type=pa.list_(item_type)),
                "values": pa.array([], type=pa.list_(pa.float64())),
            }
        )
    return pa.table(
        {
            "user": pa.array([], type=pa.int64()),
            "kind": pa.array([], type=pa.int8()),
            "item": pa.array([], type=item_type),
            "value": pa.array([], type=pa.float64()),
            "row": pa.array([], type=pa.int64()),
        }
    )


def _array(table: Any, name: str) -> Any:
    """One column of ``table`` as a single Arrow array."""
    return table.column(name).combine_chunks()


def _lengths(lists: Any) -> np.ndarray:
    """The lengths of an Arrow list array's lists, from its offsets (read without a copy)."""
    return np.diff(lists.offsets.to_numpy())


def _common_catalogue(items: Any, catalogue: Any) -> tuple[Any, Any]:
    """``items`` and the catalogue of one type for ``index_in`` (numbers compare as Spark joins
    them: as doubles when either side is, else as 64-bit integers)."""
    import pyarrow as pa

    if items.type == catalogue.type:
        return items, catalogue
    if pa.types.is_floating(items.type) or pa.types.is_floating(catalogue.type):
        return items.cast(pa.float64()), catalogue.cast(pa.float64())
    if pa.types.is_integer(items.type) and pa.types.is_integer(catalogue.type):
        return items.cast(pa.int64()), catalogue.cast(pa.int64())
    return items, catalogue.cast(items.type)


@dataclass
class _Rows:
    """The shard's rows as numpy arrays: local user row, kind, item index (-1: not in the
    catalogue), value; the users' ids (Arrow, by local row), the raw item ids (Arrow), the
    number of users, the global row of the first (factors) and the number of items."""

    rows: np.ndarray
    kind: np.ndarray
    items: np.ndarray
    values: np.ndarray
    user_ids: Any
    raw_items: Any
    m: int
    lo: int
    n: int


def _valid(table: Any, checks: ShardChecks) -> Any:
    """``table`` without the rows (flat input) or users (grouped input) holding a null id,
    item or value: their rows are counted (``checks.nulls``; the driver then counts them by
    frame and refuses them by name), as are the rows of each kind; the factors' rows (no
    item) stay."""
    import pyarrow as pa

    if "kinds" in table.column_names:  # one row per user, its rows as lists
        kinds = _array(table, "kinds")  # a kind for every entry: never null
        n = _lengths(kinds)
        kind = kinds.flatten().to_numpy()
        short = [_lengths(_array(table, c)) != n for c in LISTED[1:]]
        bad = np.asarray(_array(table, "user").is_null()) | short[0] | short[1]
        dropped = int(n[bad].sum())
    else:
        kind = _array(table, "kind").to_numpy()
        bad = np.zeros(kind.shape[0], dtype=bool)
        for c in ("user", "item", "value"):
            bad |= np.asarray(_array(table, c).is_null())
        bad &= kind != KIND_FACTORS
        dropped = int(bad.sum())
    for k, count in enumerate(np.bincount(kind[kind != KIND_FACTORS], minlength=KIND_FACTORS)):
        if count:
            checks.rows[k] = int(count)
    checks.nulls = dropped
    return table.filter(pa.array(~bad)) if bad.any() else table


def _read(table: Any, spec: ShardSpec, j: int, extra: Any = None) -> _Rows:
    """Number the shard's users and items: a lists' run gives one row per user (grouped
    input); a factor run one row per entry with the users' global rows (flat input, the
    contiguous rows ``spec.bounds[j]`` to ``spec.bounds[j + 1]``). ``extra``: the users'
    factor rows of a cogroup (their ``user`` and ``row`` columns take part in the
    numbering)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    users = _array(table, "user")
    if "kinds" in table.column_names:  # one row per user: its rows are its lists' entries
        lo, m, user_ids = 0, len(users), users
        rows = np.repeat(np.arange(m, dtype=np.int64), _lengths(_array(table, "kinds")))
        kind, raw_items, values = (_array(table, c).flatten() for c in LISTED)
        kind, values = kind.to_numpy(), values.to_numpy()
    else:
        kind = _array(table, "kind").to_numpy()
        raw_items, values = _array(table, "item"), _array(table, "value").to_numpy()
        lo, hi = int(spec.bounds[j]), int(spec.bounds[j + 1])  # factors: global rows
        rows = _array(table, "row").to_numpy().astype(np.int64) - lo
        every_rows, every_users = rows, users
        if extra is not None and extra.num_rows:
            every_rows = np.concatenate([rows, _array(extra, "row").to_numpy() - lo])
            every_users = pa.concat_arrays([users, _array(extra, "user").cast(users.type)])
        first = np.zeros(hi - lo, dtype=np.int64)  # a table row of each user: its id
        first[every_rows] = np.arange(every_rows.shape[0])
        user_ids = every_users.take(pa.array(first)) if hi > lo else every_users[:0]
        m = hi - lo
    catalogue = spec.shared_value()["items"]
    if catalogue is None:  # no metric reads the catalogue: the shard's own items, in id order
        items, n = _own_items(raw_items)
        return _Rows(rows, kind, items, values, user_ids, raw_items, m, lo, spec.n_items + n)
    looked, catalogue = _common_catalogue(raw_items, catalogue)
    index = pc.index_in(looked, value_set=catalogue)
    items = pc.fill_null(index, -1).to_numpy().astype(np.int64)
    return _Rows(rows, kind, items, values, user_ids, raw_items, m, lo, spec.n_items)


def _own_items(raw_items: Any) -> tuple[np.ndarray, int]:
    """The shard's items numbered in id order (-1 for a null) and their number: one hash pass
    (``dictionary_encode``), then the distinct ids sorted and the codes mapped to their ranks."""
    import pyarrow.compute as pc

    encoded = raw_items.dictionary_encode()
    ids = encoded.dictionary
    rank = np.empty(len(ids), dtype=np.int64)
    rank[pc.array_sort_indices(ids).to_numpy()] = np.arange(len(ids), dtype=np.int64)
    codes = encoded.indices
    if codes.null_count:
        return np.where(
            np.asarray(codes.is_null()), -1, rank[pc.fill_null(codes, 0).to_numpy()]
        ), len(ids)
    return rank[codes.to_numpy()], len(ids)


def _interactions(r: _Rows, sel: np.ndarray) -> tuple[Any, tuple[int, int, Any]]:
    """The CSR matrix of the rows ``sel`` (items outside the catalogue left out; a repeated
    (user, item) pair counts once with the sum of its values) and their duplicate count."""
    import scipy.sparse as sp

    known = sel & (r.items >= 0)
    rows = r.rows[known]
    if rows.size and (rows[1:] < rows[:-1]).any():  # entries in any order (a factor run)
        out = sp.csr_array(
            (r.values[known], (rows, r.items[known])), shape=(r.m, r.n), dtype=np.float64
        )
    else:  # a grouped input gives each user's entries together: the row pointers by a count
        indptr = np.zeros(r.m + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=r.m), out=indptr[1:])
        data = r.values[known].astype(np.float64, copy=False)
        out = sp.csr_array((data, r.items[known], indptr), shape=(r.m, r.n))
    out.sum_duplicates()
    extra = rows.shape[0] - out.nnz
    unknown = sel & ~known
    if unknown.sum() > 1:  # repeated pairs among items outside the catalogue
        codes = r.raw_items.filter(unknown).dictionary_encode().indices.to_numpy()
        extra += _repeats(r.rows[unknown] * (int(codes.max()) + 1) + codes)
    return out, _duplicates(r, sel) if extra else (0, 0, None)


def _repeats(key: np.ndarray) -> int:
    """Entries of ``key`` equal to an earlier one."""
    key = np.sort(key)
    return int((key[1:] == key[:-1]).sum())


def _duplicates(r: _Rows, sel: np.ndarray) -> tuple[int, int, Any]:
    """(extra rows, pairs repeated, the smallest repeated (user id, item id)) among ``sel``
    (run when the counts found some)."""
    codes = r.raw_items.filter(sel).dictionary_encode().indices.to_numpy().astype(np.int64)
    rows = r.rows[sel]
    pair = rows * (int(codes.max()) + 1) + codes
    key = np.sort(pair)
    same = key[1:] == key[:-1]
    repeated = np.unique(key[1:][same])
    where = np.flatnonzero(sel)
    first_of: dict[int, int] = {}  # a table row of each repeated pair, to read its ids
    for h in np.flatnonzero(np.isin(pair, repeated)):
        first_of.setdefault(int(pair[h]), int(where[h]))
    ids = r.user_ids.to_pylist()
    pairs = [(ids[r.rows[t]], r.raw_items[t].as_py()) for t in first_of.values()]
    return int(same.sum()), int(repeated.shape[0]), min(pairs)


def _sorted_lists(
    rows: np.ndarray, keys: np.ndarray, items: np.ndarray, m: int, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's items and keys as rows of a users x ``width`` matrix, ordered by key
    ascending, then item index (-1 and NaN padded). ``rows`` is ascending: a grouped input
    gives each user's entries together, so each user's row is sorted on its own."""
    counts = np.bincount(rows, minlength=m)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    place = (rows, np.arange(rows.shape[0]) - starts[rows])
    if _in_order(rows, keys, items):
        if counts.size and counts.min() == width:  # every list full: the entries as they come
            return items.reshape(m, width), keys.reshape(m, width)
        lists = np.full((m, width), -1, dtype=np.int64)
        ordered = np.full((m, width), np.nan)
        lists[place], ordered[place] = items, keys
        return lists, ordered
    key = np.full((m, width), np.inf)
    item = np.full((m, width), np.iinfo(np.int64).max)
    key[place], item[place] = keys, items
    low = float(keys.min()) if keys.size else 0.0
    span = float(keys.max()) - low + 1 if keys.size else 1.0
    if np.all(keys == np.floor(keys)) and span * (int(items.max(initial=0)) + 2) < 2.0**62:
        # integral keys (ranks): one 64-bit key, (key - low) * (n + 1) + item, per row
        mult = int(items.max(initial=0)) + 2
        packed = np.where(np.isinf(key), np.iinfo(np.int64).max, 0)
        packed[place] = (keys - low).astype(np.int64) * mult + items
        order = np.argsort(packed, axis=1)
    else:
        order = np.lexsort((item, key), axis=1)
    lists = np.take_along_axis(item, order, axis=1)
    lists[lists == np.iinfo(np.int64).max] = -1
    key = np.take_along_axis(key, order, axis=1)
    key[np.isinf(key) & (lists < 0)] = np.nan
    return lists, key


def _in_order(rows: np.ndarray, keys: np.ndarray, items: np.ndarray) -> bool:
    """Whether each user's entries come ordered by (key, item index) already, finite keys:
    Spark's ``collect_list`` keeps the order of a map task's rows, and lists written in rank
    order mostly arrive so; they are then placed as they come, without a sort (measured: 0.05
    of a 125,000-user task's 0.10 CPU seconds outside the engine)."""
    if not np.isfinite(keys).all():
        return False
    same = rows[1:] == rows[:-1]
    k0, k1, i0, i1 = keys[:-1], keys[1:], items[:-1], items[1:]
    return not (same & ((k1 < k0) | ((k1 == k0) & (i1 < i0)))).any()


def _tied_ranks(r: _Rows, li: np.ndarray, lists: np.ndarray, keys: np.ndarray) -> tuple[int, Any]:
    """(user, rank) pairs of the lists holding several items (``lists`` and ``keys``: the
    users' sorted items and keys, NaN padded), and the smallest one as (user id, rank)."""
    if keys.shape[1] < 2:
        return 0, None
    several = (keys[:, 1:] == keys[:, :-1]) & (lists[:, 1:] != lists[:, :-1])
    if not several.any():
        return 0, None
    users, at = np.nonzero(several)
    pairs = sorted({(int(u), float(keys[u, j])) for u, j in zip(users, at, strict=True)})
    ids = r.user_ids.to_pylist()
    return len(pairs), min((ids[u], key) for u, key in pairs)


def _lists(r: _Rows, spec: ShardSpec, checks: ShardChecks) -> tuple[Any, np.ndarray]:
    """The shard's ranked lists (each user's items by key ascending, then item index: a tied
    score goes to the lower item id) and which users have one."""
    from ..metrics.profile_inputs import ProfiledLists

    li = r.kind == KIND_LIST
    rows = r.rows[li]
    counts = np.bincount(rows, minlength=r.m)
    checks.width = int(counts.max()) if counts.size else 0
    width = max(checks.width, spec.list_width, 1)
    lists, keys = _sorted_lists(rows, r.values[li], r.items[li], r.m, width)
    if spec.unique_ranks:
        checks.tied_ranks = _tied_ranks(r, li, lists, keys)
    each = np.sort(lists, axis=1)  # an item twice in a list: equal neighbours once sorted
    extra = int(((each[:, 1:] == each[:, :-1]) & (each[:, 1:] >= 0)).sum())
    checks.duplicates[KIND_LIST] = _duplicates(r, li) if extra else (0, 0, None)
    # the driver grew the catalogue and pads the lists to k (the profile's rules), and refuses
    # from the counts: the shard's lists are read as they are
    return ProfiledLists(lists, listed=counts > 0), counts > 0


def _factors(r: _Rows, spec: ShardSpec, src: Any) -> tuple[np.ndarray, np.ndarray]:
    """The users' factors (NaN rows for users without any) and which users have them."""
    import pyarrow as pa

    fa = _array(src, "kind").to_numpy() == KIND_FACTORS
    frows = _array(src, "row").to_numpy()[fa] - r.lo
    part = np.full((r.m, spec.n_factors), np.nan, dtype=np.dtype(spec.factor_dtype))
    if frows.shape[0]:
        feats = _array(src, "features").filter(pa.array(fa)).flatten().to_numpy()
        part[frows] = feats.reshape(frows.shape[0], spec.n_factors)
    has = np.zeros(r.m, dtype=bool)
    has[frows] = True
    return part, has


def _unlisted(r: _Rows, te: np.ndarray, has: np.ndarray) -> tuple[int, int, list[Any]]:
    tested = np.bincount(r.rows[te], minlength=r.m) > 0
    missing = np.flatnonzero(tested & ~has)
    ids = r.user_ids.take(missing).to_pylist() if missing.shape[0] else []
    return int(missing.shape[0]), int(tested.sum()), heapq.nsmallest(5, ids)


def _zero_rule(has_list: np.ndarray) -> Any:
    """The ``spark`` profile: a user with a list but no test entry scores 0 and counts."""
    from ..metrics.protocol import apply_no_positive

    def adjust(raw: Any) -> None:
        apply_no_positive(raw, has_list, "zero")

    return adjust


def evaluate_table(
    table: Any,
    spec: ShardSpec,
    shard: int | None = None,
    factors: Any = None,
    received: float = 0.0,
) -> Any:
    """The per-user rows and the statistics row of one shard (an Arrow table: grouped input,
    or entries with the users' factor rows in ``factors`` or in ``table`` itself).
    ``received``: the seconds the task waited for its input batches (for the timings)."""
    t0, c0 = time.perf_counter(), time.process_time()
    from ..distributed.shards import ShardInput, run_shard  # the engine: numba, scipy, pandas

    t_import = time.perf_counter()
    j = int(_array(table, "shard")[0].as_py()) if shard is None else int(shard)
    checks = ShardChecks()
    r = _read(_valid(table, checks), spec, j, factors)
    checks.users = r.m
    te, tr = r.kind == KIND_TEST, r.kind == KIND_TRAIN
    checks.unknown = int((te & (r.items < 0)).sum())
    t_read = time.perf_counter()
    test, checks.duplicates[KIND_TEST] = _interactions(r, te)
    train = None
    if spec.has_train:
        train, checks.duplicates[KIND_TRAIN] = _interactions(r, tr)
    part: Any = None
    has = np.zeros(r.m, dtype=bool)
    if spec.list_width:
        part, has = _lists(r, spec, checks)
    elif spec.n_factors:
        part, has = _factors(r, spec, table if factors is None else factors)
    checks.unlisted = _unlisted(r, te, has)
    user_ids = r.user_ids.to_numpy(zero_copy_only=False)
    t_arrays, c_arrays = time.perf_counter(), time.process_time()
    adjust = _zero_rule(has) if spec.zero_no_truth else None
    with warnings.catch_warnings(record=True) as caught:  # sent to the driver, not the log
        warnings.simplefilter("always")
        out = run_shard(
            ShardInput(j, r.lo, r.lo + r.m, train, test, user_ids, part),
            spec.options,
            spec.shared_value(),
            None,
            adjust=adjust,
        )
    t_engine, c_engine = time.perf_counter(), time.process_time()
    stats = replace(
        out,
        per_user=out.per_user.iloc[:0],
        curves={c: v[:0] for c, v in out.curves.items()},
        topk=None,
    )
    setattr(stats, WARNINGS, [(w.category.__name__, str(w.message)) for w in caught])
    setattr(stats, CHECKS, checks)
    times = {
        "receive": received,
        "import": t_import - t0,
        "read": t_read - t_import,
        "arrays": t_arrays - t_read,
        "engine": t_engine - t_arrays,
        "engine_cpu": c_engine - c_arrays,
    }
    return _output(out, r.user_ids, spec, stats, times, t_engine, c0)


def _output(
    out: Any, user_ids: Any, spec: ShardSpec, stats: Any, times: dict, t: float, c0: float
) -> Any:
    """The Arrow table the task answers: one row per user in the columns of ``spec.columns``
    (the probe's, or the shard's own when the spec names none), then the statistics row."""
    import pyarrow as pa

    m = len(user_ids)
    per_user = out.per_user
    columns = spec.columns or (
        "user_id",
        *[c for c in per_user.columns if c != "user_id"],
        *out.curves,
        STATS,
    )
    arrays = []
    for name in columns:
        if name == "user_id":
            arrays.append(user_ids)
        elif name == STATS:
            arrays.append(pa.nulls(m, type=pa.binary()))
        elif name in out.curves:
            curve = np.ascontiguousarray(out.curves[name], dtype=np.float64)
            offsets = pa.array(np.arange(m + 1, dtype=np.int32) * curve.shape[1])
            arrays.append(pa.ListArray.from_arrays(offsets, pa.array(curve.ravel())))
        elif name in per_user.columns:
            arrays.append(pa.array(per_user[name].to_numpy(), type=_arrow_type(name)))
        else:  # a column another shard's users have (n_tied_topk with no users evaluated)
            arrays.append(pa.nulls(m, type=_arrow_type(name)))
    body = pa.Table.from_arrays(arrays, names=list(columns))
    times["output"] = time.perf_counter() - t
    times["cpu"] = time.process_time() - c0  # the task's CPU seconds in Python, all steps
    setattr(stats, TIMES, times)
    blob = pickle.dumps(stats, protocol=pickle.HIGHEST_PROTOCOL)
    head = [
        pa.array([blob], type=pa.binary()) if name == STATS else pa.nulls(1, type=col.type)
        for name, col in zip(columns, body.columns, strict=True)
    ]
    return pa.concat_tables([body, pa.Table.from_arrays(head, names=list(columns))])


def _arrow_type(name: str) -> Any:
    import pyarrow as pa

    if name in COUNT_COLUMNS:
        return pa.int64()
    if name == "nan_reason":
        return pa.string()
    return pa.float64()


def group_task(spec: ShardSpec) -> Any:
    """``groupBy(shard).applyInArrow``'s function: :func:`evaluate_table` of each shard's
    table. A plain function without annotations: pyspark 4 reads a function's type hints to
    choose the Arrow form, and fails on a ``functools.partial``."""

    def run(table):  # no annotations (see above)
        settle_worker()
        return evaluate_table(table, spec)

    return run


def evaluate_cogroup(table: Any, factors: Any, spec: ShardSpec) -> Any:
    """``cogroup(...).applyInArrow``: one shard's interactions and its users' factors."""
    settle_worker()
    side = table if table.num_rows else factors
    j = int(_array(side, "shard")[0].as_py())
    return evaluate_table(table, spec, j, factors=factors)


def _task_context() -> Any:
    """The running Spark task's context (None outside a Spark task)."""
    try:
        from pyspark import TaskContext
    except ImportError:  # pragma: no cover - called from a Spark task
        return None
    return TaskContext.get()


def _partition_id() -> int:
    """The Spark partition of the running task (the shard of a hash-partitioned frame)."""
    ctx = _task_context()
    return int(ctx.partitionId()) if ctx is not None else 0


_WORKER_TASKS = [0]


def settle_worker() -> None:
    """In a Spark Python worker, from its second task on: the objects it holds set aside from
    the cyclic garbage collector (``gc.freeze``). A reused worker runs a full ``gc.collect()``
    after every task (``pyspark.daemon``), which walks every object the worker holds: with the
    engine loaded (numba, scipy, pandas) that took about 0.1 CPU s a task, 0.7-0.9 of a 1M-user
    run's 3 CPU s in the workers (``bench_spark.py``). By the second task that collection has
    run once after the first, so what is left is the modules and the loaded kernels; objects
    made later are collected as before. Never outside a Spark task (a driver or a notebook
    keeps its collector as it is)."""
    import gc

    if _task_context() is None:
        return
    _WORKER_TASKS[0] += 1
    if _WORKER_TASKS[0] == 2:
        gc.freeze()


def evaluate_batches(batches: Iterator[Any], spec: ShardSpec) -> Iterator[Any]:
    """``mapInArrow``: every shard of one partition (its batches gathered first). A frame
    with a ``shard`` column (factors) may hold several shards in a partition; without one the
    partition is the shard (users hashed to partitions by Spark)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t0 = time.perf_counter()
    settle_worker()
    chunks = list(batches)
    if not chunks or not any(b.num_rows for b in chunks):
        return
    table = pa.Table.from_batches(chunks)
    received = time.perf_counter() - t0
    if "shard" not in table.column_names:
        yield from evaluate_table(table, spec, _partition_id(), received=received).to_batches()
        return
    shard = _array(table, "shard")
    for j in np.unique(shard.to_numpy()):
        part = table.filter(pc.equal(shard, pa.scalar(int(j), type=shard.type)))
        yield from evaluate_table(part, spec, int(j), received=received).to_batches()
        received = 0.0
