"""How the warm-up child that compiles the metric kernels is started (standard library only).

``python -m recoeval_tracking.metrics.warm`` (:mod:`recoeval_tracking._children`) with its stdin
a pipe the job writes its options to, its stdout a pipe for its one line back (a core is free:
half of the callees compiled), its stderr discarded and OpenMP held to one thread. Started by
the app before it imports numpy or Hydra (:func:`recoeval_tracking.app.startup.prestart_warm_up`),
or by :func:`recoeval_tracking.metrics.warm.start` when a job needs it later: one command line
for both."""

from __future__ import annotations

import subprocess

from . import _children

__all__ = ["start_child"]


def start_child() -> subprocess.Popen:
    """Start the warm-up child (it then waits for its options on stdin); ``OSError`` when it
    cannot start."""
    return _children.start_child("recoeval_tracking.metrics.warm", env={"OMP_NUM_THREADS": "1"})
