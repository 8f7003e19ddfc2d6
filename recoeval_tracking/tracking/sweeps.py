"""Sweeps: a parent run per sweep, closed with a leaderboard of its children.

Children are linked to their parent by the ``mlflow.parentRunId`` tag and all carry the sweep's
``recoeval.sweep_id``; a parent carries ``recoeval.sweep_parent=true`` and is found by its sweep id
(:func:`find_sweep_parent_run`) when a job or a sync does not know its run id (the store was down
when the sweep started).

The sweep directory holds :data:`SWEEP_FILE` (the sweep id, the parent run id when one was
created, the store, the experiment), written when the sweep starts, and two lock files: the
running sweep holds :data:`SWEEP_LOCK` (so a sync can tell a sweep that was killed from one that
is running), and whoever creates or closes the parent holds :data:`PARENT_LOCK` meanwhile (so
concurrent jobs and syncs create one parent per sweep id). The direction of a metric (which child is best, how the leaderboard is
sorted) comes from the metric registry
(:func:`recoeval_tracking.metrics.registry.greater_is_better`: lower is better for ``mpr`` and
``*_seconds``); callers may name more lower-is-better metrics.
"""

from __future__ import annotations

import json
import math
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from .._validation import check_optional, param_error
from ..jobdir.redact import sanitize_key, scrub_text
from .client import (
    _TAG_PREFIX,
    _TERMINAL,
    DEFAULT_EXPERIMENT,
    _clean_tags,
    _client,
    _experiment_id,
    _now_ms,
    params_from_config,
    resolve_tracking_uri,
)
from .runs import read_ci_tag
from .sweep_records import (
    PARENT_LOCK,
    SWEEP_FILE,
    SWEEP_LOCK,
    find_sweep_record,
    read_study,
    read_sweep_record,
    write_sweep_record,
)
from .views import (
    UI_WORKFLOW,
    _best_line,
    _lower_is_better,
    _markdown,
    closed_at,
    leaderboard_text,
    save_sweep_view,
    show_sweep_best,
    sweep_view_hint,
    sweep_view_link,
    ui_base,
)

__all__ = [
    "SweepParent",
    "create_sweep_parent",
    "build_leaderboard",
    "finish_sweep_parent",
    "SWEEP_FILE",
    "SWEEP_LOCK",
    "PARENT_LOCK",
    "write_sweep_record",
    "read_sweep_record",
    "find_sweep_record",
    "find_sweep_parent_run",
    "find_or_create_sweep_parent",
    "adopt_sweep_runs",
    "record_sweep_best",
    "sweep_view_link",
    "sweep_view_hint",
    "save_sweep_view",
    "ui_base",
    "leaderboard_text",
    "UI_WORKFLOW",
    "sweep_end_text",
]


def _parent_key(run) -> tuple[int, str]:
    """The order that picks a sweep's one parent among several: earliest start, then run id."""
    return (run.info.start_time or 0, run.info.run_id)


def find_sweep_parent_run(client, experiment_id: str, sweep_id: str):
    """The parent run of ``sweep_id`` in the experiment, or None. When several exist (created at
    the same time by jobs on other machines), the first by (start time, run id): every process
    applies the same rule to what the store holds, so they agree without sharing memory."""
    found = client.search_runs(
        [experiment_id],
        filter_string=(
            f"tags.`{_TAG_PREFIX}sweep_id` = '{sweep_id}' and "
            f"tags.`{_TAG_PREFIX}sweep_parent` = 'true'"
        ),
        max_results=50,
    )
    return min(found, key=_parent_key) if found else None


def find_or_create_sweep_parent(
    sweep_id: str, *, tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT
) -> str:
    """The run id of the parent of ``sweep_id``, found on the store by its tag, or created.

    Race-safe with no lock and no shared memory (jobs on other machines): a job that finds no
    parent creates one, then searches again and keeps the first parent by (start time, run id)
    (:func:`find_sweep_parent_run`); when that is not its own, it deletes its own. Two jobs that
    create at the same moment may still each keep their own (each searched before the other
    created); :func:`adopt_sweep_runs`, run when the sweep is closed, then moves every run of the
    sweep under the closed parent and deletes the others, so the sweep ends with one parent.
    """
    check_optional(sweep_id, str, "sweep_id", "find_or_create_sweep_parent")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    exp_id = _experiment_id(client, experiment, None, uri)
    found = find_sweep_parent_run(client, exp_id, sweep_id)
    if found is not None:
        return found.info.run_id
    mine = create_sweep_parent(tracking_uri=uri, experiment=experiment, sweep_id=sweep_id).run_id
    first = find_sweep_parent_run(client, exp_id, sweep_id)
    if first is None or first.info.run_id == mine:
        return mine
    client.delete_run(mine)
    return first.info.run_id


def adopt_sweep_runs(client, experiment_id: str, sweep_id: str, parent_run_id: str) -> int:
    """Make ``parent_run_id`` the one parent of sweep ``sweep_id``: every other run tagged with
    the sweep id becomes its child (``mlflow.parentRunId``), and every other parent of the sweep
    (a duplicate created by racing jobs) is deleted. Returns the number of runs moved."""
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`{_TAG_PREFIX}sweep_id` = '{sweep_id}'",
        max_results=5000,
    )
    moved = 0
    for run in runs:
        if run.info.run_id == parent_run_id:
            continue
        if run.data.tags.get(_TAG_PREFIX + "sweep_parent") == "true":
            client.delete_run(run.info.run_id)
        elif run.data.tags.get("mlflow.parentRunId") != parent_run_id:
            client.set_tag(run.info.run_id, "mlflow.parentRunId", parent_run_id)
            moved += 1
    return moved


def record_sweep_best(
    parent_run_id: str,
    objective: str,
    value: float,
    params: Mapping[str, Any],
    *,
    step: int,
    tracking_uri: str | None = None,
    tags: Mapping[str, Any] | None = None,
) -> None:
    """Record a search's best value so far on its sweep parent, as it improves.

    Logs ``best_<objective>`` at ``step`` (the trial number, so the run page draws the best
    value over trials), and the tags ``recoeval.best.params`` (JSON of the best parameters),
    ``recoeval.best.param.<name>`` for each, ``recoeval.best.trial`` (``step``),
    ``recoeval.best.objective`` and the extra ``tags`` given. Params are immutable in MLflow,
    hence tags for values that change. When ``tags`` name the best trial's run
    (``recoeval.best.run_id``), its logged ``objective`` is recorded (the value the job returned,
    computed alike, may differ in its last bits), so the parent's best is that child's value
    exactly; :func:`finish_sweep_parent` then keeps the curve as recorded here, or ends it on the
    best child's value at the best trial's step when they differ.
    """
    from mlflow.entities import Metric, RunTag

    func = "record_sweep_best"
    if not isinstance(parent_run_id, str) or not parent_run_id:
        raise param_error("parent_run_id", func, "a run id (str)", parent_run_id)
    check_optional(objective, str, "objective", func)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    best = {str(k): v for k, v in params.items()}
    value = _logged_value(
        client, (tags or {}).get(_TAG_PREFIX + "best.run_id"), objective, float(value)
    )
    run_tags = {
        _TAG_PREFIX + "best.params": json.dumps(best, sort_keys=True, default=str),
        _TAG_PREFIX + "best.trial": str(step),
        _TAG_PREFIX + "best.objective": objective,
        **(tags or {}),
    }
    run_tags.update({sanitize_key(f"{_TAG_PREFIX}best.param.{k}"): str(v) for k, v in best.items()})
    client.log_batch(
        parent_run_id,
        metrics=[Metric(sanitize_key(f"best_{objective}"), float(value), _now_ms(), int(step))],
        tags=[RunTag(k, v) for k, v in _clean_tags(run_tags).items()],
    )


def _logged_value(client: Any, run_id: str | None, metric: str, value: float) -> float:
    """``metric`` as the run ``run_id`` logged it, when that is ``value`` to float64 round-off
    (the same mean, summed in another order); else ``value``."""
    if not run_id:
        return value
    try:
        logged = client.get_run(run_id).data.metrics.get(metric)
    except Exception:  # noqa: BLE001 - not uploaded yet (a store that was down): keep value
        return value
    return (
        float(logged)
        if logged is not None and math.isclose(logged, value, rel_tol=1e-12, abs_tol=1e-15)
        else value
    )


class SweepParent(NamedTuple):
    """The parent run of a sweep: pass ``run_id`` and ``sweep_id`` to every child's upload."""

    run_id: str
    sweep_id: str
    experiment_id: str
    tracking_uri: str


def create_sweep_parent(
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
    sweep_id: str | None = None,
    tags: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    artifact_location: str | None = None,
) -> SweepParent:
    """Create the RUNNING parent run of a sweep with :class:`MlflowClient` (no active run).

    Parameters
    ----------
    tracking_uri, experiment, artifact_location
        As in :func:`recoeval_tracking.tracking.runs.log_job_dir`.
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
    for name, value in (
        ("tracking_uri", tracking_uri),
        ("run_name", run_name),
        ("sweep_id", sweep_id),
        ("artifact_location", artifact_location),
    ):
        check_optional(value, str, name, func)
    check_optional(tags, Mapping, "tags", func)
    check_optional(params, Mapping, "params", func)
    sweep_id = sweep_id or uuid.uuid4().hex[:12]
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    exp_id = _experiment_id(client, experiment, artifact_location, uri)
    run_tags = _clean_tags(
        {_TAG_PREFIX + "sweep_id": sweep_id, _TAG_PREFIX + "sweep_parent": "true", **(tags or {})}
    )
    run = client.create_run(exp_id, tags=run_tags, run_name=run_name or f"sweep-{sweep_id}")
    if params:
        client.log_batch(
            run.info.run_id,
            params=[Param(k, v) for k, v in params_from_config(None, params).items()],
        )
    return SweepParent(run.info.run_id, sweep_id, exp_id, uri)


def build_leaderboard(
    parent_run_id: str,
    *,
    tracking_uri: str | None = None,
    metrics: Sequence[str] | None = None,
    lower_is_better: Sequence[str] | None = None,
    sort_by: str | None = None,
) -> pd.DataFrame:
    """One row per child run of ``parent_run_id``: name, id, status, overrides, each headline
    metric with its 95% bounds; best first.

    Parameters
    ----------
    parent_run_id : str
    tracking_uri : str, optional
    metrics : list of str, optional
        Headline metrics (default: the union of the children's ``recoeval.metrics`` tags).
    lower_is_better : list of str, optional
        Metrics where lower is better, besides those the metric registry marks so (``mpr``,
        ``*_seconds``).
    sort_by : str, optional
        Default: the first ``ndcg_at_*`` headline metric, else the first one.

    Returns
    -------
    pandas.DataFrame
        Columns ``run_name, run_id, status, overrides, <metric>, <metric>_ci95_low,
        <metric>_ci95_high, ...``; ``attrs["metrics"]`` lists the metrics, ``attrs["headline"]``
        those the children tag ``recoeval.headline`` (all of them when no child does),
        ``attrs["selection_runs"]`` how many children were left out as a fair study's
        selection runs (tag ``recoeval.phase=selection``: evaluated on validation only).
    """
    check_optional(parent_run_id, str, "parent_run_id", "build_leaderboard")
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    parent = client.get_run(parent_run_id)
    children = client.search_runs(
        [parent.info.experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{parent_run_id}'",
        max_results=5000,
    )
    everything = list(children)
    # a fair study's selection runs (evaluated on validation only) are not on the board: it
    # compares the configurations chosen on validation, each tested once
    children = [r for r in everything if r.data.tags.get(_TAG_PREFIX + "phase") != "selection"]
    headline: dict[str, None] = {}
    for run in children:
        for m in run.data.tags.get(_TAG_PREFIX + "headline", "").split(","):
            if m:
                headline[m] = None
    if metrics is None:
        seen: dict[str, None] = {}
        for run in children:
            for m in run.data.tags.get(_TAG_PREFIX + "metrics", "").split(","):
                if m:
                    seen[m] = None
        metrics = list(seen)
    rows = []
    for run in children:
        row: dict[str, Any] = {
            "run_name": scrub_text(run.info.run_name or ""),
            "run_id": run.info.run_id,
            "status": run.info.status,
            "overrides": scrub_text(run.data.tags.get(_TAG_PREFIX + "overrides", "")),
        }
        bounds = read_ci_tag(run.data.tags)
        for m in metrics:
            row[m] = run.data.metrics.get(m, math.nan)
            row[f"{m}_ci95_low"], row[f"{m}_ci95_high"] = bounds.get(m, (math.nan, math.nan))
        rows.append(row)
    columns = ["run_name", "run_id", "status", "overrides"] + [
        key for m in metrics for key in (m, f"{m}_ci95_low", f"{m}_ci95_high")
    ]
    table = pd.DataFrame(rows, columns=columns)
    if sort_by is None and metrics:
        sort_by = next((m for m in metrics if m.startswith("ndcg_at_")), metrics[0])
    if sort_by is not None and sort_by in table.columns and len(table):
        table = table.sort_values(
            sort_by,
            ascending=_lower_is_better(sort_by, lower_is_better),
            na_position="last",
            kind="stable",
        ).reset_index(drop=True)
    table.attrs["metrics"] = list(metrics)
    table.attrs["headline"] = [m for m in headline if m in metrics] or list(metrics)
    table.attrs["sort_by"] = sort_by
    table.attrs["selection_runs"] = len(everything) - len(children)
    return table


def study_tags(study: Mapping[str, Any]) -> dict[str, str]:
    """The parent run's tags of a study's record: ``recoeval.protocol`` (the one line),
    ``recoeval.objective``, ``recoeval.equal_budgets`` and, per system,
    ``recoeval.budget.<system>`` (``"3 configurations, 12.4 s of fits"``)."""
    out = {
        _TAG_PREFIX + "protocol": str(study.get("protocol") or ""),
        _TAG_PREFIX + "equal_budgets": str(bool(study.get("equal_budgets", True))).lower(),
    }
    if study.get("objective"):
        out[_TAG_PREFIX + "objective"] = str(study["objective"])
    if study.get("leakage"):
        out[_TAG_PREFIX + "leakage"] = str(study["leakage"])
    for name, entry in (study.get("systems") or {}).items():
        out[f"{_TAG_PREFIX}budget.{name}"] = _budget_text(entry)
    return out


def _budget_text(entry: Mapping[str, Any]) -> str:
    n = int(entry.get("configurations") or 0)
    seconds = float(entry.get("fit_seconds") or 0.0)
    whole = " (its whole search space)" if entry.get("whole_search_space") else ""
    return f"{n} configuration{'s' if n != 1 else ''}{whole}, {seconds:.1f} s of fits"


def budget_lines(study: Mapping[str, Any] | None) -> list[str]:
    """Each system's budget, a line each under a heading (empty without a study); the heading
    says when the budgets are unequal."""
    systems = (study or {}).get("systems") or {}
    if not systems:
        return []
    equal = bool((study or {}).get("equal_budgets", True))
    head = "budget per system" + ("" if equal else " (unequal: compare with care)") + ":"
    width = max(len(str(n)) for n in systems) + 2
    lines = [head]
    for name, entry in systems.items():
        kind = " (baseline)" if entry.get("baseline_rank") is not None else ""
        lines.append(f"     {str(name) + kind:<{width + 11}}{_budget_text(entry)}")
    return lines


def sweep_end_text(parent_run_id: str, tracking_uri: str | None = None) -> str:
    """What a finished sweep prints last: its leaderboard (best first, with the interval of the
    sort metric), the report command, and where to see it in the MLflow UI."""
    uri = resolve_tracking_uri(tracking_uri)
    board = build_leaderboard(parent_run_id, tracking_uri=uri)
    run = _client(uri).get_run(parent_run_id)
    sweep_id = run.data.tags.get(_TAG_PREFIX + "sweep_id", "")
    lines = []
    protocol = run.data.tags.get(_TAG_PREFIX + "protocol")
    if len(board):
        chosen = board.attrs.get("selection_runs") or 0
        what = (
            f"{len(board)} tested configuration{'s' if len(board) != 1 else ''} ({chosen} "
            "more evaluated on validation only)"
            if chosen
            else f"{len(board)} jobs"
        )
        lines += [
            f"sweep {sweep_id}: {what}, best first by "
            f"{board.attrs.get('sort_by') or 'run name'} on test:",
            leaderboard_text(board),
        ]
    if protocol:
        lines.append(f"protocol: {protocol}")
        lines += budget_lines(read_study(run.data.tags.get(_TAG_PREFIX + "sweep_dir")))
    leak = run.data.tags.get(_TAG_PREFIX + "leakage")
    if leak:
        lines.append(leak)
    report = f"recoeval-track-report select.sweep_id={sweep_id}"
    if uri != resolve_tracking_uri(None):
        report += f" tracking.uri={scrub_text(uri)}"
    lines.append(f"compare them with paired tests: {report}")
    lines.append(sweep_view_hint(parent_run_id, uri))
    return "\n".join(lines)


def _redacted(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell through :func:`scrub_text` (a leaderboard given by the
    caller, or built from runs logged by older versions)."""
    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = [scrub_text(v) if isinstance(v, str) else v for v in out[col]]
    out.attrs = dict(table.attrs)
    return out


#: Metrics in the parent run's description (the leaderboard.csv artifact holds them all).
_NOTE_METRICS = 5


def _summary(
    leaderboard: pd.DataFrame,
    headline: Sequence[str],
    lower_is_better: Sequence[str] | None,
    searched: str | None = None,
    searched_step: int = 0,
    recorded: Mapping[str, float] | None = None,
) -> tuple[list, dict[str, str]]:
    """The parent's metrics (``sweep_jobs``, ``sweep_jobs_failed``, ``best_<metric>``: the best
    child's value exactly as that child logged it) and tags (``recoeval.best_run.<metric>``,
    the leaderboard as ``mlflow.note.content``). A search's objective (``searched``) is logged
    at ``searched_step``, its best trial, after the curve that :func:`record_sweep_best` drew
    (unless its ``recorded`` latest value is already the best child's)."""
    from mlflow.entities import Metric

    now = _now_ms()
    batch_metrics = [Metric("sweep_jobs", float(len(leaderboard)), now, 0)]
    if leaderboard.attrs.get("selection_runs"):  # a fair study's jobs on validation only
        batch_metrics.append(
            Metric("sweep_selection_jobs", float(leaderboard.attrs["selection_runs"]), now, 0)
        )
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
        key, best = sanitize_key(f"best_{m}"), float(values[idx])
        if m != searched or (recorded or {}).get(key) != best:
            batch_metrics.append(Metric(key, best, now, searched_step if m == searched else 0))
        if "run_name" in leaderboard.columns:
            tags[f"{_TAG_PREFIX}best_run.{m}"] = str(leaderboard.loc[idx, "run_name"])
    if headline and "run_name" in leaderboard.columns:
        tags["mlflow.note.content"] = _markdown(
            leaderboard,
            [m for m in headline if m in leaderboard.columns][:_NOTE_METRICS],
            leaderboard.attrs.get("sort_by"),
        )
    return batch_metrics, tags


def finish_sweep_parent(
    parent_run_id: str,
    status: str = "FINISHED",
    leaderboard: pd.DataFrame | None = None,
    *,
    tracking_uri: str | None = None,
    metrics: Sequence[str] | None = None,
    lower_is_better: Sequence[str] | None = None,
    sort_by: str | None = None,
    close_running_children: bool = True,
) -> pd.DataFrame:
    """Close a sweep parent with a leaderboard, so the sweep reads well without expanding it.

    Logs ``leaderboard.csv`` (see :func:`build_leaderboard`, or the table given), the best value
    of each headline metric over the children as ``best_<metric>`` (max, or min where lower is
    better), the tag ``recoeval.best_run.<metric>`` (the best child's name), ``sweep_jobs`` and
    ``sweep_jobs_failed``, the leaderboard as the run's description (``mlflow.note.content``,
    under a link to the jobs side by side: :func:`sweep_view_link`, also in the returned
    table's ``attrs["view_link"]``), then sets the status.

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
    from mlflow.entities import RunTag

    func = "finish_sweep_parent"
    if not isinstance(parent_run_id, str) or not parent_run_id:
        raise param_error("parent_run_id", func, "a run id (str)", parent_run_id)
    if status not in _TERMINAL:
        raise param_error("status", func, f"one of {list(_TERMINAL)}", status)
    if leaderboard is not None and not isinstance(leaderboard, pd.DataFrame):
        raise param_error("leaderboard", func, "a pandas DataFrame or None", leaderboard)
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    parent = client.get_run(parent_run_id)
    sweep_id = parent.data.tags.get(_TAG_PREFIX + "sweep_id")
    if sweep_id:  # children linked to a duplicate parent, or none, join this one
        adopt_sweep_runs(client, parent.info.experiment_id, sweep_id, parent_run_id)
    if leaderboard is None:
        leaderboard = build_leaderboard(
            parent_run_id,
            tracking_uri=uri,
            metrics=metrics,
            lower_is_better=lower_is_better,
            sort_by=sort_by,
        )
    leaderboard = _redacted(leaderboard)
    headline = list(
        metrics
        if metrics is not None
        else leaderboard.attrs.get("headline") or leaderboard.attrs.get("metrics", [])
    )
    if close_running_children and "status" in leaderboard.columns:
        for _, row in leaderboard[leaderboard["status"] == "RUNNING"].iterrows():
            client.set_terminated(row["run_id"], "KILLED")
    study = read_study(parent.data.tags.get(_TAG_PREFIX + "sweep_dir"))
    trial = str(parent.data.tags.get(_TAG_PREFIX + "best.trial", ""))
    batch_metrics, tags = _summary(
        leaderboard,
        headline,
        lower_is_better,
        parent.data.tags.get(_TAG_PREFIX + "best.objective"),
        int(trial) if trial.isdigit() else 0,
        parent.data.metrics,
    )
    if sweep_id:
        sort_by = leaderboard.attrs.get("sort_by")
        link = sweep_view_link(parent.info.experiment_id, sweep_id, sort_by)
        leaderboard.attrs["view_link"] = link
        table_link = link
        try:  # a view the UI restores; a store refusing the tag keeps the plain address
            fam, sep, cut = (sort_by or "").rpartition("_at_")
            table_link = save_sweep_view(
                client,
                parent.info.experiment_id,
                sweep_id,
                [m for m in headline if m in leaderboard.columns],
                sort_by,
                f"{fam}_at_k" if sep and cut.isdigit() else None,
            )
        except Exception:  # noqa: BLE001 - the view is a convenience
            pass
        leaderboard.attrs["view_address"] = table_link
        tags[_TAG_PREFIX + "view_link"] = table_link
        best, closed = _best_line(leaderboard, sort_by), closed_at()
        tags["mlflow.note.content"] = (
            f"Sweep {sweep_id}, closed {closed}.\n\n"
            + (f"**Best: {best}**\n\n" if best else "")
            + f"[The jobs of this sweep side by side, best first]({table_link}) "
            f"([as charts]({link})).\n\n"
            + tags.get("mlflow.note.content", "")
            + "\n\nEvery metric of every job: leaderboard.csv below."
        )
    if study:
        tags.update(study_tags(study))
        protocol_md = f"**Protocol:** {study.get('protocol')}\n\n" + "\n".join(
            f"- {line.strip()}" for line in budget_lines(study)[1:]
        )
        note = tags.get("mlflow.note.content", "")
        head, sep, rest = note.partition("\n\n[The jobs of this sweep")  # after the best
        tags["mlflow.note.content"] = (
            f"{head}\n\n{protocol_md}{sep}{rest}" if sep else f"{protocol_md}\n\n{note}"
        )
    client.log_batch(
        parent_run_id,
        metrics=batch_metrics,
        tags=[RunTag(k, v) for k, v in _clean_tags(tags).items()],
    )
    if sweep_id and best:  # the UI's first screens: the runs table and the experiment's top
        show_sweep_best(
            client,
            parent,
            best,
            str(leaderboard["run_name"].iloc[0]),
            sort_by,
            float(leaderboard[sort_by].iloc[0]),
            table_link,
            closed,
        )
    with tempfile.TemporaryDirectory(prefix="recoeval-leaderboard-") as tmp:
        p = Path(tmp) / "leaderboard.csv"
        leaderboard.to_csv(p, index=False)
        client.log_artifact(parent_run_id, str(p))
    client.set_terminated(parent_run_id, status)
    return leaderboard
