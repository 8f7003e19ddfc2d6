"""Params and run names for MLflow: secrets dropped, tracking keys left out (no store needed)."""

from __future__ import annotations

from recoeval_tracking.jobdir.redact import REDACTED
from recoeval_tracking.tracking.client import params_from_config, run_name_from_overrides


def test_params_from_config_drops_secrets():
    got = params_from_config({"tracking": {"uri": "http://u:pw@h", "password": "x"},
                              "metrics": {"k": 10}}, {"db": {"api_key": "y"}, "seed": 3})
    assert got == {"tracking.uri": f"http://u:{REDACTED}@h", "metrics.k": "10", "seed": "3"}


def test_run_name_leaves_tracking_keys_and_secrets_out():
    name = run_name_from_overrides(["model=als", "model.factors=64", "tracking.uri=http://x",
                                    "hydra.launcher=joblib", "db.password=abc"])
    assert name == "model=als,model.factors=64"
    assert run_name_from_overrides([]) is None
    assert run_name_from_overrides(["tracking.experiment=x"]) is None
