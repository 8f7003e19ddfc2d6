"""Every page of the site opens with its title and pairs its code fences, so no page reaches the
reader cut short, or with its prose shown as code and its output as prose.

A fence opens with three backticks (or tildes) and an optional info string (```` ```text ````)
and closes with the same marker and nothing after it: a fence with an info string inside an
open block is not a closing one, and means the block that contains it was opened by mistake.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The pages with a title of their own (docs/changelog.md includes CHANGELOG.md, whose title it is).
PAGES = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name != "changelog.md"]
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")


def fence_problems(text: str) -> list[str]:
    """What is wrong with the code fences of a Markdown text, one line each."""
    problems, open_at = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if not m:
            continue
        if open_at is None:
            open_at = number
        elif m.group(2).strip():
            problems.append(
                f"line {number}: {line.strip()!r} inside the block opened at line {open_at}"
            )
        else:
            open_at = None
    if open_at is not None:
        problems.append(f"the block opened at line {open_at} is never closed")
    return problems


def test_fence_problems_are_found():
    assert fence_problems("# T\n\n```python\nx = 1\n```\n\n```\nplain\n```\n") == []
    assert fence_problems("## Output\n\n```\n\nprose\n\n```text\nout\n```\n") == [
        "line 7: '```text' inside the block opened at line 3"
    ]
    assert fence_problems("```bash\nls\n") == ["the block opened at line 1 is never closed"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_opens_with_its_title(page):
    first = page.read_text(encoding="utf-8").lstrip().splitlines()[0]
    assert first.startswith("# "), f"{page.name} opens with {first!r}, not a '# ' title"


@pytest.mark.parametrize(
    "page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_code_fences_pair(page):
    assert fence_problems(page.read_text(encoding="utf-8")) == []
