"""The agreement table (:func:`rt.compare_profiles
<recoeval_tracking.metrics.agreement.compare_profiles>`) as a page of its own, HTML or Markdown,
from the section's items (:func:`.agreement.agreement_items`) and the report's renderers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._validation import param_error
from .agreement import TITLE, agreement_items
from .render import _PAGE, _environment, _md_items

__all__ = ["render_agreement", "write_agreement"]


def render_agreement(ag: Any, fmt: str = "markdown", *, title: str = TITLE) -> str:
    """The agreement as a page of its own: ``fmt`` ``"markdown"`` or ``"html"``."""
    items = agreement_items(ag)
    if fmt == "markdown":
        return "\n".join([f"# {title}", "", *_md_items(items, None)])
    if fmt == "html":
        return _environment().get_template(_PAGE).render(title=title, items=items, figures={})
    raise param_error("fmt", "render_agreement", "'markdown' or 'html'", fmt)


def write_agreement(
    ag: Any,
    html_path: str | Path | None = None,
    markdown_path: str | Path | None = None,
    *,
    title: str = TITLE,
) -> dict[str, Path]:
    """Write the page as HTML and/or Markdown; returns the paths written."""
    if html_path is None and markdown_path is None:
        raise param_error("html_path", "write_agreement", "a path (or markdown_path)", None)
    out: dict[str, Path] = {}
    for key, path in (("html", html_path), ("markdown", markdown_path)):
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(render_agreement(ag, key, title=title), encoding="utf-8")
            out[key] = p
    return out
