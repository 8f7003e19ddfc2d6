"""The shape of the package's modules: each opens with a docstring that says what it holds (a
module holds one concept, however long that is; it is split where it holds two, not where a
line count runs out), and functions stay short enough to read at once.

The function length is a guide, counted on the formatted code (``ruff format``) without the
docstring; the functions over it are listed with the reason they stay, so that a new one is a
decision, not an accident."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "recoeval_tracking"
#: The package's Hydra plugins, held to the same shape.
PLUGINS = ROOT.parent / "hydra_plugins"
#: The guide: formatted lines of a function body, docstring aside.
MAX_FUNCTION_LINES = 120
#: A module docstring shorter than this many words does not say what the module holds.
MIN_DOCSTRING_WORDS = 5

#: "module:function" -> why it stays longer than MAX_FUNCTION_LINES.
FUNCTION_EXCEPTIONS: dict[str, str] = {
    "reporting/report.py:_tables": (
        "builds the summary and comparison tables of every test in one pass over the runs; "
        "the next function to split (by table) when the report is touched"
    ),
}


def _modules() -> list[Path]:
    return sorted(
        p for base in (ROOT, PLUGINS) for p in base.rglob("*.py") if "__pycache__" not in p.parts
    )


def _name(path: Path) -> str:
    """The path below the package, or from the repository root for the plugins."""
    return path.relative_to(ROOT if ROOT in path.parents else ROOT.parent).as_posix()


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function without its docstring."""
    body = node.body
    doc = 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        doc = body[0].end_lineno - body[0].lineno + 1
    return node.end_lineno - node.lineno + 1 - doc


@pytest.mark.parametrize("path", _modules(), ids=_name)
def test_module_says_what_it_holds(path):
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert len(doc.split()) >= MIN_DOCSTRING_WORDS, (
        f"{_name(path)} has no docstring saying what it holds"
    )


def test_functions_are_short():
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{_name(path)}:{node.name}"
                if _code_lines(node) > MAX_FUNCTION_LINES and key not in FUNCTION_EXCEPTIONS:
                    long.append(f"{key} ({_code_lines(node)} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: " + ", ".join(long)


def test_every_exception_is_still_needed():
    """An exception whose function was shortened or removed is dropped from the list."""
    lengths = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lengths[f"{_name(path)}:{node.name}"] = _code_lines(node)
    stale = [k for k in FUNCTION_EXCEPTIONS if lengths.get(k, 0) <= MAX_FUNCTION_LINES]
    assert not stale, f"no longer over {MAX_FUNCTION_LINES} lines: {stale}"
