"""The runs a report compares, as plain data: :class:`RunData`, read from a job directory or a
tracking store's copy of one, and the fingerprints that decide whether runs are comparable.

Which runs and metrics are compared is decided in one place,
:mod:`recoeval_tracking.reporting.comparability`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..jobdir import read_job_dir
from ..jobdir.redact import flatten_config
from ..metrics.evaluate import metric_fingerprints
from ..metrics.registry import greater_is_better

__all__ = ["RunData", "fingerprints_from", "FINGERPRINT_KINDS"]

#: The fingerprints recorded per run (``definitions`` is the whole record's; comparability of
#: metrics is judged by the per-metric fingerprints).
FINGERPRINT_KINDS = ("data", "split", "definitions")


@dataclass
class RunData:
    """One run as the report sees it.

    Attributes
    ----------
    run_id : str
        Its tracking run id (or any unique label, e.g. the job directory for local runs).
    name : str
        Shown in the tables.
    per_user : pandas.DataFrame
        ``user_id`` (original ids), optionally ``n_train``/``n_test``, one column per metric.
    params : dict
        Flattened config (``model.factors``...): the swept ones become x axes.
    curves : pandas.DataFrame or None
        The ``curves.csv`` layout: ``k``, ``<curve>``, ``<curve>_ci95_low/high``.
    fingerprints : dict
        ``data``, ``split``, ``definitions`` (missing when not recorded); ``users`` for a
        ``Results`` object, which records no data or split fingerprint
        (:func:`~recoeval_tracking.reporting.comparability.users_fingerprint`).
    metrics : dict
        Means as logged (for cross-checks; not used in the statistics).
    tags : dict
        Tracking tags (``recoeval.sweep_id``...), for selecting the baseline by tag.
    source : str
        Where the run came from (``mlflow run <id>`` or a path).
    config : dict or None
        The run's resolved config, nested (``config.yaml``), when known.
    metric_fingerprints : dict
        One fingerprint per metric column (missing: the ``definitions`` one stands for all).
    study : dict
        What the job folder's ``dataset.json`` says of the study: ``protocol`` (the part
        evaluated, whether a validation part and a refit came first) and ``leakage``
        (:func:`recoeval_tracking.splitting.measure_leakage`); empty for a run built in Python.
    """

    run_id: str
    name: str
    per_user: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    curves: pd.DataFrame | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    source: str = ""
    config: dict[str, Any] | None = None
    metric_fingerprints: dict[str, str] = field(default_factory=dict)
    study: dict[str, Any] = field(default_factory=dict)

    def metric_fingerprint(self, metric: str) -> str:
        """The fingerprint of this run's definition of ``metric`` (the whole definitions
        fingerprint when no per-metric one is known; empty when none is)."""
        return self.metric_fingerprints.get(metric) or self.fingerprints.get("definitions", "")

    @classmethod
    def from_job_dir(
        cls,
        path: str | Path,
        *,
        run_id: str | None = None,
        name: str | None = None,
        params: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
        source: str | None = None,
    ) -> RunData:
        """Read a job directory written by :func:`recoeval_tracking.jobdir.write_job_dir`.

        The data and split fingerprints come from ``dataset.json`` (``data_fingerprint`` or
        ``fingerprint``; ``split_fingerprint``, also accepted nested as ``split.fingerprint``),
        the definitions fingerprint from ``definitions.json``; params are the flattened
        ``config.yaml`` updated with ``params``.
        """
        job = read_job_dir(path)
        flat: dict[str, Any] = dict(flatten_config(job.config)) if job.config else {}
        flat.update(params or {})
        label = name or _job_dir_name(Path(path), job)
        return cls(
            run_id=run_id or str(Path(path)),
            name=label,
            per_user=job.per_user if job.per_user is not None else pd.DataFrame(),
            params=flat,
            curves=job.curves if len(job.curves) else None,
            fingerprints=fingerprints_from(job.dataset, job.fingerprint),
            metrics=dict(job.metrics),
            tags=dict(tags or {}),
            source=source or str(Path(path)),
            config=job.config,
            metric_fingerprints=_job_metric_fingerprints(job),
            study={k: (job.dataset or {}).get(k) for k in ("protocol", "leakage")},
        )


def _job_dir_name(path: Path, job: Any) -> str:
    """The name a job directory's run gets in MLflow (:func:`~recoeval_tracking.tracking.names.job_run_name`:
    the model's name the job recorded and the keys its sweep varies, read from the sweep
    folder's ``recoeval_sweep.json``; else its dataset and model), falling back on the folder's
    name."""
    import json

    from ..tracking.names import job_run_name

    swept = None
    marker = path.parent / "recoeval_sweep.json"
    if marker.is_file():
        try:
            swept = list(json.loads(marker.read_text(encoding="utf-8")).get("swept_keys") or [])
        except (OSError, ValueError, AttributeError):
            swept = None
    name = job_run_name(
        job.config,
        job.overrides,
        model_name=((job.job or {}).get("model") or {}).get("name"),
        swept=swept,
        folder=path.name if swept is not None else None,
    )
    return name or path.name


def _job_metric_fingerprints(job: Any) -> dict[str, str]:
    """Per-metric fingerprints derived from the definitions record by today's rule (so a folder
    written when the metrics a ranked input left out still entered every print compares
    alike), else as recorded; empty when neither is there."""
    if not job.definitions:
        return dict(job.metric_fingerprints or {})
    columns = list(job.metric_columns) + list(job.metrics)
    derived = metric_fingerprints(job.definitions, columns)
    return {**dict(job.metric_fingerprints or {}), **derived}


def fingerprints_from(
    dataset: Mapping[str, Any] | None, definitions_fp: str | None
) -> dict[str, str]:
    """``{"data", "split", "definitions"}`` from a ``dataset.json`` dict and the definitions
    fingerprint, tolerant of the key spellings in use (missing ones are left out)."""
    ds = dict(dataset or {})
    out: dict[str, str] = {}
    data_fp = ds.get("data_fingerprint") or ds.get("fingerprint")
    split_fp = ds.get("split_fingerprint")
    for key in ("data", "dataset"):
        sub = ds.get(key)
        if isinstance(sub, Mapping) and not data_fp:
            data_fp = sub.get("fingerprint") or sub.get("data_fingerprint")
    sub = ds.get("split")
    if isinstance(sub, Mapping) and not split_fp:
        split_fp = sub.get("fingerprint") or sub.get("split_fingerprint")
    if data_fp:
        out["data"] = str(data_fp)
    if split_fp:
        out["split"] = str(split_fp)
    if definitions_fp:
        out["definitions"] = str(definitions_fp)
    return out


def _check_runs(runs: Any, func: str) -> list[RunData]:
    if isinstance(runs, RunData) or not isinstance(runs, Sequence) or not runs:
        raise param_error("runs", func, "a non-empty list of RunData", runs)
    seen: set[str] = set()
    for i, r in enumerate(runs):
        if not isinstance(r, RunData):
            raise param_error(
                "runs", func, "a list of RunData", f"{r!r} at position {i}", got_is_text=True
            )
        if r.run_id in seen:
            raise param_error(
                "runs", func, "runs with distinct run ids", f"{r.run_id!r} twice", got_is_text=True
            )
        seen.add(r.run_id)
        if not isinstance(r.per_user, pd.DataFrame) or "user_id" not in r.per_user.columns:
            raise param_error(
                "runs",
                func,
                "runs whose per_user table has a 'user_id' column",
                f"run {r.name!r} ({r.run_id}) without it",
                got_is_text=True,
            )
        if r.per_user["user_id"].duplicated().any():
            dup = r.per_user["user_id"][r.per_user["user_id"].duplicated()].iloc[0]
            raise param_error(
                "runs",
                func,
                "per-user tables with one row per user",
                f"user {dup!r} twice in run {r.name!r} ({r.run_id})",
                got_is_text=True,
            )
    return list(runs)


def _lower_better(metric: str, prefixes: Sequence[str]) -> bool:
    """Lower is better for ``metric``: by the metric registry (``mpr``, ``*_seconds``), or when
    its name starts with one of the user's extra ``prefixes``."""
    return not greater_is_better(metric) or metric.startswith(tuple(prefixes))


def _resolve_baseline(
    baseline: Any, runs: list[RunData], metrics: list[str], lower: Sequence[str], func: str
) -> RunData:
    if baseline is None:  # a sweep's first baseline (baselines=[...]), else the first run
        first = [r for r in runs if r.tags.get("recoeval.baseline_rank") == "0"]
        return first[0] if first else runs[0]
    if not isinstance(baseline, str):
        raise param_error(
            "baseline",
            func,
            "a run id or name, 'tag:<key>=<value>', 'best:<metric>' or 'worst:<metric>'",
            baseline,
        )
    for r in runs:
        if baseline == r.run_id:
            return r
    named = [r for r in runs if r.name == baseline]
    if len(named) == 1:
        return named[0]
    if baseline.startswith("tag:") and "=" in baseline:
        key, value = baseline[4:].split("=", 1)
        tagged = [r for r in runs if r.tags.get(key) == value]
        if len(tagged) == 1:
            return tagged[0]
        raise param_error(
            "baseline",
            func,
            "a tag that exactly one run carries",
            baseline,
            f"{len(tagged)} runs carry it.",
        )
    if baseline.startswith(("best:", "worst:")):
        which, metric = baseline.split(":", 1)
        if metric not in metrics:
            raise param_error(
                "baseline", func, f"best:/worst: with a reported metric {metrics}", baseline
            )
        means = np.array(
            [
                np.nanmean(r.per_user[metric].to_numpy(dtype=np.float64))
                if r.per_user[metric].notna().any()
                else np.nan
                for r in runs
            ]
        )
        if np.all(np.isnan(means)):
            raise param_error("baseline", func, "a metric defined for some run", baseline)
        high = (which == "best") != _lower_better(metric, lower)
        return runs[int(np.nanargmax(means) if high else np.nanargmin(means))]
    raise param_error(
        "baseline",
        func,
        "a run id or name of a selected run, "
        "'tag:<key>=<value>', 'best:<metric>' or 'worst:<metric>'",
        baseline,
        "Known runs: " + ", ".join(f"{r.name} ({r.run_id})" for r in runs[:10]),
    )
