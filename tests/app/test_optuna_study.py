"""The study record of an Optuna search, kept as the grid sweeper keeps it: a plan over the
sweep's config with no grid, each trial's job attached as it ends (its fit seconds, its
validation value, its failure). A trial whose objective is undefined (NaN, written as null in
``metrics.json``) is a value never chosen, not a missing objective that stops the search.

The jobs are stand-ins for Hydra's ``JobReturn``: a status and an output folder holding the
``metrics.json`` a job writes; the expected values are the ones written there.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from hydra.core.utils import JobStatus
from omegaconf import OmegaConf

from recoeval_tracking._validation import InputError
from recoeval_tracking.app.study import Candidate, StudyPlan


def _config():
    return OmegaConf.create(
        {
            "objective": "ndcg_at_10",
            "metrics": {"k": 10},
            "split": {"name": "random", "validation_fraction": 0.2},
            "refit": True,
            "seed": 0,
        }
    )


def _job(folder: Path, metrics: dict | None) -> SimpleNamespace:
    """A launched job: completed with ``metrics`` in its folder, or failed (None)."""
    folder.mkdir()
    if metrics is not None:
        (folder / "metrics.json").write_text(json.dumps(metrics))
    return SimpleNamespace(
        status=JobStatus.COMPLETED if metrics is not None else JobStatus.FAILED,
        hydra_cfg=OmegaConf.create({"hydra": {"runtime": {"output_dir": str(folder)}}}),
    )


def test_trials_attached_to_a_plan_without_a_grid_fill_the_record(tmp_path):
    plan = StudyPlan(_config(), [], [], [_config()])
    assert plan.on_validation and plan.candidates == []
    trials = [Candidate([f"model.factors={f}"], "als") for f in (4, 8, 0)]
    plan.candidates += trials
    jobs = [
        _job(tmp_path / "0", {"val_ndcg_at_10": None, "fit_seconds": 0.25}),  # NaN: undefined
        _job(tmp_path / "1", {"val_ndcg_at_10": 0.5, "fit_seconds": 0.5}),
        _job(tmp_path / "2", None),
    ]
    plan.attach(trials, jobs, "selection")
    assert math.isnan(trials[0].value) and trials[1].value == 0.5 and trials[2].failed
    plan.chosen[trials[1].group] = trials[1]
    plan.attach(
        [trials[1]], [_job(tmp_path / "t", {"fit_seconds": 1.0, "refit_seconds": 2.0})], "test"
    )
    entry = plan.record()["systems"]["als"]
    assert entry["fit_seconds"] == 0.25 + 0.5 + 1.0 + 2.0
    assert (entry["configurations"], entry["jobs"], entry["failed"]) == (3, 3, 1)
    assert entry["chosen"] == [{"overrides": ["model.factors=8"], "replicate": [], "value": 0.5}]
    assert plan.record()["protocol"].endswith(
        "failed jobs: als 1 of 3 configurations on validation (not chosen from)"
    )


def test_an_objective_the_jobs_do_not_compute_is_still_refused(tmp_path):
    plan = StudyPlan(_config(), [], [], [_config()])
    trial = Candidate(["model.factors=4"], "als")
    with pytest.raises(InputError, match="'ndcg_at_10' is not among the results"):
        plan.attach([trial], [_job(tmp_path / "0", {"val_p_at_10": 0.1})], "selection")
