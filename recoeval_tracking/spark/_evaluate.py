"""Evaluation inside a Spark session, on Spark DataFrames: :func:`evaluate_spark`.

Ranked lists: at most two Spark jobs read the data. The first, one aggregate over the item
columns alone, gives the catalogue (skipped where no metric reads it). The second gathers each
user's entries (``groupBy(user)`` with ``collect_list``: Spark aggregates before the shuffle)
and runs one Arrow task per partition of users (``mapInArrow``). Factors: the item factors are
collected, the users numbered in sorted id order, and each contiguous shard of users cogrouped
with its users' factors (``applyInArrow``). A task builds the engine's arrays from the Arrow
columns with numpy and runs
:func:`recoeval_tracking.distributed.shards.run_shard`, the same shard evaluation as on Dask
(:mod:`recoeval_tracking.spark._shard`). The item side (item factors, the train popularity of the
items, the catalogue) is broadcast once; the users' rows, lists and factors stay on the
executors. Each task returns its users' values (a Spark DataFrame, ``SparkResults.per_user_spark``,
to write where you want) and its sufficient statistics with its input counts; the driver raises
the input checks those counts decide (duplicates, two items at one rank, the lists' width, users
without a list) and merges the statistics
(:func:`recoeval_tracking.distributed.merge.merge_shards`) into the same means, 95% intervals,
curves, definitions and fingerprint as a local run.

Per-user values are bit-identical to :func:`recoeval_tracking.evaluate` on the same data held in
memory with its users and items in sorted id order: with factors the users are numbered in
sorted id order (the noise tie keys depend on the global user row); ranked lists have no tie
keys, and their users are numbered within their shard.
"""

from __future__ import annotations

import dataclasses
import pickle
import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, param_error
from ..distributed.merge import ShardedResults, merge_shards
from ..distributed.on_dask import _check_mergeable, _checked_options
from ..distributed.shards import split_source
from ..metrics.evaluate import _OPTION_NAMES, _merge_options, plan, plan_for_source
from ..metrics.inputs import Prepared, score_source
from ..metrics.profile_inputs import pool_items, refuse_ap_past_k, refuse_repeated
from ..metrics.profiles import PROFILES
from ..metrics.protocol import left_out_for_ranked
from ..options import EvalOptions
from ..scores import RankedLists
from ._checks import (
    check_counts,
    gather,
    merge_checks,
    refuse_tied_ranks,
    warn_duplicates,
    warn_unlisted,
)
from ._frames import (
    input_frame,
    item_table,
    null_counts,
    number_users,
    output_schema,
    per_user,
    spark_modules,
)
from ._inputs import Inputs, checked_inputs
from ._shard import (
    CHECKS,
    KIND_FACTORS,
    KIND_LIST,
    KIND_TEST,
    KIND_TRAIN,
    STATS,
    TIMES,
    WARNINGS,
    ShardSpec,
    empty_input,
    evaluate_batches,
    evaluate_cogroup,
    evaluate_table,
    group_task,
)

# the public names are the package's (recoeval_tracking.spark.__all__), loaded from here on
# first use

FUNC = "evaluate_spark"
#: Users per shard by default with factors (at least two shards per core of the session).
USERS_PER_SHARD = 50_000
_MODES = ("map", "apply")


@dataclass
class SparkResults(ShardedResults):
    """The results of :func:`evaluate_spark`: a
    :class:`~recoeval_tracking.distributed.merge.ShardedResults` (means, intervals, curves,
    definitions, fingerprint from the shards' statistics; ``per_user`` holds only the columns)
    and the per-user table as a Spark DataFrame.

    Attributes (beyond those of ShardedResults)
    -------------------------------------------
    per_user_spark : pyspark.sql.DataFrame
        ``user_id`` (the original ids), ``n_train``, ``n_test``, ``nan_reason``, the metric
        columns and, with ``cumulative=True``, one array column per curve (``ndcg_at_k``).
        Persisted on the executors; :meth:`unpersist` frees it.
    n_users : int
        Users evaluated or listed with a reason (the union of the frames' users).
    """

    per_user_spark: Any = None
    n_users: int = 0
    _cached: Any = field(default=None, repr=False)
    _broadcast: Any = field(default=None, repr=False)

    def unpersist(self) -> None:
        """Free the executors' copies: the per-user values, the numbered user table (factors)
        and the broadcast item side (``per_user_spark`` is not to be read after this)."""
        _release(self._cached, self._broadcast)
        self._cached, self._broadcast = [], None


def _release(frames: Any, broadcast: Any) -> None:
    for frame in frames or []:
        frame.unpersist()
    if broadcast is not None:
        broadcast.unpersist()


def _options(options: EvalOptions | None, kwargs: dict[str, Any]) -> EvalOptions:
    unknown = sorted(set(kwargs) - _OPTION_NAMES)
    if unknown:
        raise param_error(
            unknown[0],
            FUNC,
            f"an option of recoeval_tracking.evaluate ({sorted(_OPTION_NAMES)})",
            kwargs[unknown[0]],
        )
    opts = _merge_options(options, kwargs) if options is not None else EvalOptions(**kwargs)
    if opts.return_topk:
        raise param_error(
            "return_topk",
            FUNC,
            "False (the top-K lists stay on the executors; "
            "the list metrics and catalogue metrics are computed there)",
            True,
        )
    if opts.negatives is not None:
        raise param_error(
            "negatives", FUNC, "None (sampled negatives are not offered on Spark)", opts.negatives
        )
    return opts


def evaluate_spark(
    test: Any,
    train: Any = None,
    *,
    ranked: Any = None,
    user_factors: Any = None,
    item_factors: Any = None,
    user_col: str = "user",
    item_col: str = "item",
    rating_col: str | None = None,
    relevance: Any = None,
    rank_col: str | None = None,
    score_col: str | None = None,
    id_col: str = "id",
    features_col: str = "features",
    shards: int | None = None,
    mode: str | None = None,
    options: EvalOptions | None = None,
    **eval_options: Any,
) -> SparkResults:
    """Evaluate a model on Spark DataFrames, on the executors of the active session.

    Parameters
    ----------
    test, train : pyspark.sql.DataFrame
        Interactions (``user_col``, ``item_col`` and optionally ``rating_col``: the values,
        judged by the data's relevance rule; 1.0 without it). Train entries are left out of
        each user's ranking; ``train`` may be None.
    ranked : pyspark.sql.DataFrame, optional
        Top-K lists: rows (user, item, rank) or (user, item, score) (``rank_col`` ascending or
        ``score_col`` descending; found by name among rank, score, rating, prediction when
        neither is given), or ``ALSModel.recommendForAllUsers(k)`` as it is (a
        ``recommendations`` array, rank = position). Ties of a score: lower item index first.
    user_factors, item_factors : pyspark.sql.DataFrame, optional
        Factors as ``ALSModel.userFactors`` / ``itemFactors`` hold them (``id_col``,
        ``features_col`` array). Scored by the engine on the executors over the whole catalogue
        (the items of ``item_factors``); the item factors are collected and broadcast. A user
        without factors gets NaN (reason ``nan_score``); test items outside the catalogue are
        dropped with a warning.
    user_col, item_col, rating_col, rank_col, score_col, id_col, features_col : str
        Column names.
    relevance : Relevance, optional
        The data's relevance rule (``split.test.relevance``, ``X.relevance``: MovieLens,
        ratings >= 4 with gain 1), applied to the ``rating_col`` values as
        :func:`~recoeval_tracking.evaluate` applies an interactions container's: a Spark frame
        carries none. Values (``rating_col``, or a ``value``/``rating`` column left unnamed)
        with no rule, neither ``relevance`` nor ``relevance_level``/``gains``/``profile``, are
        refused: every rating would count as a positive, and the numbers would not be the
        app's (:func:`relevance_options`).
    shards : int, optional
        Number of user shards (tasks). Factors: by default at least two per core of the
        session, and one per :data:`USERS_PER_SHARD` users. Lists: by default the session's
        shuffle partitions (``spark.sql.shuffle.partitions``, which adaptive execution may
        coalesce); given, the entries are moved to that many partitions before they are
        gathered per user.
    mode : {"map", "apply"}, optional
        How the tasks receive their users. ``map``, the default with lists: Spark gathers each
        user's entries before the shuffle and ``mapInArrow`` gives a task its partition of
        users, one row each. ``apply``, the default with factors: ``groupBy(shard)``, each
        shard's entries and (``cogroup``) its users' factors to ``applyInArrow`` (pyspark 4);
        ``map`` with factors carries them in a column of the entries' frame, measured 6
        times slower (see the guide).
    options : EvalOptions, optional
    **eval_options
        Any option of :func:`recoeval_tracking.evaluate` (``metrics``, ``k``, ``profile``,
        ``ties``, ``seed``, ``cumulative``...). ``profile="spark"`` gives pyspark's
        ``RankingMetrics`` numbers, a user with a list and no test entry counted as 0.

    Returns
    -------
    SparkResults

    Raises
    ------
    InputError
        pyspark missing, a bad argument or a missing column (the message names it).
    """
    t0 = time.perf_counter()
    opts = _checked_options(_options(options, eval_options), shards, FUNC)
    _check_models(mode, ranked, user_factors, item_factors)
    mode = mode or ("map" if ranked is not None else "apply")
    spark_modules()  # pyspark, or the install hint, before any frame is read
    inp = checked_inputs(
        (test, train, ranked, user_factors, item_factors),
        opts,
        relevance,
        (user_col, item_col, rating_col, rank_col, score_col, id_col, features_col),
    )
    lists = inp.model.kind == KIND_LIST
    n = int(inp.model.item_ids.shape[0]) + (_spark_pool(inp.options) if lists else 0)
    width = max(int(inp.options.k), 1) if lists else 0  # every shard's lists are at least k
    p, shared = _driver_plan(inp, n, width)
    frame, fac, spec, cached = _tasks_input(inp, n, width, shards, mode, shared)
    t_prepare = time.perf_counter() - t0
    try:
        outs, out = _run(frame, fac, spec, shared, p, mode)
        cached.append(out)
        _after_tasks(inp, outs, p, user_col)
    except BaseException:
        _release(cached, spec.shared)
        raise
    res = merge_shards(outs, p, n, time.perf_counter() - t0, None)
    if lists:
        _list_source(res.definitions, outs, _effective_width(inp.options, merged_width(outs)))
    res.timings["spark_prepare"] = t_prepare  # the first pass, the catalogue, the users' rows
    res.timings.update(_task_times(outs))
    fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(ShardedResults)}
    _, F, _ = spark_modules()
    return SparkResults(
        **fields,
        per_user_spark=out.where(F.col(STATS).isNull()).drop(STATS),
        n_users=sum(getattr(o, CHECKS).users for o in outs),
        _cached=cached,
        _broadcast=spec.shared,
    )


def _check_models(mode: Any, ranked: Any, user_factors: Any, item_factors: Any) -> None:
    if mode is not None and mode not in _MODES:
        raise param_error("mode", FUNC, f"one of {list(_MODES)}", mode)
    if (ranked is None) == (user_factors is None and item_factors is None):
        raise param_error(
            "ranked",
            FUNC,
            "exactly one model: 'ranked' lists or 'user_factors' with 'item_factors'",
            "both or neither",
            got_is_text=True,
        )
    if ranked is None and (user_factors is None or item_factors is None):
        raise param_error(
            "user_factors" if user_factors is None else "item_factors",
            FUNC,
            "given with the other factor DataFrame",
            None,
        )


def _spark_pool(opts: EvalOptions) -> int:
    """The items the profile's rule for a k past the lists adds to the catalogue
    (:func:`~recoeval_tracking.metrics.profile_inputs.pool_items`: k + 1 under
    ``profile="spark"`` with the profile's own metrics, else 0); the tasks pad their lists to
    k meanwhile, so that no @k value is NaN there."""
    return pool_items(opts, FUNC)


def _effective_width(opts: EvalOptions, width: int) -> int:
    """The lists' width as the run reads them: padded to k where the spark profile computes
    a k past the lists."""
    return max(width, int(opts.k)) if _spark_pool(opts) else width


def _check_width(opts: EvalOptions, width: int, p: Any) -> None:
    """The lists' width (the longest list, counted by the tasks) against k, as
    :func:`~recoeval_tracking.evaluate` judges it: ``ap`` at a k shorter than the lists
    refused under ``profile="spark"``; a k past the lists refused unless the profile computes
    it."""
    refuse_ap_past_k(width, opts, FUNC)
    if not _spark_pool(opts):
        plan_for_source(p, RankedLists(np.zeros((0, max(width, 1)), dtype=np.int64)), FUNC)


def _check_lists(extra: int, opts: EvalOptions) -> None:
    """An item repeated in a user's list (``extra`` rows, counted by the tasks): refused
    under a profile whose library counts every copy, as evaluate() refuses it; otherwise
    warned about (it counts once, at its best rank, as in evaluate())."""
    if not extra:
        return
    refuse_repeated(extra, opts, FUNC)
    warnings.warn(
        f"The 'ranked' lists passed to {FUNC} repeat an item {extra} times; each item counts "
        "once, at its best rank (the later copies are dropped and the rest of the list moves "
        "up), as in evaluate().",
        UserWarning,
        stacklevel=4,
    )


def merged_width(outs: list[Any]) -> int:
    """The longest list over the shards."""
    return max((getattr(o, CHECKS).width for o in outs), default=0)


def _after_tasks(inp: Inputs, outs: list[Any], p: Any, user_col: str) -> None:
    """The input checks the tasks counted, in the order of the frames: an empty test frame and
    nulls (refused), test items without factors (warned), duplicate rows of test and train
    (warned), repeated list items and two items at one rank (the lists' rules), the
    test users without a list or factors (warned), the lists' width against k; then the
    executors' own warnings, gathered into one."""
    merged = merge_checks([getattr(o, CHECKS) for o in outs])
    nulls: dict[int, dict[str, int]] = {}
    if merged["nulls"]:  # the tasks left rows out: count them by frame and column
        _, nulls = null_counts(input_frame(inp.parts))
    check_counts(merged["rows"], nulls, inp.named)
    lists = inp.model.kind == KIND_LIST
    if merged["unknown"] and not lists:
        warnings.warn(
            f"{merged['unknown']} test rows name items without item factors; they are "
            f"left out ({FUNC} ranks the items of 'item_factors').",
            UserWarning,
            stacklevel=4,
        )
    for part in inp.named:
        if part.kind in (KIND_TEST, KIND_TRAIN):
            warn_duplicates(part, *merged["duplicates"].get(part.kind, (0, 0, None)))
    if lists:
        _check_lists(merged["duplicates"].get(KIND_LIST, (0, 0, None))[0], inp.options)
        if inp.model.rank_col is not None:
            tied, first = merged["tied_ranks"]
            refuse_tied_ranks(tied, first, inp.model.rank_col)
    warn_unlisted(merged["unlisted"], lists, user_col)
    if lists:
        _check_width(inp.options, merged["width"], p)
    gather(outs, WARNINGS)


def _list_source(defs: dict[str, Any], outs: list[Any], width: int) -> None:
    """The lists' description in the definitions record over every shard: the lists' width
    (each shard pads its own lists to k) and the users without a list, summed."""
    src = defs.get("source")
    if not isinstance(src, dict) or src.get("kind") != "ranked_lists":
        return
    src["list_length"] = int(width)
    counts = [o.definitions.get("source", {}) for o in outs]
    if all("users_without_list" in c for c in counts):
        n = sum(int(c["users_without_list"]) for c in counts)
        total = sum(int(c["evaluated_users"]) for c in counts)
        src["users_without_list"] = n
        src["evaluated_users"] = total
        src["share_without_list"] = n / total if total else 0.0


def _task_times(outs: list[Any]) -> dict[str, float]:
    """The tasks' seconds summed over the shards, by step (``shard_import``: the engine's
    modules; ``shard_read``: Arrow columns to numbered numpy arrays; ``shard_arrays``: the
    CSR matrices, the lists or factors and the input counts; ``shard_engine``: the engine and
    the shard's statistics (``shard_engine_cpu``: its CPU seconds); ``shard_output``: the
    per-user Arrow table; ``shard_receive``: the wait for the input batches; ``shard_cpu``:
    the CPU seconds of all the steps after it)."""
    out: dict[str, float] = {}
    for o in outs:
        for name, seconds in (getattr(o, TIMES, None) or {}).items():
            out[f"shard_{name}"] = out.get(f"shard_{name}", 0.0) + float(seconds)
    return out


def _driver_plan(inp: Inputs, n: int, width: int) -> tuple[Any, dict[str, Any]]:
    """The plan (as the shards will make it: lists of the least width) and the shared item
    side of the tasks."""
    opts, model = inp.options, inp.model
    empty = Prepared(
        None, sp.csr_array((0, n), dtype=np.float64), n, np.zeros(0, dtype=np.int64), None
    )
    if model.B is None:
        source: Any = RankedLists(np.zeros((0, max(width, 1)), dtype=np.int64))
    else:
        A = np.zeros((0, model.B.shape[1]), dtype=model.B.dtype)
        source = score_source(empty, A, model.B, None, None, None, None, FUNC, opts.backend)
    p = plan(opts, empty, FUNC)
    if model.B is None:
        p = left_out_for_ranked(p, FUNC)
    p = plan_for_source(p, source, FUNC)
    _check_mergeable(p, FUNC)
    # the list metrics may read the train popularity of the items (none of the spark
    # profile's, the only ones run without a catalogue: needs_catalogue)
    needs_pop = inp.catalogue is not None and any(s.kind in ("list", "aggregate") for s in p.specs)
    popularity = (
        _popularity(inp.train, n, item_table(inp.spark, model.item_ids))
        if needs_pop
        else (np.zeros(n, dtype=np.int64), 0)
    )
    shared_source, _ = split_source(source)
    return p, {
        "source": None if model.B is None else shared_source,
        "item_features": None,
        "popularity": popularity,
        "items": inp.catalogue,
    }


def _tasks_input(
    inp: Inputs, n: int, width: int, shards: int | None, mode: str, shared: dict[str, Any]
) -> tuple[Any, Any, ShardSpec, list[Any]]:
    """The frame the tasks read (and the users' factors apart, for a cogroup), the spec every
    task is given, and the frames persisted for it (the numbered users of a factor model)."""
    spark, model = inp.spark, inp.model
    parallel = 2 * spark.sparkContext.defaultParallelism
    B = model.B
    fac, cached, bounds = None, [], None
    if model.kind == KIND_LIST:
        frame = per_user(input_frame(inp.parts), shards)
        n_shards = shards or int(spark.conf.get("spark.sql.shuffle.partitions"))
    else:
        ids = inp.test.select("user").union(model.frame.select("user"))
        if inp.train is not None:
            ids = ids.union(inp.train.select("user"))
        users, m, numbered = number_users(ids)
        cached.append(numbered)
        if m == 0:
            _release(cached, None)
            raise param_error(
                "test", FUNC, "a DataFrame with at least one user", "no rows", got_is_text=True
            )
        n_shards = check_int(
            min(shards or max(parallel, -(-m // USERS_PER_SHARD)), m), "shards", FUNC, minimum=1
        )
        bounds = np.array([-(-j * m // n_shards) for j in range(n_shards + 1)], dtype=np.int64)
        frame, fac = _factor_frames(inp, users, m, n_shards, mode)
    prof = PROFILES.get(inp.options.profile, {}) if inp.options.profile else {}
    spec = ShardSpec(
        n,
        inp.options,
        width,
        0 if B is None else int(B.shape[1]),
        "float64" if B is None else str(B.dtype),
        inp.train is not None,
        prof.get("no_ground_truth") == "zero",
        spark.sparkContext.broadcast(shared),
        bounds,
        unique_ranks=model.rank_col is not None,
        n_shards=int(n_shards),
    )
    return frame, fac, spec, cached


def _factor_frames(inp: Inputs, users: Any, m: int, n_shards: int, mode: str) -> tuple[Any, Any]:
    """With factors: the interactions and the users' factors with each user's global row and
    contiguous shard; one frame (``map``: the factors in a column, null beside the
    interactions) or two (``apply``: cogrouped)."""
    _, F, _ = spark_modules()
    model = inp.model
    user_type = inp.test.select("user").unionByName(model.frame.select("user")).schema
    user_type = user_type["user"].dataType
    item_type = inp.test.schema["item"].dataType
    shard = F.floor(F.col("row") * F.lit(n_shards) / F.lit(m)).cast("int").alias("shard")

    def placed(df: Any, cols: list[Any]) -> Any:
        joined = df.join(users, "user")
        return joined.select(
            F.col("user").cast(user_type).alias("user"), F.col("row").cast("long"), shard, *cols
        )

    features = F.col("features").cast(model.features_type).alias("features")
    factors = placed(model.frame, [F.lit(None).cast(item_type).alias("item"), features])
    null = [F.lit(None).cast(model.features_type).alias("features")] if mode == "map" else []
    parts = [
        (placed(df, ["item", *([c] if c else []), *null]), kind, c) for df, kind, c in inp.parts
    ]
    if mode == "map":
        parts.append((factors, KIND_FACTORS, None))
        return input_frame(parts, ("row", "shard", "features")), None
    inter = input_frame(parts, ("row", "shard"))
    return inter, input_frame([(factors, KIND_FACTORS, None)], ("row", "shard", "features"))


def _run(
    frame: Any, fac: Any, spec: ShardSpec, shared: dict[str, Any], p: Any, mode: str
) -> tuple[list[Any], Any]:
    """Run the shard function on the executors: the shards' statistics (collected) and the
    persisted output frame."""
    _, F, _ = spark_modules()
    probe_spec = dataclasses.replace(
        spec, shared=shared, bounds=None if spec.bounds is None else np.zeros(2, dtype=np.int64)
    )
    probe = evaluate_table(
        empty_input(getattr(shared["items"], "type", None), grouped=spec.bounds is None),
        probe_spec,
        0,
    )
    names = list(probe.column_names)
    if p.want_topk and not p.topk_only and "n_tied_topk" not in names:  # no users, no counts
        names.insert(names.index("nan_reason") + 1, "n_tied_topk")
    curves = [c for c in names if c.endswith("_at_k")]
    schema = output_schema(names, curves, frame.schema["user"].dataType)
    spec = dataclasses.replace(spec, columns=tuple(names))
    if fac is not None:
        grouped = frame.groupBy("shard").cogroup(fac.groupBy("shard"))
        out = grouped.applyInArrow(partial(evaluate_cogroup, spec=spec), schema)
    elif mode == "apply":
        if spec.bounds is None:
            frame = frame.withColumn("shard", F.pmod(F.hash("user"), F.lit(spec.n_shards)))
        out = frame.groupBy("shard").applyInArrow(group_task(spec), schema)
    elif spec.bounds is None:  # one row per user, hashed to partitions: a partition, a shard
        out = frame.mapInArrow(partial(evaluate_batches, spec=spec), schema)
    else:
        out = frame.repartitionByRange(spec.n_shards, "shard").mapInArrow(
            partial(evaluate_batches, spec=spec), schema
        )
    out = out.persist()
    try:
        blobs = out.where(F.col(STATS).isNotNull()).select(STATS).collect()
    except BaseException:  # a failed task: the frame is registered as cached all the same
        out.unpersist()
        raise
    return [pickle.loads(b[0]) for b in blobs], out


def _popularity(train: Any, n: int, items: Any) -> tuple[np.ndarray, int]:
    """``train_popularity`` of the whole train matrix, from Spark (item-sized)."""
    _, F, _ = spark_modules()
    if train is None:
        return np.zeros(n, dtype=np.int64), 0
    pairs = train.select("user", "item").distinct().join(items, "item")
    counts = pairs.groupBy("_item").count().toPandas()
    pop = np.zeros(n, dtype=np.int64)
    pop[counts["_item"].to_numpy()] = counts["count"].to_numpy()
    return pop, int(pairs.select("user").distinct().count())
