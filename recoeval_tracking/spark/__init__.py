"""Evaluation inside a Spark session, on Spark DataFrames: :func:`evaluate_spark`.

The users are numbered in sorted id order and cut into contiguous shards; the executors run
one task per shard (``groupBy(shard).applyInPandas``), each the local numba engine through
:func:`recoeval_tracking.distributed.shards.run_shard`, the same shard evaluation as on Dask.
The item side (item factors, the train popularity of the items) is broadcast once; the users'
rows, lists and factors stay on the executors. Each task returns its users' values (a Spark
DataFrame, ``SparkResults.per_user_spark``, to write where you want) and its sufficient
statistics, which the driver merges (:func:`recoeval_tracking.distributed.merge.merge_shards`)
into the same means, 95% intervals, curves, definitions and fingerprint as a local run.

Per-user values are bit-identical to :func:`recoeval_tracking.evaluate` on the same data held in
memory with its users and items in sorted id order (the noise tie keys depend on the global
user row).

This package is the only one that imports ``pyspark`` (the ``spark`` extra), lazily.
"""

from __future__ import annotations

import dataclasses
import pickle
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, param_error
from ..distributed.merge import ShardedResults, merge_shards
from ..distributed.on_dask import _check_mergeable, _checked_options
from ..distributed.shards import split_source
from ..metrics.evaluate import _OPTION_NAMES, _merge_options, plan, plan_for_source
from ..metrics.inputs import Prepared, score_source
from ..metrics.profiles import PROFILES
from ..metrics.protocol import left_out_for_ranked
from ..options import EvalOptions
from ..scores import RankedLists
from ._checks import (
    Part,
    check_factors,
    check_item_lengths,
    check_part,
    check_types,
    gather,
    warn_unlisted,
)
from ._frames import check_frame, item_table, long_frame, number_users, output_schema, spark_modules
from ._shard import (
    KIND_FACTORS,
    KIND_LIST,
    KIND_TEST,
    KIND_TRAIN,
    STATS,
    WARNINGS,
    ShardSpec,
    empty_input,
    evaluate_cogroup,
    evaluate_group,
    evaluate_partition,
)

__all__ = [
    "evaluate_spark",
    "SparkResults",
    "USERS_PER_SHARD",
    "relevance_options",
    "local_workers_python",
]

FUNC = "evaluate_spark"
#: Users per shard by default (at least two shards per core of the session).
USERS_PER_SHARD = 50_000
_MODES = ("apply", "map")


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

    def unpersist(self) -> None:
        """Free the executors' copies: the per-user values and the numbered user table
        (``per_user_spark`` is not to be read after this)."""
        for frame in self._cached or []:
            frame.unpersist()
        self._cached = []


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


#: Column names that hold an interaction's value (a rating) in the frames users pass.
VALUE_COLUMNS = ("value", "rating", "ratings")


def relevance_options(
    opts: EvalOptions,
    relevance: Any,
    rating_col: str | None,
    columns: dict[str, list[str]],
) -> EvalOptions:
    """``opts`` with the data's relevance rule, or the refusal of values with no rule.

    ``relevance`` (a :class:`~recoeval_tracking.data.Relevance`) is applied as
    :func:`~recoeval_tracking.evaluate` applies an interactions container's rule (where the
    options leave ``relevance_level`` or ``gains`` None; a profile with a level keeps it). A
    rule is also given by ``relevance_level``, ``gains`` or a ``profile``. Without any, values
    are refused: a ``rating_col`` (every rating would be a positive, its value its gain), or a
    frame column named like a value (``columns``: the test and train frames' column names)
    that ``rating_col`` leaves out (every row would be a positive of gain 1, ratings of 1 star
    included).
    """
    from types import SimpleNamespace

    from ..data import Relevance
    from ..metrics.inputs import with_data_relevance

    if relevance is not None:
        if not isinstance(relevance, Relevance):
            raise param_error(
                "relevance",
                FUNC,
                "a recoeval_tracking.data.Relevance (the data's rule: split.test.relevance)",
                relevance,
            )
        return with_data_relevance(opts, None, SimpleNamespace(relevance=relevance))
    stated = opts.relevance_level is not None or opts.gains is not None or opts.profile is not None
    if stated:
        return opts
    hint = (
        "Pass the data's rule, relevance=split.test.relevance (MovieLens: ratings >= 4 are "
        "the positives, with gain 1, as the app counts them), or state one: "
        "relevance_level=... and gains='binary' or 'graded'"
    )
    if rating_col is not None:
        raise param_error(
            "relevance",
            FUNC,
            "the data's relevance rule when rating_col is given",
            "none",
            f"Without one every {rating_col!r} value is a positive with its value as gain. "
            + hint
            + " (gains='graded' alone: every entry a positive, its value its gain).",
            got_is_text=True,
        )
    for name, cols in columns.items():
        found = [c for c in cols if str(c).lower() in VALUE_COLUMNS]
        if found:
            raise param_error(
                "rating_col",
                FUNC,
                f"the column of the {name} frame's values ({found[0]!r}) with the data's "
                "relevance rule",
                "None",
                f"Without them every row of the {name} frame is a positive of gain 1, "
                f"whatever its rating. Pass rating_col={found[0]!r} with the data's rule, "
                "relevance=split.test.relevance (MovieLens: ratings >= 4 are the positives, "
                "with gain 1, as the app counts them), or relevance_level=...; or, when every "
                "row is a positive, say so: gains='binary'.",
                got_is_text=True,
            )
    return opts


def _renamed(df: Any, user_col: str, item_col: str | None, value_col: str | None, name: str) -> Any:
    cols = [user_col] + ([item_col] if item_col else []) + ([value_col] if value_col else [])
    check_frame(df, name, cols, FUNC)
    _, F, _ = spark_modules()
    out = [F.col(user_col).alias("user")]
    if item_col:
        out.append(F.col(item_col).alias("item"))
    if value_col:
        out.append(F.col(value_col).alias("value"))
    return df.select(*out)


def _ranked_frame(
    ranked: Any, user_col: str, item_col: str, rank_col: str | None, score_col: str | None
) -> Any:
    """(user, item, value) with value ascending = better: ``recommendations`` arrays of
    ``ALSModel.recommendForAllUsers`` exploded (rank = position), or exploded rows with a rank
    (ascending) or score (descending) column."""
    _, F, _ = spark_modules()
    nested, rank_col, score_col = _ranked_columns(ranked, user_col, rank_col, score_col)
    if nested:
        ex = ranked.select(
            F.col(user_col).alias("user"), F.posexplode("recommendations").alias("value", "rec")
        )
        return ex.select(
            "user", F.col(f"rec.{item_col}").alias("item"), F.col("value").cast("double")
        )
    col = rank_col or score_col
    assert col is not None
    df = _renamed(ranked, user_col, item_col, col, "ranked")
    return df.withColumn("value", F.col("value").cast("double") * F.lit(1.0 if rank_col else -1.0))


def _ranked_columns(
    ranked: Any, user_col: str, rank_col: str | None, score_col: str | None
) -> tuple[bool, str | None, str | None]:
    """(nested ``recommendations`` arrays?, the rank column, the score column) of ``ranked``."""
    check_frame(ranked, "ranked", [user_col], FUNC)
    if rank_col is None and score_col is None and "recommendations" in ranked.columns:
        return True, None, None
    if rank_col is None and score_col is None:
        rank_col = "rank" if "rank" in ranked.columns else None
        score_col = (
            None
            if rank_col
            else next((c for c in ("score", "rating", "prediction") if c in ranked.columns), None)
        )
    if (rank_col is None) == (score_col is None):
        raise param_error(
            "ranked",
            FUNC,
            "a Spark DataFrame of (user, item, rank or score): name one of rank_col or score_col",
            f"columns {ranked.columns}",
            got_is_text=True,
        )
    return False, rank_col, score_col


def _raw_parts(
    frames: dict[str, Any], ranked: Any, user_factors: Any, item_factors: Any, names: tuple
) -> list[Part]:
    """The frames as the user named them, with the Spark types of their id and value
    columns (for :func:`check_types`, before Spark casts anything)."""
    user_col, item_col, rating_col, rank_col, score_col, id_col, features_col = names

    def typed(arg: str, df: Any, cols: dict[str, str | None]) -> Part:
        named = {role: c for role, c in cols.items() if c is not None}
        check_frame(df, arg, list(named.values()), FUNC)
        return Part(arg, None, named, {role: df.schema[c].dataType for role, c in named.items()})

    parts = [
        typed(arg, df, {"user": user_col, "item": item_col, "value": rating_col})
        for arg, df in frames.items()
    ]
    if ranked is not None:
        nested, rank_col, score_col = _ranked_columns(ranked, user_col, rank_col, score_col)
        if nested:
            part = typed("ranked", ranked, {"user": user_col})
            element = ranked.schema["recommendations"].dataType.elementType
            if item_col not in getattr(element, "names", []):
                raise param_error(
                    "ranked",
                    FUNC,
                    f"'recommendations' structs with an {item_col!r} field (item_col)",
                    element.simpleString(),
                    got_is_text=True,
                )
            part.names["item"] = f"recommendations.{item_col}"
            part.raw_types["item"] = element[item_col].dataType
            parts.append(part)
        else:
            cols = {"user": user_col, "item": item_col, "value": rank_col or score_col}
            parts.append(typed("ranked", ranked, cols))
    else:
        for df, arg in ((item_factors, "item_factors"), (user_factors, "user_factors")):
            check_frame(df, arg, [id_col, features_col], FUNC)
        parts.append(typed("user_factors", user_factors, {"user": id_col}))
        parts.append(typed("item_factors", item_factors, {"item": id_col}))
    return parts


def _catalogue(frames: list[Any]) -> np.ndarray:
    """The sorted distinct items of ``frames`` (collected: the catalogue is item-sized)."""
    items = frames[0].select("item")
    for f in frames[1:]:
        items = items.union(f.select("item"))
    ids = items.distinct().toPandas()["item"].to_numpy()
    return np.sort(ids)


def _factor_side(
    item_factors: Any, user_factors: Any, id_col: str, features_col: str
) -> tuple[np.ndarray, np.ndarray, Any]:
    """The sorted item ids, the item factors (n x p, collected) and the users' factor frame
    (user, features)."""
    for df, name in ((item_factors, "item_factors"), (user_factors, "user_factors")):
        check_frame(df, name, [id_col, features_col], FUNC)
    pdf = item_factors.select(id_col, features_col).toPandas().sort_values(id_col)
    if pdf.shape[0] == 0:
        raise param_error(
            "item_factors", FUNC, "a non-empty factor DataFrame", "no rows", got_is_text=True
        )
    nulls = int(pdf[id_col].isna().sum() + pdf[features_col].isna().sum())
    if nulls:
        raise param_error(
            "item_factors",
            FUNC,
            f"a frame without nulls in {id_col!r} and {features_col!r}",
            f"{nulls} nulls",
            f"Drop them first: item_factors.dropna(subset=[{id_col!r}, {features_col!r}]).",
            got_is_text=True,
        )
    check_item_lengths(pdf[features_col].map(len).to_numpy(), features_col)
    B = np.stack([np.asarray(f) for f in pdf[features_col]])
    dtype = np.float32 if B.dtype == np.float32 or B.dtype.kind == "O" else B.dtype
    _, F, _ = spark_modules()
    users = user_factors.select(F.col(id_col).alias("user"), F.col(features_col).alias("features"))
    return pdf[id_col].to_numpy(), np.ascontiguousarray(B, dtype=dtype), users


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
    mode: str = "apply",
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
        Number of user shards (tasks); by default one per :data:`USERS_PER_SHARD` users and at
        least two per core of the session.
    mode : {"apply", "map"}
        ``groupBy(shard).applyInPandas`` (default) or ``repartitionByRange`` +
        ``mapInPandas``.
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
    spark_modules()  # pyspark, or the install hint, before any frame is read
    te, tr, opts, model, spark = _checked_inputs(
        test,
        train,
        ranked,
        user_factors,
        item_factors,
        opts,
        relevance,
        (user_col, item_col, rating_col, rank_col, score_col, id_col, features_col),
    )
    n = int(model.item_ids.shape[0])
    items = item_table(spark, model.item_ids)
    if model.kind == KIND_LIST and opts.profile == "spark":
        model, n = _spark_profile_lists(model, opts, n)
    if model.B is not None:
        dropped = te.join(items, "item", "left_anti").count()
        if dropped:
            warnings.warn(
                f"{dropped} test rows name items without item factors; they are "
                f"left out ({FUNC} ranks the items of 'item_factors').",
                UserWarning,
                stacklevel=2,
            )
    ids = te.select("user").union(model.frame.select("user"))
    if tr is not None:
        ids = ids.union(tr.select("user"))
    users, m, numbered = number_users(ids)
    t_prepare = time.perf_counter() - t0
    if m == 0:
        numbered.unpersist()
        raise param_error(
            "test", FUNC, "a DataFrame with at least one user", "no rows", got_is_text=True
        )
    p, shared = _driver_plan(opts, n, model, tr, items)
    n_shards = shards or max(2 * spark.sparkContext.defaultParallelism, -(-m // USERS_PER_SHARD))
    n_shards = check_int(min(n_shards, m), "shards", FUNC, minimum=1)
    bounds = np.array([-(-j * m // n_shards) for j in range(n_shards + 1)], dtype=np.int64)
    prof = PROFILES.get(opts.profile, {}) if opts.profile else {}
    B = model.B
    spec = ShardSpec(
        bounds,
        n,
        opts,
        model.width,
        0 if B is None else int(B.shape[1]),
        "float64" if B is None else str(B.dtype),
        tr is not None,
        prof.get("no_ground_truth") == "zero",
        spark.sparkContext.broadcast(shared),
    )
    value = "value" if rating_col else None
    parts: list[tuple[Any, int, str | None]] = [(te, KIND_TEST, value)]
    if tr is not None:
        parts.append((tr, KIND_TRAIN, value))
    fac = None
    if model.kind == KIND_LIST:
        parts.append((model.frame, KIND_LIST, "value"))
    elif mode == "map":  # one frame: the factors in a column, null beside the interactions
        parts.append((model.frame, KIND_FACTORS, None))
    else:  # cogrouped: the factors apart from the interactions
        fac = long_frame(
            [(model.frame, KIND_FACTORS, None)], users, items, m, n_shards, model.features_type
        )
    long = long_frame(
        parts,
        users,
        items,
        m,
        n_shards,
        model.features_type
        if mode == "map" and fac is None and model.kind == KIND_FACTORS
        else None,
    )
    outs, out, names = _run(long, fac, spec, shared, p, mode, n_shards)
    gather(outs, WARNINGS, users)
    _, F, _ = spark_modules()
    per_user = (
        out.where(F.col("row") >= 0)
        .drop(STATS)
        .join(users, "row")
        .withColumnRenamed("user", "user_id")
    )
    cols = ["user_id", *[c for c in names if c not in ("row", STATS)]]
    res = merge_shards(outs, p, n, time.perf_counter() - t0, None)
    res.timings["spark_prepare"] = t_prepare  # catalogue, list width, user numbering
    fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(ShardedResults)}
    return SparkResults(
        **fields, per_user_spark=per_user.select(*cols), n_users=m, _cached=[out, numbered]
    )


def _checked_inputs(
    test: Any,
    train: Any,
    ranked: Any,
    user_factors: Any,
    item_factors: Any,
    opts: Any,
    relevance: Any,
    given: tuple[Any, ...],
) -> tuple[Any, Any, Any, Any, Any]:
    """The frames renamed and checked on the driver before any task (types, nulls, duplicates,
    empty test, factor lengths, users without a list), the relevance rule applied to the
    options, and the model's frames: ``(test, train, options, model, session)``."""
    user_col, item_col, rating_col, rank_col, score_col, id_col, features_col = given
    te = _renamed(test, user_col, item_col, rating_col, "test")
    tr = None if train is None else _renamed(train, user_col, item_col, rating_col, "train")
    # the frames' own columns (checked above): a value column left unnamed is refused there
    frames = {"test": test} if train is None else {"test": test, "train": train}
    columns = {name: list(df.columns) for name, df in frames.items()}
    opts = relevance_options(opts, relevance, rating_col, columns)
    check_types(_raw_parts(frames, ranked, user_factors, item_factors, given))
    named = {"user": user_col, "item": item_col, "value": rating_col or "value"}
    for arg, df in (("test", te), ("train", tr)):
        if df is not None:
            check_part(Part(arg, df, named, {}))
    spark = te.sparkSession
    local_workers_python(spark)
    model = _model(
        te,
        tr,
        ranked,
        user_factors,
        item_factors,
        (user_col, item_col, rank_col, score_col, id_col, features_col),
    )
    if model.kind == KIND_LIST:
        nested, rank_col, score_col = _ranked_columns(ranked, user_col, rank_col, score_col)
        value_name = "recommendations (position)" if nested else (rank_col or score_col)
        _check_lists(model, opts, user_col, item_col, str(value_name))
        if rank_col is not None:
            _refuse_shared_ranks(model.frame, rank_col)
    else:
        check_factors(model.frame, model.B, model.item_ids, (id_col, features_col))
    warn_unlisted(te, model.frame, model.kind == KIND_LIST, user_col)
    return te, tr, opts, model, spark


def local_workers_python(spark: Any) -> str:
    """In local mode, the workers run this Python (``sys.executable``), the one that holds
    recoeval_tracking, unless ``PYSPARK_PYTHON`` names one: Spark's default is the ``python3``
    found on the PATH, the system's when the virtual environment is not activated, and the
    tasks then fail on ``import recoeval_tracking`` (numba, pandas...). On a cluster the
    workers' Python is the cluster's to set (``spark.pyspark.python``). Returns the workers'
    Python."""
    import os
    import sys

    sc = spark.sparkContext
    if (
        str(sc.master).startswith("local")
        and "PYSPARK_PYTHON" not in os.environ
        and not sc.getConf().get("spark.pyspark.python")
        and sc.pythonExec == "python3"
        and sys.executable
    ):
        sc.pythonExec = sys.executable
    return str(sc.pythonExec)


def _check_models(mode: str, ranked: Any, user_factors: Any, item_factors: Any) -> None:
    if mode not in _MODES:
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


def _check_lists(
    model: Any,
    opts: EvalOptions,
    user_col: str,
    item_col: str,
    value: str,
) -> None:
    """Nulls refused; an item repeated in a user's list warned about (it counts once, at its
    best rank, as in evaluate()), or refused under ``profile="spark"`` (Spark counts every
    copy, which the engine does not reproduce)."""
    cols = {"user": user_col, "item": item_col, "value": value}
    extra = check_part(Part("ranked", model.frame, cols, {}), lists=True)
    if not extra:
        return
    if opts.profile == "spark":
        raise param_error(
            "ranked",
            FUNC,
            "lists without a repeated item under profile='spark'",
            f"{extra} repeated (user, item) rows",
            "Spark's RankingMetrics counts every copy (a recall can pass 1), which this "
            "profile does not reproduce. Drop the copies first, keeping the best rank: "
            "ranked.dropDuplicates([user, item]) after ordering by rank.",
            got_is_text=True,
        )
    warnings.warn(
        f"The 'ranked' lists passed to {FUNC} repeat an item {extra} times; each item counts "
        "once, at its best rank (the later copies are dropped and the rest of the list moves "
        "up), as in evaluate().",
        UserWarning,
        stacklevel=3,
    )


def _spark_profile_lists(model: Any, opts: EvalOptions, n: int) -> tuple[Any, int]:
    """``profile="spark"`` on lists, as ``RankingMetrics`` reads them: a k past the lists'
    length or the catalogue is computed (the lists padded to k, k + 1 items added to the
    catalogue that no list and no test entry holds: they change none of the profile's
    metrics, and leave every user a pool larger than k);
    ``meanAveragePrecision`` reads the whole list, so ``ap`` at a k shorter than the lists is
    refused by name."""
    k = int(opts.k)
    if "ap" in opts.metrics and model.width > k:
        raise param_error(
            "k",
            FUNC,
            f"at least the lists' length ({model.width}) for meanAveragePrecision (ap) under "
            "profile='spark'",
            k,
            "Spark's meanAveragePrecision reads each whole list, ap at k stops at k. Pass "
            f"k={model.width} (every @k metric is then at {model.width}), leave 'ap' out "
            "(metrics=['p', 'r', 'tap', 'ndcg_bin', 'ndcg_spark']), or cut the lists to k "
            "first, as Spark would need to give the same number.",
        )
    if set(opts.metrics) - set(PROFILES["spark"]["metrics"]):
        return model, n  # metrics that count the catalogue: k as evaluate() takes it
    # k + 1 more items than any list or test entry names: the pool of every user exceeds k
    # (train entries, which Spark ignores, are out of the pool), so no @k value is NaN there
    return dataclasses.replace(model, width=max(model.width, k)), n + k + 1


def _refuse_shared_ranks(lists: Any, rank_col: str) -> None:
    """Two different items at one rank of a user's list leave their order to chance: refused,
    as :func:`~recoeval_tracking.evaluate` refuses them in a frame of ranks (a tied score, by
    contrast, goes to the lower item id)."""
    _, F, _ = spark_modules()
    row = (
        lists.groupBy("user", "value")
        .agg(F.countDistinct("item").alias("items"))
        .where(F.col("items") > 1)
        .agg(F.count(F.lit(1)).alias("n"), F.min(F.struct("user", "value")).alias("first"))
        .first()
    )
    if not int(row["n"]):
        return
    first = row["first"]
    raise param_error(
        "ranked",
        FUNC,
        f"a frame whose {rank_col!r} column gives each item of a user's list its own rank",
        f"{int(row['n'])} (user, rank) pairs with several items (first: user "
        f"{first['user']!r} at rank {first['value']:g})",
        "Number each user's items 1, 2, 3... in the model's order, or give a score column "
        "instead (score_col=...; tied scores go to the lower item id).",
        got_is_text=True,
    )


@dataclass
class _Model:
    """The model side: its frame (lists as (user, item, value), or (user, features)), its kind,
    the sorted catalogue, the lists' width (0 for factors), the item factors (None for lists)
    and the Spark type of the features column."""

    frame: Any
    kind: int
    item_ids: np.ndarray
    width: int
    B: np.ndarray | None
    features_type: Any


def _model(
    te: Any, tr: Any, ranked: Any, user_factors: Any, item_factors: Any, names: tuple[Any, ...]
) -> _Model:
    user_col, item_col, rank_col, score_col, id_col, features_col = names
    _, F, T = spark_modules()
    if ranked is not None:
        lists = _ranked_frame(ranked, user_col, item_col, rank_col, score_col)
        item_ids = _catalogue([te, *([tr] if tr is not None else []), lists])
        width = int(lists.groupBy("user").count().agg(F.max("count")).first()[0] or 0)
        return _Model(lists, KIND_LIST, item_ids, width, None, T.ArrayType(T.FloatType()))
    item_ids, B, ufac = _factor_side(item_factors, user_factors, id_col, features_col)
    features = T.ArrayType(T.FloatType() if B.dtype == np.float32 else T.DoubleType())
    return _Model(ufac, KIND_FACTORS, item_ids, 0, B, features)


def _driver_plan(
    opts: EvalOptions, n: int, model: _Model, tr: Any, items: Any
) -> tuple[Any, dict[str, Any]]:
    """The plan (as the shards will make it) and the shared item side of the tasks."""
    empty = Prepared(
        None, sp.csr_array((0, n), dtype=np.float64), n, np.zeros(0, dtype=np.int64), None
    )
    if model.B is None:
        source: Any = RankedLists(np.zeros((0, max(model.width, 1)), dtype=np.int64))
    else:
        A = np.zeros((0, model.B.shape[1]), dtype=model.B.dtype)
        source = score_source(empty, A, model.B, None, None, None, None, FUNC, opts.backend)
    p = plan(opts, empty, FUNC)
    if model.B is None:
        p = left_out_for_ranked(p, FUNC)
    p = plan_for_source(p, source, FUNC)
    _check_mergeable(p, FUNC)
    needs_pop = any(s.kind in ("list", "aggregate") for s in p.specs)
    popularity = _popularity(tr, n, items) if needs_pop else (np.zeros(n, dtype=np.int64), 0)
    shared_source, _ = split_source(source)
    return p, {
        "source": None if model.B is None else shared_source,
        "item_features": None,
        "popularity": popularity,
    }


def _run(
    long: Any, fac: Any, spec: ShardSpec, shared: dict[str, Any], p: Any, mode: str, n_shards: int
) -> tuple[list[Any], Any, list[str]]:
    """Run the shard function on the executors: the shards' statistics (collected), the
    persisted output frame and its column names."""
    _, F, _ = spark_modules()
    probe = evaluate_group(
        empty_input(),
        dataclasses.replace(spec, bounds=np.zeros(2, dtype=np.int64), shared=shared),
        0,
    )
    names = list(probe.columns)
    if p.want_topk and not p.topk_only and "n_tied_topk" not in names:  # no users, no counts
        names.insert(names.index("nan_reason") + 1, "n_tied_topk")
    schema = output_schema(names, [c for c in names if c.endswith("_at_k")])
    if fac is not None:
        out = (
            long.groupBy("shard")
            .cogroup(fac.groupBy("shard"))
            .applyInPandas(lambda pdf, factors: evaluate_cogroup(pdf, factors, spec), schema)
        )
    elif mode == "apply":
        out = long.groupBy("shard").applyInPandas(lambda pdf: evaluate_group(pdf, spec), schema)
    else:
        out = long.repartitionByRange(n_shards, "shard").mapInPandas(
            lambda it: evaluate_partition(it, spec), schema
        )
    out = out.persist()
    blobs = out.where(F.col("row") < 0).select(STATS).collect()
    return [pickle.loads(b[0]) for b in blobs], out, names
