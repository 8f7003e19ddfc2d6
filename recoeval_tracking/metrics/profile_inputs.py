"""What a profile asks of ranked input before the engine runs: the ``spark`` profile on lists.

pyspark's ``RankingMetrics`` reads each list as it is given (``RankingMetrics.scala``, Spark 3.5
and 4.x): ``meanAveragePrecision`` reads the whole list whatever k, a k past the lists or past
the catalogue is computed (a shorter list is still divided by k in ``precisionAt``), and a
repeated item counts at every copy (a recall can pass 1). ``evaluate(..., profile="spark")`` on
ranked lists does the same where the engine can, and refuses by name where it cannot:

* ``ap`` (meanAveragePrecision) at a k shorter than the lists: refused, naming the lists'
  length (at k >= the lists' length, AP@k is the whole list's AP, Spark's number);
* a k past the lists' length or the catalogue: computed, the lists padded to k and k + 1 items
  added to the catalogue that no list, train or test entry holds (they change none of the
  profile's metrics and leave every user a pool larger than k, so no @k value is NaN there);
* an item repeated in a user's list: refused (each item counts once here, at its best rank).

:func:`recoeval_tracking.spark.evaluate_spark` applies the same rules to Spark frames.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import param_error
from ..scores import RankedLists
from .profiles import PROFILES
from .ranked_input import dedupe_lists
from .registry import resolve_metrics

__all__ = ["refuse_repeats", "spark_lists"]

#: The profile whose ranked-input rules this module applies.
SPARK = "spark"


def _repeats(ranked: Any) -> int:
    """How many (user, item) pairs of ``ranked`` repeat an earlier one (0 when not lists)."""
    if "pandas" in sys.modules and isinstance(ranked, sys.modules["pandas"].DataFrame):
        cols = [c for c in ("user", "item") if c in ranked.columns]
        return int(ranked.duplicated(cols).sum()) if len(cols) == 2 else 0
    items = ranked.items if isinstance(ranked, RankedLists) else ranked
    if isinstance(items, np.ndarray) and items.ndim == 2 and items.dtype.kind in "iu":
        return dedupe_lists(items)[1]
    return 0


def refuse_repeats(ranked: Any, opts: Any, func: str) -> None:
    """Under ``profile="spark"``, ranked lists that repeat an item are refused: Spark counts
    every copy (a hit at each, a recall above 1), the engine one copy at its best rank."""
    if ranked is None or opts.profile != SPARK:
        return
    n = _repeats(ranked)
    if n:
        raise param_error(
            "ranked",
            func,
            "lists without a repeated item under profile='spark'",
            f"{n} repeated (user, item) entries",
            "Spark's RankingMetrics counts every copy (a hit at each: a recall can pass 1), "
            "which this profile does not reproduce. Drop the copies first, keeping the best "
            "rank (for a DataFrame: df.sort_values('rank').drop_duplicates(['user', 'item'])).",
            got_is_text=True,
        )


def spark_lists(prep: Any, source: Any, opts: Any, func: str) -> tuple[Any, Any]:
    """``(prep, source)`` for ranked lists under ``profile="spark"``, as ``RankingMetrics``
    reads them: ``ap`` at a k shorter than the lists refused by name; the lists padded to k and
    the catalogue grown by k + 1 items when the metrics are the profile's own (metrics that
    count the catalogue, such as coverage, keep k as evaluate() takes it). Anything else passes
    unchanged."""
    if opts.profile != SPARK or not isinstance(source, RankedLists):
        return prep, source
    k, width = int(opts.k), int(source.k)
    names = {s.name for s in resolve_metrics(opts.metrics, func)}
    if "ap" in names and width > k:
        raise param_error(
            "k",
            func,
            f"at least the lists' length ({width}) for meanAveragePrecision (ap) under "
            "profile='spark'",
            k,
            "Spark's meanAveragePrecision reads each whole list, ap at k stops at k. Pass "
            f"k={width} (every @k metric is then at {width}), leave 'ap' out "
            "(metrics=['p', 'r', 'tap', 'ndcg_bin', 'ndcg_spark']), or cut the lists to k "
            "first, as Spark would need to give the same number.",
        )
    if names - set(PROFILES[SPARK]["metrics"]):
        return prep, source
    if width < k:
        pad = np.full((source.items.shape[0], k - width), -1, dtype=np.int64)
        source = dataclasses.replace(source, items=np.hstack([source.items, pad]))
    extra = k + 1
    return _grown(prep, extra), source


def _grown(prep: Any, extra: int) -> Any:
    """``prep`` with ``extra`` more items at the end of the catalogue, held by no entry."""
    m, n = prep.test.shape

    def widen(X: sp.csr_array | None) -> sp.csr_array | None:
        if X is None:
            return None
        return sp.csr_array((X.data, X.indices, X.indptr), shape=(m, n + extra))

    ids = prep.item_ids
    if ids is not None:  # ids no item of the data has: one past the largest, or labelled
        ids = np.concatenate([ids, _new_ids(ids, extra)])
    return dataclasses.replace(
        prep, train=widen(prep.train), test=widen(prep.test), n_items=n + extra, item_ids=ids
    )


def _new_ids(ids: np.ndarray, extra: int) -> np.ndarray:
    if ids.dtype.kind in "iuf" and ids.size:
        return np.arange(1, extra + 1, dtype=ids.dtype) + ids.max()
    return np.array([f"__spark_pad_{j}" for j in range(extra)], dtype=object)
