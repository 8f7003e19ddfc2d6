"""The report as Markdown: the page's items (:mod:`.sections`) as headings, tables and
``<details>`` folds, the figures linked as files beside it.

Run names and table cells get a backslash before every character Markdown reads as a mark
(``*``, ``|``, ``<``...; :func:`~.sections.md_escape`) and every text from the runs goes through
:func:`recoeval_tracking.jobdir.redact.scrub_text`, so a run name can neither leak a credential
nor change the page's structure.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from ...jobdir.redact import scrub_text
from ..outputs import register_output
from ..view import ComparisonView, ReportView, as_view
from .sections import Item, _comparison_sections, md_escape
from .summary import Best

__all__ = ["render_markdown"]


def _md_cell(v: Any) -> str:
    return f"**{md_escape(v)}**" if isinstance(v, Best) else md_escape(v)


def _md_table(df: pd.DataFrame) -> str:
    lines = [
        "| " + " | ".join(_md_cell(c) for c in df.columns) + " |",
        "|" + "---|" * len(df.columns),
    ]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    return "\n".join(lines)


def _md_items(items: list[Item], figures_dir: str | None, level: int = 2) -> list[str]:
    lines: list[str] = []
    hashes = "#" * level
    for kind, heading, payload in items:
        if kind == "text":
            lines += [payload, ""]
        elif kind == "warning":
            from .sections import warning_lead

            lead, rest = warning_lead(payload)
            bold = f"**{md_escape(lead)}** " if lead else ""
            lines += [f"> {bold}{md_escape(rest)}", ""]
        elif kind == "table":
            lines += [f"{hashes} {scrub_text(heading)}", ""] if heading else []
            lines += [_md_table(payload), ""]
        elif kind == "config":
            lines += [f"{hashes} {heading}", "", "```yaml", payload.rstrip("\n"), "```", ""]
        elif kind == "figures":
            if figures_dir is None:
                continue
            lines += [f"{hashes} {heading}", ""] if heading else []
            lines += [f"![{name}]({figures_dir}/{name})" for name in payload] + [""]
        else:  # fold: a <details> block, which GitHub and most viewers render folded
            lines += ["<details>", f"<summary>{html.escape(scrub_text(heading))}</summary>", ""]
            lines += _md_items(payload, figures_dir, level=3)
            lines += ["</details>", ""]
    return lines


def render_markdown(
    report: ReportView | ComparisonView,
    figures_dir: str | None = None,
    figure_names: list[str] | None = None,
    *,
    title: str = "Run comparison",
) -> str:
    """The report (a :class:`~recoeval_tracking.reporting.compare.Comparison`, or a
    :class:`~recoeval_tracking.reporting.report.Report`) as Markdown; figures are linked as
    ``<figures_dir>/<name>``."""
    comparison = as_view(report, "render_markdown")
    names = list(figure_names or [])
    return "\n".join(
        [f"# {title}", ""] + _md_items(_comparison_sections(comparison, names), figures_dir)
    )


register_output("markdown", render_markdown)  # Comparison.to_markdown
