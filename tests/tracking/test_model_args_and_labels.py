"""A user's model shows the arguments its class received (defaults included), in its repr, the
job folder and the run's params; a run's display name (``label``) is its name and a tag."""

from __future__ import annotations

import json

import pytest
from results_factory import make_results

from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.runs import log_job_dir

MODEL_CODE = """
class CosineItemKNN:
    def __init__(self, neighbours, shrink=10.0, similarity="cosine", *, blocks=(1, 2)):
        self.neighbours, self.shrink = neighbours, shrink

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        raise NotImplementedError


class Shown(CosineItemKNN):
    def __repr__(self):
        return "Shown(its own words)"
"""


@pytest.fixture
def user_package(tmp_path):
    pkg = tmp_path / "userpkg_args"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "knn.py").write_text(MODEL_CODE)
    return tmp_path


def test_a_configured_model_shows_every_argument_its_class_received(user_package):
    from recoeval_tracking.app.user_model import instantiate_model, model_record

    section = {"_target_": "userpkg_args.knn.CosineItemKNN", "neighbours": 50}
    model = instantiate_model(section, "cosknn", user_package)
    # the config gave neighbours; shrink, similarity and blocks are the class's defaults
    assert repr(model) == (
        "CosineItemKNN(neighbours=50, shrink=10.0, similarity='cosine', blocks=[1, 2])"
    )
    assert model.params() == {
        "neighbours": 50,
        "shrink": 10.0,
        "similarity": "cosine",
        "blocks": [1, 2],
    }
    record = model_record(model)
    assert record["name"] == "cosknn" and record["description"] == repr(model)
    assert record["args"] == model.params()
    # a class with a repr of its own keeps it
    own = instantiate_model(
        {"_target_": "userpkg_args.knn.Shown", "neighbours": 5}, "shown", user_package
    )
    assert repr(own) == "Shown(its own words)"


def test_model_args_and_label_reach_the_job_folder_and_the_run(tmp_path, store_uri):
    from mlflow import MlflowClient

    config = {"label": "CosKNN (ours)", "model": {"_target_": "m.CosineItemKNN", "neighbours": 50}}
    record = {
        "name": "cosknn",
        "description": "CosineItemKNN(neighbours=50, shrink=10.0)",
        "args": {"neighbours": 50, "shrink": 10.0},
    }
    path = write_job_dir(
        make_results(n_users=30, k=3),
        tmp_path / "job",
        config_yaml=config,
        overrides=["model=cosknn", "label=CosKNN (ours)"],
        plots=False,
        model=record,
    )
    job = json.loads((path / "job.json").read_text())
    assert job["label"] == "CosKNN (ours)" and job["model"] == record
    # no run name given (a later sync): the label is the name
    run = MlflowClient(store_uri).get_run(log_job_dir(path, tracking_uri=store_uri))
    assert run.info.run_name == "CosKNN (ours)"
    assert run.data.tags["recoeval.label"] == "CosKNN (ours)"
    assert run.data.tags["recoeval.model"] == "CosineItemKNN(neighbours=50, shrink=10.0)"
    # the config's argument and the default it left out are both params
    assert run.data.params["model.neighbours"] == "50"
    assert run.data.params["model.shrink"] == "10.0"


def test_without_a_label_a_target_model_is_named_after_its_config_option(tmp_path, store_uri):
    from mlflow import MlflowClient

    config = {"dataset": {"name": "toy"}, "model": {"_target_": "m.CosineItemKNN"}}
    path = write_job_dir(
        make_results(n_users=30, k=3),
        tmp_path / "job",
        config_yaml=config,
        plots=False,
        model={"name": "cosknn", "args": {}},
    )
    assert "label" not in json.loads((path / "job.json").read_text())
    run = MlflowClient(store_uri).get_run(log_job_dir(path, tracking_uri=store_uri))
    assert run.info.run_name == "toy cosknn"
    assert "recoeval.label" not in run.data.tags


def test_a_bad_model_record_is_refused_by_name(tmp_path):
    from recoeval_tracking import InputError

    with pytest.raises(InputError, match="'model'"):
        write_job_dir(make_results(n_users=10, k=3), tmp_path / "job", model="cosknn")
