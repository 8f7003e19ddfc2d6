"""A file given where a job folder is expected (``read_job_dir``, the report's
``select.job_dirs``) ended in ``NotADirectoryError`` from looking for its ``INCOMPLETE`` marker
inside it: the report called it an internal error, a bug. It is a usage error naming the path
(the report's side: tests/app/test_hostile_report.py)."""

from __future__ import annotations

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.jobdir import read_job_dir


def test_a_file_is_no_job_directory(tmp_path):
    target = tmp_path / "metrics.json"
    target.write_text("{}")
    with pytest.raises(InputError, match=r"The 'path' parameter of read_job_dir must be a job "):
        read_job_dir(target)
    with pytest.raises(InputError, match="which is a file"):
        read_job_dir(target)
