"""Markers, locks and atomic writes: how a job directory is either complete or visibly not, and
how processes that share it (the job, any number of ``recoeval-track-sync``) take turns.

Markers (small JSON files in the job directory)
-----------------------------------------------
``INCOMPLETE``
    Written first by :func:`~recoeval_tracking.jobdir.write_job_dir` (with the new job uid),
    removed after ``job.json``, which is written last. A directory holding ``INCOMPLETE`` whose
    uid is not the one in ``job.json`` was cut off while being written (a killed job, a full
    disk): it is never uploaded.
``UPLOADING``
    Written by the tracking layer before it contacts the store (the upload arguments), then
    again with the run id once the run exists. Left behind by a job killed during its upload,
    it tells ``recoeval-track-sync`` to finish that run.
``PENDING``
    The upload failed (the store could not be reached): the upload arguments and the error.
``SYNCED``
    Uploaded: the run id, the store, the time.

Every marker and every file of a job directory is written to a temporary name in the same
folder, flushed to disk (``fsync``) and renamed over its final name (:func:`atomic_write`), so
a reader sees the old file or the new one, never a truncated one.

Locks
-----
:func:`file_lock` is an exclusive ``fcntl.flock`` on a lock file, released by the kernel when
its process ends, however it ends (SIGKILL included). Lock files: ``.recoeval.lock`` in a job
directory (writing and uploading the job), ``mlflow.db.lock`` beside a SQLite store (creating its
schema), ``.recoeval_parent.lock`` and ``.recoeval_sweep.lock`` in a sweep directory (creating
a sweep parent; held by the running sweep). Locks are re-entrant within a thread.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "FILES",
    "UPLOADED_FILES",
    "INCOMPLETE",
    "UPLOADING",
    "PENDING",
    "SYNCED",
    "JOB_LOCK",
    "LockTimeout",
    "file_lock",
    "try_lock",
    "lock_if_writable",
    "atomic_write",
    "write_text_atomic",
    "write_json_atomic",
    "read_marker",
    "remove_stale_temporaries",
    "fsync_dir",
]

INCOMPLETE = "INCOMPLETE"
UPLOADING = "UPLOADING"
#: Marker of a job directory whose upload failed (JSON: the upload arguments, URI, error).
PENDING = "PENDING"
#: Marker of a job directory uploaded (JSON: run id, URI, time).
SYNCED = "SYNCED"
#: The lock file of a job directory.
JOB_LOCK = ".recoeval.lock"

_TMP_TAG = ".recoeval-tmp"

#: Names of the files of a job directory (see :mod:`recoeval_tracking.jobdir.io`).
FILES = {
    "per_user": "per_user.parquet",
    "per_user_validation": "per_user_validation.parquet",
    "metrics": "metrics.json",
    "curves": "curves.csv",
    "definitions": "definitions.json",
    "dataset": "dataset.json",
    "config": "config.yaml",
    "overrides": "overrides.yaml",
    "plots": "plots",
    "job": "job.json",
}
#: The files of a job directory that an upload sends as artifacts (besides the plots; a
#: ``per_user.parquet`` folder of parts goes whole): what sync checks and what it uploads.
UPLOADED_FILES = tuple(
    FILES[name]
    for name in (
        "per_user",
        "per_user_validation",
        "metrics",
        "curves",
        "definitions",
        "dataset",
        "config",
        "overrides",
        "job",
    )
)


class LockTimeout(TimeoutError):
    """A lock held by another process for longer than the caller would wait."""


# ---------------------------------------------------------------------------------------------
# atomic writes
# ---------------------------------------------------------------------------------------------


def fsync_dir(path: str | Path) -> None:
    """Flush a directory's entries (renames) to disk; ignored where the OS does not allow it."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: str | Path, write: Callable[[Path], Any]) -> Path:
    """Call ``write(tmp)`` on a temporary name beside ``path``, fsync it, rename it to ``path``.

    On any error the temporary file is removed and the error raised; ``path`` is untouched.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{_TMP_TAG}")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented JSON to ``path`` atomically (no NaN literals)."""
    text = json.dumps(obj, indent=2, default=str, allow_nan=False) + "\n"
    return write_text_atomic(path, text)


def remove_stale_temporaries(folder: str | Path) -> int:
    """Remove temporary files left in ``folder`` (and its subfolders) by writers that died;
    returns how many. Call it with the folder's lock held."""
    n = 0
    for p in Path(folder).rglob(f"*{_TMP_TAG}"):
        with contextlib.suppress(OSError):
            p.unlink()
            n += 1
    return n


def read_marker(path: str | Path) -> dict[str, Any] | None:
    """The JSON object of a marker file; None when there is none.

    Raises
    ------
    ValueError
        The file exists but is not a JSON object (it names the file).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ValueError(f"the marker {path} is not valid JSON ({err})") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"the marker {path} does not hold a JSON object")
    return dict(data)


# ---------------------------------------------------------------------------------------------
# locks
# ---------------------------------------------------------------------------------------------

_held: dict[tuple[str, int], list[int]] = {}  # (lock path, thread id) -> [fd, depth]
_held_guard = threading.Lock()


def _lock_nb(fd: int) -> None:
    """Lock ``fd`` exclusively without waiting (``flock``; ``msvcrt.locking`` on Windows);
    raises ``OSError`` (EAGAIN, EACCES...) when another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK)


def _acquire(fd: int, timeout: float | None, path: Path, what: str) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            _lock_nb(fd)
            return
        except OSError as err:
            if err.errno not in _BUSY:
                raise
        if deadline is not None and time.monotonic() >= deadline:
            raise LockTimeout(
                f"{what} is locked by another process ({path}); waited "
                f"{timeout:g} s. Try again when that process has finished."
            )
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


@contextlib.contextmanager
def file_lock(
    path: str | Path, *, timeout: float | None = 600.0, what: str = "the folder"
) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created if needed) for the ``with`` block.

    Parameters
    ----------
    path : str or Path
        The lock file; its folder must exist.
    timeout : float or None
        Seconds to wait for another process to release it (None: forever); then
        :class:`LockTimeout` is raised.
    what : str
        What the lock protects, for the timeout message.
    """
    key = (str(Path(path).absolute()), threading.get_ident())
    with _held_guard:
        entry = _held.get(key)
        if entry is not None:
            entry[1] += 1
    if entry is not None:  # re-entered in this thread
        try:
            yield
        finally:
            with _held_guard:
                entry[1] -= 1
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, timeout, Path(path), what)
        with _held_guard:
            _held[key] = [fd, 1]
        try:
            yield
        finally:
            with _held_guard:
                _held.pop(key, None)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def try_lock(path: str | Path) -> int | None:
    """Take the lock on ``path`` without waiting: its file descriptor (keep it open to hold the
    lock, ``os.close`` it to release), or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock_nb(fd)
    except OSError as err:
        os.close(fd)
        if err.errno in _BUSY:
            return None
        raise
    return fd


@contextlib.contextmanager
def lock_if_writable(
    path: str | Path, *, timeout: float | None = 600.0, what: str = "the folder"
) -> Iterator[bool]:
    """:func:`file_lock`, except that a folder where the lock file cannot be created
    (read-only) is used without a lock; yields whether the lock is held."""
    try:
        lock = file_lock(path, timeout=timeout, what=what)
        lock.__enter__()
    except OSError as err:
        if isinstance(err, LockTimeout) or err.errno not in (
            errno.EACCES,
            errno.EPERM,
            errno.EROFS,
        ):
            raise
        yield False
        return
    try:
        yield True
    finally:
        lock.__exit__(None, None, None)
