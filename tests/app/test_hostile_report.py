"""``recoeval-track-report`` given nonsense: a tracking URI that is no URI (``:::``) reached
MLflow, which took it for a file store and the report called the error a bug; a library error
about a setting named the Python parameter (``The 'path' parameter of read_job_dir``) and told
the user to change "the matching setting". Now the URI is refused as a usage error naming
``tracking.uri``, and the message starts with the setting to change."""

from __future__ import annotations

import subprocess
import sys

import pytest
from commands import clean_env

from recoeval_tracking.app.report_config import report_input_key


def _report(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "recoeval_tracking.app.report", *args],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


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
    proc = _report(tmp_path, "select.sweep_id=x", "tracking.uri=:::")
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("recoeval-track-report: tracking.uri must be a URI with a scheme")
    assert "':::'" in last and "internal error" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store made


def test_a_missing_job_folder_names_select_job_dirs(tmp_path):
    proc = _report(tmp_path, "select.job_dirs=[nope]", "output.log_to_mlflow=false")
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("recoeval-track-report: select.job_dirs: ")
    assert str(tmp_path / "nope") in last and "Change select.job_dirs=..." in last
