"""The job directory: the offline-first record of one evaluation, written before any upload.

Below :mod:`recoeval_tracking.tracking` (which uploads it) and :mod:`recoeval_tracking.reporting`
(which reads it back); it knows nothing of MLflow, reports or Hydra.

* :mod:`.io`: the layout, :func:`write_job_dir` (atomic, ``job.json`` last),
  :class:`JobDirWriteError`, :func:`job_metrics`, :func:`curves_table`;
* :mod:`.read`: :func:`read_job_dir`, :class:`JobDir`, :func:`job_dir_state`,
  :func:`check_job_dir` (every file an upload sends, checked before it is sent);
* :mod:`.markers`: the file names (:data:`FILES`), the markers (``INCOMPLETE``, ``UPLOADING``,
  ``PENDING``, ``SYNCED``), atomic writes and the locks that processes sharing a job directory
  take turns with;
* :mod:`.redact`: the one redaction rule (:func:`is_secret_key`, ``scrub_*``) and the key helpers
  (:func:`flatten_config`, :func:`sanitize_key`);
* :mod:`.plots`: the job's plots (:func:`write_job_plots`).
"""

from __future__ import annotations

from .io import JobDirWriteError, begin_job_dir, curves_table, job_metrics, write_job_dir
from .markers import FILES, INCOMPLETE, PENDING, SYNCED, UPLOADING
from .plots import plot_curves, plot_per_user, write_job_plots
from .read import JobDir, check_job_dir, job_dir_state, read_job_dir
from .redact import (
    REDACTED,
    flatten_config,
    is_secret_key,
    redact,
    sanitize_key,
    scrub_mapping,
    scrub_overrides,
    scrub_text,
    scrub_url,
    scrub_value,
)

__all__ = [
    "FILES",
    "INCOMPLETE",
    "UPLOADING",
    "PENDING",
    "SYNCED",
    "JobDir",
    "JobDirWriteError",
    "write_job_dir",
    "begin_job_dir",
    "read_job_dir",
    "check_job_dir",
    "job_dir_state",
    "job_metrics",
    "curves_table",
    "REDACTED",
    "redact",
    "is_secret_key",
    "scrub_text",
    "scrub_url",
    "scrub_value",
    "scrub_mapping",
    "scrub_overrides",
    "flatten_config",
    "sanitize_key",
    "write_job_plots",
    "plot_curves",
    "plot_per_user",
]
