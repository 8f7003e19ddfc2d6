"""What a job's MLflow run holds besides its params: metrics (the means; the confidence bounds in
one tag), the job's real start and end, MLflow's run context, fingerprint tags, the dataset
input."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping

import numpy as np

from ..jobdir import FILES, JobDir
from ..jobdir.redact import scrub_text

__all__ = ["CI_TAG", "ci_tag_value", "read_ci_tag", "PRECISIONS", "logged_value"]


def _is_bound(key: str) -> bool:
    return key.endswith(("_ci95_low", "_ci95_high"))


#: Values of ``precision``: ``auto`` rounds each logged mean to its own resolution
#: (:func:`logged_value`), ``exact`` logs every value as computed.
PRECISIONS = ("auto", "exact")


def _decimals(job: JobDir) -> dict[str, int]:
    """Decimals kept per metric under ``precision="auto"``: two significant digits of the
    half-width of its 95% interval (0.3521 for a half-width of 0.015: the dropped digits are a
    hundredth of the uncertainty), for the metrics that have one."""
    out = {}
    for key, low in job.metrics.items():
        if not key.endswith("_ci95_low"):
            continue
        base = key[:-len("_ci95_low")]
        high = job.metrics.get(base + "_ci95_high")
        if low is None or high is None or not np.isfinite(low) or not np.isfinite(high) \
                or high <= low:
            continue
        out[base] = max(0, 1 - int(np.floor(np.log10((high - low) / 2)))) + 1
    return out


def logged_value(key: str, value: float, decimals: dict[str, int] | None = None) -> float:
    """The value logged for ``key`` under ``precision="auto"``: rounded to the decimals of
    :func:`_decimals` (means with an interval), timings to the millisecond, whole numbers kept,
    other values to 4 significant digits. The job directory keeps the exact values."""
    value = float(value)
    if not np.isfinite(value) or value == 0.0 or value.is_integer():
        return value
    if decimals and key in decimals:
        return round(value, decimals[key])
    if key.endswith("_seconds"):
        return round(value, 3)
    return round(value, 3 - int(np.floor(np.log10(abs(value)))))


def _metrics_for(job: JobDir, timestamp: int, precision: str = "auto") -> list:
    """The means (step 0) and the @1..K curves (step k); the confidence bounds are not metrics:
    MLflow's chart view would give them a section of their own, listed before the metrics
    (:data:`CI_TAG` holds them). ``precision``: see :data:`PRECISIONS`."""
    from mlflow.entities import Metric

    exact = precision == "exact"
    decimals = {} if exact else _decimals(job)

    def shown(key: str, value: float) -> float:
        return float(value) if exact else logged_value(key, value, decimals)

    out = [Metric(key, shown(key, value), timestamp, 0)
           for key, value in job.metrics.items() if not _is_bound(key)]
    curves = job.curves
    if len(curves):
        ks = curves["k"].to_numpy(dtype=np.int64)
        for name in job.curve_names:
            at_k = f"{name[:-len('_at_k')]}_at_{job.k}" if name.endswith("_at_k") else name
            values = curves[name].to_numpy(dtype=np.float64)
            out.extend(Metric(name, shown(at_k, v), timestamp, int(k))
                       for k, v in zip(ks, values))
    return out


#: The tag holding every metric's 95% interval as JSON, ``{"ndcg_at_10": [low, high], ...}``
#: (also in the ``metrics.json`` artifact).
CI_TAG = "recoeval.ci95"


def ci_tag_value(metrics: dict) -> str | None:
    """The :data:`CI_TAG` value of a job's ``metrics.json`` (None when it has no bounds)."""
    bounds = {key[:-len("_ci95_low")]: [metrics[key], metrics.get(key[:-4] + "_high")]
              for key in metrics if key.endswith("_ci95_low")}
    if not bounds:
        return None
    return json.dumps({k: [None if v is None or not np.isfinite(v) else float(v) for v in pair]
                       for k, pair in bounds.items()}, separators=(",", ":"))


def read_ci_tag(tags: dict) -> dict[str, tuple[float, float]]:
    """The bounds of a run's :data:`CI_TAG` (NaN where missing; empty without the tag)."""
    try:
        raw = json.loads(tags.get(CI_TAG) or "{}")
    except ValueError:
        return {}
    return {k: tuple(float("nan") if v is None else float(v) for v in pair)
            for k, pair in raw.items() if isinstance(pair, list) and len(pair) == 2}


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
    profile = {k: v for k, v in ds.items()
               if isinstance(v, (int, float, str, bool)) and k not in ("source", "path")}
    return DatasetInput(
        Dataset(name=str(ds.get("name", "dataset"))[:500], digest=str(digest)[:36],
                source_type=source_type, source=source_json,
                profile=json.dumps(profile, default=str)),
        tags=[InputTag(key="mlflow.data.context", value="evaluation")])
