"""Compile a block kernel on two cores: half of its callees in a helper process, half here.

numba compiles one function at a time in a process (it holds a lock while it compiles), and on
an empty cache a block kernel of :mod:`.kernels` compiles some twenty functions first, its
callees, each on its own and each written to numba's on-disk cache: about 8 s on one core of a
2-core AMD EPYC for the default metrics. :func:`compile_kernel` splits that work: a helper process
(``python -m recoeval_tracking.engine.compiling KIND DTYPE``) compiles the callees that come last
in the kernel's call graph (the metric writers of :mod:`.fill`, the top-K list) while this process
compiles the first ones (the counts and ranks of :mod:`.ranks`), waits for the helper, then
compiles the kernel itself, which loads the helper's callees from the cache instead of compiling
them. The callees are compiled with the exact types the kernel calls them with
(:func:`callees`), so each is one cache entry that both processes share.

Nothing depends on the helper: when it cannot start, fails or is slow (:data:`WAIT_SECONDS`),
this process compiles what is missing itself, as numba does without it. It is not started when
the kernel is compiled or cached already, with one core, or when ``RECOEVAL_WARM_UP=0``.

This module imports numpy and numba only (and the standard library).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from typing import Any

import numba
import numpy as np
from numba import types

from . import fill, kernels, ranks, topk
from .codes import AtK, Whole
from .records import Csr, Outputs, Plan

__all__ = [
    "callees",
    "compile_all",
    "compile_kernel",
    "exit_now",
    "kernel_signature",
    "is_ready",
    "main",
    "when_callees_done",
]

#: The longest this process waits for the helper before compiling the rest itself.
WAIT_SECONDS = 60.0

#: Each block kernel by name (the helper's first argument).
KERNELS = {
    "topk": kernels.block_topk,
    "topk_list": kernels.block_topk_list,
    "exact": kernels.block_exact,
    "exact_list": kernels.block_exact_list,
    "ranked": kernels.block_ranked,
    "ranked_list": kernels.block_ranked_list,
    "average": kernels.block_average,
    "average_list": kernels.block_average_list,
}
_NAMES = {id(k): name for name, k in KERNELS.items()}
_lock = threading.Lock()
#: Called (no argument) once a kernel's compile leaves one core free (:func:`when_callees_done`):
#: the warm-up child tells the job then.
_callees_done: list[Any] = []


def _sample_records() -> tuple[Csr, Csr, Plan, Outputs]:
    """Tiny ``(train, test, plan, outs)`` of the types the driver builds (see
    ``EngineInput.records``)."""
    i64, f64 = np.zeros(1, np.int64), np.zeros(1)
    csr = Csr(i64, i64, f64)
    plan = Plan(
        n_items=1,
        K=1,
        cumulative=False,
        slots=np.zeros(len(AtK), np.int64),
        wslots=np.zeros(len(Whole), np.int64),
        full_ranks=False,
        tie_mode=0,
        seed=0,
        want_topk=False,
        user_base=0,
        inf_nan=False,
        finite=False,
    )
    outs = Outputs(
        np.zeros((1, 1, 1)), np.zeros((1, 1)), np.zeros(1, np.int8), np.zeros((1, 1), np.int64), i64
    )
    return csr, csr, plan, outs


def kernel_signature(dtype: Any, records: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
    """The numba types a block kernel is called with: a C-contiguous 2-d block of scores of
    ``dtype``, int64 user rows and ``records`` (``(train, test, plan, outs)``; None: the
    driver's kinds)."""
    S = types.Array(numba.from_dtype(np.dtype(dtype)), 2, "C")
    rows = types.Array(types.int64, 1, "C")
    return (S, rows, *(numba.typeof(r) for r in (records or _sample_records())))


def callees(name: str, dtype: Any) -> tuple[list[tuple[Any, tuple]], list[tuple[Any, tuple]]]:
    """The callees of the block kernel ``name`` with the types it calls them with, in two
    lists of ``(dispatcher, signature)`` of about equal compile time: the ones this process
    compiles (first in the call graph) and the ones the helper compiles."""
    s = types.Array(numba.from_dtype(np.dtype(dtype)), 1, "C")
    i64, f64 = (types.Array(t, 1, "C") for t in (types.int64, types.float64))
    f64_2, f64_3 = types.Array(types.float64, 2, "C"), types.Array(types.float64, 3, "C")
    n = types.int64
    csr, _, plan, _ = (numba.typeof(x) for x in _sample_records())
    Callee = tuple[Any, tuple[Any, ...]]
    read: Callee = (kernels._read_positives, (s, n, csr, s, f64))
    scan: Callee = (ranks._counts_by_scan, (s, s, n, i64, i64))
    beats: Callee = (ranks._beats, (n, n, n, n, n))
    by_rank: Callee = (ranks.sort_by_rank, (i64, f64))
    metrics: Callee = (fill.fill_metrics, (i64, f64, n, plan, f64_3, n))
    topk_items: Callee = (topk.topk_items, (s, n, n, n, i64, n, n, n, i64))
    if name in ("topk", "topk_list"):
        # stable_order and _put_topk first: the helper's fill_metrics loads them from the cache
        # (each compiled once, in this process); the helper compiles the ideal gains
        b1, f = types.boolean, types.float64
        put: Callee = (fill._put_topk, (f64_3, i64, n, n, n, n, b1, b1, f, f, f64, f64, f, f, f))
        here = [(ranks.stable_order, (f64,)), put, read, scan, beats, by_rank]
        return here + ([topk_items] if name == "topk_list" else []), [metrics]
    here = [read, (ranks._counts_by_search, (s, s, i64, i64)), scan, beats]
    there: list[Callee]
    if name.startswith("average"):
        there = [(fill.fill_average, (s, f64, i64, i64, n, plan, f64_3, f64_2, n))]
        if name == "average_list":
            here.append(topk_items)
    else:
        policy: Callee = (ranks._policy_ranks, (s, f64, i64, i64, n, i64, f64))
        whole: Callee = (fill.fill_whole, (i64, f64, n, i64, f64_2, n, i64, i64))
        if name == "exact_list":
            here += [by_rank, topk_items]
            there = [metrics, whole]
        elif name == "exact":
            here += [by_rank, whole]
            there = [metrics]
        elif name == "ranked_list":
            here += [policy, by_rank, whole]
            there = [metrics, topk_items]
        else:
            here += [by_rank, whole]
            there = [metrics, policy]
    return here, there


def is_ready(kernel: Any, sig: tuple[Any, ...]) -> bool:
    """Whether ``kernel`` is compiled for ``sig`` in this process or in numba's on-disk cache
    (a first call then loads it in a fraction of a second). True when the cache cannot be read
    (numba's layout changed): then nothing is started."""
    if tuple(sig) in kernel.overloads:
        return True
    try:
        cache = kernel._cache
        key = cache._index_key(sig, kernel.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001  (numba internals: best effort)
        return True


def _cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity`` is Linux-only)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def _start_helper(name: str, dtype: Any) -> subprocess.Popen | None:
    if os.environ.get("RECOEVAL_WARM_UP") == "0" or _cores() < 2:
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-m", __name__, name, str(np.dtype(dtype))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def compile_kernel(kernel: Any, dtype: Any, records: tuple[Any, ...] | None = None) -> None:
    """Compile the block ``kernel`` for scores of ``dtype`` and ``records`` (``(train, test,
    plan, outs)``) unless it is ready (:func:`is_ready`), its callees split between this process
    and a helper (see the module's docstring). Results do not depend on it: it only compiles
    earlier, and faster, what the kernel's first call would compile."""
    name = _NAMES.get(id(kernel))
    if name is None or getattr(numba.config, "DISABLE_JIT", False):
        return
    sig = kernel_signature(dtype, records)
    with _lock:
        if is_ready(kernel, sig):
            return
        helper = _start_helper(name, dtype)
        if helper is None:
            return  # the first call compiles everything here, as without this module
        here, _ = callees(name, dtype)
        free = _OneCoreFree()  # the hooks, once: when the helper ends or this half is compiled
        threading.Thread(target=free.after, args=(helper.wait,), daemon=True).start()
        try:
            for dispatcher, args in here:
                dispatcher.compile(args)
            free.now()
            helper.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            pass  # the kernel compiles what the helper has not written
        finally:
            with contextlib.suppress(OSError):
                helper.kill()
                helper.wait(timeout=10)
        kernel.compile(sig)


class _OneCoreFree:
    """Calls the :func:`when_callees_done` hooks once, as soon as one of the two compiling
    processes is done (this one's callees or the helper), whichever comes first: one core is
    free from then on, for the rest of the callees and the kernel's own compile hold one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False

    def now(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        for call in _callees_done:
            call()

    def after(self, wait: Any) -> None:
        with contextlib.suppress(Exception):
            wait()
        self.now()


def when_callees_done(call: Any) -> None:
    """Call ``call()`` once per :func:`compile_kernel` that compiles a kernel, as soon as one
    core is free: when this process has compiled its half of the kernel's callees or the helper
    its half, whichever is first (the rest, and the kernel's own compile, hold one core)."""
    _callees_done.append(call)


def compile_all(dtypes: tuple[str, ...] = ("float32", "float64")) -> list[str]:
    """Compile every block kernel of :data:`KERNELS` for scores of each of ``dtypes`` into
    numba's on-disk cache, in this process, skipping those compiled or cached already (for an
    image or a CI job built once and run many times), and each callee of :func:`callees` whose
    cache entry is missing. Returns the ``"KIND DTYPE"`` of the kernels compiled."""
    done = []
    for dtype in dtypes:
        sig = kernel_signature(dtype)  # every block kernel takes the same types
        for name, kernel in KERNELS.items():
            if not is_ready(kernel, sig):
                kernel.compile(sig)
                done.append(f"{name} {dtype}")
            # a callee's cache entry can be lost when another process wrote the same
            # function's index at once (an overload of the other dtype): compiled again here
            here, there = callees(name, dtype)
            for dispatcher, callee_sig in here + there:
                if not is_ready(dispatcher, callee_sig):
                    dispatcher.compile(callee_sig)
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m recoeval_tracking.engine.compiling KIND DTYPE`` (the helper) compiles the
    callees of :func:`callees` ``(KIND, DTYPE)[1]`` into numba's on-disk cache;
    ``... compiling all [DTYPE ...]`` compiles every block kernel (:func:`compile_all`)."""
    args = sys.argv[1:] if argv is None else argv
    dtypes = ("float32", "float64")
    if args[:1] == ["all"] and all(a in dtypes for a in args[1:]):
        compile_all(tuple(args[1:]) or dtypes)
        return 0
    if len(args) != 2 or args[0] not in KERNELS or args[1] not in dtypes:
        print(
            "usage: python -m recoeval_tracking.engine.compiling KIND DTYPE (KIND one of "
            f"{', '.join(KERNELS)}; DTYPE float32 or float64), or all [DTYPE ...]; got "
            f"{' '.join(args)!r}",
            file=sys.stderr,
        )
        return 2
    name, dtype = args
    for dispatcher, sig in callees(name, dtype)[1]:
        dispatcher.compile(sig)
    return 0


def exit_now(code: int) -> None:
    """End this process at once, its output flushed: what a compiling process wrote (numba's
    cache entries) is on disk already, and the interpreter's own teardown, with numba and LLVM
    loaded, took 0.4-0.5 s that the process waiting for it would wait out."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
