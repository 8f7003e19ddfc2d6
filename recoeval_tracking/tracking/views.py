"""What a user is shown of a sweep: MLflow UI addresses (with the state the UI restores), the
experiment's description (its recent sweeps, each named), the leaderboard in Markdown (the
parent's description) and in the terminal. Rounding lives here, in text only: the runs' metrics
are exact. :mod:`.sweeps` closes the parent and calls :func:`save_sweep_view` and
:func:`show_sweep_best`."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..jobdir.redact import scrub_text
from ..metrics.registry import greater_is_better
from .client import _TAG_PREFIX, _client, resolve_tracking_uri

__all__ = [
    "UI_WORKFLOW",
    "SHARED_VIEW_TAG",
    "sweep_view_link",
    "save_sweep_view",
    "ui_base",
    "sweep_view_hint",
    "leaderboard_text",
    "show_sweep_best",
    "sweep_line",
    "RECENT_SWEEPS",
    "NEWEST_SWEEP",
    "newest_sweep_line",
    "UI_PORT_TAG",
    "run_link",
    "HEAD_CHARS",
]

#: Heading of the experiment description's list of recent sweeps (:func:`show_sweep_best`).
RECENT_SWEEPS = "**Recent sweeps**, newest first (each line names its sweep):"
#: How many sweeps the experiment's description lists.
RECENT_SWEEPS_SHOWN = 5
#: The start of the description's first line once a sweep has closed: the UI folds the
#: description to that line, so it says alone which sweep is newest and its best job.
NEWEST_SWEEP = "Newest sweep "
_OLD_HEAD = "Latest sweep"  # the one-sweep banner of earlier versions, replaced when seen


#: The longest first line of the experiment's description: the MLflow UI (3.17) shows the
#: folded description in one line about 100 characters wide beside its Assistant panel (a
#: 1400-pixel window), and cuts a longer one mid-word.
HEAD_CHARS = 96


def newest_sweep_line(sweep_id: str, best_name: str, metric: str, value: float) -> str:
    """The experiment description's first line, short enough for the UI to show whole
    (:data:`HEAD_CHARS`): ``Newest sweep 3f2a9c1b0d4e: best als f=64, ndcg_at_10 = 0.3521.``
    (no link, no interval, no time: it is the folded header; the list below has them). A long
    run name is cut with an ellipsis."""
    tail = f", {metric} = {value:.4f}."
    head = f"{NEWEST_SWEEP}{sweep_id}: best "
    room = HEAD_CHARS - len(head) - len(tail)
    name = " ".join(str(best_name).split())
    if len(name) > room:
        name = name[: max(room - 1, 1)].rstrip() + "\u2026"
    return head + name + tail


def sweep_line(sweep_id: str, closed: str, best: str, link: str) -> str:
    """One sweep in the experiment's description: ``- Sweep 3f2a9c1b0d4e (closed 2026-11-27
    07:40 UTC): best als f=64: ndcg_at_10 = 0.3521 (...). [Its jobs ...](address).``"""
    return (
        f"- Sweep {sweep_id} (closed {closed}): best {best}. "
        f"[Its jobs side by side, best first]({link})."
    )


def _recent_sweeps(old: str, sweep_id: str, line: str, head: str) -> str:
    """The experiment description ``old`` with ``head`` (:func:`newest_sweep_line`) as its
    first line, then ``line`` first in its list of recent sweeps (an earlier line of the same
    sweep dropped, at most :data:`RECENT_SWEEPS_SHOWN` kept), the other paragraphs as they
    were."""
    paragraphs = [p for p in old.split("\n\n") if p and not p.startswith((_OLD_HEAD, NEWEST_SWEEP))]
    lines = [line]
    rest = []
    for p in paragraphs:
        if p.startswith(RECENT_SWEEPS):
            lines += [
                ln
                for ln in p.splitlines()[1:]
                if ln.startswith("- Sweep ") and not ln.startswith(f"- Sweep {sweep_id} ")
            ]
        else:
            rest.append(p)
    block = "\n".join([RECENT_SWEEPS, *lines[:RECENT_SWEEPS_SHOWN]])
    return "\n\n".join([head, block, *rest])


def closed_at() -> str:
    """The current time as the descriptions show it: ``2026-11-27 07:40 UTC``."""
    import datetime as _dt

    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def show_sweep_best(
    client: Any,
    parent: Any,
    best: str,
    best_name: str,
    metric: str,
    value: float,
    link: str,
    closed: str | None = None,
) -> None:
    """Put a closed sweep's best job where the MLflow UI shows it first: in the parent run's name
    (the runs table lists the parent collapsed: ``best als 0.3521 · sweep model``) and atop the
    experiment's description, which the UI shows above the runs whatever page it opens, folded
    to its first line. That line names the newest sweep and its best job with its value, short
    enough to be read whole (:func:`newest_sweep_line`); below it, a list of the recent sweeps, newest first, each line
    naming its sweep id and when it closed with its best job and the address of its jobs side
    by side (:func:`sweep_line`). A page opened from an earlier sweep's address thus never reads
    another sweep's winner as its own."""
    name = parent.info.run_name or ""
    if not name.startswith("best "):  # the answer first: the table's column is narrow
        client.update_run(parent.info.run_id, name=f"best {best_name} {value:.4f} · {name}"[:250])
    sweep_id = parent.data.tags.get(_TAG_PREFIX + "sweep_id", parent.info.run_id)
    exp = client.get_experiment(parent.info.experiment_id)
    old = exp.tags.get("mlflow.note.content", "")
    closed = closed or closed_at()
    line = sweep_line(sweep_id, closed, best, link)
    head = newest_sweep_line(sweep_id, best_name, metric, value)
    client.set_experiment_tag(
        exp.experiment_id, "mlflow.note.content", _recent_sweeps(old, sweep_id, line, head)[:5000]
    )


#: The MLflow UI's query parameter for its training-runs pages. MLflow 3.x's UI picks the
#: experiment's landing page (GenAI overview or training runs) from a sidebar switch kept in the
#: browser (default GenAI) or from this parameter, which every link inside the UI carries on:
#: its ``mlflow.experimentKind`` tag is no longer read (3.17's bundle).
UI_WORKFLOW = "workflowType=machine_learning"


def _lower_is_better(metric: str, lower: Sequence[str] | None) -> bool:
    """The registry's direction of ``metric``, unless the caller lists it as lower-is-better."""
    if lower is not None and metric in lower:
        return True
    return not greater_is_better(metric)


def _sweep_filter(sweep_id: str, tested_only: bool = False) -> str:
    """The runs of a sweep without their parent (jobs carry a job uid, the parent none);
    ``tested_only``: a fair study's tested runs, without its selection runs (evaluated on
    validation only, tag ``recoeval.phase=selection``)."""
    text = f"tags.`{_TAG_PREFIX}sweep_id` = '{sweep_id}' and tags.`{_TAG_PREFIX}job_uid` LIKE '%'"
    return text + (f" and tags.`{_TAG_PREFIX}phase` = 'test'" if tested_only else "")


def sweep_view_link(
    experiment_id: str, sweep_id: str, sort_by: str | None = None, tested_only: bool = False
) -> str:
    """The MLflow UI address (the part after the host, from ``#``) of a sweep's jobs without
    their parent, best first by ``sort_by``, in the chart view: the runs page otherwise shows the
    parent collapsed, and its charts only the parent's ``best_*`` values. It carries
    :data:`UI_WORKFLOW`, so the UI stays on its training-runs pages."""
    from urllib.parse import quote

    parts = [f"searchFilter={quote(_sweep_filter(sweep_id, tested_only), safe='')}"]
    if sort_by:
        asc = "true" if _lower_is_better(sort_by, None) else "false"
        parts += [f"orderByKey={quote(f'metrics.`{sort_by}`', safe='')}", f"orderByAsc={asc}"]
    parts += ["compareRunsMode=CHART", UI_WORKFLOW]
    return f"#/experiments/{experiment_id}/runs?" + "&".join(parts)


#: Prefix of the experiment tags that hold the MLflow UI's shared views (its "Share" button
#: stores the page's state there and puts ``viewStateShareKey=<key>`` in the address).
SHARED_VIEW_TAG = "mlflow.sharedViewState."


def _view_state(
    sweep_id: str,
    metrics: Sequence[str],
    sort_by: str | None,
    curve: str | None,
    extra_columns: Sequence[str] = (),
    tested_only: bool = False,
) -> dict[str, Any]:
    """The state of the runs page that MLflow 3's shared views restore: the sweep's jobs, best
    first, the headline metrics as the table's columns, and their charts first (one bar chart
    per headline metric, then the headline curve over k); ``tested_only``: a fair study's
    tested runs only."""
    charts = [
        {
            "uuid": f"recoeval-{m}",
            "type": "BAR",
            "runsCountToCompare": 10,
            "metricSectionId": "recoeval-headline",
            "deleted": False,
            "isGenerated": False,
            "metricKey": m,
        }
        for m in metrics
    ]
    if curve:
        charts.append(
            {
                "uuid": f"recoeval-{curve}",
                "type": "LINE",
                "runsCountToCompare": 10,
                "metricSectionId": "recoeval-headline",
                "deleted": False,
                "isGenerated": False,
                "metricKey": curve,
                "selectedMetricKeys": [curve],
                "xAxisKey": "step",
                "scaleType": "linear",
                "lineSmoothness": 0,
                "selectedXAxisMetricKey": "",
            }
        )
    # the role first, the sort metric, the differences to the baselines, the other metrics
    first = [sort_by] if extra_columns and sort_by in metrics else []
    shown = [f"metrics.`{m}`" for m in [*first, *(m for m in metrics if m not in first)]]
    columns = [*extra_columns[:1], *shown[:1], *extra_columns[1:], *shown[1:]]
    state: dict[str, Any] = {
        "searchFilter": _sweep_filter(sweep_id, tested_only),
        "selectedColumns": columns,
        "columnOrder": columns,
        "runsHiddenMode": "SHOW_ALL",
        "compareRunCharts": charts,
        "compareRunSections": [
            {
                "uuid": "recoeval-headline",
                "name": "Headline metrics",
                "display": True,
                "isReordered": False,
                "deleted": False,
            }
        ],
        "hideEmptyCharts": True,
        "isAccordionReordered": False,
    }
    if sort_by:
        state["orderByKey"] = f"metrics.`{sort_by}`"
        state["orderByAsc"] = _lower_is_better(sort_by, None)
    return state


def save_sweep_view(
    client: Any,
    experiment_id: str,
    sweep_id: str,
    metrics: Sequence[str],
    sort_by: str | None = None,
    curve: str | None = None,
    extra_columns: Sequence[str] = (),
    tested_only: bool = False,
) -> str:
    """Store a view of the sweep's jobs as an MLflow shared view (an experiment tag
    ``mlflow.sharedViewState.<key>``, as the UI's "Share" button does) and return its address
    (the part after the host, from ``#``): the runs table of the jobs, best first by
    ``sort_by``, with the headline ``metrics`` as its columns and their charts first.
    ``extra_columns`` (the UI's column keys, ``tags.`recoeval.role``` first, then e.g.
    ``metrics.`vs_popularity_ndcg_at_10```): the first before the metrics, the others after
    the first metric (the sort metric, when it is a headline one)."""
    key = f"recoeval-sweep-{sweep_id}"
    state = _view_state(
        sweep_id, list(metrics), sort_by, curve, list(extra_columns), tested_only=tested_only
    )
    client.set_experiment_tag(
        experiment_id, SHARED_VIEW_TAG + key, json.dumps(state, separators=(",", ":"))
    )
    return (
        f"#/experiments/{experiment_id}/runs?viewStateShareKey={key}"
        f"&compareRunsMode=TABLE&{UI_WORKFLOW}"
    )


def _free_port(preferred: int = 5000) -> int:
    """``preferred`` when nothing listens there on this machine, else a free port."""
    import socket

    for port in (preferred, 0):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    return preferred


#: The experiment tag where a sweep records the port of the ``mlflow ui`` command it printed,
#: so that a later sweep on the same store finds the UI the user started there.
UI_PORT_TAG = _TAG_PREFIX + "ui_port"
#: The port ``mlflow ui`` serves on by default.
DEFAULT_UI_PORT = 5000


def _serves_run(port: int, run_id: str, timeout: float = 0.5) -> bool:
    """Whether an MLflow UI on ``127.0.0.1:port`` serves the store that holds ``run_id``: it
    answers the REST call for that run (a run id is unique, so a UI of another store does
    not)."""
    import urllib.error
    import urllib.request

    url = f"http://127.0.0.1:{port}/api/2.0/mlflow/runs/get?run_id={run_id}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - local
            body = json.loads(answer.read(1_000_000).decode("utf-8", "replace"))
    except (OSError, ValueError, urllib.error.URLError):
        return False
    return isinstance(body, dict) and body.get("run", {}).get("info", {}).get("run_id") == run_id


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def ui_base(
    tracking_uri: str, run_id: str | None = None, ports: Sequence[int] = ()
) -> tuple[str, str | None]:
    """Where the MLflow UI of ``tracking_uri`` is: the server itself for an HTTP store (and no
    command); else a UI already serving the store on this machine (one of ``ports``, then
    port 5000, that answers for ``run_id``: no command); else ``http://127.0.0.1:<port>``
    with the ``mlflow ui`` command that serves the store there, on port 5000 when it is free
    on this machine, else on a free port."""
    if tracking_uri.startswith(("http://", "https://")):
        return scrub_text(tracking_uri.rstrip("/")), None
    if run_id:
        for port in dict.fromkeys([*ports, DEFAULT_UI_PORT]):
            if _listening(port) and _serves_run(port, run_id):
                return f"http://127.0.0.1:{port}", None
    port = _free_port(DEFAULT_UI_PORT)
    return (
        f"http://127.0.0.1:{port}",
        f"mlflow ui --backend-store-uri {scrub_text(tracking_uri)} --port {port}",
    )


def sweep_view_hint(parent_run_id: str, tracking_uri: str | None = None) -> str:
    """Where to see a finished sweep: the ``mlflow ui`` command for a local store, then the
    address of its jobs side by side (the shared view :func:`finish_sweep_parent` saved, else
    :func:`sweep_view_link`) and of the parent run."""
    uri = resolve_tracking_uri(tracking_uri)
    run = _client(uri).get_run(parent_run_id)
    link = run.data.tags.get(_TAG_PREFIX + "view_link")
    if not link:
        sweep_id = run.data.tags.get(_TAG_PREFIX + "sweep_id", "")
        sort_by = next(
            (
                m
                for m in run.data.tags.get(_TAG_PREFIX + "metrics", "").split(",")
                if m.startswith("ndcg_at_")
            ),
            None,
        ) or next(
            (k[len("best_") :] for k in sorted(run.data.metrics) if k.startswith("best_ndcg_at_")),
            None,
        )
        link = sweep_view_link(run.info.experiment_id, sweep_id, sort_by)
    client = _client(uri)
    known: list[int] = []
    try:
        exp = client.get_experiment(run.info.experiment_id)
        text = str(exp.tags.get(UI_PORT_TAG, ""))
        known = [int(text)] if text.isdigit() else []
    except Exception:  # noqa: BLE001 - a remembered port is a convenience
        exp = None
    base, command = ui_base(uri, parent_run_id, known)
    if command and exp is not None:  # remembered for the next sweep on this store
        try:
            client.set_experiment_tag(exp.experiment_id, UI_PORT_TAG, base.rsplit(":", 1)[-1])
        except Exception:  # noqa: BLE001
            pass
    lines = (
        [f"start the MLflow UI: {command}"]
        if command
        else (
            [f"the MLflow UI already serving this store: {base}"]
            if not uri.startswith(("http://", "https://"))
            else []
        )
    )
    lines.append(f"the sweep's jobs, best first: {base}/{link}")
    lines.append(
        f"the sweep's parent run: {base}/#/experiments/{run.info.experiment_id}/runs/"
        f"{parent_run_id}?{UI_WORKFLOW}"
    )
    return "\n".join(lines)


def _fmt(value: Any, digits: int = 4) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else f"{v:.{digits}f}"


def leaderboard_text(
    leaderboard: pd.DataFrame, metrics: Sequence[str] | None = None, *, limit: int = 10
) -> str:
    """The leaderboard as a terminal table, best first: rank, run name, the sort metric with its
    95% interval, then up to three more headline metrics."""
    metrics = [
        m
        for m in (
            metrics
            if metrics is not None
            else leaderboard.attrs.get("headline") or leaderboard.attrs.get("metrics", [])
        )
        if m in leaderboard.columns
    ]
    sort_by = leaderboard.attrs.get("sort_by")
    first = sort_by if sort_by in leaderboard.columns else (metrics[0] if metrics else None)
    others = [m for m in metrics if m != first][:3]
    marked = leaderboard.attrs.get("baselines") or {}
    names = [
        str(n) + (" (baseline)" if r in marked else "")
        for n, r in zip(
            leaderboard.get("run_name", pd.Series(dtype=str)),
            leaderboard.get("run_id", pd.Series([None] * len(leaderboard))),
        )
    ]
    width = max([8, *(len(n) for n in names[:limit])]) + 2
    header = f"{'#':>3}  {'run':<{width}}"
    if first:
        header += f"{first:>12}  {'95% interval':<19}"
    header += "".join(f"{m:>15}" for m in others)
    lines = [header]
    for i, (_, row) in enumerate(leaderboard.head(limit).iterrows()):
        line = f"{i + 1:>3}  {names[i]:<{width}}"
        if first:
            low, high = row.get(f"{first}_ci95_low"), row.get(f"{first}_ci95_high")
            interval = f"[{_fmt(low)}, {_fmt(high)}]" if _fmt(low) else ""
            line += f"{_fmt(row[first]):>12}  {interval:<19}"
        line += "".join(f"{_fmt(row[m]):>15}" for m in others)
        if row.get("status", "FINISHED") != "FINISHED":
            line += f"  ({row['status']})"
        lines.append(line)
    if len(leaderboard) > limit:
        lines.append(f"     ... and {len(leaderboard) - limit} more (leaderboard.csv)")
    return "\n".join(lines)


def _md_cell(value: Any) -> str:
    """A Markdown table cell: no line breaks, and the characters Markdown would read as marks
    escaped (a run name is user text)."""
    text = " ".join(str(value).split())
    return "".join("\\" + ch if ch in "\\`*_{}[]<>()#+!|~" else ch for ch in text)


def run_link(experiment_id: str, run_id: str) -> str:
    """The MLflow UI address (from ``#``) of one run's page, with :data:`UI_WORKFLOW`: the UI's
    own links to a parent's child runs drop it, and a fresh browser then opens the run under
    the GenAI "Evaluations" pages instead of the training runs."""
    return f"#/experiments/{experiment_id}/runs/{run_id}?{UI_WORKFLOW}"


def _markdown(
    table: pd.DataFrame,
    metrics: Sequence[str],
    sort_by: str | None = None,
    experiment_id: str | None = None,
) -> str:
    """The leaderboard as a Markdown table, best first: run name, status, each metric, and the
    95% interval of ``sort_by`` beside it. Each run's name links to its page
    (:func:`run_link`) when the experiment is known (``experiment_id``, else the table's
    ``attrs["experiment_id"]``)."""
    experiment_id = experiment_id or table.attrs.get("experiment_id")
    cols = ["run_name", "status"]
    for m in metrics:
        cols.append(m)
        if m == sort_by and f"{m}_ci95_low" in table.columns:
            cols.append("95% interval")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    marked = table.attrs.get("baselines") or {}
    for _, row in table.iterrows():
        mark = " (baseline)" if row.get("run_id") in marked else ""
        name = _md_cell(row["run_name"]) + mark
        if experiment_id and isinstance(row.get("run_id"), str) and row["run_id"].isalnum():
            name = f"[{name}]({run_link(str(experiment_id), row['run_id'])})"
        cells = [name, _md_cell(row["status"])]
        for m in metrics:
            cells.append("" if pd.isna(row[m]) else f"{row[m]:.4f}")
            if m == sort_by and f"{m}_ci95_low" in table.columns:
                low, high = row[f"{m}_ci95_low"], row[f"{m}_ci95_high"]
                cells.append("" if pd.isna(low) or pd.isna(high) else f"{low:.4f} to {high:.4f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _best_line(leaderboard: pd.DataFrame, sort_by: str | None) -> str:
    """``als f=64: ndcg_at_10 = 0.3716 (95% interval 0.3601 to 0.3832)`` for the first row."""
    if (
        not sort_by
        or sort_by not in leaderboard.columns
        or not len(leaderboard)
        or pd.isna(leaderboard[sort_by].iloc[0])
    ):
        return ""
    row = leaderboard.iloc[0]
    mark = " (baseline)" if row.get("run_id") in (leaderboard.attrs.get("baselines") or {}) else ""
    text = f"{_md_cell(row.get('run_name', ''))}{mark}: {sort_by} = {row[sort_by]:.4f}"
    low, high = row.get(f"{sort_by}_ci95_low"), row.get(f"{sort_by}_ci95_high")
    if low is not None and high is not None and not (pd.isna(low) or pd.isna(high)):
        text += f" (95% interval {low:.4f} to {high:.4f})"
    return text
