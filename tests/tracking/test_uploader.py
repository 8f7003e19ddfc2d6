"""The upload child (``recoeval_tracking.tracking.uploader``, started through
``recoeval_tracking._uploader_child``): the job's folder uploaded in a second process gives the
run an upload in the job's own process gives, what the upload said is said in the job in its
order, a store that cannot be reached leaves the folder ``PENDING`` with the same warning, and a
child that cannot take the upload leaves the folder to the job, which uploads it once."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from mlflow_server import dead_uri
from results_factory import make_results

from recoeval_tracking._uploader_child import open_store, start_child, stop_child, upload_in_child
from recoeval_tracking.jobdir import PENDING, SYNCED, write_job_dir
from recoeval_tracking.tracking.pending import upload_or_mark_pending

UPLOAD = {"experiment": "exp", "params": {"seed": 7, "model": {"factors": 8}}, "run_name": "m"}


def _job(tmp_path, name):
    return write_job_dir(make_results(n_users=30, k=4, seed=0), tmp_path / name, plots=False)


def _run(uri, run_id):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri).get_run(run_id)


def test_the_childs_run_is_the_jobs_own(tmp_path, store_uri, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["recoeval-track", "model=als"])  # the run's source name
    here = upload_or_mark_pending(_job(tmp_path, "here"), tracking_uri=store_uri, **UPLOAD)
    proc = start_child()
    path = _job(tmp_path, "there")
    assert open_store(proc, store_uri)
    took, there = upload_in_child(proc, path, {"tracking_uri": store_uri, **UPLOAD})
    assert took and there is not None and there != here
    assert proc.poll() is not None  # it ends after its upload
    assert json.loads((path / SYNCED).read_text())["run_id"] == there
    a, b = _run(store_uri, here), _run(store_uri, there)
    assert a.data.params == b.data.params and a.data.params["seed"] == "7"
    assert a.data.metrics == b.data.metrics and a.data.metrics
    per_job = {"recoeval.job_uid", "recoeval.sweep_id"}
    tags = {k: v for k, v in b.data.tags.items() if k not in per_job}
    assert tags == {k: v for k, v in a.data.tags.items() if k not in per_job}
    assert tags["mlflow.source.name"] == "recoeval-track"  # the job's command, not the child's
    assert (a.info.status, b.info.run_name) == ("FINISHED", "m")


def test_an_unreachable_store_is_said_in_the_job_and_marks_pending(tmp_path, capsys, caplog):
    path = _job(tmp_path, "job")
    bad = dead_uri()
    with caplog.at_level(logging.WARNING):
        took, run_id = upload_in_child(start_child(), path, {"tracking_uri": bad, **UPLOAD})
    assert (took, run_id) == (True, None)
    err = capsys.readouterr().err  # the child's line on stderr, said by the job
    assert "could not log to the tracking store" in err and "recoeval-track-sync" in err
    assert str(path) in err
    marker = json.loads((path / PENDING).read_text())
    assert marker["tracking_uri"] == bad and marker["upload"]["experiment"] == "exp"


def test_a_child_that_cannot_take_the_upload_leaves_it_to_the_job(tmp_path, store_uri):
    path = _job(tmp_path, "job")
    proc = start_child()
    proc.kill()
    proc.wait()
    assert upload_in_child(proc, path, {"tracking_uri": store_uri, **UPLOAD}) == (False, None)
    assert not (path / SYNCED).exists()
    run_id = upload_or_mark_pending(path, tracking_uri=store_uri, **UPLOAD)
    assert json.loads((path / SYNCED).read_text())["run_id"] == run_id


def test_a_child_that_raised_leaves_it_to_the_job_which_meets_the_error(tmp_path, store_uri):
    path = tmp_path / "not-a-job"
    path.mkdir()
    took = upload_in_child(start_child(), path, {"tracking_uri": store_uri, **UPLOAD})
    assert took == (False, None)
    from recoeval_tracking import InputError

    with pytest.raises(InputError):
        upload_or_mark_pending(path, tracking_uri=store_uri, **UPLOAD)


def test_a_child_stopped_before_any_upload_ends_at_once():
    proc = start_child()
    stop_child(proc, kill=True)
    assert proc.returncode is not None


def test_what_the_upload_says_is_said_in_its_order(monkeypatch):
    import io
    import pickle
    import warnings

    from recoeval_tracking import _uploader_child
    from recoeval_tracking.tracking import pending, uploader

    def upload(path, **kw):
        logging.getLogger("recoeval_tracking.tracking.pending").warning("1 a %s", "record")
        print("2 on stdout")
        print("3 on stderr", file=sys.stderr)
        warnings.warn("4 a warning", FutureWarning, stacklevel=1)
        logging.getLogger("recoeval_tracking.tracking.pending").debug("below INFO: not kept")
        return "RUN"

    monkeypatch.setattr(pending, "upload_or_mark_pending", upload)
    answer = pickle.loads(pickle.dumps(uploader._upload("job", {})))  # as it crosses the pipe
    assert answer[:2] == ("done", "RUN")
    assert [e[0] for e in answer[2]] == ["log", "out", "err", "warn"]

    said: list[str] = []

    class Heard(io.StringIO):
        def write(self, text):
            said.append(text.strip())
            return len(text)

    class Handler(logging.Handler):
        def emit(self, record):
            said.append(f"{record.levelname}: {record.getMessage()}")

    logger = logging.getLogger("recoeval_tracking.tracking.pending")
    handler = Handler()
    logger.addHandler(handler)
    monkeypatch.setattr(sys, "stdout", Heard())
    monkeypatch.setattr(sys, "stderr", Heard())
    monkeypatch.setattr(
        warnings, "showwarning", lambda message, *a, **k: said.append(f"warned: {message}")
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            for event in answer[2]:
                _uploader_child._say(event)
    finally:
        logger.removeHandler(handler)
    said = [s for s in said if s]
    assert said == ["WARNING: 1 a record", "2 on stdout", "3 on stderr", "warned: 4 a warning"]
