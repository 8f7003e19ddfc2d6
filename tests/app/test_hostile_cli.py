"""``recoeval-track`` given nonsense that it took without a word: an empty
``tracking.experiment`` logged the run to the default experiment. It is refused before anything
is loaded or written, naming the key. The command's entry point runs in this process
(:func:`commands.run_main`: its exit status and output as the command's)."""

from __future__ import annotations

import pytest
from commands import run_main

from recoeval_tracking import InputError
from recoeval_tracking.app.precheck import check_before_load, check_experiment


@pytest.mark.parametrize("name", ["", "   ", 5, ["a"]])
def test_a_blank_or_odd_experiment_name_is_refused(name):
    with pytest.raises(InputError, match="tracking.experiment must be an MLflow experiment name"):
        check_experiment(name)
    with pytest.raises(InputError, match="tracking.experiment"):
        check_before_load({"tracking": {"enabled": True, "experiment": name}})


@pytest.mark.parametrize("name", [None, "recoeval", "my study 2"])
def test_a_name_or_null_passes(name):
    check_experiment(name)


def test_tracking_off_does_not_look_at_it():
    check_before_load({"tracking": {"enabled": False, "experiment": ""}})


def test_the_command_refuses_an_empty_experiment_before_writing(tmp_path):
    proc = run_main(
        ["model=popularity", "tracking=local", "tracking.uri=sqlite:///w.db"]
        + ["tracking.experiment=''", "hydra.run.dir=job"],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("recoeval-track: tracking.experiment must be an MLflow experiment name")
    assert "got ''" in last
    assert not (tmp_path / "w.db").exists()


def test_a_key_a_builtin_model_does_not_take_is_named(tmp_path):
    """``+model.bogus=1`` on a model of this package: the message named make_model's parameters
    but no setting ("Change the matching setting"); it now starts with ``model.bogus``."""
    proc = run_main(["model=popularity", "tracking=none", "+model.bogus=1"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "recoeval-track: model.bogus: The parameters of make_model('popularity')"
    )
    assert "must be among weighted" in last and "(model.bogus=...)" in last
