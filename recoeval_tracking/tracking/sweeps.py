"""A sweep: its directory's records, its parent run, and its children compared when the
parent is closed.

The sweep directory holds :data:`SWEEP_FILE` (the sweep id, the parent run id when one was
created, the store, the experiment, the swept keys; once the sweeper has run its jobs, their
outcome: :func:`note_sweep_outcome`), written when the sweep starts so that each
job finds its sweep (:func:`find_sweep_record`), the study's record :data:`STUDY_FILE` (a fair
study's protocol, objective and budgets), and two lock files: the running sweep holds
:data:`SWEEP_LOCK` (so a sync can tell a sweep that was killed from one that is running), and
whoever creates or closes the parent holds :data:`PARENT_LOCK` meanwhile (so concurrent jobs
and syncs create one parent per sweep id). :func:`replicate_of` reads the replicate a job
evaluates (its fold or seed) from its overrides.

Children are linked to their parent by the ``mlflow.parentRunId`` tag and all carry the sweep's
``recoeval.sweep_id``; a parent carries ``recoeval.sweep_parent=true`` and is found by its sweep id
(:func:`find_sweep_parent_run`) when a job or a sync does not know its run id (the store was down
when the sweep started). :func:`finish_sweep_parent` closes it with a leaderboard of its
children (:func:`build_leaderboard`) and each system's differences from its baselines
(:func:`baseline_differences`), as FINISHED when the sweep ran its jobs and has one to show,
even if others failed (the outcome then names them); what the user is shown of it (addresses, descriptions, the
terminal) is :mod:`.views`.

The direction of a metric (which child is best, how the leaderboard is sorted) comes from the
metric registry (:func:`recoeval_tracking.metrics.registry.greater_is_better`: lower is better
for ``mpr`` and ``*_seconds``); callers may name more lower-is-better metrics.
"""

from __future__ import annotations

import json
import math
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .. import _moved
from .._validation import check_optional, param_error
from ..jobdir.markers import write_json_atomic
from ..jobdir.redact import sanitize_key, scrub_text
from . import views
from .client import (
    _TAG_PREFIX,
    _TERMINAL,
    DEFAULT_EXPERIMENT,
    _check_texts,
    _clean_tags,
    _client,
    _experiment_id,
    _now_ms,
    params_from_config,
    resolve_tracking_uri,
)
from .runs import _context_tags, read_ci_tag
from .views import _best_line, _lower_is_better, _markdown

__all__ = [
    # the sweep directory's records
    "SWEEP_FILE",
    "SWEEP_LOCK",
    "PARENT_LOCK",
    "STUDY_FILE",
    "write_sweep_record",
    "read_sweep_record",
    "find_sweep_record",
    "note_swept_keys",
    "note_sweep_outcome",
    "read_study",
    "write_study",
    "replicate_of",
    # the parent run
    "new_sweep_id",
    "SweepParent",
    "create_sweep_parent",
    "find_sweep_parent_run",
    "find_or_create_sweep_parent",
    "adopt_sweep_runs",
    "record_sweep_best",
    "finish_sweep_parent",
    # its children compared
    "build_leaderboard",
    "sweep_end_text",
    "baseline_differences",
    "baseline_text",
    "budget_without_failures",
    "protocol_names_failures",
    "ROLE_TAG",
]

#: What this module handed out of :mod:`.views` before each name had one home: read from here
#: they still work, with a :class:`DeprecationWarning`, for one release.
_MOVED = dict.fromkeys(
    (
        "sweep_view_link",
        "sweep_view_hint",
        "save_sweep_view",
        "ui_base",
        "leaderboard_text",
        "UI_WORKFLOW",
    ),
    "recoeval_tracking.tracking.views",
)
__getattr__ = _moved.moved_names(__name__, _MOVED)


# ---------------------------------------------------------------------------------------------
# The sweep directory's records
# ---------------------------------------------------------------------------------------------

#: The study's record in the sweep directory (JSON, written by the recoeval sweeper:
#: :mod:`recoeval_tracking.app.study`): the protocol line, the objective, each system's budget.
STUDY_FILE = "recoeval_study.json"

#: File in the sweep directory describing the sweep (JSON: ``sweep_id``, ``parent_run_id`` or
#: null, ``tracking_uri``, ``experiment``).
SWEEP_FILE = "recoeval_sweep.json"
#: Lock file held by the running sweep for its whole life.
SWEEP_LOCK = ".recoeval_sweep.lock"
#: Lock file held while a sweep's parent run is found or created, and while it is closed.
PARENT_LOCK = ".recoeval_parent.lock"
_SWEEP_DEPTH = 4  # how many folders above a job directory its sweep directory may be


def write_sweep_record(sweep_dir: str | Path, record: Mapping[str, Any]) -> Path:
    """Write :data:`SWEEP_FILE` into ``sweep_dir`` (created if needed), atomically."""
    root = Path(sweep_dir)
    root.mkdir(parents=True, exist_ok=True)
    return write_json_atomic(root / SWEEP_FILE, dict(record))


def read_sweep_record(sweep_dir: str | Path) -> dict[str, Any] | None:
    """The record of :data:`SWEEP_FILE` in ``sweep_dir``, or None when there is no readable one
    naming a sweep id."""
    path = Path(sweep_dir) / SWEEP_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("sweep_id") else None


def read_study(sweep_dir: str | Path | None) -> dict[str, Any] | None:
    """The study's record of a sweep directory (:data:`STUDY_FILE`), or None when there is
    none (an older sweep, or a sweep of another sweeper)."""
    if not sweep_dir:
        return None
    try:
        value = json.loads((Path(sweep_dir) / STUDY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def write_study(sweep_dir: str | Path, record: Mapping[str, Any]) -> Path:
    """Write a study's record (:data:`STUDY_FILE`) into the sweep directory, atomically."""
    return write_json_atomic(Path(sweep_dir) / STUDY_FILE, dict(record))


#: The keys that name a system, not a replicate (a baseline job gets the grid's values of the
#: others); and those that configure the run, not what it evaluates.
_SYSTEM_KEYS = ("model", "baselines", "baseline_rank", "phase", "label")
_NOT_SETTINGS = ("hydra", "tracking", "mlflow", "output")


def replicate_of(overrides: str | Sequence[str] | None) -> tuple[str, ...]:
    """The replicate a job evaluates (``seed=1``, ``split.fold=2``), from its overrides (a
    list, or the ``recoeval.overrides`` tag's text): those outside the ``model`` group and the
    keys that name a system or configure the run, ``+``/``~`` dropped, sorted. A job of the
    grid and a baseline's job of the same fold or seed have the same replicate: what a fair
    study chooses within, and what a system is paired with its baselines by."""
    items = overrides.split() if isinstance(overrides, str) else list(overrides or ())
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.lstrip("+~")
        head = key.split(".", 1)[0].split("/", 1)[0]
        if sep and key and head not in _SYSTEM_KEYS and head not in _NOT_SETTINGS:
            out.append(f"{key}={value}")
    return tuple(sorted(out))


def note_swept_keys(sweep_dir: str | Path, keys: list[str]) -> None:
    """Add ``keys`` to the ``swept_keys`` of the sweep's record (written by the app's sweep
    callback, which sees the command line only): the keys of an Optuna search space, or of the
    search spaces a sweep tunes its baselines over. Each job's run is then named after its
    values (``cosknn neighbours=57 shrink=3.142``). Nothing when the sweep is not tracked."""
    record = read_sweep_record(sweep_dir)
    if record is None:  # not tracked
        return
    known = [str(k) for k in record.get("swept_keys") or []]
    keys = [k.lstrip("+~") for k in keys]  # +model.shrink: a key the config did not list
    record["swept_keys"] = known + [k for k in keys if k not in known]
    write_sweep_record(sweep_dir, record)


def note_sweep_outcome(
    sweep_dir: str | Path, jobs: int, failed: Sequence[str], after: str | None = None
) -> None:
    """Write into the sweep's record that the sweeper has run its jobs: ``jobs`` launched, of
    which ``failed`` (each named, ``#0 (model.shrink=0)``) failed; ``after``: what the sweep
    did then, when it stopped early (an Optuna search stops after a failed trial's batch).
    :func:`finish_sweep_parent` reads it: a sweep that ran its jobs and chose among those
    that did not fail closes FINISHED, saying how many failed. Nothing when not tracked."""
    record = read_sweep_record(sweep_dir)
    if record is None:  # not tracked
        return
    record["outcome"] = {"jobs": int(jobs), "failed": [str(f) for f in failed]}
    if after:
        record["outcome"]["after"] = str(after)
    write_sweep_record(sweep_dir, record)


class _Closing(NamedTuple):
    """How a sweep's parent closes (:func:`_closing`)."""

    status: str
    #: The outcome in words, the tag ``recoeval.sweep_outcome`` ("" when none was recorded).
    outcome: str = ""
    #: The outcome in short, the description's first line: ``finished, 2 of 24 jobs failed
    #: (#0, #1)``.
    head: str = ""
    #: The failed jobs, each named (``#0 (model.shrink=0)``).
    failed: tuple[str, ...] = ()


def _closing(parent: Any, status: str, leaderboard: pd.DataFrame) -> _Closing:
    """The status a sweep's parent closes with and the sweep's outcome in words, from the
    outcome its sweeper recorded (:func:`note_sweep_outcome`; none: the status as given). A
    sweep closed as FAILED because some jobs failed (the sweeper raises once they have all
    run) closes FINISHED when it has a finished job to show: ``"finished, 2 of 24 jobs failed:
    #0 (...), #1 (...)"``. A crash before the jobs had run, an interruption (KILLED) or a
    sweep whose every job failed keeps its status."""
    sweep_dir = parent.data.tags.get(_TAG_PREFIX + "sweep_dir")
    outcome = ((sweep_dir and read_sweep_record(sweep_dir)) or {}).get("outcome")
    if not isinstance(outcome, dict):
        return _Closing(status)
    jobs, failed = int(outcome.get("jobs") or 0), [str(f) for f in outcome.get("failed") or []]
    if not failed:
        return _Closing(status, f"finished, all {jobs} jobs ran" if status == "FINISHED" else "")
    shown = "status" in leaderboard.columns and bool((leaderboard["status"] == "FINISHED").any())
    if status == "FAILED" and shown and len(failed) < jobs:
        status = "FINISHED"
    head = f"{status.lower()}, {len(failed)} of {jobs} jobs failed"
    after = f" ({str(outcome['after']).rstrip('.')})" if outcome.get("after") else ""
    numbers = ", ".join(f.split(" ", 1)[0] for f in failed)
    return _Closing(
        status, f"{head}: {', '.join(failed)}{after}", f"{head} ({numbers})", tuple(failed)
    )


def find_sweep_record(job_dir: str | Path) -> tuple[Path, dict[str, Any]] | None:
    """The sweep directory above ``job_dir`` (up to four levels) and its record, or None."""
    here = Path(job_dir).resolve()
    for folder in list(here.parents)[:_SWEEP_DEPTH]:
        record = read_sweep_record(folder)
        if record is not None:
            return folder, record
    return None


# ---------------------------------------------------------------------------------------------
# The parent run
# ---------------------------------------------------------------------------------------------


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


def new_sweep_id() -> str:
    """A new sweep id: 12 hex digits, at least one of them a letter other than ``e``, so that
    the command line reads it back as text (``select.sweep_id=726931357e10`` is the float
    7.26931357e18 to Hydra, ``select.sweep_id=012345678901`` the int 12345678901: either
    would leave the printed report command finding no sweep)."""
    while True:
        sweep_id = uuid.uuid4().hex[:12]
        if any(c in "abcdf" for c in sweep_id):
            return sweep_id


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
        Defaults to a new 12-hex-digit id (:func:`new_sweep_id`); every child gets the same
        ``recoeval.sweep_id`` tag.
    tags, params : dict, optional
        E.g. the sweep's shared config and the sweeper's parameter grid; secrets dropped.

    Returns
    -------
    SweepParent
        ``(run_id, sweep_id, experiment_id, tracking_uri)``.
    """
    from mlflow.entities import Param

    func = "create_sweep_parent"
    _check_texts(
        func,
        tracking_uri=tracking_uri,
        run_name=run_name,
        sweep_id=sweep_id,
        artifact_location=artifact_location,
    )
    check_optional(tags, Mapping, "tags", func)
    check_optional(params, Mapping, "params", func)
    sweep_id = sweep_id or new_sweep_id()
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    exp_id = _experiment_id(client, experiment, artifact_location, uri)
    run_tags = _clean_tags(
        {
            **_context_tags(),  # the UI's "Created by" and "Source", as a job's run has them
            _TAG_PREFIX + "sweep_id": sweep_id,
            _TAG_PREFIX + "sweep_parent": "true",
            **(tags or {}),
        }
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
        selection runs (tag ``recoeval.phase=selection``: evaluated on validation only),
        ``attrs["baselines"]`` the baselines' ranks by run id and ``attrs["tags"]`` each
        row's ``recoeval.*`` tags (for :func:`baseline_differences`).
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
    table.attrs["experiment_id"] = parent.info.experiment_id  # the rows' links (views)
    table.attrs["headline"] = [m for m in headline if m in metrics] or list(metrics)
    table.attrs["sort_by"] = sort_by
    table.attrs["selection_runs"] = len(everything) - len(children)
    # what marks and pairs the baselines (baseline_differences): each tested run's rank among
    # the baselines and its tags of the sweep
    table.attrs["baselines"] = {
        run.info.run_id: _rank(run.data.tags)
        for run in children
        if _rank(run.data.tags) is not None
    }
    table.attrs["tags"] = {
        run.info.run_id: {k: v for k, v in run.data.tags.items() if k.startswith(_TAG_PREFIX)}
        for run in children
    }
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
    failed, jobs, test_failed = (int(entry.get(k) or 0) for k in ("failed", "jobs", "test_failed"))
    lost = f", {failed} of {jobs} failed on validation" if failed else ""
    lost += f", {test_failed} failed on test" if test_failed else ""
    return f"{n} configuration{'s' if n != 1 else ''}{whole}{lost}, {seconds:.1f} s of fits"


#: The failed-job clauses :func:`_budget_text` adds to a system's budget.
_BUDGET_FAILURES = (r", \d+ of \d+ failed on validation", r", \d+ failed on test")


def protocol_names_failures(protocol: Any) -> bool:
    """Whether a study's protocol line names its failed jobs (``...; failed jobs: cosine 2 of
    6 configurations on validation (not chosen from)``): the budgets then leave their own
    count of them out (:func:`budget_without_failures`), so that each is said once."""
    return "; failed jobs: " in str(protocol or "")


def budget_without_failures(text: str) -> str:
    """A system's budget (a ``recoeval.budget.<system>`` tag) without its failed-job counts,
    for a page whose protocol line names the failed jobs already: ``"6 configurations, 2 of
    6 failed on validation, 0.6 s of fits"`` -> ``"6 configurations, 0.6 s of fits"``."""
    import re

    for clause in _BUDGET_FAILURES:
        text = re.sub(clause, "", text)
    return text


def budget_lines(study: Mapping[str, Any] | None) -> list[str]:
    """Each system's budget, a line each under a heading (empty without a study); the heading
    says when the budgets are unequal. The failed jobs are counted once: in the study's
    protocol line when it names them (:func:`protocol_names_failures`), else in the budgets."""
    systems = (study or {}).get("systems") or {}
    if not systems:
        return []
    equal = bool((study or {}).get("equal_budgets", True))
    head = "budget per system" + ("" if equal else " (unequal: compare with care)") + ":"
    width = max(len(str(n)) for n in systems) + 2
    once = budget_without_failures if protocol_names_failures(study.get("protocol")) else str
    lines = [head]
    for name, entry in systems.items():
        kind = " (baseline)" if entry.get("baseline_rank") is not None else ""
        lines.append(f"     {str(name) + kind:<{width + 11}}{once(_budget_text(entry))}")
    return lines


# -- every run against every baseline, paired by replicate ----------------------------------


def _override_items(overrides: str) -> list[tuple[str, str]]:
    out = []
    for item in str(overrides or "").split():
        key, sep, value = item.partition("=")
        key = key.lstrip("+~")
        if sep and key:
            out.append((key, value))
    return out


def _head(key: str) -> str:
    return key.split(".", 1)[0].split("/", 1)[0]


def _system_of(overrides: str, rank: int | None) -> tuple[str, ...]:
    if rank is not None:
        return ("baseline", str(rank))
    return tuple(sorted(f"{k}={v}" for k, v in _override_items(overrides) if _head(k) == "model"))


def _system_name(run_name: str, replicate: Sequence[str], varying: set[str]) -> str:
    """A run's name without the words its replicate adds (``item_knn fold=2`` -> ``item_knn``)."""
    from .names import _short

    words = {
        _short(k, v) for k, _, v in (item.partition("=") for item in replicate) if k in varying
    }
    kept = [w for w in str(run_name).split() if w not in words]
    return " ".join(kept) or str(run_name)


def _rank(tags: Mapping[str, str] | None) -> int | None:
    text = str((tags or {}).get(_TAG_PREFIX + "baseline_rank", "") or "")
    return int(text) if text.isdigit() else None


def baseline_differences(
    board: pd.DataFrame,
    tags: Mapping[str, Mapping[str, str]],
    metric: str | None = None,
) -> pd.DataFrame:
    """Every system of a sweep against every baseline on ``metric`` (default the board's sort
    metric), each run paired with the baseline's run of the same replicate (the same fold, seed
    or other setting outside the model group: :func:`replicate_of`).

    ``board`` as :func:`build_leaderboard` returns it (the tested runs), ``tags`` the tags of
    each run by id. One row per (baseline, system), the baselines in the order given
    (``recoeval.baseline_rank``), the systems best first against each: ``baseline``,
    ``baseline_rank``, ``baseline_key`` (the model option, for metric keys), ``baseline_value``
    (its mean over the paired replicates), ``system``, ``is_baseline``, ``diff`` (the mean over
    the paired replicates of the run's value minus the baseline's), ``rel`` (``diff`` over
    ``baseline_value``), ``n`` (replicates paired) and ``run_ids``. ``attrs``: ``metric``,
    ``replicate_keys`` (the keys that vary between replicates), ``per_run`` ({(run id,
    baseline_key): difference}: what :func:`finish_sweep_parent` logs on each run as
    ``vs_<baseline>_<metric>``), ``baseline_runs`` (the baselines' run ids). Empty without a
    baseline or a metric."""
    metric = metric or board.attrs.get("sort_by")
    columns = [
        "baseline",
        "baseline_rank",
        "baseline_key",
        "baseline_value",
        "system",
        "is_baseline",
        "diff",
        "rel",
        "n",
        "run_ids",
    ]
    empty = pd.DataFrame(columns=columns)
    empty.attrs.update(metric=metric, replicate_keys=[], per_run={}, baseline_runs=[])
    if not metric or metric not in board.columns or not len(board):
        return empty
    runs: list[dict[str, Any]] = []
    for _, row in board.iterrows():
        t = tags.get(str(row["run_id"])) or {}
        overrides = str(t.get(_TAG_PREFIX + "overrides", row.get("overrides", "")) or "")
        rank = _rank(t)
        runs.append(
            {
                "run_id": str(row["run_id"]),
                "name": str(row["run_name"]),
                "value": float(row[metric]) if pd.notna(row[metric]) else math.nan,
                "replicate": replicate_of(overrides),
                "system": _system_of(overrides, rank),
                "rank": rank,
                "model": next((v for k, v in _override_items(overrides) if k == "model"), ""),
            }
        )
    if not any(r["rank"] is not None for r in runs):
        return empty
    values: dict[str, set[str]] = {}
    for r in runs:
        for item in r["replicate"]:
            k, _, v = item.partition("=")
            values.setdefault(k, set()).add(v)
    varying = {k for k, v in values.items() if len(v) > 1}
    systems: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in runs:
        systems.setdefault(r["system"], []).append(r)
    names = {
        key: _system_name(members[0]["name"], members[0]["replicate"], varying)
        for key, members in systems.items()
    }
    lower = _lower_is_better(metric, None)
    rows, per_run = [], {}
    ranks = sorted({r["rank"] for r in runs if r["rank"] is not None})
    for rank in ranks:
        bkey = ("baseline", str(rank))
        base = {r["replicate"]: r["value"] for r in systems[bkey] if math.isfinite(r["value"])}
        model = systems[bkey][0]["model"] or names[bkey]
        bname = sanitize_key(model)
        block = []
        for key, members in systems.items():
            if key == bkey:
                continue
            diffs, bases, ids = [], [], []
            for r in members:
                if r["replicate"] in base and math.isfinite(r["value"]):
                    d = r["value"] - base[r["replicate"]]
                    diffs.append(d)
                    bases.append(base[r["replicate"]])
                    ids.append(r["run_id"])
                    per_run[(r["run_id"], bname)] = d
            if not diffs:
                continue
            diff, ref = float(np.mean(diffs)), float(np.mean(bases))
            block.append(
                {
                    "baseline": names[bkey],
                    "baseline_rank": rank,
                    "baseline_key": bname,
                    "baseline_value": ref,
                    "system": names[key],
                    "is_baseline": key[:1] == ("baseline",),
                    "diff": diff,
                    "rel": diff / ref if ref else math.nan,
                    "n": len(diffs),
                    "run_ids": ids,
                }
            )
        block.sort(key=lambda row: row["diff"], reverse=not lower)
        rows += block
    out = pd.DataFrame(rows, columns=columns)
    out.attrs.update(
        metric=metric,
        replicate_keys=sorted(varying),
        per_run=per_run,
        baseline_runs=[r["run_id"] for r in runs if r["rank"] is not None],
    )
    return out


def baseline_text(diffs: pd.DataFrame) -> list[str]:
    """The terminal's lines of :func:`baseline_differences`: one block per baseline, in the
    order given, each system's mean difference (relative in brackets) and, with replicates,
    how many were paired."""
    if not len(diffs):
        return []
    metric = diffs.attrs.get("metric")
    keys = diffs.attrs.get("replicate_keys") or []
    pairs = (
        f", each run paired with the baseline's run of the same {', '.join(keys)}" if keys else ""
    )
    lines = [f"against each baseline on {metric}{pairs}:"]
    width = max(
        len(str(s)) + (11 if b else 0) for s, b in zip(diffs["system"], diffs["is_baseline"])
    )
    for _, block in diffs.groupby("baseline_rank", sort=True):
        first = block.iloc[0]
        n_base = int(block["n"].max())
        mean_of = f", mean of {n_base} replicates" if keys else ""
        lines.append(
            f"  {first['baseline']} (baseline; {metric} = {first['baseline_value']:.4f}{mean_of}):"
        )
        for row in block.itertuples():
            name = str(row.system) + (" (baseline)" if row.is_baseline else "")
            rel = f"  ({row.rel:+.1%})" if math.isfinite(row.rel) else ""
            count = f"  {row.n} replicate{'s' if row.n != 1 else ''}" if keys else ""
            lines.append(f"     {name:<{width + 2}}{row.diff:+.4f}{rel}{count}")
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
            views.leaderboard_text(board),
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
    lines.append(views.sweep_view_hint(parent_run_id, uri))
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
    failed_jobs: int = 0,
) -> tuple[list, dict[str, str]]:
    """The parent's metrics (``sweep_jobs``, ``sweep_jobs_failed``, ``best_<metric>``: the best
    child's value exactly as that child logged it) and tags (``recoeval.best_run.<metric>``,
    the leaderboard as ``mlflow.note.content``). A search's objective (``searched``) is logged
    at ``searched_step``, its best trial, after the curve that :func:`record_sweep_best` drew
    (unless its ``recorded`` latest value is already the best child's). ``failed_jobs``: the
    jobs the sweeper saw fail (a failed job logs no run, so no child counts it)."""
    from mlflow.entities import Metric

    now = _now_ms()
    batch_metrics = [Metric("sweep_jobs", float(len(leaderboard)), now, 0)]
    if leaderboard.attrs.get("selection_runs"):  # a fair study's jobs on validation only
        batch_metrics.append(
            Metric("sweep_selection_jobs", float(leaderboard.attrs["selection_runs"]), now, 0)
        )
    if "status" in leaderboard.columns or failed_jobs:
        n_failed = (
            int((leaderboard["status"] != "FINISHED").sum()) if "status" in leaderboard else 0
        )
        batch_metrics.append(Metric("sweep_jobs_failed", float(max(n_failed, failed_jobs)), now, 0))
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


#: The tag that marks each tested run of a sweep with baselines: ``baseline`` or ``compared``
#: (a column of the sweep's view in the MLflow UI).
ROLE_TAG = _TAG_PREFIX + "role"


def _children_tags(client: Any, experiment_id: str, parent_run_id: str) -> dict[str, dict]:
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{parent_run_id}'",
        max_results=5000,
    )
    return {r.info.run_id: dict(r.data.tags) for r in runs}


def _vs_columns(diffs: pd.DataFrame) -> list[str]:
    """The runs table's columns of a sweep with baselines: each run's role, then its
    difference to each baseline (the keys :func:`_log_baseline_differences` logs)."""
    if not len(diffs):
        return []
    metric = diffs.attrs["metric"]
    keys = dict.fromkeys(diffs.sort_values("baseline_rank")["baseline_key"])
    return [f"tags.`{ROLE_TAG}`"] + [f"metrics.`{sanitize_key(f'vs_{b}_{metric}')}`" for b in keys]


def _log_baseline_differences(
    client: Any, leaderboard: pd.DataFrame, diffs: pd.DataFrame
) -> tuple[list, dict[str, str], str]:
    """Log on each tested run ``vs_<baseline>_<metric>`` (its difference on the sort metric to
    each baseline's run of the same replicate, :func:`baseline_differences`) and its role
    (:data:`ROLE_TAG`); return the parent's metrics (``vs_<baseline>_<metric>``: the best
    compared system's mean difference to that baseline), tags (``recoeval.vs_best.<baseline>``
    naming that system, ``recoeval.vs_baselines``: the terminal's lines) and the Markdown
    table of every system against every baseline for its description."""
    from mlflow.entities import Metric, RunTag

    if not len(diffs):
        return [], {}, ""
    metric = diffs.attrs["metric"]
    now = _now_ms()
    per_run: dict[str, list] = {}
    for (run_id, bname), d in diffs.attrs["per_run"].items():
        per_run.setdefault(run_id, []).append(
            Metric(sanitize_key(f"vs_{bname}_{metric}"), float(d), now, 0)
        )
    ranks = set(diffs.attrs.get("baseline_runs") or [])
    for run_id in leaderboard["run_id"]:
        role = "baseline" if run_id in ranks else "compared"
        client.log_batch(
            str(run_id), metrics=per_run.get(str(run_id), []), tags=[RunTag(ROLE_TAG, role)]
        )
    metrics, tags = [], {}
    for _, block in diffs.groupby("baseline_rank", sort=True):
        bname = str(block["baseline_key"].iloc[0])
        compared = block[~block["is_baseline"]]
        if len(compared):
            best = compared.iloc[0]
            metrics.append(
                Metric(sanitize_key(f"vs_{bname}_{metric}"), float(best["diff"]), now, 0)
            )
            tags[sanitize_key(f"{_TAG_PREFIX}vs_best.{bname}")] = str(best["system"])
    tags[_TAG_PREFIX + "vs_baselines"] = "\n".join(baseline_text(diffs))[:5000]
    return metrics, tags, _baseline_markdown(diffs)


def _baseline_markdown(diffs: pd.DataFrame) -> str:
    """Every system against every baseline as a Markdown table: rows the systems (the
    compared ones first), columns the baselines; each cell the mean difference and the
    replicates paired."""
    from .views import _md_cell

    metric = diffs.attrs.get("metric")
    order = list(dict.fromkeys(diffs.sort_values("is_baseline", kind="stable")["system"]))
    bases = list(dict.fromkeys(diffs.sort_values("baseline_rank")["baseline"]))
    keys = diffs.attrs.get("replicate_keys") or []
    lines = [
        f"**Against each baseline** ({_md_cell(metric)}, difference"
        + (
            f"; mean over the {_md_cell(', '.join(keys))} replicates paired, their number"
            if keys
            else ""
        )
        + "):",
        "",
        "| system | " + " | ".join(f"vs {_md_cell(b)} (baseline)" for b in bases) + " |",
        "|---|" + "---|" * len(bases),
    ]
    is_base = dict(zip(diffs["system"], diffs["is_baseline"]))
    for system in order:
        cells = []
        for b in bases:
            hit = diffs[(diffs["system"] == system) & (diffs["baseline"] == b)]
            if not len(hit):
                cells.append("")
                continue
            row = hit.iloc[0]
            cells.append(f"{row['diff']:+.4f}" + (f" ({int(row['n'])})" if keys else ""))
        name = _md_cell(system) + (" (baseline)" if is_base.get(system) else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _differences(client: Any, parent: Any, leaderboard: pd.DataFrame) -> Any:
    """Every tested run against every baseline, paired by replicate
    (:func:`baseline_differences`); none when the children's tags cannot be read."""
    try:
        tags_by_run = leaderboard.attrs.get("tags")
        if tags_by_run is None:
            tags_by_run = _children_tags(client, parent.info.experiment_id, parent.info.run_id)
        return baseline_differences(leaderboard, tags_by_run)
    except Exception:  # noqa: BLE001 - the differences are a convenience; the board is closed
        return baseline_differences(leaderboard.iloc[0:0], {})


def _sweep_views(
    client: Any,
    parent: Any,
    sweep_id: str,
    leaderboard: pd.DataFrame,
    headline: Sequence[str],
    diffs: Any,
) -> tuple[str, str]:
    """The addresses of the sweep's jobs as charts and as a saved table view (a fair study's
    tested runs only), also kept in the leaderboard's ``attrs``."""
    sort_by = leaderboard.attrs.get("sort_by")
    tested_only = bool(leaderboard.attrs.get("selection_runs"))  # a fair study
    link = views.sweep_view_link(parent.info.experiment_id, sweep_id, sort_by, tested_only)
    leaderboard.attrs["view_link"] = link
    table_link = link
    try:  # a view the UI restores; a store refusing the tag keeps the plain address
        fam, sep, cut = (sort_by or "").rpartition("_at_")
        table_link = views.save_sweep_view(
            client,
            parent.info.experiment_id,
            sweep_id,
            [m for m in headline if m in leaderboard.columns],
            sort_by,
            f"{fam}_at_k" if sep and cut.isdigit() else None,
            extra_columns=_vs_columns(diffs),
            tested_only=tested_only,
        )
    except Exception:  # noqa: BLE001 - the view is a convenience
        pass
    leaderboard.attrs["view_address"] = table_link
    return link, table_link


def _insert_note(tags: dict[str, str], text: str, *, before: str) -> None:
    """Put ``text`` into the parent's description before the paragraph starting ``before``
    (at its end when there is none)."""
    note = tags.get("mlflow.note.content", "")
    at = note.find(before)
    tags["mlflow.note.content"] = (
        note[:at] + "\n\n" + text + note[at:] if at >= 0 else (note + "\n\n" + text).strip()
    )


def _failed_note(failed: Sequence[str]) -> str:
    """The parent's description's paragraph on a sweep's failed jobs ("" when none failed)."""
    if not failed:
        return ""
    return (
        f"\n\n**Failed jobs:** {', '.join(failed)}. Each said why on the terminal when it "
        "failed and logged no run; the sweep chose among the jobs that ran."
    )


def _add_study(tags: dict[str, str], study: Mapping[str, Any]) -> None:
    """A fair study's tags (:func:`study_tags`) and, in the description after the best run,
    its protocol line and each system's budget (:func:`budget_lines`: the failed jobs counted
    once)."""
    tags.update(study_tags(study))
    protocol_md = f"**Protocol:** {study.get('protocol')}\n\n" + "\n".join(
        f"- {line.strip()}" for line in budget_lines(study)[1:]
    )
    _insert_note(tags, protocol_md, before="\n\n[The jobs of this sweep")


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
    under a link to the jobs side by side: :func:`.views.sweep_view_link`, also in the returned
    table's ``attrs["view_link"]``), then sets the status.

    Parameters
    ----------
    parent_run_id : str
    status : {"FINISHED", "FAILED", "KILLED"}
        FAILED becomes FINISHED when the sweeper recorded that it ran its jobs
        (:func:`note_sweep_outcome`) and some child finished: the jobs that failed are named
        in the description's first line, a ``Failed jobs:`` paragraph, the tag
        ``recoeval.sweep_outcome`` and the metric ``sweep_jobs_failed``.
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
    closing = _closing(parent, status, leaderboard)
    trial = str(parent.data.tags.get(_TAG_PREFIX + "best.trial", ""))
    batch_metrics, tags = _summary(
        leaderboard,
        headline,
        lower_is_better,
        parent.data.tags.get(_TAG_PREFIX + "best.objective"),
        int(trial) if trial.isdigit() else 0,
        parent.data.metrics,
        len(closing.failed),
    )
    if closing.outcome:
        tags[_TAG_PREFIX + "sweep_outcome"] = closing.outcome
    diffs = _differences(client, parent, leaderboard)
    if sweep_id:
        sort_by = leaderboard.attrs.get("sort_by")
        link, table_link = _sweep_views(client, parent, sweep_id, leaderboard, headline, diffs)
        tags[_TAG_PREFIX + "view_link"] = table_link
        best, closed = _best_line(leaderboard, sort_by), views.closed_at()
        tags["mlflow.note.content"] = (
            f"Sweep {sweep_id}, closed {closed}"
            + (f": **{closing.head}**.\n\n" if closing.failed else ".\n\n")
            + (f"**Best: {best}**\n\n" if best else "")
            + f"[The jobs of this sweep side by side, best first]({table_link}) "
            f"([as charts]({link})).\n\n"
            + tags.get("mlflow.note.content", "")
            + _failed_note(closing.failed)
            + "\n\nEvery metric of every job: leaderboard.csv below."
        )
    if study:
        _add_study(tags, study)
    try:
        vs_metrics, vs_tags, vs_note = _log_baseline_differences(client, leaderboard, diffs)
    except Exception:  # noqa: BLE001 - the differences are a convenience; the board is closed
        vs_metrics, vs_tags, vs_note = [], {}, ""
    batch_metrics += vs_metrics
    tags.update(vs_tags)
    if vs_note:
        _insert_note(tags, vs_note, before="\n\nEvery metric of every job")
    client.log_batch(
        parent_run_id,
        metrics=batch_metrics,
        tags=[RunTag(k, v) for k, v in _clean_tags(tags).items()],
    )
    if sweep_id and best:  # the UI's first screens: the runs table and the experiment's top
        views.show_sweep_best(
            client,
            parent,
            best,
            str(leaderboard["run_name"].iloc[0])
            + (
                " (baseline)"
                if leaderboard["run_id"].iloc[0] in diffs.attrs["baseline_runs"]
                else ""
            ),
            sort_by,
            float(leaderboard[sort_by].iloc[0]),
            table_link,
            closed,
        )
    with tempfile.TemporaryDirectory(prefix="recoeval-leaderboard-") as tmp:
        p = Path(tmp) / "leaderboard.csv"
        leaderboard.to_csv(p, index=False)
        client.log_artifact(parent_run_id, str(p))
    client.set_terminated(parent_run_id, closing.status)
    return leaderboard
