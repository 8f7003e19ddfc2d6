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
import tempfile
from pathlib import Path
from typing import Any

from .._validation import param_error
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
    with contextlib.ExitStack() as stack:
        if per_user_path is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="recoeval-spark-"))
            per_user_path = Path(tmp) / "per_user"
        folder = Path(per_user_path)
        frame.orderBy("user_id").write.mode("overwrite").parquet(str(folder))
        local = dataclasses.replace(results, per_user_dataset=folder)
        return log_results(local, **log_kwargs)
