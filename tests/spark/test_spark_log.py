"""log_spark_results: a Spark evaluation logged with the app's run layout (per-user table as
Parquet parts, means and intervals, curves by step, definitions) from the driver."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking.spark import evaluate_spark
from recoeval_tracking.tracking.spark_log import log_spark_results


def test_logged_run_holds_the_spark_results(spark, tmp_path, store_uri):
    from mlflow.tracking import MlflowClient

    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(60) + 100, 3)
    test = pd.DataFrame({"user": users, "item": rng.integers(0, 30, users.size)})
    lists = pd.DataFrame(
        {
            "user": np.repeat(np.arange(60) + 100, 6),
            "item": np.concatenate([rng.permutation(30)[:6] for _ in range(60)]),
            "rank": np.tile(np.arange(1, 7), 60),
        }
    )
    spark.catalog.clearCache()
    res = evaluate_spark(
        spark.createDataFrame(test),
        ranked=spark.createDataFrame(lists),
        k=4,
        metrics=["p", "ndcg"],
        cumulative=True,
    )
    run_id = log_spark_results(
        res,
        tracking_uri=store_uri,
        experiment="spark",
        job_dir=tmp_path / "job",
        params={"model": "lists"},
        precision="exact",
    )
    run = MlflowClient(store_uri).get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.params["model"] == "lists"
    pu = res.per_user_spark.toPandas()
    for col in ("p_at_4", "ndcg_at_4"):
        v = pu[col].to_numpy(dtype=float)
        assert run.data.metrics[col] == pytest.approx(np.nanmean(v), rel=1e-12)
        low, high = json.loads(run.data.tags["recoeval.ci95"])[col]
        assert low < run.data.metrics[col] < high
    history = MlflowClient(store_uri).get_metric_history(run_id, "ndcg_at_k")
    assert [h.step for h in history] == [1, 2, 3, 4]
    assert run.data.tags["recoeval.definitions_fingerprint"] == res.fingerprint
    # the per-user table: Spark's Parquet parts, read back whole, one row per user
    table = pd.read_parquet(tmp_path / "job" / "per_user.parquet")
    assert sorted(table["user_id"]) == list(range(100, 160))
    assert list(table.columns) == list(pu.columns)
    merged = table.merge(pu, on="user_id", suffixes=("", "_spark"))
    np.testing.assert_array_equal(merged["ndcg_at_4"], merged["ndcg_at_4_spark"])
    names = {a.path for a in MlflowClient(store_uri).list_artifacts(run_id)}
    assert {"per_user.parquet", "metrics.json", "definitions.json", "curves.csv"} <= names
    # only the table's parts: not Spark's _SUCCESS marker nor the Hadoop .crc checksums
    parts = [a.path for a in MlflowClient(store_uri).list_artifacts(run_id, "per_user.parquet")]
    assert parts and all(p.rsplit("/", 1)[-1].startswith("part-") for p in parts), parts
    assert all(p.endswith(".parquet") for p in parts), parts
    # unpersist frees every cached frame of the evaluation, the numbered users included
    res.unpersist()
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()


def test_refuses_results_without_a_spark_table():
    import recoeval_tracking as rt

    with pytest.raises(rt.InputError, match="'results'"):
        log_spark_results(object())


def test_a_file_store_is_refused_before_spark_writes(tmp_path, monkeypatch):
    """MLflow 3.17 refuses its file store with an MlflowException at the upload, after Spark
    has written the table: refused first, naming tracking_uri and the ways out."""
    import recoeval_tracking as rt

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    written = []
    table = type("Frame", (), {"write": None, "orderBy": lambda self, *a: written.append(a)})()
    results = type("R", (), {"per_user_spark": table})()
    uri = (tmp_path / "mlruns").as_uri()
    with pytest.raises(rt.InputError, match=r"'tracking_uri'.*file store.*sqlite:///mlflow.db"):
        log_spark_results(results, tracking_uri=uri)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", str(tmp_path / "mlruns"))  # a bare path
    with pytest.raises(rt.InputError, match=r"MLFLOW_TRACKING_URI.*MLFLOW_ALLOW_FILE_STORE"):
        log_spark_results(results)
    assert not written
