"""The old paths of tracking's names: each name that moved to the module of its concept (the
sweep directory's records to ``sweeps``, the sync to ``pending``, the views that ``sweeps``
handed out to ``views``, the evaluator's inputs to ``evaluator``) still reads from its old
module, as the same object, with a DeprecationWarning naming the new path; the package itself
reads no moved name from an old path."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OLD_MODULES = [
    "recoeval_tracking.tracking.sweep_records",
    "recoeval_tracking.tracking.sync",
    "recoeval_tracking.tracking.sweeps",
    "recoeval_tracking.tracking.evaluator_data",
]
OLD = {name: dict(importlib.import_module(name)._MOVED) for name in OLD_MODULES}
CASES = [(old, name) for old, moved in OLD.items() for name in moved]


def test_each_old_module_names_what_left_it():
    assert {"sync_paths", "scan", "JOB_FILE_NAMES"} <= set(OLD["recoeval_tracking.tracking.sync"])
    assert "note_swept_keys" in OLD["recoeval_tracking.tracking.sweep_records"]
    assert "sweep_view_hint" in OLD["recoeval_tracking.tracking.sweeps"]


@pytest.mark.parametrize(("old", "name"), CASES, ids=[f"{o}.{n}" for o, n in CASES])
def test_a_moved_name_reads_from_its_old_path_with_a_warning(old, name):
    new = importlib.import_module(OLD[old][name])
    said = f"{old}.{name} has moved to {new.__name__}.{name}"
    with pytest.warns(DeprecationWarning, match=re.escape(said)) as caught:
        value = getattr(importlib.import_module(old), name)
    # one warning, pointed at the line that read the old path (not at the shim)
    assert [w.filename for w in caught] == [__file__]
    assert value is getattr(new, name) and name in new.__all__
    assert name not in getattr(importlib.import_module(old), "__all__", [])


def test_an_old_path_still_imports_with_from():
    with pytest.warns(DeprecationWarning, match="tracking.pending.sync_paths"):
        from recoeval_tracking.tracking.sync import sync_paths
    from recoeval_tracking.tracking.pending import sync_paths as new

    assert sync_paths is new


def test_an_unknown_name_is_still_an_attribute_error():
    module = importlib.import_module("recoeval_tracking.tracking.sync")
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


def _old_path_imports(path: Path) -> set[str]:
    """The old modules ``path`` reads a moved name from (absolute and relative imports)."""
    rel = path.relative_to(REPO).with_suffix("")
    package = ".".join(rel.parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        moved = OLD.get(base, {})
        if any(alias.name in moved for alias in node.names):
            found.add(base)
    return found


def test_the_package_reads_no_moved_name_from_an_old_path():
    used = set()
    for top in ("recoeval_tracking", "hydra_plugins"):
        for path in sorted((REPO / top).rglob("*.py")):
            for old in _old_path_imports(path):
                used.add((str(path.relative_to(REPO)), old))
    assert not used, f"old paths read by the package: {sorted(used)}"
