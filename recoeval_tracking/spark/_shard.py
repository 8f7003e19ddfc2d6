"""What one Spark task does with one shard of users, on Arrow data (no pyspark, pandas, scipy or
numba at import: a Python worker's import of this module costs numpy; pyarrow, which the worker
already holds, and the engine are imported on the first shard).

The task reads Arrow record batches of the input frame (:data:`INPUT_COLUMNS`): the users' and
the items' own ids, the kind of each row (a test or train entry, a ranked-list entry, a user's
factors) and its value (a rating; a list entry's rank key, ascending = better). It builds the
engine's arrays with numpy directly: the users numbered in the shard (their ids hashed by
pyarrow), the items numbered by the sorted catalogue the driver broadcast (``pc.index_in``:
item index order = item id order, the tie rule), the test and train rows as CSR, the lists as a
users x width matrix ordered by (key, item index), the factors as a users x p matrix. It then
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
    "COUNT_COLUMNS",
    "ShardSpec",
    "evaluate_table",
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
#: Per-user output columns that hold counts (longs); ``nan_reason`` is a string, curves are
#: arrays, every other column a double.
COUNT_COLUMNS = ("n_train", "n_test", "n_tied_topk")
#: Attributes of the statistics object: the shard's warnings ``[(category, message)]`` (the
#: warnings raised on an executor never reach the driver by themselves), its input counts
#: (:class:`ShardChecks`) and its timings in seconds.
WARNINGS, CHECKS, TIMES = "spark_warnings", "spark_checks", "spark_times"


@dataclass(frozen=True)
class ShardSpec:
    """What every task is given: the catalogue size, the resolved options, the lists' least
    width (every shard pads its lists to it; 0 without lists), the factor width and dtype (0
    without factors), whether train was given, whether users with a list and no test entry
    score 0 (the ``spark`` profile), the shared item side (a Spark broadcast or the dict itself:
    ``source``, ``item_features``, ``popularity`` and ``items``, the sorted catalogue as an
    Arrow array), the shard bounds over the global rows (factors; None for lists), whether the
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
    smallest ids of the former); ``users``: the shard's users; ``rows[kind]``: its rows, and
    ``nulls[kind]``: those with a null ``user``, ``item`` or ``value`` (left out); ``unknown``:
    the test rows naming an item outside the catalogue (left out)."""

    rows: dict[int, int] = field(default_factory=dict)
    nulls: dict[int, dict[str, int]] = field(default_factory=dict)
    unknown: int = 0
    duplicates: dict[int, tuple[int, int, Any]] = field(default_factory=dict)
    tied_ranks: tuple[int, Any] = (0, None)
    width: int = 0
    unlisted: tuple[int, int, list[Any]] = (0, 0, [])
    users: int = 0


def empty_input(item_type: Any = None, rows: bool = False) -> Any:
    """An input table without rows (the driver's probe of the output columns); ``rows``: with
    the users' global rows (factors)."""
    import pyarrow as pa

    columns = {
        "user": pa.array([], type=pa.int64()),
        "kind": pa.array([], type=pa.int8()),
        "item": pa.array([], type=item_type or pa.int64()),
        "value": pa.array([], type=pa.float64()),
    }
    if rows:
        columns["row"] = pa.array([], type=pa.int64())
    return pa.table(columns)


def _array(table: Any, name: str) -> Any:
    """One column of ``table`` as a single Arrow array."""
    return table.column(name).combine_chunks()


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
    catalogue), value; the users' ids (Arrow, by local row), the raw item ids (Arrow) and the
    table itself (for the factors)."""

    rows: np.ndarray
    kind: np.ndarray
    items: np.ndarray
    values: np.ndarray
    user_ids: Any
    raw_items: Any
    m: int
    lo: int


def _valid(table: Any, checks: ShardChecks) -> Any:
    """``table`` without its rows holding a null id or value (counted by kind in ``checks``:
    the driver refuses them by name); the factors' rows (no item) stay."""
    import pyarrow as pa

    kind = _array(table, "kind").to_numpy()
    nulls = {
        c: np.asarray(_array(table, c).is_null()) & (kind != KIND_FACTORS)
        for c in ("user", "item", "value")
    }
    for k in np.unique(kind):
        if k == KIND_FACTORS:
            continue
        this = kind == k
        checks.rows[int(k)] = int(this.sum())
        checks.nulls[int(k)] = {c: int((mask & this).sum()) for c, mask in nulls.items()}
    bad = nulls["user"] | nulls["item"] | nulls["value"]
    return table.filter(pa.array(~bad)) if bad.any() else table


def _read(table: Any, spec: ShardSpec, j: int, extra: Any = None) -> _Rows:
    """Number the shard's users and items. ``extra``: the users' factor rows of a cogroup
    (their ``user`` and ``row`` columns take part in the numbering)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    users = _array(table, "user")
    if spec.bounds is not None:  # factors: global rows, a contiguous range [lo, hi)
        lo, hi = int(spec.bounds[j]), int(spec.bounds[j + 1])
        rows = _array(table, "row").to_numpy().astype(np.int64) - lo
        every_rows, every_users = rows, users
        if extra is not None and extra.num_rows:
            every_rows = np.concatenate([rows, _array(extra, "row").to_numpy() - lo])
            every_users = pa.concat_arrays([users, _array(extra, "user").cast(users.type)])
        first = np.zeros(hi - lo, dtype=np.int64)  # a table row of each user: its id
        first[every_rows] = np.arange(every_rows.shape[0])
        user_ids = every_users.take(pa.array(first)) if hi > lo else every_users[:0]
        m = hi - lo
    else:
        lo = 0
        encoded = users.dictionary_encode()
        rows = encoded.indices.to_numpy().astype(np.int64)
        user_ids = encoded.dictionary
        m = len(user_ids)
    raw_items = _array(table, "item")
    catalogue = spec.shared_value()["items"]
    looked, catalogue = _common_catalogue(raw_items, catalogue)
    index = pc.index_in(looked, value_set=catalogue)
    items = pc.fill_null(index, -1).to_numpy().astype(np.int64)
    kind = _array(table, "kind").to_numpy()
    values = _array(table, "value").to_numpy()
    return _Rows(rows, kind, items, values, user_ids, raw_items, m, lo)


def _interactions(r: _Rows, sel: np.ndarray, n: int) -> tuple[Any, tuple[int, int, Any]]:
    """The CSR matrix of the rows ``sel`` (items outside the catalogue left out; a repeated
    (user, item) pair counts once with the sum of its values) and their duplicate count."""
    import scipy.sparse as sp

    known = sel & (r.items >= 0)
    rows = r.rows[known]
    out = sp.csr_array((r.values[known], (rows, r.items[known])), shape=(r.m, n), dtype=np.float64)
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


def _key_order(rows: np.ndarray, keys: np.ndarray, items: np.ndarray, m: int, n: int) -> Any:
    """The order of the list rows by user, key ascending, then item index: one sort of one
    64-bit key (the keys replaced by their rank among the shard's distinct keys), or three
    when that key would not fit."""
    distinct, rank = np.unique(keys, return_inverse=True)
    span = max(int(distinct.shape[0]), 1)
    if float(max(m, 1)) * span * max(n, 1) < 2.0**62:
        return np.argsort((rows * span + rank.reshape(-1)) * n + items)
    return np.lexsort((items, keys, rows))


def _tied_ranks(r: _Rows, li: np.ndarray, order: np.ndarray) -> tuple[int, Any]:
    """(user, rank) pairs of the lists holding several items (``order``: the list rows sorted
    by user, key, item), and the smallest one as (user id, rank)."""
    rows, keys, items = r.rows[li][order], r.values[li][order], r.items[li][order]
    if rows.shape[0] < 2:
        return 0, None
    same = (rows[1:] == rows[:-1]) & (keys[1:] == keys[:-1])
    several = same & (items[1:] != items[:-1])
    if not several.any():
        return 0, None
    group = np.concatenate([[0], np.cumsum(~same)])
    bad = np.unique(group[1:][several])
    starts = np.flatnonzero(np.concatenate([[True], ~same]))[bad]
    ids = r.user_ids.to_pylist()
    pairs = [(ids[rows[s]], float(keys[s])) for s in starts]
    return int(bad.shape[0]), min(pairs)


def _lists(r: _Rows, spec: ShardSpec, checks: ShardChecks) -> tuple[Any, np.ndarray]:
    """The shard's ranked lists (each user's items by key ascending, then item index: a tied
    score goes to the lower item id) and which users have one."""
    from ..scores import RankedLists

    li = r.kind == KIND_LIST
    rows, keys, items = r.rows[li], r.values[li], r.items[li]
    order = _key_order(rows, keys, items, r.m, spec.n_items)
    counts = np.bincount(rows, minlength=r.m)
    checks.width = int(counts.max()) if counts.size else 0
    if spec.unique_ranks:
        checks.tied_ranks = _tied_ranks(r, li, order)
    width = max(checks.width, spec.list_width, 1)
    lists = np.full((r.m, width), -1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    sorted_rows = rows[order]
    lists[sorted_rows, np.arange(sorted_rows.shape[0]) - starts[sorted_rows]] = items[order]
    each = np.sort(lists, axis=1)  # an item twice in a list: equal neighbours once sorted
    extra = int(((each[:, 1:] == each[:, :-1]) & (each[:, 1:] >= 0)).sum())
    checks.duplicates[KIND_LIST] = _duplicates(r, li) if extra else (0, 0, None)
    return RankedLists(lists, listed=counts > 0), counts > 0


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
    """The per-user rows and the statistics row of one shard (an Arrow table of
    :data:`INPUT_COLUMNS`; the users' factor rows in ``factors``, or in ``table`` itself).
    ``received``: the seconds the task waited for its input batches (for the timings)."""
    t0 = time.perf_counter()
    from ..distributed.shards import ShardInput, run_shard  # the engine: numba, scipy, pandas

    t_import = time.perf_counter()
    j = int(_array(table, "shard")[0].as_py()) if shard is None else int(shard)
    checks = ShardChecks()
    r = _read(_valid(table, checks), spec, j, factors)
    checks.users = r.m
    te, tr = r.kind == KIND_TEST, r.kind == KIND_TRAIN
    checks.unknown = int((te & (r.items < 0)).sum())
    t_read = time.perf_counter()
    test, checks.duplicates[KIND_TEST] = _interactions(r, te, spec.n_items)
    train = None
    if spec.has_train:
        train, checks.duplicates[KIND_TRAIN] = _interactions(r, tr, spec.n_items)
    part: Any = None
    has = np.zeros(r.m, dtype=bool)
    if spec.list_width:
        part, has = _lists(r, spec, checks)
    elif spec.n_factors:
        part, has = _factors(r, spec, table if factors is None else factors)
    checks.unlisted = _unlisted(r, te, has)
    user_ids = r.user_ids.to_numpy(zero_copy_only=False)
    t_arrays = time.perf_counter()
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
    t_engine = time.perf_counter()
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
    }
    return _output(out, r.user_ids, spec, stats, times, t_engine)


def _output(out: Any, user_ids: Any, spec: ShardSpec, stats: Any, times: dict, t: float) -> Any:
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


def evaluate_cogroup(table: Any, factors: Any, spec: ShardSpec) -> Any:
    """``cogroup(...).applyInArrow``: one shard's interactions and its users' factors."""
    side = table if table.num_rows else factors
    j = int(_array(side, "shard")[0].as_py())
    return evaluate_table(table, spec, j, factors=factors)


def _partition_id() -> int:
    """The Spark partition of the running task (the shard of a hash-partitioned frame)."""
    try:
        from pyspark import TaskContext
    except ImportError:  # pragma: no cover - called from a Spark task
        return 0
    ctx = TaskContext.get()
    return int(ctx.partitionId()) if ctx is not None else 0


def evaluate_batches(batches: Iterator[Any], spec: ShardSpec) -> Iterator[Any]:
    """``mapInArrow``: every shard of one partition (its batches gathered first). A frame
    with a ``shard`` column (factors) may hold several shards in a partition; without one the
    partition is the shard (users hashed to partitions by Spark)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t0 = time.perf_counter()
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
