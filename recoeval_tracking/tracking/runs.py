"""One MLflow run per job directory: :func:`log_job_dir`, and :func:`log_results` in one line;
:func:`log_job_dir_into_run` adds a job directory to a run the caller has open instead (the
user's own Hydra app, whose task may have started a run: :func:`active_run`).

What a run holds (logged from a job directory written by
:func:`recoeval_tracking.jobdir.write_job_dir`):

* **name**: short and distinct (:mod:`.names`: ``als f=64 reg=0.1`` in a sweep, dataset and
  model for a plain run; a sweep's job uploaded without a name gets the one the app gives it,
  :func:`~.names.job_run_name`); **description** (``mlflow.note.content``): one line, its
  model, the values its sweep varies, its data and split, its headline value
  (:func:`run_description`); **start and end**: the job's real times (``job.json``).
* **params**: the config the user chose flattened to dotted keys (``model.factors``,
  ``metrics.k``; tracking and Hydra settings left out) and the caller's ``params``; secret keys
  dropped, and settings left at None (a default that the code resolves) too: a param ``None``
  says nothing and MLflow cannot change it later. The model's constructor arguments that the
  config left to their defaults are params too (``model.shrink``). The metric definitions are
  never params: ``definitions.json`` and fingerprint tags.
* **metrics** (one :meth:`MlflowClient.log_batch`), exactly as computed (float64, never
  rounded: rounding is for text): the means of ``metrics.json`` (means at K,
  ``users_evaluated``, ``users_nan_<reason>``, ``<stage>_seconds``) and the leakage shares of
  ``dataset.json`` (:func:`leakage_metrics`: ``leakage_test_entries_share``...) at step 0, and
  each curve of ``curves.csv`` (``ndcg_at_k``...) with ``step = k`` for k = 1..K. The bounds
  ``_ci95_low``/``_ci95_high`` are not metrics (MLflow's chart view would list them first, in a
  section of their own): the tag ``recoeval.ci95`` holds them as JSON, as does ``metrics.json``.
* **tags**: ``recoeval.label`` (the run's display name, when given: also its name),
  ``recoeval.model`` (the model as built: ``CosineItemKNN(neighbours=50, shrink=10)``),
  ``recoeval.ci95``, ``recoeval.job_uid``, ``recoeval.sweep_id``, ``recoeval.version``, ``recoeval.k``,
  ``recoeval.metrics`` (every metric key at K), ``recoeval.headline`` (the few shown first:
  :func:`recoeval_tracking.metrics.results.headline_metrics`), ``recoeval.definitions_fingerprint``,
  ``recoeval.data_fingerprint``, ``recoeval.split_fingerprint``, ``recoeval.overrides``,
  ``mlflow.source.git.commit`` and ``recoeval.git_commit`` when the job ran in a git checkout,
  MLflow's context tags (``mlflow.source.name``, ``mlflow.user``),
  ``mlflow.parentRunId`` for sweep children.
* **inputs**: the dataset, with ``digest`` = its data fingerprint (context ``evaluation``).
* **artifacts**: the files of the job directory (``per_user.parquet``, ``metrics.json``,
  ``curves.csv``, ``definitions.json``, ``dataset.json``, ``config.yaml``, ``overrides.yaml``,
  ``job.json``, ``plots/``), and ``per_user_head.csv``, the first 1,000 users of the per-user
  table for MLflow's preview (it does not show Parquet). Hydra's own ``.hydra/`` folder is *not*
  uploaded: it holds the unscrubbed config.

Secrets: params and tags are cleaned by :mod:`.client`; the artifacts were already redacted when
the job directory was written.

Exactly once, whatever runs at the same time or dies midway:

* the upload holds the job directory's lock (:func:`recoeval_tracking.jobdir.markers.file_lock`),
  so the job itself and any number of ``recoeval-track-sync`` take turns on one directory;
* every job directory has a ``job_uid``; under the lock, the experiment is searched for runs
  tagged with it. A FINISHED one is the upload: its id is returned and nothing is logged. An
  unfinished one (an upload cut off midway: a killed job, a store that went away) is finished in
  place: what it lacks is logged (params, metrics and inputs it already holds are not logged
  twice, artifacts are written again) and it is set FINISHED. Extra unfinished ones are deleted;
* the directory is marked ``UPLOADING`` (the upload arguments) before the store is contacted and
  again with the run id once the run exists, then ``SYNCED`` (the run id) at the end, so a job
  killed at any moment is found and finished by ``recoeval-track-sync``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_optional, param_error
from ..jobdir import FILES, JobDir, check_job_dir, read_job_dir, write_job_dir
from ..jobdir.markers import (
    JOB_LOCK,
    PENDING,
    SYNCED,
    UPLOADED_FILES,
    UPLOADING,
    lock_if_writable,
    write_json_atomic,
)
from ..jobdir.redact import flatten_config, scrub_overrides, scrub_text
from ..metrics.results import Results, headline_metrics, relevance_text
from .client import (
    _TAG_PREFIX,
    DEFAULT_EXPERIMENT,
    _check_destination,
    _check_texts,
    _clean_params,
    _clean_tags,
    _client,
    _experiment_id,
    _now_ms,
    params_from_config,
    resolve_tracking_uri,
)
from .names import _get, _model_name, job_run_name, run_label, varied_values

__all__ = [
    "log_job_dir",
    "log_results",
    "upload_args",
    "upload_job",
    "job_lock",
    "set_marker",
    "LOCK_WAIT_SECONDS",
    "LABEL_TAG",
    "CI_TAG",
    "ci_tag_value",
    "read_ci_tag",
    "PRECISIONS",
    "log_job_dir_into_run",
    "active_run",
    "leakage_metrics",
    "run_description",
]

#: The tag holding a run's display name (the config's top-level ``label``; ``job.json``'s
#: ``label``), which is also its run name.
LABEL_TAG = _TAG_PREFIX + "label"

#: How long an upload waits for another process holding the job directory's lock.
LOCK_WAIT_SECONDS = 600.0


def _is_bound(key: str) -> bool:
    return key.endswith(("_ci95_low", "_ci95_high"))


#: Values accepted for ``precision`` (kept so that existing configs and calls go on working):
#: both log every value exactly as computed (float64). MLflow is a store that runs are read back
#: from (``mlflow.search_runs``), so it holds exact values; rounding is for text only (run names,
#: descriptions, the terminal).
PRECISIONS = ("auto", "exact")


def leakage_metrics(job: JobDir) -> dict[str, float]:
    """The shares of ``dataset.json``'s ``leakage`` record (how much the split lets training
    see the future: :func:`recoeval_tracking.splitting.measure_leakage`) as metrics, one per
    evaluation and share: ``leakage_test_entries_share``, ``leakage_test_users_share`` and,
    with a validation part, ``leakage_validation_entries_share`` and
    ``leakage_validation_users_share``. Empty without timestamps; a share without a
    denominator (None in the record) is left out."""
    record = (job.dataset or {}).get("leakage")
    out: dict[str, float] = {}
    if not isinstance(record, Mapping):
        return out
    for part in ("test", "validation"):  # the evaluations the record can hold
        figures = record.get(part)
        if not isinstance(figures, Mapping):
            continue
        for name in ("entries_share", "users_share"):
            value = figures.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if np.isfinite(value):
                    out[f"leakage_{part}_{name}"] = float(value)
    return out


def _metrics_for(job: JobDir, timestamp: int) -> list:
    """The means (step 0) and the @1..K curves (step k), exactly as ``metrics.json`` and
    ``curves.csv`` hold them (float64, never rounded); the confidence bounds are not metrics:
    MLflow's chart view would give them a section of their own, listed before the metrics
    (:data:`CI_TAG` holds them)."""
    from mlflow.entities import Metric

    out = [
        Metric(key, float(value), timestamp, 0)
        for key, value in job.metrics.items()
        if not _is_bound(key)
    ]
    out.extend(Metric(key, value, timestamp, 0) for key, value in leakage_metrics(job).items())
    curves = job.curves
    if len(curves):
        ks = curves["k"].to_numpy(dtype=np.int64)
        for name in job.curve_names:
            values = curves[name].to_numpy(dtype=np.float64)
            out.extend(Metric(name, float(v), timestamp, int(k)) for k, v in zip(ks, values))
    return out


#: The tag holding every metric's 95% interval as JSON, ``{"ndcg_at_10": [low, high], ...}``
#: (also in the ``metrics.json`` artifact).
CI_TAG = "recoeval.ci95"


def ci_tag_value(metrics: dict) -> str | None:
    """The :data:`CI_TAG` value of a job's ``metrics.json`` (None when it has no bounds)."""
    bounds = {
        key[: -len("_ci95_low")]: [metrics[key], metrics.get(key[:-4] + "_high")]
        for key in metrics
        if key.endswith("_ci95_low")
    }
    if not bounds:
        return None
    return json.dumps(
        {
            k: [None if v is None or not np.isfinite(v) else float(v) for v in pair]
            for k, pair in bounds.items()
        },
        separators=(",", ":"),
    )


def read_ci_tag(tags: dict) -> dict[str, tuple[float, float]]:
    """The bounds of a run's :data:`CI_TAG` (NaN where missing; empty without the tag)."""
    try:
        raw = json.loads(tags.get(CI_TAG) or "{}")
    except ValueError:
        return {}
    return {
        k: tuple(float("nan") if v is None else float(v) for v in pair)
        for k, pair in raw.items()
        if isinstance(pair, list) and len(pair) == 2
    }


def _without_none(config: Mapping) -> dict:
    """``config`` without the settings whose value is None, at every level (a section left
    empty by that goes too)."""
    out: dict = {}
    for k, v in config.items():
        if isinstance(v, Mapping) and v:
            v = _without_none(v)
            if not v:
                continue
        if v is not None:
            out[k] = v
    return out


def _job_times(job: JobDir) -> tuple[int | None, int | None]:
    """The job's real start and end (ms since the epoch): ``job.json``'s ``created_at`` (when
    the folder was complete) less the job's ``total_seconds``; Nones when not recorded."""
    created = job.job.get("created_at")
    if not created:
        return None, None
    try:
        end = _dt.datetime.fromisoformat(str(created)).timestamp()
    except ValueError:
        return None, None
    total = job.metrics.get("total_seconds")
    start = end - float(total) if total is not None and np.isfinite(total) else end
    return int(start * 1000), int(end * 1000)


def _context_tags() -> dict[str, str]:
    """MLflow's own run context (``mlflow.source.name``, ``mlflow.user``, git when the entry
    point is in a checkout), as ``mlflow.start_run`` would set it."""
    try:
        from mlflow.tracking.context.registry import resolve_tags

        return dict(resolve_tags())
    except Exception:  # noqa: BLE001 - context is a nicety, never a reason to fail an upload
        return {}


def _fingerprints(job: JobDir) -> dict[str, str]:
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


def _dataset_input(job: JobDir):
    from mlflow.entities import Dataset, DatasetInput, InputTag

    ds = job.dataset
    if not ds:
        return None
    digest = ds.get("data_fingerprint", ds.get("fingerprint"))
    if not digest:
        return None
    source = ds.get("source") or ds.get("path") or str(job.path / FILES["dataset"])
    source = scrub_text(str(source))
    source_type = "http" if source.startswith(("http://", "https://")) else "local"
    source_json = json.dumps({"url" if source_type == "http" else "uri": source})
    profile = {
        k: v
        for k, v in ds.items()
        if isinstance(v, (int, float, str, bool)) and k not in ("source", "path")
    }
    return DatasetInput(
        Dataset(
            name=str(ds.get("name", "dataset"))[:500],
            digest=str(digest)[:36],
            source_type=source_type,
            source=source_json,
            profile=json.dumps(profile, default=str),
        ),
        tags=[InputTag(key="mlflow.data.context", value="evaluation")],
    )


def _missing_metrics(client, run, metrics: list) -> list:
    """The metrics of ``metrics`` that the run does not hold yet (same key and step)."""
    have = run.data.metrics
    out = []
    history: dict[str, set[int]] = {}
    for m in metrics:
        if m.key not in have:
            out.append(m)
            continue
        if m.key not in history:
            history[m.key] = {h.step for h in client.get_metric_history(run.info.run_id, m.key)}
        if m.step not in history[m.key]:
            out.append(m)
    return out


#: Rows of the per-user table in its preview (MLflow's UI shows CSV files, not Parquet).
PREVIEW_ROWS = 1000


def _log_preview(client: Any, run_id: str, per_user: Path, artifact_path: str | None) -> None:
    """``per_user_head.csv``: the first :data:`PREVIEW_ROWS` users of ``per_user.parquet``, so
    that the table can be looked at in the UI (the Parquet stays the full record)."""
    if not per_user.is_file():
        return
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(per_user)
    head = next(pf.iter_batches(batch_size=PREVIEW_ROWS), None)
    if head is None:
        return
    with tempfile.TemporaryDirectory(prefix="recoeval-preview-") as tmp:
        out = Path(tmp) / "per_user_head.csv"
        head.to_pandas().to_csv(out, index=False, float_format="%.6g")
        client.log_artifact(run_id, str(out), artifact_path)


def _headline_value(job: JobDir) -> str | None:
    """``ndcg_at_10 = 0.3521 (95% interval 0.3401 to 0.3642)``: the first headline metric the
    job computed (:func:`~recoeval_tracking.metrics.results.headline_metrics`), rounded for
    text; None without one."""
    values = job.metrics
    for key in headline_metrics([*job.metric_columns, *values], job.k):
        value = values.get(key)
        if isinstance(value, (int, float)) and np.isfinite(value):
            text = f"{key} = {value:.4f}"
            low, high = values.get(f"{key}_ci95_low"), values.get(f"{key}_ci95_high")
            if all(isinstance(b, (int, float)) and np.isfinite(b) for b in (low, high)):
                text += f" (95% interval {low:.4f} to {high:.4f})"
            return text
    return None


def run_description(job: JobDir, swept: list[str] | None = None) -> str:
    """The one line a job's run shows as its description (``mlflow.note.content``): its model,
    the values that tell it from the other jobs (those of the sweep's ``swept`` keys, else the
    ``model.*`` overrides), its data and split, and its headline value, e.g. ``ease with
    lam=500 on movielens_100k, split temporal_user, evaluated on test: ndcg_at_10 = 0.3521
    (95% interval 0.3401 to 0.3642).``"""
    model = job.job.get("model") if isinstance(job.job.get("model"), Mapping) else {}
    text = run_label(job.config) or _model_name(job.config, model.get("name")) or "the model"
    values = varied_values(job.overrides, swept)
    if values:
        text += " with " + " ".join(values)
    dataset = _get(job.config, "dataset", "name", "kind")
    if dataset:
        text += f" on {dataset}"
    split = _get(job.config, "split", "name")
    if split:
        fold = (job.config.get("split") or {}).get("fold")
        text += f", split {split}" + (f" fold {fold}" if fold is not None else "")
    protocol = (job.dataset or {}).get("protocol")
    if isinstance(protocol, Mapping) and protocol.get("evaluated_on"):
        text += f", evaluated on {protocol['evaluated_on']}"
    headline = _headline_value(job)
    return scrub_text(text + (f": {headline}." if headline else "."))


def _run_tags(job: JobDir, sweep_id: str | None, extra: Mapping[str, Any] | None) -> dict[str, str]:
    tags: dict[str, Any] = {
        _TAG_PREFIX + "job_uid": job.job_uid or None,
        _TAG_PREFIX + "sweep_id": sweep_id or job.job_uid or None,
        _TAG_PREFIX + "version": job.job.get("package_version"),
        _TAG_PREFIX + "k": job.k,
        _TAG_PREFIX + "metrics": ",".join(job.metric_columns),
        _TAG_PREFIX + "headline": ",".join(
            headline_metrics([*job.metric_columns, *job.metrics], job.k)
        ),
        _TAG_PREFIX + "topk_only": str(job.topk_only).lower(),
    }
    defs = job.definitions.get("definitions", job.definitions) if job.definitions else {}
    if isinstance(defs, dict) and defs:
        tags[_TAG_PREFIX + "relevance"] = relevance_text(defs)
    for name, value in _fingerprints(job).items():
        tags[_TAG_PREFIX + name] = value
    protocol = (job.dataset or {}).get("protocol")
    if isinstance(protocol, Mapping):  # a fair study's phase: what the numbers were read on
        tags[_TAG_PREFIX + "evaluated_on"] = protocol.get("evaluated_on")
        if protocol.get("validation"):
            tags[_TAG_PREFIX + "phase"] = (
                "selection" if protocol.get("evaluated_on") == "validation" else "test"
            )
            tags[_TAG_PREFIX + "refit"] = str(bool(protocol.get("refit"))).lower()
    tags[CI_TAG] = ci_tag_value(dict(job.metrics))
    if job.overrides:
        tags[_TAG_PREFIX + "overrides"] = " ".join(scrub_overrides(job.overrides))
    model = job.job.get("model") if isinstance(job.job.get("model"), Mapping) else {}
    tags[LABEL_TAG] = job.job.get("label") or run_label(job.config)
    tags[_TAG_PREFIX + "model"] = model.get("description")
    commit = job.job.get("git_commit")
    if commit:
        tags["mlflow.source.git.commit"] = commit
        tags[_TAG_PREFIX + "git_commit"] = commit
        if job.job.get("git_dirty") is not None:
            tags[_TAG_PREFIX + "git_dirty"] = str(bool(job.job["git_dirty"])).lower()
    if extra:
        tags.update(extra)
    return _clean_tags(tags)


def _upload(
    client,
    run_id: str,
    job: JobDir,
    *,
    params: dict[str, str],
    tags: dict[str, str],
    artifact_path: str | None,
    existing_params: Mapping[str, str] | None = None,
    resume=None,
) -> None:
    """Metrics, params and tags in one batch, then the dataset input, then the artifacts.

    ``resume``: the run as the store holds it, when finishing an upload cut off midway; only
    the metrics and inputs it lacks are logged (artifacts are written again, the same files).
    """
    from mlflow.entities import Param, RunTag

    if resume is not None:
        existing_params = resume.data.params
    if existing_params:
        clash = {k for k, v in params.items() if k in existing_params and existing_params[k] != v}
        if clash:
            print(
                f"recoeval: params already set with other values in run {run_id} were kept: "
                f"{', '.join(sorted(clash))}",
                file=sys.stderr,
            )
        params = {k: v for k, v in params.items() if k not in existing_params}
    metrics = _metrics_for(job, _now_ms())
    if resume is not None:
        metrics = _missing_metrics(client, resume, metrics)
    client.log_batch(
        run_id,
        metrics=metrics,
        params=[Param(k, v) for k, v in params.items()],
        tags=[RunTag(k, v) for k, v in tags.items()],
    )
    ds_input = _dataset_input(job)
    if ds_input is not None and not (resume is not None and resume.inputs.dataset_inputs):
        client.log_inputs(run_id, datasets=[ds_input])
    for name in UPLOADED_FILES:
        p = job.path / name
        if p.is_file():
            client.log_artifact(run_id, str(p), artifact_path)
        elif p.is_dir():  # the per-user parts of a distributed evaluation
            client.log_artifacts(
                run_id, str(p), f"{artifact_path}/{name}" if artifact_path else name
            )
    plots = job.path / FILES["plots"]
    if plots.is_dir() and any(plots.iterdir()):
        sub = f"{artifact_path}/plots" if artifact_path else "plots"
        client.log_artifacts(run_id, str(plots), sub)
    _log_preview(client, run_id, job.path / FILES["per_user"], artifact_path)


def _job_params(job: JobDir, params: Mapping[str, Any] | None) -> dict[str, str]:
    """The config as dotted params, and the model's constructor arguments that the config left
    to their defaults (``job.json``'s ``model.args``, as ``model.<arg>``); the metric
    definitions stay in ``definitions.json`` and their fingerprints in tags, never params."""
    flat: dict[str, Any] = {}
    if job.config:
        flat.update(
            {
                k: v
                for k, v in flatten_config(_without_none(job.config)).items()
                if not k.startswith(("tracking.", "hydra.", "definitions."))
            }
        )
    if params:
        flat.update(flatten_config(_without_none(params)))
    model = job.job.get("model")
    args = model.get("args") if isinstance(model, Mapping) else None
    if isinstance(args, Mapping):
        defaults = flatten_config(_without_none({"model": dict(args)}))
        flat.update({k: v for k, v in defaults.items() if k not in flat})
    return _clean_params(flat)


def _find_job_runs(client, experiment_id: str, job_uid: str) -> list:
    """The runs tagged with ``job_uid``, oldest first."""
    runs = client.search_runs(
        [experiment_id], filter_string=f"tags.`{_TAG_PREFIX}job_uid` = '{job_uid}'", max_results=100
    )
    return sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def set_marker(root: Path, name: str, record: Mapping[str, Any] | None) -> None:
    """Write the marker ``name`` into the job directory ``root`` (None: remove it). A folder
    that cannot be written (read-only, full) only loses the marker: the upload goes on."""
    try:
        if record is None:
            (root / name).unlink(missing_ok=True)
        else:
            write_json_atomic(root / name, dict(record))
    except OSError as err:
        if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT):
            raise
        print(
            f"recoeval: WARNING: could not write the marker {name} in {root} ({err.strerror}).",
            file=sys.stderr,
        )


def job_lock(root: Path, timeout: float | None = LOCK_WAIT_SECONDS):
    """Hold the job directory's lock (a read-only folder is used without one)."""
    return lock_if_writable(root / JOB_LOCK, timeout=timeout, what=f"the job directory {root}")


def upload_args(
    *,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    sweep_id: str | None = None,
    tags: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    artifact_location: str | None = None,
    func: str = "log_job_dir",
    precision: str = "auto",
) -> dict[str, Any]:
    """The upload arguments of :func:`log_job_dir`, checked and cleaned (secrets dropped), as
    recorded in the ``UPLOADING`` and ``PENDING`` markers."""
    _check_texts(
        func,
        run_name=run_name,
        parent_run_id=parent_run_id,
        sweep_id=sweep_id,
        artifact_location=artifact_location,
    )
    if not isinstance(experiment, str) or not experiment:
        raise param_error("experiment", func, "a non-empty str", experiment)
    check_optional(tags, Mapping, "tags", func)
    check_optional(params, Mapping, "params", func)
    if precision not in PRECISIONS:
        raise param_error("precision", func, f"one of {list(PRECISIONS)}", precision)
    return {
        "experiment": experiment,
        "run_name": run_name,
        "parent_run_id": parent_run_id,
        "sweep_id": sweep_id,
        "tags": _clean_tags(tags) if tags else None,
        "params": params_from_config(None, _without_none(params)) if params else None,
        "artifact_location": artifact_location,
        "precision": precision,
    }


def upload_job(
    root: Path,
    uri: str,
    upload: Mapping[str, Any],
    *,
    job: JobDir | None = None,
    swept: list[str] | None = None,
) -> str:
    """Log the job directory ``root`` as one run of ``uri``, exactly once (the rules in the
    module docstring); the caller holds the directory's lock (:func:`job_lock`). Returns the
    run id. On an error the directory stays marked ``UPLOADING``. ``job``: the folder as
    :func:`~recoeval_tracking.jobdir.check_job_dir` returned it under this lock (else it is
    checked here). ``swept``: the keys its sweep varies (its sweep record's), which its name,
    when the upload gives none, and its description show."""
    from ..jobdir.redact import scrub_url

    if job is None:  # every file readable, no link: before any run is made
        job = check_job_dir(root)
    marker = {
        "tracking_uri": scrub_url(uri),
        "run_id": None,
        "pid": os.getpid(),
        "time": _now_iso(),
        "upload": dict(upload),
    }
    set_marker(root, UPLOADING, marker)
    client = _client(uri)
    exp_id = _experiment_id(client, upload["experiment"], upload.get("artifact_location"), uri)
    runs = _find_job_runs(client, exp_id, job.job_uid)
    done = [r for r in runs if r.info.status == "FINISHED"]
    if done:
        return _synced(root, done[0].info.run_id, uri)
    resume = runs[0] if runs else None
    for extra in runs[1:]:
        client.delete_run(extra.info.run_id)
    run_tags = {
        "mlflow.note.content": run_description(job, swept),
        **_run_tags(job, upload.get("sweep_id"), upload.get("tags")),
    }
    if upload.get("parent_run_id"):
        run_tags["mlflow.parentRunId"] = upload["parent_run_id"]
    start_ms, end_ms = _job_times(job)
    if resume is None:
        model = job.job.get("model") if isinstance(job.job.get("model"), Mapping) else {}
        name = upload.get("run_name") or job_run_name(
            job.config,
            job.overrides,
            model_name=model.get("name"),
            swept=swept,
            folder=root.name if upload.get("sweep_id") else None,
        )
        run_tags = _clean_tags({**_context_tags(), **run_tags})
        run_id = client.create_run(
            exp_id, tags=run_tags, run_name=name, start_time=start_ms
        ).info.run_id
        run_tags = {}
    else:
        run_id = resume.info.run_id
        run_tags = {k: v for k, v in run_tags.items() if resume.data.tags.get(k) != v}
    set_marker(root, UPLOADING, {**marker, "run_id": run_id})
    try:
        _upload(
            client,
            run_id,
            job,
            params=_job_params(job, upload.get("params")),
            tags=run_tags,
            artifact_path=None,
            resume=resume,
        )
    except BaseException:
        with contextlib.suppress(Exception):
            client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED", end_time=end_ms)
    return _synced(root, run_id, uri)


def _synced(root: Path, run_id: str, uri: str) -> str:
    from ..jobdir.redact import scrub_url

    set_marker(root, SYNCED, {"run_id": run_id, "tracking_uri": scrub_url(uri), "time": _now_iso()})
    set_marker(root, UPLOADING, None)
    set_marker(root, PENDING, None)
    return run_id


def log_job_dir(
    path: str | Path,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    sweep_id: str | None = None,
    tags: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    artifact_location: str | None = None,
    precision: str = "auto",
) -> str:
    """Log a job directory as one MLflow run and return its run id.

    Parameters
    ----------
    path : str or Path
        A job directory written by :func:`recoeval_tracking.jobdir.write_job_dir`.
    tracking_uri : str, optional
        See :func:`~recoeval_tracking.tracking.client.resolve_tracking_uri`.
    experiment : str
        Experiment name (created if needed, with the tag
        ``mlflow.experimentKind=custom_model_development`` so the UI shows the runs table).
    run_name : str, optional
        Defaults to a name built from the job's overrides (tracking keys left out).
    parent_run_id : str, optional
        The sweep parent (see :func:`recoeval_tracking.tracking.sweeps.create_sweep_parent`):
        the run is tagged ``mlflow.parentRunId``.
    sweep_id : str, optional
        The ``recoeval.sweep_id`` tag (defaults to the job's own uid).
    tags, params : dict, optional
        More tags and params (params are flattened to dotted keys); secrets dropped.
    artifact_location : str, optional
        Artifact location for a new experiment (default: ``mlartifacts`` beside a SQLite
        database; the server's default for a server).
    precision : {"auto", "exact"}
        Accepted for compatibility; both log every value exactly as computed (float64, as
        ``metrics.json`` holds it: a run's ``ndcg_at_10`` is the mean of its
        ``per_user.parquet`` column over the users where it is defined). Rounding is for text
        only (run names, descriptions, the terminal).

    Returns
    -------
    str
        The run id. When the experiment already holds a FINISHED run with this job's uid, that
        run's id is returned and nothing is logged (exactly once; see the module docstring).

    Raises
    ------
    InputError
        Bad arguments, or ``path`` is not a complete job directory.
    LockTimeout
        Another process held the directory's lock for more than ten minutes.
    """
    check_optional(tracking_uri, str, "tracking_uri", "log_job_dir")
    upload = upload_args(
        experiment=experiment,
        run_name=run_name,
        parent_run_id=parent_run_id,
        sweep_id=sweep_id,
        tags=tags,
        params=params,
        artifact_location=artifact_location,
        precision=precision,
    )
    root = Path(path)
    read_job_dir(root, per_user=False)  # a bad path fails before any lock or store
    uri = resolve_tracking_uri(tracking_uri)
    with job_lock(root):
        return upload_job(root, uri, upload)


def active_run() -> tuple[str | None, str | None]:
    """The id and store of the run open in this process (``mlflow.start_run()`` of a training
    script, or of the task of the user's own Hydra app), or Nones."""
    import mlflow

    active = mlflow.active_run()
    if active is None:
        return None, None
    return active.info.run_id, mlflow.get_tracking_uri()


def _log_into_run(
    path: Path,
    run_id: str,
    tracking_uri: str | None,
    tags: Mapping[str, Any] | None,
    params: Mapping[str, Any] | None,
    artifact_path: str | None,
) -> str:
    """Add the job directory ``path`` to the existing run ``run_id`` (left open)."""
    client = _client(resolve_tracking_uri(tracking_uri))
    run = client.get_run(run_id)
    job = read_job_dir(path, per_user=False)
    _upload(
        client,
        run_id,
        job,
        params=_job_params(job, params),
        tags=_run_tags(job, None, tags),
        artifact_path=artifact_path,
        existing_params=run.data.params,
    )
    return run_id


def log_results(
    results,
    *,
    run_id: str | None = None,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
    config: Mapping[str, Any] | str | None = None,
    overrides: list[str] | None = None,
    dataset: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    extra_metrics: Mapping[str, Any] | None = None,
    artifact_path: str | None = None,
    job_dir: str | Path | None = None,
    plots: bool | str = True,
    precision: str = "auto",
) -> str:
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
        Defaults to the active run's store when there is one, else
        :func:`~recoeval_tracking.tracking.client.resolve_tracking_uri`.
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
    plots : bool or "all"
        Write and log the plots (see :func:`recoeval_tracking.jobdir.write_job_dir`).
    precision : {"auto", "exact"}
        As in :func:`log_job_dir`.

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
    func = "log_results"
    if not isinstance(results, Results):
        raise param_error("results", func, "a recoeval_tracking Results object", results)
    _check_destination(func, run_id, tracking_uri, run_name, artifact_path)
    check_optional(tags, Mapping, "tags", func)
    check_optional(params, Mapping, "params", func)
    if config is not None and not isinstance(config, (Mapping, str)):
        raise param_error("config", func, "a plain dict, YAML text or None", config)
    if run_id is None and tracking_uri is None:
        run_id, tracking_uri = active_run()

    with contextlib.ExitStack() as stack:
        if job_dir is None:
            job_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="recoeval-job-"))
        path = write_job_dir(
            results,
            job_dir,
            config_yaml=config,
            overrides=overrides,
            dataset=dataset,
            extra_metrics=extra_metrics,
            plots=plots,
        )
        if run_id is None:
            return log_job_dir(
                path,
                tracking_uri=tracking_uri,
                experiment=experiment,
                run_name=run_name,
                tags=tags,
                params=params,
                precision=precision,
            )
        if precision not in PRECISIONS:
            raise param_error("precision", func, f"one of {list(PRECISIONS)}", precision)
        return _log_into_run(path, run_id, tracking_uri, tags, params, artifact_path)


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
    _check_texts(
        "log_job_dir_into_run",
        run_id=run_id,
        tracking_uri=tracking_uri,
        sweep_id=sweep_id,
        parent_run_id=parent_run_id,
    )
    tags = {_TAG_PREFIX + "sweep_id": sweep_id, "mlflow.parentRunId": parent_run_id}
    return _log_into_run(
        Path(path), run_id, tracking_uri, {k: v for k, v in tags.items() if v}, params, None
    )
