"""Benchmark of :func:`recoeval_tracking.spark.evaluate_spark` against pyspark's
``RankingEvaluator`` on the same data, in one run.

A child process writes a synthetic split (``bench_engine.make_data``: power-law items, 80/20
split, float32 factors) as Parquet: test and train interactions (user, item, rating), the
top-K lists of the factor model (user, item, rank; computed by the local engine) and the
factors as ALS holds them (id, features). This process, which never loads the users itself,
then reads them with a local Spark session and times, on the same lists:

* **Spark**: what a Spark user runs to get RankingEvaluator's numbers: the lists and the test
  items gathered per user (``collect_list``), joined (a user without test items gets an empty
  label array), cached, and ``RankingEvaluator(k=K).evaluate`` for each of its five metrics;
* **recoeval**: ``evaluate_spark(test, ranked=lists, profile="spark")``: the same five numbers,
  plus per-user values (left on the executors), 95% intervals and the fingerprint.

It prints both times, their ratio, the largest difference between the two sets of means, the
Python driver's peak resident memory during each (sampled every 5 ms) and the JVM's peak
(``VmHWM``; in local mode the JVM holds the driver and the executors). ``--factors`` also times
``evaluate_spark`` on the factors (the engine scoring the whole catalogue on the executors).
A warm-up on a 1% sample comes first for both (Python workers, numba kernels, JIT).

Timings on a shared machine are noisy: print ``uptime`` beside them.

Usage::

    python benchmarks/bench_spark.py                                  # 1M users x 20k items
    python benchmarks/bench_spark.py --users 100000 --cores 2 --factors
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


def ours(test, ranked, k: int) -> dict[str, float]:
    from recoeval_tracking.metrics.profiles import PROFILES
    from recoeval_tracking.spark import evaluate_spark

    res = evaluate_spark(test, ranked=ranked, k=k, profile="spark")
    res.unpersist()
    alias = PROFILES["spark"]["aliases"]
    return {name: res.means[f"{alias[name]}_at_{k}"] for name in SPARK_METRICS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--factors-dim", type=int, default=64)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--factors", action="store_true", help="also time the factors input")
    ap.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the child's mode
    args = ap.parse_args()
    if args.write is not None:
        write_data(args.write, args.users, args.items, args.factors_dim, args.k)
        return
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        folder = Path(tmp)
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
        print(
            f"data written in {time.perf_counter() - t0:.1f} s "
            f"({args.users} users x {args.items} items, K={args.k})"
        )
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master(f"local[{args.cores}]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", args.driver_memory)
            .config("spark.sql.shuffle.partitions", str(4 * args.cores))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
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
        base = rss()
        with Peak() as p_spark:
            t0 = time.perf_counter()
            want = spark_numbers(read["test"], read["ranked"], args.k)
            t_spark = time.perf_counter() - t0
        with Peak() as p_ours:
            t0 = time.perf_counter()
            got = ours(read["test"], read["ranked"], args.k)
            t_ours = time.perf_counter() - t0
        diff = max(abs(got[n] - want[n]) for n in SPARK_METRICS)
        mib = 2**20
        print(
            f"RankingEvaluator (5 metrics): {t_spark:.1f} s, Python driver peak "
            f"{p_spark.peak / mib:.0f} MiB (base {base / mib:.0f} MiB)"
        )
        print(
            f"evaluate_spark (profile='spark'): {t_ours:.1f} s, Python driver peak "
            f"{p_ours.peak / mib:.0f} MiB"
        )
        print(
            f"ratio recoeval / Spark: {t_ours / t_spark:.2f}; largest difference of the "
            f"means: {diff:.2e}"
        )
        for n in SPARK_METRICS:
            print(f"  {n}: spark {want[n]:.12f}  recoeval {got[n]:.12f}")
        if args.factors:
            from recoeval_tracking.spark import evaluate_spark

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
                )
                t_fac = time.perf_counter() - t0
            print(
                f"evaluate_spark on the factors (P/AP/NDCG@{args.k}, whole catalogue): "
                f"{t_fac:.1f} s, Python driver peak {p_fac.peak / mib:.0f} MiB, "
                f"{res.n_shards} shards; means {res.means}"
            )
        jvm = jvm_peak()
        if jvm is not None:
            print(f"JVM peak (driver and executors, local mode): {jvm / mib:.0f} MiB")
        spark.stop()


if __name__ == "__main__":
    main()
