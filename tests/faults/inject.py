"""Run ``recoeval-track`` or ``recoeval-track-sync`` in this process with one fault injected.

Usage::

    python inject.py FAULT track ARGS...     # the recoeval-track command
    python inject.py FAULT sync ARGS...      # the recoeval-track-sync command

``FAULT`` is one of:

``kill-before-job-json``
    SIGKILL while the job directory is written: every result file is there, ``job.json`` is not.
``kill-before-upload``
    SIGKILL after the job directory is complete, before the upload starts (no marker yet).
``kill-mid-upload``
    SIGKILL during the upload: the run exists, its metrics and params are logged, its artifacts
    are not.
``kill-after-finish``
    SIGKILL after the run is set FINISHED, before the directory is marked ``SYNCED``.
``kill-third-job``
    SIGKILL the whole sweep (the launcher, basic launcher) when its third job starts.
``parent-fails-once``
    The first creation of a sweep parent fails as if the store were down (the sweep's start).
``enospc-per-user``
    Writing ``per_user.parquet`` fails as on a full disk, after 4 bytes reached the file.
``none``
    No fault.

The kill is a real ``SIGKILL`` of this process, sent by itself at the named point, so nothing
(no ``finally``, no exit handler) runs after it.
"""

from __future__ import annotations

import errno
import os
import signal
import sys


def _die(*args, **kwargs):
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_at(module, name: str) -> None:
    setattr(module, name, _die)


def _at_call(module, name: str, n: int, fault) -> None:
    """Replace ``module.name`` by a wrapper that runs ``fault`` at its ``n``-th call (before
    the call; a fault that raises stops it) and calls the original otherwise."""
    original = getattr(module, name)
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            fault()
        return original(*args, **kwargs)

    setattr(module, name, wrapper)


def _kill_third_job() -> None:
    from recoeval_tracking.app import pipeline

    _at_call(pipeline, "run_job", 3, _die)


def _store_down() -> None:
    raise ConnectionError("injected: the tracking store is down at sweep start")


def _parent_fails_once() -> None:
    from recoeval_tracking.tracking import sweeps

    _at_call(sweeps, "create_sweep_parent", 1, _store_down)


def _enospc_per_user() -> None:
    import pandas as pd

    original = pd.DataFrame.to_parquet

    def to_parquet(self, path, *args, **kwargs):
        if "per_user" in str(path):
            with open(path, "wb") as fh:
                fh.write(b"PAR1")
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return original(self, path, *args, **kwargs)

    pd.DataFrame.to_parquet = to_parquet


def install(fault: str) -> None:
    """Patch the package so that ``fault`` happens at its point."""
    from recoeval_tracking.jobdir import io
    from recoeval_tracking.tracking import pending, runs

    points = {
        "kill-before-job-json": lambda: _kill_at(io, "_write_job_json"),
        "kill-before-upload": lambda: _kill_at(pending, "upload_or_mark_pending"),
        "kill-mid-upload": lambda: _kill_at(runs, "_dataset_input"),
        "kill-after-finish": lambda: _kill_at(runs, "_synced"),
        "kill-third-job": _kill_third_job,
        "parent-fails-once": _parent_fails_once,
        "enospc-per-user": _enospc_per_user,
        "none": lambda: None,
    }
    points[fault]()


def main() -> None:
    fault, command, *args = sys.argv[1:]
    install(fault)
    if command == "track":
        from recoeval_tracking.app.cli import main as track

        sys.argv = ["recoeval-track", *args]
        track()
    else:
        from recoeval_tracking.app.sync import main as sync

        sys.exit(sync(args))


if __name__ == "__main__":
    main()
