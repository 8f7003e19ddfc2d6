"""What a job's MLflow run holds besides its params: metrics (the means, exact; the confidence
bounds in one tag), the job's real start and end, MLflow's run context, fingerprint tags, the
dataset input, the per-user table's CSV preview."""

from __future__ import annotations

import datetime as _dt
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..jobdir import FILES, JobDir
from ..jobdir.redact import scrub_text

__all__ = ["CI_TAG", "ci_tag_value", "read_ci_tag", "PRECISIONS"]


def _is_bound(key: str) -> bool:
    return key.endswith(("_ci95_low", "_ci95_high"))


#: Values accepted for ``precision`` (kept so that existing configs and calls go on working):
#: both log every value exactly as computed (float64). MLflow is a store that runs are read back
#: from (``mlflow.search_runs``), so it holds exact values; rounding is for text only (run names,
#: descriptions, the terminal).
PRECISIONS = ("auto", "exact")


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
