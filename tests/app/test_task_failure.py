"""What a failed job says: one paragraph on the terminal, and the same reason kept in its folder's
log (``recoeval.log``), with the frame of the user's code that raised, so that the folder opened
later says why it holds no results. Fast: no Hydra run, the task's failure path called directly.
"""

from __future__ import annotations

import importlib.util
import io
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from recoeval_tracking.app.errors import (
    EXIT_FAILURE,
    SweepJobsFailed,
    error_message,
    refuse_nothing_evaluated,
)
from recoeval_tracking.app.task import _say_job_failed, log_job_error
from recoeval_tracking.models._user import code_error

USER_CODE = """\
class Broken:
    def fit(self, train):
        self.sim = train / (1.0 + self.shrink)
"""


def _user_error(tmp_path: Path) -> BaseException:
    """A ModelCodeError as the app makes it, for a TypeError raised in a module of the user's."""
    path = tmp_path / "user_models" / "broken.py"
    path.parent.mkdir()
    path.write_text(USER_CODE)
    spec = importlib.util.spec_from_file_location("broken_user_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Broken()
    model.shrink = "oops"
    try:
        model.fit(2.0)
    except TypeError as err:
        wrapped = code_error(err, "Broken.fit")
        wrapped.__cause__ = err
        return wrapped
    raise AssertionError("the user's code did not raise")


def _nothing_evaluated() -> BaseException:
    results = SimpleNamespace(
        n_users_evaluated=0, means={}, metric_columns=["ndcg_at_10"], nan_counts={"nan_score": 7}
    )
    with pytest.raises(Exception) as info:
        refuse_nothing_evaluated(results)
    return info.value


def test_the_folder_log_keeps_the_error_and_the_users_frame(tmp_path):
    err = _user_error(tmp_path)
    job = tmp_path / "job"
    job.mkdir()
    (job / "recoeval.log").write_text("[...][recoeval_tracking.app.pipeline][INFO] - fitting\n")
    log = log_job_error(job, "recoeval.log", err, error_message(err))
    assert log == job / "recoeval.log"
    text = log.read_text()
    assert text.startswith("[...][recoeval_tracking.app.pipeline][INFO] - fitting\n")  # kept
    assert "[ERROR] - the job failed: Broken.fit raised TypeError:" in text
    # the frame of the user's code, as a traceback shows it, with its line
    assert f'File "{tmp_path / "user_models" / "broken.py"}", line 3, in fit' in text
    assert "self.sim = train / (1.0 + self.shrink)" in text
    assert "recoeval_tracking/" not in text  # no frame of the package's own


def test_the_log_goes_to_the_folders_file_handler_not_the_terminal(tmp_path):
    err = _nothing_evaluated()
    job = tmp_path / "job"
    job.mkdir()
    root = logging.getLogger()
    file_handler = logging.FileHandler(job / "recoeval.log")
    terminal = io.StringIO()
    console = logging.StreamHandler(terminal)
    root.addHandler(file_handler)
    root.addHandler(console)
    try:
        log = log_job_error(job, "other.log", err, error_message(err))
    finally:
        root.removeHandler(file_handler)
        root.removeHandler(console)
        file_handler.close()
    assert log == job / "recoeval.log" and not (job / "other.log").exists()
    text = log.read_text()
    assert "the job failed: The evaluation evaluated none of the 7 users" in text
    assert "nan_score: 7" in text
    # the package's own frame (where NothingEvaluated is raised) is no help to the user
    assert "File " not in text and "errors.py" not in text
    assert terminal.getvalue() == ""


def test_a_job_without_a_folder_logs_nothing(tmp_path):
    err = _nothing_evaluated()
    assert log_job_error(tmp_path / "gone", "recoeval.log", err, error_message(err)) is None


@pytest.mark.parametrize("make", ["nothing_evaluated", "user_code"])
def test_a_failed_sweep_job_says_what_was_recorded_once(tmp_path, capsys, make):
    err = _nothing_evaluated() if make == "nothing_evaluated" else _user_error(tmp_path)
    found = error_message(err)
    assert found is not None and found[0] == EXIT_FAILURE
    log = tmp_path / "3" / "recoeval.log"
    _say_job_failed(3, err, found, log)
    said = capsys.readouterr().err
    assert said.count("\n") == 1  # one paragraph
    assert said.startswith("recoeval-track: job #3 of the sweep failed: ")
    assert said.count("Nothing") == 1 and said.count("MLflow") == 1
    assert f"{log} keeps this message." in said


def test_a_sweep_whose_every_job_failed_does_not_speak_of_the_others():
    err = RuntimeError("x")
    every = SweepJobsFailed([(0, ["model.shrink=0"], err), (1, ["model.shrink=1"], err)], 2)
    assert "other jobs" not in str(every)
    assert "each said why when it failed, above, and its job folder's log keeps it." in str(every)
    assert str(every).endswith("No job of the sweep ran to the end: it has no results.")
    some = SweepJobsFailed([(0, ["model.shrink=0"], err)], 2)
    assert str(some).endswith("The other jobs ran and their results are recorded.")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_log_that_cannot_be_written_is_not_claimed_and_prints_nothing(tmp_path, capsys):
    """As on a full disk: the write fails; the message then does not point at the log, and no
    logging traceback ("--- Logging error ---") reaches the terminal."""
    err = _nothing_evaluated()
    job = tmp_path / "job"
    job.mkdir()
    (job / "recoeval.log").symlink_to("/dev/full")  # every write fails: ENOSPC
    handler = logging.FileHandler(job / "recoeval.log")
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        assert log_job_error(job, "recoeval.log", err, error_message(err)) is None
    finally:
        root.removeHandler(handler)
        handler.stream = None  # its own close would flush into the full device
    assert capsys.readouterr().err == ""
