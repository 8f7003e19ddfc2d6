"""The studies of these tests run through the command's entry point in the test process
(:func:`study_here`), except the guide's exact command (``tests/sweeps/test_baselines.py``), which
runs as the console script a user types."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from commands import run_main  # tests/ is on sys.path (tests/conftest.py)


def study_here(
    tmp_path_factory: Any, migrated_db: Path, name: str, args: list[str]
) -> tuple[Path, subprocess.CompletedProcess]:
    """Run the sweep ``args`` once through ``recoeval-track``'s entry point in this process
    (:func:`commands.run_main`: its exit status and output as the process would give them), in a
    new folder holding a copy of the migrated SQLite store, its sweep folder ``multirun/s``; as
    :func:`commands.sweep_in_store` does in a fresh process, without an interpreter, the package's
    and MLflow's imports to start. Returns the folder and the outcome (asserted to have
    succeeded)."""
    root = tmp_path_factory.mktemp(name)
    shutil.copyfile(migrated_db, root / "mlflow.db")
    proc = run_main([*args, "hydra.sweep.dir=multirun/s"], root)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    return root, proc
