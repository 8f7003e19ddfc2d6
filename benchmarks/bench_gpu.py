"""Benchmark of the ``cuda`` engine backend against the GEMM + train mask + top-K floor, in one
run on one GPU.

Prints the GPU (name, memory, driver and runtime versions) and the host BLAS, then for each size
(users x items x factors), all measured in the same run:

* the floor: blocked cuBLAS GEMM into one reused buffer, then the train items set to -inf, then a
  top-K selection of every row (``torch.topk`` when PyTorch is installed, else CuPy's
  ``argpartition``), with the backend's block size and dtype: the least any GPU evaluation of
  top-K metrics does. The GEMM alone and the GEMM + mask are printed too;
* the backend (``backend="cuda"``) with recometrics' ten metrics, the factors given three ways:
  numpy arrays (copied to the device in the call), CuPy arrays (``A=``, ``B=``: read in place) and
  a scorer returning CuPy rows; then every metric of the registry (``metrics="all"``) once;
* each backend time's ratio to the floor, and the device memory each run needed at its peak
  (the high-water mark of CuPy's memory pool, emptied before the run: the factors, the block of
  scores and the per-block arrays), beside the device-wide peak seen by sampling the free
  memory every 2 ms;
* for the sizes in ``--cpu-sizes``, the same job with ``backend="cpu"``.

Usage (on a machine with an NVIDIA GPU, in a fresh venv with this project's pinned numpy:
``pip install -e ".[cuda]"``, optionally PyTorch for the floor's top-K)::

    env -u OPENBLAS_CORETYPE python benchmarks/bench_gpu.py
    python benchmarks/bench_gpu.py --sizes 138000x27000x128 --cpu-sizes 138000x27000x128

Without a GPU or CUDA library it stops at once with what is missing and the extra to install.
Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) it runs tiny sizes with numpy in place
of CuPy: a check of the script, whose timings mean nothing.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np

import recoeval_tracking as rt
from recoeval_tracking.engine import cuda_driver
from recoeval_tracking.scores import CallableScores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import make_data  # noqa: E402

#: recometrics' ten metrics (the issue's target set).
TEN = ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr", "roc_auc", "pr_auc"]
SIM_SIZES = ["300x400x8"]


def _xp():
    """CuPy on a GPU; numpy under the simulator (script check only)."""
    if cuda_driver.simulated():
        return np
    import cupy

    return cupy


def _sync(xp) -> None:
    if xp is not np:
        xp.cuda.Device().synchronize()


def _topk(xp, S, k: int):
    """torch.topk on the same memory when PyTorch is installed, else argpartition."""
    if xp is not np:
        try:
            import torch

            return torch.topk(torch.from_dlpack(S), k, dim=1).indices
        except ImportError:
            pass
    return xp.argpartition(S, S.shape[1] - k, axis=1)[:, -k:]


def floor_seconds(xp, A, B, train, k: int, bs: int) -> tuple[float, float, float]:
    """Seconds of the blocked GEMM; GEMM + train mask; GEMM + mask + top-K of every row."""
    Ad, Bd = xp.asarray(A), xp.asarray(B)
    idx = xp.asarray(train.indices)
    rows = xp.asarray(np.repeat(np.arange(A.shape[0]), np.diff(train.indptr)))
    ptr = train.indptr
    buf = xp.empty((bs, B.shape[0]), dtype=A.dtype)
    out = []
    for stage in range(3):
        _sync(xp)
        t = time.perf_counter()
        for s in range(0, A.shape[0], bs):
            e = min(s + bs, A.shape[0])
            S = buf[: e - s]
            xp.matmul(Ad[s:e], Bd.T, out=S)
            if stage >= 1:
                a, b = int(ptr[s]), int(ptr[e])
                S[rows[a:b] - s, idx[a:b]] = -np.inf
            if stage == 2:
                _topk(xp, S, k)
        _sync(xp)
        out.append(time.perf_counter() - t)
    return out[0], out[1], out[2]


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


class DevicePeak:
    """The device memory a call needs at its peak: CuPy's pool emptied before, its high-water
    mark after (the pool keeps every block until emptied), and the device-wide peak from the
    free memory sampled every 2 ms (allocations outside the pool included; a shorter peak may
    be missed)."""

    def __init__(self, xp) -> None:
        self.xp = xp

    def run(self, fn) -> tuple[float, float]:
        xp = self.xp
        if xp is np:
            fn()
            return float("nan"), float("nan")
        pool = xp.get_default_memory_pool()
        _sync(xp)
        pool.free_all_blocks()
        base_free = xp.cuda.runtime.memGetInfo()[0]
        low = [base_free]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                low[0] = min(low[0], xp.cuda.runtime.memGetInfo()[0])
                time.sleep(0.002)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        try:
            fn()
            _sync(xp)
        finally:
            done.set()
            watcher.join()
        return pool.total_bytes() / 2**30, (base_free - low[0]) / 2**30


def describe_machine(xp) -> None:
    import numba
    from threadpoolctl import threadpool_info

    blas = [
        f"{i.get('internal_api')} {i.get('architecture', '?')} x{i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    print(f"numpy {np.__version__}, numba {numba.__version__}, host BLAS: {', '.join(blas)}")
    if xp is np:
        print("SIMULATED (NUMBA_ENABLE_CUDASIM=1): numpy in place of CuPy, timings meaningless")
        return
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(
        f"GPU: {name}, {props['totalGlobalMem'] / 2**30:.1f} GiB, compute capability "
        f"{props['major']}.{props['minor']}; CUDA driver {cupy.cuda.runtime.driverGetVersion()}"
        f", runtime {cupy.cuda.runtime.runtimeGetVersion()}; CuPy {cupy.__version__}"
    )


def run_size(xp, size: str, args, on_cpu: bool) -> None:
    m, n, p = (int(x) for x in size.split("x"))
    t = time.perf_counter()
    tr, te, A, B = make_data(m, n, p, dtype=np.float32)
    print(
        f"\n== {m:,} users x {n:,} items x {p} factors, float32: train nnz {tr.nnz:,}, test "
        f"nnz {te.nnz:,} (made in {time.perf_counter() - t:.1f} s)"
    )
    bs = args.block_rows or cuda_driver.default_block_rows(n, 4, m)
    floors = [floor_seconds(xp, A, B, tr, args.k, bs) for _ in range(args.repeat)]
    gemm, mask, floor = (min(f[i] for f in floors) for i in range(3))
    for label, sec in (
        (f"GEMM alone ({bs:,} users a block)", gemm),
        ("GEMM + train mask", mask),
        (f"floor: GEMM + train mask + top-{args.k}", floor),
    ):
        print(f"  {label:41} {sec:8.3f} s")
    common = dict(k=args.k, block_rows=bs, ties="noise")
    Ad, Bd = xp.asarray(A), xp.asarray(B)
    scorer = CallableScores(lambda users: Ad[xp.asarray(users)] @ Bd.T, n, dtype=np.float32)
    runs = [
        ("10 metrics, numpy factors", dict(A=A, B=B, metrics=TEN), args.repeat),
        ("10 metrics, CuPy factors", dict(A=Ad, B=Bd, metrics=TEN), args.repeat),
        ("10 metrics, CuPy scorer", dict(scores=scorer, metrics=TEN), args.repeat),
        ("all metrics, CuPy factors", dict(A=Ad, B=Bd, metrics="all"), 1),
    ]
    peak = DevicePeak(xp)
    seconds = None
    for label, kw, repeat in runs:
        sec = best_of(lambda: rt.evaluate(tr, te, backend="cuda", **common, **kw), repeat)
        pool, device = peak.run(lambda: rt.evaluate(tr, te, backend="cuda", **common, **kw))
        memory = (
            "n/a (simulated)"
            if xp is np
            else f"{pool:6.2f} GiB (pool), {device:6.2f} GiB (device-wide)"
        )
        print(
            f"  backend=cuda, {label:27} {sec:8.3f} s  ratio to floor {sec / floor:5.2f}x  "
            f"peak device memory {memory}"
        )
        seconds = sec if seconds is None else seconds
    if on_cpu:
        cpu = best_of(
            lambda: rt.evaluate(
                tr, te, A=A, B=B, metrics=TEN, k=args.k, ties="noise", nthreads=args.threads
            ),
            1,
        )
        print(
            f"  backend=cpu, 10 metrics, numpy factors, {args.threads} threads "
            f"{cpu:8.3f} s  (cpu / cuda with numpy factors {cpu / seconds:5.1f}x)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes",
        nargs="*",
        default=None,
        help="users x items x factors (default 138000x27000x128 1000000x100000x128)",
    )
    ap.add_argument(
        "--cpu-sizes",
        nargs="*",
        default=["138000x27000x128"],
        help="sizes also run with backend='cpu' (none: give the flag alone)",
    )
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--block-rows", type=int, default=None)
    ap.add_argument("--threads", type=int, default=-1, help="host threads (CPU backend, fill)")
    args = ap.parse_args()
    reason = cuda_driver.unavailable_reason()
    if reason is not None:
        sys.exit(f"bench_gpu: nothing measured. {reason}")
    xp = _xp()
    if args.sizes is None:
        args.sizes = SIM_SIZES if xp is np else ["138000x27000x128", "1000000x100000x128"]
    describe_machine(xp)
    print(
        f"backend=cuda (blocks of at most {cuda_driver.BLOCK_BYTES / 2**30:.0f} GiB of scores "
        f"or a quarter of the free device memory), k={args.k}, ties=noise, float32"
    )
    tr, te, A, B = make_data(300, 400, 8, dtype=np.float32)
    for backend in ("cuda", "cpu"):  # compile outside the timings
        rt.evaluate(tr, te, A=A, B=B, metrics="all", k=args.k, backend=backend, block_rows=100)
    for size in args.sizes:
        run_size(xp, size, args, size in args.cpu_sizes)


if __name__ == "__main__":
    main()
