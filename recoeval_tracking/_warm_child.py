"""How the warm-up child that compiles the metric kernels is started (standard library only).

``python -m recoeval_tracking.metrics.warm`` with its stdin a pipe the job writes its options to,
its stdout a pipe for its one line back (a core is free: half of the callees compiled), its stderr
discarded and OpenMP held to one thread. Started by the app before it imports numpy
or Hydra (:func:`recoeval_tracking.app.startup.prestart_warm_up`), or by
:func:`recoeval_tracking.metrics.warm.start` when a job needs it later: one command line for
both."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["start_child"]


def start_child() -> subprocess.Popen:
    """Start the warm-up child (it then waits for its options on stdin); ``OSError`` when it
    cannot start."""
    return subprocess.Popen(
        [sys.executable, "-m", "recoeval_tracking.metrics.warm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
