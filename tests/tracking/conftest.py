"""Fixtures for tracking tests: isolated SQLite stores and a real ``mlflow server``.

Creating MLflow's SQLite schema takes several seconds on a small machine, so one migrated
database is made per session and copied for each test: every test still gets its own store
(``sqlite:///{tmp_path}/mlflow.db``, artifacts in ``tmp_path/mlartifacts``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mlflow_server import MlflowServer, free_port, served  # noqa: E402  (tests/ is on sys.path)

__all__ = ["MlflowServer", "free_port"]


@pytest.fixture
def mlflow_server(tmp_path, migrated_db):
    with served(tmp_path / "server", migrated_db) as server:
        yield server
