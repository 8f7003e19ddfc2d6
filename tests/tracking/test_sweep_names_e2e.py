"""``recoeval-track -m`` as a user runs it with a model class of their own: every run of a grid,
an Optuna search (command-line and ``hydra.sweeper.params`` spaces) and a ``model.path`` sweep
over ranked files is named after its swept values, and the class's arguments are shown."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from commands import SMALL_SWEEP, run_command, run_main

pytestmark = pytest.mark.slow

SMALL = SMALL_SWEEP

MODEL_CODE = '''
import numpy as np
import scipy.sparse as sp


class CosineItemKNN:
    """Item-item cosine kNN, shrunk: no __repr__ of its own."""

    def __init__(self, neighbours, shrink=10.0):
        self.neighbours, self.shrink = int(neighbours), float(shrink)

    def fit(self, train):
        X = sp.csr_array(train, dtype=np.float64)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=0))).ravel()
        sim = (X.T @ X).toarray() / (np.outer(norms, norms) + self.shrink)
        np.fill_diagonal(sim, 0.0)
        drop = np.argsort(-sim, axis=0)[min(self.neighbours, sim.shape[0] - 1):]
        np.put_along_axis(sim, drop, 0.0, axis=0)
        self.X_, self.S_ = X, sim
        return self

    def score_users(self, user_indices):
        return np.asarray(self.X_[user_indices] @ self.S_)
'''


@pytest.fixture
def project(tmp_path, store_uri) -> Path:
    root = tmp_path / "study"
    (root / "my_models").mkdir(parents=True)
    (root / "my_models" / "__init__.py").write_text("")
    (root / "my_models" / "cosknn.py").write_text(MODEL_CODE)
    (root / "conf" / "model").mkdir(parents=True)
    (root / "conf" / "model" / "cosknn.yaml").write_text(
        "_target_: my_models.cosknn.CosineItemKNN\nneighbours: 20\n"
    )
    # a search space kept in a config file, as hydra.sweeper.params (shrink is not in
    # cosknn.yaml: +)
    (root / "conf" / "search").mkdir()
    (root / "conf" / "search" / "shrink.yaml").write_text(
        "# @package _global_\nhydra:\n  sweeper:\n    params:\n"
        "      +model.shrink: interval(0.5,20.0)\n"
    )
    Path(store_uri.removeprefix("sqlite:///")).replace(root / "mlflow.db")
    return root


def _sweep(root: Path, sweep_dir: str, *overrides: str, here: bool = False) -> tuple[list, str]:
    """Run ``recoeval-track -m`` with ``overrides`` into ``sweep_dir``: the sweep's child runs
    and the command's output. A fresh process, so that the user's modules never enter the test
    process; ``here``: the command's entry point in this process (:func:`commands.run_main`),
    for a sweep that imports no module of theirs."""
    args = ["-m", *overrides, f"hydra.sweep.dir={sweep_dir}", *SMALL]
    proc = run_main(args, root) if here else run_command(args, root, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    return _children(root, sweep_dir), proc.stdout + proc.stderr


def _children(root: Path, sweep_dir: str) -> list:
    from mlflow import MlflowClient

    record = json.loads((root / sweep_dir / "recoeval_sweep.json").read_text())
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exps = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(exps, f"tags.`recoeval.sweep_id` = '{record['sweep_id']}'")
    return [r for r in runs if "mlflow.parentRunId" in r.data.tags]


def test_grid_and_search_of_a_users_model_are_named_after_their_values(project):
    children, output = _sweep(
        project, "multirun/grid", "--config-dir", "conf", "model=cosknn", "model.neighbours=5,30"
    )
    assert sorted(r.info.run_name for r in children) == [
        "cosknn neighbours=30",
        "cosknn neighbours=5",
    ]
    for run in children:
        n = run.data.params["model.neighbours"]
        # the default the config left out is logged and shown
        assert run.data.params["model.shrink"] == "10.0"
        assert run.data.tags["recoeval.model"] == f"CosineItemKNN(neighbours={n}, shrink=10.0)"
        assert f"CosineItemKNN(neighbours={n}, shrink=10.0) fitted" in output

    trials, _ = _sweep(
        project,
        "multirun/search",
        "--config-dir",
        "conf",
        "model=cosknn",
        "hydra/sweeper=optuna",
        "hydra.sweeper.n_trials=3",
        "hydra.sweeper.seed=0",
        "objective=ndcg_at_10",
        "model.neighbours=int(interval(2,40))",
        "+search=shrink",
    )
    assert len(trials) == 3
    names = [r.info.run_name for r in trials]
    for run, name in zip(trials, names):
        p = run.data.params
        shrink = float(p["model.shrink"])
        assert name == f"cosknn neighbours={p['model.neighbours']} shrink={shrink:.4g}"
    assert len(set(names)) == 3


def test_a_sweep_over_ranked_files_names_each_run_by_its_file(project, monkeypatch):
    """Our ranked_file model reads the files: no module of the user's, the sweep runs here."""
    monkeypatch.setattr(sys, "path", [*sys.path])  # the command may append its folder
    rng = np.random.default_rng(0)
    (project / "runs").mkdir()
    for name in ("a.csv", "runs/b.csv", "c.csv"):
        rows = [
            (u, int(i), r + 1)
            for u in range(120)
            for r, i in enumerate(rng.choice(60, size=10, replace=False))
        ]
        pd.DataFrame(rows, columns=["user", "item", "rank"]).to_csv(project / name, index=False)
    children, _ = _sweep(
        project,
        "multirun/files",
        "model=ranked_file",
        "model.path=a.csv,runs/b.csv,c.csv",
        here=True,
    )
    assert sorted(r.info.run_name for r in children) == [
        "ranked_file a",
        "ranked_file b",
        "ranked_file c",
    ]
