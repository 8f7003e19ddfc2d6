"""Nothing lost: uploads that leave a marker when the store cannot be reached, and their sync.

:func:`upload_or_mark_pending` logs a job directory (:func:`~.runs.log_job_dir`) or, when the
store cannot be reached, writes ``PENDING`` into it (the upload arguments, the scrubbed URI, the
error) and lets the job succeed. :func:`finish_sweep_parent_or_mark_pending` does the same for a
sweep parent, with ``PENDING_SWEEP`` in the sweep directory.

:func:`sync_paths` (the command ``recoeval-track-sync``, :mod:`recoeval_tracking.app.sync`) finds
every job directory holding a ``PENDING`` marker under the given paths (recursively), and uploads
each with the arguments recorded in its marker, to the URI given or else the URI the job was
configured with. Exactly once: :func:`~.runs.log_job_dir` first looks for a FINISHED run tagged
with the directory's ``recoeval.job_uid`` and creates none when there is one; after success
``PENDING`` is replaced by ``SYNCED`` (run id). Syncing twice creates no duplicate run.

Sweeps: a child whose parent run is missing from the target store (the store was down when the
sweep started, or another URI is given) gets a parent found by its ``recoeval.sweep_id`` tag, or
created and closed with a leaderboard. ``PENDING_SWEEP`` markers (a parent that could not be
closed) are handled after the jobs: the parent is closed with its recorded status and a
leaderboard that includes the jobs just uploaded. Parents that gained children and are already
closed get their leaderboard refreshed.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import InputError, param_error
from ..jobdir import PENDING, SYNCED
from ..jobdir.redact import scrub_url
from .client import (
    _TERMINAL,
    DEFAULT_EXPERIMENT,
    _clean_tags,
    _client,
    _fast_fail_http,
    _first_line,
    _run_exists,
    params_from_config,
    resolve_tracking_uri,
)
from .runs import log_job_dir
from .sweeps import create_sweep_parent, finish_sweep_parent

__all__ = ["PENDING_SWEEP", "upload_or_mark_pending", "finish_sweep_parent_or_mark_pending",
           "SyncOutcome", "find_pending", "sync_job_dir", "sync_paths"]

#: Marker written into a sweep directory when its parent run could not be closed.
PENDING_SWEEP = "PENDING_SWEEP"


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _write_marker(path: Path, obj: Mapping[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def _read_marker(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


# ---------------------------------------------------------------------------------------------
# Uploading, or marking pending
# ---------------------------------------------------------------------------------------------

def upload_or_mark_pending(path: str | Path, **kw: Any) -> str | None:
    """:func:`~.runs.log_job_dir`, except that a store that cannot be reached does not fail the
    job.

    On success writes ``SYNCED`` (run id, URI, time) into the job directory and returns the run
    id. On any store or connection error writes ``PENDING`` (JSON: the scrubbed URI, the error,
    the upload arguments), prints one warning line to stderr naming the directory and the sync
    command, and returns None. Bad arguments (:class:`~recoeval_tracking.InputError`) still
    raise. HTTP retries and timeouts are lowered during the attempt (see ``_fast_fail_http``).

    Parameters
    ----------
    path : str or Path
        The job directory.
    **kw
        Keyword arguments of :func:`~.runs.log_job_dir`.
    """
    root = Path(path)
    uri = resolve_tracking_uri(kw.get("tracking_uri"))
    kw = {**kw, "tracking_uri": uri}
    try:
        with _fast_fail_http():
            run_id = log_job_dir(root, **kw)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any store failure must leave the job usable
        record = {
            "tracking_uri": scrub_url(uri),
            "error": _first_line(err),
            "time": _now_iso(),
            "upload": {k: v for k, v in kw.items() if k != "tracking_uri"},
        }
        if record["upload"].get("tags"):
            record["upload"]["tags"] = _clean_tags(record["upload"]["tags"])
        if record["upload"].get("params"):
            record["upload"]["params"] = params_from_config(None, record["upload"]["params"])
        _write_marker(root / PENDING, record)
        print(f"recoeval: WARNING: could not log to the tracking store {scrub_url(uri)} "
              f"({record['error']}). Results are safe in {root} (marked PENDING); upload them "
              f"later with: recoeval-track-sync {root}", file=sys.stderr, flush=True)
        return None
    _write_marker(root / SYNCED, {
        "run_id": run_id, "tracking_uri": scrub_url(uri), "time": _now_iso()})
    (root / PENDING).unlink(missing_ok=True)
    return run_id


def finish_sweep_parent_or_mark_pending(sweep_dir: str | Path, parent_run_id: str,
                                        status: str = "FINISHED", **kw: Any) -> bool:
    """:func:`~.sweeps.finish_sweep_parent`; when the store cannot be reached, write
    ``PENDING_SWEEP`` into ``sweep_dir`` (the multirun directory) so that ``recoeval-track-sync``
    closes the parent after uploading the pending jobs. Returns True when the parent was closed
    now.
    """
    if status not in _TERMINAL:
        raise param_error("status", "finish_sweep_parent_or_mark_pending",
                          f"one of {list(_TERMINAL)}", status)
    root = Path(sweep_dir)
    uri = resolve_tracking_uri(kw.pop("tracking_uri", None))
    try:
        with _fast_fail_http():
            finish_sweep_parent(parent_run_id, status, tracking_uri=uri, **kw)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001
        root.mkdir(parents=True, exist_ok=True)
        _write_marker(root / PENDING_SWEEP, {
            "parent_run_id": parent_run_id, "status": status, "tracking_uri": scrub_url(uri),
            "error": _first_line(err), "time": _now_iso()})
        print(f"recoeval: WARNING: could not close the sweep parent run {parent_run_id} on "
              f"{scrub_url(uri)} ({_first_line(err)}); marked {root / PENDING_SWEEP}. Close it "
              f"later with: recoeval-track-sync {root}", file=sys.stderr, flush=True)
        return False
    (root / PENDING_SWEEP).unlink(missing_ok=True)
    return True


# ---------------------------------------------------------------------------------------------
# Syncing what is pending
# ---------------------------------------------------------------------------------------------

@dataclass
class SyncOutcome:
    """What happened to one pending directory."""

    path: Path
    run_id: str | None
    error: str | None = None


def find_pending(paths: Iterable[str | Path], marker: str = PENDING) -> list[Path]:
    """Directories under ``paths`` (each a job directory or any folder above) holding ``marker``,
    sorted, without duplicates."""
    found: set[Path] = set()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise param_error("paths", "find_pending", "existing files or folders", str(root))
        if root.is_file():
            root = root.parent
        if (root / marker).is_file():
            found.add(root.resolve())
        for m in root.rglob(marker):
            if m.is_file():
                found.add(m.parent.resolve())
    return sorted(found)


class _Parents:
    """Resolves sweep parents in the target store, creating missing ones once per sweep id."""

    def __init__(self, uri: str):
        self.uri = uri
        self.created: dict[str, str] = {}  # sweep_id -> parent run id created here
        self.touched: set[str] = set()

    def resolve(self, parent_run_id: str | None, sweep_id: str | None,
                experiment: str) -> str | None:
        if not parent_run_id:
            return None
        client = _client(self.uri)
        if _run_exists(client, parent_run_id):
            self.touched.add(parent_run_id)
            return parent_run_id
        if not sweep_id:
            return None
        if sweep_id in self.created:
            return self.created[sweep_id]
        exp = client.get_experiment_by_name(experiment)
        if exp is not None:
            found = client.search_runs(
                [exp.experiment_id],
                filter_string=(f"tags.`recoeval.sweep_id` = '{sweep_id}' and "
                               "tags.`recoeval.sweep_parent` = 'true'"), max_results=1)
            if found:
                self.touched.add(found[0].info.run_id)
                return found[0].info.run_id
        parent = create_sweep_parent(tracking_uri=self.uri, experiment=experiment,
                                     sweep_id=sweep_id)
        self.created[sweep_id] = parent.run_id
        return parent.run_id


def sync_job_dir(path: str | Path, *, tracking_uri: str | None = None,
                 _parents: _Parents | None = None) -> SyncOutcome:
    """Upload one pending job directory; see the module docstring."""
    root = Path(path)
    marker = _read_marker(root / PENDING)
    uri = resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
    upload = dict(marker.get("upload") or {})
    upload["tracking_uri"] = uri
    parents = _parents or _Parents(uri)
    try:
        with _fast_fail_http():
            upload["parent_run_id"] = parents.resolve(
                upload.get("parent_run_id"), upload.get("sweep_id"),
                upload.get("experiment", DEFAULT_EXPERIMENT))
    except Exception as err:  # noqa: BLE001 - the store is still unreachable
        run_id = None
        error = _first_line(err)
    else:
        run_id = upload_or_mark_pending(root, **upload)
        error = None if run_id else _read_marker(root / PENDING).get("error", "upload failed")
    return SyncOutcome(root, run_id, error)


def _close_pending_sweeps(sweeps: list[Path], tracking_uri: str | None, out) -> set[str]:
    """Close the parents recorded in ``PENDING_SWEEP`` markers; returns those closed."""
    closed: set[str] = set()
    for sweep_dir in sweeps:
        marker = _read_marker(sweep_dir / PENDING_SWEEP)
        uri = resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
        parent = marker.get("parent_run_id")
        if not parent:
            continue
        ok = finish_sweep_parent_or_mark_pending(sweep_dir, parent,
                                                 marker.get("status", "FINISHED"),
                                                 tracking_uri=uri)
        if ok:
            closed.add(parent)
            print(f"closed sweep parent {parent} ({uri})", file=out)
    return closed


def _finish_parents(parents_by_uri: Mapping[str, _Parents], closed: set[str], out) -> None:
    """Close the parents created during the sync; refresh the leaderboard of closed parents that
    gained children."""
    for uri, parents in parents_by_uri.items():
        client = None
        for sweep_id, parent in parents.created.items():
            if parent not in closed:
                finish_sweep_parent(parent, "FINISHED", tracking_uri=uri)
                closed.add(parent)
                print(f"created and closed sweep parent {parent} for sweep {sweep_id}", file=out)
        for parent in parents.touched - closed:
            try:
                client = client or _client(uri)
                run = client.get_run(parent)
                if run.info.status != "RUNNING":
                    finish_sweep_parent(parent, run.info.status, tracking_uri=uri,
                                        close_running_children=False)
                    print(f"refreshed the leaderboard of sweep parent {parent}", file=out)
            except Exception as err:  # noqa: BLE001 - refreshing is a courtesy
                print(f"could not refresh sweep parent {parent}: {_first_line(err)}", file=out)


def sync_paths(paths: Sequence[str | Path], *, tracking_uri: str | None = None,
               out=None) -> list[SyncOutcome]:
    """Upload every pending job directory under ``paths``, then close pending sweep parents.

    Progress lines go to ``out`` (default: ``sys.stdout``). Returns one :class:`SyncOutcome` per
    pending job directory.
    """
    out = sys.stdout if out is None else out
    if isinstance(paths, (str, Path)):
        paths = [paths]
    pending = find_pending(paths)
    sweeps = find_pending(paths, PENDING_SWEEP)
    outcomes: list[SyncOutcome] = []
    parents_by_uri: dict[str, _Parents] = {}
    for job in pending:
        marker = _read_marker(job / PENDING)
        uri = resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
        parents = parents_by_uri.setdefault(uri, _Parents(uri))
        outcome = sync_job_dir(job, tracking_uri=uri, _parents=parents)
        outcomes.append(outcome)
        if outcome.run_id:
            print(f"uploaded {job} -> run {outcome.run_id} ({uri})", file=out)
        else:
            print(f"still pending {job}: {outcome.error}", file=out)
    closed = _close_pending_sweeps(sweeps, tracking_uri, out)
    _finish_parents(parents_by_uri, closed, out)
    if not pending and not sweeps:
        print("nothing pending under " + ", ".join(str(p) for p in paths), file=out)
    return outcomes
