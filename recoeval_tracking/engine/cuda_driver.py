"""The ``cuda`` backend: score bounded blocks of users on an NVIDIA GPU and evaluate them there.

For each block of users the driver

1. scores the block on the device into one reused buffer: a cuBLAS GEMM through CuPy for user
   and item factors (numpy factors copied to the device once; factors given on the GPU, a
   :class:`~recoeval_tracking.metrics.device_inputs.DeviceFactorScores`, read in place), the
   model's own ``scorer`` when it returns GPU arrays (a CuPy array, a PyTorch CUDA tensor or any
   ``__cuda_array_interface__`` / DLPack array, taken without a host copy), or the host scores
   of any other source copied up;
2. runs one CUDA thread per user (:mod:`.cuda_kernels`): train mask, NaN and tie checks, the
   counts of every positive, the top-K list, the exact ranks under a total tie order;
3. copies the block's per-user and per-positive results back once and fills every metric on the
   host with the CPU engine's writers (:mod:`.cuda_fill`).

Device memory is the scores of one block (``block_rows x n_items``, at most :data:`BLOCK_BYTES`
by default) plus per-block arrays of its users and their positives, and the train and test matrices
(and factors) copied once. Ranked top-K lists carry no scores: :func:`run_ranked` is the CPU
driver's.

Needs an NVIDIA GPU, numba-cuda and CuPy (``pip install "recoeval_tracking[cuda]"``); without
them :func:`unavailable_reason` says what is missing and the backend raises
:class:`BackendUnavailable`. Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the
kernels run simulated on host arrays and the scores come from the host: the tests' path. Imports
numpy and numba at import time; numba.cuda and CuPy only when the backend runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import cuda_arrays, driver
from .cuda_fill import fill_block
from .driver import EngineInput
from .records import Csr, Outputs, Plan

__all__ = [
    "EXTRA",
    "BLOCK_BYTES",
    "BackendUnavailable",
    "simulated",
    "unavailable_reason",
    "thread_limits",
    "run_scores",
    "run_ranked",
]

#: How to install what the backend needs.
EXTRA = 'pip install "recoeval_tracking[cuda]"'
#: Most bytes of scores in one block on the device: a quarter of the free device memory, at
#: most this (about 10,000 users a block at 100,000 float32 items, 40,000 at 27,000), so that
#: one thread per user keeps every multiprocessor busy.
BLOCK_BYTES = 4 << 30

#: The host threads that fill the metrics, and BLAS for host-scored sources: as on the CPU.
thread_limits = driver.thread_limits
#: Ranked top-K lists carry no scores: ``O(K)`` per user, on the host as with ``backend="cpu"``.
run_ranked = driver.run_ranked


class BackendUnavailable(RuntimeError):
    """The ``cuda`` backend cannot run on this machine (no GPU, driver or CUDA library)."""


def simulated() -> bool:
    """Whether numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1`` before numba loads)."""
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


def unavailable_reason() -> str | None:
    """None when the backend can run here, else what is missing and how to install it."""
    if simulated():
        return None
    try:
        from numba import cuda

        found = bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken CUDA install reads as no GPU
        found = False
    missing = None
    if not found:
        missing = "no CUDA GPU was found (or its driver, or numba-cuda, is missing)"
    else:
        try:
            import cupy  # noqa: F401
        except ImportError:
            missing = "CuPy is not installed"
    if missing is None:
        return None
    return (
        f"The 'cuda' engine backend cannot run here: {missing}. It needs an NVIDIA GPU with "
        f"its driver, numba-cuda and CuPy: {EXTRA}."
    )


class _Device:
    """Where the block arrays live: CuPy arrays on the GPU, numpy arrays under the simulator."""

    def __init__(self) -> None:
        reason = unavailable_reason()
        if reason is not None:
            raise BackendUnavailable(reason)
        from numba import cuda

        self.cuda = cuda
        self.sim = simulated()
        if self.sim:
            self.xp = np
        else:
            import cupy

            self.xp = cupy

    def put(self, x: np.ndarray) -> Any:
        """A device copy of host array ``x`` (a copy under the simulator too)."""
        return np.array(x) if self.sim else self.xp.asarray(x)

    def kernel_view(self, x: Any) -> Any:
        """``x`` as a kernel argument: a numba view of the CuPy array, without a copy."""
        return x if self.sim else self.cuda.as_cuda_array(x)

    def get(self, x: Any) -> np.ndarray:
        """A host copy of device array ``x`` (``x`` itself under the simulator)."""
        return x if self.sim else self.xp.asnumpy(x)

    def records(self, train: Csr, test: Csr, plan: Plan) -> tuple[Csr, Csr, Plan]:
        """The kernel's records with their arrays copied to the device once."""

        def csr(c: Csr) -> Csr:
            # an empty array (no train entry, no values) gets one unread entry: no zero-size
            # device arrays
            parts = (a if a.shape[0] else np.zeros(1, dtype=a.dtype) for a in c)
            return Csr(*(self.kernel_view(self.put(a)) for a in parts))

        dplan = plan._replace(
            slots=self.kernel_view(self.put(plan.slots)),
            wslots=self.kernel_view(self.put(plan.wslots)),
        )
        return csr(train), csr(test), dplan


def default_block_rows(n_items: int, itemsize: int, n_rows: int) -> int:
    """Users per block: :data:`BLOCK_BYTES` of scores or a quarter of the free device memory,
    whichever is less, and at most every user to evaluate."""
    budget = BLOCK_BYTES
    if not simulated():
        import cupy

        budget = min(budget, cupy.cuda.runtime.memGetInfo()[0] // 4)
    return int(max(1, min(budget // max(1, n_items * itemsize), n_rows)))


def _device_scores(got: Any, xp: Any) -> Any:
    """A scorer's result as a device array: GPU arrays viewed without a copy
    (:func:`~.cuda_arrays.device_view`), host arrays copied up."""
    if cuda_arrays.is_device_array(got):
        return cuda_arrays.device_view(got)
    if hasattr(got, "toarray"):
        got = got.toarray()
    return xp.asarray(np.asarray(got))


def _factors(src: Any, dtype: np.dtype, xp: Any) -> tuple[Any, Any, bool] | None:
    """``(A, B, ones)`` on the device for a factor source, else None: the device arrays of a
    source that holds them (``A_device``/``B_device``: factors given on a GPU, never copied),
    or host factors ``A`` and ``B`` copied to the device once (``ones``: item biases appended to
    ``B`` as its last column, a column of ones to each block of ``A``)."""
    if hasattr(src, "A_device") and hasattr(src, "B_device"):
        return src.A_device, src.B_device, bool(src._ones)
    if hasattr(src, "A") and hasattr(src, "B"):
        A = xp.asarray(src.A, dtype=dtype)
        B = xp.asarray(src.B, dtype=dtype)
        return A, B, bool(getattr(src, "_ones", B.shape[1] == A.shape[1] + 1))
    return None


def _scorer(
    block: Callable[..., np.ndarray], dtype: np.dtype, n_items: int, bs: int, dev: _Device
) -> Callable[[np.ndarray, Any], None]:
    """``score(users, out)``: write the block's scores to the device array ``out``.

    The score source is ``block``'s object: factors are multiplied on the device
    (:func:`_factors`, :func:`~.cuda_arrays.gemm_block`); a ``scorer`` is called and its result
    taken as it is on the device; anything else (a source that transforms scores on the host)
    is scored on the host and copied up. Under the simulator the device is host memory and the
    same code runs with numpy.
    """
    src = getattr(block, "__self__", None)
    xp = dev.xp
    factors = _factors(src, dtype, xp)
    if factors is not None:
        A, B, ones = factors

        def gemm(users: np.ndarray, out: Any) -> None:
            cuda_arrays.gemm_block(xp, A, B, ones, dev.put(users), out)

        return gemm
    if callable(getattr(src, "scorer", None)):

        def call(users: np.ndarray, out: Any) -> None:
            got = _device_scores(src.scorer(users), xp)
            if tuple(got.shape) != (len(users), n_items):
                raise ValueError(
                    "The 'scorer' passed to evaluate must return an array of shape "
                    f"(len(user_indices), n_items) = {(len(users), n_items)}. Got an array of "
                    f"shape {tuple(got.shape)} instead."
                )
            out[...] = got

        return call
    host = np.empty((bs, n_items), dtype=dtype)

    def on_host(users: np.ndarray, out: Any) -> None:
        S = np.ascontiguousarray(block(users, host[: users.shape[0]]), dtype=dtype)
        if dev.sim:
            out[...] = S
        else:
            out.set(S)

    return on_host


def _block(dev: _Device, S: Any, users: np.ndarray, off: np.ndarray, k: int) -> Any:
    """The device arrays of one block (:data:`~.cuda_kernels.Block`), outputs reset."""
    from .cuda_kernels import Block

    xp = dev.xp
    nb = users.shape[0]
    npos = int(off[-1])
    i64 = np.int64
    k = max(k, 1)  # without a top-K list: one unread column, no zero-size device arrays
    return Block(
        S=S,
        rows=dev.put(users),
        off=dev.put(off),
        pos=xp.empty(npos, dtype=S.dtype),
        gt=xp.empty(npos, dtype=i64),
        eq=xp.empty(npos, dtype=i64),
        rk=xp.empty(npos, dtype=i64),
        rv=xp.empty(npos, dtype=np.float64),
        reason=xp.zeros(nb, dtype=i64),
        topk=xp.full((nb, k), -1, dtype=i64),
        n_tied=xp.full(nb, -1, dtype=i64),
        hs=xp.empty((nb, k), dtype=S.dtype),
        hi=xp.empty((nb, k), dtype=i64),
        order=xp.empty((nb, k), dtype=i64),
        sq=xp.empty(npos, dtype=S.dtype),
        so=xp.empty(npos, dtype=i64),
        sg=xp.empty(npos, dtype=i64),
        hist=xp.empty(npos + nb, dtype=i64),
        eqh=xp.empty(npos + nb, dtype=i64),
    )


def _evaluate_block(
    dev: _Device,
    blk: Any,
    users: np.ndarray,
    off: np.ndarray,
    records: tuple[Csr, Csr, Plan],
    host: tuple[Csr, Csr, Plan],
    outs: Outputs,
) -> None:
    """Run the GPU pass over one block, copy its results back once, fill the metrics."""
    from .cuda_kernels import THREADS, user_pass_kernel

    nb = users.shape[0]
    view = type(blk)(*(dev.kernel_view(a) for a in blk))
    user_pass_kernel[(nb + THREADS - 1) // THREADS, THREADS](view, *records)
    pos, gt, eq, rk, reason = (dev.get(a) for a in (blk.pos, blk.gt, blk.eq, blk.rk, blk.reason))
    train, test, plan = host
    fill_block(users, off, pos, gt, eq, rk, reason, train, test, plan, outs)
    if plan.want_topk:
        ok = reason == 0
        outs.topk[users[ok]] = dev.get(blk.topk)[ok]
        outs.n_tied[users[ok]] = dev.get(blk.n_tied)[ok]


def run_scores(
    inp: EngineInput,
    block: Callable[[np.ndarray, np.ndarray | None], np.ndarray],
    dtype: np.dtype,
    rows: np.ndarray,
    reason: np.ndarray,
    *,
    block_rows: int | None = None,
    progress: Callable[[int], None] | None = None,
    thread_safe: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate ``rows`` one block of users at a time on the GPU; the CPU driver's
    :func:`~.driver.run_scores` contract (same arguments and outputs; ``thread_safe`` is not
    used: one host thread drives the device)."""
    dev = _Device()
    dtype = np.dtype(dtype)
    out, whole = inp.allocate()
    topk, n_tied = inp.allocate_lists()
    if rows.shape[0] == 0:
        return out, whole, topk, n_tied
    bs = block_rows or default_block_rows(inp.n_items, dtype.itemsize, rows.shape[0])
    host = inp.records()
    records = dev.records(*host)
    outs = Outputs(out, whole, reason, topk, n_tied)
    score = _scorer(block, dtype, inp.n_items, bs, dev)
    buf = dev.xp.empty((bs, inp.n_items), dtype=dtype)
    k = inp.K if inp.want_topk else 0
    for start in range(0, rows.shape[0], bs):
        users = np.ascontiguousarray(rows[start : start + bs], dtype=np.int64)
        off = np.zeros(users.shape[0] + 1, dtype=np.int64)
        np.cumsum(inp.te_ptr[users + 1] - inp.te_ptr[users], out=off[1:])
        S = buf[: users.shape[0]]
        score(users, S)
        _evaluate_block(dev, _block(dev, S, users, off, k), users, off, records, host, outs)
        if progress is not None:
            progress(users.shape[0])
    return out, whole, topk, n_tied
