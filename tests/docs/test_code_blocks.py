"""Every Python block of README.md and docs/ runs, so the documentation cannot rot.

The blocks of one page run in order in one namespace (a page may build on its earlier blocks), in
a temporary working directory (blocks that write files, or an ``./mlflow.db``, write there), through
mktestdocs. A block that cannot run here (it needs a GPU, a Dask scheduler or the
reader's own files) says so on its first line, ``# Not run by the docs tests: <why>``, where the
reader sees it; any other block runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mktestdocs = pytest.importorskip("mktestdocs")

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NOT_RUN = "# Not run by the docs tests:"
#: Opening fences of code that reads as Python under another tag, which the runner would skip.
_OTHER_PYTHON_TAGS = re.compile(r"^\s*```\s*(py|python3|pycon|ipython)\b", re.MULTILINE)


def _blocks(page: Path) -> list[str]:
    return mktestdocs.grab_code_blocks(page.read_text(encoding="utf-8"), lang="python")


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


PAGES_WITH_PYTHON = [p for p in PAGES if _blocks(p)]


def test_pages_are_found():
    assert (ROOT / "docs" / "getting-started.md") in PAGES
    names = {_name(p) for p in PAGES_WITH_PYTHON}
    assert {"README.md", "docs/getting-started.md", "docs/guides/python-api.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_python_is_tagged_python(page):
    """A block tagged ``py`` or ``python3`` would escape the runner: every Python block is
    tagged ``python``."""
    assert not _OTHER_PYTHON_TAGS.search(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON, ids=_name)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    blocks = _blocks(page)
    skipped = [b for b in blocks if b.lstrip().startswith(NOT_RUN)]
    for block in skipped:
        reason = block.lstrip()[len(NOT_RUN) :].splitlines()[0].strip()
        assert reason, f"{_name(page)}: a block that is not run must say why"
    run = [b for b in blocks if b not in skipped]
    # The blocks to run, as a page of their own, run in order in one namespace (memory=True).
    runnable = tmp_path / "runnable.md"
    runnable.write_text("".join(f"```python\n{b}```\n\n" for b in run), encoding="utf-8")
    mktestdocs.check_md_file(runnable, memory=True)


_OUR_IMPORT = re.compile(
    r"^\s*(from\s+recoeval_tracking[\w.]*\s+import\s+[^\n#]+|"
    r"import\s+recoeval_tracking[\w.]*(?:\s+as\s+\w+)?)\s*$",
    re.MULTILINE,
)


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON, ids=_name)
def test_blocks_that_are_not_run_import_what_exists(page):
    """A block that is not run still imports only names the package has (a reader copies it:
    ``from recoeval_tracking import EvalOptions`` once failed there)."""
    for block in _blocks(page):
        if not block.lstrip().startswith(NOT_RUN):
            continue
        for statement in _OUR_IMPORT.findall(block):
            exec(compile(statement.strip(), f"{_name(page)} (not-run block)", "exec"), {})
