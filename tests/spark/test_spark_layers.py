"""Only ``recoeval_tracking/spark/`` imports pyspark, lazily: importing the package loads no
pyspark, and without pyspark the call says how to install it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from ._python import fresh_python

ROOT = Path(__file__).resolve().parents[2] / "recoeval_tracking"


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.append("." * node.level + (node.module or ""))
    return out


def test_only_the_spark_package_imports_pyspark_and_it_sits_below_tracking():
    bad, up = [], []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        names = _imports(path)
        if any(n.split(".")[0] == "pyspark" for n in names) and rel.parts[0] != "spark":
            bad.append(str(rel))
        if rel.parts[0] == "spark":
            up += [
                f"{rel}: {n}"
                for n in names
                if n.lstrip(".").split(".")[0] in {"jobdir", "tracking", "reporting", "app"}
            ]
    assert not bad and not up, (bad, up)


def test_importing_the_package_loads_no_pyspark():
    code = (
        "import sys, recoeval_tracking, recoeval_tracking.spark, "
        "recoeval_tracking.tracking.spark_log; print('pyspark' in sys.modules)"
    )
    assert fresh_python(code) == "False"


def test_without_pyspark_the_error_names_the_extra(monkeypatch):
    import recoeval_tracking as rt
    from recoeval_tracking.spark import evaluate_spark

    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(rt.InputError, match=r'pip install "recoeval_tracking\[spark\]"'):
        evaluate_spark(object(), ranked=object())
