"""The report's first screen: runs x headline metrics, each cell the mean with its t interval (at
the report's confidence) and the significance mark against the baseline, the best run of each
metric in bold; then the catalogue-level metrics (coverage, Gini, entropy...), one value per run as logged."""

from __future__ import annotations

import math

import pandas as pd

from ...metrics.registry import greater_is_better, spec_for_key
from ..view import ReportView, baseline_ids

__all__ = ["Best", "headline_metrics", "summary_table", "catalogue_table"]

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
    ci = (
        f" [{row['t_low']:.4f}, {row['t_high']:.4f}]"
        if math.isfinite(row["t_low"]) and math.isfinite(row["t_high"])
        else ""
    )
    return f"{row['mean']:.4f}{ci}" + (f" {mark}" if mark else "")


def _run_labels(report: ReportView) -> list[str]:
    """Each run's name, every baseline marked (the report's own and a sweep's others), in
    report order."""
    marked = set(baseline_ids(report)) | {report.baseline}
    return [r.name + (" (baseline)" if r.run_id in marked else "") for r in report.runs]


def summary_table(report: ReportView) -> pd.DataFrame:
    """One row per run (the baseline first), one column per headline metric; runs a metric is
    not compared over show ``n/a``."""
    metrics = headline_metrics(report.metrics)
    s = report.summary.set_index(["run_id", "metric"])
    c = report.comparisons.set_index(["run_id", "metric"])
    table: dict[str, list[str]] = {"run": _run_labels(report)}
    for m in metrics:
        means = {
            r.run_id: s.loc[(r.run_id, m), "mean"]
            for r in report.runs
            if (r.run_id, m) in s.index and math.isfinite(s.loc[(r.run_id, m), "mean"])
        }
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


def _is_catalogue(key: str) -> bool:
    spec = spec_for_key(key)
    return spec is not None and spec.kind == "aggregate"


def catalogue_table(report: ReportView) -> pd.DataFrame:
    """One row per run, one column per catalogue-level metric any run logged (``coverage_at_10``,
    ``gini_at_10``, ``gauc``...: values over the whole run, without a per-user distribution, so
    without intervals or tests); the best of each column in bold. Empty when no run has one."""
    keys = list(dict.fromkeys(k for r in report.runs for k in r.metrics if _is_catalogue(k)))
    if not keys:
        return pd.DataFrame()
    table: dict[str, list[str]] = {"run": _run_labels(report)}
    for k in keys:
        values = [r.metrics.get(k) for r in report.runs]
        finite = [v for v in values if v is not None and math.isfinite(v)]
        best = (max if greater_is_better(k) else min)(finite) if len(finite) > 1 else None
        # a count (every value whole and some above 1, such as aggregated_diversity) without
        # decimals; a share with four, 1.0 included, so a column reads alike down its rows
        counts = all(float(v).is_integer() for v in finite) and any(v > 1 for v in finite)
        col = []
        for v in values:
            if v is None or not math.isfinite(v):
                col.append("–")
                continue
            text = str(int(v)) if counts else f"{v:.4f}"
            col.append(Best(text) if best is not None and v == best else text)
        table[k] = col
    return pd.DataFrame(table, dtype=object)
