"""Driver-side checks of :func:`recoeval_tracking.spark.evaluate_spark`'s frames, run before any
task: id types that agree across the frames, value columns that are numbers, no null ids,
ranks or values, a test frame with rows, duplicate (user, item) rows counted, factors of one
length, and the test users without a list (or without factors) counted; then the warnings the
executors raised, gathered into one driver-side warning that names the users' own ids.

Every check is a Spark aggregate (one small row back), never a collect of the data.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import param_error
from ._frames import spark_modules

__all__ = ["Part", "check_types", "check_part", "check_factors", "warn_unlisted", "gather"]

FUNC = "evaluate_spark"


@dataclass
class Part:
    """One input frame as the user named it: the argument, the renamed frame (columns
    ``user``, ``item``, ``value`` or ``features``) and the user's name of each column."""

    arg: str
    frame: Any
    names: dict[str, str]
    raw_types: dict[str, Any]


def _kind(dtype: Any) -> str:
    _, _, T = spark_modules()
    if isinstance(dtype, T.StringType):
        return "string"
    if isinstance(dtype, T.NumericType):
        return "number"
    return dtype.simpleString()


def check_types(parts: list[Part]) -> None:
    """The user ids of every frame of one type (string or number), as the item ids; values,
    ranks and scores numbers. Spark would cast one side of a join to the other's type (and
    fail with ``CAST_INVALID_INPUT``, naming no column) or drop the rows that do not compare."""
    ref: dict[str, tuple[str, str, Any]] = {}
    for part in parts:
        for role in ("user", "item"):
            if role not in part.raw_types:
                continue
            dtype = part.raw_types[role]
            kind = _kind(dtype)
            if kind not in ("string", "number"):
                raise param_error(
                    part.arg,
                    FUNC,
                    f"a frame whose {role} ids ({part.names[role]!r}) are strings or numbers",
                    f"a {dtype.simpleString()} column",
                    "Cast the column to a string or an integer first.",
                    got_is_text=True,
                )
            if role not in ref:
                ref[role] = (part.arg, part.names[role], dtype)
                continue
            arg0, col0, dtype0 = ref[role]
            if _kind(dtype0) != kind:
                raise param_error(
                    part.arg,
                    FUNC,
                    f"{role} ids of the type of the {arg0!r} frame's {col0!r} column "
                    f"({dtype0.simpleString()})",
                    f"{part.names[role]!r} of type {dtype.simpleString()}",
                    f"Spark would cast one to the other (CAST_INVALID_INPUT, or rows that "
                    f"never match). Cast one of them first, e.g. "
                    f"df.withColumn({part.names[role]!r}, "
                    f"F.col({part.names[role]!r}).cast({dtype0.simpleString()!r})).",
                    got_is_text=True,
                )
        if "value" in part.raw_types and _kind(part.raw_types["value"]) != "number":
            dtype = part.raw_types["value"]
            raise param_error(
                part.arg,
                FUNC,
                f"a frame whose {part.names['value']!r} column holds numbers",
                f"a {dtype.simpleString()} column",
                f"Cast it first: df.withColumn({part.names['value']!r}, "
                f"F.col({part.names['value']!r}).cast('double')).",
                got_is_text=True,
            )


def check_part(part: Part, *, lists: bool = False) -> int:
    """Nulls refused, an empty test frame refused, duplicate (user, item) rows warned about
    (test, train) or counted (lists: returned, the caller's rule applies). Returns the number
    of duplicate rows of a list frame."""
    _, F, _ = spark_modules()
    df = part.frame
    cols = [c for c in ("user", "item", "value") if c in df.columns]
    row = df.agg(F.count(F.lit(1)).alias("_n"), *[F.count(c).alias(c) for c in cols]).first()
    total = int(row["_n"])
    if total == 0 and part.arg == "test":
        raise param_error(
            "test",
            FUNC,
            "a DataFrame with at least one row (the users to evaluate)",
            "an empty DataFrame",
            "Check the filter or split that made it: every mean would be NaN.",
            got_is_text=True,
        )
    for c in cols:
        nulls = total - int(row[c])
        if nulls:
            name = part.names[c]
            raise param_error(
                part.arg,
                FUNC,
                f"a frame without nulls in {name!r}",
                f"{nulls} of {total} rows with a null {name!r}",
                "A row without a user, an item or a "
                + ("rank/score" if part.arg == "ranked" else "value")
                + f" cannot be placed. Drop or fill them first: "
                f"df.dropna(subset=[{name!r}]) or df.fillna(...).",
                got_is_text=True,
            )
    dup = (
        df.groupBy("user", "item")
        .count()
        .where(F.col("count") > 1)
        .agg(
            F.count(F.lit(1)).alias("pairs"),
            F.sum(F.col("count") - 1).alias("extra"),
            F.min(F.struct("user", "item")).alias("first"),
        )
        .first()
    )
    extra = int(dup["extra"] or 0)
    if extra and not lists:
        first = dup["first"]
        warnings.warn(
            f"The {part.arg!r} frame passed to {FUNC} has {extra} duplicate "
            f"({part.names['user']}, {part.names['item']}) rows over {int(dup['pairs'])} pairs "
            f"(e.g. user {first['user']!r}, item {first['item']!r}); each pair counts once, "
            "with the sum of its values as its value (the rule of evaluate() on a sparse "
            "matrix: a repeated test item's NDCG gain adds up). Merge them first to choose "
            "another rule: df.groupBy(user, item).agg(F.max(rating)).",
            UserWarning,
            stacklevel=3,
        )
    return extra


def check_factors(users: Any, B: np.ndarray, item_ids: np.ndarray, names: tuple[str, str]) -> None:
    """The item factors (collected) of one length, without null or repeated ids; the users'
    factors (a Spark aggregate) of that length, without nulls or repeated ids."""
    id_col, features_col = names
    _, F, _ = spark_modules()
    if len(np.unique(item_ids)) != len(item_ids):
        raise param_error(
            "item_factors",
            FUNC,
            f"one row per item id ({id_col!r})",
            f"{len(item_ids) - len(np.unique(item_ids))} repeated ids",
            f"Keep one row per id: item_factors.dropDuplicates([{id_col!r}]).",
            got_is_text=True,
        )
    p = int(B.shape[1])
    row = users.agg(
        F.count(F.lit(1)).alias("n"),
        F.count("user").alias("ids"),
        F.count("features").alias("feats"),
        F.countDistinct("user").alias("distinct"),
        F.min(F.size("features")).alias("lo"),
        F.max(F.size("features")).alias("hi"),
    ).first()
    n = int(row["n"])
    if n - int(row["ids"]) or n - int(row["feats"]):
        col = id_col if n - int(row["ids"]) else features_col
        raise param_error(
            "user_factors",
            FUNC,
            f"a frame without nulls in {col!r}",
            f"{n - min(int(row['ids']), int(row['feats']))} of {n} rows with a null",
            f"Drop them first: user_factors.dropna(subset=[{col!r}]) (a user without factors "
            "is NaN with reason 'nan_score').",
            got_is_text=True,
        )
    if int(row["distinct"]) != int(row["ids"]):
        raise param_error(
            "user_factors",
            FUNC,
            f"one row per user id ({id_col!r})",
            f"{int(row['ids']) - int(row['distinct'])} repeated ids",
            f"Keep one row per id: user_factors.dropDuplicates([{id_col!r}]).",
            got_is_text=True,
        )
    if n and (int(row["lo"]) != p or int(row["hi"]) != p):
        raise param_error(
            "user_factors",
            FUNC,
            f"{features_col!r} arrays of the item factors' length ({p})",
            f"lengths from {int(row['lo'])} to {int(row['hi'])}",
            "Give the user and item factors of one model (ALSModel.userFactors and itemFactors).",
            got_is_text=True,
        )


def check_item_lengths(lengths: np.ndarray, features_col: str) -> None:
    """Every item factor of one length (they are stacked on the driver)."""
    if lengths.size and lengths.min() != lengths.max():
        raise param_error(
            "item_factors",
            FUNC,
            f"{features_col!r} arrays of one length",
            f"lengths from {int(lengths.min())} to {int(lengths.max())}",
            "Give the item factors of one model (ALSModel.itemFactors).",
            got_is_text=True,
        )


def warn_unlisted(te: Any, model_users: Any, lists: bool, user_col: str) -> int:
    """Warn, with their number and a few ids, about the test users without a list (they score
    0, averaged in, as ``missing_users='zero'`` does in :func:`~recoeval_tracking.evaluate`)
    or without factors (NaN, reason ``nan_score``). Returns their number."""
    _, F, _ = spark_modules()
    missing = te.select("user").distinct().join(model_users.select("user"), "user", "left_anti")
    row = missing.agg(
        F.count(F.lit(1)).alias("n"), F.slice(F.sort_array(F.collect_list("user")), 1, 5)
    ).first()
    n = int(row[0])
    if not n:
        return 0
    total = te.select("user").distinct().count()
    ids = list(row[1])
    if lists:
        what = (
            "have no list in 'ranked': each gets an empty list, so every metric 0, averaged "
            "in (as missing_users='zero' in evaluate()). A list frame that covers only some "
            "users is often a truncated export; filter the test frame to the listed users to "
            "leave them out."
        )
    else:
        what = (
            "have no row in 'user_factors' (users the model never saw): their metrics are NaN "
            "with reason 'nan_score', left out of the means."
        )
    warnings.warn(
        f"{n} of {total} test users ({n / total:.1%}) passed to {FUNC} {what} "
        f"First {user_col} ids: {ids}.",
        UserWarning,
        stacklevel=3,
    )
    return n


#: Executor warnings the driver says itself (with totals and the users' ids; the profile's
#: metrics left out for lists: when it plans the run).
_SAID = ("have no list in the ranked input", "repeat an item", "takes the top-K metrics only")
_IDS = re.compile(r"user ids \[([0-9, ]*)\]")


def _rows(message: str) -> list[int]:
    return [int(x) for m in _IDS.finditer(message) for x in m.group(1).split(",") if x.strip()]


def gather(outs: list[Any], attr: str, users: Any) -> None:
    """One driver-side warning for the warnings the tasks raised: each distinct message once
    (numbers aside), with how many shards raised it, its function named ``evaluate_spark`` and
    the internal user rows replaced by the users' ids (the first five over every shard)."""
    seen: dict[str, tuple[str, str, int, list[int]]] = {}
    for out in outs:
        for category, message in getattr(out, attr, []) or []:
            if any(s in message for s in _SAID):
                continue
            key = re.sub(r"\d+(\.\d+)?", "#", _IDS.sub("user ids []", message))
            cat, first, count, rows = seen.get(key, (category, message, 0, []))
            seen[key] = (cat, first, count + 1, rows + _rows(message))
    if not seen:
        return
    wanted = sorted({r for *_, rows in seen.values() for r in rows[:5]})
    ids: dict[int, Any] = {}
    if wanted:
        _, F, _ = spark_modules()
        found = users.where(F.col("row").isin(wanted)).collect()
        ids = {int(r["row"]): r["user"] for r in found}

    def named(message: str, rows: list[int]) -> str:
        shown = repr([ids.get(r, r) for r in rows[:5]])
        message = _IDS.sub(lambda m: "user ids " + shown, message)
        return re.sub(r"\bevaluate\b(?!\()", FUNC, message)

    n = len(outs)
    lines = [
        f"[{cat}, {count} of {n} shards] {named(first, rows)}"
        + (" (the counts are those of the first shard)" if count > 1 else "")
        for cat, first, count, rows in seen.values()
    ]
    warnings.warn(
        f"The executors of {FUNC} warned ({len(lines)} distinct warnings, each given once with "
        "the first shard's text):\n" + "\n".join(lines),
        UserWarning,
        stacklevel=3,
    )
