"""The user's own model class in the app (``--config-dir conf model=mine``), as a process: a
model whose every user ends NaN fails the job with the users counted by reason, and an argument
the class does not take is a usage error naming ``model.<key>`` before any data is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from commands import run_command

pytestmark = pytest.mark.slow

_MODULE = """
import numpy as np


class Mine:
    def __init__(self, every=1):
        self.every = every

    def fit(self, train):
        self.n_items = train.shape[1]
        return self

    def score_users(self, user_indices):
        s = np.ones((len(user_indices), self.n_items))
        s[:, :: self.every] = np.nan
        return s
"""
SMALL = [
    "dataset.n_users=60",
    "dataset.n_items=40",
    "dataset.n_interactions=900",
    "plots=false",
    "progress=false",
    "nthreads=1",
    "tracking=none",
]


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "conf" / "model").mkdir(parents=True)
    (tmp_path / "conf" / "model" / "mine.yaml").write_text("_target_: mine_models.Mine\n")
    (tmp_path / "mine_models.py").write_text(_MODULE)
    return tmp_path


@pytest.mark.parametrize("every", [1, 3])
def test_a_job_where_every_user_ends_nan_fails_with_the_reasons(project, every):
    proc = run_command(
        [
            "--config-dir",
            "conf",
            "model=mine",
            f"+model.every={every}",
            "hydra.run.dir=job",
            *SMALL,
        ],
        project,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one paragraph, no Python warning before it
    assert "The evaluation evaluated none of the 60 users" in lines[0]
    assert "nan_score: " in lines[0] and "Nothing was recorded" in lines[0]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert (project / "job" / "INCOMPLETE").is_file()


def test_an_argument_the_class_does_not_take_is_a_usage_error_before_any_data(project):
    """The class takes ``every`` only: ``model.lam`` is refused naming the key, with exit 2,
    before the (missing) data file is read. Without the check Hydra would build the class and
    fail with the user's TypeError (exit 1)."""
    proc = run_command(
        [
            "--config-dir",
            "conf",
            "model=mine",
            "+model.lam=5",
            "dataset=csv",
            "dataset.path=no_such_file.csv",
            "hydra.run.dir=job",
            "tracking=none",
        ],
        project,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "does not take the config's model.lam" in proc.stderr
    assert "Its parameters: every" in proc.stderr
    assert "no_such_file" not in proc.stderr and "Traceback" not in proc.stderr
