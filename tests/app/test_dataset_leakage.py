"""``dataset.json`` carries the split's leakage, and the upload makes its shares metrics."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.app.pipeline import run_job
from recoeval_tracking.app.stages import dataset_record
from recoeval_tracking.app.stored import StoredSplit
from recoeval_tracking.data import from_dataframe
from recoeval_tracking.jobdir import read_job_dir
from recoeval_tracking.splitting import measure_leakage
from recoeval_tracking.tracking.runs import leakage_metrics


def test_the_record_holds_the_leakage_of_the_split(tmp_path):
    X = rt.make_synthetic(n_users=60, n_items=30, n_interactions=600, seed=0)
    split = rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.1, seed=0)
    info = dataset_record(X, split, {"kind": "synthetic"}, tmp_path)
    assert info["leakage"] == measure_leakage(split)
    assert set(info["leakage"]) == {"split_fingerprint", "test", "validation"}
    assert info["leakage"]["split_fingerprint"] == info["split_fingerprint"]
    json.dumps(info["leakage"], allow_nan=False)  # plain JSON


def test_no_timestamps_or_a_stored_split_by_reference_record_none(tmp_path):
    X = from_dataframe(
        pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 3], "value": [1.0] * 4})
    )
    split = rt.make_split("random", X, test_fraction=0.5, seed=0)
    assert dataset_record(X, split, {"kind": "csv"}, tmp_path)["leakage"] is None
    manifest = {"fingerprint": "f" * 16, "train_interactions": 3, "test_interactions": 1}
    stored = StoredSplit(SimpleNamespace(manifest=manifest, url="x"))
    assert dataset_record(X, stored, {"kind": "csv"}, tmp_path)["leakage"] is None


def test_a_job_writes_it_and_its_shares_become_metrics(tmp_path):
    cfg = {
        "dataset": {"kind": "synthetic", "n_users": 80, "n_items": 40, "seed": 0},
        "split": {"name": "random", "seed": 0, "test_fraction": 0.2},
        "model": {"name": "popularity"},
        "metrics": {"names": ["ndcg"], "k": 5},
        "tracking": {"enabled": False},
        "seed": 0,
        "nthreads": 1,
        "progress": "false",
        "plots": False,
    }
    result = run_job(cfg, tmp_path / "job", echo=False)
    written = json.loads((tmp_path / "job" / "dataset.json").read_text())
    leak = written["leakage"]
    assert leak == result["dataset"]["leakage"] and set(leak) == {"split_fingerprint", "test"}
    assert leak["test"]["entries"] == written["test_interactions"]
    metrics = leakage_metrics(read_job_dir(tmp_path / "job"))
    assert metrics == {
        "leakage_test_entries_share": pytest.approx(leak["test"]["entries_share"], rel=0),
        "leakage_test_users_share": pytest.approx(leak["test"]["users_share"], rel=0),
    }


def test_metric_names_per_evaluation_and_shares_without_a_denominator_left_out():
    record = {
        "split_fingerprint": "0" * 16,
        "test": {"entries_share": 0.5, "users_share": None, "entries": 2},
        "validation": {"entries_share": 0.0, "users_share": 1.0},
    }
    assert leakage_metrics(SimpleNamespace(dataset={"leakage": record})) == {
        "leakage_test_entries_share": 0.5,
        "leakage_validation_entries_share": 0.0,
        "leakage_validation_users_share": 1.0,
    }
    assert leakage_metrics(SimpleNamespace(dataset={"leakage": None})) == {}
    assert leakage_metrics(SimpleNamespace(dataset=None)) == {}
