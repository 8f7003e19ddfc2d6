"""Logging to a temporary SQLite store, read back with MlflowClient."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from results_factory import make_results
from sweep_children import upload_child

from recoeval_tracking import InputError
from recoeval_tracking.app.sync import main as sync_main
from recoeval_tracking.jobdir import PENDING, SYNCED, read_job_dir, write_job_dir
from recoeval_tracking.tracking.client import resolve_tracking_uri
from recoeval_tracking.tracking.pending import (
    PENDING_SWEEP,
    finish_sweep_parent_or_mark_pending,
    upload_or_mark_pending,
)
from recoeval_tracking.tracking.runs import log_job_dir, log_results
from recoeval_tracking.tracking.sweeps import create_sweep_parent, finish_sweep_parent

SECRET = "hunter2-do-not-log"
CONFIG = {
    "model": {"name": "als", "factors": 8},
    "metrics": {"k": 4, "names": ["ndcg", "p"]},
    "tracking": {"uri": f"http://bob:{SECRET}@example", "password": SECRET, "experiment": "t"},
    "db": {"api_key": SECRET},
}
DATASET = {
    "name": "toy",
    "n_users": 40,
    "n_items": 100,
    "data_fingerprint": "fp-data-0001",
    "split_fingerprint": "fp-split-0001",
}


def client(uri):
    from mlflow import MlflowClient

    return MlflowClient(uri)


def job(tmp_path, name="job", seed=0, n_users=40, **kw):
    res = make_results(n_users=n_users, k=4, seed=seed)
    kw.setdefault("config_yaml", CONFIG)
    kw.setdefault("overrides", ["model.factors=8", f"tracking.password={SECRET}"])
    kw.setdefault("dataset", DATASET)
    kw.setdefault("plots", True)
    return res, write_job_dir(res, tmp_path / name, **kw)


def dead_uri():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there once the socket is closed


def test_run_holds_everything(tmp_path, store_uri):
    res, path = job(tmp_path, plots="all")  # a histogram of every metric, not only the first
    run_id = log_job_dir(
        path,
        tracking_uri=store_uri,
        experiment="exp",
        tags={"team": "reco", "auth_token": SECRET},
        params={"seed": 7},
        precision="exact",
    )  # the values as computed, not rounded
    c = client(store_uri)
    run = c.get_run(run_id)
    assert run.info.status == "FINISHED"
    exp = c.get_experiment(run.info.experiment_id)
    assert exp.name == "exp"
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    assert Path(exp.artifact_location.removeprefix("file://")).is_relative_to(tmp_path)

    assert "recoeval-track" in exp.tags["mlflow.note.content"]  # the experiment's description

    # params: the config the user chose, flattened; no definitions, no tracking settings
    p = run.data.params
    assert p["model.name"] == "als" and p["model.factors"] == "8" and p["metrics.k"] == "4"
    assert p["metrics.names"] == '["ndcg", "p"]' and p["seed"] == "7"
    assert not any(k.startswith(("definitions.", "tracking.")) for k in p)
    assert "db.api_key" not in p

    # means and counts, computed independently from the per-user table
    m = run.data.metrics
    pu = res.per_user
    for col in ("ndcg_at_4", "p_at_4", "r_at_4", "roc_auc"):
        v = pu[col].to_numpy()
        assert m[col] == pytest.approx(np.mean(v[~np.isnan(v)]), rel=1e-12)
        low, high = json.loads(run.data.tags["recoeval.ci95"])[col]
        assert low < m[col] < high
        # Student-t interval over the users, computed here
        from scipy import stats as sps

        d = v[~np.isnan(v)]
        half = sps.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
        assert (low, high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    # the bounds are not metrics: MLflow's chart view would list them first
    assert not any("_ci95_" in k for k in m)
    assert m["users_evaluated"] == int((pu["nan_reason"] == "").sum())
    assert m["users_nan_no_test"] == int((pu["nan_reason"] == "no_test").sum())
    assert m["eval_seconds"] == 0.25

    # curves: history steps 1..K equal to curves.csv, which equals the column means
    curves = pd.read_csv(path / "curves.csv")
    for name, arr in res.curves_per_user.items():
        hist = sorted(c.get_metric_history(run_id, name), key=lambda x: x.step)
        assert [h.step for h in hist] == [1, 2, 3, 4]
        np.testing.assert_allclose([h.value for h in hist], curves[name].to_numpy(), rtol=1e-12)
        np.testing.assert_allclose([h.value for h in hist], np.nanmean(arr, axis=0), rtol=1e-12)

    # no '@' anywhere in keys
    assert not any("@" in k for k in list(m) + list(p) + list(run.data.tags))

    # tags
    t = run.data.tags
    uid = read_job_dir(path, per_user=False).job_uid
    assert t["recoeval.job_uid"] == uid and t["recoeval.sweep_id"] == uid
    assert t["recoeval.data_fingerprint"] == "fp-data-0001"
    assert t["recoeval.split_fingerprint"] == "fp-split-0001"
    assert t["recoeval.definitions_fingerprint"] == res.fingerprint
    assert t["recoeval.version"] == "0.1.0" or t["recoeval.version"]
    assert t["recoeval.metrics"] == "ndcg_at_4,p_at_4,r_at_4,roc_auc"
    assert t["team"] == "reco" and "auth_token" not in t
    assert run.info.run_name == "als f=8"  # model and its overrides; full list in a tag
    assert t["recoeval.overrides"] == "model.factors=8 tracking.password=<redacted>"
    assert t["mlflow.user"] and t["mlflow.source.name"]  # MLflow's own context
    # start and end are the job's: it ended when job.json was written, and took total_seconds
    job_end = read_job_dir(path, per_user=False).job["created_at"]
    import datetime as dt

    end_ms = int(dt.datetime.fromisoformat(job_end).timestamp() * 1000)
    assert run.info.end_time == end_ms and run.info.start_time <= end_ms
    assert not any(SECRET in v for v in list(t.values()) + list(p.values()))

    # dataset input with its digest
    (ds_input,) = run.inputs.dataset_inputs
    assert ds_input.dataset.digest == "fp-data-0001" and ds_input.dataset.name == "toy"

    # artifacts: per-user table equal to the in-memory one, plots, files; no secrets
    names = {a.path for a in c.list_artifacts(run_id)}
    assert {
        "per_user.parquet",
        "curves.csv",
        "metrics.json",
        "definitions.json",
        "dataset.json",
        "config.yaml",
        "overrides.yaml",
        "plots",
    } <= names
    plots = {a.path for a in c.list_artifacts(run_id, "plots")}
    assert {
        "plots/curves.png",
        "plots/per_user_ndcg_at_4.png",
        "plots/per_user_roc_auc.png",
    } <= plots
    dl = Path(c.download_artifacts(run_id, "", str(tmp_path / "dl")))
    pd.testing.assert_frame_equal(
        pd.read_parquet(dl / "per_user.parquet"), res.per_user, check_dtype=False
    )
    # the preview MLflow's UI can show: the first users of the same table, as CSV
    head = pd.read_csv(dl / "per_user_head.csv", keep_default_na=False, na_values=[""])
    assert list(head.columns) == list(res.per_user.columns)
    assert len(head) == min(len(res.per_user), 1000)
    np.testing.assert_allclose(
        head["ndcg_at_4"].to_numpy(dtype=float),
        res.per_user["ndcg_at_4"].to_numpy()[: len(head)],
        rtol=1e-5,
    )
    for f in dl.rglob("*"):
        if f.is_file() and f.suffix in {".yaml", ".json", ".csv"}:
            assert SECRET not in f.read_text(), f


def test_exactly_once_and_cut_off_upload_replaced(tmp_path, store_uri):
    _, path = job(tmp_path, plots=False)
    first = log_job_dir(path, tracking_uri=store_uri)
    assert log_job_dir(path, tracking_uri=store_uri) == first
    c = client(store_uri)
    uid = read_job_dir(path, per_user=False).job_uid
    exp = c.get_experiment_by_name("recoeval")
    runs = c.search_runs([exp.experiment_id], f"tags.`recoeval.job_uid` = '{uid}'")
    assert [r.info.run_id for r in runs] == [first]

    # an upload cut off midway leaves a RUNNING run: it is finished in place, not duplicated;
    # a second unfinished one (made by an older version) is deleted
    _, path2 = job(tmp_path, name="job2", plots=False)
    uid2 = read_job_dir(path2, per_user=False).job_uid
    stale = c.create_run(exp.experiment_id, tags={"recoeval.job_uid": uid2}).info.run_id
    c.log_metric(stale, "ndcg_at_k", 0.5, step=1)  # part of the first upload went through
    extra = c.create_run(exp.experiment_id, tags={"recoeval.job_uid": uid2}).info.run_id
    new = log_job_dir(path2, tracking_uri=store_uri)
    assert new == stale
    runs = c.search_runs([exp.experiment_id], f"tags.`recoeval.job_uid` = '{uid2}'")
    assert [r.info.run_id for r in runs] == [new]
    run = c.get_run(new)
    assert run.info.status == "FINISHED" and run.data.tags["recoeval.sweep_id"] == uid2
    assert [h.step for h in c.get_metric_history(new, "ndcg_at_k")] == [1, 2, 3, 4]
    assert "per_user.parquet" in {a.path for a in c.list_artifacts(new)}
    assert c.get_run(extra).info.lifecycle_stage == "deleted"
    assert json.loads((path2 / SYNCED).read_text())["run_id"] == new


def test_log_results_into_active_run_and_new_run(tmp_path, store_uri):
    import mlflow

    res = make_results(n_users=30, k=4, seed=5)
    # artifacts inside tmp_path (the fluent API would put them in ./mlruns of the cwd)
    client(store_uri).create_experiment("training", artifact_location=(tmp_path / "art").as_uri())
    mlflow.set_tracking_uri(store_uri)
    try:
        mlflow.set_experiment("training")
        with mlflow.start_run() as active:
            mlflow.log_param("factors", 16)
            mlflow.log_metric("train_loss", 0.5)
            got = log_results(
                res,
                artifact_path="evaluation",
                params={"factors": 99},
                plots=False,
                precision="exact",
            )
        assert got == active.info.run_id
    finally:
        mlflow.set_tracking_uri(None)
    c = client(store_uri)
    run = c.get_run(got)
    assert run.info.status == "FINISHED"
    assert run.data.params["factors"] == "16"  # the run's own param is kept
    assert run.data.metrics["train_loss"] == 0.5
    v = res.per_user["ndcg_at_4"].to_numpy()
    assert run.data.metrics["ndcg_at_4"] == pytest.approx(np.nanmean(v), rel=1e-12)
    assert [h.step for h in c.get_metric_history(got, "ndcg_at_k")] == [1, 2, 3, 4]
    assert "evaluation/per_user.parquet" in {a.path for a in c.list_artifacts(got, "evaluation")}

    new = log_results(
        res,
        tracking_uri=store_uri,
        experiment="plain",
        run_name="eval-only",
        config={"model": {"name": "pop"}},
        plots=False,
    )
    run = c.get_run(new)
    assert run.info.run_name == "eval-only" and run.data.params["model.name"] == "pop"
    assert run.info.status == "FINISHED"


def test_sweep_parent_children_leaderboard_and_failed_job(tmp_path, store_uri):
    parent = create_sweep_parent(
        tracking_uri=store_uri,
        experiment="sweep",
        params={"sweep": {"grid": "factors=4,8 x reg=0.1,1"}},
    )
    children = {}
    values = {}
    for i, (f, reg) in enumerate([(4, 0.1), (4, 1), (8, 0.1), (8, 1)]):
        res, path = job(
            tmp_path,
            name=f"j{i}",
            seed=10 + i,
            plots=False,
            overrides=[f"model.factors={f}", f"model.reg={reg}", "tracking.uri=http://x"],
        )
        values[f"als f={f} reg={reg}"] = float(np.nanmean(res.per_user["ndcg_at_4"].to_numpy()))
        children[i] = log_job_dir(
            path,
            tracking_uri=store_uri,
            experiment="sweep",
            parent_run_id=parent.run_id,
            sweep_id=parent.sweep_id,
            precision="exact",
        )
    # a fifth job fails before logging: its run is left RUNNING, the parent still closes
    c = client(store_uri)
    broken = c.create_run(
        parent.experiment_id, run_name="broken", tags={"mlflow.parentRunId": parent.run_id}
    ).info.run_id
    board = finish_sweep_parent(parent.run_id, "FAILED", tracking_uri=store_uri)

    prun = c.get_run(parent.run_id)
    assert prun.info.status == "FAILED" and prun.info.end_time is not None
    assert prun.data.tags["recoeval.sweep_id"] == parent.sweep_id
    assert prun.data.params["sweep.grid"] == "factors=4,8 x reg=0.1,1"
    for run_id in children.values():
        run = c.get_run(run_id)
        assert run.data.tags["mlflow.parentRunId"] == parent.run_id
        assert run.data.tags["recoeval.sweep_id"] == parent.sweep_id
        assert "tracking.uri" not in run.info.run_name
    assert c.get_run(broken).info.status == "KILLED"
    best_name = max(values, key=values.get)
    assert prun.data.metrics["best_ndcg_at_4"] == pytest.approx(values[best_name], rel=1e-12)
    assert prun.data.tags["recoeval.best_run.ndcg_at_4"] == best_name
    assert prun.data.metrics["sweep_jobs"] == 5 and prun.data.metrics["sweep_jobs_failed"] == 1
    assert list(board["run_name"][:4]) == sorted(values, key=values.get, reverse=True)
    dl = c.download_artifacts(parent.run_id, "leaderboard.csv", str(tmp_path / "dl"))
    table = pd.read_csv(dl)
    assert len(table) == 5 and table["ndcg_at_4"].iloc[0] == pytest.approx(values[best_name])
    assert "| run_name | status |" in prun.data.tags["mlflow.note.content"]


def test_unreachable_store_marks_pending_then_sync_uploads_once(tmp_path, store_uri, capsys):
    res, path = job(tmp_path, plots=False)
    bad = dead_uri()
    t0 = time.monotonic()
    assert (
        upload_or_mark_pending(path, tracking_uri=bad, experiment="late", tags={"team": "reco"})
        is None
    )
    assert time.monotonic() - t0 < 30
    err = capsys.readouterr().err
    assert "could not log to the tracking store" in err and str(path) in err
    assert "recoeval-track-sync" in err
    marker = json.loads((path / PENDING).read_text())
    assert marker["tracking_uri"] == bad and marker["upload"]["experiment"] == "late"
    # results are all on disk
    pd.testing.assert_frame_equal(read_job_dir(path).per_user, res.per_user, check_dtype=False)

    # sync to the store that works: once, and a second sync adds nothing
    assert sync_main([str(tmp_path), "--tracking-uri", store_uri]) == 0
    assert not (path / PENDING).exists()
    run_id = json.loads((path / SYNCED).read_text())["run_id"]
    c = client(store_uri)
    run = c.get_run(run_id)
    assert run.data.tags["team"] == "reco"
    # pretend the upload is pending again (e.g. SYNCED could not be written): still one run
    (path / PENDING).write_text(json.dumps({"tracking_uri": bad, "upload": {"experiment": "late"}}))
    assert sync_main([str(path), "--tracking-uri", store_uri]) == 0
    exp = c.get_experiment_by_name("late")
    assert [r.info.run_id for r in c.search_runs([exp.experiment_id])] == [run_id]
    assert sync_main([str(tmp_path), "--tracking-uri", store_uri]) == 0
    assert "nothing pending" in capsys.readouterr().out


def test_sync_still_down_keeps_pending(tmp_path):
    _, path = job(tmp_path, plots=False)
    bad = dead_uri()
    assert upload_or_mark_pending(path, tracking_uri=bad) is None
    assert sync_main([str(path)]) == 1  # default: the URI the job was configured with
    assert (path / PENDING).exists() and not (path / SYNCED).exists()


def test_pending_sweep_parent_closed_by_sync(tmp_path, store_uri):
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="sw")
    _, ok = job(tmp_path / "multirun", name="0", seed=1, plots=False)
    _, late = job(tmp_path / "multirun", name="1", seed=2, plots=False)
    upload_child(ok, parent, store_uri, "sw")
    bad = dead_uri()
    assert upload_child(late, parent, bad, "sw") is None
    assert not finish_sweep_parent_or_mark_pending(
        tmp_path / "multirun", parent.run_id, "FINISHED", tracking_uri=bad
    )
    assert (tmp_path / "multirun" / PENDING_SWEEP).exists()
    assert client(store_uri).get_run(parent.run_id).info.status == "RUNNING"

    assert sync_main([str(tmp_path / "multirun"), "--tracking-uri", store_uri]) == 0
    c = client(store_uri)
    prun = c.get_run(parent.run_id)
    assert prun.info.status == "FINISHED" and prun.data.metrics["sweep_jobs"] == 2
    kids = c.search_runs([parent.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.run_id}'")
    assert len(kids) == 2
    assert not (tmp_path / "multirun" / PENDING_SWEEP).exists()


def test_missing_parent_is_created_at_sync(tmp_path, store_uri):
    _, a = job(tmp_path / "m", name="0", seed=1, plots=False)
    _, b = job(tmp_path / "m", name="1", seed=2, plots=False)
    bad = dead_uri()
    for p in (a, b):
        upload_or_mark_pending(p, tracking_uri=bad, parent_run_id="0" * 32, sweep_id="swp1")
    assert sync_main([str(tmp_path / "m"), "--tracking-uri", store_uri]) == 0
    c = client(store_uri)
    exp = c.get_experiment_by_name("recoeval")
    parents = c.search_runs([exp.experiment_id], "tags.`recoeval.sweep_parent` = 'true'")
    assert len(parents) == 1 and parents[0].data.tags["recoeval.sweep_id"] == "swp1"
    assert parents[0].info.status == "FINISHED"
    kids = c.search_runs(
        [exp.experiment_id], f"tags.`mlflow.parentRunId` = '{parents[0].info.run_id}'"
    )
    assert len(kids) == 2


def test_resolve_tracking_uri(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert resolve_tracking_uri() == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert resolve_tracking_uri() == "http://127.0.0.1:5000"
    assert resolve_tracking_uri("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(InputError, match="'uri' parameter of resolve_tracking_uri"):
        resolve_tracking_uri(5)


def test_validation(tmp_path, store_uri):
    with pytest.raises(InputError, match="'results' parameter of log_results"):
        log_results({"ndcg": 0.3}, tracking_uri=store_uri)
    with pytest.raises(InputError, match="'status' parameter of finish_sweep_parent"):
        finish_sweep_parent("abc", "DONE", tracking_uri=store_uri)
    with pytest.raises(InputError, match="'path' parameter of read_job_dir"):
        log_job_dir(tmp_path, tracking_uri=store_uri)
    with pytest.raises(InputError, match="'tags' parameter of log_job_dir"):
        log_job_dir(tmp_path, tracking_uri=store_uri, tags=["a"])
    # bad arguments raise even through the never-fail wrapper
    with pytest.raises(InputError):
        upload_or_mark_pending(tmp_path, tracking_uri=store_uri)
    # a folder outside the run's artifacts is refused before anything is logged
    run_id = client(store_uri).create_run("0").info.run_id
    with pytest.raises(InputError, match="'artifact_path' parameter of log_results.*'\\.\\.'"):
        log_results(
            make_results(10, k=3), run_id=run_id, tracking_uri=store_uri, artifact_path=".."
        )
    assert client(store_uri).list_artifacts(run_id) == []


def test_leaderboard_and_description_are_redacted_and_escaped(tmp_path, store_uri):
    parent = create_sweep_parent(tracking_uri=store_uri, experiment="esc")
    _, path = job(tmp_path, plots=False, overrides=["x=1"])
    log_job_dir(
        path,
        tracking_uri=store_uri,
        experiment="esc",
        parent_run_id=parent.run_id,
        sweep_id=parent.sweep_id,
        run_name=f"a|b *c* <i>http://u:{SECRET}@h</i>",
    )
    finish_sweep_parent(parent.run_id, tracking_uri=store_uri)
    c = client(store_uri)
    note = c.get_run(parent.run_id).data.tags["mlflow.note.content"]
    assert SECRET not in note
    assert r"| [a\|b \*c\* \<i\>http://u:" in note and r"@h\</i\>](#/experiments/" in note
    assert "?workflowType=machine_learning) | FINISHED |" in note  # the name links to the run
    dl = c.download_artifacts(parent.run_id, "leaderboard.csv", str(tmp_path / "dl"))
    assert SECRET not in Path(dl).read_text()


def test_log_job_dir_marks_the_folder_from_the_start(tmp_path, store_uri, monkeypatch):
    from recoeval_tracking.jobdir import UPLOADING
    from recoeval_tracking.tracking import runs

    _, path = job(tmp_path, plots=False)
    seen = {}

    def spy(job_dir):  # called after the run is created, before the artifacts
        seen["marker"] = json.loads((path / UPLOADING).read_text())
        return None

    monkeypatch.setattr(runs, "_dataset_input", spy)
    run_id = log_job_dir(path, tracking_uri=store_uri, experiment="marks")
    assert seen["marker"]["run_id"] == run_id
    assert seen["marker"]["upload"]["experiment"] == "marks"
    assert not (path / UPLOADING).exists()
    assert json.loads((path / SYNCED).read_text())["run_id"] == run_id


def test_no_none_params_and_a_headline_tag(tmp_path, store_uri):
    config = {
        "model": {"name": "als", "factors": 8, "weighted": None},
        "dataset": {"implicit": {"method": None, "threshold": None}, "name": "toy"},
        "metrics": {"k": 4, "profile": None},
    }
    _, path = job(tmp_path, config_yaml=config, plots=False)
    # the app passes the config the user chose as params too (upload_or_mark_pending)
    run = client(store_uri).get_run(log_job_dir(path, tracking_uri=store_uri, params=config))
    p = run.data.params
    assert p["model.factors"] == "8" and p["dataset.name"] == "toy" and p["metrics.k"] == "4"
    assert not [k for k, v in p.items() if v == "None"]
    assert "model.weighted" not in p and "dataset.implicit" not in p
    # the few metrics shown first, in the order NDCG, P, R (roc_auc is not one of them)
    assert run.data.tags["recoeval.headline"] == "ndcg_at_4,p_at_4,r_at_4"
