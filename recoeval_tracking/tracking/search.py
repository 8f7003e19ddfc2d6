"""Reading runs back for reports: selecting runs, fetching their job files, the study record
their sweep's parent holds (:func:`sweep_study`: its protocol and budgets), logging the report.

A run logged from a job directory holds that directory's files as artifacts;
:func:`download_job_artifacts` fetches the ones a report needs so that
:func:`recoeval_tracking.jobdir.read_job_dir` reads them back like a local job directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._validation import check_optional, param_error
from ..jobdir import FILES
from .client import (
    _TAG_PREFIX,
    DEFAULT_EXPERIMENT,
    _check_destination,
    _check_texts,
    _clean_tags,
    _client,
    _experiment_id,
    resolve_tracking_uri,
)

__all__ = [
    "REPORT_ARTIFACTS",
    "search_runs_for_report",
    "find_sweep_parent",
    "download_job_artifacts",
    "log_report_artifacts",
    "sweep_study",
]

#: Files a report needs from a run's artifacts (the rest of the job directory is optional).
REPORT_ARTIFACTS = tuple(
    FILES[name]
    for name in (
        "per_user",
        "metrics",
        "definitions",
        "curves",
        "dataset",
        "config",
        "overrides",
        "job",
    )
)


def _run_dict(run) -> dict[str, Any]:
    return {
        "run_id": run.info.run_id,
        "run_name": run.info.run_name,
        "experiment_id": run.info.experiment_id,
        "status": run.info.status,
        "start_time": run.info.start_time,
        "params": dict(run.data.params),
        "tags": dict(run.data.tags),
        "metrics": dict(run.data.metrics),
    }


def _experiment_ids(client, experiment: str | None, func: str) -> list[str]:
    """The id of ``experiment`` (which must exist), or of every experiment of the store."""
    from mlflow.entities import ViewType

    if not experiment:
        return [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        names = [e.name for e in client.search_experiments()]
        raise param_error("experiment", func, f"an existing experiment {names[:10]}", experiment)
    return [exp.experiment_id]


def _quoted(value: str, name: str, func: str) -> str:
    """``value`` as a quoted string of an MLflow filter. MLflow's filter syntax has no escape
    for a quote inside a string, so a value holding a quote or a backslash is refused by name
    (pasted as it is, it would break the filter or change what it selects)."""
    if any(c in value for c in "'\"\\`"):
        raise param_error(
            name,
            func,
            "a value without quotes, backticks or backslashes (a "
            "sweep id is 12 hex digits, as in recoeval_sweep.json)",
            value,
        )
    return f"'{value}'"


def _filter(
    sweep_id: str | None, filter_string: str | None, func: str = "search_runs_for_report"
) -> str:
    clauses = []
    if sweep_id:
        clauses.append(f"tags.`{_TAG_PREFIX}sweep_id` = {_quoted(sweep_id, 'sweep_id', func)}")
    if filter_string:
        clauses.append(f"({filter_string})" if " or " in filter_string.lower() else filter_string)
    return " and ".join(clauses)


def search_runs_for_report(
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    sweep_id: str | None = None,
    run_ids: Sequence[str] | None = None,
    filter_string: str | None = None,
    include_parents: bool = False,
    max_results: int = 5000,
) -> list[dict[str, Any]]:
    """Runs to compare, as plain dicts, selected by experiment, sweep id, run ids or a filter.

    Parameters
    ----------
    tracking_uri : str, optional
        See :func:`~recoeval_tracking.tracking.client.resolve_tracking_uri`.
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
    _check_texts(
        func,
        tracking_uri=tracking_uri,
        experiment=experiment,
        sweep_id=sweep_id,
        filter_string=filter_string,
    )
    if run_ids is not None and (
        isinstance(run_ids, str) or not all(isinstance(r, str) for r in run_ids)
    ):
        raise param_error("run_ids", func, "a list of run ids (str) or None", run_ids)
    if not (experiment or sweep_id or run_ids or filter_string):
        raise param_error(
            "experiment",
            func,
            "given, or one of sweep_id, run_ids, filter_string",
            None,
            "Say which runs to compare.",
        )
    where = _filter(sweep_id, filter_string)  # a bad sweep id fails before the store is opened
    client = _client(resolve_tracking_uri(tracking_uri))
    if run_ids and not (experiment or sweep_id or filter_string):
        return [_run_dict(r) for r in (client.get_run(i) for i in run_ids)]
    runs = client.search_runs(
        _experiment_ids(client, experiment, func),
        filter_string=where,
        max_results=max_results,
        order_by=["attributes.start_time ASC"],
    )
    out = [
        _run_dict(r)
        for r in runs
        if include_parents or r.data.tags.get(_TAG_PREFIX + "sweep_parent") != "true"
    ]
    if run_ids:
        by_id = {r["run_id"]: r for r in out}
        out = [by_id[i] for i in run_ids if i in by_id]
    return out


def find_sweep_parent(sweep_id: str, *, tracking_uri: str | None = None) -> str | None:
    """The run id of the parent run of sweep ``sweep_id`` (tag ``recoeval.sweep_parent``), or
    None when the sweep has no parent run."""
    check_optional(sweep_id, str, "sweep_id", "find_sweep_parent")
    quoted = _quoted(sweep_id, "sweep_id", "find_sweep_parent")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    from mlflow.entities import ViewType

    exp_ids = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    runs = client.search_runs(
        exp_ids,
        filter_string=(
            f"tags.`{_TAG_PREFIX}sweep_id` = {quoted} and tags.`{_TAG_PREFIX}sweep_parent` = 'true'"
        ),
        max_results=10,
    )
    return runs[0].info.run_id if runs else None


def download_job_artifacts(
    run_id: str, dst: str | Path, *, tracking_uri: str | None = None
) -> Path:
    """Download the job-directory files of run ``run_id`` into ``dst`` (created), so that
    :func:`recoeval_tracking.jobdir.read_job_dir` can read them back.

    Only the files a report needs are fetched (:data:`REPORT_ARTIFACTS`, not the plots).

    Raises
    ------
    InputError
        When the run has no ``per_user.parquet`` (it was not logged from a job directory).
    """
    func = "download_job_artifacts"
    check_optional(run_id, str, "run_id", func)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    root = Path(dst)
    root.mkdir(parents=True, exist_ok=True)
    listed = {a.path for a in client.list_artifacts(run_id)}
    if FILES["per_user"] not in listed:
        raise param_error(
            "run_id",
            func,
            "a run logged from a job directory (with a per_user.parquet artifact)",
            run_id,
            f"Its artifacts are: {sorted(listed)[:10]}.",
        )
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


def log_report_artifacts(
    paths: Sequence[str | Path],
    *,
    run_id: str | None = None,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
    artifact_path: str | None = "report",
    tags: Mapping[str, Any] | None = None,
) -> str:
    """Log report files (the HTML page, the Markdown, a folder of figures) as artifacts.

    Into ``run_id`` (e.g. the sweep's parent run; a finished run accepts artifacts) or else into
    a new FINISHED run of ``experiment`` tagged ``recoeval.report=true``. Returns the run id.
    """
    from mlflow.entities import RunTag

    func = "log_report_artifacts"
    _check_destination(func, run_id, tracking_uri, run_name, artifact_path)
    check_optional(tags, Mapping, "tags", func)
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
        run = client.create_run(
            exp_id,
            tags=_clean_tags({_TAG_PREFIX + "report": "true", **(tags or {})}),
            run_name=run_name or "report",
        )
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


# -- a sweep's study record, read back from its parent's tags --------------------------------

_BUDGET = _TAG_PREFIX + "budget."


def sweep_study(
    found: Sequence[Mapping[str, Any]], *, tracking_uri: str | None = None
) -> dict[str, Any] | None:
    """The study record of the sweep that ``found`` belongs to, from its parent run's tags.

    Parameters
    ----------
    found : list of dict
        Runs as :func:`~recoeval_tracking.tracking.search.search_runs_for_report` returns them
        (their ``tags`` name their sweep: ``recoeval.sweep_id``).
    tracking_uri : str, optional
        The store the runs were read from.

    Returns
    -------
    dict or None
        ``protocol`` (the parent's one line), ``budgets`` (system -> its budget text) and
        ``equal_budgets``; None when the runs are not all of one sweep, when its parent records
        no protocol (a sweep logged before fair studies), or when the parent cannot be read
        (the protocol is then read from the runs' own folders).
    """
    sweeps = {(info.get("tags") or {}).get(_TAG_PREFIX + "sweep_id") for info in found}
    if len(sweeps) != 1 or None in sweeps:
        return None
    try:
        parents = search_runs_for_report(
            tracking_uri=tracking_uri, sweep_id=str(sweeps.pop()), include_parents=True
        )
    except Exception:  # noqa: BLE001 - the protocol line is read from the runs then
        return None
    for info in parents:
        tags = info.get("tags") or {}
        if tags.get(_TAG_PREFIX + "sweep_parent") == "true" and tags.get(_TAG_PREFIX + "protocol"):
            return {
                "protocol": tags[_TAG_PREFIX + "protocol"],
                "budgets": {k[len(_BUDGET) :]: v for k, v in tags.items() if k.startswith(_BUDGET)},
                "equal_budgets": tags.get(_TAG_PREFIX + "equal_budgets", "true") == "true",
            }
    return None
