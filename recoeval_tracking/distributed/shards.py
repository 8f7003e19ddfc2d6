"""Shards of users and what one Dask task does with one: run the engine on its rows and
return the per-user table (or write it as one Parquet part) with its sufficient statistics.

A shard is a contiguous range of rows ``[lo, hi)`` of the test matrix, chosen so that every
shard holds about the same number of test entries (the engine's work grows with them, not with
the number of users). Item-side inputs (item factors, biases, item features, the train
popularity of the items, a scorer) are the same for every shard: they are scattered once to every
worker and shared. User-side inputs (the shard's train and test rows, its user factors, its rows
of dense scores or ranked lists) travel inside the task, so that a task lost with its worker is
run again elsewhere from the scheduler's copy.

Identical values: the shard is evaluated by :func:`recoeval_tracking.metrics.evaluate.compute`
and :func:`~recoeval_tracking.metrics.evaluate.shape`, the local path, with ``user_base=lo``:
the tie keys of user ``lo + r`` are drawn for the global row ``lo + r`` (they depend only on the
seed, the global user and the item), and the list metrics read the popularity of the whole train
matrix. So every per-user value is bit-identical to a local run, whatever the shards. The engine
backend is the options' (``backend="cuda"``: each worker evaluates its shards on its GPU, with
the same tie keys).
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..engine.codes import Reason
from ..metrics.beyond import ListContext, list_counts
from ..metrics.evaluate import Plan, compute, shape
from ..metrics.registry import METRICS, column_name
from ..options import EvalOptions
from ..scores import DenseScores, FactorScores, RankedLists, ScoreSource

__all__ = [
    "shard_bounds",
    "ShardInput",
    "ShardOutput",
    "Moments",
    "split_source",
    "run_shard",
    "part_name",
]


def shard_bounds(n_test: np.ndarray, n_shards: int) -> np.ndarray:
    """Row bounds ``b`` of at most ``n_shards`` contiguous shards ``[b[j], b[j+1])`` holding
    about ``sum(n_test) / n_shards`` test entries each (empty shards dropped).

    Shard ``j`` ends at the first row where the running count of test entries reaches
    ``j / n_shards`` of the total; users without a test entry cost nothing and go with the rows
    around them.
    """
    m = int(n_test.shape[0])
    cum = np.concatenate([[0], np.cumsum(n_test, dtype=np.int64)])
    targets = cum[-1] * np.arange(1, n_shards, dtype=np.float64) / n_shards
    cuts = np.searchsorted(cum, targets, side="left")
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, m), [m]])).astype(np.int64)
    return bounds if bounds.shape[0] > 1 else np.array([0, m], dtype=np.int64)


@dataclass
class Moments:
    """Sufficient statistics of the mean and 95% interval of one metric over a set of users:
    the number of defined values ``n``, their sum and the sum of squared deviations from their
    own mean ``m2``. Those of disjoint sets merge exactly (Chan, Golub & LeVeque 1983):
    ``n = n_a + n_b``, ``sum = sum_a + sum_b``, ``m2 = m2_a + m2_b + d^2 n_a n_b / n`` with
    ``d = mean_b - mean_a``. Arrays hold one entry per cutoff for curves."""

    n: np.ndarray
    sum: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> Moments:
        """Moments of ``values`` (users along axis 0; NaN values left out)."""
        v = np.asarray(values, dtype=np.float64)
        ok = ~np.isnan(v)
        n = ok.sum(axis=0).astype(np.int64)
        total = np.where(ok, v, 0.0).sum(axis=0)
        mean = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
        m2 = np.where(ok, (v - mean) ** 2, 0.0).sum(axis=0)
        return cls(n, total, m2)

    def merge(self, other: Moments) -> Moments:
        n = self.n + other.n
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(other.n > 0, other.sum / np.maximum(other.n, 1), 0.0) - np.where(
                self.n > 0, self.sum / np.maximum(self.n, 1), 0.0
            )
            extra = np.where(n > 0, d * d * self.n * other.n / np.maximum(n, 1), 0.0)
        return Moments(n, self.sum + other.sum, self.m2 + other.m2 + extra)


@dataclass
class ShardInput:
    """The user side of one shard: its rows ``[lo, hi)`` of train and test, their ids, and its
    part of the score source (user factors, rows of scores or lists; None when the shared
    source scores any user)."""

    index: int
    lo: int
    hi: int
    train: sp.csr_array | None
    test: sp.csr_array
    user_ids: np.ndarray
    source_part: Any = None


@dataclass
class ShardOutput:
    """What a shard sends back: the per-user table (its schema only when written as a Parquet
    part), per-user curves (when gathered), top-K lists (when asked), and the statistics the
    merge needs."""

    index: int
    per_user: pd.DataFrame
    curves: dict[str, np.ndarray]
    topk: np.ndarray | None
    moments: dict[str, Moments]
    curve_moments: dict[str, Moments]
    reasons: dict[str, int]
    list_counts: dict[str, tuple[tuple[np.ndarray, np.ndarray], int, int]] = field(
        default_factory=dict
    )  # ((listed items, their counts), users with a list, N)
    parts: dict[str, tuple[float, float]] = field(default_factory=dict)
    definitions: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""
    topk_only: bool = False
    seconds: float = 0.0
    pid: int = 0


class _Shifted(ScoreSource):
    """A shared score source seen from a shard: row ``r`` is global row ``lo + r``."""

    def __init__(self, base: ScoreSource, lo: int):
        self.base, self.lo = base, int(lo)
        self.n_items, self.dtype, self.n_users = base.n_items, base.dtype, None
        if callable(getattr(base, "scorer", None)):
            # the scorer itself, shifted: the cuda backend takes its GPU arrays as they are
            self.scorer = lambda users: base.scorer(users + self.lo)

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return self.base.block(users + self.lo, out)

    def describe(self) -> dict[str, Any]:
        return self.base.describe()


def split_source(source: Any) -> tuple[Any, Any]:
    """``(shared, slicer)``: the item side of ``source``, sent once to every worker, and a
    function ``slicer(lo, hi)`` giving the user side of a shard (None when there is none)."""
    if isinstance(source, FactorScores):
        shared = copy.copy(source)
        shared.A = source.A[:0]
        return shared, lambda lo, hi: source.A[lo:hi]
    if isinstance(source, DenseScores):
        return None, lambda lo, hi: _with(source, scores=source.scores[lo:hi], n_users=hi - lo)
    if isinstance(source, RankedLists):
        return None, lambda lo, hi: _with(
            source,
            items=source.items[lo:hi],
            n_users=hi - lo,
            listed=None if source.listed is None else source.listed[lo:hi],
        )
    return source, lambda lo, hi: None


def _with(obj: Any, **attrs: Any) -> Any:
    new = copy.copy(obj)
    for name, value in attrs.items():
        setattr(new, name, value)
    return new


def _shard_source(shard: ShardInput, shared: Any) -> tuple[str, Any]:
    """The keyword (``scores`` or ``ranked``) and the score source of the shard's rows."""
    part = shard.source_part
    if isinstance(shared, FactorScores):
        return "scores", _with(shared, A=part, n_users=part.shape[0])
    if isinstance(part, RankedLists):
        return "ranked", part
    if part is not None:
        return "scores", part
    return "scores", _Shifted(shared, shard.lo)


def part_name(index: int) -> str:
    """File name of shard ``index``'s part of a partitioned per-user table (sorts in order)."""
    return f"part-{index:06d}.parquet"


def _write_part(frame: pd.DataFrame, folder: str, index: int) -> None:
    """Write the part atomically (a temporary name, then a rename): a task run twice (its first
    worker lost) replaces the part with the same content."""
    path = Path(folder) / part_name(index)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.recoeval-tmp")
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def run_shard(
    shard: ShardInput,
    options: EvalOptions,
    shared: dict[str, Any],
    per_user_dir: str | None,
    adjust: Callable[[Any], None] | None = None,
) -> ShardOutput:
    """Evaluate one shard with the local engine (one thread: a worker runs one task per
    thread) and return its :class:`ShardOutput`. ``adjust(raw)``, when given, changes the
    engine's raw result in place before it is shaped (the Spark profile's users without
    ground truth). Lists the driver prepared under the profile's rules
    (:class:`~recoeval_tracking.metrics.profile_inputs.ProfiledLists`) are read as they are."""
    kind, source = _shard_source(shard, shared["source"])
    opts = replace(options, nthreads=1)
    raw = compute(
        shard.train,
        shard.test,
        opts,
        user_ids=shard.user_ids,
        user_base=shard.lo,
        **{kind: source},
    )
    if adjust is not None:
        adjust(raw)
    res = shape(raw, item_features=shared["item_features"], popularity=shared["popularity"])
    per_user = res.per_user
    out = ShardOutput(
        index=shard.index,
        per_user=per_user,
        curves=res.curves_per_user,
        topk=res.topk if options.return_topk else None,
        moments={c: Moments.of(per_user[c].to_numpy()) for c in res.metric_columns},
        curve_moments={c: Moments.of(v) for c, v in res.curves_per_user.items()},
        reasons=res.nan_counts | {"": res.n_users_evaluated},
        definitions=res.definitions,
        fingerprint=res.fingerprint,
        topk_only=res.topk_only,
        seconds=raw.seconds,
        pid=os.getpid(),
    )
    _aggregate_stats(out, raw, res.per_user, raw.plan, shared)
    if per_user_dir is not None:
        _write_part(per_user, per_user_dir, shard.index)
        out.per_user = per_user.iloc[:0]
        out.curves = {c: v[:0] for c, v in out.curves.items()}
    return out


def _aggregate_stats(
    out: ShardOutput, raw: Any, per_user: pd.DataFrame, plan: Plan, shared: dict[str, Any]
) -> None:
    """The additive statistics of each aggregate metric: per-item list counts for the
    catalogue metrics, ``(numerator, denominator)`` for the ratio ones."""
    specs = [s for s in plan.specs if s.kind == "aggregate"]
    if not specs:
        return
    ok = raw.reason == Reason.OK
    n = raw.prep.n_items
    k = plan.options.k
    counts = list_counts(raw.topk[ok], n) if raw.topk.shape[0] else None
    opts = plan.options
    ctx = ListContext(
        topk=raw.topk,
        train=raw.prep.train,
        test=raw.prep.test,
        n_items=n,
        k=k,
        ok=ok,
        n_test=raw.n_test,
        popularity=shared["popularity"],
        columns={
            **{c: per_user[c].to_numpy() for c in per_user.columns},
            **raw.aux,
        },  # raw.aux: gauc's ROC-AUC under average ties
        rbp_persistence=opts.rbp_persistence,
        tail_ratio=opts.tail_ratio,
        short_head_share=opts.short_head_share,
        judged=raw.judged,
    )
    for s in specs:
        col = column_name(s, k)
        if getattr(s.compute, "from_counts", None) is not None and counts is not None:
            c, users, N = counts
            listed = np.flatnonzero(c)  # sparse: a shard lists few of a large catalogue
            out.list_counts[col] = ((listed, c[listed]), users, N)
        elif getattr(s.compute, "parts", None) is not None and all(
            column_name(METRICS[name], k) in per_user for name in s.needs
        ):
            out.parts[col] = s.compute.parts(ctx)
