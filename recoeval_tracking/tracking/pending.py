"""Nothing lost: uploads that leave a marker when the store cannot be reached, and the sync that
uploads what they left.

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

**The sync** of what is pending (the command ``recoeval-track-sync``): every job uploaded exactly
once, every sweep parent closed, whatever was killed and whatever runs at the same time.

:func:`sync_paths` walks the given paths and finds

* job directories marked ``PENDING`` (the store could not be reached) or ``UPLOADING`` (an
  upload cut off midway: a killed job or sync), uploaded with the arguments their marker
  records, to the URI given or else the one recorded;
* complete job directories of ``recoeval-track`` (``job.json`` and ``.hydra/``) never uploaded
  although their ``config.yaml`` has ``tracking.enabled: true`` (a job killed between writing
  its results and starting its upload): uploaded with the experiment of their config, to the
  URI given, else ``tracking.uri`` of their config, else their sweep's store;
* job directories cut off while written (``INCOMPLETE``): listed, never uploaded;
* sweep directories: parents marked ``PENDING_SWEEP`` are closed with their recorded status;
  parents left RUNNING by a sweep that is no longer running (killed: its sweep lock is free)
  are closed as KILLED; parents created here for sweeps whose parent could not be created at
  start are closed as FINISHED (unless the sweep is still running); closed parents that gained
  children get their leaderboard refreshed.

Each job directory is uploaded under its lock (:func:`~.runs.job_lock`), which the job and
other syncs also take, and by :func:`~.runs.upload_job`, which finds the run already made (by
the job's uid) before it creates one: concurrent syncs and jobs give one run per job. A
directory is checked whole before its store is contacted
(:func:`~recoeval_tracking.jobdir.read.check_job_dir`: every file readable, sizes as recorded, no
symbolic link), so a damaged one never leaves a half-made run: it is reported, skipped and stays
``PENDING`` with the reason in its marker. A folder that cannot be listed (no permission) is
reported too. A directory that cannot be read or uploaded is reported and skipped; the others go
on. A marker that is not valid JSON never sends a job to a guessed store: the job's config and
sweep record are used, else the directory is skipped until ``--tracking-uri`` is given.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._validation import InputError, check_optional, param_error
from ..jobdir import FILES, INCOMPLETE, PENDING, SYNCED, UPLOADING, job_dir_state
from ..jobdir.markers import (
    JOB_LOCK,
    LockTimeout,
    lock_if_writable,
    read_marker,
    try_lock,
)
from ..jobdir.read import check_job_dir
from ..jobdir.redact import REDACTED, scrub_url
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
from .runs import _context_tags, job_lock, set_marker, upload_args, upload_job
from .sweeps import (
    PARENT_LOCK,
    SWEEP_FILE,
    SWEEP_LOCK,
    find_or_create_sweep_parent,
    find_sweep_parent_run,
    find_sweep_record,
    finish_sweep_parent,
    read_sweep_record,
)

#: The sync's names: :mod:`.sync`, their old module, reads them from here.
SYNC_NAMES = (
    "SyncOutcome",
    "Found",
    "scan",
    "find_pending",
    "sync_job_dir",
    "sync_paths",
    "JOB_FILE_NAMES",
)
__all__ = [
    "PENDING_SWEEP",
    "upload_or_mark_pending",
    "preload",
    "finish_sweep_parent_or_mark_pending",
    "Parents",
    *SYNC_NAMES,
]

#: Marker written into a sweep directory when its parent run could not be closed.
PENDING_SWEEP = "PENDING_SWEEP"


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _warn(text: str) -> None:
    print(f"recoeval: WARNING: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Sweep parents of jobs that do not know theirs
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
    resolve the sweep parent, then :func:`~.runs.upload_job` (with the keys its sweep record
    says the sweep varies, for the run's name and description); the caller holds the lock. A
    folder that fails the check raises :class:`~recoeval_tracking.InputError` before the store
    is contacted: no run (nor sweep parent) is made for it."""
    job = check_job_dir(root)
    found = find_sweep_record(root) if upload.get("sweep_id") else None
    swept = list(found[1].get("swept_keys") or []) if found else None
    if upload.get("parent_run_id") or upload.get("sweep_id"):
        parents = parents or Parents(uri)
        lock_dir = None
        if upload.get("sweep_id"):  # the parent lock: in its sweep folder, else the one above
            lock_dir = found[0] if found else Path(root).resolve().parent
        parent = parents.resolve(
            upload.get("parent_run_id"),
            upload.get("sweep_id"),
            upload.get("experiment") or DEFAULT_EXPERIMENT,
            lock_dir,
        )
        upload = {**upload, "parent_run_id": parent}
    return upload_job(root, uri, upload, job=job, swept=swept)


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


def preload(uri: str | None) -> None:
    """Import MLflow (about 2 s) and open a SQLite store at ``uri`` (a new database's schema
    takes another second; None: only the import), so that a job's upload
    (:func:`upload_or_mark_pending`) finds both ready: the app calls this in a thread while
    the job waits for the kernels compiling in its warm-up child, and its upload child
    (:mod:`.uploader`) as it starts and once the job names its store. MLflow's run context
    (the git commit beside the command) is resolved once too. A server is not contacted."""
    if uri is not None and _sqlite_path(uri) is not None:
        _client(uri)
    else:
        from mlflow.tracking import MlflowClient  # noqa: F401
    _context_tags()  # MLflow's run context imports GitPython: 0.27 s of a first upload


# ---------------------------------------------------------------------------------------------
# The sync: finding what is pending
# ---------------------------------------------------------------------------------------------

#: How long a sync waits for a job directory another process is writing or uploading.
SYNC_LOCK_WAIT_SECONDS = 300.0
_SKIP_DIRS = frozenset({"mlartifacts", "mlruns", ".hydra", "__pycache__", ".git"})
_UPLOAD_KEYS = (
    "experiment",
    "run_name",
    "parent_run_id",
    "sweep_id",
    "tags",
    "params",
    "artifact_location",
    "precision",
)


@dataclass
class SyncOutcome:
    """What happened to one job directory (or sweep directory) during a sync.

    ``status``: ``uploaded`` (a run was made or finished now), ``already`` (another process had
    uploaded it), ``pending`` (the store failed again; still marked), ``skipped`` (a directory
    that cannot be uploaded as it is; ``error`` says why).
    """

    path: Path
    run_id: str | None
    error: str | None = None
    status: str = "uploaded"

    @property
    def ok(self) -> bool:
        return self.status in ("uploaded", "already")


@dataclass
class Found:
    """What :func:`scan` found under the paths."""

    jobs: list[Path] = field(default_factory=list)
    unmarked: list[Path] = field(default_factory=list)
    incomplete: list[Path] = field(default_factory=list)
    sweeps: list[Path] = field(default_factory=list)
    pending_sweeps: list[Path] = field(default_factory=list)
    #: Folders that could not be listed (no permission): what they hold is unknown.
    unreadable: list[tuple[Path, str]] = field(default_factory=list)

    def note_unreadable(self, err: OSError) -> None:
        """``os.walk``'s ``onerror``: keep the folder that could not be listed, and why."""
        reason = f"{type(err).__name__}: {err.strerror or err}"
        self.unreadable.append((Path(err.filename or "."), reason))


def _tracking_section(root: Path) -> dict[str, Any]:
    """The ``tracking`` section of the job's ``config.yaml`` ({} when absent or unreadable)."""
    import yaml

    try:
        config = yaml.safe_load((root / FILES["config"]).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    tracking = config.get("tracking") if isinstance(config, dict) else None
    return dict(tracking) if isinstance(tracking, Mapping) else {}


def _classify(folder: Path, names: set[str], found: Found) -> None:
    if PENDING in names or UPLOADING in names:
        found.jobs.append(folder)
    elif INCOMPLETE in names:
        if job_dir_state(folder) == "incomplete":
            found.incomplete.append(folder)
    elif (
        FILES["job"] in names
        and SYNCED not in names
        and (folder / ".hydra").is_dir()
        and _tracking_section(folder).get("enabled") is True
    ):
        found.unmarked.append(folder)
    if SWEEP_FILE in names:
        found.sweeps.append(folder)
    if PENDING_SWEEP in names:
        found.pending_sweeps.append(folder)


#: The files that name their job folder when given to :func:`scan`.
JOB_FILE_NAMES = frozenset({*FILES.values(), PENDING, UPLOADING, SYNCED, INCOMPLETE})


def scan(paths: Iterable[str | Path]) -> Found:
    """Walk ``paths`` (job directories or any folders above them) and sort what needs a sync;
    artifact stores (``mlartifacts``, ``mlruns``) and ``.hydra`` folders are not entered."""
    found = Found()
    seen: set[Path] = set()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise param_error("paths", "scan", "existing files or folders", str(root))
        if root.is_file() and root.name not in JOB_FILE_NAMES:
            # a job's own file stands for its folder; any other file would scan its whole
            # parent folder (``mlflow.db`` in the working folder: every job below it)
            raise param_error(
                "paths",
                "scan",
                f"folders, or a file of a job folder ({', '.join(sorted(JOB_FILE_NAMES))})",
                str(root),
            )
        root = (root.parent if root.is_file() else root).resolve()
        for folder, dirs, files in os.walk(root, onerror=found.note_unreadable):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            here = Path(folder)
            if here not in seen:
                seen.add(here)
                try:
                    _classify(here, set(files), found)
                except OSError as err:  # listed, but its files cannot be looked at
                    found.note_unreadable(err)
    for name in ("jobs", "unmarked", "incomplete", "sweeps", "pending_sweeps"):
        setattr(found, name, sorted(getattr(found, name)))
    return found


def find_pending(paths: Iterable[str | Path], marker: str = PENDING) -> list[Path]:
    """Directories under ``paths`` that need a sync: job directories (``PENDING``,
    ``UPLOADING``, or complete and never uploaded) for ``marker=PENDING``, sweep directories for
    ``marker=PENDING_SWEEP``; sorted, without duplicates."""
    found = scan(paths)
    if marker == PENDING_SWEEP:
        return found.pending_sweeps
    return sorted(found.jobs + found.unmarked)


# ---------------------------------------------------------------------------------------------
# The sync: one job directory
# ---------------------------------------------------------------------------------------------


class _Skip(Exception):
    """A job directory that cannot be uploaded as it is (the message says why)."""


def _pick_uri(*candidates: str | None) -> str | None:
    """The first URI given, preferring one whose password was not removed."""
    given = [c for c in candidates if c]
    clear = [c for c in given if REDACTED not in c]
    return (clear or given or [None])[0]


def _plan(root: Path, tracking_uri: str | None) -> tuple[str, dict[str, Any]]:
    """The store and upload arguments of a job directory: from its marker, else from its
    config and sweep record."""
    marker = None
    for name in (UPLOADING, PENDING):
        try:
            marker = read_marker(root / name)
        except ValueError:
            marker = None  # unreadable: fall back on the folder itself
        if marker and isinstance(marker.get("upload"), Mapping):
            break
        marker = None
    sweep = find_sweep_record(root)
    record = sweep[1] if sweep else {}
    if marker is not None:
        upload = dict(marker["upload"])
        uri = _pick_uri(tracking_uri, marker.get("tracking_uri"), record.get("tracking_uri"))
    else:
        tracking = _tracking_section(root)
        upload = {
            "experiment": tracking.get("experiment")
            or record.get("experiment")
            or DEFAULT_EXPERIMENT,
            "parent_run_id": record.get("parent_run_id"),
            "sweep_id": record.get("sweep_id"),
            "precision": tracking.get("precision"),
        }
        uri = _pick_uri(tracking_uri, tracking.get("uri"), record.get("tracking_uri"))
    if not uri:
        raise _Skip(
            "its store is not recorded (no readable marker, no tracking.uri in its "
            "config.yaml, no sweep record); run recoeval-track-sync again with "
            "--tracking-uri URI"
        )
    try:
        return uri, upload_args(
            **{k: upload.get(k) for k in _UPLOAD_KEYS if upload.get(k) is not None}
        )
    except (InputError, TypeError) as err:
        raise _Skip(f"its upload record is not valid ({err})") from None


def _note_invalid(root: Path, err: Exception) -> None:
    """Record in the folder's ``PENDING`` marker why it is not uploaded (it stays pending)."""
    try:
        marker = read_marker(root / PENDING)
    except ValueError:
        return
    if isinstance(marker, dict):
        set_marker(root, PENDING, {**marker, "error": scrub_url(" ".join(str(err).split()))})


def _sync_locked(
    root: Path, tracking_uri: str | None, parents_by_uri: dict[str, Parents]
) -> SyncOutcome:
    names = {n for n in (PENDING, UPLOADING, SYNCED) if (root / n).is_file()}
    if SYNCED in names and not names & {PENDING, UPLOADING}:
        try:
            synced = read_marker(root / SYNCED) or {}
        except ValueError:
            synced = {}
        return SyncOutcome(root, synced.get("run_id"), None, "already")
    state = job_dir_state(root)
    if state in ("incomplete", "missing"):
        what = (
            "was cut off while written (INCOMPLETE)"
            if state == "incomplete"
            else "has no results (no metrics.json / definitions.json)"
        )
        raise _Skip(f"it is marked for upload but {what}; run the job again or remove the folder")
    try:
        check_job_dir(root)  # before the store is contacted: never a half-made run
    except InputError as err:
        _note_invalid(root, err)
        raise
    uri, upload = _plan(root, tracking_uri)
    parents = parents_by_uri.setdefault(uri, Parents(uri))
    try:
        with _fast_fail_http():
            run_id = upload_locked(root, uri, upload, parents)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - the store is still unreachable
        return SyncOutcome(root, None, mark_pending(root, uri, err, upload), "pending")
    return SyncOutcome(root, run_id, None, "uploaded")


def sync_job_dir(
    path: str | Path,
    *,
    tracking_uri: str | None = None,
    _parents: dict[str, Parents] | Parents | None = None,
) -> SyncOutcome:
    """Upload one job directory that needs it (see the module docstring); never raises for a
    bad directory: the outcome says what happened."""
    root = Path(path)
    if isinstance(_parents, Parents):
        parents_by_uri = {_parents.uri: _parents}
    else:
        parents_by_uri = _parents if isinstance(_parents, dict) else {}
    try:
        with job_lock(root, timeout=SYNC_LOCK_WAIT_SECONDS):
            return _sync_locked(root, tracking_uri, parents_by_uri)
    except LockTimeout as err:
        return SyncOutcome(root, None, str(err), "pending")
    except (_Skip, InputError) as err:
        return SyncOutcome(root, None, scrub_url(" ".join(str(err).split())), "skipped")
    except Exception as err:  # noqa: BLE001 - one bad directory never stops the others
        return SyncOutcome(root, None, _first_line(err), "skipped")


# ---------------------------------------------------------------------------------------------
# The sync: closing sweep parents
# ---------------------------------------------------------------------------------------------


def _sweep_alive(sweep_dir: Path | None) -> bool:
    """Whether the sweep of ``sweep_dir`` is still running (its process holds the sweep lock)."""
    if sweep_dir is None or not (sweep_dir / SWEEP_FILE).is_file():
        return False
    try:
        fd = try_lock(sweep_dir / SWEEP_LOCK)
    except OSError:
        return False
    if fd is None:
        return True
    os.close(fd)
    return False


def _close_pending_sweeps(
    sweeps: list[Path], tracking_uri: str | None, out, problems: list[SyncOutcome]
) -> set[str]:
    """Close the parents recorded in ``PENDING_SWEEP`` markers; returns those closed."""
    closed: set[str] = set()
    for sweep_dir in sweeps:
        marker = read_pending_sweep(sweep_dir)
        record = read_sweep_record(sweep_dir) or {}
        uri = _pick_uri(tracking_uri, marker.get("tracking_uri"), record.get("tracking_uri"))
        parent = marker.get("parent_run_id") or record.get("parent_run_id")
        sweep_id = marker.get("sweep_id") or record.get("sweep_id")
        if not uri or not (parent or sweep_id):
            problems.append(
                SyncOutcome(sweep_dir, None, "unreadable PENDING_SWEEP marker", "skipped")
            )
            print(f"skipped sweep {sweep_dir}: its PENDING_SWEEP marker is unreadable", file=out)
            continue
        ok = finish_sweep_parent_or_mark_pending(
            sweep_dir,
            parent,
            marker.get("status", "FINISHED"),
            sweep_id=sweep_id,
            experiment=marker.get("experiment") or record.get("experiment") or DEFAULT_EXPERIMENT,
            only_if_marked=True,
            tracking_uri=uri,
        )
        if ok:
            closed.add(parent or sweep_id)
            print(
                f"closed sweep parent {parent or 'of sweep ' + str(sweep_id)} ({scrub_url(uri)})",
                file=out,
            )
        else:
            problems.append(SyncOutcome(sweep_dir, None, "sweep parent still pending", "pending"))
    return closed


def _close_dead_sweep(sweep_dir: Path, uri: str, record: Mapping[str, Any]) -> str | None:
    """Close as KILLED the parent of a sweep that ended without closing it; returns its id."""
    client = _client(uri)
    with (
        _fast_fail_http(),
        lock_if_writable(sweep_dir / PARENT_LOCK, what=f"the sweep parent of {sweep_dir}"),
    ):
        parent = record.get("parent_run_id")
        if not parent or not _run_exists(client, parent):
            exp = client.get_experiment_by_name(record.get("experiment") or DEFAULT_EXPERIMENT)
            run = (
                find_sweep_parent_run(client, exp.experiment_id, record["sweep_id"])
                if exp
                else None
            )
            parent = run.info.run_id if run else None
        if parent is None or client.get_run(parent).info.status != "RUNNING":
            return None
        finish_sweep_parent(parent, "KILLED", tracking_uri=uri)
        return parent


def _close_dead_sweeps(
    sweeps: list[Path], tracking_uri: str | None, out, problems: list[SyncOutcome]
) -> set[str]:
    closed: set[str] = set()
    for sweep_dir in sweeps:
        record = read_sweep_record(sweep_dir)
        if record is None or (sweep_dir / PENDING_SWEEP).is_file():
            continue
        uri = _pick_uri(tracking_uri, record.get("tracking_uri"))
        if not uri:
            continue
        fd = try_lock(sweep_dir / SWEEP_LOCK)
        if fd is None:
            print(f"sweep still running, its parent left open: {sweep_dir}", file=out)
            continue
        try:
            parent = _close_dead_sweep(sweep_dir, uri, record)
        except Exception as err:  # noqa: BLE001 - reported, the others go on
            problems.append(SyncOutcome(sweep_dir, None, _first_line(err), "pending"))
            print(f"could not close the sweep parent of {sweep_dir}: {_first_line(err)}", file=out)
            continue
        finally:
            os.close(fd)
        if parent:
            closed.add(parent)
            print(
                f"closed sweep parent {parent} as KILLED: its sweep ended without closing it "
                f"({sweep_dir})",
                file=out,
            )
    return closed


def _final_status(sweep_dir: Path | None) -> str | None:
    """The status a parent created during a sync closes with: the one its sweep recorded
    (``PENDING_SWEEP``), KILLED for a sweep that ended without closing it, FINISHED for jobs
    without a sweep directory; None while the sweep still runs (it will close the parent)."""
    if sweep_dir is None or read_sweep_record(sweep_dir) is None:
        return "FINISHED"
    if _sweep_alive(sweep_dir):
        return None
    if (sweep_dir / PENDING_SWEEP).is_file():
        return read_pending_sweep(sweep_dir).get("status", "FINISHED")
    return "KILLED"


def _close_if_running(uri: str, parent: str, status: str, lock_dir: Path | None) -> bool:
    lock = (
        lock_if_writable(lock_dir / PARENT_LOCK, what=f"the sweep parent of {lock_dir}")
        if lock_dir is not None
        else contextlib.nullcontext()
    )
    with lock:
        if _client(uri).get_run(parent).info.status != "RUNNING":
            return False
        finish_sweep_parent(parent, status, tracking_uri=uri)
        return True


def _finish_parents(
    parents_by_uri: Mapping[str, Parents], closed: set[str], sweep_dirs: Mapping[str, Path], out
) -> None:
    """Close the parents created during the sync (unless their sweep still runs); refresh the
    leaderboard of closed parents that gained children."""
    for uri, parents in parents_by_uri.items():
        for sweep_id, parent in parents.created.items():
            sweep_dir = sweep_dirs.get(sweep_id) or parents.dirs.get(sweep_id)
            status = _final_status(sweep_dir)
            if parent in closed or sweep_id in closed or status is None:
                continue
            if _close_if_running(uri, parent, status, sweep_dir):
                print(
                    f"created and closed sweep parent {parent} for sweep {sweep_id} ({status})",
                    file=out,
                )
            closed.add(parent)
        for parent in parents.touched - closed:
            try:
                run = _client(uri).get_run(parent)
                if run.info.status != "RUNNING":
                    finish_sweep_parent(
                        parent, run.info.status, tracking_uri=uri, close_running_children=False
                    )
                    print(f"refreshed the leaderboard of sweep parent {parent}", file=out)
            except Exception as err:  # noqa: BLE001 - refreshing is a courtesy
                print(f"could not refresh sweep parent {parent}: {_first_line(err)}", file=out)


# ---------------------------------------------------------------------------------------------
# The sync: everything under some paths
# ---------------------------------------------------------------------------------------------


def _incomplete_reason(job: Path) -> str:
    try:
        fd = try_lock(job / JOB_LOCK)
    except OSError:
        fd = 0
    if fd is None:
        return "being written by another process"
    if fd:
        os.close(fd)
    return "cut off while written (a killed job or a full disk)"


_LINES = {
    "uploaded": "uploaded {path} -> run {run_id}",
    "already": "already uploaded {path} (run {run_id})",
    "pending": "still pending {path}: {error}",
    "skipped": "skipped {path}: {error}",
}


def sync_paths(
    paths: Sequence[str | Path], *, tracking_uri: str | None = None, out=None
) -> list[SyncOutcome]:
    """Upload every job directory under ``paths`` that needs it, then close sweep parents (see
    the module docstring).

    Progress lines go to ``out`` (default: ``sys.stdout``). Returns one :class:`SyncOutcome` per
    job directory, plus one per sweep directory that could not be closed.
    """
    out = sys.stdout if out is None else out
    if isinstance(paths, (str, Path)):
        paths = [paths]
    found = scan(paths)
    outcomes: list[SyncOutcome] = []
    parents_by_uri: dict[str, Parents] = {}
    for job in found.jobs + found.unmarked:
        outcome = sync_job_dir(job, tracking_uri=tracking_uri, _parents=parents_by_uri)
        outcomes.append(outcome)
        print(
            _LINES[outcome.status].format(path=job, run_id=outcome.run_id, error=outcome.error),
            file=out,
        )
    for job in found.incomplete:
        print(f"incomplete {job}: {_incomplete_reason(job)}; nothing to upload", file=out)
    problems: list[SyncOutcome] = []
    for folder, reason in found.unreadable:
        error = (
            f"this user cannot read the folder ({reason}); a job pending in it is not "
            "uploaded: run the sync as a user who can read it"
        )
        problems.append(SyncOutcome(folder, None, error, "skipped"))
        print(_LINES["skipped"].format(path=folder, error=error), file=out)
    closed = _close_pending_sweeps(found.pending_sweeps, tracking_uri, out, problems)
    closed |= _close_dead_sweeps(found.sweeps, tracking_uri, out, problems)
    sweep_dirs = {
        rec["sweep_id"]: d for d in found.sweeps if (rec := read_sweep_record(d)) is not None
    }
    _finish_parents(parents_by_uri, closed, sweep_dirs, out)
    if not (found.jobs or found.unmarked or found.pending_sweeps or closed or found.unreadable):
        print("nothing pending under " + ", ".join(str(p) for p in paths), file=out)
    return outcomes + problems
