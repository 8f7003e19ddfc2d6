"""The Spark side of :func:`recoeval_tracking.spark.evaluate_spark`: the input frame every task
reads, the first pass over it with lists (the catalogue: one aggregate over the item columns),
numbering the users of a factor model, and the schema of the tasks' output.

With factors, users are numbered without collecting them: their distinct ids are sorted by Spark
(``orderBy``), each sorted partition's size and first ``monotonically_increasing_id`` are
collected (one small row per partition), and a user's global row is its partition's offset
plus its position in the partition. Items (a catalogue of thousands to a few million ids) are
sorted on the driver and broadcast; each task numbers its rows' items by that catalogue (the
train popularity joins them back as a table).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ._shard import COUNT_COLUMNS, LISTED, STATS

__all__ = [
    "spark_modules",
    "check_frame",
    "number_users",
    "item_table",
    "collect_arrow",
    "input_frame",
    "catalogue",
    "per_user",
    "null_counts",
    "output_schema",
]


def spark_modules() -> tuple[Any, Any, Any]:
    """``(pyspark.sql, pyspark.sql.functions, pyspark.sql.types)``, or the install hint."""
    try:
        from pyspark import sql
        from pyspark.sql import functions, types
    except ImportError:
        from .._validation import InputError

        raise InputError(
            'evaluate_spark needs pyspark: pip install "recoeval_tracking[spark]" '
            "(pyspark>=3.5 and a Java runtime)."
        ) from None
    return sql, functions, types


def check_frame(df: Any, name: str, columns: list[str], func: str) -> None:
    """``df`` must be a Spark DataFrame holding ``columns``."""
    if (
        df is None
        or not hasattr(df, "columns")
        or not hasattr(df, "select")
        or isinstance(df, pd.DataFrame)
    ):
        raise param_error(name, func, "a Spark DataFrame", df)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise param_error(
            name,
            func,
            f"a Spark DataFrame with the columns {columns}",
            f"columns {list(df.columns)} (missing {missing})",
            got_is_text=True,
        )


def number_users(ids: Any) -> tuple[Any, int, Any]:
    """``(table of (user, row), number of users, the persisted frame it reads)``: rows 0..m-1
    in sorted id order. The persisted frame must stay cached while the table is used (its
    partition ids and offsets were collected from that one computation): unpersist it with
    the results."""
    _, F, _ = spark_modules()
    ordered = (
        ids.distinct()
        .orderBy("user")
        .select(
            "user",
            F.spark_partition_id().alias("_pid"),
            F.monotonically_increasing_id().alias("_mid"),
        )
        .persist()
    )
    sizes = (
        ordered.groupBy("_pid")
        .agg(F.count("*").alias("n"), F.min("_mid").alias("first"))
        .toPandas()
        .sort_values("_pid")
    )
    offsets = np.concatenate([[0], np.cumsum(sizes["n"].to_numpy())[:-1]]).astype(np.int64)
    spark = ids.sparkSession
    table = spark.createDataFrame(
        pd.DataFrame(
            {
                "_pid": sizes["_pid"].to_numpy(np.int32),
                "_off": offsets,
                "_first": sizes["first"].to_numpy(np.int64),
            }
        )
    )
    users = ordered.join(F.broadcast(table), "_pid").select(
        "user", (F.col("_off") + F.col("_mid") - F.col("_first")).alias("row")
    )
    return users, int(sizes["n"].sum()), ordered


def item_table(spark: Any, items: np.ndarray) -> Any:
    """The broadcast table (item, _item) of the sorted catalogue."""
    _, F, _ = spark_modules()
    frame = pd.DataFrame({"item": items, "_item": np.arange(items.shape[0], dtype=np.int32)})
    return F.broadcast(spark.createDataFrame(frame))


def collect_arrow(df: Any) -> Any:
    """``df`` collected as one Arrow table (``toArrow``, pyspark 4; the Arrow batches of
    pyspark 3.5 otherwise), never row by row."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    batches = df._collect_as_arrow()  # pyspark 3.5
    if batches:
        return pa.Table.from_batches(batches)
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema).empty_table()


def input_frame(parts: list[tuple[Any, int, str | None]], extra: tuple[str, ...] = ()) -> Any:
    """One frame of ``INPUT_COLUMNS`` (and the ``extra`` columns each part holds) from
    ``(frame, kind, value column)`` parts, each with columns ``user`` and ``item``; rows
    without a value column get 1.0. Spark widens the id types of the parts to one."""
    _, F, _ = spark_modules()
    out = None
    for frame, kind, value in parts:
        df = frame.select(
            "user",
            F.lit(kind).cast("byte").alias("kind"),
            "item",
            (F.col(value) if value else F.lit(1.0)).cast("double").alias("value"),
            *extra,
        )
        out = df if out is None else out.unionByName(df)
    assert out is not None
    return out


def catalogue(frame: Any) -> Any:
    """The first pass over the input frame of a lists' run, one aggregate over its item
    columns alone: the sorted catalogue (an Arrow array of the distinct non-null items, in id
    order: the order of the item indices, so a tied score goes to the lower id)."""
    import pyarrow.compute as pc

    items = collect_arrow(frame.select("item").distinct()).column("item")
    items = items.combine_chunks().drop_null()
    return items.take(pc.array_sort_indices(items))


def per_user(frame: Any, shards: int | None) -> Any:
    """One row per user of the input frame: ``user`` and its rows' kinds, items and values as
    lists (``LISTED``; the three lists of one aggregate, so in one order).
    Spark aggregates each map task's rows before the shuffle, which then moves one row per
    user and task rather than every entry. The users are hashed into the session's shuffle
    partitions, or into ``shards`` partitions (the rows are then moved before the
    aggregate)."""
    _, F, _ = spark_modules()
    if shards:
        frame = frame.repartition(int(shards), "user")
    kinds, items, values = LISTED
    return frame.groupBy("user").agg(
        F.collect_list("kind").alias(kinds),
        F.collect_list("item").alias(items),
        F.collect_list("value").alias(values),
    )


def null_counts(frame: Any) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
    """Rows and rows with a null ``user``, ``item``, ``value`` per kind of the input frame (one
    aggregate, run when the tasks met a null, for the error that names the frame)."""
    _, F, _ = spark_modules()
    rows, nulls = {}, {}
    counted = frame.groupBy("kind").agg(
        F.count(F.lit(1)).alias("rows"), *[F.count(c).alias(c) for c in ("user", "item", "value")]
    )
    for r in counted.collect():
        k = int(r["kind"])
        rows[k] = int(r["rows"])
        nulls[k] = {c: rows[k] - int(r[c]) for c in ("user", "item", "value")}
    return rows, nulls


def output_schema(names: list[str], curves: list[str], user_type: Any) -> Any:
    """The Spark schema of the shard function's output (the columns of a probe run on no
    users): the users' ids of ``user_type``, counts as longs, curves as arrays, every metric as
    a double (the types :func:`recoeval_tracking.spark._shard.evaluate_table` writes)."""
    _, _, T = spark_modules()
    fields = []
    for name in names:
        if name == "user_id":
            typ = user_type
        elif name in curves:
            typ = T.ArrayType(T.DoubleType())
        elif name == STATS:
            typ = T.BinaryType()
        elif name == "nan_reason":
            typ = T.StringType()
        elif name in COUNT_COLUMNS:
            typ = T.LongType()
        else:
            typ = T.DoubleType()
        fields.append(T.StructField(name, typ, True))
    return T.StructType(fields)
