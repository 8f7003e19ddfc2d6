"""Compile the metric kernels in a second process while the job loads, splits and fits.

On a fresh install numba compiles the engine's kernels at the first evaluation (about 8 s on a
2-core machine, on both cores: :mod:`recoeval_tracking.engine.compiling`). The app starts this
module in a child process at the start of a job whose kernel cache is cold: the child runs
:func:`~recoeval_tracking.evaluate` on a tiny input with the job's options and score dtype,
which compiles the same kernels and writes them to numba's on-disk cache while the job loads,
splits and fits. When the job reaches its evaluation it waits for the child (a line every few
seconds), then loads the kernels from the cache. What the job needs next (MLflow and its store,
matplotlib) is prepared meanwhile, once the child says on its stdout that one of its two
compiling processes (itself, its helper) is done with its half of the kernel's callees: the
rest of the compile then holds one core, and the other is free for it.

Nothing depends on the child: if it fails, is slow or compiles another dtype than the model
scores in, the job compiles what it needs itself, as without it.

Usage (the app does this): ``warm = start(options, "float32")`` before loading, then
``warm.wait_for(inputs)`` before evaluating.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from .._heartbeat import heartbeat

__all__ = ["start", "WarmUp", "score_dtype", "main"]

#: The longest a job waits for the child before compiling for itself.
WAIT_SECONDS = 120.0
#: The line the child writes on its stdout when one of its two compiling processes is done
#: with its half of the kernel's callees: the rest of the compile holds one core
#: (:func:`~recoeval_tracking.engine.compiling.when_callees_done`).
CALLEES_DONE = b"callees compiled\n"

logger = logging.getLogger(__name__)


class WarmUp:
    """A child process compiling the kernels of one dtype (see the module's docstring)."""

    def __init__(self, proc: subprocess.Popen | None, dtype: str) -> None:
        self.proc = proc
        self.dtype = dtype
        self.waited = 0.0

    def wait(
        self,
        dtype: Any = None,
        timeout: float = WAIT_SECONDS,
        meanwhile: Callable[[], Any] | None = None,
    ) -> bool:
        """Wait for the child when it compiles ``dtype`` (None: whatever it compiles); stop it
        otherwise. Returns whether it finished and compiled that dtype.

        A line says what the job waits for, and another every few seconds while it waits
        (:func:`~recoeval_tracking._heartbeat.heartbeat`). ``meanwhile`` (a slow import the job
        needs next, say) runs in a thread during the wait, from the moment the child says a
        core is free (:data:`CALLEES_DONE`) or has ended: the rest of the compile holds one
        core and leaves the other to it, where earlier it took CPU from the compile on both
        (about 1 s of the first command's wall).
        The wait ends when both are done (its exception is dropped: the job meets it again
        where it needs what it prepared)."""
        if self.proc is None:
            return False
        if dtype is not None and np.dtype(dtype) != np.dtype(self.dtype):
            self.stop()
            return False
        t0 = time.perf_counter()
        side = None
        if self.proc.poll() is None:  # a wait of seconds: the terminal says what it is
            logger.info("waiting for the metric kernels compiling in a second process...")
            if meanwhile is not None:
                side = threading.Thread(
                    target=_quietly,
                    args=(partial(_after_callees, self.proc, meanwhile),),
                    daemon=True,
                )
                side.start()
        try:
            with heartbeat("compiling the metric kernels", logger.info):
                code = self.proc.wait(timeout=timeout)
            if side is not None:
                side.join()
        except subprocess.TimeoutExpired:
            self.stop()
            return False
        finally:
            self.waited = time.perf_counter() - t0
        self._end(kill=False)  # it has ended: its stdout pipe closed
        return code == 0

    def wait_for(self, inputs: dict[str, Any], meanwhile: Callable[[], Any] | None = None) -> bool:
        """:meth:`wait` for the dtype the engine scores ``inputs`` in (the keyword arguments of
        :func:`~recoeval_tracking.evaluate` that carry a model's scores); ranked lists need no
        score kernel, so the child is stopped without waiting."""
        dtype = score_dtype(inputs)
        if dtype is None:
            self.stop()
            return False
        return self.wait(dtype, meanwhile=meanwhile)

    def stop(self) -> None:
        """End the child (its partial work stays valid: numba writes whole cache entries)."""
        self._end(kill=True)

    def _end(self, kill: bool) -> None:
        """The child ended (``kill``: at once) and its pipes closed; forgotten."""
        if self.proc is not None:
            from .._children import stop_child

            stop_child(self.proc, kill=kill)
            self.proc = None


def _after_callees(proc: subprocess.Popen, call: Callable[[], Any]) -> None:
    """``call()`` once the child says a core is free (its line on stdout) or has ended: until
    then both cores compile, and the job's own work would only slow them."""
    if proc.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            proc.stdout.readline()
    call()


def _tell_job(stream: Any) -> None:
    """The child's line to the job (:data:`CALLEES_DONE`): one core is free from now on."""
    with contextlib.suppress(OSError, ValueError):
        stream.write(CALLEES_DONE)
        stream.flush()


def _quietly(call: Callable[[], Any]) -> None:
    with contextlib.suppress(Exception):
        call()


def score_dtype(inputs: dict[str, Any]) -> str | None:
    """The dtype the engine scores ``inputs`` in (float32 only when both factors are float32),
    or None (ranked lists: no score kernels)."""
    if inputs.get("A") is not None:
        dtypes = {str(getattr(inputs.get(key), "dtype", "")) for key in ("A", "B")}
        return "float32" if dtypes == {"float32"} else "float64"
    for key in ("scores", "scorer"):
        dtype = getattr(inputs.get(key), "dtype", None)
        if dtype is not None:
            return str(dtype)
    return None


def start(options: Any, dtype: str = "float32", proc: subprocess.Popen | None = None) -> WarmUp:
    """Start the child compiling the kernels ``options`` (an
    :class:`~recoeval_tracking.options.EvalOptions`) need for scores of ``dtype``. The engine's
    kernel module is imported here first, so that its stale-cache check runs once, in this
    process, before the child writes to the cache. ``proc``: a child started earlier
    (``python -m recoeval_tracking.metrics.warm`` with its stdin a pipe, on a cache without
    any index, whose check has nothing to drop), sent the options instead of a new one."""
    payload = pickle.dumps((replace(options, nthreads=1), str(np.dtype(dtype))))
    try:
        if proc is None:
            from .._warm_child import start_child
            from ..engine import kernels  # noqa: F401  (the stale-cache check, before the child)

            proc = start_child()
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:
        return WarmUp(None, dtype)
    return WarmUp(proc, dtype)


def compile_for(options: Any, dtype: str) -> Any:
    """Run :func:`~recoeval_tracking.evaluate` with ``options`` on 40 users x ``max(60, 2k)``
    items of random factors of ``dtype``: every kernel the options need is compiled (or loaded
    from the cache). Returns its results."""
    import scipy.sparse as sp

    from .evaluate import evaluate

    rng = np.random.default_rng(0)
    m, n = 40, max(60, 2 * int(options.k))
    A = rng.standard_normal((m, 4)).astype(dtype)
    B = rng.standard_normal((n, 4)).astype(dtype)
    cells = rng.random((m, n))
    train = sp.csr_array((cells < 0.2).astype(np.float64))
    test = sp.csr_array(((cells > 0.9) * rng.integers(1, 6, (m, n))).astype(np.float64))
    return evaluate(train, test, A=A, B=B, options=options)


def main() -> None:
    """The child: import the engine, then read ``(options, dtype)`` pickled on stdin and
    compile (nothing on stdin: exit). The app starts it before its own imports and config
    (:func:`recoeval_tracking.app.startup.prestart_warm_up`), so these imports run meanwhile
    and the compile begins as soon as the job sends its options."""
    import scipy.sparse  # noqa: F401

    from ..engine import compiling, driver, kernels  # noqa: F401
    from .evaluate import evaluate  # noqa: F401

    compiling.when_callees_done(partial(_tell_job, sys.stdout.buffer))
    payload = sys.stdin.buffer.read()
    if payload:
        compile_for(*pickle.loads(payload))


if __name__ == "__main__":
    main()
    from ..engine.compiling import exit_now

    exit_now(0)  # the job waits for this process's end: no teardown of numba and LLVM
