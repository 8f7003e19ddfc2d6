"""Benchmark of distributed evaluation: the local engine against a Dask ``LocalCluster`` on the
same cores, in one run.

Prints, for one size (users x items x factors, float32 factors, power-law items, 80/20 split):
the local engine's time on ``--workers x --threads-per-worker`` threads, the same evaluation on a
``LocalCluster(n_workers=--workers, threads_per_worker=--threads-per-worker, processes=True)``
(one engine thread per task), the overhead ratio, the peak resident memory of each worker
process and of the local run, and the bytes that crossed the network (task inputs, the
scattered item side, the per-user results sent back). The per-user values of both runs are
checked bit for bit. Timings on a shared machine are noisy.

Usage (unset OPENBLAS_CORETYPE so BLAS picks its kernels for this CPU)::

    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py                   # 1M x 20k x 64
    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py --users 50000     # a quick check
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import PeakRSS, make_data  # noqa: E402 - the shared data generator

import recoeval_tracking as rt  # noqa: E402
from recoeval_tracking.distributed import evaluate_on_dask  # noqa: E402
from recoeval_tracking.options import EvalOptions  # noqa: E402


def _blas() -> str:
    from threadpoolctl import threadpool_info

    return "; ".join(f"{i.get('internal_api')} {i.get('architecture', '?')} "
                     f"({i.get('num_threads')} threads)" for i in threadpool_info()
                     if i.get("user_api") == "blas") or "no BLAS found"


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _csr_bytes(X) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


def _same(a, b) -> bool:
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if not (np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f"
                else np.array_equal(x, y)):
            return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--factors", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--shards", type=int, default=None, help="default: 2 per worker thread")
    ap.add_argument("--metrics", default="p,ap,ndcg")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    threads = args.workers * args.threads_per_worker
    metrics = args.metrics.split(",")
    print(f"size {args.users} x {args.items} x {args.factors}, metrics {metrics} @ {args.k}; "
          f"{threads} threads; cores here: {os.cpu_count()}")
    if "OPENBLAS_CORETYPE" in os.environ:
        print("warning: OPENBLAS_CORETYPE is set; run under env -u OPENBLAS_CORETYPE")
    print(f"BLAS: {_blas()}")
    t = time.perf_counter()
    train, test, A, B = make_data(args.users, args.items, args.factors)
    print(f"data: {train.nnz} train and {test.nnz} test entries ({time.perf_counter() - t:.1f} s)")
    opts = dict(metrics=metrics, k=args.k, nthreads=threads)
    rt.evaluate(train[:2000], test[:2000], A=A[:2000], B=B, **opts)  # compile / load the kernels
    with PeakRSS() as mem:
        t = time.perf_counter()
        local = rt.evaluate(train, test, A=A, B=B, **opts)
        t_local = time.perf_counter() - t
    print(f"local engine: {t_local:.2f} s, peak extra memory {mem.extra / 2**20:.0f} MiB")

    with LocalCluster(n_workers=args.workers, threads_per_worker=args.threads_per_worker,
                      processes=True, dashboard_address=":0", memory_limit=0) as cluster, \
            Client(cluster) as client:
        rt.evaluate(train[:2000], test[:2000], A=A[:2000], B=B, client=client, **opts)  # warm
        base = client.run(_rss)
        t = time.perf_counter()
        dist = evaluate_on_dask(client, train, test, EvalOptions(**opts), A=A, B=B,
                                shards=args.shards)
        t_dask = time.perf_counter() - t
        peaks = client.run(_peak_rss)
    print(f"dask LocalCluster ({args.workers} workers x {args.threads_per_worker} threads, "
          f"{dist.n_shards} shards): {t_dask:.2f} s; shard compute {dist.timings['eval_shards']:.2f}"
          f" s summed over shards")
    print(f"overhead: {100 * (t_dask / t_local - 1):+.1f}% (target <= 15%; noisy on a shared "
          "machine)")
    for addr, peak in peaks.items():
        print(f"  worker {addr}: peak RSS {peak / 2**20:.0f} MiB (after warm-up "
              f"{base[addr] / 2**20:.0f} MiB)")
    sent = A.nbytes + _csr_bytes(train) + _csr_bytes(test)
    shared = (B.nbytes + 8 * args.items) * args.workers
    back = int(dist.per_user.memory_usage(deep=True).sum())
    print(f"network: user side {sent / 2**20:.0f} MiB in the tasks, item side "
          f"{shared / 2**20:.1f} MiB scattered ({args.workers} copies), per-user results "
          f"{back / 2**20:.0f} MiB back")
    print(f"per-user values bit-identical: {_same(local.per_user, dist.per_user)}")


if __name__ == "__main__":
    main()
