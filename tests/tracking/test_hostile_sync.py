"""``recoeval-track-sync`` run by a user who cannot read every folder: ``--dry-run`` named
nothing and exited 0, so a job pending in such a folder was never uploaded and nobody was told.
Now the dry run lists each unreadable folder with the reason on standard error, says it is not
uploaded, and exits 1; a folder whose files cannot be looked at, and a path argument that cannot
be looked at, are named too instead of ending in a traceback.

The tests may run as root, whom ``chmod`` does not stop: the permission errors are then made by
replacing ``os.scandir`` (what ``os.walk`` lists with) or ``Path`` methods for one folder.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from results_factory import make_results

from recoeval_tracking import InputError
from recoeval_tracking.app.sync import main as sync_main
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.jobdir.read import check_job_dir
from recoeval_tracking.tracking.pending import mark_pending, scan, sync_paths
from recoeval_tracking.tracking.runs import upload_args

URI = "sqlite:///nowhere/mlflow.db"  # never reached: a dry run, or nothing to upload


def _pending_job(root: Path, seed: int = 0) -> Path:
    path = write_job_dir(make_results(n_users=20, k=3, seed=seed), root, plots=False)
    mark_pending(path, URI, ConnectionError("refused"), upload_args(experiment="hostile"))
    return path


def _denied(path: Path) -> PermissionError:
    return PermissionError(13, "Permission denied", str(path))


def _refuse_listing(monkeypatch, folder: Path) -> None:
    real = os.scandir

    def scandir(path="."):
        if isinstance(path, (str, Path)) and Path(path).resolve() == folder.resolve():
            raise _denied(folder)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def runs(tmp_path):
    good = _pending_job(tmp_path / "runs" / "good")
    locked = tmp_path / "runs" / "locked"
    _pending_job(locked / "job", seed=1)
    return tmp_path / "runs", good, locked


def test_dry_run_names_an_unreadable_folder_and_fails(runs, monkeypatch, capsys):
    root, good, locked = runs
    _refuse_listing(monkeypatch, locked)
    assert sync_main([str(root), "--dry-run"]) == 1
    out, err = capsys.readouterr()
    assert f"pending job {good}" in out
    assert f"unreadable folder {locked} (PermissionError: Permission denied)" in err
    assert "a sync would not upload it" in err
    assert str(locked) not in out  # the problem goes to standard error only


def test_dry_run_of_readable_folders_still_exits_0(runs, capsys):
    root, good, _ = runs
    assert sync_main([str(root), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert f"pending job {good}" in out and err == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_dry_run_names_a_folder_without_permission(runs, capsys):
    root, _, locked = runs
    locked.chmod(0)
    try:
        status = sync_main([str(root), "--dry-run"])
    finally:
        locked.chmod(0o755)
    assert status == 1
    assert f"unreadable folder {locked}" in capsys.readouterr().err


def test_a_folder_listed_but_not_searchable_is_named_not_a_traceback(runs, monkeypatch, capsys):
    """Read permission without search permission (``r--``): the names are listed, but looking
    at a file inside (``.hydra``) fails."""
    root, good, locked = runs
    job = locked / "job"
    (job / "PENDING").unlink()  # a complete job never uploaded: scan looks at .hydra
    real = Path.is_dir

    def is_dir(self):
        if self.parent == job:
            raise _denied(self)
        return real(self)

    monkeypatch.setattr(Path, "is_dir", is_dir)
    found = scan([root])
    assert found.jobs == [good]
    assert [p for p, _ in found.unreadable] == [job / ".hydra"]
    assert sync_main([str(root), "--dry-run"]) == 1
    assert f"unreadable folder {job / '.hydra'}" in capsys.readouterr().err


def test_a_path_that_cannot_be_looked_at_is_named(tmp_path, monkeypatch, capsys):
    target = tmp_path / "locked" / "job"
    real = Path.exists

    def exists(self, *args, **kwargs):
        if self == target:
            raise _denied(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "exists", exists)
    for extra in ([], ["--dry-run"]):
        assert sync_main([str(target), *extra]) == 1
        err = capsys.readouterr().err
        assert f"cannot look at {target} (Permission denied)" in err
        assert "Traceback" not in err


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (lambda p: os.mkfifo(p), "curves.csv is not a regular file"),
        (lambda p: None, "curves.csv is missing"),
    ],
    ids=["fifo", "deleted"],
)
def test_a_recorded_file_that_is_gone_or_odd_is_refused(tmp_path, mangle, reason):
    """``curves.csv`` recorded in job.json, then deleted or replaced by a named pipe: the upload
    sends regular files only, so it made a run without the curves, with no word."""
    job = _pending_job(tmp_path / "job")
    (job / "curves.csv").unlink()
    mangle(job / "curves.csv")
    with pytest.raises(InputError, match=reason):
        check_job_dir(job)
    outcomes = sync_paths([job], out=io.StringIO())
    assert [o.status for o in outcomes] == ["skipped"] and reason in outcomes[0].error


def test_a_file_that_is_not_a_jobs_names_no_folder_and_scans_nothing(tmp_path, capsys):
    """``recoeval-track-sync mlflow.db`` scanned the whole folder holding the file (every job
    below the working folder); a file of a job folder still stands for that folder."""
    job = _pending_job(tmp_path / "runs")
    (tmp_path / "mlflow.db").write_bytes(b"")
    assert sync_main([str(tmp_path / "mlflow.db"), "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "mlflow.db is a file, not a job folder" in err
    with pytest.raises(InputError, match="'paths' parameter of scan"):
        scan([tmp_path / "mlflow.db"])
    assert sync_main([str(job / "job.json"), "--dry-run"]) == 0
    assert f"pending job {job}" in capsys.readouterr().out
    assert scan([job / "PENDING"]).jobs == [job.resolve()]
