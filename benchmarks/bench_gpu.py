"""Benchmark of the ``cuda`` engine backend against the GEMM + top-K floor on the same GPU.

Prints, for each size (users x items x factors), in one run: the floor (blocked cuBLAS GEMM, the
train mask and a top-K selection per block: the least any GPU evaluation does, with the same
block size and dtype as the backend), the backend with recometrics' ten metrics (factors handed
over as numpy arrays, copied to the device in the call; and as CuPy arrays scored on the device
by a scorer), the ratios to the floor, the device memory CuPy's pool holds afterwards, and, for
the sizes in ``--cpu-sizes``, the same job with ``backend="cpu"``.

Usage (on a machine with an NVIDIA GPU, ``pip install -e ".[cuda]"`` in a fresh venv)::

    env -u OPENBLAS_CORETYPE python benchmarks/bench_gpu.py
    python benchmarks/bench_gpu.py --sizes 138000x27000x128 --cpu-sizes

Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, no GPU, no CuPy) it runs on tiny sizes
with numpy in place of CuPy: a check of the script, whose timings mean nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import recoeval_tracking as rt
from recoeval_tracking.engine import cuda_driver
from recoeval_tracking.scores import CallableScores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import ALL, make_data  # noqa: E402


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
    """torch.topk on the same memory when PyTorch is installed (the fastest we know), else the
    array library's argpartition."""
    if xp is not np:
        try:
            import torch

            return torch.topk(torch.from_dlpack(S), k, dim=1).indices
        except ImportError:
            pass
    return xp.argpartition(S, S.shape[1] - k, axis=1)[:, -k:]


def floor_seconds(xp, A, B, train, k: int, bs: int) -> float:
    """Blocked GEMM into one buffer, the train items set to -inf, top-K of every row."""
    Ad, Bd = xp.asarray(A), xp.asarray(B)
    idx = xp.asarray(train.indices)
    buf = xp.empty((bs, B.shape[0]), dtype=A.dtype)
    lengths = np.diff(train.indptr)
    _sync(xp)
    t = time.perf_counter()
    for s in range(0, A.shape[0], bs):
        e = min(s + bs, A.shape[0])
        S = buf[: e - s]
        xp.matmul(Ad[s:e], Bd.T, out=S)
        rows = xp.asarray(np.repeat(np.arange(e - s), lengths[s:e]))
        S[rows, idx[int(train.indptr[s]):int(train.indptr[e])]] = -np.inf
        _topk(xp, S, k)
    _sync(xp)
    return time.perf_counter() - t


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def describe_machine(xp) -> None:
    import numba
    from threadpoolctl import threadpool_info

    blas = [f"{i.get('internal_api')} {i.get('architecture', '?')} x{i.get('num_threads')}"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    print(f"numpy {np.__version__}, numba {numba.__version__}, host BLAS: {', '.join(blas)}")
    if xp is np:
        print("SIMULATED (NUMBA_ENABLE_CUDASIM=1): numpy in place of CuPy, timings meaningless")
        return
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU: {name}, {props['totalGlobalMem'] / 2**30:.0f} GiB; CuPy {cupy.__version__}")


def run_size(xp, size: str, args, on_cpu: bool) -> None:
    m, n, p = (int(x) for x in size.split("x"))
    t = time.perf_counter()
    tr, te, A, B = make_data(m, n, p, dtype=np.float32)
    print(f"\n== {m:,} users x {n:,} items x {p} factors: train nnz {tr.nnz:,}, test nnz "
          f"{te.nnz:,} (made in {time.perf_counter() - t:.1f} s)")
    bs = args.block_rows or cuda_driver.default_block_rows(n, 4, m)
    floor = min(floor_seconds(xp, A, B, tr, args.k, bs) for _ in range(args.repeat))
    print(f"  floor (GEMM + train mask + top-{args.k}, {bs:,} users a block): {floor:8.3f} s")
    common = dict(metrics=ALL, k=args.k, block_rows=bs, ties="noise")
    sec = best_of(lambda: rt.evaluate(tr, te, A=A, B=B, backend="cuda", **common), args.repeat)
    print(f"  backend=cuda, 10 metrics, numpy factors    {sec:8.3f} s  ratio {sec / floor:5.2f}x")
    Ad, Bd = xp.asarray(A), xp.asarray(B)
    src = CallableScores(lambda users: Ad[xp.asarray(users)] @ Bd.T, n, dtype=np.float32)
    sec = best_of(lambda: rt.evaluate(tr, te, scores=src, backend="cuda", **common), args.repeat)
    print(f"  backend=cuda, 10 metrics, device scorer    {sec:8.3f} s  ratio {sec / floor:5.2f}x")
    if xp is not np:
        print(f"  device memory held by CuPy's pool: "
              f"{xp.get_default_memory_pool().total_bytes() / 2**30:.2f} GiB")
    if on_cpu:
        cpu = best_of(lambda: rt.evaluate(tr, te, A=A, B=B, metrics=ALL, k=args.k, ties="noise",
                                          nthreads=args.threads), 1)
        print(f"  backend=cpu, 10 metrics, {args.threads} threads   {cpu:8.3f} s  "
              f"(cpu / cuda {cpu / sec:5.1f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*",
                    default=["138000x27000x128", "1000000x100000x128"])
    ap.add_argument("--cpu-sizes", nargs="*", default=["138000x27000x128"],
                    help="sizes also run with backend='cpu' (none: give the flag alone)")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--block-rows", type=int, default=None)
    ap.add_argument("--threads", type=int, default=-1, help="host threads (CPU backend, fill)")
    args = ap.parse_args()
    xp = _xp()
    describe_machine(xp)
    reason = cuda_driver.unavailable_reason()
    if reason is not None:
        sys.exit(reason)
    print(f"backend=cuda (blocks of at most {cuda_driver.BLOCK_BYTES / 2**30:.0f} GiB of scores "
          f"by default), k={args.k}, float32, metrics: {', '.join(ALL)}")
    tr, te, A, B = make_data(300, 400, 8, dtype=np.float32)
    for backend in ("cuda", "cpu"):  # compile outside the timings
        rt.evaluate(tr, te, A=A, B=B, metrics=ALL, k=args.k, backend=backend, block_rows=100)
    for size in args.sizes:
        run_size(xp, size, args, size in args.cpu_sizes)


if __name__ == "__main__":
    main()
