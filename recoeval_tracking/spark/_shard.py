"""What one Spark task does with one shard of users (no pyspark here: plain pandas and numpy).

The driver cuts the users into contiguous shards of global rows ``[lo, hi)`` (the rows of the
sorted user ids) and hands every task one long pandas frame per shard: the shard's test and
train entries, its ranked-list entries or its user factors, one row each, tagged by ``kind``.
:func:`evaluate_group` rebuilds the shard's CSR matrices and score source from it and runs
:func:`recoeval_tracking.distributed.shards.run_shard`, the same shard evaluation as on Dask
(the local engine, ``user_base=lo``), so the per-user values are bit-identical to a local run
over the same sorted users and items. It returns the per-user rows (curves as list columns) and
one more row (``row = -1 - shard``) holding the shard's sufficient statistics, pickled.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..distributed.shards import ShardInput, run_shard
from ..metrics.protocol import apply_no_positive
from ..options import EvalOptions
from ..scores import RankedLists

__all__ = [
    "KIND_TEST",
    "KIND_TRAIN",
    "KIND_LIST",
    "KIND_FACTORS",
    "STATS",
    "WARNINGS",
    "ShardSpec",
    "evaluate_group",
    "evaluate_cogroup",
    "evaluate_partition",
    "empty_input",
]

KIND_TEST, KIND_TRAIN, KIND_LIST, KIND_FACTORS = 0, 1, 2, 3
#: Column of the statistics row (pickled ShardOutput without its per-user rows).
STATS = "_recoeval_stats"
#: Columns of the long input frame every task reads (and ``features`` where it holds factors:
#: a null array column beside millions of interactions costs 5x the rest of the transfer).
INPUT_COLUMNS = ("shard", "row", "kind", "item", "value")
#: Attribute of the statistics object holding the shard's warnings: ``[(category, message)]``
#: (the warnings raised on an executor never reach the driver by themselves).
WARNINGS = "spark_warnings"


@dataclass(frozen=True)
class ShardSpec:
    """What every task is given: the shard bounds over the global rows, the catalogue size,
    the resolved options, the ranked lists' width (0 without lists), the factor width and
    dtype (0 without factors), whether train was given, whether users with a list and no test
    entry score 0 (the ``spark`` profile), and the shared item side (a Spark broadcast or the
    dict itself)."""

    bounds: np.ndarray
    n_items: int
    options: EvalOptions
    list_width: int
    n_factors: int
    factor_dtype: str
    has_train: bool
    zero_no_truth: bool
    shared: Any

    def shared_value(self) -> dict[str, Any]:
        return getattr(self.shared, "value", self.shared)


def empty_input() -> pd.DataFrame:
    """A long input frame without rows (the driver's probe of the output columns)."""
    return pd.DataFrame(
        {
            "shard": np.zeros(0, np.int32),
            "row": np.zeros(0, np.int64),
            "kind": np.zeros(0, np.int32),
            "item": np.zeros(0, np.int32),
            "value": np.zeros(0, np.float64),
            "features": pd.Series([], dtype=object),
        }
    )


def _csr(rows: np.ndarray, items: np.ndarray, values: np.ndarray, m: int, n: int) -> sp.csr_array:
    out = sp.csr_array((values, (rows, items)), shape=(m, n), dtype=np.float64)
    out.sum_duplicates()
    return out


def _zero_rule(has_list: np.ndarray) -> Any:
    """The ``spark`` profile: a user with a list but no test entry scores 0 and counts."""

    def adjust(raw: Any) -> None:
        apply_no_positive(raw, has_list, "zero")

    return adjust


def evaluate_group(
    pdf: pd.DataFrame,
    spec: ShardSpec,
    shard: int | None = None,
    factors: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The per-user rows and the statistics row of one shard's long frame (the users' factor
    rows in ``factors``, or in ``pdf`` itself)."""
    j = int(pdf["shard"].iloc[0]) if shard is None else int(shard)
    lo, hi = int(spec.bounds[j]), int(spec.bounds[j + 1])
    m, n = hi - lo, spec.n_items
    kind = pdf["kind"].to_numpy()
    rows = pdf["row"].to_numpy(dtype=np.int64) - lo
    items = pdf["item"].to_numpy(dtype=np.int64)
    values = pdf["value"].to_numpy(dtype=np.float64)
    te, tr = kind == KIND_TEST, kind == KIND_TRAIN
    test = _csr(rows[te], items[te], values[te], m, n)
    train = _csr(rows[tr], items[tr], values[tr], m, n) if spec.has_train else None
    has_list = np.zeros(m, dtype=bool)
    part: Any = None
    if spec.list_width:
        li = kind == KIND_LIST
        r, it, key = rows[li], items[li], values[li]
        order = np.argsort(it, kind="stable")  # equal keys: lower item index first
        part = RankedLists.from_pairs(r[order], it[order], key[order], m, min_width=spec.list_width)
        has_list[r] = True
    elif spec.n_factors:
        src = pdf if factors is None else factors
        fa = src["kind"].to_numpy() == KIND_FACTORS
        frows = src["row"].to_numpy(dtype=np.int64)[fa] - lo
        part = np.full((m, spec.n_factors), np.nan, dtype=np.dtype(spec.factor_dtype))
        feats = src["features"].to_numpy()[fa]
        if feats.shape[0]:
            part[frows] = np.stack([np.asarray(f, dtype=part.dtype) for f in feats])
        has_list[frows] = True
    adjust = _zero_rule(has_list) if spec.zero_no_truth else None
    with warnings.catch_warnings(record=True) as caught:  # sent to the driver, not the log
        warnings.simplefilter("always")
        out = run_shard(
            ShardInput(j, lo, hi, train, test, np.arange(lo, hi, dtype=np.int64), part),
            spec.options,
            spec.shared_value(),
            None,
            adjust=adjust,
        )
    frame = out.per_user.rename(columns={"user_id": "row"})
    for name, curve in out.curves.items():
        frame[name] = list(curve)
    frame[STATS] = None
    stats = replace(
        out,
        per_user=out.per_user.iloc[:0],
        curves={c: v[:0] for c, v in out.curves.items()},
        topk=None,
    )
    # the warnings of the shard, for the driver to gather into one (WARNINGS attribute)
    setattr(stats, WARNINGS, [(w.category.__name__, str(w.message)) for w in caught])
    head: dict[str, list[Any]] = {c: [None] for c in frame.columns}
    head["row"] = [-1 - j]
    head[STATS] = [pickle.dumps(stats, protocol=pickle.HIGHEST_PROTOCOL)]
    return pd.concat([frame, pd.DataFrame(head)], ignore_index=True)


def evaluate_cogroup(pdf: pd.DataFrame, factors: pd.DataFrame, spec: ShardSpec) -> pd.DataFrame:
    """``cogroup(...).applyInPandas``: one shard's interactions and its users' factors."""
    j = int(pdf["shard"].iloc[0]) if len(pdf) else int(factors["shard"].iloc[0])
    return evaluate_group(pdf, spec, j, factors=factors)


def evaluate_partition(batches: Iterator[pd.DataFrame], spec: ShardSpec) -> Iterator[pd.DataFrame]:
    """``mapInPandas``: every shard of one partition (all its batches gathered first)."""
    chunks = list(batches)
    if not chunks:
        return
    pdf = pd.concat(chunks, ignore_index=True)
    for j, group in pdf.groupby("shard", sort=True):
        yield evaluate_group(group, spec, int(j))
