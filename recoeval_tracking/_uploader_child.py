"""The job's side of its upload child (standard library only): start it, name the store, ask
for the upload and show what it said (:mod:`recoeval_tracking.tracking.uploader`).

The child is ``python -m recoeval_tracking.tracking.uploader <the job's command line>``
(:mod:`recoeval_tracking._children`), its stdin and stdout pipes of pickled messages and its
stderr discarded: what the upload says (its log records, its text on stdout and stderr, its
warnings) comes back with its answer and is said by the job, so that a child that dies at its
start, or is stopped in the middle of its imports, prints nothing. Started by the app before it
imports numpy or Hydra (:func:`recoeval_tracking.app.startup.prestart_uploader`);
``RECOEVAL_UPLOADER=0`` keeps every upload in the job's process.
"""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from . import _children
from ._children import stop_child

__all__ = ["start_child", "open_store", "upload_in_child", "stop_child"]

logger = logging.getLogger(__name__)


def start_child() -> subprocess.Popen:
    """Start the upload child (it imports MLflow, then waits for the job's messages);
    ``OSError`` when it cannot start. It is given the job's own command line: MLflow's run tags
    name its source (``mlflow.source.name``, the git commit beside it) from ``sys.argv[0]``."""
    return _children.start_child("recoeval_tracking.tracking.uploader", sys.argv)


def _send(proc: subprocess.Popen, message: tuple[Any, ...]) -> bool:
    if proc.poll() is not None or proc.stdin is None:
        return False
    try:
        pickle.dump(message, proc.stdin)
        proc.stdin.flush()
    except (OSError, ValueError):
        return False
    return True


def open_store(proc: subprocess.Popen, uri: str) -> bool:
    """Have the child open the store at ``uri`` now (while the job fits); whether it was
    told."""
    return _send(proc, ("open", uri))


def upload_in_child(
    proc: subprocess.Popen, path: str | Path, kwargs: dict[str, Any]
) -> tuple[bool, str | None]:
    """``upload_or_mark_pending(path, **kwargs)`` in the child: ``(True, run id or None)`` once
    it answered, after what it said (log records, printed text, warnings) is said here as the
    job's own, in its order; ``(False, None)`` when it could not take the upload (it had ended,
    died, or raised: the job then uploads itself, and meets the error there). The child ends
    after it."""
    answer: Any = None
    if _send(proc, ("upload", str(path), kwargs)) and proc.stdout is not None:
        try:
            answer = pickle.load(proc.stdout)
        except Exception:  # noqa: BLE001 - a child that died mid-answer: the job uploads itself
            answer = None
    stop_child(proc)
    if not isinstance(answer, tuple) or answer[0] != "done":
        if isinstance(answer, tuple) and answer[0] == "error":
            logger.debug("the upload child raised %s; uploading in this process", answer[1])
        return False, None
    _, run_id, events = answer
    for event in events:
        _say(event)
    return True, run_id


def _say(event: tuple[Any, ...]) -> None:
    """One thing the child's upload said, said here: a log record through this process's
    logging, a text on its stdout or stderr, a warning."""
    kind = event[0]
    if kind == "log":
        record = event[1]
        said = logging.getLogger(record.name)
        if said.isEnabledFor(record.levelno):
            said.handle(record)
    elif kind in ("out", "err"):
        stream = sys.stdout if kind == "out" else sys.stderr
        stream.write(event[1])
        stream.flush()
    elif kind == "warn":
        warnings.warn(event[1], event[2], stacklevel=3)
