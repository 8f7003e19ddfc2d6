"""Merging the shards of a distributed evaluation into one :class:`ShardedResults`.

Nothing is averaged over shards: means and 95% intervals come from the merged
:class:`~recoeval_tracking.distributed.shards.Moments` (counts, sums, squared deviations), the
catalogue metrics (coverage, gini, entropy, personalisation, aggregated diversity) from the
summed per-item list counts, the ratio aggregates (``gauc``, ``p_pooled``) from summed
numerators and denominators. The catalogue metrics are then bit-identical to a local run (the
counts are integers); means, intervals and ratios equal it up to the order of a float sum.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..metrics.beyond import ratio
from ..metrics.evaluate import Plan
from ..metrics.registry import column_name
from ..metrics.results import Results, ci95_half_width, curve_ci_table
from .shards import Moments, ShardOutput

__all__ = ["ShardedResults", "merge_shards"]


def _ci(m: Moments) -> tuple[float, float, float, int]:
    n = int(m.n)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(m.sum) / n
    if n < 2:
        return mean, math.nan, math.nan, n
    half = ci95_half_width(math.sqrt(max(float(m.m2), 0.0) / (n - 1)), n)
    return mean, mean - half, mean + half, n


@dataclass
class ShardedResults(Results):
    """The :class:`~recoeval_tracking.metrics.results.Results` of a distributed evaluation.

    Means, intervals, curves and NaN counts come from the merged statistics of the shards, so
    they are available when the per-user table stayed on the workers' disks:
    ``per_user_dataset`` is then the folder of its Parquet parts (one per shard, in row order)
    and ``per_user`` holds only its columns; ``pandas.read_parquet(per_user_dataset)`` or
    :func:`recoeval_tracking.jobdir.read_job_dir` reads it. The top-K lists (``topk``) are
    sent back only when ``return_topk`` is asked (the catalogue metrics need only their counts).

    Attributes (beyond those of Results)
    ------------------------------------
    moments, curve_moments : dict of str to Moments
    reason_counts : dict of str to int
        Users per NaN reason (``""``: evaluated).
    per_user_dataset : Path or None
    n_shards : int
    workers : list of int
        Process ids of the workers that ran the shards (in shard order).
    """

    moments: dict[str, Moments] = field(default_factory=dict)
    curve_moments: dict[str, Moments] = field(default_factory=dict)
    reason_counts: dict[str, int] = field(default_factory=dict)
    per_user_dataset: Path | None = None
    n_shards: int = 0
    workers: list[int] = field(default_factory=list)

    @property
    def means(self) -> dict[str, float]:
        out = {c: _ci(self.moments[c])[0] for c in self.metric_columns}
        out.update(self.aggregates)
        return out

    def mean_ci(self) -> pd.DataFrame:
        rows = []
        for c in self.metric_columns:
            mean, low, high, n = _ci(self.moments[c])
            rows.append({"metric": c, "mean": mean, "ci95_low": low, "ci95_high": high, "n": n})
        return pd.DataFrame(
            rows, columns=["metric", "mean", "ci95_low", "ci95_high", "n"]
        ).set_index("metric")

    @property
    def curves(self) -> pd.DataFrame:
        data: dict[str, Any] = {"k": np.arange(1, self.k + 1)}
        for name, m in self.curve_moments.items():
            data[name] = np.where(m.n > 0, m.sum / np.maximum(m.n, 1), np.nan)
        return pd.DataFrame(data)

    def curves_ci(self) -> pd.DataFrame:
        return curve_ci_table(
            {
                name: [_ci(Moments(m.n[j], m.sum[j], m.m2[j])) for j in range(self.k)]
                for name, m in self.curve_moments.items()
            }
        )

    @property
    def nan_counts(self) -> dict[str, int]:
        return {
            k: v
            for k, v in sorted(self.reason_counts.items(), key=lambda kv: -kv[1])
            if k != "" and v > 0
        }

    @property
    def n_users_evaluated(self) -> int:
        return int(self.reason_counts.get("", 0))


def _merged(items: Sequence[dict[str, Moments]]) -> dict[str, Moments]:
    out: dict[str, Moments] = {}
    for d in items:
        for name, m in d.items():
            out[name] = out[name].merge(m) if name in out else m
    return out


def _aggregates(outs: Sequence[ShardOutput], plan: Plan, n_items: int) -> dict[str, float]:
    """Each aggregate of the plan from the summed statistics of the shards."""
    k = plan.options.k
    result: dict[str, float] = {}
    for s in plan.specs:
        if s.kind != "aggregate":
            continue
        col = column_name(s, k)
        if all(col in o.list_counts for o in outs):
            c = np.zeros(n_items, dtype=np.int64)
            for o in outs:
                items, counts = o.list_counts[col][0]
                c[items] += counts
            users = sum(o.list_counts[col][1] for o in outs)
            result[col] = s.compute.from_counts(c, users, outs[0].list_counts[col][2], n_items)
        elif all(col in o.parts for o in outs):
            parts = tuple(
                math.fsum(o.parts[col][i] for o in outs) for i in range(len(outs[0].parts[col]))
            )
            combine = getattr(s.compute, "from_parts", None)
            result[col] = combine(*parts) if combine is not None else ratio(parts)
    return result


def merge_shards(
    outs: Sequence[ShardOutput],
    plan: Plan,
    n_items: int,
    seconds: float,
    per_user_dataset: Path | None,
) -> ShardedResults:
    """One :class:`ShardedResults` from the outputs of every shard (any order)."""
    outs = sorted(outs, key=lambda o: o.index)
    first = outs[0]
    per_user = (
        pd.concat([o.per_user for o in outs], ignore_index=True)
        if per_user_dataset is None
        else first.per_user
    )
    curves = {name: np.concatenate([o.curves[name] for o in outs]) for name in first.curves}
    topk = np.concatenate([o.topk for o in outs]) if first.topk is not None else None
    reasons: Counter[str] = Counter()
    for o in outs:
        reasons.update(o.reasons)
    return ShardedResults(
        per_user=per_user,
        k=plan.options.k,
        curves_per_user=curves,
        definitions=first.definitions,
        fingerprint=first.fingerprint,
        topk_only=first.topk_only,
        timings={"eval": seconds, "eval_shards": float(sum(o.seconds for o in outs))},
        topk=topk,
        aggregates=_aggregates(outs, plan, n_items),
        moments=_merged([o.moments for o in outs]),
        curve_moments=_merged([o.curve_moments for o in outs]),
        reason_counts=dict(reasons),
        per_user_dataset=per_user_dataset,
        n_shards=len(outs),
        workers=[o.pid for o in outs],
    )
