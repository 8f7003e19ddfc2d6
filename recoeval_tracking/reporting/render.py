"""Render a :class:`~recoeval_tracking.reporting.report.Report` as HTML and Markdown.

The HTML page is self-contained (inline CSS, figures embedded as base64 PNG, no script); its
markup is one Jinja2 template, ``templates/report.html.j2`` (package data), rendered with
autoescaping on, so every value it prints is HTML-escaped without a call at each site. The
Markdown holds the same tables with the figures as files beside it. Both name their inputs
(run ids, sources, fingerprints) and the report's config, so the report can be regenerated.

Every text that comes from the runs (names, sources, params, the report's config) goes through
:func:`recoeval_tracking.jobdir.redact.scrub_text` (or ``scrub_mapping``), and is escaped for the
page it lands in: HTML-escaped in the page (by the template); in the Markdown, run names and
table cells get a backslash before every character Markdown reads as a mark (``*``, ``|``,
``<``...), so a run name can neither leak a credential nor change the page's structure.

The tables are the template's ``table`` macro rather than ``DataFrame.to_html``: their cells
carry the best-in-bold mark (:class:`~.summary.Best`) and are redacted one by one, which
``to_html`` could only take as pre-escaped strings (``escape=False``), the per-site escaping the
template removes.

The page reads top down: the summary (runs x headline metrics, best in bold), the catalogue-level
metrics, the @1..K curves with their bands, the settings of the tests; then, folded
(``<details>``), the table of every metric, every slice, the per-user distributions, the sweep
figures, the inputs and the config. Figures come from :mod:`recoeval_tracking.reporting.figures`.
"""

from __future__ import annotations

import base64
import functools
import html
import re
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup

from .._validation import InputError, param_error
from ..jobdir.redact import scrub_text
from .compare import Comparison
from .figures import figure_png, render_figures, safe_name
from .latex import baselines_latex
from .outputs import register_output
from .report import Report
from .sections import (
    Item,
    _as_comparison,
    _comparison_sections,
    _prefix,
    md_escape,
    metric_table,
)
from .summary import Best, headline_metrics

__all__ = [
    "render_figures",
    "comparison_figures",
    "render_html",
    "render_markdown",
    "write_report",
    "metric_table",
]


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------


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


def comparison_figures(comparison: Comparison) -> dict[str, bytes]:
    """Every figure of a comparison's page: over one dataset :func:`render_figures`; over
    several, a critical-difference diagram per headline metric (``cd_<metric>.png``) and each
    dataset's figures named ``<dataset>__<figure>``."""
    if not comparison.multi_dataset:
        return render_figures(comparison.report)
    figures: dict[str, bytes] = {}
    for m in headline_metrics(comparison.metrics):
        try:
            figures[f"cd_{safe_name(m)}.png"] = figure_png(comparison.cd_diagram(m))
        except InputError:
            continue
    for ds, rep in comparison.reports.items():
        for name, data in render_figures(rep).items():
            figures[_prefix(ds) + name] = data
    return figures


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------


def _md_inline(text: str) -> Markup:
    """The few Markdown marks used in the text items, as HTML: code spans first (their content
    is literal, so ``**`` inside one is not bold), then ``**bold**``; backslash-escaped
    characters are shown as themselves."""
    kept: list[str] = []

    def keep(value: str) -> str:
        kept.append(value)
        return f"\x00{len(kept) - 1}\x00"

    out = re.sub(r"\\(.)", lambda m: keep(html.escape(m.group(1))), text)
    out = re.sub(r"`(.+?)`", lambda m: keep(f"<code>{html.escape(m.group(1))}</code>"), out)
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(out))
    return Markup(re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], out))


@functools.cache
def _environment() -> jinja2.Environment:
    """The templates' environment: autoescaping on for every template, the filters and test the
    page uses (``scrub``, ``md_inline``, ``base64``; ``best``)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recoeval_tracking.reporting"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["scrub"] = lambda value: scrub_text(str(value))
    env.filters["md_inline"] = _md_inline
    env.filters["base64"] = lambda data: base64.b64encode(data).decode("ascii")
    env.tests["best"] = lambda value: isinstance(value, Best)
    env.filters["text_columns"] = _text_columns
    return env


_NUMBER_START = re.compile(r"^\s*[\[(]?[-+\u2212]?(\d|\.\d|nan\b|inf\b|n/a\b)", re.IGNORECASE)


def _text_columns(df: Any) -> list[bool]:
    """Per column, whether it holds words rather than numbers (a name, a reason), which the
    page aligns left: no cell of it is a number, a number-led string or an interval."""
    return [
        not any(
            isinstance(v, Best | int | float | np.number) or bool(_NUMBER_START.match(str(v)))
            for v in df.iloc[:, j]
            if str(v) != ""
        )
        for j in range(df.shape[1])
    ]


_PAGE = "report.html.j2"


def render_html(
    report: Report | Comparison,
    figures: dict[str, bytes] | None = None,
    *,
    title: str = "Run comparison",
) -> str:
    """The report (a :class:`Comparison`, or a :class:`Report`) as one self-contained HTML page
    (figures embedded as base64 PNG, no script; the details are folded in ``<details>``), from
    the template ``templates/report.html.j2`` with autoescaping on."""
    comparison = _as_comparison(report, "render_html")
    figures = comparison_figures(comparison) if figures is None else figures
    items = _comparison_sections(comparison, list(figures))
    return _environment().get_template(_PAGE).render(title=title, items=items, figures=figures)


def _md_items(items: list[Item], figures_dir: str | None, level: int = 2) -> list[str]:
    lines: list[str] = []
    hashes = "#" * level
    for kind, heading, payload in items:
        if kind == "text":
            lines += [payload, ""]
        elif kind == "warning":
            lines += [f"> **{scrub_text(payload)}**", ""]
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
    report: Report | Comparison,
    figures_dir: str | None = None,
    figure_names: list[str] | None = None,
    *,
    title: str = "Run comparison",
) -> str:
    """The report (a :class:`Comparison`, or a :class:`Report`) as Markdown; figures are
    linked as ``<figures_dir>/<name>``."""
    comparison = _as_comparison(report, "render_markdown")
    names = list(figure_names or [])
    return "\n".join(
        [f"# {title}", ""] + _md_items(_comparison_sections(comparison, names), figures_dir)
    )


def write_report(
    report: Report | Comparison,
    html_path: str | Path | None = None,
    markdown_path: str | Path | None = None,
    *,
    latex_path: str | Path | None = None,
    title: str = "Run comparison",
) -> dict[str, Path]:
    """Write the HTML page, the Markdown (with its figures in ``<stem>_figures/`` beside it)
    and the LaTeX table (:meth:`Comparison.to_latex`, then with two baselines or more the
    table of every system against every baseline, :func:`~.latex.baselines_latex`), each when
    its path is given. Returns the
    paths written: ``html``, ``markdown``, ``figures`` (the folder), ``latex``."""
    if html_path is None and markdown_path is None and latex_path is None:
        raise param_error(
            "html_path", "write_report", "a path (or markdown_path, latex_path)", None
        )
    comparison = _as_comparison(report, "write_report")
    figures = comparison_figures(comparison) if (html_path or markdown_path) else {}
    out: dict[str, Path] = {}
    if html_path is not None:
        p = Path(html_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(render_html(comparison, figures, title=title), encoding="utf-8")
        out["html"] = p
    if markdown_path is not None:
        p = Path(markdown_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fig_dir = p.parent / f"{p.stem}_figures"
        fig_dir.mkdir(exist_ok=True)
        for name, data in figures.items():
            (fig_dir / name).write_bytes(data)
        p.write_text(
            render_markdown(comparison, fig_dir.name, list(figures), title=title), encoding="utf-8"
        )
        out["markdown"] = p
        out["figures"] = fig_dir
    if latex_path is not None:
        p = Path(latex_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tex = comparison.to_latex(caption=title + ".")
        if not comparison.multi_dataset:  # every baseline of a sweep, when it has two or more
            more = baselines_latex(comparison, caption=title + ".")
            tex += f"\n{more}\n" if more else ""
        p.write_text(tex, encoding="utf-8")
        out["latex"] = p
    return out


register_output("html", render_html)  # Comparison.to_html
register_output("markdown", render_markdown)  # Comparison.to_markdown
register_output("write", write_report)  # Comparison.write
