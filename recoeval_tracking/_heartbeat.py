"""A line every few seconds while a slow step runs (standard library only).

A first run compiles numba kernels for seconds inside a step, imports MLflow, draws figures: a
terminal that stays silent that long looks like a hang. :func:`heartbeat` says that the step is
still at work, from a daemon thread, for the app's stages, the wait for the warm-up process
(:mod:`recoeval_tracking.metrics.warm`) and the report command's steps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "heartbeat",
    "beat",
    "next_wait",
    "TICK_SECONDS",
    "QUICK_TICKS_FOR",
    "SLOW_TICK_SECONDS",
]

#: Seconds between two lines in a step's first :data:`QUICK_TICKS_FOR` seconds; after that, one
#: line every :data:`SLOW_TICK_SECONDS`.
TICK_SECONDS = 1.5
QUICK_TICKS_FOR = 30.0
SLOW_TICK_SECONDS = 15.0


@contextmanager
def heartbeat(doing: str, say: Callable[[str], Any]) -> Iterator[None]:
    """Call ``say("... still <doing> (<seconds> s)")`` every :data:`TICK_SECONDS` while the
    block runs (every :data:`SLOW_TICK_SECONDS` after its first :data:`QUICK_TICKS_FOR`
    seconds). ``say`` is a logger's ``info`` or a command's own print. A block shorter than one
    tick says nothing."""
    stop = threading.Event()
    t0 = time.perf_counter()
    thread = threading.Thread(
        target=beat,
        args=(doing, say, stop.wait, time.perf_counter, t0),
        name="recoeval-heartbeat",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def next_wait(elapsed: float) -> float:
    """Seconds to the next line when the step has run ``elapsed`` seconds: :data:`TICK_SECONDS`
    in its first :data:`QUICK_TICKS_FOR` seconds, :data:`SLOW_TICK_SECONDS` after."""
    return TICK_SECONDS if elapsed < QUICK_TICKS_FOR else SLOW_TICK_SECONDS


def beat(
    doing: str,
    say: Callable[[str], Any],
    wait: Callable[[float], bool],
    clock: Callable[[], float],
    t0: float,
) -> None:
    """The heartbeat's loop: ``wait(seconds)`` (an event's ``wait``: True once stopped), then
    a line, until stopped. ``clock`` and ``wait`` are parameters so that a test runs the
    schedule on a fake clock."""
    while not wait(next_wait(clock() - t0)):
        say(f"... still {doing} ({clock() - t0:.0f} s)")
