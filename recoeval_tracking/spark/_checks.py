"""The checks of :func:`recoeval_tracking.spark.evaluate_spark`'s frames, each raised or warned on
the driver: id types that agree across the frames and value columns that are numbers (from the
schemas), no null ids, ranks or values and a test frame with rows (from the first pass's
per-item counts), factors of one length (a Spark aggregate); duplicate (user, item) rows, two
items at one rank, the lists' width and the test users without a list or without factors
(counted by the tasks, which see every row of their users, and merged here); then the warnings
the executors raised, gathered into one driver-side warning that names the users' own ids.

None collects the data: a check reads one small row, or the shards' counts.
"""

from __future__ import annotations

import ast
import heapq
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import param_error
from ._frames import spark_modules

__all__ = [
    "Part",
    "check_counts",
    "check_types",
    "check_counts",
    "merge_checks",
    "warn_duplicates",
    "refuse_tied_ranks",
    "check_factors",
    "warn_unlisted",
    "gather",
]

FUNC = "evaluate_spark"


@dataclass
class Part:
    """One input frame as the user named it: the argument, the renamed frame (columns
    ``user``, ``item``, ``value`` or ``features``), the user's name of each column, their
    Spark types and the kind of its rows in the input frame."""

    arg: str
    frame: Any
    names: dict[str, str]
    raw_types: dict[str, Any]
    kind: int = -1


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


def check_counts(rows: dict[int, int], nulls: dict[int, dict[str, int]], parts: list[Part]) -> None:
    """An empty test frame refused, then nulls refused, frame by frame (user, item, value):
    ``rows[kind]`` the rows of each frame, ``nulls[kind][column]`` those with a null."""
    for part in parts:
        k = part.kind
        total = rows.get(k, 0)
        if total == 0 and part.arg == "test":
            raise param_error(
                "test",
                FUNC,
                "a DataFrame with at least one row (the users to evaluate)",
                "an empty DataFrame",
                "Check the filter or split that made it: every mean would be NaN.",
                got_is_text=True,
            )
        these = nulls.get(k, {})
        for c in ("user", "item", "value"):
            if c not in part.names or not these.get(c):
                continue
            name = part.names[c]
            raise param_error(
                part.arg,
                FUNC,
                f"a frame without nulls in {name!r}",
                f"{these[c]} of {total} rows with a null {name!r}",
                "A row without a user, an item or a "
                + ("rank/score" if part.arg == "ranked" else "value")
                + f" cannot be placed. Drop or fill them first: "
                f"df.dropna(subset=[{name!r}]) or df.fillna(...).",
                got_is_text=True,
            )


def merge_checks(checks: list[Any]) -> dict[str, Any]:
    """The shards' input counts (:class:`~recoeval_tracking.spark._shard.ShardChecks`) over
    every user: duplicates per kind (extra rows, pairs, the smallest pair), (user, rank) pairs
    with several items (number, the smallest), the longest list, and the test users without a
    list or factors (number, test users, the five smallest ids); the rows per frame kind, the
    rows left out for a null; the test rows naming items outside the catalogue."""
    rows: dict[int, int] = {}
    nulls = unknown = 0
    dup: dict[int, tuple[int, int, Any]] = {}
    tied, first_tied, width = 0, None, 0
    unlisted, tested = 0, 0
    ids: list[Any] = []
    for c in checks:
        unknown += c.unknown
        nulls += c.nulls
        for kind, count in c.rows.items():
            rows[kind] = rows.get(kind, 0) + count
        for kind, (extra, pairs, first) in c.duplicates.items():
            e0, p0, f0 = dup.get(kind, (0, 0, None))
            dup[kind] = (e0 + extra, p0 + pairs, _least(f0, first))
        tied += c.tied_ranks[0]
        first_tied = _least(first_tied, c.tied_ranks[1])
        width = max(width, c.width)
        unlisted += c.unlisted[0]
        tested += c.unlisted[1]
        ids = heapq.nsmallest(5, ids + list(c.unlisted[2]))
    return {
        "rows": rows,
        "nulls": nulls,
        "unknown": unknown,
        "duplicates": dup,
        "tied_ranks": (tied, first_tied),
        "width": width,
        "unlisted": (unlisted, tested, ids),
    }


def _least(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else min(a, b)


def warn_duplicates(part: Part, extra: int, pairs: int, first: Any) -> None:
    """Duplicate (user, item) rows of a test or train frame: a warning (each pair counts once,
    with the sum of its values)."""
    if not extra:
        return
    warnings.warn(
        f"The {part.arg!r} frame passed to {FUNC} has {extra} duplicate "
        f"({part.names['user']}, {part.names['item']}) rows over {pairs} pairs "
        f"(e.g. user {first[0]!r}, item {first[1]!r}); each pair counts once, "
        "with the sum of its values as its value (the rule of evaluate() on a sparse "
        "matrix: a repeated test item's NDCG gain adds up). Merge them first to choose "
        "another rule: df.groupBy(user, item).agg(F.max(rating)).",
        UserWarning,
        stacklevel=4,
    )


def refuse_tied_ranks(n: int, first: Any, rank_col: str) -> None:
    """Two different items at one rank of a user's list leave their order to chance: refused,
    as :func:`~recoeval_tracking.evaluate` refuses them in a frame of ranks (a tied score, by
    contrast, goes to the lower item id)."""
    if not n:
        return
    raise param_error(
        "ranked",
        FUNC,
        f"a frame whose {rank_col!r} column gives each item of a user's list its own rank",
        f"{n} (user, rank) pairs with several items (first: user "
        f"{first[0]!r} at rank {first[1]:g})",
        "Number each user's items 1, 2, 3... in the model's order, or give a score column "
        "instead (score_col=...; tied scores go to the lower item id).",
        got_is_text=True,
    )


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


def warn_unlisted(unlisted: tuple[int, int, list[Any]], lists: bool, user_col: str) -> int:
    """Warn, with their number and a few ids, about the test users without a list (they score
    0, averaged in, as ``missing_users='zero'`` does in :func:`~recoeval_tracking.evaluate`)
    or without factors (NaN, reason ``nan_score``). ``unlisted``: (their number, the test
    users, the five smallest ids). Returns their number."""
    n, total, ids = unlisted
    if not n:
        return 0
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
        f"First {user_col} ids: {list(ids)}.",
        UserWarning,
        stacklevel=4,
    )
    return n


#: Executor warnings the driver says itself (with totals and the users' ids; the profile's
#: metrics left out for lists: when it plans the run).
_SAID = ("have no list in the ranked input", "repeat an item", "takes the top-K metrics only")
_IDS = re.compile(r"user ids \[([^\]]*)\]")


def _ids(message: str) -> list[Any]:
    """The users' ids a message lists (``user ids [...]``: the tasks give the users' own)."""
    out: list[Any] = []
    for m in _IDS.finditer(message):
        try:
            out += list(ast.literal_eval(f"[{m.group(1)}]"))
        except (ValueError, SyntaxError):
            continue
    return out


def gather(outs: list[Any], attr: str) -> None:
    """One driver-side warning for the warnings the tasks raised: each distinct message once
    (numbers and ids aside), with how many shards raised it, its function named
    ``evaluate_spark`` and the first five users' ids over every shard."""
    seen: dict[str, tuple[str, str, int, list[Any]]] = {}
    for out in outs:
        for category, message in getattr(out, attr, []) or []:
            if any(s in message for s in _SAID):
                continue
            key = re.sub(r"\d+(\.\d+)?", "#", _IDS.sub("user ids []", message))
            cat, first, count, ids = seen.get(key, (category, message, 0, []))
            seen[key] = (cat, first, count + 1, ids + _ids(message))
    if not seen:
        return

    def named(message: str, ids: list[Any]) -> str:
        message = _IDS.sub(lambda m: "user ids " + repr(ids[:5]), message)
        return re.sub(r"\bevaluate\b(?!\()", FUNC, message)

    n = len(outs)
    lines = [
        f"[{cat}, {count} of {n} shards] {named(first, ids)}"
        + (" (the counts are those of the first shard)" if count > 1 else "")
        for cat, first, count, ids in seen.values()
    ]
    warnings.warn(
        f"The executors of {FUNC} warned ({len(lines)} distinct warnings, each given once with "
        "the first shard's text):\n" + "\n".join(lines),
        UserWarning,
        stacklevel=3,
    )
