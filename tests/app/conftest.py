"""Fixtures for the application tests: the command in a subprocess, isolated MLflow stores.

Every subprocess runs in its own temporary directory with ``MLFLOW_TRACKING_URI`` unset, so the
default ``tracking=local`` store is ``<that directory>/mlflow.db`` (the directory the command was
started from, not the Hydra job directory). Creating MLflow's SQLite schema costs seconds, so one
migrated database is made per session and copied where a test needs a store.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# re-exported to the app tests
from commands import REPO_ROOT, clean_env, run_command, run_main, run_process  # noqa: F401

#: A dataset small enough that a job runs in about a second once numba's cache is warm.
TINY_DATA = ["dataset.n_users=120", "dataset.n_items=60"]
#: A small ALS (only valid with model=als).
TINY_ALS = ["model.factors=8", "model.iterations=5"]
#: The files of every job folder, whatever started the job.
RESULT_FILES = (
    "per_user.parquet",
    "metrics.json",
    "curves.csv",
    "definitions.json",
    "dataset.json",
    "config.yaml",
    "overrides.yaml",
    "job.json",
)
#: No plots, no progress bars, one thread.
QUIET = ["plots=false", "progress=false", "nthreads=1"]


def own_model_project(parent: Path, db: Path) -> Path:
    """A copy of ``examples/own_model`` (the project the docs tell a user to copy) in
    ``parent/own_model``, without what a run of it leaves, and the MLflow store ``db`` copied
    beside it as its ``mlflow.db``."""
    root = parent / "own_model"
    shutil.copytree(
        REPO_ROOT / "examples" / "own_model",
        root,
        ignore=shutil.ignore_patterns("__pycache__", "outputs", "multirun", "mlflow.db"),
    )
    shutil.copyfile(db, root / "mlflow.db")
    return root


def assert_ok(proc: subprocess.CompletedProcess) -> None:
    """The command exited 0; else the message shows its exit status, stdout and stderr."""
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


@pytest.fixture
def local_store(store_uri) -> str:
    """``tmp_path/mlflow.db`` ready to use: the store of ``tracking=local`` for a command run
    in ``tmp_path``. Returns its URI."""
    return store_uri


@pytest.fixture(scope="session")
def built_package(tmp_path_factory) -> Path:
    """The package as an installer builds it (setuptools ``build_py`` from pyproject.toml), from
    a copy of the sources (the checkout gets no build files): the folder that a non-editable
    install puts in site-packages. Built once per session; the tests only read it."""
    tmp_path = tmp_path_factory.mktemp("built-package")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        if (REPO_ROOT / name).is_file():
            shutil.copy(REPO_ROOT / name, src / name)
        else:
            (src / name).write_text("")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    shutil.copytree(REPO_ROOT / "recoeval_tracking", src / "recoeval_tracking", ignore=ignore)
    shutil.copytree(REPO_ROOT / "configs", src / "configs", ignore=ignore)
    if (REPO_ROOT / "hydra_plugins").is_dir():  # the package's Hydra plugins
        shutil.copytree(REPO_ROOT / "hydra_plugins", src / "hydra_plugins", ignore=ignore)
    lib = tmp_path / "lib"
    proc = run_process(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(lib),
        ],
        src,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return lib
