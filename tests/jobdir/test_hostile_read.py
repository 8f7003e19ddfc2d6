"""A file given where a job folder is expected (``read_job_dir``, the report's
``select.job_dirs``) ended in ``NotADirectoryError`` from looking for its ``INCOMPLETE`` marker
inside it: the report called it an internal error, a bug. It is a usage error naming the path."""

from __future__ import annotations

import sys

import pytest
from commands import clean_env

from recoeval_tracking import InputError
from recoeval_tracking.jobdir import read_job_dir


def test_a_file_is_no_job_directory(tmp_path):
    target = tmp_path / "metrics.json"
    target.write_text("{}")
    with pytest.raises(InputError, match=r"The 'path' parameter of read_job_dir must be a job "):
        read_job_dir(target)
    with pytest.raises(InputError, match="which is a file"):
        read_job_dir(target)


@pytest.mark.slow
def test_the_report_calls_it_a_usage_error(tmp_path):
    import subprocess

    (tmp_path / "afile.txt").write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "recoeval_tracking.app.report"]
        + ["select.job_dirs=[afile.txt]", "output.log_to_mlflow=false"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "which is a file" in proc.stderr and "internal error" not in proc.stderr
    assert str(tmp_path / "afile.txt") in proc.stderr
