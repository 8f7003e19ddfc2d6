"""Metric registry, the native ``evaluate`` API and the recometrics-compatible function."""

from .compat import calc_reco_metrics
from .evaluate import evaluate
from .profiles import PROFILES
from .rating import global_auc, log_loss, mae, rmse
from .registry import METRICS, MetricSpec
from .results import Results

__all__ = [
    "evaluate",
    "calc_reco_metrics",
    "METRICS",
    "MetricSpec",
    "Results",
    "PROFILES",
    "rmse",
    "mae",
    "log_loss",
    "global_auc",
]
