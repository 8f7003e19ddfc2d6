"""``recoeval-track-report`` given nonsense: a tracking URI that is no URI (``:::``) reached
MLflow, which took it for a file store and the report called the error a bug; a library error
about a setting named the Python parameter (``The 'path' parameter of read_job_dir``) and told
the user to change "the matching setting". Now the URI is refused as a usage error naming
``tracking.uri``, and the message starts with the setting to change. The command's entry point
runs in this process (:func:`commands.run_main`: its exit status and output as the command's)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from commands import run_main

from recoeval_tracking.app.report_config import report_input_key


def _report(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return run_main(list(args), tmp_path, command="recoeval-track-report")


def _usage_error(tmp_path, *args: str) -> str:
    """The last line of a report refused as a usage error (status 2), never a bug."""
    proc = _report(tmp_path, *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "internal error" not in proc.stderr
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("The 'n_bootstrap' parameter of compare must be an int >= 0. Got -5", "n_bootstrap"),
        ("The 'runs' parameter of compare must be runs with distinct ids.", "select"),
        ("The 'path' parameter of read_job_dir must be a job directory", "select.job_dirs"),
        ("The 'labels' parameter of compare must be a mapping", "labels"),
        ("The 'user_features' parameter of compare must be a DataFrame", None),
        ("The 'k' parameter of evaluate must be an int", None),
        ("something else", None),
    ],
)
def test_the_setting_of_a_library_error(message, key):
    assert report_input_key(message) == key


def test_a_tracking_uri_that_is_no_uri_is_a_usage_error(tmp_path):
    last = _usage_error(tmp_path, "select.sweep_id=x", "tracking.uri=:::")
    assert last.startswith("recoeval-track-report: tracking.uri must be a URI with a scheme")
    assert "':::'" in last
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store made


def test_a_missing_job_folder_names_select_job_dirs(tmp_path):
    last = _usage_error(tmp_path, "select.job_dirs=[nope]", "output.log_to_mlflow=false")
    assert last.startswith("recoeval-track-report: select.job_dirs: ")
    assert str(tmp_path / "nope") in last and "Change select.job_dirs=..." in last


def test_an_output_dir_that_is_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "outfile").write_text("x")
    last = _usage_error(tmp_path, "select.job_dirs=[nope]", "output.dir=outfile")
    assert last.startswith("recoeval-track-report: output.dir must be a folder")
    assert "'outfile', which is a file" in last
    assert (tmp_path / "outfile").read_text() == "x"


def test_a_page_that_cannot_be_written_is_a_failure_not_a_bug(tmp_path, monkeypatch, capsys):
    """An OSError while writing (a full disk, no permission): one paragraph, status 1."""
    from recoeval_tracking.app import report

    def fail(cfg):
        raise PermissionError(13, "Permission denied", str(tmp_path / "report"))

    monkeypatch.setattr(report, "_task", fail)
    monkeypatch.setattr(sys, "argv", ["recoeval-track-report", "select.job_dirs=[a,b]"])
    with pytest.raises(SystemExit) as stop:
        report.main()
    assert stop.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("recoeval-track-report: Permission denied")
    assert str(tmp_path / "report") in err and "internal error" not in err


def test_a_file_in_select_job_dirs_is_a_usage_error(tmp_path):
    """``read_job_dir`` looked for the file's INCOMPLETE marker inside it: an internal error."""
    (tmp_path / "afile.txt").write_text("x")
    last = _usage_error(tmp_path, "select.job_dirs=[afile.txt]", "output.log_to_mlflow=false")
    assert last.startswith("recoeval-track-report: select.job_dirs: ")
    assert "which is a file" in last
    assert str(tmp_path / "afile.txt") in last


@pytest.mark.parametrize("path", ["../..", "/tmp/elsewhere", "report/../../x"])
def test_an_artifact_path_leaving_the_run_is_a_usage_error_naming_the_key(tmp_path, path):
    # MLflow refused it only after the report was drawn and a run made: an internal error
    last = _usage_error(tmp_path, "select.job_dirs=[nope]", f"output.artifact_path={path}")
    assert last.startswith(
        "recoeval-track-report: output.artifact_path: expected a folder inside the run's "
    )
    assert repr(path) in last
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_log_report_artifacts_refuses_an_artifact_path_leaving_the_run(tmp_path):
    from recoeval_tracking import InputError
    from recoeval_tracking.tracking.search import log_report_artifacts

    page = tmp_path / "report.html"
    page.write_text("<p>x</p>")
    with pytest.raises(
        InputError, match=r"'artifact_path' parameter of log_report_artifacts.*Got '\.\./\.\.'"
    ):
        log_report_artifacts([page], artifact_path="../..", tracking_uri=tmp_path.as_uri())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
