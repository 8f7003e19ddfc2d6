"""ALS fit time per iteration on a synthetic implicit-feedback matrix.

Default size: 50,000 users x 20,000 items, about 2.5 million interactions (item popularity
Zipf-like, user activity log-normal), 64 factors, 3 CG steps, on all the machine's cores.
The numba kernels are compiled (or loaded from cache) on a tiny matrix first, so the timing is
of the sweeps alone; the compile/load time is printed separately.

Usage::

    python benchmarks/bench_als.py [--users 50000] [--items 20000] [--nnz 2500000]
                                   [--factors 64] [--iterations 3] [--cg-steps 3] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np
import scipy.sparse as sp

from recoeval_tracking.models import ALSModel


def synthetic(n_users: int, n_items: int, nnz: int, seed: int = 0) -> sp.csr_array:
    """A random implicit matrix with skewed item popularity and user activity (about ``nnz`` entries)."""
    rng = np.random.default_rng(seed)
    item_p = 1.0 / np.arange(1, n_items + 1) ** 0.8
    item_p /= item_p.sum()
    activity = rng.lognormal(0.0, 1.0, n_users)
    counts = np.maximum(1, np.round(activity / activity.sum() * nnz)).astype(np.int64)
    counts = np.minimum(counts, n_items // 2)
    rows = np.repeat(np.arange(n_users), counts)
    cols = rng.choice(n_items, size=rows.shape[0], p=item_p)
    vals = rng.integers(1, 6, size=rows.shape[0]).astype(np.float32)
    X = sp.csr_array((vals, (rows, cols)), shape=(n_users, n_items))
    X.sum_duplicates()
    return X


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=2_500_000)
    ap.add_argument("--factors", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--cg-steps", type=int, default=3)
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help=f"numba threads (default: all of numba's, {numba.config.NUMBA_NUM_THREADS} here)",
    )
    args = ap.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)

    t0 = time.perf_counter()
    X = synthetic(args.users, args.items, args.nnz)
    print(
        f"data: {X.shape[0]} x {X.shape[1]}, {X.nnz} interactions "
        f"({time.perf_counter() - t0:.1f} s to build)"
    )

    t0 = time.perf_counter()
    ALSModel(factors=4, iterations=1, progress=False).fit(synthetic(50, 40, 300))
    print(f"compile / cache load: {time.perf_counter() - t0:.2f} s")

    model = ALSModel(
        factors=args.factors, iterations=args.iterations, cg_steps=args.cg_steps, progress=False
    )
    t0 = time.perf_counter()
    model.fit(X)
    elapsed = time.perf_counter() - t0
    print(
        f"threads={numba.get_num_threads()} (cpus={os.cpu_count()}) factors={args.factors} "
        f"cg_steps={args.cg_steps}: {elapsed:.2f} s for {args.iterations} iterations, "
        f"{elapsed / max(args.iterations, 1):.3f} s per iteration"
    )


if __name__ == "__main__":
    main()
