"""The Spark side of :func:`recoeval_tracking.spark.evaluate_spark`: numbering users and items,
the long input frame, and running the shard function on the executors.

Users are numbered without collecting them: their distinct ids are sorted by Spark
(``orderBy``), each sorted partition's size and first ``monotonically_increasing_id`` are
collected (one small row per partition), and a user's global row is its partition's offset
plus its position in the partition. Items (a catalogue of thousands to a few million ids) are
numbered on the driver in sorted order and joined back as a broadcast table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ._shard import INPUT_COLUMNS, KIND_FACTORS

__all__ = [
    "spark_modules",
    "check_frame",
    "number_users",
    "item_table",
    "long_frame",
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


def long_frame(
    parts: list[tuple[Any, int, str | None]],
    users: Any,
    items: Any | None,
    m: int,
    n_shards: int,
    features_type: Any = None,
) -> Any:
    """One frame of ``INPUT_COLUMNS`` from ``(frame, kind, value column)`` parts, each frame
    with columns ``user`` and ``item`` (item: already an index when ``items`` is None), or
    ``user`` and ``features`` for the factors; with a ``features`` column of that type when
    ``features_type`` is given."""
    _, F, T = spark_modules()
    shard = F.floor(F.col("row") * F.lit(n_shards) / F.lit(m)).cast("int").alias("shard")
    out = None
    for frame, kind, value in parts:
        df = frame.join(users, "user")
        if kind == KIND_FACTORS:
            cols = [
                F.lit(-1).cast("int").alias("item"),
                F.lit(0.0).alias("value"),
                F.col("features").cast(features_type).alias("features"),
            ]
        else:
            if items is not None:
                df = df.join(items, "item")
            item = F.col("_item") if items is not None else F.col("item")
            cols = [
                item.cast("int").alias("item"),
                (F.col(value) if value else F.lit(1.0)).cast("double").alias("value"),
            ]
            if features_type is not None:
                cols.append(F.lit(None).cast(features_type).alias("features"))
        df = df.select(
            shard, F.col("row").cast("long"), F.lit(kind).cast("int").alias("kind"), *cols
        )
        out = df if out is None else out.unionByName(df)
    assert out is not None
    return out.select(*INPUT_COLUMNS, *(["features"] if features_type is not None else []))


def output_schema(names: list[str], curves: list[str]) -> Any:
    """The Spark schema of the shard function's output (the columns of a probe run on no
    users): counts as longs, curves as arrays, every metric as a double."""
    _, _, T = spark_modules()
    fields = []
    for name in names:
        if name in curves:
            typ = T.ArrayType(T.DoubleType())
        elif name == "_recoeval_stats":
            typ = T.BinaryType()
        elif name == "nan_reason":
            typ = T.StringType()
        elif name in ("row", "n_train", "n_test", "n_tied_topk"):
            typ = T.LongType()
        else:
            typ = T.DoubleType()
        fields.append(T.StructField(name, typ, True))
    return T.StructType(fields)
