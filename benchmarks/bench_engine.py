"""Benchmark of the metric engine against the blocked-GEMM floor.

Prints, for each size (users x items x factors), in one run: the time to score every
(user, item) pair with BLAS in blocks (the floor, same block size and dtype as the engine), the
engine with the default metrics, with all metrics, and with all metrics cumulative, the ratios to
the floor, the peak extra memory of each call (RSS high-water mark above the level before the
call, sampled every 2 ms), and, when installed, recometrics and implicit on the same input.
The first-call compile time is measured in a fresh process (warm on-disk cache and cold).

Usage::

    python benchmarks/bench_engine.py                 # all three sizes
    python benchmarks/bench_engine.py --sizes 10000x5000x32 --threads 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.engine.driver import default_block_rows, thread_limits


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """Peak extra memory of a call: the larger of the resident-set growth (sampled every 2 ms)
    and tracemalloc's peak of the Python and numpy allocations made during the call."""

    def __enter__(self):
        tracemalloc.start()
        self.base = rss_bytes()
        self.peak = self.base
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, rss_bytes())
            time.sleep(0.002)

    def __exit__(self, *exc):
        self._stop = True
        self._t.join()
        self.peak = max(self.peak, rss_bytes())
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.extra = max(self.peak - self.base, traced)


def make_data(m: int, n: int, p: int, seed: int = 0, mean_items: int = 40,
              dtype=np.float32):
    """Power-law item popularity (Zipf-like, exponent 1), lognormal user activity, 80/20 split."""
    rng = np.random.default_rng(seed)
    counts = np.clip(rng.lognormal(np.log(mean_items) - 0.5, 1.0, size=m).astype(np.int64), 2,
                     n // 2)
    pop = 1.0 / np.arange(1, n + 1) ** 1.0
    pop /= pop.sum()
    perm = rng.permutation(n)
    users = np.repeat(np.arange(m), counts)
    items = perm[rng.choice(n, size=users.shape[0], p=pop)]
    X = sp.csr_array((np.ones(users.shape[0]), (users, items)), shape=(m, n))
    X.sum_duplicates()
    X.data[:] = rng.integers(1, 6, size=X.nnz).astype(np.float64)
    is_test = rng.random(X.nnz) < 0.2
    coo = X.tocoo()
    tr = sp.csr_array((coo.data[~is_test], (coo.row[~is_test], coo.col[~is_test])), shape=(m, n))
    te = sp.csr_array((coo.data[is_test], (coo.row[is_test], coo.col[is_test])), shape=(m, n))
    A = rng.standard_normal((m, p)).astype(dtype)
    B = rng.standard_normal((n, p)).astype(dtype)
    return tr, te, A, B


#: recometrics' ten metrics (the registry also holds variants and beyond-accuracy metrics).
ALL = ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr", "roc_auc", "pr_auc"]
BEYOND = ["p", "ap", "ndcg", "novelty", "ils", "serendipity", "coverage", "gini", "entropy",
          "personalisation"]


def gemm_floor(A, B, block_rows, nthreads) -> float:
    out = np.empty((block_rows, B.shape[0]), dtype=A.dtype)
    with thread_limits(nthreads):
        t = time.perf_counter()
        for s in range(0, A.shape[0], block_rows):
            a = A[s:s + block_rows]
            np.matmul(a, B.T, out=out[: a.shape[0]])
        return time.perf_counter() - t


def timed(fn, repeat=1, memory=True):
    """Best wall time over ``repeat`` plain runs, then one more run under the memory probe (the
    probe's sampling thread and tracemalloc would distort the timing)."""
    best = float("inf")
    res = None
    for _ in range(repeat):
        t = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t)
    mem = 0
    if memory:
        with PeakRSS() as pk:
            fn()
        mem = pk.extra
    return best, mem, res


def first_call_seconds(cold: bool) -> float:
    code = textwrap.dedent("""
        import time, numpy as np, scipy.sparse as sp
        t = time.perf_counter()
        import recoeval_tracking as rt
        rng = np.random.default_rng(0)
        te = sp.random_array((50, 40), density=0.2, format="csr", rng=rng)
        rt.evaluate(None, te, A=rng.random((50, 4)), B=rng.random((40, 4)), metrics="all", k=5)
        print(time.perf_counter() - t)
    """)
    env = dict(os.environ)
    if cold:
        import tempfile
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*",
                    default=["10000x5000x32", "50000x20000x64", "138000x27000x128"])
    ap.add_argument("--threads", type=int, default=-1)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--compare", action="store_true",
                    help="also time recometrics and implicit when installed (slow)")
    args = ap.parse_args()
    dtype = np.dtype(args.dtype)
    print(f"threads={args.threads} k={args.k} dtype={dtype}")
    # compile outside the timings
    tr, te, A, B = make_data(200, 300, 8, dtype=dtype)
    # (small blocks, so that the multi-block threaded path compiles here too)
    for metrics in (("p", "ap", "ndcg"), ALL, BEYOND):
        rt.evaluate(tr, te, A=A, B=B, metrics=metrics, k=args.k, block_rows=50)
    rt.evaluate(tr, te, A=A, B=B, metrics=ALL, k=args.k, cumulative=True, block_rows=50)
    rt.evaluate(tr, te, A=A, B=B, metrics=ALL, k=args.k, ties="average", block_rows=50)
    print(f"first call in a new process (warm cache): {first_call_seconds(False):.2f} s; "
          f"cold cache (compile): {first_call_seconds(True):.2f} s")
    for size in args.sizes:
        m, n, p = (int(x) for x in size.split("x"))
        t = time.perf_counter()
        tr, te, A, B = make_data(m, n, p, dtype=dtype)
        print(f"\n== {m} users x {n} items x {p} factors: train nnz {tr.nnz:,}, test nnz "
              f"{te.nnz:,} (made in {time.perf_counter() - t:.1f} s)")
        bs = default_block_rows(n, dtype.itemsize, m)
        floor = min(gemm_floor(A, B, bs, args.threads) for _ in range(args.repeat))
        print(f"  floor (blocked GEMM, {bs} users a block): {floor:8.3f} s")
        rows = [
            ("default metrics (P, AP, NDCG)", dict(metrics=("p", "ap", "ndcg"))),
            ("all metrics", dict(metrics=ALL)),
            ("all metrics, cumulative @1..K", dict(metrics=ALL, cumulative=True)),
            ("all metrics, ties='average'", dict(metrics=ALL, ties="average")),
            ("beyond accuracy (+ default)", dict(metrics=BEYOND)),
        ]
        for label, kw in rows:
            sec, mem, res = timed(lambda: rt.evaluate(tr, te, A=A, B=B, k=args.k,
                                                      nthreads=args.threads, **kw), args.repeat)
            print(f"  {label:<32} {sec:8.3f} s  ratio {sec / floor:5.2f}x  peak extra "
                  f"{mem / 2**20:7.1f} MB")
        if args.compare:
            compare_libraries(tr, te, A, B, args, floor)


def compare_libraries(tr, te, A, B, args, floor) -> None:
    try:
        import recometrics
    except ImportError:
        print("  recometrics: not installed")
    else:
        sec, _, _ = timed(lambda: recometrics.calc_reco_metrics(
            sp.csr_matrix(tr), sp.csr_matrix(te), A, B, k=args.k, all_metrics=True,
            nthreads=os.cpu_count()), memory=False)
        print(f"  recometrics all metrics          {sec:8.3f} s  ratio {sec / floor:5.2f}x")
    try:
        from implicit.evaluation import ranking_metrics_at_k
    except ImportError:
        print("  implicit: not installed")
        return

    from implicit.cpu.als import AlternatingLeastSquares

    model = AlternatingLeastSquares(factors=A.shape[1])
    model.user_factors = A.astype(np.float32)
    model.item_factors = B.astype(np.float32)
    def csr32(X):  # implicit's Cython code takes int32 indices
        X = sp.csr_matrix(X)
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
        return X

    Xtr, Xte = csr32(tr), csr32(te)
    sec, _, _ = timed(lambda: ranking_metrics_at_k(model, Xtr, Xte, K=args.k,
                                                   show_progress=False), memory=False)
    print(f"  implicit ranking_metrics_at_k    {sec:8.3f} s  ratio {sec / floor:5.2f}x")


if __name__ == "__main__":
    main()
