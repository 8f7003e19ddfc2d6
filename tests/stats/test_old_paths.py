"""The old paths: each name that moved from ``recoeval_tracking.reporting`` to
``recoeval_tracking.stats`` (the statistics) or ``recoeval_tracking.reporting.render`` (the
renderers) still reads from its old module, as the same object, with a DeprecationWarning naming
the new path; the package itself reads no moved name from an old path."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import recoeval_tracking.reporting as reporting
from recoeval_tracking import stats
from recoeval_tracking.reporting._moved import OLD_PATHS

ROOT = Path(__file__).resolve().parents[2] / "recoeval_tracking"
OLD = OLD_PATHS
CASES = [(old, name) for old, moved in OLD.items() for name in moved]


def test_the_old_modules_are_found():
    assert {"recoeval_tracking.reporting", "recoeval_tracking.reporting.stats"} <= set(OLD)
    assert ("recoeval_tracking.reporting.stats", "wilcoxon_test") in CASES
    assert ("recoeval_tracking.reporting.latex", "comparison_latex") in CASES
    # every module of the package that serves old paths is in the table, and no other
    serving = {
        f"recoeval_tracking.reporting.{m.name}"
        for m in pkgutil.iter_modules(reporting.__path__)
        if "__getattr__" in vars(importlib.import_module(f"recoeval_tracking.reporting.{m.name}"))
    }
    assert serving | {"recoeval_tracking.reporting"} == set(OLD)


@pytest.mark.parametrize(("old", "name"), CASES, ids=[f"{o}.{n}" for o, n in CASES])
def test_a_moved_name_reads_from_its_old_path_with_a_warning(old, name):
    module = importlib.import_module(old)
    new = OLD[old][name]
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(module, name)
    (warning,) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert f"{old}.{name} has moved to {new}.{name}" in str(warning.message)
    assert warning.filename == __file__  # pointed at the caller, not at the shim
    assert value is getattr(importlib.import_module(new), name)
    # a public statistic moved to the public package; only private helpers point at a module of it
    if new.startswith("recoeval_tracking.stats"):
        assert (new == "recoeval_tracking.stats") is (name in stats.__all__)
    assert name not in getattr(module, "__all__", [])


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_statistic"):
        reporting.stats.no_such_statistic  # noqa: B018


def _old_path_reads(path: Path) -> set[str]:
    """The moved names ``path`` reads from an old path: ``from <old> import <moved>`` and
    ``<alias>.<moved>`` for ``from . import <old> as <alias>`` (relative imports resolved)."""
    module = ".".join(("recoeval_tracking", *path.relative_to(ROOT).with_suffix("").parts))
    module = module.removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, aliases = set(), {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        for alias in node.names:
            if base in OLD and alias.name in OLD[base]:
                found.add(f"{base}.{alias.name}")
            elif f"{base}.{alias.name}" in OLD:
                aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            old = aliases.get(node.value.id)
            if old and node.attr in OLD[old]:
                found.add(f"{old}.{node.attr}")
    return found


def test_the_package_reads_moved_names_only_where_it_says_it_does():
    readers = {}
    for path in sorted(ROOT.rglob("*.py")):
        reads = _old_path_reads(path)
        if reads:
            name = ".".join(("recoeval_tracking", *path.relative_to(ROOT).with_suffix("").parts))
            readers[name.removesuffix(".__init__")] = reads
    # the package reads every moved name from recoeval_tracking.stats: the warnings are only
    # ever about a user's code
    assert readers == {}, readers
