"""The report's first screen: runs x headline metrics, each cell the mean with its 95% t interval
and the significance mark against the baseline, the best run of each metric in bold."""

from __future__ import annotations

import math

import pandas as pd

from ..metrics.registry import greater_is_better, spec_for_key
from .report import Report

__all__ = ["Best", "headline_metrics", "summary_table"]

#: Metrics shown first, in this order, when the report has them.
_HEADLINE = ("ndcg", "p", "r", "ap", "hit", "rr", "roc_auc", "coverage")
_MAX_METRICS = 5


class Best(str):
    """A cell rendered in bold (the best value of its column)."""


def headline_metrics(metrics: list[str], limit: int = _MAX_METRICS) -> list[str]:
    """Up to ``limit`` metrics, the usual headline ones first (NDCG, precision, recall...)."""
    def rank(m: str) -> int:
        spec = spec_for_key(m)
        name = spec.name if spec is not None else m
        return _HEADLINE.index(name) if name in _HEADLINE else len(_HEADLINE)
    return sorted(metrics, key=rank)[:limit]


def _cell(row: pd.Series, mark: str) -> str:
    if not math.isfinite(row["mean"]):
        return "–"
    ci = (f" [{row['t_low']:.4f}, {row['t_high']:.4f}]"
          if math.isfinite(row["t_low"]) and math.isfinite(row["t_high"]) else "")
    return f"{row['mean']:.4f}{ci}" + (f" {mark}" if mark else "")


def summary_table(report: Report) -> pd.DataFrame:
    """One row per run (the baseline first), one column per headline metric; runs a metric is
    not compared over show ``n/a``."""
    metrics = headline_metrics(report.metrics)
    s = report.summary.set_index(["run_id", "metric"])
    c = report.comparisons.set_index(["run_id", "metric"])
    table: dict[str, list[str]] = {"run": [
        r.name + (" (baseline)" if r.run_id == report.baseline else "") for r in report.runs]}
    for m in metrics:
        means = {r.run_id: s.loc[(r.run_id, m), "mean"] for r in report.runs
                 if (r.run_id, m) in s.index and math.isfinite(s.loc[(r.run_id, m), "mean"])}
        best = None
        if means:
            pick = max if greater_is_better(m) else min
            best = pick(means, key=means.get)
        col = []
        for r in report.runs:
            if (r.run_id, m) not in s.index:
                col.append("n/a")
                continue
            mark = str(c.loc[(r.run_id, m), "mark"]) if (r.run_id, m) in c.index else ""
            text = _cell(s.loc[(r.run_id, m)], mark)
            col.append(Best(text) if r.run_id == best and len(means) > 1 else text)
        table[m] = col
    return pd.DataFrame(table, dtype=object)  # object: keeps the Best marks
