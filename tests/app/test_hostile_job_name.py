"""``hydra.job.name`` set in a config file, not on the command line: Hydra opens the job's log,
``<job folder>/<name>.log``, before the task runs, so a name such as ``../../escape`` put the
log outside the job folder. Every route is refused when the run (or sweep) starts, naming the key
and the value, before anything is written: a primary config of the user's own (``--config-dir``
with ``--config-name``, or ``--config-path``), an option with ``# @package _global_`` in a single
run and in one job of a sweep, an interpolation, and a Hydra app of the user's own (door 3).

Each case runs in ``tmp_path``, with the job folder ``a/b/job`` (a sweep: ``a/b``); the escaped
log would be ``a/escape.log`` or above. ``recoeval-track``'s cases run its entry point in this
process (:func:`commands.run_main`: its exit status and output as the command's); the user's own
app runs as its own process (``python train.py``), as a user starts it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from commands import clean_env, run_main, run_process

from recoeval_tracking.app.job_name import JobNameError, check_job_name, name_problem

ESCAPE = "../../escape"
REFUSED = "hydra.job.name must be a plain name"
SMALL = ["tracking=none", "plots=false", "progress=false", "dataset.n_users=30"]

# a primary config of the user's own: ours, then the name
PRIMARY = f"defaults:\n  - config\n  - _self_\nhydra:\n  job:\n    name: {ESCAPE}\n"
# a primary config that does not set the name, and a model option that does (a global package)
PLAIN = (
    "defaults:\n  - recoeval_schema\n  - dataset: synthetic\n  - split: random\n"
    "  - model: popularity\n  - metrics: standard\n  - tracking: none\n  - backend: cpu\n"
    "  - override hydra/sweeper: recoeval\n  - _self_\n"
)
EVIL_MODEL = (
    "# @package _global_\ndefaults:\n  - /model/popularity@model\n"
    f"hydra:\n  job:\n    name: {ESCAPE}\n"
)


def _user_configs(root: Path) -> Path:
    folder = root / "my_configs"
    (folder / "model").mkdir(parents=True)
    (folder / "mine.yaml").write_text(PRIMARY)
    (folder / "plain.yaml").write_text(PLAIN)
    (folder / "model" / "evil.yaml").write_text(EVIL_MODEL)
    return folder


def _nothing_outside(root: Path) -> None:
    logs = sorted(str(p.relative_to(root)) for p in root.rglob("*.log"))
    assert logs == [], logs
    assert not (root / "a").exists() and not (root / "escape.log").exists()


def _refused(proc: subprocess.CompletedProcess, status: int = 2) -> str:
    assert proc.returncode == status, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert REFUSED in last and repr(ESCAPE) in last, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return last


# ---------------------------------------------------------------------------------------------
# the rule
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "/tmp/abs", "a\\b", "..", "", "  ", "a\x00b", "a\nb", None, 3]
)
def test_a_name_that_is_no_plain_name_is_refused(name):
    assert name_problem(name) is not None
    with pytest.raises(JobNameError, match="hydra.job.name must be a plain name"):
        check_job_name(name, "the config")


@pytest.mark.parametrize("name", ["recoeval", "my-job_2.v1", "train"])
def test_plain_names_pass(name):
    assert name_problem(name) is None
    check_job_name(name)


# ---------------------------------------------------------------------------------------------
# recoeval-track: every route, refused with status 2 and nothing written
# ---------------------------------------------------------------------------------------------


def test_a_primary_config_from_config_dir(tmp_path):
    _user_configs(tmp_path)
    proc = run_main(
        ["--config-dir", "my_configs", "--config-name", "mine", *SMALL, "hydra.run.dir=a/b/job"],
        tmp_path,
    )
    assert "the config sets it to" in _refused(proc)
    _nothing_outside(tmp_path)


def test_a_primary_config_from_config_path(tmp_path):
    """``--config-path`` replaces our configs (the re-run of a saved job): our callbacks are
    not in that config, the check is added to every command line."""
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "config.yaml").write_text(f"seed: 0\nhydra:\n  job:\n    name: {ESCAPE}\n")
    proc = run_main(
        ["--config-path", str(folder), "--config-name", "config", "hydra.run.dir=a/b/job"],
        tmp_path,
    )
    _refused(proc)
    _nothing_outside(tmp_path)


def test_a_global_option_of_the_users_config_dir(tmp_path):
    _user_configs(tmp_path)
    proc = run_main(
        ["--config-dir", "my_configs", "--config-name", "plain", "model=evil", *SMALL]
        + ["hydra.run.dir=a/b/job"],
        tmp_path,
    )
    _refused(proc)
    _nothing_outside(tmp_path)


def test_one_job_of_a_sweep_whose_option_sets_the_name(tmp_path):
    """The sweep's own config is fine; the recoeval sweeper composes each job before any runs
    and refuses the one whose option sets the name."""
    _user_configs(tmp_path)
    proc = run_main(
        ["--config-dir", "my_configs", "--config-name", "plain", "-m", "model=popularity,evil"]
        + [*SMALL, "hydra.sweep.dir=a/b"],
        tmp_path,
    )
    last = _refused(proc)
    assert "job #1 of the sweep's 2 (model=evil " in last and "No job was run" in last
    _nothing_outside(tmp_path)


def test_a_sweep_whose_primary_config_sets_the_name(tmp_path):
    _user_configs(tmp_path)
    proc = run_main(
        ["--config-dir", "my_configs", "--config-name", "mine", "-m", "model=popularity,random"]
        + [*SMALL, "hydra.sweep.dir=a/b"],
        tmp_path,
    )
    _refused(proc)
    _nothing_outside(tmp_path)


def test_an_interpolation_on_the_command_line(tmp_path):
    """The command line's own check sees the text ``${oc.env:ESC}``; the resolved value is
    checked when the run starts."""
    env = clean_env() | {"ESC": ESCAPE}
    proc = run_main(
        ["model=popularity", *SMALL, "hydra.job.name=${oc.env:ESC}", "hydra.run.dir=a/b/job"],
        tmp_path,
        env=env,
    )
    _refused(proc)
    _nothing_outside(tmp_path)


# ---------------------------------------------------------------------------------------------
# door 3: a Hydra app of the user's own with our config groups
# ---------------------------------------------------------------------------------------------

USER_APP = """
import hydra
from recoeval_tracking.app import load_split

@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg):
    load_split(cfg)
    print("loaded")

if __name__ == "__main__":
    main()
"""
USER_CONFIG = f"""
defaults:
  - dataset: synthetic
  - split: random
  - metrics: standard
  - tracking: none
  - _self_
seed: 0
dataset:
  n_users: 30
hydra:
  searchpath: [pkg://recoeval_tracking.configs]
  run:
    dir: a/b/job
  job:
    name: {ESCAPE}
  callbacks:
    mlflow_sweep:
      _target_: recoeval_tracking.app.callbacks.MlflowSweepCallback
"""


def _user_app(root: Path, *args: str) -> subprocess.CompletedProcess:
    (root / "conf").mkdir()
    (root / "conf" / "config.yaml").write_text(USER_CONFIG)
    (root / "train.py").write_text(USER_APP)
    return run_process([sys.executable, "train.py", *args], root)


def test_a_users_app_naming_our_callback_is_stopped_before_the_log(tmp_path):
    proc = _user_app(tmp_path)
    _refused(proc, status=1)  # the user's app: our message, status 1, no traceback
    assert "loaded" not in proc.stdout
    _nothing_outside(tmp_path)


def test_a_users_app_without_our_callback_is_stopped_at_load_split(tmp_path):
    """Without the callback, Hydra opens the log before the task: ``load_split`` refuses to go
    on and says where that log is."""
    proc = _user_app(tmp_path, "~hydra.callbacks.mlflow_sweep")
    assert proc.returncode == 1
    assert REFUSED in proc.stderr and repr(ESCAPE) in proc.stderr
    assert "Hydra had already opened the log file" in proc.stderr
    assert "loaded" not in proc.stdout


@pytest.mark.parametrize("args", [["--info"], ["-i"], ["--info", "config"], ["--hydra-help"]])
def test_options_that_run_no_job_are_left_as_they_are(tmp_path, args):
    """The check is added as an override; after ``--info`` (whose value is optional) it would be
    taken for that value. Options that run no job get nothing added."""
    proc = run_main(args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "recoeval_job_name" not in proc.stdout + proc.stderr


def test_a_name_not_resolvable_when_composed_is_left_to_the_task():
    """A sweep job's name that refers to what only the running job has must not fail the
    sweep's composition; the task checks the job's own name from HydraConfig."""
    from omegaconf import OmegaConf

    from recoeval_tracking.app.job_name import check_config_job_name

    later = OmegaConf.create({"hydra": {"job": {"name": "${hydra.runtime.not_yet}"}}})
    check_config_job_name(later)  # no error
    with pytest.raises(JobNameError):
        check_config_job_name(OmegaConf.create({"hydra": {"job": {"name": ESCAPE}}}))
