"""Benchmark of the metric engine against the fastest honest GEMM floor, in one run.

The floor is the fastest blocked ``A @ B.T`` into preallocated output buffers over block sizes
(200 to 2000 users) and two arrangements (multi-threaded BLAS on one block at a time; each thread
scoring whole blocks with single-threaded BLAS), on the machine's real BLAS kernel: ``OPENBLAS_CORETYPE`` is
removed from the environment (the script re-executes itself without it) and threadpoolctl's view
of the BLAS libraries is printed. Every other row is a ratio to that floor, measured in the same
process: ``calc_reco_metrics`` (P only, the default top-K set, cumulative, ROC-AUC only, all
ten), ``evaluate(metrics="all")`` with the beyond-accuracy metrics, ``ties="average"`` beside
``"noise"``, implicit's ``ranking_metrics_at_k`` and recometrics when installed, each with its
target where it has one; then the cold start (a new process on an empty numba cache: the first
``evaluate``, and README's first command), ``evaluate()``'s fixed overhead on a tiny input, a
warm first call in a new process, a profile (GEMM alone, merge, Python) and the peak extra
memory with its formula.

Timings on a shared machine are noisy: compare ratios within one run.

Usage::

    python benchmarks/bench_engine.py                          # 50000x20000x64, ~3 min
    python benchmarks/bench_engine.py --sizes 138000x27000x128 10000x100000x64
    python benchmarks/bench_engine.py --memory-users 1000000   # peak memory at 1M x 20k
    python benchmarks/bench_engine.py --shape amazon-books --no-cold   # 10k x 660,940 x 8
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and "OPENBLAS_CORETYPE" in os.environ:
    # a forced older core type halves GEMM speed: run on the machine's own kernel
    _env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    os.execve(sys.executable, [sys.executable, *sys.argv], _env)

import argparse  # noqa: E402
import subprocess  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import recoeval_tracking as rt  # noqa: E402
from recoeval_tracking.engine import driver  # noqa: E402
from recoeval_tracking.engine.driver import thread_limits  # noqa: E402

#: recometrics' ten metrics.
ALL10 = ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr", "roc_auc", "pr_auc"]
TOPK8 = dict(
    precision=True,
    trunc_precision=True,
    recall=True,
    average_precision=True,
    trunc_average_precision=True,
    ndcg=True,
    hit=True,
    rr=True,
)
NONE = dict(precision=False, average_precision=False, ndcg=False)


# -- data and measuring ---------------------------------------------------------------------------


def make_data(m: int, n: int, p: int, seed: int = 0, mean_items: int = 40, dtype=np.float32):
    """Power-law item popularity (Zipf, exponent 1), lognormal user activity, 80/20 split
    (about 9 test items per user)."""
    rng = np.random.default_rng(seed)
    counts = np.clip(
        rng.lognormal(np.log(mean_items) - 0.5, 1.0, size=m).astype(np.int64), 2, n // 2
    )
    pop = 1.0 / np.arange(1, n + 1)
    pop /= pop.sum()
    users = np.repeat(np.arange(m), counts)
    items = rng.permutation(n)[rng.choice(n, size=users.shape[0], p=pop)]
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


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """Peak extra memory of a call: the larger of the resident-set growth (sampled every 2 ms)
    and tracemalloc's peak of the Python and numpy allocations made during the call."""

    def __enter__(self):
        tracemalloc.start()
        self.base = self.peak = rss_bytes()
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


#: The clock of every timed row: wall time, or with ``--clock cpu`` the process's CPU time (all
#: its threads), steadier on a shared machine where other processes take the cores.
CLOCK = time.perf_counter


def best_of(fn, repeat: int, clock=CLOCK) -> float:
    """The least of ``repeat`` timings of ``fn()`` by ``clock`` (wall; or time.process_time)."""
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def blas_info() -> list[str]:
    import scipy.linalg.cython_blas  # noqa: F401  (numba's np.dot uses SciPy's BLAS)
    from threadpoolctl import threadpool_info

    return [
        f"{d['internal_api']} {d.get('version')} architecture={d.get('architecture')} "
        f"num_threads={d['num_threads']} ({os.path.basename(d['filepath'])})"
        for d in threadpool_info()
        if d["user_api"] == "blas"
    ]


# -- the floor and the profile --------------------------------------------------------------------


def gemm_floor(
    A,
    B,
    nthreads: int,
    repeat: int,
    rows: tuple[int, ...] = (200, 400, 1000, 2000),
    per_thread: tuple[int, ...] = (200, 512, 1000),
) -> tuple[float, str]:
    """Fastest blocked ``A @ B.T`` into preallocated buffers, over block sizes and over two
    arrangements: multi-threaded BLAS on one block of ``rows`` users at a time, or each thread
    scoring whole blocks of ``per_thread`` users with single-threaded BLAS (the engine's
    arrangement for factor models)."""
    best = (float("inf"), "")
    with thread_limits(nthreads):
        for r in rows:
            out = np.empty((r, B.shape[0]), dtype=A.dtype)
            out[:] = 0  # touch every page before timing

            def run(r=r, out=out):
                for s in range(0, A.shape[0], r):
                    a = A[s : s + r]
                    np.matmul(a, B.T, out=out[: a.shape[0]])

            best = min(best, (best_of(run, repeat), f"{r} rows, threaded BLAS"))
            del out
    for r in per_thread:
        sec, _ = block_gemm_seconds(A, B, nthreads, repeat, rows=r)
        best = min(best, (sec, f"{r} rows per thread"))
    return best


def kernel_seconds(call, repeat: int) -> tuple[float, float]:
    """Best total time of ``call`` and the time spent inside the engine's driver in that run."""
    inner = []
    original = driver.run_scores

    def timed_run_scores(*a, **kw):
        t = CLOCK()
        try:
            return original(*a, **kw)
        finally:
            inner.append(CLOCK() - t)

    best = (float("inf"), 0.0)
    driver.run_scores = timed_run_scores
    try:
        for _ in range(repeat):
            inner.clear()
            t = CLOCK()
            call()
            best = min(best, (CLOCK() - t, sum(inner)))
    finally:
        driver.run_scores = original
    return best


# -- memory ---------------------------------------------------------------------------------------


def memory_formula(
    tr,
    te,
    n: int,
    p: int,
    itemsize: int,
    K: int,
    threads: int,
    n_at_k: int,
    n_whole: int,
    cumulative: bool,
    topk: bool,
) -> int:
    """Peak extra bytes of ``evaluate`` by the engine's allocations, on the default block path.

    ``16 m (n_at_k K' + n_whole)`` (the engine's per-user outputs, ``K' = K`` when cumulative
    else 1, and the results' copy of them) ``+ 40 m`` (per-user reason, train and test counts,
    the rows to score, the results' user column) ``+ 16 m K + 8 m`` (top-K items and scores, and
    the tied counts, when the beyond-accuracy metrics ask for lists) ``+ threads b n s`` (one
    block of scores per thread, ``b = default_block_rows(n, s, m)`` users, at most 128 MiB each)
    ``+ 8 nnz`` for each CSR whose indices (or test values) are not already int64 (float64).
    Independent of the catalogue but for the blocks.
    """
    m = te.shape[0]
    b = driver.default_block_rows(n, itemsize, m)
    out = 16 * m * (n_at_k * (K if cumulative else 1) + n_whole) + 40 * m
    lists = (16 * m * K + 8 * m) if topk else 0
    copies = sum(8 * X.nnz for X in (tr, te) if X.indices.dtype != np.int64)
    copies += 8 * te.nnz if te.data.dtype != np.float64 else 0
    return out + lists + threads * b * n * itemsize + copies


def peak_memory(m: int, n: int, p: int, args) -> None:
    t = time.perf_counter()
    tr, te, A, B = make_data(m, n, p)
    print(
        f"\n== peak extra memory at {m:,} users x {n:,} items x {p} (data made in "
        f"{time.perf_counter() - t:.0f} s)"
    )
    for label, kw, n_at_k, n_whole, topk in (
        ("calc_reco_metrics, all 10", None, 8, 2, False),
        ('evaluate(metrics="all")', dict(metrics="all"), 12, 3, True),
    ):
        t = time.perf_counter()
        with PeakRSS() as pk:
            if kw is None:
                rt.calc_reco_metrics(
                    tr, te, A, B, k=args.k, all_metrics=True, nthreads=args.threads
                )
            else:
                rt.evaluate(tr, te, A=A, B=B, k=args.k, nthreads=args.threads, **kw)
        sec = time.perf_counter() - t
        with thread_limits(args.threads) as threads:
            pass
        est = memory_formula(
            tr, te, n, p, A.dtype.itemsize, args.k, threads, n_at_k, n_whole, False, topk
        )
        print(
            f"  {label:<34} measured {pk.extra / 2**20:8.1f} MB   formula (engine) "
            f"{est / 2**20:8.1f} MB   ({sec:.1f} s)"
        )


# -- fixed costs ----------------------------------------------------------------------------------


def fixed_overhead(repeat: int = 50) -> tuple[float, float]:
    """Median time of ``evaluate`` (default metrics, then ``"all"``) on 50 users x 40 items."""
    rng = np.random.default_rng(0)
    te = sp.random_array((50, 40), density=0.2, format="csr", rng=rng)
    A, B = rng.random((50, 4)), rng.random((40, 4))
    res = []
    for metrics in (None, "all"):
        rt.evaluate(None, te, A=A, B=B, metrics=metrics, k=5)
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            rt.evaluate(None, te, A=A, B=B, metrics=metrics, k=5)
            ts.append(time.perf_counter() - t)
        res.append(float(np.median(ts)))
    return res[0], res[1]


def first_call_seconds(cold: bool = False, metrics: str = "all") -> tuple[float, float]:
    """Import time and first ``evaluate(metrics=...)`` time in a new process (with ``cold``, on
    an empty numba cache: every kernel it runs compiles)."""
    code = textwrap.dedent("""
        import time
        t0 = time.perf_counter()
        import numpy as np, scipy.sparse as sp
        import recoeval_tracking as rt
        t1 = time.perf_counter()
        rng = np.random.default_rng(0)
        te = sp.random_array((50, 40), density=0.2, format="csr", rng=rng)
        A = rng.random((50, 4)).astype(np.float32)
        B = rng.random((40, 4)).astype(np.float32)
        rt.evaluate(None, te, A=A, B=B, metrics=METRICS, k=5)
        print(t1 - t0, time.perf_counter() - t1)
    """).replace("METRICS", repr(metrics))
    env = dict(os.environ)
    if cold:
        import tempfile

        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    imp, call = (float(x) for x in out.stdout.strip().splitlines()[-1].split())
    return imp, call


def app_cold_seconds() -> tuple[float, float, str]:
    """README's first command (``recoeval-track``, tracking off) in a new folder on an empty
    numba cache: its ``eval`` stage (the wait for the kernels compiling in the second process,
    then the evaluation), its wall time and its timings line."""
    import re
    import shutil
    import tempfile

    work = tempfile.mkdtemp()
    env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(work, "numba")}
    exe = shutil.which("recoeval-track") or os.path.join(
        os.path.dirname(sys.executable), "recoeval-track"
    )
    t = time.perf_counter()
    out = subprocess.run(
        [exe, "tracking=none"], cwd=work, capture_output=True, text=True, env=env, check=True
    )
    wall = time.perf_counter() - t
    line = next(x for x in (out.stdout + out.stderr).splitlines() if x.startswith("timings:"))
    eval_s = float(re.search(r"eval ([0-9.]+) s", line).group(1))
    shutil.rmtree(work, ignore_errors=True)
    return eval_s, wall, line


def cold_start() -> None:
    """The cold rows: a new process on an empty numba cache."""
    for metrics, target in (("all", 10.0), (None, None)):
        imp, call = first_call_seconds(cold=True, metrics=metrics)
        goal = (
            f" (target <= {target:.0f} s: {'met' if call <= target else 'MISSED'})"
            if target
            else ""
        )
        print(
            f"cold first evaluate(metrics={metrics!r}) in a new process: import {imp:.2f} s + "
            f"compile and run {call:.2f} s{goal}"
        )
    eval_s, wall, line = app_cold_seconds()
    print(
        f"cold README first command: eval stage {eval_s:.2f} s (target <= 8 s: "
        f"{'met' if eval_s <= 8 else 'MISSED'}), wall {wall:.1f} s; {line}"
    )


def warm_up(k: int) -> None:
    """Compile (or load from the cache) every kernel measured, for float32 and float64."""
    for dtype in (np.float32, np.float64):
        tr, te, A, B = make_data(300, 500, 8, dtype=dtype)
        for kw in (
            dict(metrics=["p"]),
            dict(metrics=ALL10),
            dict(metrics=ALL10, cumulative=True),
            dict(metrics=ALL10, ties="average"),
            dict(metrics="all"),
        ):
            for nthreads in (1, -1):
                rt.evaluate(tr, te, A=A, B=B, k=k, nthreads=nthreads, block_rows=32, **kw)
                rt.evaluate(tr, te, A=A, B=B, k=k, nthreads=nthreads, **kw)


# -- one size -------------------------------------------------------------------------------------


def engine_rows(tr, te, A, B, args) -> list[tuple[str, object]]:
    k, nt = args.k, args.threads

    def crm(**kw):
        return lambda: rt.calc_reco_metrics(tr, te, A, B, k=k, nthreads=nt, **kw)

    def ev(**kw):
        return lambda: rt.evaluate(tr, te, A=A, B=B, k=k, nthreads=nt, **kw)

    return [
        ("calc_reco_metrics, P only", crm(precision=True, average_precision=False, ndcg=False)),
        ("calc_reco_metrics, default top-K (8)", crm(**TOPK8)),
        ("same, cumulative @1..K", crm(cumulative=True, **TOPK8)),
        ("calc_reco_metrics, ROC-AUC only", crm(roc_auc=True, **NONE)),
        ("calc_reco_metrics, all 10", crm(all_metrics=True)),
        ('evaluate(metrics="all") (+ beyond)', ev(metrics="all")),
        ("evaluate, all 10, ties='noise'", ev(metrics=ALL10, ties="noise")),
        ("evaluate, all 10, ties='average'", ev(metrics=ALL10, ties="average")),
    ]


#: The targets of the engine's rows, in multiples of the floor.
TARGETS = {
    "calc_reco_metrics, P only": 1.25,
    "calc_reco_metrics, default top-K (8)": 1.25,
    "same, cumulative @1..K": 1.25,
    "calc_reco_metrics, all 10": 1.8,
    'evaluate(metrics="all") (+ beyond)': 2.3,
}


def verdict(label: str, ratio: float) -> str:
    target = TARGETS.get(label)
    if target is None:
        return ""
    return f"  target <= {target:.2f}: {'met' if ratio <= target else 'MISSED'}"


def library_rows(tr, te, A, B, args) -> list[tuple[str, object]]:
    rows = []
    try:
        from implicit.cpu.als import AlternatingLeastSquares
        from implicit.evaluation import ranking_metrics_at_k
    except ImportError:
        print("  implicit: not installed")
    else:
        model = AlternatingLeastSquares(factors=A.shape[1])
        model.user_factors = A.astype(np.float32)
        model.item_factors = B.astype(np.float32)

        def csr32(X):  # implicit's Cython code takes int32 indices
            X = sp.csr_matrix(X)
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
            return X

        Xtr, Xte = csr32(tr), csr32(te)
        rows.append(
            (
                "implicit ranking_metrics_at_k (4)",
                lambda: ranking_metrics_at_k(model, Xtr, Xte, K=args.k, show_progress=False),
            )
        )
    try:
        import recometrics
    except ImportError:
        print("  recometrics: not installed")
    else:
        Ctr, Cte = sp.csr_matrix(tr), sp.csr_matrix(te)
        rows.append(
            (
                "recometrics, default metrics",
                lambda: recometrics.calc_reco_metrics(
                    Ctr, Cte, A, B, k=args.k, nthreads=os.cpu_count()
                ),
            )
        )
    return rows


def block_gemm_seconds(
    A, B, nthreads: int, repeat: int, rows: int | None = None
) -> tuple[float, int]:
    """The default block path's GEMMs alone, arranged as the engine arranges them: blocks of
    ``rows`` users (``default_block_rows`` by default), each thread scoring whole blocks into
    its own preallocated buffer with single-threaded BLAS."""
    from concurrent.futures import ThreadPoolExecutor

    rows = rows or driver.default_block_rows(B.shape[0], A.dtype.itemsize, A.shape[0])
    starts = list(range(0, A.shape[0], rows))
    with thread_limits(nthreads) as n, driver._controller().limit(limits=1, user_api="blas"):
        bufs = [np.zeros((rows, B.shape[0]), dtype=A.dtype) for _ in range(n)]

        def worker(w):
            for s in starts[w::n]:
                a = A[s : s + rows]
                np.matmul(a, B.T, out=bufs[w][: a.shape[0]])

        with ThreadPoolExecutor(n) as pool:
            sec = best_of(lambda: list(pool.map(worker, range(n))), repeat)
    return sec, rows


def profile(tr, te, A, B, args, floor: float) -> None:
    """Where the time goes: GEMM alone (same blocks and threads as the engine), the merge (ranks
    and metrics), Python around the engine (checks, CSR, results table, beyond-accuracy
    metrics)."""
    gemm, rows = block_gemm_seconds(A, B, args.threads, args.repeat)
    print(
        f"  profile, block path: GEMM alone ({rows}-user blocks) {gemm:.3f} s "
        f"({gemm / floor:.2f}x floor)"
    )
    _split(tr, te, A, B, args, gemm)


def _split(tr, te, A, B, args, gemm: float) -> None:
    for label, kw in (
        ("top-K (P, AP, NDCG)", dict(metrics=["p", "ap", "ndcg"])),
        ("all 10", dict(metrics=ALL10)),
        ('"all" (+ beyond)', dict(metrics="all")),
    ):
        total, kernel = kernel_seconds(
            lambda: rt.evaluate(tr, te, A=A, B=B, k=args.k, nthreads=args.threads, **kw),
            args.repeat,
        )
        print(
            f"    {label:<22} total {total:.3f} s = GEMM {gemm:.3f} + merge "
            f"{kernel - gemm:.3f} + Python (checks, CSR, table, beyond) {total - kernel:.3f}"
        )


#: A published figure to beat, like for like: skrecsys ranks 10,000 users against all 660,940
#: items of Amazon Books (``amzn-books-l50``, leave-one-out, k=10) with its ALS (default eight
#: factors) in 979 ms per ``recommend`` call (mean of 50; median 988 ms) on a 12-core Apple M4
#: Pro (skrecsys 0.4.0 README, "Amazon Books" timing table). Ranking only: no metric.
SHAPES = {"amazon-books": (10_000, 660_940, 8)}
SKRECSYS_ALS_MS = 979


def run_shape(name: str, args) -> None:
    """A large catalogue like for like: ``evaluate()``'s default metrics, then the same with the
    @1..K curves, beside the GEMM floor and implicit's ``recommend`` (ranking only, train items
    filtered, the same threads), each with its peak extra memory; the engine's target is 1.3x
    the floor."""
    m, n, p = SHAPES[name]
    p = args.factors or p
    t = time.perf_counter()
    tr, te, A, B = make_data(m, n, p)
    dense_gb = m * n * A.dtype.itemsize / 2**30
    print(
        f"\n== {name}: {m:,} users x {n:,} items x {p} factors, float32, K={args.k}: train nnz "
        f"{tr.nnz:,}, test nnz {te.nnz:,} (made in {time.perf_counter() - t:.0f} s); the "
        f"users x items scores would take {dense_gb:.1f} GiB"
    )
    print(
        f"  published: skrecsys ALS (8 factors) recommend, 10,000 x 660,940, {SKRECSYS_ALS_MS} ms "
        "on a 12-core Apple M4 Pro (ranking only)"
    )
    # buffers of at most about 1 GiB: 400 users' scores threaded, 200 per thread
    floor, how = gemm_floor(
        A, B, args.threads, args.repeat + 1, rows=(200, 400), per_thread=(50, 100, 200)
    )
    print(f"  {'what':<44} {'seconds':>8} {'x floor':>8} {'peak extra MB':>14}")
    print(f"  {f'floor: blocked A @ B.T, prealloc. ({how})':<44} {floor:8.3f} {1.0:8.2f}")
    nt = args.threads

    def ev(**kw):
        return lambda: rt.evaluate(tr, te, A=A, B=B, k=args.k, nthreads=nt, **kw)

    rows = [
        ("evaluate(), default metrics (P, AP, NDCG)", ev(), 1.3),
        ("same, @1..K curves (cumulative=True)", ev(cumulative=True), 1.3),
    ]
    lib = _implicit_recommend(tr, A, B, args.k, nt)
    if lib is not None:
        rows.append(("implicit recommend (ranking only)", lib, None))
    for label, fn, target in rows:
        sec = best_of(fn, 1 if target is None else args.repeat)
        with PeakRSS() as pk:
            fn()
        goal = ""
        if target is not None:
            goal = f"  target <= {target:.2f}: {'met' if sec / floor <= target else 'MISSED'}"
        print(f"  {label:<44} {sec:8.3f} {sec / floor:8.2f} {pk.extra / 2**20:14.1f}{goal}")
    gemm, block = block_gemm_seconds(A, B, nt, args.repeat)
    print(
        f"  profile: the engine's GEMM alone ({block}-user blocks per thread) {gemm:.3f} s "
        f"({gemm / floor:.2f}x floor)"
    )
    with thread_limits(nt) as threads:
        pass
    est = memory_formula(tr, te, n, p, A.dtype.itemsize, args.k, threads, 3, 0, False, False)
    print(f"  engine memory by the formula (default metrics): {est / 2**20:.1f} MB")


def _implicit_recommend(tr, A, B, k: int, nthreads: int):
    """implicit's ``recommend`` for every user at once (its C++ top-K over blocked scores,
    train items filtered), or None when implicit is not installed."""
    try:
        from implicit.cpu.als import AlternatingLeastSquares
    except ImportError:
        print("  implicit: not installed (pip install implicit)")
        return None
    with thread_limits(nthreads) as threads, driver._controller().limit(limits=1, user_api="blas"):
        # implicit's own threads, each on single-threaded BLAS (it warns otherwise)
        model = AlternatingLeastSquares(factors=A.shape[1], num_threads=threads)
    model.user_factors = np.ascontiguousarray(A, dtype=np.float32)
    model.item_factors = np.ascontiguousarray(B, dtype=np.float32)
    X = sp.csr_matrix(tr)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    users = np.arange(A.shape[0])

    def call():
        with driver._controller().limit(limits=1, user_api="blas"):
            return model.recommend(users, X, N=k, filter_already_liked_items=True)

    return call


def run_size(size: str, args) -> None:
    m, n, p = (int(x) for x in size.split("x"))
    dtype = np.dtype(args.dtype)
    t = time.perf_counter()
    tr, te, A, B = make_data(m, n, p, dtype=dtype)
    print(
        f"\n== {m:,} users x {n:,} items x {p} factors, {dtype}, K={args.k}: train nnz "
        f"{tr.nnz:,}, test nnz {te.nnz:,} ({te.nnz / m:.1f} per user; made in "
        f"{time.perf_counter() - t:.0f} s)"
    )
    floor, rows_floor = gemm_floor(A, B, args.threads, args.repeat + 1)
    print(f"  {'what':<40} {'seconds':>8} {'x floor':>8}")
    print(f"  {f'floor: blocked A @ B.T, prealloc. ({rows_floor})':<40} {floor:8.3f} {1.0:8.2f}")
    times = {}
    rows = engine_rows(tr, te, A, B, args)
    if args.compare:
        rows += library_rows(tr, te, A, B, args)
    for label, fn in rows:
        repeat = 1 if label.startswith(("implicit", "recometrics")) else args.repeat
        times[label] = sec = best_of(fn, repeat)
        print(f"  {label:<40} {sec:8.3f} {sec / floor:8.2f}{verdict(label, sec / floor)}")
    noise = times["evaluate, all 10, ties='noise'"]
    avg = times["evaluate, all 10, ties='average'"]
    print(f"  average - noise: {(avg - noise) / floor:+.2f}x floor (target <= +0.10x)")
    if args.profile:
        profile(tr, te, A, B, args, floor)
    with PeakRSS() as pk:
        rt.calc_reco_metrics(tr, te, A, B, k=args.k, nthreads=args.threads, all_metrics=True)
    with thread_limits(args.threads) as threads:
        pass
    est = memory_formula(tr, te, n, p, dtype.itemsize, args.k, threads, 8, 2, False, False)
    print(
        f"  peak extra memory, calc_reco_metrics all 10: {pk.extra / 2**20:.1f} MB "
        f"(formula: {est / 2**20:.1f} MB)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes",
        nargs="*",
        default=None,
        help="users x items x factors (default 50000x20000x64, none with --shape; also "
        "138000x27000x128, 10000x100000x64)",
    )
    ap.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        help="a published shape like for like: amazon-books = 10,000 x 660,940 x 8 (skrecsys's "
        "ALS) beside the floor and implicit's recommend",
    )
    ap.add_argument("--factors", type=int, default=0, help="factors of --shape (default its own)")
    ap.add_argument("--threads", type=int, default=-1)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs per row")
    ap.add_argument(
        "--no-compare", dest="compare", action="store_false", help="skip implicit and recometrics"
    )
    ap.add_argument("--no-profile", dest="profile", action="store_false")
    ap.add_argument(
        "--no-cold", dest="cold", action="store_false", help="skip the cold-start rows (~1 min)"
    )
    ap.add_argument(
        "--clock",
        default="wall",
        choices=["wall", "cpu"],
        help="time rows by wall clock or by the process's CPU time (use with "
        "--threads 1 on a busy machine: BLAS threads that spin count as CPU)",
    )
    ap.add_argument(
        "--memory-users",
        type=int,
        default=0,
        help="also measure peak memory at this many users x 20,000 items x 64",
    )
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"clock: {args.clock}")
    print("timings on a shared machine are noisy: compare the ratios within one run")
    print(
        f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(a figure counts from a load under 0.5)"
    )
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    for line in blas_info():
        print(f"BLAS: {line}")
    with thread_limits(args.threads) as threads:
        print(f"threads={threads} k={args.k} dtype={args.dtype}")
    t = time.perf_counter()
    warm_up(args.k)
    print(f"warm-up (compile or load float32 and float64 kernels): {time.perf_counter() - t:.1f} s")
    if args.cold:
        cold_start()
    imp, call = first_call_seconds()
    print(
        f"warm first call in a new process: import {imp:.2f} s + first evaluate(all) "
        f"{call:.2f} s = {imp + call:.2f} s (target <= 1.5 s)"
    )
    small, every = fixed_overhead()
    print(
        f"evaluate() fixed overhead, 50 users x 40 items: default metrics {small * 1e3:.1f} ms, "
        f'metrics="all" {every * 1e3:.1f} ms (median of 50)'
    )
    sizes = args.sizes if args.sizes is not None else ([] if args.shape else ["50000x20000x64"])
    for size in sizes:
        run_size(size, args)
    if args.shape:
        run_shape(args.shape, args)
    if args.memory_users:
        peak_memory(args.memory_users, 20000, 64, args)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
