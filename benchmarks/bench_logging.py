"""Benchmark: logging one job (100,000 users, 10 metrics, K=20 curves) to a fresh SQLite store.

Prints the seconds spent writing the job directory (per-user Parquet, metrics, curves with CIs,
plots) and the seconds spent logging it to MLflow beyond that, split into the one-off costs
(``import mlflow``, creating the SQLite schema) and the upload of the run itself. Target: the
upload under 3 s.

Usage::

    python benchmarks/bench_logging.py [--users 100000] [--metrics 10] [--k 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.metrics.results import Results

NAMES = ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr"]


def build_results(n_users: int, n_metrics: int, k: int, seed: int = 0) -> Results:
    """Random per-user values: ``n_metrics`` metric columns, of which the top-K ones also have
    @1..K curves (so 8 curves of shape (n_users, K) at 10 metrics), ~10% NaN users."""
    rng = np.random.default_rng(seed)
    reasons = np.where(rng.random(n_users) < 0.1, "no_test", "")
    nan_rows = reasons != ""
    per_user = pd.DataFrame(
        {
            "user_id": np.arange(n_users) * 7 + 3,
            "n_train": rng.integers(1, 200, n_users),
            "n_test": rng.integers(0, 20, n_users),
            "nan_reason": reasons,
        }
    )
    curves = {}
    top_names = NAMES[: max(0, n_metrics - 2)]
    for name in top_names:
        arr = np.sort(rng.random((n_users, k)), axis=1)
        arr[nan_rows] = np.nan
        curves[f"{name}_at_k"] = arr
        per_user[f"{name}_at_{k}"] = arr[:, -1]
    for name in ["roc_auc", "pr_auc"][: n_metrics - len(top_names)]:
        v = rng.random(n_users)
        v[nan_rows] = np.nan
        per_user[name] = v
    return Results(
        per_user=per_user,
        k=k,
        curves_per_user=curves,
        definitions={"profile": "recometrics", "ndcg_gain": "linear"},
        fingerprint="bench0001",
        timings={"eval": 1.0},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    results = build_results(args.users, args.metrics, args.k)
    config = {
        "model": {"name": "als", "factors": 64, "regularization": 0.01},
        "metrics": {"k": args.k, "names": NAMES},
        "split": {"kind": "leave_n_out", "n": 5},
    }
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        t0 = time.perf_counter()
        job = write_job_dir(
            results,
            Path(tmp) / "job0",
            config_yaml=config,
            dataset={"name": "bench", "n_users": args.users, "data_fingerprint": "d" * 16},
        )
        t_write = time.perf_counter() - t0

        t0 = time.perf_counter()
        import mlflow  # noqa: F401 - the one-off import cost

        from recoeval_tracking.tracking.runs import log_job_dir

        t_import = time.perf_counter() - t0
        t0 = time.perf_counter()
        from mlflow import MlflowClient

        MlflowClient(uri).search_experiments()  # creates the SQLite schema
        t_store = time.perf_counter() - t0

        t0 = time.perf_counter()
        run_id = log_job_dir(job, tracking_uri=uri, experiment="bench")
        t_log = time.perf_counter() - t0

        job2 = write_job_dir(results, Path(tmp) / "job1", config_yaml=config, plots=True)
        t0 = time.perf_counter()
        log_job_dir(job2, tracking_uri=uri, experiment="bench")
        t_log2 = time.perf_counter() - t0

        run = MlflowClient(uri).get_run(run_id)
        n_curve_points = sum(
            len(MlflowClient(uri).get_metric_history(run_id, name))
            for name in results.curves_per_user
        )
    print(
        f"users={args.users} metrics={args.metrics} K={args.k} "
        f"curves={len(results.curves_per_user)} ({n_curve_points} curve points logged), "
        f"{len(run.data.metrics)} metric keys, {len(run.data.params)} params"
    )
    print(f"write job dir (parquet, json, csv, plots): {t_write:7.2f} s")
    print(f"one-off: import mlflow                    {t_import:7.2f} s")
    print(f"one-off: create the SQLite store          {t_store:7.2f} s")
    print(f"log run (first, new experiment):          {t_log:7.2f} s")
    print(f"log run (second):                         {t_log2:7.2f} s")
    status = "OK" if t_log < 3.0 else "OVER"
    print(f"logging beyond writing the job dir: {t_log:.2f} s (target < 3 s: {status})")


if __name__ == "__main__":
    main()
