"""``hydra.job.name`` names the job's log file (``<name>.log`` in the job folder): a name with a
path separator or ``..`` put the log outside the job folder. It is refused before anything runs."""

from __future__ import annotations

import pytest
from commands import run_command

from recoeval_tracking.app.cli import job_name_problem


@pytest.mark.parametrize(
    "arg",
    [
        "hydra.job.name=../../escape",
        "hydra.job.name=a/b",
        "+hydra.job.name=..",
        "hydra.job.name='x\\\\y'",
        "hydra.job.name=/tmp/abs",
        "hydra.job.name=",
    ],
)
def test_a_name_that_is_a_path_is_refused(arg):
    message = job_name_problem(["model=popularity", arg])
    assert message is not None and "hydra.job.name must be a plain name" in message


@pytest.mark.parametrize(
    "arg",
    [
        "hydra.job.name=recoeval",
        "hydra.job.name=my-job_2.v1",
        "model.name=../x",
        "hydra.run.dir=../elsewhere",
    ],
)
def test_plain_names_and_other_keys_pass(arg):
    assert job_name_problem([arg]) is None


@pytest.mark.slow
def test_the_command_writes_no_log_outside_the_job_folder(tmp_path):
    args = [
        "model=popularity",
        "metrics.names=[p]",
        "metrics.k=3",
        "plots=false",
        "progress=false",
        "dataset.n_users=30",
        "dataset.n_items=20",
        "tracking=none",
        "hydra.run.dir=a/b/job",
        "hydra.job.name=../../escape",
    ]
    proc = run_command(args, tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .startswith("recoeval-track: hydra.job.name must be a plain name")
    )
    assert list(tmp_path.rglob("*.log")) == [] and not (tmp_path / "a").exists()
