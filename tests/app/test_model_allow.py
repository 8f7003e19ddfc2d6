"""``_target_`` and its trust boundary: a config is code (``_target_: builtins.open`` with
``mode: w`` truncated a file), and the setting ``model_allow`` (module prefixes) limits what a
model's ``_target_`` may name, nested ones included, before anything is imported.

The command's refusals made before the user's package is imported run its entry point in this
process (:func:`commands.run_main`); the runs that import the user's ``my_models`` run as a
process of their own, which keeps that package out of the tests' ``sys.modules``."""

from __future__ import annotations

import re
import shutil
import sys

import pytest
from commands import REPO_ROOT, run_command, run_main

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
    # refused before anything is imported: the entry point in this process (commands.run_main);
    # the run of the user's model imports their my_models, so it runs as its own process
    proc = run_main(
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


# ---------------------------------------------------------------------------------------------
# The object a _target_ resolves to, not only its text
# ---------------------------------------------------------------------------------------------

_PACKAGE = "allowcheck_models"
_MODULE_TEXT = """
import functools
import os

import numpy as np


class EASE:
    def __init__(self, lam=1.0):
        self.lam = lam

    @classmethod
    def from_lam(cls, lam=1.0):
        return cls(lam)

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        return np.zeros((len(user_indices), 1))


def make_ease(lam=1.0):
    return EASE(lam)


instance = EASE()
partial_ease = functools.partial(EASE, lam=2.0)
"""


@pytest.fixture(scope="module")
def package_dir(tmp_path_factory):
    """A package of the user's whose module imports numpy and os, as a model module does; its
    folder is the ``base_dir`` (not on ``sys.path`` until the check puts it there)."""
    root = tmp_path_factory.mktemp("own")
    (root / _PACKAGE).mkdir()
    (root / _PACKAGE / "__init__.py").write_text("")
    (root / _PACKAGE / "ease.py").write_text(_MODULE_TEXT)
    yield root
    for name in [m for m in sys.modules if m == _PACKAGE or m.startswith(_PACKAGE + ".")]:
        sys.modules.pop(name, None)
    if str(root) in sys.path:
        sys.path.remove(str(root))


@pytest.mark.parametrize("attr", ["ease.EASE", "ease.make_ease", "ease.EASE.from_lam"])
def test_classes_and_functions_of_the_allowed_module_pass(package_dir, attr):
    check_model_allowed({"_target_": f"{_PACKAGE}.{attr}"}, [_PACKAGE], base_dir=package_dir)
    check_model_allowed({"_target_": f"{_PACKAGE}.{attr}"}, [f"{_PACKAGE}.ease"])


@pytest.mark.parametrize(
    "attr, module",
    [
        ("ease.np.save", "'numpy'"),
        ("ease.os.system", "'posix'|'nt'"),
        ("ease.os.path.join", "'posixpath'|'ntpath'"),
        ("ease.functools.partial", "'functools'"),
        ("ease.instance", "'allowcheck_models.ease'"),  # an instance: not a class or function
        ("ease.partial_ease", "'functools'"),
    ],
)
def test_a_target_whose_object_lives_elsewhere_is_refused(package_dir, attr, module):
    target = f"{_PACKAGE}.{attr}"
    with pytest.raises(ModelProtocolError) as err:
        check_model_allowed({"_target_": target}, [_PACKAGE], base_dir=package_dir)
    text = str(err.value)
    assert f"model._target_ names {target!r}, which resolves to" in text
    assert re.search(rf"\(module (?:{module})\)", text), text
    assert f"outside model_allow ['{_PACKAGE}']" in text


def test_a_nested_target_is_resolved_too(package_dir):
    model = {
        "_target_": f"{_PACKAGE}.ease.EASE",
        "helper": {"_target_": f"{_PACKAGE}.ease.np.save"},
    }
    with pytest.raises(ModelProtocolError, match=r"model\.helper\._target_ names .*'numpy'"):
        check_model_allowed(model, [_PACKAGE], base_dir=package_dir)


def test_nothing_is_written_through_an_allowed_modules_import(package_dir, tmp_path):
    """``_target_: <allowed>.np.save`` passed the text check and wrote a file with numpy."""
    victim = tmp_path / "written.npy"
    section = {"_target_": f"{_PACKAGE}.ease.np.save", "file": str(victim), "arr": [1, 2]}
    with pytest.raises(ModelProtocolError, match="'numpy'"):
        instantiate_model(section, base_dir=package_dir, allow=[_PACKAGE])
    assert not victim.exists()
    marker = tmp_path / "ran"
    section = {"_target_": f"{_PACKAGE}.ease.os.system", "command": f"touch {marker}"}
    with pytest.raises(ModelProtocolError, match="outside model_allow"):
        instantiate_model(section, base_dir=package_dir, allow=[_PACKAGE])
    assert not marker.exists()
    built = instantiate_model(
        {"_target_": f"{_PACKAGE}.ease.EASE", "lam": 3.0}, base_dir=package_dir, allow=[_PACKAGE]
    )
    assert built.model.lam == 3.0


@pytest.mark.parametrize("allow", [[], ()])
def test_an_empty_allow_list_allows_no_target(allow):
    """``model_allow: []`` allows nothing (null is no limit): an empty list read as "no limit"
    would let every target through."""
    with pytest.raises(ModelProtocolError, match=r"model_allow is \[\], which allows no _target_"):
        check_model_allowed({"_target_": "my_models.ease.EASE"}, allow)
    check_model_allowed({"name": "als", "factors": 8}, allow)  # our own models still run
    check_model_allowed({"_target_": "my_models.ease.EASE"}, None)


@pytest.mark.slow
def test_the_command_refuses_an_allowed_modules_import_and_an_empty_list(tmp_path):
    project = tmp_path / "own_model"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "outputs"))
    victim = project / "victim.npy"
    (project / "conf" / "model" / "evil.yaml").write_text(
        f"_target_: my_models.ease.np.save\nfile: {victim}\narr: [1, 2]\n"
    )
    small = ["dataset.n_users=60", "dataset.n_items=30", "plots=false", "progress=false"]
    args = ["--config-dir", "conf", "tracking=none", *small]
    # the check imports my_models.ease to resolve the object: a process of its own
    proc = run_command([*args, "model=evil", "model_allow=[my_models]", "hydra.run.dir=e"], project)
    assert proc.returncode == 2, proc.stderr
    assert "model._target_ names 'my_models.ease.np.save', which resolves to" in proc.stderr
    assert "(module 'numpy')" in proc.stderr and "model_allow ['my_models']" in proc.stderr
    assert not victim.exists() and "Traceback" not in proc.stderr
    # refused before my_models is imported: the entry point in this process (commands.run_main)
    proc = run_main([*args, "model=ease", "model_allow=[]", "hydra.run.dir=n"], project)
    assert proc.returncode == 2, proc.stderr
    assert "model_allow is [], which allows no _target_" in proc.stderr
