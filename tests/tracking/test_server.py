"""A real ``mlflow server`` (SQLite backend on 127.0.0.1): a sweep logged to it, the server
stopped in the middle of a second sweep, every result on disk, then ``recoeval-track-sync``
uploading each pending job exactly once after a restart."""

from __future__ import annotations

import json

import pytest
from results_factory import make_results
from sweep_children import upload_child

from recoeval_tracking.app.sync import main as sync_main
from recoeval_tracking.jobdir import PENDING, SYNCED, read_job_dir, write_job_dir
from recoeval_tracking.tracking.pending import (
    finish_sweep_parent_or_mark_pending,
)
from recoeval_tracking.tracking.sweeps import create_sweep_parent, finish_sweep_parent


def _jobs(root, sweep, n):
    out = []
    for i in range(n):
        res = make_results(n_users=30, k=3, seed=100 * sweep + i)
        out.append(
            write_job_dir(
                res,
                root / f"sweep{sweep}" / str(i),
                plots=False,
                overrides=[f"model.factors={4 * (i + 1)}"],
                dataset={"name": "toy", "data_fingerprint": f"d{sweep}"},
            )
        )
    return out


@pytest.mark.slow
def test_server_down_mid_sweep_then_sync_exactly_once(tmp_path, mlflow_server):
    from mlflow import MlflowClient

    uri = mlflow_server.uri
    # sweep 1: all jobs reach the server
    p1 = create_sweep_parent(tracking_uri=uri, experiment="srv")
    for path in _jobs(tmp_path, 1, 2):
        assert upload_child(path, p1, uri, "srv")
    finish_sweep_parent(p1.run_id, tracking_uri=uri)

    # sweep 2: the server goes away after the first job
    p2 = create_sweep_parent(tracking_uri=uri, experiment="srv")
    jobs2 = _jobs(tmp_path, 2, 3)
    assert upload_child(jobs2[0], p2, uri, "srv")
    mlflow_server.stop()
    for path in jobs2[1:]:
        assert upload_child(path, p2, uri, "srv") is None
        assert (path / PENDING).exists()
        assert read_job_dir(path).per_user.shape[0] == 30  # everything is on disk
    assert not finish_sweep_parent_or_mark_pending(tmp_path / "sweep2", p2.run_id, tracking_uri=uri)

    # the server comes back on the same store; sync with the URI recorded in the markers
    mlflow_server.start()
    assert sync_main([str(tmp_path)]) == 0
    assert sync_main([str(tmp_path)]) == 0  # twice: no duplicate
    c = MlflowClient(uri)
    for path in jobs2:
        assert not (path / PENDING).exists()
        run_id = json.loads((path / SYNCED).read_text())["run_id"]
        uid = read_job_dir(path, per_user=False).job_uid
        runs = c.search_runs([p2.experiment_id], f"tags.`recoeval.job_uid` = '{uid}'")
        assert [r.info.run_id for r in runs] == [run_id]
        assert runs[0].data.tags["mlflow.parentRunId"] == p2.run_id
        assert "per_user.parquet" in {a.path for a in c.list_artifacts(run_id)}
    parent = c.get_run(p2.run_id)
    assert parent.info.status == "FINISHED" and parent.data.metrics["sweep_jobs"] == 3
    all_runs = c.search_runs([p2.experiment_id])
    assert len(all_runs) == 2 + 2 + 3  # two parents, 2 + 3 children, nothing duplicated
