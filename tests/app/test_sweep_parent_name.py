"""The sweep's parent run is named after what the sweep varies (its swept keys), so that it
reads as that sweep in the MLflow UI; without swept keys it keeps the default name built from the
sweep id (``sweep-<id>``)."""

from __future__ import annotations

from types import SimpleNamespace

from omegaconf import OmegaConf

from recoeval_tracking.app import callbacks
from recoeval_tracking.tracking import sweeps


def _config(task: list[str]):
    return OmegaConf.create(
        {
            "hydra": {
                "overrides": {"task": task},
                "launcher": {"_target_": "hydra._internal.BasicLauncher"},
            }
        }
    )


def _created_with(monkeypatch, tmp_path, task):
    seen = {}

    def fake_create(**kw):
        seen.update(kw)
        return SimpleNamespace(run_id="r1")

    monkeypatch.setattr(sweeps, "create_sweep_parent", fake_create)
    run_id = callbacks._create_parent(_config(task), tmp_path, "file:///nowhere", "exp", "abc")
    assert run_id == "r1"
    return seen


def test_parent_is_named_after_the_swept_keys(monkeypatch, tmp_path):
    seen = _created_with(
        monkeypatch, tmp_path, ["model=als,popularity", "seed=0,1", "dataset.n_users=50"]
    )
    name = seen["run_name"]
    assert name.startswith("sweep") and "model" in name and "seed" in name, name
    assert "n_users" not in name  # a key with one value is not swept
    assert seen["sweep_id"] == "abc"


def test_parent_without_swept_keys_keeps_the_default_name(monkeypatch, tmp_path):
    assert _created_with(monkeypatch, tmp_path, ["seed=3"])["run_name"] is None
