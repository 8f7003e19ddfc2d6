"""The job directory: the offline-first record of one evaluation, written before any upload.

Below :mod:`recoeval_tracking.tracking` (which uploads it) and :mod:`recoeval_tracking.reporting`
(which reads it back); it knows nothing of MLflow, reports or Hydra.

* :mod:`.io`: the layout (:data:`FILES`, the ``PENDING``/``SYNCED`` marker names),
  :func:`write_job_dir`, :func:`read_job_dir` and :class:`JobDir`, :func:`job_metrics`,
  :func:`curves_table`;
* :mod:`.redact`: the one redaction rule (:func:`is_secret_key`, ``scrub_*``) and the key helpers
  (:func:`flatten_config`, :func:`sanitize_key`);
* :mod:`.plots`: the job's plots (:func:`write_job_plots`).
"""

from __future__ import annotations

from .io import (
    FILES,
    PENDING,
    SYNCED,
    JobDir,
    curves_table,
    job_metrics,
    read_job_dir,
    write_job_dir,
)
from .plots import plot_curves, plot_per_user, write_job_plots
from .redact import (
    REDACTED,
    flatten_config,
    is_secret_key,
    sanitize_key,
    scrub_mapping,
    scrub_overrides,
    scrub_url,
    scrub_value,
)

__all__ = [
    "FILES", "PENDING", "SYNCED", "JobDir", "write_job_dir", "read_job_dir", "job_metrics",
    "curves_table",
    "REDACTED", "is_secret_key", "scrub_url", "scrub_value", "scrub_mapping", "scrub_overrides",
    "flatten_config", "sanitize_key",
    "write_job_plots", "plot_curves", "plot_per_user",
]
