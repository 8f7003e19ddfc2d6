"""The environment of a command that a test runs as a real process (the app's and the fault
tests'): no ambient MLflow or Hydra settings, and the package the tests import first on
``PYTHONPATH`` (this checkout, or the mutated copy that tools/mutate.py puts first)."""

from __future__ import annotations

import os
from pathlib import Path

import recoeval_tracking

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The folder holding the package the tests import: the checkout, or a copy put first on the
#: path (mutation testing), which the processes must import too.
PACKAGE_ROOT = Path(recoeval_tracking.__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """``os.environ`` without MLflow's and Hydra's settings, with the tests' package importable."""
    env = dict(os.environ)
    for var in (
        "MLFLOW_TRACKING_URI",
        "MLFLOW_RUN_ID",
        "MLFLOW_EXPERIMENT_NAME",
        "MLFLOW_EXPERIMENT_ID",
        "HYDRA_FULL_ERROR",
    ):
        env.pop(var, None)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
