"""The top-level ``objective`` setting: checked before any data is read, and returned by the
job (what ``hydra/sweeper=optuna`` optimises)."""

from __future__ import annotations

import json

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.app.pipeline import run_job
from recoeval_tracking.app.precheck import check_objective

from .test_pipeline import tiny_config


@pytest.mark.parametrize(
    "objective,k",
    [
        (None, 10),
        ("ndcg_at_10", 10),
        ("r_at_5", 5),
        ("mpr", 10),
        ("roc_auc", 10),
        ("fit_seconds", 10),
        ("coverage_at_10", 10),
        ("ndcg_at_10", None),
    ],
)
def test_objectives_a_job_reports_are_accepted(objective, k):
    check_objective(objective, k)


@pytest.mark.parametrize(
    "objective,k,message",
    [
        ("ndcg10", 10, "objective must be the key of a metric the job reports"),
        ("ndcg_at_k", 10, "objective must be the key of a metric"),  # a curve, not one value
        ("ndcg_at_20", 10, "Set metrics.k=20 or objective=ndcg_at_10"),
        (3, 10, "objective must be the key of a metric the job reports (str) or null"),
        ("", 10, "objective must be"),
    ],
)
def test_other_objectives_are_refused_with_the_key_to_change(objective, k, message):
    with pytest.raises(InputError) as info:
        check_objective(objective, k)
    assert message in str(info.value)


def test_the_job_returns_its_objective(tmp_path):
    out = tmp_path / "job"
    result = run_job(tiny_config(objective="ndcg_at_10"), out, echo=False)
    written = json.loads((out / "metrics.json").read_text())
    assert result["objective"] == pytest.approx(written["ndcg_at_10"], rel=1e-12)
    assert run_job(tiny_config(), tmp_path / "none", echo=False)["objective"] is None


def test_an_objective_the_metrics_do_not_compute_is_named(tmp_path):
    cfg = tiny_config(metrics__names=["p"], objective="ndcg_at_10")
    with pytest.raises(InputError, match="objective must be one of the job's results"):
        run_job(cfg, tmp_path / "job", echo=False)
