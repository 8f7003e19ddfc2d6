"""MLflow holds exact values: what ``mlflow.search_runs`` reads back is the mean of the run's own
``per_user.parquet`` (over the users where the metric is defined), and a sweep parent's best is
its best child's value, bit for bit. Rounding is for text only (names, descriptions)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from results_factory import make_results

from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.runs import log_job_dir
from recoeval_tracking.tracking.sweeps import (
    create_sweep_parent,
    finish_sweep_parent,
    record_sweep_best,
)

CONFIG = {"model": {"name": "als", "factors": 8}, "metrics": {"k": 5}}
EPS = np.finfo(np.float64).eps


@pytest.fixture
def default_store(store_uri, monkeypatch):
    """``store_uri`` as MLflow's default store, as a user reading runs back sets it."""
    import mlflow
    from mlflow.tracking._tracking_service import utils

    monkeypatch.setattr(utils, "_tracking_uri", utils._tracking_uri)  # restored afterwards
    mlflow.set_tracking_uri(store_uri)
    return store_uri


def _job(tmp_path, name, seed, **kw):
    res = make_results(n_users=300, k=5, seed=seed)
    path = write_job_dir(res, tmp_path / name, config_yaml=CONFIG, plots=False, **kw)
    return res, path


def test_logged_means_are_the_means_of_the_per_user_table(tmp_path, default_store):
    import mlflow

    _, path = _job(tmp_path, "job", seed=3, extra_metrics={"fit_seconds": 1.23456789012345})
    run_id = log_job_dir(path, tracking_uri=default_store, experiment="exact")  # the defaults
    runs = mlflow.search_runs(experiment_names=["exact"])
    assert runs["run_id"].tolist() == [run_id]
    row = runs.iloc[0]
    per_user = pd.read_parquet(path / "per_user.parquet")
    columns = [c for c in per_user.columns if c.endswith("_at_5") or c in ("roc_auc", "pr_auc")]
    assert len(columns) >= 3
    for col in columns:
        v = per_user[col].to_numpy(dtype=np.float64)
        defined = v[~np.isnan(v)]
        assert 0 < defined.size < v.size  # the table has NaN users, left out by the rule
        logged = row[f"metrics.{col}"]
        assert logged == defined.mean(), col  # the documented rule, bit for bit
        assert logged == pytest.approx(np.nanmean(v), rel=4 * EPS, abs=0), col
        assert len(repr(logged)) > 8  # not cut to a few digits
    assert row["metrics.fit_seconds"] == 1.23456789012345
    # the curves too, step k: the values of curves.csv as computed
    from mlflow import MlflowClient

    curves = pd.read_csv(path / "curves.csv")
    history = MlflowClient(default_store).get_metric_history(run_id, "ndcg_at_k")
    assert {m.step: m.value for m in history} == dict(zip(curves["k"], curves["ndcg_at_k"]))


@pytest.mark.parametrize("names_its_run", [False, True])
def test_sweep_parent_best_is_its_best_childs_value_exactly(tmp_path, store_uri, names_its_run):
    """A grid's best (taken from the children) and a search's best (recorded as it improved,
    from the value the job returned: the same mean summed in another order, one ulp off here)
    are both the best child's logged value."""
    from mlflow import MlflowClient

    client = MlflowClient(store_uri)
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="best")
    values = {}
    for trial, seed in enumerate((11, 12, 13)):
        res, path = _job(tmp_path, f"job{trial}", seed=seed)
        run_id = log_job_dir(
            path,
            tracking_uri=store_uri,
            experiment="best",
            parent_run_id=parent.run_id,
            sweep_id=parent.sweep_id,
        )
        values[run_id] = res.means
    best_child = max(values, key=lambda r: values[r]["ndcg_at_5"])
    trial = list(values).index(best_child)
    returned = np.nextafter(values[best_child]["ndcg_at_5"], np.inf)
    # an Optuna search records its best as it improves, from the jobs' returned values
    record_sweep_best(
        parent.run_id,
        "ndcg_at_5",
        returned,
        {"model.factors": 8},
        step=trial,
        tracking_uri=store_uri,
        tags={"recoeval.best.run_id": best_child} if names_its_run else None,
    )
    finish_sweep_parent(parent.run_id, tracking_uri=store_uri)

    children = client.search_runs(
        [parent.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.run_id}'"
    )
    best = client.get_run(parent.run_id).data.metrics
    for metric in ("ndcg_at_5", "p_at_5", "r_at_5"):
        child_values = [c.data.metrics[metric] for c in children]
        assert best[f"best_{metric}"] == max(child_values), metric
    by_id = {c.info.run_id: c.data.metrics["ndcg_at_5"] for c in children}
    assert best["best_ndcg_at_5"] == by_id[best_child] != returned
    # and that value is the mean of the best child's own per-user table
    per_user = pd.read_parquet(tmp_path / f"job{trial}" / "per_user.parquet")
    v = per_user["ndcg_at_5"].to_numpy(dtype=np.float64)
    assert best["best_ndcg_at_5"] == v[~np.isnan(v)].mean()
    # the curve over trials is kept: the search's best is logged at its trial's step; once
    # when the search named the trial's run (its logged value recorded), else corrected
    history = client.get_metric_history(parent.run_id, "best_ndcg_at_5")
    assert {m.step for m in history} == {trial}
    assert max(history, key=lambda m: m.timestamp).value == by_id[best_child]
    assert len(history) == (1 if names_its_run else 2)


def test_metrics_json_is_what_the_run_holds(tmp_path, store_uri):
    """Every mean of ``metrics.json`` (NaN aside) reaches the run unchanged."""
    from mlflow import MlflowClient

    _, path = _job(tmp_path, "job", seed=5)
    run = MlflowClient(store_uri).get_run(log_job_dir(path, tracking_uri=store_uri))
    exact = json.loads((path / "metrics.json").read_text())
    means = {
        k: v
        for k, v in exact.items()
        if v is not None and not k.endswith(("_ci95_low", "_ci95_high"))
    }
    assert means and {k: run.data.metrics[k] for k in means} == means
