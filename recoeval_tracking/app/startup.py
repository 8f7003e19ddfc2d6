"""The command's first line, before anything heavy is imported, and a line every few seconds
until the job or the sweep says something of its own (standard library only).

``recoeval-track`` spends its first second or two importing Hydra, OmegaConf, numpy and scipy
and composing the config (a sweep composes every job first); on a busy machine that was tens
of seconds of an empty terminal. :func:`begin` prints ``recoeval-track: starting the job...``
(or ``the sweep``) on stdout, where Hydra's lines go, at once, then starts a
:func:`~recoeval_tracking._heartbeat.heartbeat` (``... still starting the sweep (2 s)``) that
ends with the first log record of level INFO or above (a stage's line, the sweep's parent run,
Hydra's launcher), or with :func:`end`, which the command calls when it returns.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

from .._heartbeat import beat

__all__ = ["begin", "end", "running"]

_stop = threading.Event()
_state: dict[str, Any] = {"thread": None, "factory": None}


def _say(text: str) -> None:
    print(text, file=sys.stdout, flush=True)


def begin(prog: str, doing: str) -> None:
    """Print ``<prog>: <doing>...`` now and ``... still <doing> (<s> s)`` every
    :data:`~recoeval_tracking._heartbeat.TICK_SECONDS` until the first INFO record is made
    (:func:`end` then runs) or :func:`end` is called. Once per process at a time."""
    if running():
        return
    _say(f"{prog}: {doing}...")
    _stop.clear()
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.levelno >= logging.INFO and not _stop.is_set():
            end()
        return record

    _state["factory"] = (previous, factory)
    logging.setLogRecordFactory(factory)
    thread = threading.Thread(
        target=beat,
        args=(doing, _say, _stop.wait, time.perf_counter, time.perf_counter()),
        name="recoeval-startup-heartbeat",
        daemon=True,
    )
    _state["thread"] = thread
    thread.start()


def running() -> bool:
    """Whether the startup lines are still being said."""
    thread = _state["thread"]
    return thread is not None and thread.is_alive() and not _stop.is_set()


def end() -> None:
    """Stop the startup lines (a no-op when none run). The record factory installed by
    :func:`begin` is taken out again when no other factory was installed over it."""
    _stop.set()
    thread, _state["thread"] = _state["thread"], None
    if thread is not None and thread is not threading.current_thread():
        thread.join()
    installed, _state["factory"] = _state["factory"], None
    if installed is not None and logging.getLogRecordFactory() is installed[1]:
        logging.setLogRecordFactory(installed[0])
