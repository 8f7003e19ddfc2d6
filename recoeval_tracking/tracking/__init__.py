"""Experiment tracking: MLflow runs, sweep parents, pending uploads and their sync.

Importing this package is cheap: :mod:`mlflow` is imported only when something is logged.
Public functions (re-exported lazily from :mod:`.mlflow` and :mod:`.sync`):
``log_job_dir``, ``log_results``, ``upload_or_mark_pending``, ``create_sweep_parent``,
``finish_sweep_parent``, ``finish_sweep_parent_or_mark_pending``, ``build_leaderboard``,
``resolve_tracking_uri``, ``flatten_config``, ``params_from_config``, ``run_name_from_overrides``,
``sync_paths``, ``find_pending``; and from :mod:`recoeval_tracking.jobdir.redact`:
``flatten_config``, ``is_secret_key``.
"""

from __future__ import annotations

from typing import Any

from ..jobdir.redact import flatten_config, is_secret_key

_FROM_MLFLOW = {
    "DEFAULT_EXPERIMENT", "SweepParent", "resolve_tracking_uri", "params_from_config",
    "run_name_from_overrides", "log_job_dir", "log_results", "create_sweep_parent",
    "build_leaderboard", "finish_sweep_parent", "upload_or_mark_pending",
    "finish_sweep_parent_or_mark_pending", "PENDING_SWEEP",
}
_FROM_SYNC = {"sync_paths", "sync_job_dir", "find_pending", "SyncOutcome"}

__all__ = sorted(_FROM_MLFLOW | _FROM_SYNC | {"flatten_config", "is_secret_key"})


def __getattr__(name: str) -> Any:
    if name in _FROM_MLFLOW:
        from . import mlflow as _m

        return getattr(_m, name)
    if name in _FROM_SYNC:
        from . import sync as _s

        return getattr(_s, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
