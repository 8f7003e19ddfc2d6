"""The upload child: MLflow imported and the store opened in a second process while a single
run loads, splits, fits and evaluates.

A new process's first upload spends 1.3-1.6 s importing MLflow and opening its store
(``benchmarks/bench_job.py``), after the job's folder is written, on one core: the job's own
thread cannot take that import earlier without slowing its fit and its plots by as much (a
thread importing MLflow holds the GIL). ``recoeval-track`` started on a warm kernel cache
therefore starts this module as a child process at once
(:func:`recoeval_tracking.app.startup.prestart_uploader`), which imports MLflow on the other
core, opens the store once the job names it, and uploads the job's folder when the job asks:
:func:`~.pending.upload_or_mark_pending`, as the job would call it itself.

Nothing depends on the child: when it cannot start, dies or fails, the job uploads in its own
process as before (:func:`recoeval_tracking._uploader_child.upload_in_child` says so), and an
upload the child began is finished there exactly once (``upload_or_mark_pending`` reads the
folder's markers under its lock).

Messages (pickled, one per :func:`pickle.dump`, on the child's stdin; one answer on its stdout):

* ``("open", uri)``: open the store at ``uri`` (a new SQLite one gets its schema); no answer;
* ``("upload", path, kwargs)``: ``upload_or_mark_pending(path, **kwargs)``; the answer is
  ``("done", run_id, events)``: what it said, in order (its log records of level INFO and
  above, its text on stdout and on stderr, its warnings), for the job to say as its own; or
  ``("error", text)`` when it raised, and the job then uploads itself. The child then ends at
  once (``os._exit``: the upload is whole, and the interpreter's teardown of MLflow and
  SQLAlchemy took 0.8 s the job waited for).

Its stderr is discarded, and so is anything written to its stdout's file descriptor outside
an upload (its answers go through a copy of it).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import sys
import warnings
from typing import Any

__all__ = ["main"]


class _Said(logging.Handler):
    """What an upload says, in order: its log records (level INFO and above, their message
    formatted so that they pickle), its text on stdout and stderr, its warnings."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.events: list[tuple[Any, ...]] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        self.events.append(("log", record))

    def stream(self, kind: str) -> io.TextIOBase:
        events = self.events

        class _Text(io.TextIOBase):
            def write(self, text: str) -> int:
                if text and events and events[-1][0] == kind:  # a print's line and its end
                    events[-1] = (kind, events[-1][1] + text)
                elif text:
                    events.append((kind, text))
                return len(text)

        return _Text()

    def warn(self, message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        self.events.append(("warn", str(message), category))


def _upload(path: str, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    from .pending import upload_or_mark_pending

    said = _Said()
    root = logging.getLogger()
    level = root.level
    root.addHandler(said)
    root.setLevel(logging.INFO)
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(said.stream("out")),
            contextlib.redirect_stderr(said.stream("err")),
        ):
            warnings.simplefilter("default")
            warnings.showwarning = said.warn
            run_id = upload_or_mark_pending(path, **kwargs)
    except Exception as err:  # noqa: BLE001 - the job uploads itself and meets it there
        return ("error", f"{type(err).__name__}: {err}")
    finally:
        root.removeHandler(said)
        root.setLevel(level)
    return ("done", run_id, said.events)


def main() -> None:
    """Serve one job: open the store it names, upload its folder when it asks, then end. The
    arguments: the job's own command line, which MLflow reads as the run's source."""
    if len(sys.argv) > 1:
        sys.argv = sys.argv[1:]
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints cannot reach the answers
    from . import pending  # MLflow's client and this package's upload, before the job asks

    pending.preload(None)
    requests = sys.stdin.buffer
    while True:
        try:
            message = pickle.load(requests)
        except (EOFError, pickle.UnpicklingError):
            return
        if message[0] == "open":
            with contextlib.suppress(Exception):  # the upload meets the store's error itself
                pending.preload(message[1])
        elif message[0] == "upload":
            try:  # pickled whole before a byte is sent: the job reads one answer or none
                answer = pickle.dumps(_upload(message[1], message[2]))
            except (pickle.PicklingError, TypeError, AttributeError):
                answer = pickle.dumps(("error", "the upload's outcome could not be sent"))
            answers.write(answer)
            answers.flush()
            sys.stderr.flush()
            # the upload is whole (its folder marked SYNCED or PENDING): end without the
            # interpreter's teardown of MLflow and SQLAlchemy (0.8 s the job would wait for)
            os._exit(0)


if __name__ == "__main__":
    main()
