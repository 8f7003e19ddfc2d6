"""What a sync refuses to upload, and says so: a job folder is checked whole before any run is
made (a truncated ``per_user.parquet``, a file whose size is not the one recorded, a symbolic
link to a file outside the folder), and a folder the user cannot read is named, never passed
over in silence.

The store is a local SQLite one; the folders are real job directories written by
``write_job_dir`` and marked ``PENDING`` as a job whose store was down leaves them.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient
from results_factory import make_results

from recoeval_tracking.app.sync import main as sync_main
from recoeval_tracking.jobdir import PENDING, SYNCED, write_job_dir
from recoeval_tracking.jobdir.markers import read_marker
from recoeval_tracking.tracking.pending import mark_pending, sync_paths
from recoeval_tracking.tracking.runs import upload_args

EXP = "sync-checks"


def _pending_job(root: Path, uri: str, seed: int = 0) -> Path:
    path = write_job_dir(make_results(n_users=40, k=3, seed=seed), root, plots=False)
    mark_pending(path, uri, ConnectionError("refused"), upload_args(experiment=EXP))
    return path


def _runs(uri: str) -> list:
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(EXP)
    return client.search_runs([exp.experiment_id]) if exp else []


def _sync(paths, uri=None):
    out = io.StringIO()
    outcomes = sync_paths(paths, tracking_uri=uri, out=out)
    return outcomes, out.getvalue()


def test_a_good_pending_folder_is_uploaded(tmp_path, store_uri):
    job = _pending_job(tmp_path / "job", store_uri)
    outcomes, text = _sync([job])
    assert [o.status for o in outcomes] == ["uploaded"], text
    assert [r.info.status for r in _runs(store_uri)] == ["FINISHED"]
    assert (job / SYNCED).is_file() and not (job / PENDING).exists()


def test_a_truncated_per_user_table_makes_no_run_and_stays_pending(tmp_path, store_uri):
    job = _pending_job(tmp_path / "job", store_uri)
    table = job / "per_user.parquet"
    data = table.read_bytes()
    table.write_bytes(data[: len(data) // 2])  # a copy cut off halfway
    outcomes, text = _sync([job])
    assert [o.status for o in outcomes] == ["skipped"]
    assert "per_user.parquet" in outcomes[0].error and "Nothing was uploaded" in outcomes[0].error
    assert f"skipped {job}" in text
    assert _runs(store_uri) == []  # no run at all, not even a FAILED one
    assert (job / PENDING).is_file() and not (job / SYNCED).exists()
    assert "per_user.parquet" in read_marker(job / PENDING)["error"]  # the reason is kept
    # repaired (the job written again), the next sync uploads it
    _pending_job(job, store_uri, seed=1)
    outcomes, _ = _sync([job])
    assert [o.status for o in outcomes] == ["uploaded"]
    assert [r.info.status for r in _runs(store_uri)] == ["FINISHED"]


def test_a_file_whose_size_is_not_the_recorded_one_is_refused(tmp_path, store_uri):
    job = _pending_job(tmp_path / "job", store_uri)
    with (job / "metrics.json").open("a") as f:
        f.write("\n")  # still valid JSON, but not the file the job wrote
    outcomes, _ = _sync([job])
    assert outcomes[0].status == "skipped"
    assert "metrics.json has" in outcomes[0].error and "recorded" in outcomes[0].error
    assert _runs(store_uri) == []


def test_a_symbolic_link_in_the_folder_is_never_followed(tmp_path, store_uri):
    outside = tmp_path / "private.txt"
    outside.write_text("the content of a file outside the job folder")
    job = _pending_job(tmp_path / "job", store_uri)
    (job / "plots").mkdir()
    (job / "plots" / "leak.png").symlink_to(outside)
    outcomes, _ = _sync([job])
    assert outcomes[0].status == "skipped"
    assert "plots/leak.png is a symbolic link" in outcomes[0].error
    assert _runs(store_uri) == []
    assert (job / PENDING).is_file()


def test_a_per_user_table_that_is_a_link_is_refused(tmp_path, store_uri):
    job = _pending_job(tmp_path / "job", store_uri)
    table = job / "per_user.parquet"
    moved = tmp_path / "elsewhere.parquet"
    table.rename(moved)
    table.symlink_to(moved)
    outcomes, _ = _sync([job])
    assert outcomes[0].status == "skipped"
    assert "per_user.parquet is a symbolic link" in outcomes[0].error
    assert _runs(store_uri) == []


def _refuse_listing(monkeypatch, folder: Path) -> None:
    """``os.walk`` lists folders with ``os.scandir``: make it fail on ``folder`` as it does for
    a user without read permission there (the tests may run as root, whom chmod cannot stop)."""
    real = os.scandir

    def scandir(path="."):
        if isinstance(path, (str, Path)) and Path(path).resolve() == folder.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_a_folder_the_user_cannot_read_is_named_and_fails_the_sync(
    tmp_path, store_uri, monkeypatch, capsys
):
    good = _pending_job(tmp_path / "runs" / "good", store_uri)
    locked = tmp_path / "runs" / "locked"
    _pending_job(locked / "job", store_uri, seed=2)
    _refuse_listing(monkeypatch, locked)
    outcomes, text = _sync([tmp_path / "runs"])
    assert {o.path: o.status for o in outcomes} == {good: "uploaded", locked: "skipped"}, [
        o.error for o in outcomes
    ]
    assert f"skipped {locked}: this user cannot read the folder" in text
    assert "Permission denied" in text
    monkeypatch.setattr(sys, "argv", ["recoeval-track-sync"])
    assert sync_main([str(tmp_path / "runs")]) == 1  # not 0: a job may wait in there
    printed = capsys.readouterr()
    assert str(locked) in printed.out + printed.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_a_folder_without_read_permission_is_named(tmp_path, store_uri):
    locked = tmp_path / "runs" / "locked"
    _pending_job(locked / "job", store_uri)
    locked.chmod(0)
    try:
        outcomes, text = _sync([tmp_path / "runs"])
    finally:
        locked.chmod(0o755)
    assert [(o.path, o.status) for o in outcomes] == [(locked, "skipped")]
    assert f"skipped {locked}" in text
