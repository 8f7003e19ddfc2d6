"""What a job's run says of itself in the MLflow UI: its description is one line (its model, the
values its sweep varies, its data and split, its headline value), and it has one name wherever
it is shown: the run the app logs, the run a later sync makes of its folder, and a report read
from the folder all name it after the model option the job ran (``ease lam=500``), never after
the class of the option's ``_target_`` (``EASE``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from results_factory import make_results
from sweep_children import upload_child

from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.names import job_run_name
from recoeval_tracking.tracking.runs import log_job_dir
from recoeval_tracking.tracking.sweeps import create_sweep_parent, write_sweep_record

K = 5
#: A user's own model, as ``model=ease model.lam=500`` composes it (``conf/model/ease.yaml``).
CONFIG = {
    "dataset": {"name": "movielens_100k"},
    "split": {"name": "temporal_user"},
    "model": {"_target_": "my_models.ease.EASE", "lam": 500},
}
OVERRIDES = ["model=ease", "model.lam=500", "seed=1"]
MODEL = {"name": "ease", "description": "EASE(lam=500)", "args": {"lam": 500}}


def _job(folder, config=CONFIG, overrides=OVERRIDES):
    return write_job_dir(
        make_results(n_users=40, k=K),
        folder,
        config_yaml=config,
        overrides=overrides,
        plots=False,
        model=MODEL,
    )


def _headline(path) -> str:
    """``ndcg_at_5 = ...`` from the job's own files: the mean of its per-user column over the
    users where it is defined, and the interval ``metrics.json`` records."""
    per_user = pd.read_parquet(path / "per_user.parquet")
    mean = float(np.nanmean(per_user[f"ndcg_at_{K}"].to_numpy(dtype=float)))
    metrics = json.loads((path / "metrics.json").read_text())
    low, high = metrics[f"ndcg_at_{K}_ci95_low"], metrics[f"ndcg_at_{K}_ci95_high"]
    return f"ndcg_at_{K} = {mean:.4f} (95% interval {low:.4f} to {high:.4f})"


@pytest.fixture
def sweep_job(tmp_path, store_uri):
    """Job 3 of a sweep over ``model.lam`` whose parent exists, as the sweep callback leaves
    it: the sweep's record (its swept keys) above the job's folder."""
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="descriptions")
    sweep_dir = tmp_path / "multirun"
    write_sweep_record(
        sweep_dir,
        {
            "sweep_id": parent.sweep_id,
            "parent_run_id": parent.run_id,
            "tracking_uri": store_uri,
            "experiment": "descriptions",
            "swept_keys": ["model.lam"],
        },
    )
    return parent, _job(sweep_dir / "3")


def _uploaded(store_uri, parent, path, **given):
    """The run the upload makes of the sweep's job, as the store holds it."""
    from mlflow import MlflowClient

    run_id = upload_child(path, parent, store_uri, "descriptions", **given)
    return MlflowClient(store_uri).get_run(run_id)


def test_a_sweep_child_describes_itself_in_one_line(sweep_job, store_uri):
    parent, path = sweep_job
    run = _uploaded(store_uri, parent, path, run_name="ease lam=500")  # as the app logs it
    note = run.data.tags["mlflow.note.content"]
    # the model, the swept value (seed is not swept), the data and split, the headline value
    assert note == f"ease with lam=500 on movielens_100k, split temporal_user: {_headline(path)}."
    assert "\n" not in note


def test_a_sweep_job_synced_later_gets_the_name_the_app_gives_it(sweep_job, store_uri):
    parent, path = sweep_job
    # a job killed before its upload: the sync uploads it without a run name, and finds its
    # parent by its sweep id
    run = _uploaded(store_uri, parent, path, parent_run_id=None)
    # the model option's name and the swept value, as the app names the job (not "EASE ...",
    # the class of the option's _target_, nor the plain run's "movielens_100k ease lam=500")
    assert run.info.run_name == "ease lam=500"
    assert run.data.tags["mlflow.parentRunId"] == parent.run_id


def test_a_plain_run_shows_its_model_overrides(tmp_path, store_uri):
    from mlflow import MlflowClient

    config = {**CONFIG, "split": {"name": "kfold", "fold": 2}}
    path = _job(tmp_path / "job", config)
    run = MlflowClient(store_uri).get_run(log_job_dir(path, tracking_uri=store_uri))
    assert run.info.run_name == "movielens_100k ease lam=500"
    assert run.data.tags["mlflow.note.content"] == (
        f"ease with lam=500 on movielens_100k, split kfold fold 2: {_headline(path)}."
    )


def test_the_job_name_is_the_model_option_not_the_target_class():
    model_name = MODEL["name"]
    assert job_run_name(CONFIG, OVERRIDES, model_name=model_name, swept=["model.lam"]) == (
        "ease lam=500"
    )
    # a fair study's selection job says what it was read on
    selection = {**CONFIG, "phase": "selection"}
    assert job_run_name(selection, OVERRIDES, model_name=model_name, swept=["model.lam"]) == (
        "ease lam=500 (validation)"
    )


def test_a_report_read_from_the_folder_names_the_job_as_its_run(sweep_job):
    from recoeval_tracking.reporting.runs import RunData

    _, path = sweep_job
    assert RunData.from_job_dir(path).name == "ease lam=500"
