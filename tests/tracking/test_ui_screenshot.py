"""Headless-Chromium screenshots of the MLflow UI on a 3-model sweep (random, popularity and ALS
evaluated on synthetic data) logged as a parent with three children: the runs table as MLflow
opens it, and the chart view at the address ``recoeval-track`` prints at the end of a sweep
(:func:`~recoeval_tracking.tracking.views.sweep_view_link`: the jobs without their parent, best
first). Skipped when Chromium is absent. Set ``RECOEVAL_SCREENSHOT_DIR`` to keep the PNGs."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import recoeval_tracking as rt
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.runs import log_job_dir
from recoeval_tracking.tracking.sweeps import create_sweep_parent, finish_sweep_parent
from recoeval_tracking.tracking.views import sweep_view_link

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
    None,
)


def _browse(url, tmp_path, shot) -> str:
    """The DOM of ``url`` once loaded, its screenshot written to ``shot``: one Chromium start
    for both (headless Chromium handles ``--dump-dom`` and ``--screenshot`` together)."""
    args = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chrome-profile'}",
        "--window-size=1400,900",
        "--virtual-time-budget=60000",
        "--run-all-compositor-stages-before-draw",
        "--dump-dom",
        f"--screenshot={shot}",
    ]
    proc = subprocess.run(args + [url], check=True, timeout=180, capture_output=True, text=True)
    return proc.stdout


def _keep(shot, name):
    keep = os.environ.get("RECOEVAL_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copyfile(shot, os.path.join(keep, name))


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_runs_table_and_sweep_chart_view(tmp_path, mlflow_server):
    from mlflow import MlflowClient

    uri = mlflow_server.uri
    parent = create_sweep_parent(tracking_uri=uri, experiment="ui", run_name="sweep model")
    X = rt.make_synthetic(600, 300, seed=0)
    split = rt.make_split("random", X, test_fraction=0.2, seed=0)
    models = {
        "random": {},
        "popularity": {},
        "als": {"factors": 16, "iterations": 8, "regularization": 0.1, "progress": False},
    }
    for model, params in models.items():
        fitted = rt.make_model(model, **params).fit(split.train.matrix)
        res = rt.evaluate(
            split.train,
            split.test,
            scores=fitted.score_source(),
            metrics=["p", "ndcg"],
            k=10,
            cumulative=True,
        )
        path = write_job_dir(res, tmp_path / model, overrides=[f"model={model}"], plots=False)
        log_job_dir(
            path,
            tracking_uri=uri,
            experiment="ui",
            run_name=model,
            parent_run_id=parent.run_id,
            sweep_id=parent.sweep_id,
        )
    board = finish_sweep_parent(parent.run_id, tracking_uri=uri)
    assert list(board["run_name"])[0] == "als"  # best ndcg_at_10 first
    exp_id = MlflowClient(uri).get_experiment_by_name("ui").experiment_id
    link = board.attrs["view_link"]
    assert link == sweep_view_link(exp_id, parent.sweep_id, "ndcg_at_10")

    # The runs table as MLflow opens the experiment: the sweep is its parent, collapsed.
    table = f"{uri}/#/experiments/{exp_id}/runs"
    shot = tmp_path / "runs_table.png"
    dom = _browse(table, tmp_path, shot)
    assert "sweep model" in dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _keep(shot, "mlflow_runs_table.png")

    # The printed address: the three jobs, best first, their charts in the first section (no
    # section of confidence bounds before them), the parent left out.
    shot = tmp_path / "chart_view.png"
    dom = _browse(f"{uri}/{link}", tmp_path, shot)
    order = [dom.find(f">{name}<") for name in ("als", "popularity", "random")]
    assert all(i > 0 for i in order) and order == sorted(order), order
    assert "sweep model" not in dom
    assert "Model metrics" in dom and ">ci<" not in dom
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    _keep(shot, "mlflow_chart_view.png")
