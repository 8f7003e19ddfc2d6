"""Logging a Spark evaluation (:func:`recoeval_tracking.spark.evaluate_spark`) to MLflow with
the app's run layout: :func:`log_spark_results`.

The per-user table lives on the executors as a Spark DataFrame; it is written by Spark as a
folder of Parquet parts, which the job directory takes as a distributed per-user table (as
after a Dask evaluation: ``per_user.parquet/part-*.parquet``); means, intervals, curves and
definitions come from the results on the driver. Everything else is :func:`.runs.log_results`:
the same job directory, params, metrics, tags and artifacts as a run of the app. Nothing here
imports pyspark: the DataFrame's own ``write`` is called.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

from .._validation import param_error
from .client import resolve_tracking_uri
from .runs import log_results

__all__ = ["log_spark_results"]


def log_spark_results(
    results: Any, *, per_user_path: str | Path | None = None, **log_kwargs: Any
) -> str:
    """Log the results of :func:`~recoeval_tracking.spark.evaluate_spark` to MLflow.

    Parameters
    ----------
    results : SparkResults
        The results, with their per-user Spark DataFrame.
    per_user_path : str or Path, optional
        Where Spark writes the per-user table as Parquet before it is logged: a folder the
        driver can read as a local path (on a cluster, a shared mount such as ``/dbfs/...``;
        Spark is given the same path). By default a temporary folder on the driver, which
        suits a local session.
    **log_kwargs
        As for :func:`recoeval_tracking.tracking.log_results` (``run_id``, ``tracking_uri``,
        ``experiment``, ``run_name``, ``config``, ``dataset``, ``tags``, ``params``,
        ``job_dir``...).

    Returns
    -------
    str
        The run id.
    """
    func = "log_spark_results"
    frame = getattr(results, "per_user_spark", None)
    if frame is None or not hasattr(frame, "write"):
        raise param_error(
            "results",
            func,
            "the SparkResults of evaluate_spark (with its per-user Spark DataFrame)",
            results,
        )
    if per_user_path is not None and not isinstance(per_user_path, (str, Path)):
        raise param_error("per_user_path", func, "a str or pathlib.Path", per_user_path)
    _check_store(log_kwargs.get("tracking_uri"), func)
    with contextlib.ExitStack() as stack:
        if per_user_path is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="recoeval-spark-"))
            per_user_path = Path(tmp) / "per_user"
        folder = Path(per_user_path)
        frame.orderBy("user_id").write.mode("overwrite").parquet(str(folder))
        _drop_markers(folder)
        local = dataclasses.replace(results, per_user_dataset=folder)
        return log_results(local, **log_kwargs)


#: Hosted stores MLflow names without a scheme.
_BARE_STORES = ("databricks", "databricks-uc", "uc")


def _check_store(uri: Any, func: str) -> None:
    """Refuse MLflow's file store (``file:`` or a bare path) before Spark writes anything:
    MLflow 3 (3.17 here) refuses it with an error at the upload, after the evaluation's
    table is written, unless ``MLFLOW_ALLOW_FILE_STORE`` is set."""
    if uri is not None and not isinstance(uri, str):
        raise param_error("tracking_uri", func, "a str (a tracking URI) or None", uri)
    resolved = resolve_tracking_uri(uri or None)
    is_file = resolved.startswith("file:") or (
        "://" not in resolved and resolved not in _BARE_STORES
    )
    allowed = os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").strip().lower() in ("1", "true")
    if is_file and not allowed:
        source = "tracking_uri" if uri else "MLFLOW_TRACKING_URI"
        raise param_error(
            "tracking_uri",
            func,
            "a database or server store: sqlite:///mlflow.db (the default without "
            "tracking_uri and MLFLOW_TRACKING_URI), http://host:5000, databricks",
            f"the file store {resolved!r} (from {source})",
            "MLflow 3 refuses its file store (the './mlruns' folder) with an MlflowException "
            "when the run is logged. Leave tracking_uri out for the SQLite default or give "
            "tracking_uri='sqlite:///mlflow.db'; move existing runs with `mlflow "
            "migrate-filestore`; or set MLFLOW_ALLOW_FILE_STORE=true to keep the file store.",
            got_is_text=True,
        )


def _drop_markers(folder: Path) -> None:
    """Leave only the Parquet parts in the folder Spark wrote: its ``_SUCCESS`` marker and
    the Hadoop checksums (``.part-*.crc``) are not the table, and would be logged as artifacts.
    Skipped where the driver cannot see the folder."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.is_file() and (path.name.startswith(("_", ".")) or path.suffix == ".crc"):
            path.unlink()
