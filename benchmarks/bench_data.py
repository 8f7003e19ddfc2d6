"""Benchmark: load + split the ML-1M subset, and generate + split a 20M synthetic dataset.

Targets (issue "Data and splits"): ML-1M subset (487,650 rows) loaded and split in < 2 s;
a 138k x 27k synthetic dataset with 20M interactions generated and split in < 30 s on 2 cores.
Run ``python benchmarks/bench_data.py [--small]``; pin cores with ``taskset -c 0,1`` and
``NUMBA_NUM_THREADS=2``. Numba kernels are compiled (and cached) by a warm-up call first; the
compile time is printed separately.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from recoeval_tracking.data import load_movielens_1m, make_synthetic
from recoeval_tracking.splitting import random_holdout, split_reco_train_test


def _ml1m_path() -> Path:
    env = os.environ.get("RECOEVAL_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    return (root / "ml-1m-subset-users-1-2999" / "ratings.dat").resolve()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="1/10 of the synthetic size")
    args = ap.parse_args()

    t = time.perf_counter()
    warm = make_synthetic(200, 100, 2000, seed=0)
    random_holdout(warm, 0.2, seed=0)
    split_reco_train_test(warm.matrix, "separated", seed=0)
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t:.2f} s")

    path = _ml1m_path()
    if path.exists():
        t = time.perf_counter()
        X = load_movielens_1m(path)
        t_load = time.perf_counter() - t
        s = random_holdout(X, 0.2, seed=1)
        t_split = time.perf_counter() - t - t_load
        t2 = time.perf_counter()
        split_reco_train_test(X.matrix, "separated", seed=1)
        t_rec = time.perf_counter() - t2
        total = t_load + t_split
        print(
            f"ml-1m subset: {X.nnz:,} interactions; load {t_load:.2f} s + random split "
            f"{t_split:.2f} s = {total:.2f} s ({'OK' if total < 2 else 'OVER'} vs 2 s); "
            f"split_reco_train_test {t_rec:.2f} s; test {s.test.nnz:,}"
        )
    else:
        print(f"ml-1m subset missing at {path}; skipped")

    scale = 10 if args.small else 1
    n_users, n_items, nnz = 138_000 // scale, 27_000 // scale, 20_000_000 // scale
    t = time.perf_counter()
    S = make_synthetic(n_users, n_items, nnz, seed=1)
    t_gen = time.perf_counter() - t
    s = random_holdout(S, 0.2, seed=1)
    t_split = time.perf_counter() - t - t_gen
    total = t_gen + t_split
    print(
        f"synthetic {n_users:,} x {n_items:,}, {S.nnz:,} interactions: generate {t_gen:.2f} s"
        f" + random split (with fingerprints) {t_split:.2f} s = {total:.2f} s "
        f"({'OK' if total < 30 else 'OVER'} vs 30 s); test {s.test.nnz:,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
