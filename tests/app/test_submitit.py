"""Sweeps with Hydra's submitit launcher: ``hydra/launcher=submitit_local`` runs each job in a
process of its own (as SLURM would on other machines), and the jobs still log as children of one
sweep parent; a cluster launcher with a local store is refused before any job is submitted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.app.precheck import check_launcher_store

from .conftest import (
    QUIET,
    REPO_ROOT,
    TINY_ALS,
    TINY_DATA,
    assert_ok,
    run_command,
    run_main,
    run_process,
)

pytest.importorskip(
    "hydra_plugins.hydra_submitit_launcher",
    reason="hydra-submitit-launcher is not installed (extra 'cluster')",
)

SLURM = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
LOCAL = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"
ARGS = [
    "-m",
    "hydra/launcher=submitit_local",
    "hydra.launcher.timeout_min=10",
    "model=als",
    "model.factors=4,8",
    *TINY_DATA,
    *TINY_ALS[1:],
    *QUIET,
    "tracking.precision=exact",
]


def _sweep(tmp_path: Path, uri: str):
    from mlflow import MlflowClient

    dirs = [p.parent for p in (tmp_path / "multirun").rglob("multirun.yaml")]
    assert len(dirs) == 1, dirs
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("recoeval")
    runs = client.search_runs([exp.experiment_id], max_results=100)
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    return dirs[0], client, parents, children


def _check_children(sweep: Path, client, parent, children) -> None:
    """Two jobs, each run by submitit in its own process, each a FINISHED child of ``parent``."""
    assert (sweep / ".submitit").is_dir()  # the jobs went through submitit
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir() and p.name.isdigit())
    assert [p.name for p in jobs] == ["0", "1"]
    assert len(children) == 2
    sweep_id = parent.data.tags["recoeval.sweep_id"]
    factors = set()
    for job in jobs:
        run = client.get_run(json.loads((job / "SYNCED").read_text())["run_id"])
        assert run.info.status == "FINISHED"
        assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert run.data.tags["recoeval.sweep_id"] == sweep_id
        factors.add(run.data.params["model.factors"])
    assert factors == {"4", "8"}
    best = max(c.data.metrics["ndcg_at_10"] for c in children)
    assert parent.data.metrics["best_ndcg_at_10"] == pytest.approx(best, rel=1e-12)


def test_submitit_local_sweep_logs_a_parent_and_its_children(tmp_path, local_store):
    proc = run_command(ARGS, tmp_path)
    assert_ok(proc)
    sweep, client, parents, children = _sweep(tmp_path, local_store)
    assert len(parents) == 1
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["recoeval.launcher"] == "LocalLauncher"
    assert (
        json.loads((sweep / "recoeval_sweep.json").read_text())["parent_run_id"]
        == parent.info.run_id
    )
    _check_children(sweep, client, parent, children)


def test_submitit_jobs_create_one_parent_when_the_sweep_start_could_not(tmp_path, local_store):
    """The store is down when the sweep starts (the parent's creation fails once, in the
    launching process): the two jobs, in processes of their own, find or create the parent by
    the sweep id, and the sweep still ends with one parent holding both."""
    inject = REPO_ROOT / "tests" / "faults" / "inject.py"

    proc = run_process([sys.executable, str(inject), "parent-fails-once", "track", *ARGS], tmp_path)
    assert_ok(proc)
    assert "could not create the sweep's parent run" in proc.stderr
    sweep, client, parents, children = _sweep(tmp_path, local_store)
    assert json.loads((sweep / "recoeval_sweep.json").read_text())["parent_run_id"] is None
    assert len(parents) == 1, [p.info.run_id for p in parents]
    assert parents[0].info.status == "FINISHED"
    _check_children(sweep, client, parents[0], children)


def test_slurm_launcher_with_a_local_store_is_refused_before_submitting(tmp_path):
    """Refused in the launching process, before any job is submitted: the command's entry point
    runs in this process (its exit status and stderr as the process would give them)."""
    proc = run_main(
        [
            "-m",
            "hydra/launcher=submitit_slurm",
            "hydra.launcher.partition=gpu",
            "model.factors=4,8",
            *QUIET,
        ],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = proc.stderr.strip()
    assert "SlurmLauncher" in err and "tracking=server" in err and "sqlite:///" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not list(tmp_path.rglob(".submitit")) and not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize(
    "launcher,uri,refused",
    [
        (SLURM, "sqlite:////shared/mlflow.db", True),
        (SLURM, "file:///shared/mlruns", True),
        (SLURM, "/shared/mlruns", True),
        (SLURM, "http://tracking.example:5000", False),
        (SLURM, "postgresql://db.example/mlflow", False),
        (LOCAL, "sqlite:////tmp/mlflow.db", False),
        (
            "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher",
            "sqlite:////tmp/mlflow.db",
            False,
        ),
        (None, "sqlite:////tmp/mlflow.db", False),
    ],
)
def test_check_launcher_store(launcher, uri, refused):
    if refused:
        with pytest.raises(InputError, match="tracking=server"):
            check_launcher_store(launcher, uri)
    else:
        check_launcher_store(launcher, uri)
