"""Experiment tracking with MLflow: the only package that imports :mod:`mlflow`.

Modules, each with one job:

* :mod:`.client`: the tracking URI, the client, the experiment, fast-fail HTTP settings, clean
  params and tags (``resolve_tracking_uri``, ``params_from_config``, ``run_name_from_overrides``);
* :mod:`.runs`: one run per job directory (``log_job_dir``, ``log_results``);
* :mod:`.sweeps`: sweep parents and leaderboards (``create_sweep_parent``, ``build_leaderboard``,
  ``finish_sweep_parent``);
* :mod:`.pending`: nothing lost (``upload_or_mark_pending``,
  ``finish_sweep_parent_or_mark_pending``, the ``PENDING_SWEEP`` marker) and the sync of what is
  pending (``sync_paths``, ``sync_job_dir``, ``find_pending``, ``SyncOutcome``);
* :mod:`.search`: reading runs back for reports (``search_runs_for_report``,
  ``find_sweep_parent``, ``download_job_artifacts``, ``log_report_artifacts``);
* :mod:`.evaluator`: the ``recoeval`` evaluator of ``mlflow.models.evaluate``
  (``RecoevalEvaluator``, ``metric_threshold``), its data contract in :mod:`.evaluator_data`.

Importing this package is cheap: the names above are loaded from their module on first use, and
:mod:`mlflow` itself only when something is logged or read. ``flatten_config`` and
``is_secret_key`` come from :mod:`recoeval_tracking.jobdir.redact`.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..jobdir.redact import flatten_config, is_secret_key

_MODULE_OF = {
    **dict.fromkeys(
        (
            "DEFAULT_EXPERIMENT",
            "resolve_tracking_uri",
            "params_from_config",
            "run_name_from_overrides",
        ),
        "client",
    ),
    **dict.fromkeys(("log_job_dir", "log_results"), "runs"),
    **dict.fromkeys(
        ("SweepParent", "create_sweep_parent", "build_leaderboard", "finish_sweep_parent"), "sweeps"
    ),
    **dict.fromkeys(
        (
            "PENDING_SWEEP",
            "upload_or_mark_pending",
            "finish_sweep_parent_or_mark_pending",
            "SyncOutcome",
            "find_pending",
            "sync_job_dir",
            "sync_paths",
        ),
        "pending",
    ),
    **dict.fromkeys(
        (
            "REPORT_ARTIFACTS",
            "search_runs_for_report",
            "find_sweep_parent",
            "download_job_artifacts",
            "log_report_artifacts",
        ),
        "search",
    ),
    **dict.fromkeys(("RecoevalEvaluator", "metric_threshold"), "evaluator"),
}

__all__ = sorted([*_MODULE_OF, "flatten_config", "is_secret_key"])


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
