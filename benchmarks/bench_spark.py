"""Benchmark of :func:`recoeval_tracking.spark.evaluate_spark` against pyspark's
``RankingEvaluator`` on the same data, in one run.

A child process writes a synthetic split (``bench_engine.make_data``: power-law items, 80/20
split, float32 factors) as Parquet: test and train interactions (user, item, rating), the
top-K lists of the factor model (user, item, rank; computed by the local engine) and the
factors as ALS holds them (id, features); ``--data DIR`` keeps them for the next run. This
process, which never loads the users itself, then reads them with a local Spark session and
times, on the same frames:

* **Spark**: what a Spark user runs to get RankingEvaluator's numbers: the lists and the test
  items gathered per user (``collect_list``), joined (a user without test items gets an empty
  label array), cached, and ``RankingEvaluator(k=K).evaluate`` for each of its five metrics;
* **recoeval**: ``evaluate_spark(test, ranked=lists, profile="spark", metrics=[the five])``:
  the same five numbers, plus per-user values (persisted on the executors), 95% intervals and
  the fingerprint.

A warm-up on a 1% sample comes first for both (Python workers, numba kernels, JIT); then
``--rounds`` rounds, the order alternating (Spark first in odd rounds). It prints each round's
wall time and CPU seconds (the JVM, its Python workers and this process, read from ``/proc``:
less sensitive than wall time to the other work of a shared machine), the ratio of the sums
(wall and CPU), the largest difference between the two sets of means, the Python driver's peak
resident memory and the JVM's peak (``VmHWM``; in local mode the JVM holds the driver and the
executors). From the session's event log and ``res.timings``: the Python stage's task time and
CPU time against the engine's, and the tasks' seconds by step. It also prints the import time
of the module a Python worker imports to run a task (``python -X importtime -c "import
recoeval_tracking.spark._shard"``, median of 3). ``--factors`` also times ``evaluate_spark`` on
the factors (the engine scoring the whole catalogue on the executors).

Each round also times the **floor** of any evaluation written in Python: the same entries
gathered per user as ``evaluate_spark`` gathers them (``groupBy(user)``, three
``collect_list``) and moved into a Python function that only counts them (``mapInArrow``),
with its ratio to Spark: what is left between it and ``evaluate_spark`` is the evaluation
itself (the Python tasks and the per-user table they return).

``--task-users N`` times, without Spark, what one task of the lists' run does in Python
(``recoeval_tracking.spark._shard.evaluate_table``) on an Arrow table of N users shaped as
``collect_list`` gives it (one row per user: its kinds, items and values as lists; K list
entries in rank order and 1 to 11 test entries each, no two alike): the CPU seconds of the
task, of the engine within it (``run_shard``) and of the rest (reading the Arrow columns,
numbering, the CSR rows, the lists, the output batch), the least of ``--task-runs`` runs, and
the ratio of the task to the engine.

``--moves`` also times, after the rounds, three ways of moving the same rows (the test
entries and the lists as (user, kind, item, value)) into a Python function that only counts
them (``mapInArrow``): gathered per user before the shuffle (``groupBy(user)`` and three
``collect_list``, as ``evaluate_spark`` does), moved flat (``repartition(user)``), and moved
flat and sorted by user (``sortWithinPartitions``): the CPU seconds of each, ``--rounds``
times.

Timings on a shared machine are noisy: the load average is printed at the start and the end.

Usage::

    python benchmarks/bench_spark.py --rounds 4 --data /tmp/spark-1m   # 1M users x 20k items
    python benchmarks/bench_spark.py --users 100000 --cores 2 --factors [--factors-mode map]
    python benchmarks/bench_spark.py --users 100000 --rounds 3 --moves  # the rows' routes
    python benchmarks/bench_spark.py --task-users 125000            # one task, no Spark
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

SPARK_METRICS = (
    "precisionAtK",
    "recallAtK",
    "meanAveragePrecisionAtK",
    "meanAveragePrecision",
    "ndcgAtK",
)


def write_data(folder: Path, m: int, n: int, p: int, k: int) -> None:
    """The child: the split, the top-k lists and the factors as Parquet files."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bench_engine import make_data

    import recoeval_tracking as rt

    tr, te, A, B = make_data(m, n, p)
    for name, X in (("train", tr), ("test", te)):
        coo = X.tocoo()
        pq.write_table(
            pa.table(
                {
                    "user": coo.row.astype(np.int64),
                    "item": coo.col.astype(np.int64),
                    "rating": coo.data,
                }
            ),
            folder / f"{name}.parquet",
        )
    res = rt.evaluate(tr, te, A=A, B=B, k=k, metrics=["p"], ties="index", return_topk=True)
    topk = res.topk
    rows = np.repeat(np.arange(m, dtype=np.int64), k)
    ok = topk.ravel() >= 0
    pq.write_table(
        pa.table(
            {
                "user": rows[ok],
                "item": topk.ravel()[ok],
                "rank": np.tile(np.arange(1, k + 1), m)[ok],
            }
        ),
        folder / "ranked.parquet",
    )
    for name, F in (("user_factors", A), ("item_factors", B)):
        flat = pa.array(F.ravel(), type=pa.float32())
        pq.write_table(
            pa.table(
                {
                    "id": np.arange(F.shape[0], dtype=np.int64),
                    "features": pa.FixedSizeListArray.from_arrays(flat, p).cast(
                        pa.list_(pa.float32())
                    ),
                }
            ),
            folder / f"{name}.parquet",
        )


def rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Peak:
    """Peak resident memory of this process during a block (sampled every 5 ms)."""

    def __enter__(self):
        self.peak, self._stop = rss(), False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop = True
        self._t.join()


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and every process below it: the local
    session's JVM (driver and executors) and its Python workers, live or reaped. Less
    sensitive than wall time to the other work of a shared machine."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, times = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = int(fields[1])
        times[int(pid)] = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
    me, total = os.getpid(), 0.0
    for pid, t in times.items():
        p = pid
        while p > 1 and p != me:
            p = parent.get(p, 0)
        if p == me:
            total += t
    return total


def jvm_peak() -> int | None:
    """Peak RSS (``VmHWM``) of the java child of this process (the local session's JVM)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/comm") as fh:
                comm = fh.read().strip()
            if int(fields[1]) != os.getpid() or comm != "java":
                continue
            with open(f"/proc/{pid}/status") as fh:
                return next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmHWM"))
        except (OSError, IndexError, StopIteration, ValueError):
            continue
    return None


def spark_numbers(test, ranked, k: int) -> dict[str, float]:
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    truth = test.groupBy("user").agg(F.collect_list(F.col("item").cast("double")).alias("label"))
    preds = (
        ranked.groupBy("user")
        .agg(F.sort_array(F.collect_list(F.struct("rank", "item"))).alias("r"))
        .select("user", F.col("r.item").cast("array<double>").alias("prediction"))
    )
    rows = (
        preds.join(truth, "user", "left")
        .select("prediction", F.coalesce("label", F.array().cast("array<double>")).alias("label"))
        .cache()
    )
    out = {name: RankingEvaluator(metricName=name, k=k).evaluate(rows) for name in SPARK_METRICS}
    rows.unpersist()
    return out


def ours(test, ranked, k: int) -> tuple[dict[str, float], dict[str, float]]:
    """RankingEvaluator's five numbers from evaluate_spark (the spark profile's metrics of the
    five: its graded ``ndcg_spark`` left out, which RankingEvaluator does not compute), and
    its timings."""
    from recoeval_tracking.metrics.profiles import PROFILES
    from recoeval_tracking.spark import evaluate_spark

    alias = PROFILES["spark"]["aliases"]
    five = [alias[name] for name in SPARK_METRICS]
    res = evaluate_spark(test, ranked=ranked, k=k, profile="spark", metrics=five)
    res.unpersist()
    return {name: res.means[f"{alias[name]}_at_{k}"] for name in SPARK_METRICS}, res.timings


def import_seconds(runs: int = 3) -> float:
    """The median, over ``runs`` fresh interpreters, of ``python -X importtime -c "import
    recoeval_tracking.spark._shard"``: the module's cumulative import time (what a Python
    worker imports to unpickle a task's function)."""
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import recoeval_tracking.spark._shard"],
            capture_output=True,
            text=True,
            check=True,
        )
        last = [x for x in out.stderr.splitlines() if x.rstrip().endswith("_shard")][-1]
        times.append(int(last.split("|")[1]) / 1e6)
    return float(np.median(times))


#: Operators that run Python on Arrow batches (the stage of the shard function).
_PYTHON_OPS = ("MapInArrow", "FlatMapGroupsInArrow", "FlatMapCoGroupsInArrow", "PythonMapInArrow")


def stage_times(log_dir: Path) -> dict[str, tuple[float, float, float]]:
    """From the (uncompressed) event log of the stopped session: per job group, the summed
    executor run time and CPU time of the tasks of the stage that ran the shard function (an
    Arrow Python operator among its RDDs' scopes; a stage that only read its cached output
    lists the operator too, and takes milliseconds: the slowest such stage is the one) and the
    run time of every stage of the group, in seconds. The CPU time is the JVM task thread's:
    in Spark 3.5+ that thread also feeds the Python worker (shuffle read, Arrow writing) and
    reads its output back."""
    import json

    group_of_job, stages_of_job, python, run_time, cpu_time = {}, {}, set(), {}, {}
    for path in log_dir.iterdir():
        with open(path) as fh:
            for line in fh:
                e = json.loads(line)
                kind = e["Event"]
                if kind == "SparkListenerJobStart":
                    group = (e.get("Properties") or {}).get("spark.jobGroup.id")
                    group_of_job[e["Job ID"]] = group
                    stages_of_job[e["Job ID"]] = e["Stage IDs"]
                elif kind == "SparkListenerStageCompleted":
                    info = e["Stage Info"]
                    scopes = [
                        json.loads(r["Scope"])["name"] for r in info["RDD Info"] if r.get("Scope")
                    ]
                    if any(op in scopes for op in _PYTHON_OPS):
                        python.add(info["Stage ID"])
                elif kind == "SparkListenerTaskEnd":
                    m = e.get("Task Metrics") or {}
                    stage = e["Stage ID"]
                    run_time[stage] = run_time.get(stage, 0) + m.get("Executor Run Time", 0)
                    cpu_time[stage] = cpu_time.get(stage, 0) + m.get("Executor CPU Time", 0)
    out: dict[str, tuple[float, float, float]] = {}
    for job, group in group_of_job.items():
        if group is None:
            continue
        stages = stages_of_job[job]
        py = max((s for s in stages if s in python), key=lambda s: run_time.get(s, 0), default=None)
        prev = out.get(group, (0.0, 0.0, 0.0))
        if py is not None and run_time.get(py, 0) / 1e3 > prev[0]:
            prev = (run_time[py] / 1e3, cpu_time.get(py, 0) / 1e9, prev[2])
        out[group] = (prev[0], prev[1], prev[2] + sum(run_time.get(s, 0) for s in stages) / 1e3)
    return out


def session(args, log_dir: Path):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(4 * args.cores))
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", log_dir.as_uri())
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def ensure_data(folder: Path, args) -> None:
    """Write the data into ``folder`` by a child process, unless a complete copy of this size is
    there (``--data`` keeps it for the next run)."""
    mark = folder / f"done-{args.users}-{args.items}-{args.factors_dim}-{args.k}"
    if mark.exists():
        print(f"data reused from {folder}")
        return
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--write",
            str(folder),
            "--users",
            str(args.users),
            "--items",
            str(args.items),
            "--factors-dim",
            str(args.factors_dim),
            "--k",
            str(args.k),
        ],
        check=True,
    )
    mark.touch()
    print(
        f"data written in {time.perf_counter() - t0:.1f} s "
        f"({args.users} users x {args.items} items, K={args.k})"
    )


def grouped_users(m: int, n: int, k: int, seed: int = 0):
    """An Arrow table of ``m`` users as a lists' run gives a task (``LISTED`` columns): ``k``
    list entries in rank order, then 1 to 11 test entries, the items of a user all distinct."""
    import pyarrow as pa

    from recoeval_tracking.spark._shard import KIND_LIST, KIND_TEST

    rng = np.random.default_rng(seed)
    per_user = rng.integers(1, 12, m) + k
    offsets = np.concatenate([[0], np.cumsum(per_user)]).astype(np.int32)
    user = np.repeat(np.arange(m), per_user)
    pos = np.arange(offsets[-1]) - np.repeat(offsets[:-1], per_user)
    listed = pos < k
    items = (user * 7 + pos * 131 + np.where(listed, 0, 17)) % n
    lists = pa.array(offsets)
    return pa.table(
        {
            "user": pa.array(np.arange(m, dtype=np.int64) * 3 + 1),
            "kinds": pa.ListArray.from_arrays(
                lists, pa.array(np.where(listed, KIND_LIST, KIND_TEST).astype(np.int8))
            ),
            "items": pa.ListArray.from_arrays(lists, pa.array(items.astype(np.int64))),
            "values": pa.ListArray.from_arrays(lists, pa.array(np.where(listed, pos + 1.0, 1.0))),
        }
    )


def count_rows(batches):
    """``mapInArrow``'s function of :func:`moves`: the rows it was given, one number."""
    import pyarrow as pa

    yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})


def entries(test, ranked):
    """The test entries and the lists as one frame of (user, kind, item, value)."""
    from pyspark.sql import functions as F

    return test.select(
        "user", F.lit(0).cast("byte").alias("kind"), "item", F.lit(1.0).alias("value")
    ).unionByName(
        ranked.select(
            "user",
            F.lit(2).cast("byte").alias("kind"),
            "item",
            F.col("rank").cast("double").alias("value"),
        )
    )


def gathered(frame):
    """``frame``'s entries gathered per user, as ``evaluate_spark`` gathers them."""
    from pyspark.sql import functions as F

    return frame.groupBy("user").agg(
        *[F.collect_list(c).alias(c) for c in ("kind", "item", "value")]
    )


def floor_run(test, ranked) -> None:
    """The floor of an evaluation in Python: the entries gathered per user and moved into a
    Python function that only counts them (no metric)."""
    gathered(entries(test, ranked)).mapInArrow(count_rows, "n long").collect()


def moves(read, args) -> None:
    """The CPU seconds of moving the rows into Python by each route, ``--rounds`` times."""
    frame = entries(read["test"], read["ranked"])
    parts = 4 * args.cores
    routes = {
        "gathered (groupBy, collect_list)": lambda: gathered(frame),
        "flat (repartition)": lambda: frame.repartition(parts, "user"),
        "flat, sorted by user": lambda: frame.repartition(parts, "user").sortWithinPartitions(
            "user"
        ),
    }
    for route in routes.values():  # warm
        route().mapInArrow(count_rows, "n long").collect()
    for i in range(args.rounds):
        for name, route in routes.items():
            c0 = tree_cpu()
            route().mapInArrow(count_rows, "n long").collect()
            print(f"  moves, round {i + 1}: {name} {tree_cpu() - c0:.2f} CPU s")


def task_run(args) -> None:
    """One task's Python side on ``--task-users`` users (the spark profile's five metrics at
    ``--k``, no catalogue: the task numbers its own items): CPU seconds, the least of
    ``--task-runs``."""
    import pickle

    from recoeval_tracking.metrics.profiles import PROFILES, apply_profile
    from recoeval_tracking.options import EvalOptions
    from recoeval_tracking.spark._shard import STATS, TIMES, ShardSpec, evaluate_table

    k = args.k
    five = [PROFILES["spark"]["aliases"][name] for name in SPARK_METRICS]
    opts = apply_profile(EvalOptions(k=k, profile="spark", metrics=five).checked())
    shared = {
        "source": None,
        "item_features": None,
        "popularity": (np.zeros(k + 1, dtype=np.int64), 0),
        "items": None,
    }
    spec = ShardSpec(k + 1, opts, k, 0, "float64", False, True, shared, unique_ranks=True)
    table = grouped_users(args.task_users, args.items, k)
    evaluate_table(table.slice(0, 1000), spec, 0)  # the kernels compiled or loaded
    task, engine = [], []
    for _ in range(args.task_runs):
        c0 = time.process_time()
        out = evaluate_table(table, spec, 0)
        task.append(time.process_time() - c0)
        stats = pickle.loads(out.column(STATS)[-1].as_py())
        engine.append(getattr(stats, TIMES)["engine_cpu"])
    rest = min(t - e for t, e in zip(task, engine, strict=True))
    print(
        f"one task, {args.task_users} users (least of {args.task_runs} runs, CPU s): task "
        f"{min(task):.3f}, engine {min(engine):.3f}, the rest {rest:.3f}; task / engine "
        f"{min(task) / min(engine):.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--factors-dim", type=int, default=64)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--rounds", type=int, default=2, help="timed rounds, alternating the order")
    ap.add_argument("--data", type=Path, help="folder to keep (and reuse) the written data")
    ap.add_argument("--factors", action="store_true", help="also time the factors input")
    ap.add_argument(
        "--factors-mode", choices=("apply", "map"), help="evaluate_spark's mode for the factors"
    )
    ap.add_argument("--moves", action="store_true", help="also time the rows' routes to Python")
    ap.add_argument("--task-users", type=int, help="time one task's Python side, no Spark")
    ap.add_argument("--task-runs", type=int, default=9)
    ap.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the child's mode
    args = ap.parse_args()
    if args.write is not None:
        write_data(args.write, args.users, args.items, args.factors_dim, args.k)
        return
    import platform
    import warnings

    if args.task_users:
        os.environ.pop("OPENBLAS_CORETYPE", None)
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; load: {os.getloadavg()}")
        task_run(args)
        print(f"load at the end: {os.getloadavg()}")
        return

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    os.environ.pop("OPENBLAS_CORETYPE", None)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; load: {os.getloadavg()}")
    t_import = import_seconds()
    print(f"worker import of recoeval_tracking.spark._shard: {t_import:.3f} s (median of 3)")
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        folder = args.data or Path(tmp) / "data"
        folder.mkdir(parents=True, exist_ok=True)
        ensure_data(folder, args)
        log_dir = Path(tmp) / "events"
        log_dir.mkdir()
        spark = session(args, log_dir)
        read = {
            name: spark.read.parquet(str(folder / f"{name}.parquet"))
            for name in ("test", "train", "ranked", "user_factors", "item_factors")
        }
        sample = {
            name: df.where(df["user"] % 100 == 0)
            for name, df in read.items()
            if name in ("test", "ranked")
        }
        spark_numbers(sample["test"], sample["ranked"], args.k)  # warm-up
        ours(sample["test"], sample["ranked"], args.k)
        floor_run(sample["test"], sample["ranked"])
        base = rss()
        walls = {"spark": [], "ours": [], "floor": []}
        cpus = {"spark": [], "ours": [], "floor": []}
        peaks, timings = [0, 0], []
        for i in range(args.rounds):
            for who in ("spark", "ours", "floor") if i % 2 == 0 else ("floor", "ours", "spark"):
                spark.sparkContext.setJobGroup(f"{who}-{i}", who)
                with Peak() as peak:
                    c0 = tree_cpu()
                    t0 = time.perf_counter()
                    if who == "spark":
                        want = spark_numbers(read["test"], read["ranked"], args.k)
                    elif who == "ours":
                        got, tim = ours(read["test"], read["ranked"], args.k)
                        timings.append(tim)
                    else:
                        floor_run(read["test"], read["ranked"])
                    walls[who].append(time.perf_counter() - t0)
                    cpus[who].append(tree_cpu() - c0)
                if who != "floor":
                    peaks[who == "ours"] = max(peaks[who == "ours"], peak.peak)
                print(f"  round {i + 1}: {who} {walls[who][-1]:.1f} s, {cpus[who][-1]:.1f} CPU s")
        t_spark, t_ours, t_floor = walls["spark"], walls["ours"], walls["floor"]
        c_spark, c_ours, c_floor = cpus["spark"], cpus["ours"], cpus["floor"]
        spark.sparkContext.setJobGroup("other", "other")
        diff = max(abs(got[n] - want[n]) for n in SPARK_METRICS)
        mib = 2**20
        print(
            f"RankingEvaluator (5 metrics): {sum(t_spark) / len(t_spark):.1f} s "
            f"(rounds {', '.join(f'{t:.1f}' for t in t_spark)}), Python driver peak "
            f"{peaks[0] / mib:.0f} MiB (base {base / mib:.0f} MiB)"
        )
        print(
            f"evaluate_spark (profile='spark'): {sum(t_ours) / len(t_ours):.1f} s "
            f"(rounds {', '.join(f'{t:.1f}' for t in t_ours)}), Python driver peak "
            f"{peaks[1] / mib:.0f} MiB"
        )
        print(
            f"ratio recoeval / Spark: {sum(t_ours) / sum(t_spark):.2f} (wall), "
            f"{sum(c_ours) / sum(c_spark):.2f} (CPU seconds of the JVM, its Python workers and "
            f"this process: {sum(c_ours) / len(c_ours):.1f} against "
            f"{sum(c_spark) / len(c_spark):.1f}); largest difference of the means: {diff:.2e}"
        )
        print(
            f"floor (the same entries gathered per user into a Python function that only counts "
            f"them): {sum(t_floor) / len(t_floor):.1f} s (rounds "
            f"{', '.join(f'{t:.1f}' for t in t_floor)}); ratio to Spark "
            f"{sum(t_floor) / sum(t_spark):.2f} (wall), {sum(c_floor) / sum(c_spark):.2f} (CPU)"
        )
        for n in SPARK_METRICS:
            print(f"  {n}: spark {want[n]:.12f}  recoeval {got[n]:.12f}")
        if args.factors:
            factors_run(read, args)
        if args.moves:
            moves(read, args)
        jvm = jvm_peak()
        if jvm is not None:
            print(f"JVM peak (driver and executors, local mode): {jvm / mib:.0f} MiB")
        spark.stop()
        python_stage(stage_times(log_dir), timings)
    print(f"load at the end: {os.getloadavg()}")


def python_stage(times: dict[str, tuple[float, float, float]], timings: list[dict]) -> None:
    """The Python stage against the engine, per round of evaluate_spark: its task time and its
    CPU time (the JVM task threads' and the Python workers' own), against the engine's
    (``run_shard``: the engine's evaluation of each shard and its statistics; the wall seconds
    of ``compute`` alone in brackets)."""
    for i, tim in enumerate(timings):
        run, jvm, total = times.get(f"ours-{i}", (float("nan"),) * 3)
        engine, engine_cpu = tim.get("shard_engine", float("nan")), tim.get("shard_engine_cpu", 0)
        cpu = jvm + tim.get("shard_cpu", float("nan"))
        steps = ", ".join(
            f"{k.removeprefix('shard_')} {v:.2f}" for k, v in tim.items() if k.startswith("shard_")
        )
        print(
            f"round {i + 1}: Python stage task time {run:.1f} s against the engine's "
            f"{engine:.2f} s (compute {tim.get('eval_shards', float('nan')):.2f} s): ratio "
            f"{run / engine:.2f}; its CPU {cpu:.2f} s (JVM {jvm:.2f}, Python "
            f"{tim.get('shard_cpu', float('nan')):.2f}) against the engine's {engine_cpu:.2f} "
            f"CPU s: ratio {cpu / engine_cpu if engine_cpu else float('nan'):.2f}"
        )
        print(
            f"  every stage of the call {total:.1f} s; in the tasks: {steps}; driver before "
            f"the tasks {tim.get('spark_prepare', 0):.1f} s"
        )


def factors_run(read, args) -> None:
    from recoeval_tracking.spark import evaluate_spark

    mib = 2**20
    with Peak() as p_fac:
        t0 = time.perf_counter()
        res = evaluate_spark(
            read["test"],
            read["train"],
            user_factors=read["user_factors"],
            item_factors=read["item_factors"],
            k=args.k,
            metrics=["p", "ap", "ndcg"],
            rating_col="rating",
            relevance_level=4,
            gains="binary",
            mode=args.factors_mode,
        )
        t_fac = time.perf_counter() - t0
    res.unpersist()
    print(
        f"evaluate_spark on the factors (P/AP/NDCG@{args.k}, whole catalogue, mode "
        f"{args.factors_mode or 'apply (the default)'}): "
        f"{t_fac:.1f} s, Python driver peak {p_fac.peak / mib:.0f} MiB, "
        f"{res.n_shards} shards; means {res.means}"
    )


if __name__ == "__main__":
    main()
