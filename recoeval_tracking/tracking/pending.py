"""Nothing lost: uploads that leave a marker when the store cannot be reached.

:func:`upload_or_mark_pending` logs a job directory (:func:`~.runs.log_job_dir`, exactly once,
under the directory's lock) or, when the store cannot be reached, writes ``PENDING`` into it
(the upload arguments, the scrubbed URI, the error) and lets the job succeed. A job killed
during its upload leaves ``UPLOADING`` instead (see :mod:`.runs`).
:func:`finish_sweep_parent_or_mark_pending` does the same for a sweep parent, with
``PENDING_SWEEP`` in the sweep directory.

Sweep parents: a child whose parent run is unknown or missing from the store (the store was down
when the sweep started, or another URI is given) gets the parent found by its
``recoeval.sweep_id`` tag, or created once for the sweep id (:class:`Parents`, under the sweep
directory's :data:`~.sweeps.PARENT_LOCK` where it can be taken; the store-side rule of
:func:`~.sweeps.find_or_create_sweep_parent` keeps one parent when jobs on other machines race).

The sync of what is pending (the command ``recoeval-track-sync``) is :mod:`.sync`; its names
(``sync_paths``, ``sync_job_dir``, ``find_pending``, ``SyncOutcome``) are also importable from
here.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._validation import InputError, check_optional, param_error
from ..jobdir.markers import (
    PENDING,
    UPLOADING,
    LockTimeout,
    lock_if_writable,
    read_marker,
)
from ..jobdir.read import check_job_dir
from ..jobdir.redact import scrub_url
from .client import (
    _TERMINAL,
    DEFAULT_EXPERIMENT,
    _client,
    _fast_fail_http,
    _first_line,
    _run_exists,
    _sqlite_path,
    resolve_tracking_uri,
)
from .runs import job_lock, set_marker, upload_args, upload_job
from .sweeps import (
    PARENT_LOCK,
    find_or_create_sweep_parent,
    find_sweep_parent_run,
    find_sweep_record,
    finish_sweep_parent,
)

__all__ = [
    "PENDING_SWEEP",
    "upload_or_mark_pending",
    "preload",
    "finish_sweep_parent_or_mark_pending",
    "Parents",
    "SyncOutcome",
    "find_pending",
    "sync_job_dir",
    "sync_paths",
]

#: Marker written into a sweep directory when its parent run could not be closed.
PENDING_SWEEP = "PENDING_SWEEP"

_SYNC_NAMES = ("SyncOutcome", "find_pending", "sync_job_dir", "sync_paths")


def __getattr__(name: str) -> Any:
    if name in _SYNC_NAMES:
        return getattr(importlib.import_module(f"{__package__}.sync"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _warn(text: str) -> None:
    print(f"recoeval: WARNING: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Sweep parents
# ---------------------------------------------------------------------------------------------


class Parents:
    """Finds sweep parents in one store, creating a missing one once per sweep id.

    ``created`` maps the sweep ids whose parent was created here to its run id; ``touched`` holds
    the existing parents that were found.
    """

    def __init__(self, uri: str):
        self.uri = uri
        self.created: dict[str, str] = {}
        self.touched: set[str] = set()
        self.dirs: dict[str, Path] = {}  # sweep id -> the folder its parent lock is in

    def resolve(
        self,
        parent_run_id: str | None,
        sweep_id: str | None,
        experiment: str,
        lock_dir: Path | None,
    ) -> str | None:
        """The parent run id to link a child to: ``parent_run_id`` when the store has it, else
        the parent of ``sweep_id`` (found, or created under ``lock_dir``'s parent lock); None
        without a sweep id."""
        client = _client(self.uri)
        if parent_run_id and _run_exists(client, parent_run_id):
            self.touched.add(parent_run_id)
            return parent_run_id
        if not sweep_id:
            return None
        if sweep_id in self.created:
            return self.created[sweep_id]
        if lock_dir is not None:
            self.dirs.setdefault(sweep_id, lock_dir)
        if lock_dir is None:
            return self._find_or_create(client, sweep_id, experiment)
        with lock_if_writable(lock_dir / PARENT_LOCK, what=f"the sweep parent of {lock_dir}"):
            return self._find_or_create(client, sweep_id, experiment)

    def _find_or_create(self, client, sweep_id: str, experiment: str) -> str:
        exp = client.get_experiment_by_name(experiment)
        found = find_sweep_parent_run(client, exp.experiment_id, sweep_id) if exp else None
        if found is not None:
            self.touched.add(found.info.run_id)
            return found.info.run_id
        run_id = find_or_create_sweep_parent(
            sweep_id, tracking_uri=self.uri, experiment=experiment
        )  # race-safe on the store
        self.created[sweep_id] = run_id
        return run_id


def sweep_lock_dir(job_dir: Path) -> Path:
    """Where the parent lock of ``job_dir``'s sweep is: its sweep directory when one is found
    above it, else the folder above it."""
    found = find_sweep_record(job_dir)
    return found[0] if found else Path(job_dir).resolve().parent


# ---------------------------------------------------------------------------------------------
# Uploading, or marking pending
# ---------------------------------------------------------------------------------------------


def _pending_record(uri: str, err: BaseException, upload: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tracking_uri": scrub_url(uri),
        "error": _first_line(err),
        "time": _now_iso(),
        "upload": dict(upload),
    }


def mark_pending(root: Path, uri: str, err: BaseException, upload: Mapping[str, Any]) -> str:
    """Replace the job directory's ``UPLOADING`` marker by ``PENDING`` (the caller holds its
    lock); returns the recorded error."""
    record = _pending_record(uri, err, upload)
    set_marker(root, PENDING, record)
    set_marker(root, UPLOADING, None)
    return record["error"]


def upload_locked(
    root: Path, uri: str, upload: dict[str, Any], parents: Parents | None = None
) -> str:
    """Check every file of the folder (:func:`~recoeval_tracking.jobdir.read.check_job_dir`),
    resolve the sweep parent, then :func:`~.runs.upload_job`; the caller holds the lock. A
    folder that fails the check raises :class:`~recoeval_tracking.InputError` before the store
    is contacted: no run (nor sweep parent) is made for it."""
    job = check_job_dir(root)
    if upload.get("parent_run_id") or upload.get("sweep_id"):
        parents = parents or Parents(uri)
        lock_dir = sweep_lock_dir(root) if upload.get("sweep_id") else None
        parent = parents.resolve(
            upload.get("parent_run_id"),
            upload.get("sweep_id"),
            upload.get("experiment") or DEFAULT_EXPERIMENT,
            lock_dir,
        )
        upload = {**upload, "parent_run_id": parent}
    return upload_job(root, uri, upload, job=job)


def upload_or_mark_pending(path: str | Path, **kw: Any) -> str | None:
    """:func:`~.runs.log_job_dir`, except that a store that cannot be reached does not fail the
    job.

    On success returns the run id (the directory is marked ``SYNCED``). On any store or
    connection error writes ``PENDING`` (JSON: the scrubbed URI, the error, the upload
    arguments), prints one warning line to stderr naming the directory and the sync command,
    and returns None. Bad arguments (:class:`~recoeval_tracking.InputError`) still raise. HTTP
    retries and timeouts are lowered during the attempt (see ``_fast_fail_http``).

    A sweep job (``sweep_id`` given) whose parent is unknown (``parent_run_id`` None: the store
    was down when the sweep started) or missing gets the sweep's parent, found or created once.

    Parameters
    ----------
    path : str or Path
        The job directory.
    **kw
        Keyword arguments of :func:`~.runs.log_job_dir`.
    """
    root = Path(path)
    tracking_uri = kw.pop("tracking_uri", None)
    check_optional(tracking_uri, str, "tracking_uri", "upload_or_mark_pending")
    upload = upload_args(**kw, func="upload_or_mark_pending")
    uri = resolve_tracking_uri(tracking_uri)
    from ..jobdir import read_job_dir

    read_job_dir(root, per_user=False)  # a bad path raises InputError before anything else
    try:
        with job_lock(root):
            try:
                with _fast_fail_http():
                    return upload_locked(root, uri, upload)
            except InputError:
                raise
            except Exception as err:  # noqa: BLE001 - any store failure must leave the job usable
                error = mark_pending(root, uri, err, upload)
    except LockTimeout as err:
        _warn(
            f"{err} The results in {root} are safe; upload them later with: "
            f"recoeval-track-sync {root}"
        )
        return None
    _warn(
        f"could not log to the tracking store {scrub_url(uri)} ({error}). Results are safe in "
        f"{root} (marked PENDING); upload them later with: recoeval-track-sync {root}"
    )
    return None


def finish_sweep_parent_or_mark_pending(
    sweep_dir: str | Path,
    parent_run_id: str | None,
    status: str = "FINISHED",
    *,
    sweep_id: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    only_if_marked: bool = False,
    **kw: Any,
) -> bool:
    """:func:`~.sweeps.finish_sweep_parent`; when the store cannot be reached, write
    ``PENDING_SWEEP`` into ``sweep_dir`` (the multirun directory) so that ``recoeval-track-sync``
    closes the parent after uploading the pending jobs. Returns True when the parent was closed
    now.

    ``parent_run_id`` may be None when ``sweep_id`` is given (the store was down when the sweep
    started): the parent is then found by its sweep id, or created. With ``only_if_marked``
    (a sync), nothing is done when ``PENDING_SWEEP`` is gone by the time the parent lock is
    held: another sync closed the parent meanwhile.
    """
    func = "finish_sweep_parent_or_mark_pending"
    if status not in _TERMINAL:
        raise param_error("status", func, f"one of {list(_TERMINAL)}", status)
    if not parent_run_id and not sweep_id:
        raise param_error("parent_run_id", func, "a run id, or None with a sweep_id", parent_run_id)
    root = Path(sweep_dir)
    uri = resolve_tracking_uri(kw.pop("tracking_uri", None))
    try:
        with _fast_fail_http():
            root.mkdir(parents=True, exist_ok=True)
            parent = Parents(uri).resolve(parent_run_id, sweep_id, experiment, root)
            with lock_if_writable(root / PARENT_LOCK, what=f"the sweep parent of {root}"):
                if only_if_marked and not (root / PENDING_SWEEP).is_file():
                    return True
                finish_sweep_parent(parent, status, tracking_uri=uri, **kw)
                set_marker(root, PENDING_SWEEP, None)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001
        set_marker(
            root,
            PENDING_SWEEP,
            {
                "parent_run_id": parent_run_id,
                "sweep_id": sweep_id,
                "experiment": experiment,
                "status": status,
                "tracking_uri": scrub_url(uri),
                "error": _first_line(err),
                "time": _now_iso(),
            },
        )
        which = f"run {parent_run_id}" if parent_run_id else f"of sweep {sweep_id}"
        _warn(
            f"could not close the sweep parent {which} on "
            f"{scrub_url(uri)} ({_first_line(err)}); marked {root / PENDING_SWEEP}. Close it "
            f"later with: recoeval-track-sync {root}"
        )
        return False
    set_marker(root, PENDING_SWEEP, None)
    return True


def read_pending_sweep(sweep_dir: Path) -> dict[str, Any]:
    """The ``PENDING_SWEEP`` record of ``sweep_dir`` ({} when unreadable)."""
    try:
        return read_marker(sweep_dir / PENDING_SWEEP) or {}
    except ValueError:
        return {}


def preload(uri: str) -> None:
    """Import MLflow (about 2 s) and open a SQLite store at ``uri`` (a new database's schema
    takes another second), so that a job's upload (:func:`upload_or_mark_pending`) finds both
    ready: the app calls this in a thread while the job waits for the kernels compiling in its
    warm-up child. A server is not contacted."""
    if _sqlite_path(uri) is not None:
        _client(uri)
    else:
        from mlflow.tracking import MlflowClient  # noqa: F401
