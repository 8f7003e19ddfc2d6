"""Fixtures for the report tests: isolated SQLite MLflow stores (one migrated database per
session, copied for each test) and synthetic runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(autouse=True)
def _no_ambient_tracking(monkeypatch):
    """Tests never fall back on the user's store or environment."""
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME",
                "MLFLOW_EXPERIMENT_ID"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory) -> Path:
    from mlflow import MlflowClient

    path = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def store_uri(tmp_path, migrated_db) -> str:
    db = tmp_path / "mlflow.db"
    shutil.copyfile(migrated_db, db)
    return f"sqlite:///{db}"


def synthetic_run(run_id: str, means: dict[str, float], n_users: int = 300, seed: int = 0,
                  fingerprints: dict[str, str] | None = None, user_ids=None,
                  params: dict | None = None):
    """A RunData whose per-user values are Beta-distributed around the given means."""
    from recoeval_tracking.reporting.report import RunData

    rng = np.random.default_rng(seed)
    ids = np.arange(n_users) if user_ids is None else np.asarray(user_ids)
    df = pd.DataFrame({"user_id": ids, "n_train": (np.arange(ids.size) % 40) + 1,
                       "n_test": 5})
    for m, mu in means.items():
        df[m] = rng.beta(mu * 10, (1 - mu) * 10, ids.size)
    fps = {"data": "d1", "split": "s1", "definitions": "f1"} if fingerprints is None \
        else fingerprints
    return RunData(run_id=run_id, name=run_id, per_user=df, fingerprints=fps,
                   params=params or {})
