"""MLflow adapter: one run per job directory, sweep parents, leaderboards, nothing lost.

The only module of the package that imports :mod:`mlflow`, and only inside functions
(``import mlflow`` costs about 2 s).

What a run holds (logged from a job directory written by
:func:`recoeval_tracking.jobdir.write_job_dir`):

* **params**: the resolved config flattened to dotted keys (``model.factors``, ``metrics.k``),
  the metric definitions as ``definitions.*``, and the caller's ``params``; secret keys dropped.
* **metrics** (one :meth:`MlflowClient.log_batch`): everything in ``metrics.json`` (means at K,
  ``_ci95_low``/``_ci95_high``, ``users_evaluated``, ``users_nan_<reason>``, ``<stage>_seconds``)
  at step 0, and each curve of ``curves.csv`` (``ndcg_at_k``...) with ``step = k`` for k = 1..K.
* **tags**: ``recoeval.job_uid``, ``recoeval.sweep_id``, ``recoeval.version``, ``recoeval.k``,
  ``recoeval.metrics`` (the headline metric keys), ``recoeval.definitions_fingerprint``,
  ``recoeval.data_fingerprint``, ``recoeval.split_fingerprint``, ``recoeval.overrides``,
  ``mlflow.source.git.commit`` and ``recoeval.git_commit`` when the job ran in a git checkout,
  ``mlflow.parentRunId`` for sweep children.
* **inputs**: the dataset, with ``digest`` = its data fingerprint (context ``evaluation``).
* **artifacts**: the files of the job directory (``per_user.parquet``, ``metrics.json``,
  ``curves.csv``, ``definitions.json``, ``dataset.json``, ``config.yaml``, ``overrides.yaml``,
  ``job.json``, ``plots/``). Hydra's own ``.hydra/`` folder is *not* uploaded: it holds the
  unscrubbed config.

Secrets (rule in :mod:`recoeval_tracking.jobdir.redact`): a param or tag whose key's last dotted
component names a credential (password, token, secret, key...) is dropped; URL passwords are
removed from every value; the artifacts were already redacted when the job directory was written.
Credentials for a server come from MLflow's own environment variables
(``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` or ``MLFLOW_TRACKING_TOKEN``), which
this module never reads or logs.

Exactly once: every job directory has a ``job_uid``; before creating a run,
:func:`log_job_dir` looks in the experiment for a run tagged with it. A FINISHED one is returned
as it is; an unfinished one (an upload cut off midway) is deleted and the job logged again.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..jobdir.redact import flatten_config, is_secret_key, sanitize_key, scrub_url

__all__ = [
    "DEFAULT_EXPERIMENT",
    "SweepParent",
    "resolve_tracking_uri",
    "flatten_config",
    "params_from_config",
    "run_name_from_overrides",
    "log_job_dir",
    "log_results",
    "create_sweep_parent",
    "build_leaderboard",
    "finish_sweep_parent",
    "upload_or_mark_pending",
    "finish_sweep_parent_or_mark_pending",
    "PENDING_SWEEP",
    "REPORT_ARTIFACTS",
    "search_runs_for_report",
    "find_sweep_parent",
    "download_job_artifacts",
    "log_report_artifacts",
]

DEFAULT_EXPERIMENT = "recoeval"
#: Marker written into a sweep directory when its parent run could not be closed.
PENDING_SWEEP = "PENDING_SWEEP"
#: Metric-name prefixes for which lower is better (mean percentile rank); timings too.
LOWER_IS_BETTER_PREFIXES = ("mpr",)

_TAG_PREFIX = "recoeval."
_MAX_PARAM_CHARS = 6000
_MAX_TAG_CHARS = 5000
_ARTIFACT_FILES = ("per_user.parquet", "metrics.json", "curves.csv", "definitions.json",
                   "dataset.json", "config.yaml", "overrides.yaml", "job.json")
_TERMINAL = ("FINISHED", "FAILED", "KILLED")
_TRACKING_KEY_PREFIXES = ("tracking.", "hydra.", "mlflow.")


class SweepParent(NamedTuple):
    """The parent run of a sweep: pass ``run_id`` and ``sweep_id`` to every child's upload."""

    run_id: str
    sweep_id: str
    experiment_id: str
    tracking_uri: str


# ---------------------------------------------------------------------------------------------
# URIs, experiments, keys
# ---------------------------------------------------------------------------------------------

def resolve_tracking_uri(uri: str | None = None) -> str:
    """The tracking URI to use: ``uri`` if given, else ``MLFLOW_TRACKING_URI``, else the local
    SQLite store ``sqlite:///<cwd>/mlflow.db`` (absolute, so a later ``cd`` changes nothing).

    MLflow 3 refuses its old ``./mlruns`` file store unless told otherwise and switches to it by
    itself when ``./mlruns`` holds data, so the URI is always set explicitly.
    """
    if uri is not None and not isinstance(uri, str):
        raise param_error("uri", "resolve_tracking_uri", "a str (a tracking URI) or None", uri)
    if uri:
        return uri
    env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if env:
        return env
    return f"sqlite:///{(Path.cwd() / 'mlflow.db').resolve()}"


def _default_artifact_location(uri: str) -> str | None:
    """Artifacts of a SQLite store live beside the database (``<db dir>/mlartifacts``)."""
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///"):])
        if not db.is_absolute():
            db = Path.cwd() / db
        return (db.resolve().parent / "mlartifacts").as_uri()
    return None


def _client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _experiment_id(client, name: str, artifact_location: str | None, uri: str) -> str:
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is None:
        location = artifact_location or _default_artifact_location(uri)
        try:
            return client.create_experiment(
                name, artifact_location=location,
                tags={"mlflow.experimentKind": "custom_model_development"})
        except MlflowException as err:  # created meanwhile by a parallel job
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise err
    if exp.tags.get("mlflow.experimentKind") != "custom_model_development":
        client.set_experiment_tag(exp.experiment_id, "mlflow.experimentKind",
                                  "custom_model_development")
    return exp.experiment_id


def _clean_params(params: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in params.items():
        if is_secret_key(str(key)):
            continue
        text = scrub_url(str(value))
        if len(text) > _MAX_PARAM_CHARS:
            text = text[:_MAX_PARAM_CHARS - 15] + "...[truncated]"
        out[sanitize_key(str(key))] = text
    return out


def _clean_tags(tags: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in tags.items():
        if value is None or is_secret_key(str(key)):
            continue
        text = scrub_url(str(value))
        out[sanitize_key(str(key))] = text[:_MAX_TAG_CHARS]
    return out


def params_from_config(config: Mapping[str, Any] | None,
                       params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """MLflow params for a run: ``config`` flattened to dotted keys, then ``params`` (flattened
    too, winning on clashes); secret keys dropped, URL passwords removed, values truncated to
    6000 characters (MLflow's limit).

    Examples
    --------
    >>> params_from_config({"tracking": {"uri": "http://u:pw@h", "password": "x"},
    ...                     "metrics": {"k": 10}})
    {'tracking.uri': 'http://u:<redacted>@h', 'metrics.k': '10'}
    """
    flat: dict[str, Any] = {}
    if config:
        flat.update(flatten_config(config))
    if params:
        if not isinstance(params, Mapping):
            raise param_error("params", "params_from_config", "a mapping or None", params)
        flat.update(flatten_config(params))
    return _clean_params(flat)


def run_name_from_overrides(overrides: Sequence[str] | None,
                            exclude_prefixes: Sequence[str] = _TRACKING_KEY_PREFIXES) -> str | None:
    """A run name from Hydra overrides, leaving tracking keys and secrets out.

    ``["model=als", "model.factors=64", "tracking.uri=http://..."]`` -> ``"model=als,
    model.factors=64"``. Returns None when nothing is left.
    """
    if not overrides:
        return None
    parts = []
    for item in overrides:
        text = str(item)
        key = text.split("=", 1)[0].lstrip("+~")
        if key.startswith(tuple(exclude_prefixes)) or key in {p.rstrip(".") for p in
                                                              exclude_prefixes}:
            continue
        if is_secret_key(key):
            continue
        parts.append(scrub_url(text))
    return ",".join(parts)[:250] or None


# ---------------------------------------------------------------------------------------------
# Logging a job directory
# ---------------------------------------------------------------------------------------------

def _now_ms() -> int:
    return int(time.time() * 1000)


def _metrics_for(job, timestamp: int) -> list:
    from mlflow.entities import Metric

    out = [Metric(key, float(value), timestamp, 0) for key, value in job.metrics.items()]
    curves = job.curves
    if len(curves):
        ks = curves["k"].to_numpy(dtype=np.int64)
        for name in job.curve_names:
            values = curves[name].to_numpy(dtype=np.float64)
            out.extend(Metric(name, float(v), timestamp, int(k)) for k, v in zip(ks, values))
    return out


def _fingerprints(job) -> dict[str, str]:
    ds = job.dataset or {}
    out = {}
    data_fp = ds.get("data_fingerprint", ds.get("fingerprint"))
    if data_fp:
        out["data_fingerprint"] = str(data_fp)
    if ds.get("split_fingerprint"):
        out["split_fingerprint"] = str(ds["split_fingerprint"])
    if job.fingerprint:
        out["definitions_fingerprint"] = job.fingerprint
    return out


def _run_tags(job, sweep_id: str | None, extra: Mapping[str, Any] | None) -> dict[str, str]:
    tags: dict[str, Any] = {
        _TAG_PREFIX + "job_uid": job.job_uid or None,
        _TAG_PREFIX + "sweep_id": sweep_id or job.job_uid or None,
        _TAG_PREFIX + "version": job.job.get("package_version"),
        _TAG_PREFIX + "k": job.k,
        _TAG_PREFIX + "metrics": ",".join(job.metric_columns),
        _TAG_PREFIX + "topk_only": str(job.topk_only).lower(),
    }
    for name, value in _fingerprints(job).items():
        tags[_TAG_PREFIX + name] = value
    if job.overrides:
        tags[_TAG_PREFIX + "overrides"] = " ".join(job.overrides)
    commit = job.job.get("git_commit")
    if commit:
        tags["mlflow.source.git.commit"] = commit
        tags[_TAG_PREFIX + "git_commit"] = commit
        if job.job.get("git_dirty") is not None:
            tags[_TAG_PREFIX + "git_dirty"] = str(bool(job.job["git_dirty"])).lower()
    if extra:
        tags.update(extra)
    return _clean_tags(tags)


def _dataset_input(job):
    from mlflow.entities import Dataset, DatasetInput, InputTag

    ds = job.dataset
    if not ds:
        return None
    digest = ds.get("data_fingerprint", ds.get("fingerprint"))
    if not digest:
        return None
    source = ds.get("source") or ds.get("path") or str(job.path / "dataset.json")
    source = scrub_url(str(source))
    source_type = "http" if source.startswith(("http://", "https://")) else "local"
    source_json = json.dumps({"url" if source_type == "http" else "uri": source})
    profile = {k: v for k, v in ds.items()
               if isinstance(v, (int, float, str, bool)) and k not in ("source", "path")}
    return DatasetInput(
        Dataset(name=str(ds.get("name", "dataset"))[:500], digest=str(digest)[:36],
                source_type=source_type, source=source_json,
                profile=json.dumps(profile, default=str)),
        tags=[InputTag(key="mlflow.data.context", value="evaluation")])


def _upload(client, run_id: str, job, *, params: dict[str, str], tags: dict[str, str],
            artifact_path: str | None, existing_params: Mapping[str, str] | None = None) -> None:
    """Metrics, params and tags in one batch, then the dataset input, then the artifacts."""
    from mlflow.entities import Param, RunTag

    if existing_params:
        clash = {k for k, v in params.items() if k in existing_params and existing_params[k] != v}
        if clash:
            print(f"recoeval: params already set with other values in run {run_id} were kept: "
                  f"{', '.join(sorted(clash))}", file=sys.stderr)
        params = {k: v for k, v in params.items() if k not in existing_params}
    client.log_batch(run_id,
                     metrics=_metrics_for(job, _now_ms()),
                     params=[Param(k, v) for k, v in params.items()],
                     tags=[RunTag(k, v) for k, v in tags.items()])
    ds_input = _dataset_input(job)
    if ds_input is not None:
        client.log_inputs(run_id, datasets=[ds_input])
    for name in _ARTIFACT_FILES:
        p = job.path / name
        if p.is_file():
            client.log_artifact(run_id, str(p), artifact_path)
    plots = job.path / "plots"
    if plots.is_dir() and any(plots.iterdir()):
        sub = f"{artifact_path}/plots" if artifact_path else "plots"
        client.log_artifacts(run_id, str(plots), sub)


def _job_params(job, params: Mapping[str, Any] | None) -> dict[str, str]:
    flat: dict[str, Any] = {}
    if job.definitions:
        flat.update(flatten_config(job.definitions, prefix="definitions"))
    if job.config:
        flat.update(flatten_config(job.config))
    if params:
        flat.update(flatten_config(params))
    return _clean_params(flat)


def _run_exists(client, run_id: str) -> bool:
    """Whether the store holds ``run_id`` (connection errors propagate)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import (
        INVALID_PARAMETER_VALUE,
        RESOURCE_DOES_NOT_EXIST,
        ErrorCode,
    )

    try:
        client.get_run(run_id)
        return True
    except MlflowException as err:
        if err.error_code in (ErrorCode.Name(RESOURCE_DOES_NOT_EXIST),
                              ErrorCode.Name(INVALID_PARAMETER_VALUE)):
            return False
        raise


def _find_job_runs(client, experiment_id: str, job_uid: str) -> list:
    return client.search_runs([experiment_id],
                              filter_string=f"tags.`{_TAG_PREFIX}job_uid` = '{job_uid}'",
                              max_results=100)


def _check_str(value: Any, name: str, func: str) -> None:
    if value is not None and not isinstance(value, str):
        raise param_error(name, func, "a str or None", value)


def _check_mapping(value: Any, name: str, func: str) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise param_error(name, func, "a dict or None", value)


def log_job_dir(path: str | Path, *, tracking_uri: str | None = None,
                experiment: str = DEFAULT_EXPERIMENT, run_name: str | None = None,
                parent_run_id: str | None = None, sweep_id: str | None = None,
                tags: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None,
                artifact_location: str | None = None) -> str:
    """Log a job directory as one MLflow run and return its run id.

    Parameters
    ----------
    path : str or Path
        A job directory written by :func:`recoeval_tracking.jobdir.write_job_dir`.
    tracking_uri : str, optional
        See :func:`resolve_tracking_uri`.
    experiment : str
        Experiment name (created if needed, with the tag
        ``mlflow.experimentKind=custom_model_development`` so the UI shows the runs table).
    run_name : str, optional
        Defaults to a name built from the job's overrides (tracking keys left out).
    parent_run_id : str, optional
        The sweep parent (see :func:`create_sweep_parent`): the run is tagged
        ``mlflow.parentRunId``.
    sweep_id : str, optional
        The ``recoeval.sweep_id`` tag (defaults to the job's own uid).
    tags, params : dict, optional
        More tags and params (params are flattened to dotted keys); secrets dropped.
    artifact_location : str, optional
        Artifact location for a new experiment (default: ``mlartifacts`` beside a SQLite
        database; the server's default for a server).

    Returns
    -------
    str
        The run id. When the experiment already holds a FINISHED run with this job's uid, that
        run's id is returned and nothing is logged (exactly once).
    """
    from ..jobdir import read_job_dir

    func = "log_job_dir"
    for name, value in (("tracking_uri", tracking_uri), ("run_name", run_name),
                        ("parent_run_id", parent_run_id), ("sweep_id", sweep_id),
                        ("artifact_location", artifact_location)):
        _check_str(value, name, func)
    if not isinstance(experiment, str) or not experiment:
        raise param_error("experiment", func, "a non-empty str", experiment)
    _check_mapping(tags, "tags", func)
    _check_mapping(params, "params", func)
    job = read_job_dir(path, per_user=False)

    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    exp_id = _experiment_id(client, experiment, artifact_location, uri)
    if job.job_uid:
        for run in _find_job_runs(client, exp_id, job.job_uid):
            if run.info.status == "FINISHED":
                return run.info.run_id
            client.delete_run(run.info.run_id)  # an upload cut off midway: start again

    run_tags = _run_tags(job, sweep_id, tags)
    if parent_run_id:
        run_tags["mlflow.parentRunId"] = parent_run_id
    name = run_name or run_name_from_overrides(job.overrides)
    run = client.create_run(exp_id, tags=run_tags, run_name=name)
    run_id = run.info.run_id
    try:
        _upload(client, run_id, job, params=_job_params(job, params), tags={},
                artifact_path=None)
    except BaseException:
        with contextlib.suppress(Exception):
            client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id


def log_results(results, *, run_id: str | None = None, tracking_uri: str | None = None,
                experiment: str = DEFAULT_EXPERIMENT, run_name: str | None = None,
                config: Mapping[str, Any] | str | None = None,
                overrides: list[str] | None = None, dataset: Mapping[str, Any] | None = None,
                tags: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None,
                extra_metrics: Mapping[str, Any] | None = None,
                artifact_path: str | None = None, job_dir: str | Path | None = None,
                plots: bool = True) -> str:
    """Log a :class:`~recoeval_tracking.metrics.results.Results` to MLflow in one line.

    Into ``run_id`` if given, else into the active run (``mlflow.start_run()`` of a training
    script), else into a new run of ``experiment``. The results are first written to a job
    directory (``job_dir``, or a temporary one removed afterwards), then logged exactly as
    :func:`log_job_dir` logs it.

    Parameters
    ----------
    results : Results
    run_id : str, optional
        An existing run to add the evaluation to (it is left open).
    tracking_uri : str, optional
        Defaults to the active run's store when there is one, else :func:`resolve_tracking_uri`.
    experiment, run_name : str
        For a new run.
    config : dict or YAML text, optional
        Logged flattened as params and as ``config.yaml``.
    overrides, dataset, extra_metrics
        As in :func:`recoeval_tracking.jobdir.write_job_dir`.
    tags, params : dict, optional
        More tags and params; secrets dropped.
    artifact_path : str, optional
        Folder of the run's artifacts to put the files in (e.g. ``"evaluation"``; default: the
        root). Params that the run already holds are kept as they are.
    job_dir : str or Path, optional
        Keep the job directory here instead of a temporary folder.
    plots : bool
        Write and log the plots.

    Returns
    -------
    str
        The run id.

    Examples
    --------
    >>> import mlflow                                                      # doctest: +SKIP
    >>> with mlflow.start_run():                                           # doctest: +SKIP
    ...     mlflow.log_params({"factors": 64})
    ...     log_results(evaluate(model, train, test, k=10))
    """
    from ..metrics.results import Results
    from ..jobdir import read_job_dir, write_job_dir

    func = "log_results"
    if not isinstance(results, Results):
        raise param_error("results", func, "a recoeval_tracking Results object", results)
    for name, value in (("run_id", run_id), ("tracking_uri", tracking_uri),
                        ("run_name", run_name), ("artifact_path", artifact_path)):
        _check_str(value, name, func)
    _check_mapping(tags, "tags", func)
    _check_mapping(params, "params", func)
    if config is not None and not isinstance(config, (Mapping, str)):
        raise param_error("config", func, "a plain dict, YAML text or None", config)

    if run_id is None and tracking_uri is None:
        import mlflow

        active = mlflow.active_run()
        if active is not None:
            run_id = active.info.run_id
            tracking_uri = mlflow.get_tracking_uri()

    with contextlib.ExitStack() as stack:
        if job_dir is None:
            job_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="recoeval-job-"))
        path = write_job_dir(results, job_dir, config_yaml=config, overrides=overrides,
                             dataset=dataset, extra_metrics=extra_metrics, plots=plots)
        if run_id is None:
            return log_job_dir(path, tracking_uri=tracking_uri, experiment=experiment,
                               run_name=run_name, tags=tags, params=params)
        uri = resolve_tracking_uri(tracking_uri)
        client = _client(uri)
        run = client.get_run(run_id)
        job = read_job_dir(path, per_user=False)
        run_tags = _run_tags(job, None, tags)
        _upload(client, run_id, job, params=_job_params(job, params), tags=run_tags,
                artifact_path=artifact_path, existing_params=run.data.params)
        return run_id


# ---------------------------------------------------------------------------------------------
# Sweeps
# ---------------------------------------------------------------------------------------------

def create_sweep_parent(*, tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT,
                        run_name: str | None = None, sweep_id: str | None = None,
                        tags: Mapping[str, Any] | None = None,
                        params: Mapping[str, Any] | None = None,
                        artifact_location: str | None = None) -> SweepParent:
    """Create the RUNNING parent run of a sweep with :class:`MlflowClient` (no active run).

    Parameters
    ----------
    tracking_uri, experiment, artifact_location
        As in :func:`log_job_dir`.
    run_name : str, optional
        Defaults to ``sweep-<sweep_id>``.
    sweep_id : str, optional
        Defaults to a new 12-hex-digit id; every child gets the same ``recoeval.sweep_id`` tag.
    tags, params : dict, optional
        E.g. the sweep's shared config and the sweeper's parameter grid; secrets dropped.

    Returns
    -------
    SweepParent
        ``(run_id, sweep_id, experiment_id, tracking_uri)``.
    """
    from mlflow.entities import Param

    func = "create_sweep_parent"
    for name, value in (("tracking_uri", tracking_uri), ("run_name", run_name),
                        ("sweep_id", sweep_id), ("artifact_location", artifact_location)):
        _check_str(value, name, func)
    _check_mapping(tags, "tags", func)
    _check_mapping(params, "params", func)
    sweep_id = sweep_id or uuid.uuid4().hex[:12]
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    exp_id = _experiment_id(client, experiment, artifact_location, uri)
    run_tags = _clean_tags({_TAG_PREFIX + "sweep_id": sweep_id,
                            _TAG_PREFIX + "sweep_parent": "true", **(tags or {})})
    run = client.create_run(exp_id, tags=run_tags, run_name=run_name or f"sweep-{sweep_id}")
    if params:
        client.log_batch(run.info.run_id, params=[
            Param(k, v) for k, v in params_from_config(None, params).items()])
    return SweepParent(run.info.run_id, sweep_id, exp_id, uri)


def _lower_is_better(metric: str, lower: Sequence[str] | None) -> bool:
    if lower is not None and metric in lower:
        return True
    return metric.startswith(LOWER_IS_BETTER_PREFIXES) or metric.endswith("_seconds")


def build_leaderboard(parent_run_id: str, *, tracking_uri: str | None = None,
                      metrics: Sequence[str] | None = None,
                      lower_is_better: Sequence[str] | None = None,
                      sort_by: str | None = None) -> pd.DataFrame:
    """One row per child run of ``parent_run_id``: name, id, status, overrides, each headline
    metric with its 95% bounds; best first.

    Parameters
    ----------
    parent_run_id : str
    tracking_uri : str, optional
    metrics : list of str, optional
        Headline metrics (default: the union of the children's ``recoeval.metrics`` tags).
    lower_is_better : list of str, optional
        Metrics where lower is better (besides ``mpr*`` and ``*_seconds``).
    sort_by : str, optional
        Default: the first ``ndcg_at_*`` headline metric, else the first one.

    Returns
    -------
    pandas.DataFrame
        Columns ``run_name, run_id, status, overrides, <metric>, <metric>_ci95_low,
        <metric>_ci95_high, ...``; ``attrs["metrics"]`` lists the headline metrics.
    """
    _check_str(parent_run_id, "parent_run_id", "build_leaderboard")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    parent = client.get_run(parent_run_id)
    children = client.search_runs(
        [parent.info.experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{parent_run_id}'", max_results=5000)
    if metrics is None:
        seen: dict[str, None] = {}
        for run in children:
            for m in run.data.tags.get(_TAG_PREFIX + "metrics", "").split(","):
                if m:
                    seen[m] = None
        metrics = list(seen)
    rows = []
    for run in children:
        row: dict[str, Any] = {"run_name": run.info.run_name, "run_id": run.info.run_id,
                               "status": run.info.status,
                               "overrides": run.data.tags.get(_TAG_PREFIX + "overrides", "")}
        for m in metrics:
            for key in (m, f"{m}_ci95_low", f"{m}_ci95_high"):
                row[key] = run.data.metrics.get(key, math.nan)
        rows.append(row)
    columns = ["run_name", "run_id", "status", "overrides"] + [
        key for m in metrics for key in (m, f"{m}_ci95_low", f"{m}_ci95_high")]
    table = pd.DataFrame(rows, columns=columns)
    if sort_by is None and metrics:
        sort_by = next((m for m in metrics if m.startswith("ndcg_at_")), metrics[0])
    if sort_by is not None and sort_by in table.columns and len(table):
        table = table.sort_values(sort_by, ascending=_lower_is_better(sort_by, lower_is_better),
                                  na_position="last", kind="stable").reset_index(drop=True)
    table.attrs["metrics"] = list(metrics)
    table.attrs["sort_by"] = sort_by
    return table


def _markdown(table: pd.DataFrame, metrics: Sequence[str]) -> str:
    cols = ["run_name", "status"] + list(metrics)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in table.iterrows():
        cells = [str(row["run_name"]), str(row["status"])]
        cells += ["" if pd.isna(row[m]) else f"{row[m]:.4f}" for m in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def finish_sweep_parent(parent_run_id: str, status: str = "FINISHED",
                        leaderboard: pd.DataFrame | None = None, *,
                        tracking_uri: str | None = None, metrics: Sequence[str] | None = None,
                        lower_is_better: Sequence[str] | None = None,
                        sort_by: str | None = None,
                        close_running_children: bool = True) -> pd.DataFrame:
    """Close a sweep parent with a leaderboard, so the sweep reads well without expanding it.

    Logs ``leaderboard.csv`` (see :func:`build_leaderboard`, or the table given), the best value
    of each headline metric over the children as ``best_<metric>`` (max, or min where lower is
    better), the tag ``recoeval.best_run.<metric>`` (the best child's name), ``sweep_jobs`` and
    ``sweep_jobs_failed``, the leaderboard as the run's description (``mlflow.note.content``),
    then sets the status.

    Parameters
    ----------
    parent_run_id : str
    status : {"FINISHED", "FAILED", "KILLED"}
    leaderboard : pandas.DataFrame, optional
        Default: built from the children.
    tracking_uri, metrics, lower_is_better, sort_by
        As in :func:`build_leaderboard`.
    close_running_children : bool
        Mark children still RUNNING (a job killed mid-upload) as KILLED.

    Returns
    -------
    pandas.DataFrame
        The leaderboard.
    """
    from mlflow.entities import Metric, RunTag

    func = "finish_sweep_parent"
    if not isinstance(parent_run_id, str) or not parent_run_id:
        raise param_error("parent_run_id", func, "a run id (str)", parent_run_id)
    if status not in _TERMINAL:
        raise param_error("status", func, f"one of {list(_TERMINAL)}", status)
    if leaderboard is not None and not isinstance(leaderboard, pd.DataFrame):
        raise param_error("leaderboard", func, "a pandas DataFrame or None", leaderboard)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    if leaderboard is None:
        leaderboard = build_leaderboard(parent_run_id, tracking_uri=uri, metrics=metrics,
                                        lower_is_better=lower_is_better, sort_by=sort_by)
    headline = list(metrics if metrics is not None else leaderboard.attrs.get("metrics", []))
    if close_running_children and "status" in leaderboard.columns:
        for _, row in leaderboard[leaderboard["status"] == "RUNNING"].iterrows():
            client.set_terminated(row["run_id"], "KILLED")
    now = _now_ms()
    batch_metrics = [Metric("sweep_jobs", float(len(leaderboard)), now, 0)]
    if "status" in leaderboard.columns:
        n_failed = int((leaderboard["status"] != "FINISHED").sum())
        batch_metrics.append(Metric("sweep_jobs_failed", float(n_failed), now, 0))
    tags = {}
    for m in headline:
        if m not in leaderboard.columns:
            continue
        values = pd.to_numeric(leaderboard[m], errors="coerce")
        if not values.notna().any():
            continue
        idx = values.idxmin() if _lower_is_better(m, lower_is_better) else values.idxmax()
        batch_metrics.append(Metric(sanitize_key(f"best_{m}"), float(values[idx]), now, 0))
        if "run_name" in leaderboard.columns:
            tags[f"{_TAG_PREFIX}best_run.{m}"] = str(leaderboard.loc[idx, "run_name"])
    if headline and "run_name" in leaderboard.columns:
        tags["mlflow.note.content"] = _markdown(leaderboard, [m for m in headline
                                                              if m in leaderboard.columns])
    client.log_batch(parent_run_id, metrics=batch_metrics,
                     tags=[RunTag(k, v) for k, v in _clean_tags(tags).items()])
    with tempfile.TemporaryDirectory(prefix="recoeval-leaderboard-") as tmp:
        p = Path(tmp) / "leaderboard.csv"
        leaderboard.to_csv(p, index=False)
        client.log_artifact(parent_run_id, str(p))
    client.set_terminated(parent_run_id, status)
    return leaderboard


# ---------------------------------------------------------------------------------------------
# Nothing lost
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _fast_fail_http(max_retries: int = 1, timeout: int = 10,
                    backoff_factor: int = 1) -> Iterator[None]:
    """Lower MLflow's HTTP retries and timeout during an attempt (unless the user set them), so a
    dead server fails in seconds, not minutes (defaults: 7 retries with backoff, 120 s timeout).
    """
    wanted = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": str(max_retries),
              "MLFLOW_HTTP_REQUEST_TIMEOUT": str(timeout),
              "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": str(backoff_factor)}
    saved = {}
    for key, value in wanted.items():
        if key not in os.environ:
            saved[key] = None
            os.environ[key] = value
    try:
        yield
    finally:
        for key in saved:
            os.environ.pop(key, None)


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    msg = text[0] if text else ""
    return scrub_url(f"{type(err).__name__}: {msg}")[:500]


def _write_marker(path: Path, obj: Mapping[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def upload_or_mark_pending(path: str | Path, **kw: Any) -> str | None:
    """:func:`log_job_dir`, except that a store that cannot be reached does not fail the job.

    On success writes ``SYNCED`` (run id, URI, time) into the job directory and returns the run
    id. On any store or connection error writes ``PENDING`` (JSON: the scrubbed URI, the error,
    the upload arguments), prints one warning line to stderr naming the directory and the sync
    command, and returns None. Bad arguments (:class:`~recoeval_tracking.InputError`) still
    raise. HTTP retries and timeouts are lowered during the attempt (see ``_fast_fail_http``).

    Parameters
    ----------
    path : str or Path
        The job directory.
    **kw
        Keyword arguments of :func:`log_job_dir`.
    """
    from ..jobdir import PENDING, SYNCED

    root = Path(path)
    uri = resolve_tracking_uri(kw.get("tracking_uri"))
    kw = {**kw, "tracking_uri": uri}
    try:
        with _fast_fail_http():
            run_id = log_job_dir(root, **kw)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any store failure must leave the job usable
        record = {
            "tracking_uri": scrub_url(uri),
            "error": _first_line(err),
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "upload": {k: v for k, v in kw.items() if k != "tracking_uri"},
        }
        if record["upload"].get("tags"):
            record["upload"]["tags"] = _clean_tags(record["upload"]["tags"])
        if record["upload"].get("params"):
            record["upload"]["params"] = params_from_config(None, record["upload"]["params"])
        _write_marker(root / PENDING, record)
        print(f"recoeval: WARNING: could not log to the tracking store {scrub_url(uri)} "
              f"({record['error']}). Results are safe in {root} (marked PENDING); upload them "
              f"later with: recoeval-track-sync {root}", file=sys.stderr, flush=True)
        return None
    _write_marker(root / SYNCED, {
        "run_id": run_id, "tracking_uri": scrub_url(uri),
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
    (root / PENDING).unlink(missing_ok=True)
    return run_id


def finish_sweep_parent_or_mark_pending(sweep_dir: str | Path, parent_run_id: str,
                                        status: str = "FINISHED", **kw: Any) -> bool:
    """:func:`finish_sweep_parent`; when the store cannot be reached, write ``PENDING_SWEEP``
    into ``sweep_dir`` (the multirun directory) so that ``recoeval-track-sync`` closes the parent
    after uploading the pending jobs. Returns True when the parent was closed now.
    """
    if status not in _TERMINAL:
        raise param_error("status", "finish_sweep_parent_or_mark_pending",
                          f"one of {list(_TERMINAL)}", status)
    root = Path(sweep_dir)
    uri = resolve_tracking_uri(kw.pop("tracking_uri", None))
    try:
        with _fast_fail_http():
            finish_sweep_parent(parent_run_id, status, tracking_uri=uri, **kw)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001
        root.mkdir(parents=True, exist_ok=True)
        _write_marker(root / PENDING_SWEEP, {
            "parent_run_id": parent_run_id, "status": status, "tracking_uri": scrub_url(uri),
            "error": _first_line(err),
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
        print(f"recoeval: WARNING: could not close the sweep parent run {parent_run_id} on "
              f"{scrub_url(uri)} ({_first_line(err)}); marked {root / PENDING_SWEEP}. Close it "
              f"later with: recoeval-track-sync {root}", file=sys.stderr, flush=True)
        return False
    (root / PENDING_SWEEP).unlink(missing_ok=True)
    return True


# ---------------------------------------------------------------------------------------------
# Reading runs back for reports
# ---------------------------------------------------------------------------------------------

#: Files a report needs from a run's artifacts (the rest of the job directory is optional).
REPORT_ARTIFACTS = ("per_user.parquet", "metrics.json", "definitions.json", "curves.csv",
                    "dataset.json", "config.yaml", "overrides.yaml", "job.json")


def search_runs_for_report(*, tracking_uri: str | None = None,
                           experiment: str | None = None, sweep_id: str | None = None,
                           run_ids: Sequence[str] | None = None,
                           filter_string: str | None = None, include_parents: bool = False,
                           max_results: int = 5000) -> list[dict[str, Any]]:
    """Runs to compare, as plain dicts, selected by experiment, sweep id, run ids or a filter.

    Parameters
    ----------
    tracking_uri : str, optional
        See :func:`resolve_tracking_uri`.
    experiment : str, optional
        Experiment name; default: every experiment of the store (with ``sweep_id`` or
        ``filter_string``), or none needed (with ``run_ids``).
    sweep_id : str, optional
        Runs tagged ``recoeval.sweep_id`` with this value.
    run_ids : list of str, optional
        These runs, in this order (combined with the other selectors by intersection).
    filter_string : str, optional
        An MLflow search filter (``"params.`model.name` = 'als'"``), ANDed with the sweep id.
    include_parents : bool
        Keep sweep parent runs (tag ``recoeval.sweep_parent``); default False.
    max_results : int

    Returns
    -------
    list of dict
        ``run_id, run_name, experiment_id, status, start_time, params, tags, metrics`` (the
        latest value of each metric), oldest run first (or in ``run_ids`` order).

    Raises
    ------
    InputError
        When no selector is given, or an experiment does not exist.
    """
    func = "search_runs_for_report"
    for name, value in (("tracking_uri", tracking_uri), ("experiment", experiment),
                        ("sweep_id", sweep_id), ("filter_string", filter_string)):
        _check_str(value, name, func)
    if run_ids is not None and (isinstance(run_ids, str) or not all(
            isinstance(r, str) for r in run_ids)):
        raise param_error("run_ids", func, "a list of run ids (str) or None", run_ids)
    if not (experiment or sweep_id or run_ids or filter_string):
        raise param_error("experiment", func, "given, or one of sweep_id, run_ids, "
                          "filter_string", None, "Say which runs to compare.")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    from mlflow.entities import ViewType

    def as_dict(run) -> dict[str, Any]:
        return {"run_id": run.info.run_id, "run_name": run.info.run_name,
                "experiment_id": run.info.experiment_id, "status": run.info.status,
                "start_time": run.info.start_time, "params": dict(run.data.params),
                "tags": dict(run.data.tags), "metrics": dict(run.data.metrics)}

    def keep(run) -> bool:
        return include_parents or run.data.tags.get(_TAG_PREFIX + "sweep_parent") != "true"

    if run_ids and not (experiment or sweep_id or filter_string):
        return [as_dict(r) for r in (client.get_run(i) for i in run_ids)]
    if experiment:
        exp = client.get_experiment_by_name(experiment)
        if exp is None:
            names = [e.name for e in client.search_experiments()]
            raise param_error("experiment", func, f"an existing experiment {names[:10]}",
                              experiment)
        exp_ids = [exp.experiment_id]
    else:
        exp_ids = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    clauses = []
    if sweep_id:
        clauses.append(f"tags.`{_TAG_PREFIX}sweep_id` = '{sweep_id}'")
    if filter_string:
        clauses.append(f"({filter_string})" if " or " in filter_string.lower()
                       else filter_string)
    runs = client.search_runs(exp_ids, filter_string=" and ".join(clauses),
                              max_results=max_results, order_by=["attributes.start_time ASC"])
    out = [as_dict(r) for r in runs if keep(r)]
    if run_ids:
        by_id = {r["run_id"]: r for r in out}
        out = [by_id[i] for i in run_ids if i in by_id]
    return out


def find_sweep_parent(sweep_id: str, *, tracking_uri: str | None = None) -> str | None:
    """The run id of the parent run of sweep ``sweep_id`` (tag ``recoeval.sweep_parent``), or
    None when the sweep has no parent run."""
    _check_str(sweep_id, "sweep_id", "find_sweep_parent")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    from mlflow.entities import ViewType

    exp_ids = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    runs = client.search_runs(exp_ids, filter_string=(
        f"tags.`{_TAG_PREFIX}sweep_id` = '{sweep_id}' and "
        f"tags.`{_TAG_PREFIX}sweep_parent` = 'true'"), max_results=10)
    return runs[0].info.run_id if runs else None


def download_job_artifacts(run_id: str, dst: str | Path, *,
                           tracking_uri: str | None = None) -> Path:
    """Download the job-directory files of run ``run_id`` into ``dst`` (created), so that
    :func:`recoeval_tracking.jobdir.read_job_dir` can read them back.

    Only the files a report needs are fetched (:data:`REPORT_ARTIFACTS`, not the plots).

    Raises
    ------
    InputError
        When the run has no ``per_user.parquet`` (it was not logged from a job directory).
    """
    func = "download_job_artifacts"
    _check_str(run_id, "run_id", func)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    root = Path(dst)
    root.mkdir(parents=True, exist_ok=True)
    listed = {a.path for a in client.list_artifacts(run_id)}
    if "per_user.parquet" not in listed:
        raise param_error("run_id", func, "a run logged from a job directory (with a "
                          "per_user.parquet artifact)", run_id,
                          f"Its artifacts are: {sorted(listed)[:10]}.")
    saved = os.environ.get("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR")
    os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"  # one bar per file otherwise
    try:
        for name in REPORT_ARTIFACTS:
            if name in listed:
                client.download_artifacts(run_id, name, str(root))
    finally:
        if saved is None:
            os.environ.pop("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", None)
        else:
            os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = saved
    return root


def log_report_artifacts(paths: Sequence[str | Path], *, run_id: str | None = None,
                         tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT,
                         run_name: str | None = None, artifact_path: str | None = "report",
                         tags: Mapping[str, Any] | None = None) -> str:
    """Log report files (the HTML page, the Markdown, a folder of figures) as artifacts.

    Into ``run_id`` (e.g. the sweep's parent run; a finished run accepts artifacts) or else into
    a new FINISHED run of ``experiment`` tagged ``recoeval.report=true``. Returns the run id.
    """
    from mlflow.entities import RunTag

    func = "log_report_artifacts"
    for name, value in (("run_id", run_id), ("tracking_uri", tracking_uri),
                        ("run_name", run_name), ("artifact_path", artifact_path)):
        _check_str(value, name, func)
    _check_mapping(tags, "tags", func)
    if isinstance(paths, (str, Path)) or not paths:
        raise param_error("paths", func, "a non-empty list of files or folders", paths)
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise param_error("paths", func, "existing files or folders", missing)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    new_run = run_id is None
    if new_run:
        exp_id = _experiment_id(client, experiment, None, uri)
        run = client.create_run(exp_id, tags=_clean_tags({_TAG_PREFIX + "report": "true",
                                                          **(tags or {})}),
                                run_name=run_name or "report")
        run_id = run.info.run_id
    elif tags:
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in _clean_tags(tags).items()])
    for p in paths:
        p = Path(p)
        if p.is_dir():
            sub = f"{artifact_path}/{p.name}" if artifact_path else p.name
            client.log_artifacts(run_id, str(p), sub)
        else:
            client.log_artifact(run_id, str(p), artifact_path)
    if new_run:
        client.set_terminated(run_id, "FINISHED")
    return run_id
