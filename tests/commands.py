"""The environment of a command that a test runs as a real process (the app's and the fault
tests'): no ambient MLflow or Hydra settings, and this checkout first on ``PYTHONPATH``."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """``os.environ`` without MLflow's and Hydra's settings, with this checkout importable."""
    env = dict(os.environ)
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME",
                "MLFLOW_EXPERIMENT_ID", "HYDRA_FULL_ERROR"):
        env.pop(var, None)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
