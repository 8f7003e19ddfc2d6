"""``_target_`` and its trust boundary: a config is code (``_target_: builtins.open`` with
``mode: w`` truncated a file), and the setting ``model_allow`` (module prefixes) limits what a
model's ``_target_`` may name, nested ones included, before anything is imported."""

from __future__ import annotations

import re
import shutil
import sys

import pytest
from commands import REPO_ROOT, run_command

from recoeval_tracking.app.user_model import check_model_allowed, instantiate_model
from recoeval_tracking.models import ModelProtocolError

EXAMPLE = REPO_ROOT / "examples" / "own_model"


@pytest.mark.parametrize(
    "target, allow",
    [
        ("my_models.ease.EASE", ["my_models"]),
        ("my_models.ease.EASE", ["my_models.ease"]),
        ("my_models.ease.EASE", ["other", "my_models."]),
        ("builtins.open", None),  # no limit set: anything (a config is code)
    ],
)
def test_targets_inside_the_prefixes_pass(target, allow):
    check_model_allowed({"_target_": target, "lam": 1.0}, allow)


@pytest.mark.parametrize(
    "model, key",
    [
        ({"_target_": "builtins.open", "file": "x", "mode": "w"}, "model._target_"),
        ({"_target_": "my_models_evil.X"}, "model._target_"),  # a prefix of the name only
        (
            {"_target_": "my_models.ease.EASE", "helper": {"_target_": "os.remove", "path": "x"}},
            "model.helper._target_",
        ),
        (
            {"_target_": "my_models.ease.EASE", "parts": [1, {"_target_": "shutil.rmtree"}]},
            "model.parts[1]._target_",
        ),
    ],
)
def test_targets_outside_the_prefixes_are_refused_by_key(model, key):
    with pytest.raises(
        ModelProtocolError,
        match=re.escape(key) + r" names .* outside model_allow \['my_models'\]",
    ):
        check_model_allowed(model, ["my_models"])


@pytest.mark.parametrize("allow", ["my_models", [""], [3], {"a": 1}])
def test_a_malformed_allow_list_is_refused(allow):
    with pytest.raises(ModelProtocolError, match="model_allow must be a list of module prefixes"):
        check_model_allowed({"_target_": "my_models.X"}, allow)


def test_nothing_outside_the_list_is_imported_or_called(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    section = {"_target_": "builtins.open", "file": str(victim), "mode": "w"}
    sys.modules.pop("json.tool", None)
    with pytest.raises(ModelProtocolError, match="outside model_allow"):
        instantiate_model(section, allow=["my_models"])
    with pytest.raises(ModelProtocolError, match="outside model_allow"):
        instantiate_model({"_target_": "json.tool.main"}, allow=["my_models"])
    assert victim.read_text() == "precious"
    assert "json.tool" not in sys.modules  # refused before the import


@pytest.mark.slow
def test_the_command_refuses_a_target_outside_model_allow(tmp_path):
    project = tmp_path / "own_model"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "outputs"))
    victim = project / "victim.txt"
    victim.write_text("precious")
    (project / "conf" / "model" / "evil.yaml").write_text(
        f"_target_: builtins.open\nfile: {victim}\nmode: w\n"
    )
    small = [
        "dataset.n_users=60",
        "dataset.n_items=30",
        "plots=false",
        "progress=false",
        "tracking=none",
    ]
    proc = run_command(
        [
            "--config-dir",
            "conf",
            "model=evil",
            "model_allow=[my_models]",
            "hydra.run.dir=evil",
            *small,
        ],
        project,
    )
    assert proc.returncode == 2, proc.stderr
    assert "model._target_ names 'builtins.open', outside model_allow ['my_models']" in (
        proc.stderr
    )
    assert victim.read_text() == "precious" and "Traceback" not in proc.stderr
    proc = run_command(
        [
            "--config-dir",
            "conf",
            "model=ease",
            "model_allow=[my_models]",
            "hydra.run.dir=ease",
            *small,
        ],
        project,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
