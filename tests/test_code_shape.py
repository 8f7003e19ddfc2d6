"""Every module of the package under 500 lines and every function under 80 (docstring aside), so
that each piece can be read at once. Exceptions are listed here with their reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "recoeval_tracking"
#: The package's Hydra plugins (hydra/sweeper=optuna), held to the same shape.
PLUGINS = ROOT.parent / "hydra_plugins"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

#: "module:function" -> why it stays longer than MAX_FUNCTION_LINES.
FUNCTION_EXCEPTIONS: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(
        p for base in (ROOT, PLUGINS) for p in base.rglob("*.py") if "__pycache__" not in p.parts
    )


def _name(path: Path) -> str:
    """The path below the package, or from the repository root for the plugins."""
    return path.relative_to(ROOT if ROOT in path.parents else ROOT.parent).as_posix()


def _code_lines(node: ast.AST) -> int:
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
def test_module_is_short(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_MODULE_LINES, f"{_name(path)} has {n} lines"


def test_functions_are_short():
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{_name(path)}:{node.name}"
                if _code_lines(node) > MAX_FUNCTION_LINES and key not in FUNCTION_EXCEPTIONS:
                    long.append(f"{key} ({_code_lines(node)} lines)")
    assert not long, "functions over 80 lines: " + ", ".join(long)
