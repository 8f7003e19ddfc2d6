"""Fixtures for the application tests: the command in a subprocess, isolated MLflow stores.

Every subprocess runs in its own temporary directory with ``MLFLOW_TRACKING_URI`` unset, so the
default ``tracking=local`` store is ``<that directory>/mlflow.db`` (the directory the command was
started from, not the Hydra job directory). Creating MLflow's SQLite schema costs seconds, so one
migrated database is made per session and copied where a test needs a store.
"""

from __future__ import annotations

import pytest
from commands import REPO_ROOT, clean_env, run_command, run_main  # noqa: F401 - re-exported to the app tests

#: A dataset small enough that a job runs in about a second once numba's cache is warm.
TINY_DATA = ["dataset.n_users=120", "dataset.n_items=60"]
#: A small ALS (only valid with model=als).
TINY_ALS = ["model.factors=8", "model.iterations=5"]
#: No plots, no progress bars, one thread.
QUIET = ["plots=false", "progress=false", "nthreads=1"]


@pytest.fixture
def local_store(store_uri) -> str:
    """``tmp_path/mlflow.db`` ready to use: the store of ``tracking=local`` for a command run
    in ``tmp_path``. Returns its URI."""
    return store_uri
