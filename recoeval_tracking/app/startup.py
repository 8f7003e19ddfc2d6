"""The command's first line, before anything heavy is imported, and a line every few seconds
until the job or the sweep says something of its own (standard library only).

``recoeval-track`` spends its first second or two importing Hydra, OmegaConf, numpy and scipy
and composing the config (a sweep composes every job first); on a busy machine that was tens
of seconds of an empty terminal. :func:`begin` prints ``recoeval-track: starting the job...``
(or ``the sweep``) on stdout, where Hydra's lines go, at once, then starts a
:func:`~recoeval_tracking._heartbeat.heartbeat` (``... still starting the sweep (2 s)``) that
ends with the first log record of level INFO or above (a stage's line, the sweep's parent run,
Hydra's launcher), or with :func:`end`, which the command calls when it returns.

A single run also starts a child process here: on a cold kernel cache its warm-up child
(:func:`prestart_warm_up`): the process that compiles the metric kernels
(:mod:`recoeval_tracking.metrics.warm`) imports numpy, scipy, numba and the engine while this
one imports Hydra and composes the config, then compiles as soon as the job sends it its
options (:func:`take_warm_up`); a job that does not need it stops it (:func:`stop_warm_up`).
On a warm cache its upload child (:func:`prestart_uploader`,
:mod:`recoeval_tracking.tracking.uploader`): MLflow imported and the store opened on the other
core while the job runs, the job's folder uploaded when it is written.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .._heartbeat import beat

__all__ = [
    "begin",
    "end",
    "running",
    "prestart_warm_up",
    "take_warm_up",
    "stop_warm_up",
    "prestart_uploader",
    "uploader",
    "stop_uploader",
]

_stop = threading.Event()
_state: dict[str, Any] = {"thread": None, "factory": None, "warm": None, "uploader": None}
#: Overrides that turn a job's tracking off: no upload child for them.
_NO_TRACKING = frozenset({"tracking=none", "tracking.enabled=false", "tracking.enabled=False"})


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


def _started(key: str, start: Callable[[], subprocess.Popen]) -> bool:
    """``start()``'s child kept as ``key`` of the state; whether it started."""
    try:
        _state[key] = start()
    except OSError:
        return False
    return True


def prestart_warm_up() -> bool:
    """Start the warm-up child (``python -m recoeval_tracking.metrics.warm``, its stdin a pipe
    the job writes its options to) when the engine's kernel cache holds no index at all and
    ``RECOEVAL_WARM_UP`` is not ``0``; returns whether it started. Standard library only: it
    runs before Hydra and numpy are imported."""
    from .._numba_cache import engine_cache_is_cold

    if _state["warm"] is not None or os.environ.get("RECOEVAL_WARM_UP") == "0":
        return False
    if not engine_cache_is_cold():
        return False
    from .._warm_child import start_child

    return _started("warm", start_child)


def take_warm_up() -> subprocess.Popen | None:
    """The child :func:`prestart_warm_up` started (once; None when none was, or it has ended:
    it would no longer read its options)."""
    proc, _state["warm"] = _state["warm"], None
    return proc if proc is not None and proc.poll() is None else None


def stop_warm_up() -> None:
    """End the child :func:`prestart_warm_up` started when no job took it (a no-op else)."""
    _end_child("warm")


def prestart_uploader(argv: list[str]) -> bool:
    """Start the upload child (:mod:`recoeval_tracking.tracking.uploader`: MLflow imported and
    the store opened on the other core while the job runs) unless ``RECOEVAL_UPLOADER`` is
    ``0``, the command line turns tracking off (``tracking=none``,
    ``tracking.enabled=false``; a job whose config does so ends it once composed), or a warm-up
    child compiles the kernels (both cores are then busy, and the job prepares MLflow in the
    compile's last second instead); returns whether it started. Standard library only."""
    if _state["uploader"] is not None or _state["warm"] is not None:
        return False
    if os.environ.get("RECOEVAL_UPLOADER") == "0" or _NO_TRACKING.intersection(argv):
        return False
    from .._uploader_child import start_child

    return _started("uploader", start_child)


def uploader() -> subprocess.Popen | None:
    """The upload child :func:`prestart_uploader` started, while it runs (else None)."""
    proc = _state["uploader"]
    return proc if proc is not None and proc.poll() is None else None


def stop_uploader() -> None:
    """End the upload child at once (a no-op when none was started or it has ended)."""
    _end_child("uploader")


def _end_child(key: str) -> None:
    """End the child kept as ``key`` of the state at once, its pipes closed, and forget it."""
    proc, _state[key] = _state[key], None
    if proc is not None:
        from .._children import stop_child

        stop_child(proc, kill=True)
