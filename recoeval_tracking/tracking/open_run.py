"""The run a caller has open: add a job folder to it (the user's own Hydra app, whose task may
have started an MLflow run of its own)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._validation import check_optional
from .runs import _TAG_PREFIX, _active_run, _log_into_run

__all__ = ["log_job_dir_into_run", "active_run"]


def log_job_dir_into_run(
    path: str | Path,
    run_id: str,
    *,
    tracking_uri: str | None = None,
    sweep_id: str | None = None,
    parent_run_id: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> str:
    """Add the job directory ``path`` to the existing run ``run_id`` (a run the caller has open,
    e.g. the training run of the user's own Hydra app; it is left open). In a sweep,
    ``sweep_id`` and ``parent_run_id`` make it a child of the sweep's parent, as a run of
    ``recoeval-track`` is. Params the run already holds are kept as they are."""
    for name, value in (
        ("run_id", run_id),
        ("tracking_uri", tracking_uri),
        ("sweep_id", sweep_id),
        ("parent_run_id", parent_run_id),
    ):
        check_optional(value, str, name, "log_job_dir_into_run")
    tags = {_TAG_PREFIX + "sweep_id": sweep_id, "mlflow.parentRunId": parent_run_id}
    return _log_into_run(
        Path(path), run_id, tracking_uri, {k: v for k, v in tags.items() if v}, params, None
    )


def active_run() -> tuple[str | None, str | None]:
    """The id and store of the run open in this process (``mlflow.start_run()``), or Nones."""
    return _active_run()
