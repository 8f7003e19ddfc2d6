"""What a profile asks of ranked input before the engine runs: lists read as the library reads
them.

Libraries that take recommendation lists as given (pyspark's ``RankingMetrics``, Microsoft
Recommenders, LensKit, RecTools) count an item at every copy in a list, and compute a k past the
lists or past the catalogue (a shorter list is a short list: its precision still divided by k,
or by its length, as the library does). A profile says so in its entry of
:data:`~.profiles.PROFILES`, and ``evaluate(ranked=..., profile=...)`` then reads the lists the
same way, or refuses by name:

* ``"repeats": "refuse"``: an item repeated in a user's list is refused, naming the profile
  (the engine counts each item once, at its best rank; the library counts every copy: a hit at
  each, a recall above 1);
* ``"past_lists": "compute"``: a k past the lists' length or the catalogue is computed, the lists
  padded to k and k + 1 items added to the catalogue that no list, train or test entry holds
  (they change none of the profile's metrics and leave every user a pool larger than k, so no
  @k value is NaN there), when the metrics are the profile's own (metrics that count the
  catalogue, such as coverage, keep k as evaluate() takes it);
* ``"train_below_level": "candidates"``: train entries below the relevance level leave the
  train matrix, their items joining the user's pool as negatives (Cornac excludes only the
  train positives from its candidates);
* the ``spark`` profile's ``ap`` (meanAveragePrecision, which reads each whole list, Spark 3.5
  and 4.x ``RankingMetrics.scala``) at a k shorter than the lists is refused, naming the lists'
  length (at k >= the lists' length, AP@k is the whole list's AP, Spark's number).

:func:`for_profile` applies them, once: ``compute()`` on a local run, the Dask driver
(:func:`recoeval_tracking.distributed.evaluate_on_dask`) and the Spark driver
(:func:`recoeval_tracking.spark.evaluate_spark`) before the users are cut into shards, whose
lists (:class:`ProfiledLists`) are then read as they are. The Spark driver holds no list before
its tasks run: it grows the catalogue (:func:`pool_items`) and pads the lists to k before they
run, and makes the refusals from the counts they return (:func:`refuse_repeated`,
:func:`refuse_ap_past_k`), with the same messages.
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

__all__ = [
    "ProfiledLists",
    "refuse_repeats",
    "refuse_repeated",
    "refuse_ap_past_k",
    "pool_items",
    "for_profile",
    "lists_as_given",
    "train_below_level",
]

#: The profile whose ``ap`` is meanAveragePrecision (the whole list).
SPARK = "spark"


def _rule(opts: Any, key: str) -> Any:
    return PROFILES.get(opts.profile, {}).get(key) if isinstance(opts.profile, str) else None


@dataclasses.dataclass
class ProfiledLists(RankedLists):
    """Ranked lists the profile's list rules were applied to (:func:`for_profile`): padded to
    k, their catalogue grown, their refusals made. A sharded run (Dask, Spark) applies the rules
    once, to every user, on its driver before it cuts the users into shards; each shard's
    ``compute()`` then reads its part of the lists as they are (the rules are not applied
    again, per shard, and a refusal is raised on the driver, not in a task)."""


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
    """Under a profile whose library counts every copy of a listed item (``"repeats":
    "refuse"``: spark, LensKit, Microsoft Recommenders, RecTools), ranked lists that repeat an
    item are refused by name (:func:`refuse_repeated`): the engine counts one copy, at its
    best rank. Lists the rules were already applied to (:class:`ProfiledLists`) pass."""
    if ranked is None or isinstance(ranked, ProfiledLists) or _rule(opts, "repeats") != "refuse":
        return
    refuse_repeated(_repeats(ranked), opts, func)


def refuse_repeated(n: int, opts: Any, func: str) -> None:
    """The refusal of ``n`` repeated (user, item) list entries under a profile whose library
    counts every copy (nothing when ``n`` is 0 or the profile keeps one copy): the one
    message of ``evaluate()``, the Dask path and ``evaluate_spark``, which counts the copies
    in its tasks."""
    if not n or _rule(opts, "repeats") != "refuse":
        return
    raise param_error(
        "ranked",
        func,
        f"lists without a repeated item under profile={opts.profile!r}",
        f"{n} repeated (user, item) entries",
        f"The library of the {opts.profile!r} profile counts every copy (a hit at each: "
        "a recall can pass 1), which the profile does not reproduce. Drop the copies "
        "first, keeping the best rank (pandas: "
        "df.sort_values('rank').drop_duplicates(['user', 'item']); Spark: the row of least "
        "rank of each (user, item), e.g. by a window's row_number).",
        got_is_text=True,
    )


def refuse_ap_past_k(width: int, opts: Any, func: str) -> None:
    """The ``spark`` profile's ``ap`` (meanAveragePrecision, which reads each whole list) at
    a k shorter than the lists' ``width`` (the longest list), refused by name."""
    names = {s.name for s in resolve_metrics(opts.metrics, func)}
    if opts.profile != SPARK or "ap" not in names or width <= int(opts.k):
        return
    raise param_error(
        "k",
        func,
        f"at least the lists' length ({width}) for meanAveragePrecision (ap) under profile='spark'",
        int(opts.k),
        "Spark's meanAveragePrecision reads each whole list, ap at k stops at k. Pass "
        f"k={width} (every @k metric is then at {width}), leave 'ap' out "
        "(metrics=['p', 'r', 'tap', 'ndcg_bin', 'ndcg_spark']), or cut the lists to k "
        "first, as Spark would need to give the same number.",
    )


def pool_items(opts: Any, func: str) -> int:
    """The items a profile that computes a k past the lists (``"past_lists": "compute"``)
    adds to the catalogue, held by no list, train or test entry: k + 1, so that every user's
    pool exceeds k; 0 without the rule or with metrics outside the profile's own (those that
    count the catalogue, such as coverage, keep k as evaluate() takes it)."""
    if _rule(opts, "past_lists") != "compute":
        return 0
    names = {s.name for s in resolve_metrics(opts.metrics, func)}
    return 0 if names - set(PROFILES[opts.profile]["metrics"]) else int(opts.k) + 1


def for_profile(prep: Any, source: Any, opts: Any, func: str) -> tuple[Any, Any]:
    """``(prep, source)`` as the profile's library reads them: :func:`train_below_level`, then
    :func:`lists_as_given`. The one place where the profile's rules meet the data: ``compute()``
    calls it on a local run, the Dask and Spark drivers before the users are cut into shards."""
    return lists_as_given(train_below_level(prep, opts), source, opts, func)


def train_below_level(prep: Any, opts: Any) -> Any:
    """Under a profile whose library keeps train entries below the relevance level among the
    candidates (``"train_below_level": "candidates"``: Cornac excludes only a user's train
    *positives*, ``rating >= rating_threshold``), those entries leave the train matrix, so the
    items they name are in the user's pool (negatives). Without a level, or without train,
    nothing changes."""
    level = opts.relevance_level
    if _rule(opts, "train_below_level") != "candidates" or level is None or prep.train is None:
        return prep
    coo = prep.train.tocoo()
    keep = coo.data >= level
    if keep.all():
        return prep
    train = sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=prep.train.shape)
    train.sort_indices()
    return dataclasses.replace(prep, train=train)


def lists_as_given(prep: Any, source: Any, opts: Any, func: str) -> tuple[Any, Any]:
    """``(prep, source)`` for ranked lists under a profile that reads them as given
    (``"past_lists": "compute"``): the spark profile's ``ap`` at a k shorter than the lists
    refused by name (:func:`refuse_ap_past_k`); the lists padded to k and the catalogue grown
    by :func:`pool_items` items when the metrics are the profile's own. Lists come back as
    :class:`ProfiledLists` (those already so pass unchanged); anything else passes unchanged."""
    if not isinstance(source, RankedLists) or isinstance(source, ProfiledLists):
        return prep, source
    done = ProfiledLists(**{f.name: getattr(source, f.name) for f in dataclasses.fields(source)})
    if _rule(opts, "past_lists") != "compute":
        return prep, done
    refuse_ap_past_k(int(source.k), opts, func)
    extra = pool_items(opts, func)
    if not extra:
        return prep, done
    k = int(opts.k)
    if done.k < k:
        pad = np.full((done.items.shape[0], k - done.k), -1, dtype=np.int64)
        done = dataclasses.replace(done, items=np.hstack([done.items, pad]))
    return _grown(prep, extra), done


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
