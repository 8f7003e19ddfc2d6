"""``mlflow.models.evaluate(..., evaluators="recoeval")`` on ML-100K, read back from SQLite.

The expected numbers come from :func:`recoeval_tracking.evaluate` called here on the split's
matrices with the same scores (a dense popularity array, and the ALS factors' product through
``scorer=``), not from the frames the evaluator receives; the run is read back with
:class:`mlflow.MlflowClient`.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from importlib.metadata import entry_points

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.models import infer_signature
from mlflow.models.evaluation.validation import ModelValidationFailedException
from shared_paths import shared_file

import recoeval_tracking as rt
from recoeval_tracking.jobdir import curves_table, job_metrics
from recoeval_tracking.tracking.evaluator import RecoevalEvaluator, metric_threshold

K = 10
OPTIONS = {
    "k": K,
    "cumulative": True,
    "metrics": ["p", "r", "ap", "ndcg", "hit", "rr", "roc_auc", "mpr", "coverage"],
}


@dataclass
class Evaluated:
    result: object  # what mlflow.models.evaluate returned
    expected: object  # rt.evaluate on the same input


class FactorScorer(mlflow.pyfunc.PythonModel):
    """Scores every item for the users of ``model_input["user"]``: one row per user, one column
    per item id."""

    def __init__(self, A, B, user_ids, item_ids):
        self.A, self.B, self.user_ids, self.item_ids = A, B, user_ids, item_ids

    def predict(self, context, model_input, params=None):
        rows = pd.Index(self.user_ids).get_indexer(model_input["user"].to_numpy())
        return pd.DataFrame(self.A[rows] @ self.B.T, columns=self.item_ids)


@pytest.fixture(scope="module")
def split():
    # every rating a positive with its value as gain: the rule of the evaluator's targets
    X = rt.load_dataset(
        "movielens_100k",
        path=str(shared_file("ml-100k", "u.data")),
        relevance_level=None,
        gains="graded",
    )
    return rt.make_split("random", X, test_fraction=0.2, seed=1)


@pytest.fixture(scope="module")
def store(tmp_path_factory, migrated_db):
    """A SQLite store of this module's own, set as MLflow's tracking URI while it runs."""
    root = tmp_path_factory.mktemp("evaluator-store")
    shutil.copyfile(migrated_db, root / "mlflow.db")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    exp = mlflow.create_experiment("evaluator", artifact_location=(root / "art").as_uri())
    mlflow.set_experiment(experiment_id=exp)
    try:
        yield uri
    finally:
        mlflow.set_tracking_uri(previous)


def _frames(split):
    train = split.train.to_dataframe()[["user", "item"]]
    test = split.test.to_dataframe().rename(columns={"value": "rating"})
    return train, test[["user", "item", "rating"]]


@pytest.fixture(scope="module")
def static_eval(split, store):
    """Popularity scores for every item each user did not train on, as a predictions column."""
    pop = split.train.item_counts().astype(np.float64)
    dense = np.tile(pop, (split.train.n_users, 1))
    u, i = np.nonzero(split.train.matrix.toarray() == 0)
    data = pd.DataFrame(
        {
            "user": split.train.user_ids[u],
            "item": split.train.item_ids[i],
            "rating": split.test.matrix.toarray()[u, i],
            "score": dense[u, i],
        }
    )
    train, _ = _frames(split)
    # the dataset that mlflow.models.evaluate makes of a frame (from_pandas with its targets and
    # predictions), given its schema: MLflow would infer it to log the run's input, looking at
    # each of the 1.5M rows' values in Python for a missing one (4 s), and there is none
    assert not data.isna().to_numpy().any()
    dataset = mlflow.data.from_pandas(data, targets="rating", predictions="score")
    dataset.schema = infer_signature(data.head(1)).inputs
    with mlflow.start_run(run_name="popularity"):
        result = mlflow.models.evaluate(
            data=dataset,
            model_type="recommender",
            evaluators="recoeval",
            evaluator_config={"train": train, **OPTIONS},
        )
    return Evaluated(result, rt.evaluate(split.train, split.test, scores=dense, **OPTIONS))


@pytest.fixture(scope="module")
def model_eval(split, store, tmp_path_factory):
    """ALS factors behind a logged pyfunc model; the train pairs from a Parquet file."""
    als = rt.make_model("als", factors=16, iterations=5, seed=1, progress=False)
    als.fit(split.train.matrix)
    A, B = als.user_factors_.astype(np.float64), als.item_factors_.astype(np.float64)
    train, test = _frames(split)
    path = tmp_path_factory.mktemp("train") / "train.parquet"
    train.to_parquet(path)
    model = FactorScorer(A, B, split.train.user_ids, split.train.item_ids)
    info = mlflow.pyfunc.log_model(name="als", python_model=model, pip_requirements=[])
    result = mlflow.models.evaluate(
        info.model_uri,
        test,
        targets="rating",
        model_type="recommender",
        evaluators="recoeval",
        evaluator_config={"train": str(path), **OPTIONS},
    )
    expected = rt.evaluate(split.train, split.test, scorer=lambda rows: A[rows] @ B.T, **OPTIONS)
    return Evaluated(result, expected)


def _without_timings(metrics):
    return {k: v for k, v in metrics.items() if not k.endswith("_seconds")}


def _check_run(ev: Evaluated, uri: str) -> None:
    """Metrics equal the independent ones, the run holds them, the curves and the artifacts."""
    got, res = ev.result.metrics, ev.expected
    # the means as logged; the bounds are in the recoeval.ci95 tag, not metrics
    expected = {
        k: v
        for k, v in _without_timings(job_metrics(res)).items()
        if not k.endswith(("_ci95_low", "_ci95_high"))
    }
    assert set(_without_timings(got)) == set(expected)
    assert "coverage_at_10" in got and "mpr" in got and "eval_seconds" in got
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key

    client = MlflowClient(uri)
    run = client.get_run(ev.result.run_id)
    curves = curves_table(res)
    names = [c for c in curves.columns if c.endswith("_at_k")]
    assert set(run.data.metrics) == set(got) | set(names)
    for key, value in got.items():
        assert run.data.metrics[key] == pytest.approx(value, nan_ok=True), key
    for name in names:
        history = sorted(client.get_metric_history(run.info.run_id, name), key=lambda m: m.step)
        assert [m.step for m in history] == list(range(1, K + 1))
        np.testing.assert_allclose([m.value for m in history], curves[name], rtol=1e-12)
    assert run.data.tags["recoeval.definitions_fingerprint"] == res.fingerprint
    assert run.data.params["metrics.k"] == str(K)

    listed = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {
        "per_user.parquet",
        "metrics.json",
        "curves.csv",
        "definitions.json",
        "dataset.json",
        "config.yaml",
        "job.json",
        "plots",
    } <= listed
    plots = {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    assert "plots/curves.png" in plots
    arts = ev.result.artifacts
    assert {"per_user", "curves", "definitions", "plots/curves"} <= set(arts)
    per_user = arts["per_user"].content
    cols = res.metric_columns
    pd.testing.assert_frame_equal(per_user[cols], res.per_user[cols])
    np.testing.assert_array_equal(per_user["user_id"], res.per_user["user_id"])
    assert arts["per_user"].uri.endswith("/per_user.parquet")


def test_static_ranking(static_eval, store):
    _check_run(static_eval, store)
    assert static_eval.result.artifacts["dataset"].content["whole_ranking"] is True


def test_logged_pyfunc_model(model_eval, store):
    _check_run(model_eval, store)
    assert model_eval.result.artifacts["dataset"].content["input"] == "model"


def test_found_through_the_entry_point():
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    (ep,) = [e for e in entry_points(group="mlflow.model_evaluator") if e.name == "recoeval"]
    assert ep.load() is RecoevalEvaluator
    assert "recoeval" in mlflow.models.list_evaluators()
    assert isinstance(_model_evaluation_registry.get_evaluator("recoeval"), RecoevalEvaluator)
    assert RecoevalEvaluator.can_evaluate(model_type="recommender", evaluator_config={})
    assert not RecoevalEvaluator.can_evaluate(model_type="classifier", evaluator_config={})


def test_thresholds_and_baseline(model_eval, static_eval):
    als, pop = model_eval.result, static_eval.result
    assert als.metrics["ndcg_at_10"] > pop.metrics["ndcg_at_10"] + 0.02
    assert als.metrics["mpr"] < pop.metrics["mpr"]
    thresholds = {
        "ndcg_at_10": metric_threshold("ndcg_at_10", threshold=0.05, min_absolute_change=0.02),
        "mpr": metric_threshold("mpr", threshold=0.5, min_relative_change=0.05),
    }
    assert thresholds["ndcg_at_10"].greater_is_better
    assert not thresholds["mpr"].greater_is_better  # lower is better, from the registry
    mlflow.validate_evaluation_results(thresholds, als, pop)
    with pytest.raises(ModelValidationFailedException) as info:
        mlflow.validate_evaluation_results(thresholds, pop, als)
    assert "ndcg_at_10" in str(info.value) and "mpr" in str(info.value)


SMALL = pd.DataFrame(
    {
        "user": [1, 1, 2, 2],
        "item": [10, 11, 10, 11],
        "rating": [1.0, 0.0, 0.0, 1.0],
        "score": [0.9, 0.1, 0.2, 0.8],
    }
)


def _evaluate_small(config, data=SMALL, **kw):
    """``mlflow.models.evaluate`` of the recoeval evaluator on a static ranking (``data``'s
    ``score`` column, unless ``kw`` says otherwise), in a run of its own."""
    kw.setdefault("predictions", "score")
    with mlflow.start_run():
        return mlflow.models.evaluate(
            data=data,
            targets="rating",
            model_type="recommender",
            evaluators="recoeval",
            evaluator_config=config,
            **kw,
        )


@pytest.mark.parametrize(
    ("config", "kw", "words"),
    [
        (
            {"k": 1, "kk": 2},
            {},
            ["unknown keys ['kk']", "'k'", "'metrics'", "'train'", "'user_col'"],
        ),
        ({"k": 0}, {}, ["evaluator_config['k'] must be an int >= 1", "Got 0"]),
        (
            {"k": 5},
            {},
            [
                ("evaluator_config['k'] must be an int between 1 and the number of items (2)"),
                "Got 5",
            ],
        ),
        ({"metrics": ["ndcg", "nope"]}, {}, ["evaluator_config['metrics']", "'nope'"]),
        (
            {"user_col": "uid"},
            {},
            ["evaluator_config['user_col'] must be a column of data", "'uid'"],
        ),
        (
            {"train": 3},
            {},
            ["evaluator_config['train'] must be a pandas DataFrame", "3 (type int)"],
        ),
        (
            {"prediction_type": "prob"},
            {},
            ["evaluator_config['prediction_type']", "'rank'", "'prob'"],
        ),
        ({}, {"predictions": None}, ["a model, or predictions=", "Got neither"]),
        ({"train": SMALL[["user", "item"]]}, {}, ["not in evaluator_config['train']", "(1, 10)"]),
    ],
)
def test_errors_name_the_key(store, config, kw, words):
    with pytest.raises(MlflowException) as info:
        _evaluate_small(config, **kw)
    assert info.value.error_code == "INVALID_PARAMETER_VALUE"
    for word in words:
        assert word in info.value.message, (word, info.value.message)


def test_small_static_ranking_by_rank(store):
    ranks = SMALL.assign(score=[1, 2, 2, 1])  # the same order as the scores
    result = _evaluate_small({"k": 1, "prediction_type": "rank"}, ranks)
    assert result.metrics["p_at_1"] == 1.0 and result.metrics["users_evaluated"] == 2
    assert not math.isnan(result.metrics["ndcg_at_1"])


def test_unlisted_pairs_give_top_k_lists(store):
    # user 2 has no score for item 10 (and did not train on it): its ranking is incomplete
    partial = SMALL.iloc[[0, 1, 3]]
    warning = "1 \\(user, item\\) pairs .* ranked top-K lists"
    with pytest.warns(UserWarning, match=warning):
        result = _evaluate_small({"k": 1, "metrics": "all"}, partial)
    assert result.metrics["p_at_1"] == 1.0 and "roc_auc" not in result.metrics
    assert result.artifacts["dataset"].content["whole_ranking"] is False


def test_callable_model_on_an_mlflow_dataset(store):
    # predict returns an array; evaluator_config["item_ids"] names its columns
    scores = {1: [0.1, 0.9], 2: [0.8, 0.2]}

    def predict(frame):
        assert list(frame.columns) == ["uid"]
        return np.array([scores[u] for u in frame["uid"]])

    data = mlflow.data.from_pandas(
        SMALL.rename(columns={"user": "uid"}).drop(columns="score"), targets="rating", name="small"
    )
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            predict,
            data,
            model_type="recommender",
            evaluators="recoeval",
            evaluator_config={
                "k": 1,
                "user_col": "uid",
                "metrics": ["p", "roc_auc"],
                "item_ids": [11, 10],
            },
        )
    assert result.metrics["p_at_1"] == 1.0 and result.metrics["roc_auc"] == 1.0
    assert result.artifacts["per_user"].content["user_id"].tolist() == [1, 2]
