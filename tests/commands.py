"""The environment of a command that a test runs as a real process (the app's and the fault
tests'): no ambient MLflow or Hydra settings, and the package the tests import first on
``PYTHONPATH`` (this checkout, or the mutated copy that tools/mutate.py puts first)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def run_command(
    args: list[str],
    cwd: Path,
    *,
    module: bool = True,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run ``python -m recoeval_tracking ARGS`` (or the ``recoeval-track`` script) in ``cwd``."""
    if module:
        cmd = [sys.executable, "-m", "recoeval_tracking", *args]
    else:
        script = Path(sys.executable).with_name("recoeval-track")
        if not script.is_file():
            pytest.skip("the recoeval-track console script is not installed in this environment")
        cmd = [str(script), *args]
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
