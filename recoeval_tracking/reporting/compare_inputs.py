"""What :func:`~recoeval_tracking.reporting.compare.compare` accepts, read as
:class:`~recoeval_tracking.reporting.runs.RunData`: ``Results`` objects, job folders, MLflow run
ids (through :mod:`recoeval_tracking.tracking`), and how runs over several datasets are told
apart and their systems named alike."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._validation import InputError, param_error
from .comparability import check_comparable, users_fingerprint
from .comparability import swept_params as _swept_params
from .per_user_files import FORMATS, check_same_users, runs_of_file
from .runs import RunData

__all__ = [
    "runs_from",
    "detect_dataset_key",
    "group_datasets",
    "check_unique_names",
    "check_labels_used",
]

_FUNC = "compare"
#: The ``source`` of a run read from a ``Results`` object.
_RESULTS_SOURCE = "Results object"
#: Params that name a dataset, looked at first (then any other swept ``dataset.*`` param).
_DATASET_KEYS = ("dataset.name", "dataset.kind", "dataset._target_", "dataset.path", "dataset")


# ---------------------------------------------------------------------------------------------


def _from_results(name: str, res: Any) -> RunData:
    from ..jobdir.io import curves_table
    from ..metrics.evaluate import metric_fingerprints

    curves = curves_table(res) if res.curves_per_user else None
    fps = {"definitions": res.fingerprint} if res.fingerprint else {}
    # rt.evaluate(split, ...) records the split part's fingerprint, as a job folder does (it
    # covers the data: a split's fingerprint hashes the data's)
    split_fp = getattr(res, "split_fingerprint", "")
    if split_fp:
        fps["split"] = str(split_fp)
    # otherwise the users stand in (comparability.py), with the parts evaluated when they were
    # interactions containers: two random splits of one fixed fraction keep every user's counts
    parts = getattr(res, "parts_fingerprint", "")
    fps["users"] = users_fingerprint(res.per_user, parts)
    # compared metric by metric, as job folders are: two models' Results differ in their score
    # source (factors, biases...), which is part of the whole record but of no metric's definition
    per_metric = (
        metric_fingerprints(res.definitions, [*res.metric_columns, *res.aggregates])
        if res.definitions
        else {}
    )
    return RunData(
        run_id=name,
        name=name,
        per_user=res.per_user.copy(),
        curves=curves,
        fingerprints=fps,
        metrics=dict(res.means),
        source=_RESULTS_SOURCE,
        metric_fingerprints=per_metric,
    )


def _from_mlflow(
    run_ids: list[str], names: list[str | None], tracking_uri: str | None
) -> list[RunData]:
    from ..tracking.client import resolve_tracking_uri
    from ..tracking.search import download_job_artifacts, search_runs_for_report, sweep_study

    uri = resolve_tracking_uri(tracking_uri)
    found = {r["run_id"]: r for r in search_runs_for_report(tracking_uri=uri, run_ids=run_ids)}
    # the runs of one sweep: the protocol it ran, from its parent run (as the report reads it)
    sweep = sweep_study(list(found.values()), tracking_uri=uri)
    out = []
    with tempfile.TemporaryDirectory(prefix="recoeval-compare-") as tmp:
        for run_id, name in zip(run_ids, names):
            info = found[run_id]
            folder = download_job_artifacts(run_id, Path(tmp) / run_id, tracking_uri=uri)
            out.append(
                RunData.from_job_dir(
                    folder,
                    run_id=run_id,
                    name=name or info["run_name"] or run_id,
                    params=info["params"],
                    tags=info["tags"],
                    source=f"mlflow run {run_id}",
                )
            )
            if sweep:
                out[-1].study["sweep"] = sweep
    return out


def _note_results_protocol(runs: Sequence[RunData]) -> None:
    """Record what is known of how a ``Results`` was evaluated: nothing in the object says
    whether its split had a validation part, but its split fingerprint is that of the part
    evaluated (``rt.evaluate(split, ...)`` evaluates ``split.test_split()``), so when another
    run's folder records the same fingerprint, the notebook's result was evaluated on that
    same part, after a validation part or not as that run's record says. How its
    configuration was chosen is not recorded (the line then says so); without such a run its
    protocol stays unknown."""
    folders = [r for r in runs if r.study.get("protocol") and r.fingerprints.get("split")]
    for r in runs:
        fp = r.fingerprints.get("split")
        if r.source != _RESULTS_SOURCE or r.study.get("protocol") or not fp:
            continue
        same = next((o for o in folders if o.fingerprints["split"] == fp), None)
        if same is not None:
            rec = same.study["protocol"]
            r.study["protocol"] = {
                "evaluated_on": rec.get("evaluated_on"),
                "validation": bool(rec.get("validation")),
                "refit": None,  # what the notebook fitted on is not recorded
                "from_fingerprint": same.name,
            }


def _is_results(obj: Any) -> bool:
    from ..metrics.results import Results

    return isinstance(obj, Results)


def _read_item(
    name: str | None, item: Any, i: int, fmt: str | None, func: str
) -> list[RunData] | None:
    """The runs of the ``i``-th input item (None for an MLflow run id, read later with the
    others)."""
    if _is_results(item):
        return [_from_results(name or f"run {i}", item)]
    if isinstance(item, RunData):
        return [dataclasses.replace(item, name=name) if name else item]
    if isinstance(item, (str, Path)) and Path(item).is_dir():
        return [RunData.from_job_dir(item, name=name)]
    if isinstance(item, (str, Path)) and Path(item).is_file():
        return runs_of_file(item, name, fmt, func)
    # an MLflow run id is 32 hex digits: a name with a dot or a slash is a missing file
    if isinstance(item, str) and item and not any(c in item for c in "/\\."):
        return None
    label = f"{name!r}" if name is not None else f"at position {i}"
    raise param_error(
        "runs",
        func,
        "Results objects, RunData, job folders, per-user files or MLflow run ids",
        f"{item!r} for {label}"
        + (" (no such file or folder)" if isinstance(item, (str, Path)) else ""),
        got_is_text=True,
    )


def runs_from(
    runs: Any,
    tracking_uri: str | None = None,
    func: str = _FUNC,
    *,
    format: str | None = None,
    allow_mismatch: bool = False,
) -> tuple[list[RunData], dict[str, str] | None]:
    """The runs of :func:`compare` as :class:`RunData`, and the dataset of each run id when
    the input named them (a nested mapping), else None.

    ``runs`` is a mapping name -> item (or dataset -> {name -> item}) or a list of items; an
    item is a :class:`~recoeval_tracking.metrics.results.Results`, a :class:`RunData`, a job
    folder (a path), a per-user file written by another tool (a path; read by
    :func:`~recoeval_tracking.reporting.per_user_files.read_per_user_runs`, in ``format`` when
    given, else the format its content shows; in a list, every system the file holds) or an
    MLflow run id (a string that is not a path). Runs read from per-user files must hold the
    same users (per dataset), unless ``allow_mismatch``
    (:func:`~recoeval_tracking.reporting.per_user_files.check_same_users`).
    """
    datasets: dict[str, str] | None = None
    pairs: list[tuple[str | None, Any, str | None]] = []
    if isinstance(runs, Mapping):
        if runs and all(isinstance(v, Mapping) for v in runs.values()):
            datasets = {}
            for ds, inner in runs.items():
                for name, item in inner.items():
                    pairs.append((str(name), item, str(ds)))
        else:
            pairs = [(str(name), item, None) for name, item in runs.items()]
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        pairs = [(None, item, None) for item in runs]
    else:
        raise param_error(
            "runs",
            func,
            "a dict name -> Results (or job folder, per-user file, MLflow run id, "
            "RunData), a dict dataset -> such a dict, or a list of them",
            runs,
        )
    if not pairs:
        raise param_error("runs", func, "at least one run", "none", got_is_text=True)
    if format is not None and format not in FORMATS:
        raise param_error("format", func, f"one of {list(FORMATS)} or None", format)
    out: list[list[RunData] | None] = []
    for i, (name, item, _ds) in enumerate(pairs):
        out.append(_read_item(name, item, i, format, func))
    mlflow_at = [i for i, r in enumerate(out) if r is None]
    if mlflow_at:
        read = _from_mlflow(
            [pairs[i][1] for i in mlflow_at], [pairs[i][0] for i in mlflow_at], tracking_uri
        )
        for i, r in zip(mlflow_at, read):
            out[i] = [r]
    result: list[RunData] = []
    by_dataset: dict[str | None, list[RunData]] = {}
    for (_, _, ds), members in zip(pairs, out):
        for r in members or []:
            if ds is not None:
                r = dataclasses.replace(r, run_id=f"{ds}/{r.run_id}")
                datasets[r.run_id] = ds
            result.append(r)
            by_dataset.setdefault(ds, []).append(r)
    for members in by_dataset.values():
        _note_results_protocol(members)
    ids = [r.run_id for r in result]
    dup = [i for i in ids if ids.count(i) > 1]
    if dup:
        raise param_error(
            "runs", func, "runs with distinct ids", f"{dup[0]!r} twice", got_is_text=True
        )
    if not allow_mismatch:
        for members in by_dataset.values():
            check_same_users(members, func)
    return result, datasets


def detect_dataset_key(runs: Sequence[RunData]) -> str | None:
    """The param that tells the datasets of ``runs`` apart, or None: only when the runs' data
    fingerprints differ, the first of ``dataset.name``, ``dataset.kind``... (or another swept
    ``dataset.*`` param) that every run has, that takes several values, whose runs of one
    value share their data and are at least two (something to compare in each dataset: two
    runs of different data, one each, are refused as not comparable, naming both data
    fingerprints, unless the caller names the datasets). A seed is never one (``dataset.seed`` of synthetic data drawn
    per seed: those runs are replicates)."""
    runs = list(runs)
    if len(runs) < 2 or not check_comparable(runs, kinds=("data",)):
        return None

    def tells_apart(k: str) -> bool:
        # a seed (synthetic data drawn per seed) makes replicates, not datasets; and the runs
        # of one dataset must share their data
        if k.rsplit(".", 1)[-1] in ("seed", "fold") or not all(k in r.params for r in runs):
            return False
        groups: dict[str, list[RunData]] = {}
        for r in runs:
            groups.setdefault(str(r.params[k]), []).append(r)
        # each dataset holds runs to compare: two runs of different data, one each, are
        # one comparison of two datasets mixed up (refused naming both), not two datasets
        return (
            len(groups) > 1
            and all(len(g) > 1 for g in groups.values())
            and not any(check_comparable(g, kinds=("data",)) for g in groups.values())
        )

    swept = [k for k in _swept_params(runs) if k.startswith("dataset.")]
    for k in [*_DATASET_KEYS, *swept]:
        if tells_apart(k):
            return k
    return None


def _system_names(runs: list[RunData], dataset_key: str) -> list[str]:
    """Names that identify a system across datasets: the model and the swept params that are
    not the dataset's or the split's (``als factors=64``); the run's own name when nothing is
    swept but the dataset."""
    from .replicates import _group_name, _shown_keys

    keys = [
        k
        for k in _swept_params(runs)
        if not k.startswith(("dataset.", "split."))
        and k != dataset_key
        and k.rsplit(".", 1)[-1] not in ("seed", "fold")
    ]
    if not keys:
        return [r.name for r in runs]
    shown = _shown_keys(runs, keys)
    return [_group_name(tuple(str(r.params.get(k)) for k in keys), keys, shown) for r in runs]


def group_datasets(
    read: list[RunData], datasets: dict[str, str] | None, dataset_key: str | None, func: str = _FUNC
) -> tuple[dict[str, list[RunData]], str | None]:
    """The runs of each dataset (``{"": runs}`` for one) and the param that told them apart:
    the datasets a nested mapping named, else ``dataset_key`` (``"auto"``:
    :func:`detect_dataset_key`). Over several datasets found by a param, each run is named by
    its system (:func:`_system_names`), so that a system has one name in every dataset."""
    key = None
    if datasets is None and dataset_key is not None:
        key = detect_dataset_key(read) if dataset_key == "auto" else str(dataset_key)
        if key is not None:
            missing = [r.name for r in read if key not in r.params]
            if missing:
                raise param_error(
                    "dataset_key",
                    func,
                    "a param every run has",
                    key,
                    f"Runs without it: {', '.join(missing[:5])}.",
                )
            datasets = {r.run_id: str(r.params[key]) for r in read}
    if datasets is None:
        return {"": read}, key
    groups: dict[str, list[RunData]] = {}
    for r in read:
        groups.setdefault(datasets[r.run_id], []).append(r)
    if key is not None and len(groups) > 1:
        renamed = {r.run_id: n for r, n in zip(read, _system_names(read, key))}
        groups = {
            ds: [dataclasses.replace(r, name=renamed[r.run_id]) for r in members]
            for ds, members in groups.items()
        }
    return groups, key


def check_labels_used(
    labels: Mapping[str, str],
    reports: Mapping[str, Any],
    read: Sequence[RunData],
    func: str = _FUNC,
) -> None:
    """Refuse a label whose key names no compared system in any dataset."""
    used = {k for rep in reports.values() for k in rep.settings.get("labels", {})}
    unknown = [k for k in labels if k not in used]
    if unknown:
        known = list(
            dict.fromkeys(
                [r.name for r in read]
                + [r.run_id for r in read]
                + [r.name for rep in reports.values() for r in rep.runs]
            )
        )
        raise param_error(
            "labels",
            func,
            "keys that are the names or ids of the compared runs",
            f"{unknown[0]!r} (it names no run)",
            "The known names: " + ", ".join(known[:30]) + ".",
            got_is_text=True,
        )


def check_unique_names(report: Any, ds: str) -> None:
    """Refuse a dataset where two runs are one system (over several datasets)."""
    names = [r.name for r in report.runs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(
            f"dataset {ds}: several runs are the same system ({', '.join(dup)}); "
            "name each system once per dataset, or pass replicate_key for seeds "
            "or folds."
        )
