"""The hand-made mutations of tools/mutation_sets.py still apply to today's code, and the tests
they name (and those of tools/mutate.py's areas) still exist.

A mutation is a source replacement whose ``old`` text must occur exactly once in its file; a
reformatting or a move of the code leaves it matching nothing (or twice), and ``mutate.py --set``
then stops at its first stale entry. These checks read the files only: no mutant is run."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_tools_{name}", ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # mutate.py's dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


SETS = _load("mutation_sets").SETS
ENTRIES = [(s, name, entry) for s, muts in SETS.items() for name, entry in muts.items()]


def _missing(tests: tuple[str, ...] | list[str]) -> list[str]:
    """The test paths (``file`` or ``file::test``) that name no file or folder."""
    return [t for t in tests if not (ROOT / t.split("::")[0]).exists()]


@pytest.mark.parametrize(
    ("set_name", "name", "entry"), ENTRIES, ids=[f"{s}:{n}" for s, n, _ in ENTRIES]
)
def test_mutation_applies_once_and_names_existing_tests(set_name, name, entry):
    path, reps, tests, why = entry
    assert (ROOT / path).is_file(), f"{set_name}:{name}: no file {path}"
    source = (ROOT / path).read_text()
    mutated = source
    for old, new in reps:
        assert old != new, f"{set_name}:{name}: a replacement that changes nothing"
        # replacements are made one after the other, as tools/mutation_sets.apply makes them
        n = mutated.count(old)
        assert n == 1, f"{set_name}:{name}: {old!r} occurs {n} times in {path} (expected once)"
        mutated = mutated.replace(old, new)
    if path.endswith(".py"):
        # a mutant that does not parse is killed by any test: it would test nothing
        ast.parse(mutated, filename=path)
    assert tests, f"{set_name}:{name}: names no test"
    assert not _missing(tests), f"{set_name}:{name}: no such test {_missing(tests)}"
    assert why.strip(), f"{set_name}:{name}: says not what it breaks"


def test_mutate_areas_name_existing_modules_and_tests():
    areas = _load("mutate").AREAS
    for area, (modules, tests) in areas.items():
        gone = [m for m in modules if not (ROOT / "recoeval_tracking" / m).is_file()]
        assert not gone, f"area {area}: no module {gone}"
        assert not _missing(tests), f"area {area}: no such test {_missing(tests)}"
