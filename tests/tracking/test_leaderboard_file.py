"""What closing a sweep parent leaves in the store: the leaderboard file (the table itself, no
index column, best first), the counts of jobs and failed jobs, and the best values logged once at
step 0 (a summary of the sweep, not a series)."""

from __future__ import annotations

import pandas as pd
import pytest


def test_closing_a_sweep_logs_the_leaderboard_file(store_uri, tmp_path, monkeypatch):
    from mlflow import MlflowClient

    from recoeval_tracking.tracking import create_sweep_parent, finish_sweep_parent

    monkeypatch.chdir(tmp_path)
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="board-file")
    client = MlflowClient(store_uri)
    values = {"a": 0.30, "b": 0.50, "c": 0.40}
    for name, v in values.items():
        run = client.create_run(
            parent.experiment_id,
            run_name=name,
            tags={"mlflow.parentRunId": parent.run_id, "recoeval.metrics": "ndcg_at_4"},
        )
        client.log_metric(run.info.run_id, "ndcg_at_4", v)
        if name != "c":  # c is still running when the sweep closes: it counts as failed
            client.set_terminated(run.info.run_id)
    board = finish_sweep_parent(parent.run_id, tracking_uri=store_uri)
    assert board["run_name"].tolist() == ["b", "c", "a"]
    path = client.download_artifacts(parent.run_id, "leaderboard.csv", str(tmp_path))
    table = pd.read_csv(path)
    assert table.columns.tolist() == [
        "run_name",
        "run_id",
        "status",
        "overrides",
        "ndcg_at_4",
        "ndcg_at_4_ci95_low",
        "ndcg_at_4_ci95_high",
    ]
    assert table["run_name"].tolist() == ["b", "c", "a"]
    assert table["ndcg_at_4"].tolist() == pytest.approx([0.50, 0.40, 0.30])
    prun = client.get_run(parent.run_id)
    assert prun.data.metrics["sweep_jobs"] == 3.0
    assert prun.data.metrics["sweep_jobs_failed"] == 1.0
    for key in ("sweep_jobs", "sweep_jobs_failed", "best_ndcg_at_4"):
        history = client.get_metric_history(parent.run_id, key)
        assert [m.step for m in history] == [0], key
    assert client.get_run(board.loc[1, "run_id"]).info.status == "KILLED"


def test_leaderboard_without_a_sort_column(store_uri, tmp_path, monkeypatch):
    """No headline metric, or a sort_by the table does not hold: the rows as found, unsorted."""
    from mlflow import MlflowClient

    from recoeval_tracking.tracking import build_leaderboard, create_sweep_parent

    monkeypatch.chdir(tmp_path)
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="board-plain")
    client = MlflowClient(store_uri)
    for name in ("x", "y"):
        run = client.create_run(
            parent.experiment_id, run_name=name, tags={"mlflow.parentRunId": parent.run_id}
        )
        client.set_terminated(run.info.run_id)
    plain = build_leaderboard(parent.run_id, tracking_uri=store_uri, metrics=[])
    assert plain.columns.tolist() == ["run_name", "run_id", "status", "overrides"]
    assert sorted(plain["run_name"]) == ["x", "y"] and plain.attrs["sort_by"] is None
    other = build_leaderboard(parent.run_id, tracking_uri=store_uri, sort_by="absent")
    assert sorted(other["run_name"]) == ["x", "y"]


def test_closing_a_sweep_shows_its_best_on_the_uis_first_screens(store_uri, tmp_path, monkeypatch):
    """The runs table lists a sweep as its collapsed parent, and every experiment page starts
    with the description: the best job and its value go into both; the description lists the
    recent sweeps newest first, each line naming its sweep id (so an earlier sweep's address
    never opens under another sweep's winner); the view the address opens is stored as
    MLflow's shared view."""
    import json

    from mlflow import MlflowClient

    from recoeval_tracking.tracking import create_sweep_parent, finish_sweep_parent

    monkeypatch.chdir(tmp_path)
    client = MlflowClient(store_uri)
    sweep_ids = []
    for values in ({"a": 0.30, "b": 0.50}, {"c": 0.20, "d": 0.10}):
        parent = create_sweep_parent(
            tracking_uri=store_uri, experiment="best", run_name="sweep model"
        )
        for name, v in values.items():
            run = client.create_run(
                parent.experiment_id,
                run_name=name,
                tags={
                    "mlflow.parentRunId": parent.run_id,
                    "recoeval.metrics": "ndcg_at_4",
                    "recoeval.sweep_id": parent.sweep_id,
                    "recoeval.job_uid": name,
                },
            )
            client.log_metric(run.info.run_id, "ndcg_at_4", v)
            client.set_terminated(run.info.run_id)
        board = finish_sweep_parent(parent.run_id, tracking_uri=store_uri)
        sweep_ids.append(parent.sweep_id)
    assert client.get_run(parent.run_id).info.run_name == "best c 0.2000 · sweep model"
    exp = client.get_experiment(parent.experiment_id)
    note = exp.tags["mlflow.note.content"]
    first, recent = note.split("\n\n")[:2]
    assert first == f"Newest sweep {sweep_ids[1]}: best c, ndcg_at_4 = 0.2000."  # the UI's header
    head, newest, older = recent.splitlines()
    assert head.startswith("**Recent sweeps**, newest first")
    assert newest.startswith(f"- Sweep {sweep_ids[1]} (closed ")
    assert "): best c: ndcg_at_4 = 0.2000. [Its jobs side by side" in newest
    assert older.startswith(f"- Sweep {sweep_ids[0]} (closed ")
    assert "): best b: ndcg_at_4 = 0.5000. [Its jobs side by side" in older
    assert "Latest sweep" not in note and "recoeval-track" in note
    # the parent's own description names its sweep too
    parent_note = client.get_run(parent.run_id).data.tags["mlflow.note.content"]
    assert parent_note.startswith(f"Sweep {sweep_ids[1]}, closed ")
    key = board.attrs["view_address"].split("viewStateShareKey=")[1].split("&")[0]
    state = json.loads(exp.tags[f"mlflow.sharedViewState.{key}"])
    assert state["orderByKey"] == "metrics.`ndcg_at_4`" and state["orderByAsc"] is False
    assert state["selectedColumns"] == ["metrics.`ndcg_at_4`"]
    assert parent.sweep_id in state["searchFilter"]
