"""Benchmark of distributed evaluation, two modes.

**Overhead** (default): the local engine against a Dask ``LocalCluster`` on the same cores, in
one run, for one size (users x items x factors, float32 factors, power-law items, 80/20 split).
The local engine runs alone on ``--workers x --threads-per-worker`` threads (nothing sampled
beside the timed call); then the same evaluation on a ``LocalCluster(n_workers=--workers,
threads_per_worker=--threads-per-worker, processes=True)`` (one engine thread per task, the
users' rows sent inside the tasks). Prints both times and their ratio, the workers' peak
resident memory, the bytes that crossed the network, and whether the per-user values are
bit-identical. ``--local-memory`` runs the local evaluation once more under a memory sampler
(after the timing, never beside it) for its peak extra memory.

**Storage** (``--storage DIR``): users read from storage by the workers. A child process first
writes the synthetic split to ``DIR`` as a partitioned Parquet dataset (``PartitionedWriter``,
one block of users at a time, so the writer never holds the whole split) with the users'
factors in ``DIR/user_factors.npy`` and the items' in ``DIR/item_factors.npy``; then this
process, which never generates or loads the users, evaluates it with
:func:`~recoeval_tracking.distributed.evaluate_from_storage` on a fresh ``LocalCluster``, the
per-user table written as Parquet parts into ``DIR/per_user``. Prints the client's peak RSS (and
its RSS before the evaluation, after the imports and the cluster's start), each worker's peak
RSS, and, with ``--check``, the local engine's time on the same split loaded whole (timed alone,
after the cluster is closed), the ratio of the two, and whether the per-user values are equal
(done after the peaks are read; only for sizes that fit in memory).

Timings on a shared machine are noisy: print ``uptime`` beside them.

Usage (unset OPENBLAS_CORETYPE so BLAS picks its kernels for this CPU)::

    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py                    # 1M x 20k x 64
    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py --users 200000 --repeat 3
    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py --storage /tmp/ds1m --users 1000000 \\
        --check
    env -u OPENBLAS_CORETYPE python benchmarks/bench_dask.py --storage /tmp/ds10m \\
        --users 10000000                                                       # 10M users
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import PeakRSS, make_data  # noqa: E402 - the shared data generator

import recoeval_tracking as rt  # noqa: E402
from recoeval_tracking.options import EvalOptions  # noqa: E402

#: Users per part (and per block of the writer) in storage mode.
USERS_PER_PART = 50_000


def _blas() -> str:
    from threadpoolctl import threadpool_info

    return (
        "; ".join(
            f"{i.get('internal_api')} {i.get('architecture', '?')} ({i.get('num_threads')} threads)"
            for i in threadpool_info()
            if i.get("user_api") == "blas"
        )
        or "no BLAS found"
    )


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _csr_bytes(X) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


def _same(a, b) -> bool:
    """Same columns, every value bit for bit (NaN where NaN)."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if x.dtype != y.dtype:
            return False
        if not (
            np.array_equal(x.view(np.int64), y.view(np.int64))
            if x.dtype == np.float64
            else np.array_equal(x, y)
        ):
            return False
    return True


def _mib(x: float) -> str:
    return f"{x / 2**20:.0f} MiB"


def _options(args) -> dict:
    return dict(metrics=args.metrics.split(","), k=args.k)


# ---------------------------------------------------------------------------------------------
# overhead mode
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _cluster(args):
    """A fresh ``LocalCluster`` of ``--workers`` processes x ``--threads-per-worker`` threads
    (no memory limit) and its client."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads_per_worker,
            processes=True,
            dashboard_address=":0",
            memory_limit=0,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def overhead(args) -> None:
    from recoeval_tracking.distributed import evaluate_on_dask

    threads = args.workers * args.threads_per_worker
    t = time.perf_counter()
    train, test, A, B = make_data(args.users, args.items, args.factors)
    print(f"data: {train.nnz} train and {test.nnz} test entries ({time.perf_counter() - t:.1f} s)")
    opts = dict(_options(args), nthreads=threads)
    rt.evaluate(train[:2000], test[:2000], A=A[:2000], B=B, **opts)  # compile / load the kernels
    local_times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        local = rt.evaluate(train, test, A=A, B=B, **opts)  # alone: no sampler beside it
        local_times.append(time.perf_counter() - t)
    t_local = min(local_times)
    print(
        f"local engine ({threads} threads): {t_local:.2f} s (best of "
        f"{', '.join(f'{x:.2f}' for x in local_times)})"
    )

    with _cluster(args) as client:
        rt.evaluate(train[:2000], test[:2000], A=A[:2000], B=B, client=client, **opts)  # warm
        base = client.run(_rss)
        dask_times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            dist = evaluate_on_dask(
                client, train, test, EvalOptions(**opts), A=A, B=B, shards=args.shards
            )
            dask_times.append(time.perf_counter() - t)
        t_dask = min(dask_times)
        peaks = client.run(_peak_rss)
    print(
        f"dask LocalCluster ({args.workers} workers x {args.threads_per_worker} threads, "
        f"{dist.n_shards} shards): {t_dask:.2f} s (best of "
        f"{', '.join(f'{x:.2f}' for x in dask_times)}); shard compute "
        f"{dist.timings['eval_shards']:.2f} s summed over shards"
    )
    print(
        f"overhead ratio dask / local: {t_dask / t_local:.3f} "
        f"({100 * (t_dask / t_local - 1):+.1f}%; target <= +15% on a quiet machine)"
    )
    for addr, peak in peaks.items():
        print(f"  worker {addr}: peak RSS {_mib(peak)} (after warm-up {_mib(base[addr])})")
    sent = A.nbytes + _csr_bytes(train) + _csr_bytes(test)
    shared = (B.nbytes + 8 * args.items) * args.workers
    back = int(dist.per_user.memory_usage(deep=True).sum())
    print(
        f"network: user side {_mib(sent)} in the tasks, item side {shared / 2**20:.1f} MiB "
        f"scattered ({args.workers} copies), per-user results {_mib(back)} back"
    )
    print(
        f"per-user values bit-identical (dask in memory vs local): "
        f"{_same(local.per_user, dist.per_user)}"
    )
    if args.local_memory:
        with PeakRSS() as mem:
            rt.evaluate(train, test, A=A, B=B, **opts)
        print(f"local engine peak extra memory (separate, untimed run): {_mib(mem.extra)}")


# ---------------------------------------------------------------------------------------------
# storage mode
# ---------------------------------------------------------------------------------------------


def _block(
    rng: np.random.Generator,
    m: int,
    n: int,
    perm: np.ndarray,
    pop: np.ndarray,
    mean_items: int = 40,
) -> tuple[sp.csr_array, sp.csr_array]:
    """One block of users of bench_engine.make_data's distribution (power-law items with one
    item order for every block, lognormal activity, values 1..5, 80/20 split)."""
    counts = np.clip(
        rng.lognormal(np.log(mean_items) - 0.5, 1.0, size=m).astype(np.int64), 2, n // 2
    )
    users = np.repeat(np.arange(m), counts)
    items = perm[rng.choice(n, size=users.shape[0], p=pop)]
    X = sp.csr_array((np.ones(users.shape[0]), (users, items)), shape=(m, n))
    X.sum_duplicates()
    X.data[:] = rng.integers(1, 6, size=X.nnz).astype(np.float64)
    is_test = rng.random(X.nnz) < 0.2
    coo = X.tocoo()
    tr = sp.csr_array((coo.data[~is_test], (coo.row[~is_test], coo.col[~is_test])), shape=(m, n))
    te = sp.csr_array((coo.data[is_test], (coo.row[is_test], coo.col[is_test])), shape=(m, n))
    return tr, te


def write_synthetic(folder: Path, m: int, n: int, p: int, seed: int = 0) -> None:
    """The synthetic split written block by block (run in a child process), and a small one
    of the same items in ``folder/warm`` (the workers' warm-up)."""
    from recoeval_tracking.data import PartitionedWriter, write_partitioned

    t = time.perf_counter()
    tr, te, A_warm, _ = make_data(2000, n, p, seed=seed + 1)
    write_partitioned(folder / "warm" / "split", tr, te, users_per_part=500)
    np.save(folder / "warm" / "user_factors.npy", A_warm)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    pop = 1.0 / np.arange(1, n + 1)
    pop /= pop.sum()
    np.save(folder / "item_factors.npy", rng.standard_normal((n, p)).astype(np.float32))
    A = np.lib.format.open_memmap(
        folder / "user_factors.npy", mode="w+", dtype=np.float32, shape=(m, p)
    )
    writer = PartitionedWriter(
        folder / "split", np.arange(n, dtype=np.int64), name=f"synthetic {m}x{n}"
    )
    for j, lo in enumerate(range(0, m, USERS_PER_PART)):
        hi = min(lo + USERS_PER_PART, m)
        block_rng = np.random.default_rng([seed, j])
        tr, te = _block(block_rng, hi - lo, n, perm, pop)
        writer.write_part(tr, te, np.arange(lo, hi, dtype=np.int64))
        A[lo:hi] = block_rng.standard_normal((hi - lo, p)).astype(np.float32)
    A.flush()
    del A
    ds = writer.close()
    (folder / "written.json").write_text(
        json.dumps({"users": m, "items": n, "factors": p, "seed": seed})
    )
    print(
        f"wrote {ds!r}: {ds.manifest['train_interactions']} train and "
        f"{ds.manifest['test_interactions']} test entries in {time.perf_counter() - t:.1f} s "
        f"(writer process peak RSS {_mib(_peak_rss())})",
        flush=True,
    )


def storage(args) -> None:
    from recoeval_tracking.distributed import evaluate_from_storage

    folder = Path(args.storage).resolve()
    want = {"users": args.users, "items": args.items, "factors": args.factors, "seed": 0}
    stamp = folder / "written.json"
    if not stamp.is_file() or json.loads(stamp.read_text()) != want:
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--write-only",
                str(folder),
                "--users",
                str(args.users),
                "--items",
                str(args.items),
                "--factors",
                str(args.factors),
            ],
            check=True,
        )
    else:
        print(f"reusing the dataset written in {folder}")
    threads = args.workers * args.threads_per_worker
    opts = EvalOptions(**_options(args), nthreads=threads)
    with _cluster(args) as client:
        evaluate_from_storage(
            client,
            folder / "warm" / "split",
            opts,  # compile / load
            user_factors=folder / "warm" / "user_factors.npy",
            item_factors=folder / "item_factors.npy",
        )
        before = _rss()
        t = time.perf_counter()
        res = evaluate_from_storage(
            client,
            folder / "split",
            opts,
            user_factors=folder / "user_factors.npy",
            item_factors=folder / "item_factors.npy",
            shards=args.shards,
            per_user_dir=folder / "per_user",
        )
        seconds = time.perf_counter() - t
        client_peak = _peak_rss()
        peaks = client.run(_peak_rss)
    print(
        f"storage run (after a warm-up on 2,000 users): {args.users} users x {args.items} "
        f"items x {args.factors}, "
        f"{res.n_shards} shards on {args.workers} workers x {args.threads_per_worker} threads: "
        f"{seconds:.2f} s (shard compute {res.timings['eval_shards']:.2f} s summed)"
    )
    print(
        f"client: RSS {_mib(before)} before the evaluation (imports, cluster started, "
        "warm-up run), "
        f"peak RSS {_mib(client_peak)}"
    )
    for addr, peak in peaks.items():
        print(f"  worker {addr}: peak RSS {_mib(peak)}")
    print(
        f"ndcg_at_{args.k} = {res.means[f'ndcg_at_{args.k}']:.6f} over "
        f"{res.n_users_evaluated} users"
    )
    if args.check:
        import pandas as pd

        from recoeval_tracking.data import open_partitioned

        train, test = open_partitioned(folder / "split").load()
        A = np.load(folder / "user_factors.npy")
        B = np.load(folder / "item_factors.npy")
        head = (train.matrix[:2000], test.matrix[:2000], A[:2000])  # load the kernels first
        rt.evaluate(head[0], head[1], A=head[2], B=B, **_options(args), nthreads=threads)
        t = time.perf_counter()  # the local engine alone (the cluster is closed), data in memory
        local = rt.evaluate(train, test, A=A, B=B, **_options(args), nthreads=threads)
        local_seconds = time.perf_counter() - t
        back = pd.read_parquet(folder / "per_user")
        ratio = seconds / local_seconds
        print(
            f"local engine ({threads} threads, the split in memory): {local_seconds:.2f} s; "
            f"storage / local: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%; target <= +15% on a "
            "quiet machine)"
        )
        print(
            f"per-user values bit-identical (read from storage vs local engine): "
            f"{_same(local.per_user, back)}"
        )


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
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="overhead mode: timed runs of each path (the best is compared)",
    )
    ap.add_argument(
        "--local-memory",
        action="store_true",
        help="overhead mode: also the local run's peak memory (a separate run)",
    )
    ap.add_argument(
        "--storage",
        metavar="DIR",
        default=None,
        help="storage mode: write the split to DIR, evaluate it from there",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="storage mode: compare with the local engine (loads the split whole)",
    )
    ap.add_argument("--write-only", metavar="DIR", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_only:
        write_synthetic(Path(args.write_only), args.users, args.items, args.factors)
        sys.stdout.flush()
        # the files are complete and closed; skip the interpreter's teardown, where a native
        # thread pool once aborted the child ("terminate called without an active exception")
        os._exit(0)
    threads = args.workers * args.threads_per_worker
    print(
        f"size {args.users} x {args.items} x {args.factors}, metrics {args.metrics} @ "
        f"{args.k}; {threads} threads; cores here: {os.cpu_count()}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    if "OPENBLAS_CORETYPE" in os.environ:
        print("warning: OPENBLAS_CORETYPE is set; run under env -u OPENBLAS_CORETYPE")
    print(f"BLAS: {_blas()}")
    storage(args) if args.storage else overhead(args)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
