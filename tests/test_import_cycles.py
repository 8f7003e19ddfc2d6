"""No import cycle inside the package: its module graph, read from the source with ``ast``.

Every ``import`` and ``from ... import`` counts, those inside functions included (a lazy import
is still a dependency). An edge goes from a module to each module of the package it names:

- ``import a.b.c`` and ``from a.b.c import name`` import ``a.b.c`` (a package: its
  ``__init__``); relative forms are resolved against the importing module's package;
- ``from a.b import x`` where ``a.b.x`` is a module of the package imports ``a.b.x``;
  where ``x`` is only a name, it imports ``a.b`` (the package's ``__init__``).

Python also runs a package's ``__init__`` before any of its submodules; that implicit step is not
an edge here (otherwise every re-exporting ``__init__`` would be a cycle with its own children).
Imports under ``if TYPE_CHECKING:`` are not edges either: they never run, only a type checker
reads them (the names of an annotation, such as a mixin's ``self: Comparison``).
The graph covers ``recoeval_tracking`` and the Hydra plugins under ``hydra_plugins``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = (REPO / "recoeval_tracking", REPO / "hydra_plugins")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _sources() -> dict[str, Path]:
    """Every module of the two trees by dotted name."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


SOURCES = _sources()


def _resolve_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _owner(name: str) -> str | None:
    """The module of the trees that ``import name`` loads last, or None when not ours.

    ``import a.b.c`` of a name not in the trees (``a.b.c`` a class, say) falls back to the
    longest prefix that is a module of the trees.
    """
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in SOURCES:
            return candidate
        parts.pop()
    return None


def _is_type_checking(node: ast.AST) -> bool:
    """Whether ``node`` is ``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` (function bodies included) but the bodies of ``if TYPE_CHECKING:``
    (their ``else:`` runs, so it is kept)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _is_type_checking(node):
            assert isinstance(node, ast.If)
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _imports(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, imported module)`` for every import of a module of the trees in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _owner(alias.name)
                if target is not None:
                    yield node.lineno, target
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_base(node, module, _is_package(path))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in SOURCES else _owner(base)
                if target is not None:
                    yield node.lineno, target


def _graph() -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over both trees."""
    graph: dict[str, dict[str, int]] = {m: {} for m in SOURCES}
    for module, path in SOURCES.items():
        for line, target in _imports(module, path):
            graph[module].setdefault(target, line)
    return graph


@functools.cache
def _graph_once():
    """The graph, built once by the worker that runs this file (not at collection by each)."""
    return _graph()


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module, and self loops (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        # iterative Tarjan: a frame is (node, iterator over its successors)
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def _describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [
        f"    {m} (line {line}) -> {t}"
        for m in component
        for t, line in sorted(graph[m].items())
        if t in members
    ]
    return " <-> ".join(component) + ":\n" + "\n".join(edges)


def test_the_graph_is_read():
    assert "recoeval_tracking.reporting.compare" in _graph_once()
    assert any(m.startswith("hydra_plugins.") for m in _graph_once())
    # a relative import inside a function is seen and resolved
    assert "recoeval_tracking.jobdir" in _graph_once()["recoeval_tracking.app.pipeline"]
    # the statistics' old paths read from recoeval_tracking.stats, which imports nothing back
    assert "recoeval_tracking.stats" in _graph_once()["recoeval_tracking.reporting.stats"]
    assert not any(
        t.startswith("recoeval_tracking.reporting")
        for m, edges in _graph_once().items()
        if m.startswith("recoeval_tracking.stats")
        for t in edges
    )


def test_the_cycle_finder_finds_cycles():
    # a worked example: a -> b -> c -> a is one cycle, d -> d a self loop, e -> a none
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"d": 1}, "e": {"a": 1}}
    assert _cycles(graph) == [["a", "b", "c"], ["d"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


@pytest.mark.parametrize(
    ("source", "module", "is_package", "expected"),
    [
        # `from . import x`: x a submodule counts as importing it
        (
            "from . import compare",
            "recoeval_tracking.reporting.render",
            False,
            {"recoeval_tracking.reporting.compare"},
        ),
        # `from . import name` of a mere name imports the package's __init__
        (
            "from . import Comparison",
            "recoeval_tracking.reporting.render",
            False,
            {"recoeval_tracking.reporting"},
        ),
        # `from .mod import name` imports .mod, whatever name is
        (
            "from .compare import Comparison",
            "recoeval_tracking.reporting.render",
            False,
            {"recoeval_tracking.reporting.compare"},
        ),
        # in a package's __init__, `.` is the package itself
        (
            "from .compare import compare",
            "recoeval_tracking.reporting",
            True,
            {"recoeval_tracking.reporting.compare"},
        ),
        # `..` climbs a level; inside a function it still counts
        (
            "def f():\n    from ..tracking import views",
            "recoeval_tracking.reporting.render",
            False,
            {"recoeval_tracking.tracking.views"},
        ),
        ("import recoeval_tracking.reporting", "x", False, {"recoeval_tracking.reporting"}),
        # only a type checker runs these; its else branch runs
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .compare import C\n"
            "else:\n    from . import latex",
            "recoeval_tracking.reporting.render",
            False,
            {"recoeval_tracking.reporting.latex"},
        ),
        ("import numpy", "recoeval_tracking.reporting.render", False, set()),
    ],
)
def test_imports_are_resolved(tmp_path, source, module, is_package, expected):
    path = tmp_path / ("__init__.py" if is_package else "m.py")
    path.write_text(source, encoding="utf-8")
    assert {t for _, t in _imports(module, path)} == expected


def test_a_cycle_added_to_the_package_is_found():
    """The package's graph has none, and gets one when the recoeval sweeper imports the app's
    entry point again (as it did for ``run_task`` before the task moved to ``app/task.py``;
    the entry point imports the sweepers to register them)."""
    assert _cycles(_graph_once()) == []
    graph = {m: dict(edges) for m, edges in _graph_once().items()}
    graph["hydra_plugins.recoeval_sweeper.sweeper"]["recoeval_tracking.app.cli"] = 1
    assert ["hydra_plugins.recoeval_sweeper.sweeper", "recoeval_tracking.app.cli"] in _cycles(graph)


def test_the_package_has_no_import_cycle():
    cycles = _cycles(_graph_once())
    if cycles:
        pytest.fail(
            f"{len(cycles)} import cycle(s) in the package:\n"
            + "\n".join(_describe(c, _graph_once()) for c in cycles),
            pytrace=False,
        )
