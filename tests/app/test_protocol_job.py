"""One job of a split with a validation part (:mod:`recoeval_tracking.app.protocol`): fit on
train and evaluated on validation (``val_*``), then refit on train + validation and evaluated
once on test; ``phase=selection`` stops after validation and names every number ``val_*``.

Expected values come from the Python API on the same split (each phase's fit and evaluation
done by hand), not from the job.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.app.pipeline import load_data, run_job, split_data
from recoeval_tracking.jobdir import read_job_dir

from .test_pipeline import tiny_config


def _config(**changes):
    cfg = tiny_config(**changes)
    cfg["model"] = {"name": "item_knn", "neighbours": 15}
    cfg["metrics"] = {**cfg["metrics"], "names": ["ndcg", "p", "r"], "cumulative": False}
    cfg["split"] = {**cfg["split"], "validation_fraction": 0.15}
    return cfg


def _by_hand(cfg):
    split = split_data(load_data(cfg["dataset"]), cfg["split"])
    val, test = split.validation_split(), split.test_split()

    def run(part, fit_on):
        model = rt.make_model("item_knn", neighbours=15).fit(fit_on.matrix)
        return rt.evaluate(
            part.train,
            part.test,
            scores=model.score_source(),
            metrics=["ndcg", "p", "r"],
            k=10,
            seed=0,
        )

    return split, run(val, split.train), run(test, test.train), run(test, split.train)


def test_a_job_is_evaluated_on_validation_then_refit_and_tested(tmp_path):
    cfg = _config()
    result = run_job(cfg, tmp_path / "job", echo=False)
    split, val, test, _ = _by_hand(cfg)
    metrics = json.loads((tmp_path / "job" / "metrics.json").read_text())
    for name in ("ndcg_at_10", "p_at_10", "r_at_10"):
        assert metrics[f"val_{name}"] == pytest.approx(val.means[name], abs=1e-12)
        assert metrics[name] == pytest.approx(test.means[name], abs=1e-12)
    assert metrics["val_users_evaluated"] == val.n_users_evaluated
    assert "refit_seconds" in metrics and "eval_validation_seconds" in metrics
    table = pd.read_parquet(tmp_path / "job" / "per_user_validation.parquet")
    assert {"val_ndcg_at_10", "n_validation"} <= set(table.columns)
    got = table.set_index("user_id")["val_ndcg_at_10"].dropna().sort_index()
    want = val.per_user.set_index("user_id")["ndcg_at_10"].dropna().sort_index()
    pd.testing.assert_series_equal(got, want, check_names=False)
    # the objective of a search is read on validation
    assert result["part"] == "test"
    dataset = json.loads((tmp_path / "job" / "dataset.json").read_text())
    assert dataset["protocol"]["evaluated_on"] == "test" and dataset["protocol"]["refit"]
    assert dataset["split_fingerprint"] == split.test_split().fingerprint


def test_the_objective_is_read_on_validation(tmp_path):
    cfg = {**_config(), "objective": "ndcg_at_10"}
    result = run_job(cfg, tmp_path / "job", echo=False)
    _, val, test, _ = _by_hand(cfg)
    assert result["objective"] == pytest.approx(val.means["ndcg_at_10"], abs=1e-12)
    assert result["objective"] != pytest.approx(test.means["ndcg_at_10"], abs=1e-6)


def test_refit_false_keeps_the_first_fit_and_still_excludes_validation_items(tmp_path):
    cfg = {**_config(), "refit": False}
    run_job(cfg, tmp_path / "job", echo=False)
    _, _, refit, kept = _by_hand(cfg)
    metrics = json.loads((tmp_path / "job" / "metrics.json").read_text())
    assert metrics["ndcg_at_10"] == pytest.approx(kept.means["ndcg_at_10"], abs=1e-12)
    assert metrics["ndcg_at_10"] != pytest.approx(refit.means["ndcg_at_10"], abs=1e-6)
    assert "refit_seconds" not in metrics


def test_a_selection_job_has_validation_numbers_only(tmp_path):
    cfg = {**_config(), "phase": "selection"}
    result = run_job(cfg, tmp_path / "job", echo=False)
    _, val, _, _ = _by_hand(cfg)
    job = read_job_dir(tmp_path / "job")
    metric_keys = [k for k in job.metrics if not k.endswith("_seconds")]
    assert metric_keys and all(k.startswith("val_") for k in metric_keys)
    assert job.metrics["val_ndcg_at_10"] == pytest.approx(val.means["ndcg_at_10"], abs=1e-12)
    assert all(c.startswith("val_") for c in job.metric_columns)
    definitions = json.loads((tmp_path / "job" / "definitions.json").read_text())
    assert definitions["evaluated_on"] == "validation"
    assert result["metrics"] == {} and result["part"] == "validation"
    assert not (tmp_path / "job" / "per_user_validation.parquet").exists()


def test_a_split_without_validation_runs_as_before(tmp_path):
    cfg = tiny_config()
    run_job(cfg, tmp_path / "job", echo=False)
    metrics = json.loads((tmp_path / "job" / "metrics.json").read_text())
    assert not any(k.startswith("val_") for k in metrics)
    dataset = json.loads((tmp_path / "job" / "dataset.json").read_text())
    assert dataset["protocol"] == {
        "evaluated_on": "test",
        "phase": "auto",
        "validation": False,
        "refit": False,
        "split_fingerprint": dataset["split_fingerprint"],
    }


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"phase": "choose"}, "phase"),
        ({"refit": "yes"}, "refit"),
        ({"phase": "selection", "split": {"name": "random", "seed": 0}}, "validation_fraction"),
    ],
)
def test_bad_protocol_settings_are_refused(tmp_path, changes, says):
    cfg = {**_config(), **changes}
    with pytest.raises(InputError, match=says):
        run_job(cfg, Path(tmp_path) / "job", echo=False)
