"""Plugin mode end to end, as a user runs it: a model class of their own from a config folder of
theirs, recommendations made elsewhere, and our groups and tracking inside their own Hydra app.

Every command that runs a model of the user's runs in a fresh process from a temporary copy of
``examples/own_model`` outside the repository (the example is what the docs tell a user to
copy), so that no module of theirs enters the test process; the report, which only reads the
store those processes wrote, and the run of recommendations made elsewhere (our own
``ranked_file`` reading their CSV: no module of theirs) run through the command's entry point in
this process (:func:`commands.run_main`: its exit status and output as the command's).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from commands import clean_env, run_command, run_main

from .conftest import assert_ok, own_model_project

pytestmark = pytest.mark.slow

SMALL = [
    "dataset.n_users=150",
    "dataset.n_items=80",
    "plots=false",
    "progress=false",
    "nthreads=1",
    "metrics.cumulative=false",
]
# The user's app has no plots/progress/nthreads settings of ours (optional there): added with +.
SMALL_APP = [f"+{o}" if o.split("=")[0] in ("plots", "progress", "nthreads") else o for o in SMALL]


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def _track(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return run_command(args, cwd, timeout=600)


def _report(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return run_main(args, cwd, command="recoeval-track-report")


@pytest.fixture
def project(tmp_path_factory, store_uri) -> Path:
    """A copy of the example project, with a migrated ``mlflow.db`` beside it."""
    return own_model_project(tmp_path_factory.mktemp("user"), store_uri.removeprefix("sqlite:///"))


def _runs(root: Path, sweep_id: str):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exps = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(exps, f"tags.`recoeval.sweep_id` = '{sweep_id}'")


def _sweep_id(sweep_dir: Path) -> str:
    return json.loads(next(sweep_dir.rglob("recoeval_sweep.json")).read_text())["sweep_id"]


def test_own_class_from_a_config_folder_sweep_and_report(project):
    """Door 1: recoeval-track --config-dir conf model=ease, swept over the class's own
    parameter, logged as written, then reported."""
    proc = _track(
        [
            "-m",
            "--config-dir",
            "conf",
            "model=ease",
            "model.lam=50,800",
            "hydra.sweep.dir=multirun/door1",
            *SMALL,
        ],
        project,
    )
    assert_ok(proc)
    sweep_id = _sweep_id(project / "multirun" / "door1")
    runs = _runs(project, sweep_id)
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(children) == 2
    assert {r.data.params["model.lam"] for r in children} == {"50", "800"}
    assert {r.data.params["model._target_"] for r in children} == {"my_models.ease.EASE"}
    names = sorted(r.data.tags["mlflow.runName"] for r in children)
    assert names[0].startswith("ease lam=") and names[1].startswith("ease lam=")
    assert all(np.isfinite(r.data.metrics["ndcg_at_10"]) for r in children)
    assert_ok(_report([f"select.sweep_id={sweep_id}"], project))
    assert (project / "report" / "report.html").is_file()


def test_user_app_sweep_search_and_report(project):
    """Door 3: the example's own Hydra app (train.py) with our groups, a -m sweep, an Optuna
    search over its parameter, and the report over the sweep."""
    assert_ok(
        _run(
            [
                sys.executable,
                "train.py",
                "-m",
                "model.lam=100,1000",
                "hydra.sweep.dir=multirun/grid",
                *SMALL_APP,
            ],
            project,
        )
    )
    sweep_id = _sweep_id(project / "multirun" / "grid")
    runs = _runs(project, sweep_id)
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parent) == 1 and len(children) == 2
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent[0].info.run_id}
    assert parent[0].info.status == "FINISHED"
    jobs = sorted((project / "multirun" / "grid").glob("[0-9]*/per_user.parquet"))
    assert len(jobs) == 2 and "ndcg_at_10" in pd.read_parquet(jobs[0]).columns
    assert_ok(_report([f"select.sweep_id={sweep_id}"], project))
    assert (project / "report" / "report.html").is_file()

    proc = _run(
        [
            sys.executable,
            "train.py",
            "-m",
            "hydra/sweeper=optuna",
            "hydra.sweeper.n_trials=2",
            "hydra.sweeper.seed=0",
            "model.lam=tag(log,interval(10,5000))",
            "hydra.sweep.dir=multirun/search",
            *SMALL_APP,
        ],
        project,
    )
    assert_ok(proc)
    runs = _runs(project, _sweep_id(project / "multirun" / "search"))
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(runs) == 3 and "best_ndcg_at_10" in parent[0].data.metrics


def test_recommendations_made_elsewhere_from_a_csv(project, monkeypatch):
    """Door 2: top-10 lists written by another program, in the dataset's own ids."""
    monkeypatch.setattr(sys, "path", [*sys.path])  # the command may append its folder
    rng = np.random.default_rng(0)
    rows = [
        (u, int(i), r + 1)
        for u in range(150)
        for r, i in enumerate(rng.choice(80, size=10, replace=False))
    ]
    rows.append((10_000, 1, 1))  # a user the dataset does not have
    pd.DataFrame(rows, columns=["user", "item", "rank"]).to_csv(project / "recs.csv", index=False)
    proc = run_main(
        ["model=ranked_file", "model.path=recs.csv", "tracking=none", "hydra.run.dir=job", *SMALL],
        project,
    )
    assert_ok(proc)
    assert "1 unknown users" in proc.stdout + proc.stderr
    assert "left out" in proc.stdout + proc.stderr
    per_user = pd.read_parquet(project / "job" / "per_user.parquet")
    assert "p_at_10" in per_user and "roc_auc" not in per_user
    defs = json.loads((project / "job" / "definitions.json").read_text())
    assert "roc_auc" in defs["definitions"]["left_out"]


def test_errors_of_a_users_model_are_one_paragraph(project):
    """A misspelt _target_ (exit 2), an import error inside the user's module and a fit that
    raises (exit 1): one paragraph naming the key, the class, the message and the place; the
    failed job's folder is INCOMPLETE and nothing is uploaded."""
    conf = project / "conf" / "model"
    (conf / "typo.yaml").write_text("_target_: my_models.ease.EAZE\nlam: 1.0\n")
    (conf / "broken.yaml").write_text("_target_: broken_models.Model\n")
    (conf / "fails.yaml").write_text("_target_: broken_fit.Model\n")
    (project / "broken_models.py").write_text("import a_missing_dependency_of_theirs\n")
    (project / "broken_fit.py").write_text(
        "class Model:\n    def fit(self, train):\n"
        "        raise RuntimeError('singular matrix')\n"
        "    def score_users(self, users):\n        return None\n"
    )
    proc = _track(["--config-dir", "conf", "model=typo", "hydra.run.dir=typo", *SMALL], project)
    assert proc.returncode == 2
    assert (
        "my_models.ease.EAZE" in proc.stderr
        and "Did you mean my_models.ease.EASE" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    proc = _track(["--config-dir", "conf", "model=broken", "hydra.run.dir=broken", *SMALL], project)
    assert proc.returncode == 1 and "a_missing_dependency_of_theirs" in proc.stderr
    assert "broken_models.py:1" in proc.stderr and "Traceback" not in proc.stderr
    proc = _track(["--config-dir", "conf", "model=fails", "hydra.run.dir=fails", *SMALL], project)
    assert proc.returncode == 1, proc.stderr
    assert "Model.fit" in proc.stderr and "RuntimeError: singular matrix" in proc.stderr
    assert "broken_fit.py:3" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert (project / "fails" / "INCOMPLETE").is_file()
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    exps = [e.experiment_id for e in client.search_experiments()]
    assert client.search_runs(exps) == []


def test_a_model_of_another_framework_hands_over_its_factors(project):
    """implicit's BPR behind the example's four-line wrapper (factors()), where installed."""
    pytest.importorskip("implicit")
    proc = _track(
        [
            "--config-dir",
            "conf",
            "model=bpr",
            "model.factors=8",
            "model.iterations=5",
            "tracking=none",
            "hydra.run.dir=bpr",
            *SMALL,
        ],
        project,
    )
    assert_ok(proc)
    per_user = pd.read_parquet(project / "bpr" / "per_user.parquet")
    assert per_user["ndcg_at_10"].notna().any() and "roc_auc" in per_user
