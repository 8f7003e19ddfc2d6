"""Experiment tracking with MLflow: the only package that imports :mod:`mlflow`.

One concept a module:

* :mod:`.client`: the connection: the tracking URI, the client, the experiment, fast-fail HTTP
  settings, clean params and tags (``resolve_tracking_uri``, ``params_from_config``,
  ``run_name_from_overrides``);
* :mod:`.names`: short, distinct run names (``als f=64 reg=0.1``);
* :mod:`.runs`: a run's logging: one run per job directory, exactly once (``log_job_dir``,
  ``log_results``, ``log_job_dir_into_run``); :mod:`.spark_log` logs a Spark evaluation
  through it;
* :mod:`.sweeps`: a sweep: its directory's records, its parent run, its children compared
  (``create_sweep_parent``, ``build_leaderboard``, ``finish_sweep_parent``, ``SWEEP_FILE``);
* :mod:`.views`: what a user is shown of a sweep: UI addresses, the experiment's and the
  parent's descriptions, the terminal's lines;
* :mod:`.pending`: nothing lost: the offline queue and its sync (``upload_or_mark_pending``,
  ``finish_sweep_parent_or_mark_pending``, the ``PENDING_SWEEP`` marker, ``sync_paths``,
  ``sync_job_dir``, ``find_pending``, ``SyncOutcome``);
* :mod:`.search`: reading runs back for reports (``search_runs_for_report``,
  ``find_sweep_parent``, ``download_job_artifacts``, ``log_report_artifacts``);
* :mod:`.evaluator`: the ``recoeval`` evaluator of ``mlflow.models.evaluate``
  (``RecoevalEvaluator``, ``metric_threshold``) and its inputs (interaction frames to matrices
  and a score source).

:mod:`.sweep_records`, :mod:`.sync` and :mod:`.evaluator_data` are old paths only: their names
read from there with a :class:`DeprecationWarning` for one release.

Importing this package is cheap: the names above are loaded from their module on first use, and
:mod:`mlflow` itself only when something is logged or read. ``flatten_config`` and
``is_secret_key`` come from :mod:`recoeval_tracking.jobdir.redact`.
"""

from __future__ import annotations

from .._lazy import lazy_names
from ..jobdir.redact import flatten_config, is_secret_key

#: Each module and the public names it holds, read on first use.
_MODULES = {
    ".client": (
        "DEFAULT_EXPERIMENT",
        "resolve_tracking_uri",
        "params_from_config",
        "run_name_from_overrides",
    ),
    ".runs": ("log_job_dir", "log_results"),
    ".sweeps": ("SweepParent", "create_sweep_parent", "build_leaderboard", "finish_sweep_parent"),
    ".pending": (
        "PENDING_SWEEP",
        "upload_or_mark_pending",
        "finish_sweep_parent_or_mark_pending",
        "SyncOutcome",
        "find_pending",
        "sync_job_dir",
        "sync_paths",
    ),
    ".search": (
        "REPORT_ARTIFACTS",
        "search_runs_for_report",
        "find_sweep_parent",
        "download_job_artifacts",
        "log_report_artifacts",
    ),
    ".evaluator": ("RecoevalEvaluator", "metric_threshold"),
}

__all__ = sorted(
    [n for names in _MODULES.values() for n in names] + ["flatten_config", "is_secret_key"]
)

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
