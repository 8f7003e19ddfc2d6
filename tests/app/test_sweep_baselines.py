"""Baselines beside a grid of the user's own model, through door 1 (``--config-dir``) and door 3
(our groups in the user's own Hydra app): the same four jobs under one parent, the baselines
tagged and evaluated on the grid's split, the same numbers through both doors.

Every command runs in a fresh process from a temporary copy of ``examples/own_model``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from commands import SMALL_SWEEP, run_command, run_process

from .conftest import own_model_project

pytestmark = pytest.mark.slow

SMALL = SMALL_SWEEP
# The user's app has no plots/progress/nthreads settings of ours: added with +.
SMALL_APP = [f"+{o}" if o.split("=")[0] in ("plots", "progress", "nthreads") else o for o in SMALL]
BASELINES = "baselines=[popularity,random]"


@pytest.fixture(scope="module")
def project(tmp_path_factory, migrated_db) -> Path:
    return own_model_project(tmp_path_factory.mktemp("user"), migrated_db)


def _sweep(root: Path, sweep_dir: str):
    import json

    from mlflow import MlflowClient

    record = json.loads((root / sweep_dir / "recoeval_sweep.json").read_text())
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exps = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(exps, f"tags.`recoeval.sweep_id` = '{record['sweep_id']}'")


def _check_four_jobs(runs, grid_name: str) -> dict[str, object]:
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and len(children) == 4
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert parents[0].info.status == "FINISHED"
    base = {
        c.data.tags["mlflow.runName"]: c for c in children if "recoeval.baseline" in c.data.tags
    }
    assert sorted(base) == ["popularity", "random"]
    assert base["popularity"].data.tags["recoeval.baseline_rank"] == "0"
    grid = [c for c in children if "recoeval.baseline" not in c.data.tags]
    assert len(grid) == 2 and all(c.data.tags["mlflow.runName"].startswith(grid_name) for c in grid)
    assert len({c.data.tags["recoeval.split_fingerprint"] for c in children}) == 1
    return base


def _four_jobs_beside_every_baseline(proc, root: Path, sweep_dir: str) -> dict[str, object]:
    """The sweep ended well, compared its jobs with every baseline (not the first only), and
    holds the four jobs of :func:`_check_four_jobs`; its baselines' runs by name."""
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    assert "against each baseline on ndcg_at_10:" in proc.stdout
    assert "  popularity (baseline; ndcg_at_10 = " in proc.stdout
    assert "  random (baseline; ndcg_at_10 = " in proc.stdout
    return _check_four_jobs(_sweep(root, sweep_dir), "ease lam=")


def test_door1_and_door3_run_the_same_baselines_beside_the_users_grid(project):
    proc = run_command(
        [
            "-m",
            "--config-dir",
            "conf",
            "model=ease",
            "model.lam=50,800",
            BASELINES,
            "hydra.sweep.dir=multirun/door1",
            *SMALL,
        ],
        project,
        timeout=900,
    )
    door1 = _four_jobs_beside_every_baseline(proc, project, "multirun/door1")

    proc = run_process(
        [
            sys.executable,
            "train.py",
            "-m",
            "model.lam=50,800",
            BASELINES,
            "hydra.sweep.dir=multirun/door3",
            *SMALL_APP,
        ],
        project,
        timeout=900,
    )
    door3 = _four_jobs_beside_every_baseline(proc, project, "multirun/door3")
    # the same data, split and baseline give the same numbers through either door
    for name in ("popularity", "random"):
        a, b = door1[name].data, door3[name].data
        assert a.tags["recoeval.split_fingerprint"] == b.tags["recoeval.split_fingerprint"]
        assert a.metrics["ndcg_at_10"] == b.metrics["ndcg_at_10"]


def test_door3_without_our_sweeper_refuses_baselines(project):
    proc = run_process(
        [
            sys.executable,
            "train.py",
            "-m",
            "hydra/sweeper=basic",
            "model.lam=50,800",
            BASELINES,
            "hydra.sweep.dir=multirun/basic",
            *SMALL_APP,
        ],
        project,
    )
    assert proc.returncode != 0
    err = " ".join(proc.stderr.split())
    assert "override hydra/sweeper: recoeval" in err, err
    assert not (project / "multirun" / "basic" / "0").exists()
