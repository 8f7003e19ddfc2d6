"""Headless-Chromium screenshot of the MLflow chart view with the ndcg_at_k curves of a 3-model
sweep (random, popularity and ALS evaluated on synthetic data). Skipped when Chromium is absent.
Set ``RECOEVAL_SCREENSHOT_DIR`` to keep the PNG."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

import recoeval_tracking as rt
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.runs import log_job_dir

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chart_view_screenshot(tmp_path, mlflow_server):
    from mlflow import MlflowClient

    uri = mlflow_server.uri
    sweep_id = uuid.uuid4().hex[:12]
    run_ids = []
    # The three models share a recoeval.sweep_id tag but no parent run: in the chart view the
    # children of a collapsed parent are hidden, and the point is to see the three curves.
    X = rt.make_synthetic(600, 300, seed=0)
    split = rt.make_split("random", X, test_fraction=0.2, seed=0)
    models = {"random": {}, "popularity": {}, "als": {"factors": 16, "iterations": 8,
                                                       "regularization": 0.1, "progress": False}}
    for model, params in models.items():
        fitted = rt.make_model(model, **params).fit(split.train.matrix)
        res = rt.evaluate(split.train, split.test, scores=fitted.score_source(),
                          metrics=["p", "ndcg"], k=10, cumulative=True)
        path = write_job_dir(res, tmp_path / model, overrides=[f"model={model}"], plots=False)
        run_ids.append(log_job_dir(path, tracking_uri=uri, experiment="ui", run_name=model,
                                   sweep_id=sweep_id))
    c = MlflowClient(uri)
    exp_id = c.get_experiment_by_name("ui").experiment_id
    for run_id in run_ids:
        assert [m.step for m in c.get_metric_history(run_id, "ndcg_at_k")] == list(range(1, 11))

    shot = tmp_path / "chart_view.png"
    # the runs page in chart mode (the experiment's bare URL opens MLflow 3's GenAI overview)
    url = f"{uri}/#/experiments/{exp_id}/runs?compareRunsMode=CHART"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'chrome-profile'}", "--window-size=1600,1400",
                    "--virtual-time-budget=60000", "--run-all-compositor-stages-before-draw",
                    f"--screenshot={shot}", url], check=True, timeout=180,
                   capture_output=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    keep = os.environ.get("RECOEVAL_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copyfile(shot, os.path.join(keep, "mlflow_chart_view.png"))
