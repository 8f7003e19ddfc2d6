"""The runs a report compares, as plain data: :class:`RunData`, read from a job directory or a
tracking store's copy of one, and the fingerprints that decide whether runs are comparable.

Runs are compared only when their data, split and metric-definition fingerprints agree
(:func:`check_comparable` names what differs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._validation import param_error
from ..jobdir import read_job_dir
from ..jobdir.redact import flatten_config

__all__ = ["RunData", "fingerprints_from", "check_comparable", "FINGERPRINT_KINDS"]

#: The fingerprints that must agree for runs to be compared.
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
        ``data``, ``split``, ``definitions`` (missing when not recorded).
    metrics : dict
        Means as logged (for cross-checks; not used in the statistics).
    tags : dict
        Tracking tags (``recoeval.sweep_id``...), for selecting the baseline by tag.
    source : str
        Where the run came from (``mlflow run <id>`` or a path).
    config : dict or None
        The run's resolved config, nested (``config.yaml``), when known.
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

    @classmethod
    def from_job_dir(cls, path: str | Path, *, run_id: str | None = None,
                     name: str | None = None, params: Mapping[str, Any] | None = None,
                     tags: Mapping[str, str] | None = None, source: str | None = None
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
        label = name or (",".join(job.overrides) if job.overrides else Path(path).name)
        return cls(run_id=run_id or str(Path(path)), name=label,
                   per_user=job.per_user if job.per_user is not None else pd.DataFrame(),
                   params=flat, curves=job.curves if len(job.curves) else None,
                   fingerprints=fingerprints_from(job.dataset, job.fingerprint),
                   metrics=dict(job.metrics), tags=dict(tags or {}),
                   source=source or str(Path(path)), config=job.config)


def fingerprints_from(dataset: Mapping[str, Any] | None, definitions_fp: str | None
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
            raise param_error("runs", func, "a list of RunData", f"{r!r} at position {i}",
                              got_is_text=True)
        if r.run_id in seen:
            raise param_error("runs", func, "runs with distinct run ids",
                              f"{r.run_id!r} twice", got_is_text=True)
        seen.add(r.run_id)
        if not isinstance(r.per_user, pd.DataFrame) or "user_id" not in r.per_user.columns:
            raise param_error("runs", func, "runs whose per_user table has a 'user_id' column",
                              f"run {r.name!r} ({r.run_id}) without it", got_is_text=True)
        if r.per_user["user_id"].duplicated().any():
            dup = r.per_user["user_id"][r.per_user["user_id"].duplicated()].iloc[0]
            raise param_error("runs", func, "per-user tables with one row per user",
                              f"user {dup!r} twice in run {r.name!r} ({r.run_id})",
                              got_is_text=True)
    return list(runs)



def check_comparable(runs: Sequence[RunData]) -> list[str]:
    """What differs between the runs' data, split and definitions fingerprints.

    A fingerprint recorded for some runs and not for others counts as a difference; one recorded
    for none is not checked. Returns one message per differing kind (empty list: comparable).
    """
    problems = []
    for kind in FINGERPRINT_KINDS:
        values: dict[str, list[str]] = {}
        for r in runs:
            values.setdefault(r.fingerprints.get(kind) or "<not recorded>", []).append(r.name)
        if len(values) > 1 and not (len(values) == 1 and "<not recorded>" in values):
            parts = []
            for fp, names in values.items():
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more"
                                                if len(names) > 4 else "")
                parts.append(f"{fp} ({shown})")
            problems.append(f"the {kind} fingerprint differs: " + " vs ".join(parts))
    return problems

