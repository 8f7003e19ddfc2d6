"""The model and the frames of :func:`recoeval_tracking.spark.evaluate_spark` as the driver reads
them before any task: the frames renamed to ``user``, ``item``, ``value``; ranked lists as
(user, item, key) rows (key ascending = better); the item factors collected; the parts of the
input frame of every task (:func:`~recoeval_tracking.spark._frames.input_frame`); the catalogue
(the item factors' ids, or with lists the first pass: the frames' items, one aggregate over
their item columns); and the checks that read the schemas or the factors before any task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import param_error
from ..options import EvalOptions
from ._checks import Part, check_factors, check_item_lengths, check_types
from ._frames import catalogue, check_frame, input_frame, spark_modules
from ._shard import KIND_FACTORS, KIND_LIST, KIND_TEST, KIND_TRAIN

__all__ = [
    "Model",
    "Inputs",
    "checked_inputs",
    "ranked_columns",
    "needs_catalogue",
    "relevance_options",
    "local_workers_python",
]

FUNC = "evaluate_spark"


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


@dataclass
class Model:
    """The model side: its frame (lists as (user, item, value), or (user, features)), its kind,
    the sorted catalogue, the item factors (None for lists), the Spark type of the features
    column and, for lists given by rank, the rank column's name."""

    frame: Any
    kind: int
    item_ids: np.ndarray
    B: np.ndarray | None
    features_type: Any
    rank_col: str | None = None


@dataclass
class Inputs:
    """What the driver checked and built before any task: the renamed test and train frames,
    the options with the data's relevance rule, the model, the session, the input parts
    ``(frame, kind, value column)`` and their :class:`Part` (names, for the checks' messages),
    and the catalogue as a sorted Arrow array (None: each task numbers its own items,
    :func:`needs_catalogue`)."""

    test: Any
    train: Any
    options: Any
    model: Model
    spark: Any
    parts: list[tuple[Any, int, str | None]]
    named: list[Part]
    catalogue: Any


def checked_inputs(
    frames: tuple[Any, Any, Any, Any, Any],
    opts: Any,
    relevance: Any,
    given: tuple[Any, ...],
) -> Inputs:
    """The frames renamed and checked on the driver before any task (types from the schemas,
    factor lengths from one aggregate), the relevance rule applied to the options, the model,
    and the catalogue: the item factors' ids, or the frames' items (lists: the first pass, one
    aggregate over the item columns alone, where a metric or rule reads it). ``frames``: test, train, ranked, user_factors,
    item_factors."""
    test, train, ranked, user_factors, item_factors = frames
    user_col, item_col, rating_col, rank_col, score_col, id_col, features_col = given
    te = _renamed(test, user_col, item_col, rating_col, "test")
    tr = None if train is None else _renamed(train, user_col, item_col, rating_col, "train")
    # the frames' own columns (checked above): a value column left unnamed is refused there
    given_frames = {"test": test} if train is None else {"test": test, "train": train}
    columns = {name: list(df.columns) for name, df in given_frames.items()}
    opts = relevance_options(opts, relevance, rating_col, columns)
    check_types(_raw_parts(given_frames, ranked, user_factors, item_factors, given))
    spark = te.sparkSession
    local_workers_python(spark)
    names = {"user": user_col, "item": item_col}
    value = "value" if rating_col else None
    value_name = {"value": rating_col} if rating_col else {}
    named = [Part("test", te, {**names, **value_name}, {}, KIND_TEST)]
    parts: list[tuple[Any, int, str | None]] = [(te, KIND_TEST, value)]
    if tr is not None:
        named.append(Part("train", tr, dict(named[0].names), {}, KIND_TRAIN))
        parts.append((tr, KIND_TRAIN, value))
    model = _model(ranked, user_factors, item_factors, given)
    if model.kind == KIND_LIST:
        nested, rank_col, score_col = ranked_columns(ranked, user_col, rank_col, score_col)
        key = "recommendations (position)" if nested else str(rank_col or score_col)
        named.append(Part("ranked", model.frame, {**names, "value": key}, {}, KIND_LIST))
        parts.append((model.frame, KIND_LIST, "value"))
    if model.kind == KIND_LIST:
        if not needs_catalogue(opts):
            return Inputs(te, tr, opts, model, spark, parts, named, None)
        items = catalogue(input_frame(parts))
        model.item_ids = items.to_numpy(zero_copy_only=False)
        return Inputs(te, tr, opts, model, spark, parts, named, items)
    check_factors(model.frame, model.B, model.item_ids, (id_col, features_col))
    return Inputs(te, tr, opts, model, spark, parts, named, _arrow(model.item_ids))


def needs_catalogue(opts: EvalOptions) -> bool:
    """Whether a lists' run numbers the items over every frame (the first pass). The spark
    profile's own metrics read neither the catalogue's size nor the items' global numbers nor
    their train popularity (``ndcg_spark`` reads the test values in item id order):
    each task then numbers its own items in id order (a tied score still goes to the lower
    id), and the k + 1 items the profile adds keep every user's pool above k, so the pool rule
    (``min_items_pool``, unless it exceeds k + 1) holds whatever the catalogue."""
    from ..metrics.profiles import PROFILES

    if opts.profile != "spark" or set(opts.metrics) - set(PROFILES["spark"]["metrics"]):
        return True
    return int(opts.min_items_pool) > int(opts.k) + 1


def _arrow(ids: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(ids.tolist() if ids.dtype.kind == "O" else ids)


def _model(ranked: Any, user_factors: Any, item_factors: Any, names: tuple[Any, ...]) -> Model:
    user_col, item_col, _, rank_col, score_col, id_col, features_col = names
    _, _, T = spark_modules()
    if ranked is not None:
        lists = _ranked_frame(ranked, user_col, item_col, rank_col, score_col)
        _, rank_col, _ = ranked_columns(ranked, user_col, rank_col, score_col)
        empty = np.zeros(0)
        return Model(lists, KIND_LIST, empty, None, T.ArrayType(T.FloatType()), rank_col)
    item_ids, B, ufac = _factor_side(item_factors, user_factors, id_col, features_col)
    features = T.ArrayType(T.FloatType() if B.dtype == np.float32 else T.DoubleType())
    return Model(ufac, KIND_FACTORS, item_ids, B, features)


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
    nested, rank_col, score_col = ranked_columns(ranked, user_col, rank_col, score_col)
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


def ranked_columns(
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
        nested, rank_col, score_col = ranked_columns(ranked, user_col, rank_col, score_col)
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
