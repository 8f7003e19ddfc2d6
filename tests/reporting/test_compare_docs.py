"""The compare guide's Python blocks run as written (each on its own), and the doctests of the
comparison module pass (those of the statistics run in tests/stats/test_docstrings.py)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "compare.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


def test_the_guide_has_blocks():
    assert len(_blocks()) >= 5


@pytest.mark.parametrize("index", range(5))
def test_guide_block_runs(index, capsys):
    exec(compile(_blocks()[index], f"{GUIDE.name}[{index}]", "exec"), {})


@pytest.mark.parametrize("module", ["recoeval_tracking.reporting.compare"])
def test_doctests(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
