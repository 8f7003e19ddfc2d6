"""Re-running a saved job (``--config-path <job>/.hydra --config-name config``) with group
options on the command line: the saved config is fully composed (no defaults list), so Hydra
hands ``tracking=none`` over as a plain text value; the command composes the option itself.
The command's entry point runs in this process (:func:`commands.run_main`: its exit status and
output as the command's)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from recoeval_tracking.app.cli import option_node

from .conftest import QUIET, run_main


def _data(folder: Path) -> Path:
    lines = ["user,item,rating"] + [
        f"{u},{(u * 7 + j) % 30},1" for u in range(40) for j in range(6)
    ]
    path = folder / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_option_node_is_the_options_yaml_over_its_schema():
    node = option_node("tracking", "none")
    assert node is not None
    # configs/tracking/none.yaml says enabled: false, uri: null, experiment: recoeval
    assert node.enabled is False and node.uri is None and node.experiment == "recoeval"
    assert option_node("tracking", "no_such_option") is None


@pytest.fixture(scope="module")
def csv_job(tmp_path_factory) -> Path:
    """The job folder of one run on a small CSV file with ``tracking=none``; the tests re-run its
    saved config (and only read the folder)."""
    start = tmp_path_factory.mktemp("start")
    _data(start)
    proc = run_main(
        [
            "dataset=csv",
            "dataset.path=d.csv",
            "model=popularity",
            "metrics.k=5",
            "tracking=none",
            *QUIET,
        ],
        start,
    )
    assert proc.returncode == 0, proc.stderr
    (job,) = [p.parent for p in (start / "outputs").rglob("per_user.parquet")]
    return job


def test_rerun_with_group_overrides(tmp_path, csv_job):
    job, other = csv_job, tmp_path / "other"
    other.mkdir()
    # tracking=local in the saved config, then tracking=none on the re-run's command line
    saved_dir = tmp_path / "saved"
    shutil.copytree(job / ".hydra", saved_dir)
    saved = saved_dir / "config.yaml"
    saved.write_text(saved.read_text().replace("enabled: false", "enabled: true"))
    assert "enabled: true" in saved.read_text()
    proc = run_main(
        [
            "--config-path",
            str(saved_dir),
            "--config-name",
            "config",
            "tracking=none",
            "model=random",
        ],
        other,
    )
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    (rerun,) = [p.parent for p in (other / "outputs").rglob("per_user.parquet")]
    assert not (other / "mlflow.db").exists()  # tracking=none was applied
    config = (rerun / "config.yaml").read_text()
    assert "name: random" in config  # model=random replaced the popularity section whole
    assert len(pd.read_parquet(rerun / "per_user.parquet")) == len(
        pd.read_parquet(job / "per_user.parquet")
    )


def test_rerun_with_an_unknown_option_names_the_setting(tmp_path, csv_job):
    proc = run_main(
        ["--config-path", str(csv_job / ".hydra"), "--config-name", "config", "tracking=nowhere"],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "tracking: no option 'nowhere'" in proc.stderr
