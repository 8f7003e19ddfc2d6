"""The GPU kernel of the ``cuda`` backend compiles for a real GPU, on a machine without one.

numba-cuda compiles :func:`~recoeval_tracking.engine.cuda_kernels.user_pass_kernel`, and the CPU
engine's functions it calls as device functions, to PTX for compute capability 8.0 (A100) and
9.0 (H100), float32 and float64 scores, every record type the driver passes: so no function on
the GPU path allocates an array or uses what CUDA code cannot. Needs numba-cuda and NVVM (the
``cuda`` extra, or ``nvidia-cuda-nvcc-cu12``); skipped without them, and under the simulator.
"""

from __future__ import annotations

import os
import types

import numba
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="the simulator compiles nothing"
)


def _compiler():
    """numba-cuda's ``compile_ptx``, or skip (the built-in target of numba <= 0.6x is
    deprecated and cannot compile ``min`` of two ints)."""
    pytest.importorskip("numba_cuda", reason="numba-cuda (the cuda extra) is not installed")
    from numba import cuda
    from numba.cuda.cuda_paths import get_cuda_paths

    nvvm = get_cuda_paths().get("nvvm")
    if not nvvm or not getattr(nvvm, "info", None):
        pytest.skip("NVVM (nvidia-cuda-nvcc-cu12) was not found")
    return cuda


def _records(dtype, want_topk: bool):
    from recoeval_tracking.engine.cuda_kernels import Block
    from recoeval_tracking.engine.records import Csr, Plan

    i64 = np.zeros(3, dtype=np.int64)
    f64 = np.zeros(3)
    k = 4 if want_topk else 0
    blk = Block(
        S=np.zeros((2, 5), dtype=dtype),
        rows=i64,
        off=i64,
        pos=np.zeros(3, dtype),
        gt=i64,
        eq=i64,
        rk=i64,
        rv=f64,
        reason=i64,
        topk=np.zeros((2, k), np.int64),
        n_tied=i64,
        hs=np.zeros((2, k), dtype),
        hi=np.zeros((2, k), np.int64),
        order=np.zeros((2, k), np.int64),
        sq=np.zeros(3, dtype),
        so=i64,
        sg=i64,
        hist=i64,
        eqh=i64,
    )
    csr = Csr(i64, i64, f64)
    plan = Plan(
        n_items=5,
        K=4,
        cumulative=True,
        slots=i64,
        wslots=i64,
        full_ranks=False,
        tie_mode=0,
        seed=0,
        want_topk=want_topk,
        user_base=0,
    )
    return tuple(numba.typeof(x) for x in (blk, csr, csr, plan))


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_user_pass_kernel_compiles_to_ptx(monkeypatch, cc, dtype) -> None:
    cuda = _compiler()
    # the device functions compile for the "current device": stand one in (no GPU here), and
    # note which functions compile as device functions
    import numba.cuda.dispatcher as dispatcher

    from recoeval_tracking.engine.cuda_kernels import user_pass_kernel

    compiled = []
    compile_cuda = dispatcher.compile_cuda

    def spy(pyfunc, *args, **kwargs):
        compiled.append(pyfunc.__name__)
        return compile_cuda(pyfunc, *args, **kwargs)

    monkeypatch.setattr(
        dispatcher, "get_current_device", lambda: types.SimpleNamespace(compute_capability=cc)
    )
    monkeypatch.setattr(dispatcher, "compile_cuda", spy)
    ptx, _ = cuda.compile_ptx(user_pass_kernel.py_func, _records(dtype, True), cc=cc)
    assert ".entry" in ptx and f".target sm_{cc[0]}{cc[1]}" in ptx
    # the CPU engine's own functions, compiled as device functions (the first compilation of a
    # dtype, cc 8.0, compiles them; cc 9.0 reuses them)
    if cc == (8, 0):
        assert {
            "user_pass",
            "_counts_by_scan",
            "counts_by_search_into",
            "topk_into",
            "_best_first",
        } <= set(compiled)
