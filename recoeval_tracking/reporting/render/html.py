"""The report as one self-contained HTML page (inline CSS, figures embedded as base64 PNG, no
script).

Its markup is one Jinja2 template, ``recoeval_tracking/reporting/templates/report.html.j2``
(package data), rendered with autoescaping on, so every value it prints is HTML-escaped without
a call at each site; this module holds the template's environment (its filters ``scrub``,
``md_inline``, ``base64``, ``text_columns`` and the test ``best``). The page's content comes
from :mod:`.sections` (a list of items, the same for the Markdown), its figures from
:mod:`.figures`; a change of the page's look touches only this module, the sections and the
template.

Every text that comes from the runs (names, sources, params, the report's config) goes through
:func:`recoeval_tracking.jobdir.redact.scrub_text` (or ``scrub_mapping``), and is HTML-escaped by
the template, so a run name can neither leak a credential nor change the page's structure.

The tables are the template's ``table`` macro rather than ``DataFrame.to_html``: their cells
carry the best-in-bold mark (:class:`~.summary.Best`) and are redacted one by one, which
``to_html`` could only take as pre-escaped strings (``escape=False``), the per-site escaping the
template removes.

The page reads top down: the summary (runs x headline metrics, best in bold), the catalogue-level
metrics, the @1..K curves with their bands, the settings of the tests; then, folded
(``<details>``), the table of every metric, every slice, the per-user distributions, the sweep
figures, the inputs and the config.
"""

from __future__ import annotations

import base64
import functools
import html
import re
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup

from ...jobdir.redact import scrub_text
from ..outputs import register_output
from ..view import ComparisonView, ReportView, as_view
from .figures import comparison_figures
from .sections import _comparison_sections
from .summary import Best

__all__ = ["render_html"]


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
    page uses (``scrub``, ``md_inline``, ``base64``, ``warning_lead``; ``best``)."""
    from .sections import warning_lead

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
    env.filters["warning_lead"] = warning_lead
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
    report: ReportView | ComparisonView,
    figures: dict[str, bytes] | None = None,
    *,
    title: str = "Run comparison",
) -> str:
    """The report (a :class:`~recoeval_tracking.reporting.compare.Comparison`, or a
    :class:`~recoeval_tracking.reporting.report.Report`) as one self-contained HTML page (figures
    embedded as base64 PNG, no script; the details are folded in ``<details>``), from the
    template ``reporting/templates/report.html.j2`` with autoescaping on."""
    comparison = as_view(report, "render_html")
    figures = comparison_figures(comparison) if figures is None else figures
    items = _comparison_sections(comparison, list(figures))
    return _environment().get_template(_PAGE).render(title=title, items=items, figures=figures)


register_output("html", render_html)  # Comparison.to_html
