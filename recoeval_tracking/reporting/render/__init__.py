"""The renderers: the comparison shown as pages, tables and figures.

Each module reads the comparison only through its read-only view
(:mod:`recoeval_tracking.reporting.view`: :class:`~..view.ComparisonView`,
:class:`~..view.ReportView`) and registers its outputs
(:mod:`recoeval_tracking.reporting.outputs`) so that ``Comparison.to_html``, ``to_latex``, ...
stay methods of the model without the model importing a renderer:

* :mod:`.sections`: the page's content before any markup (items), over one dataset or several;
* :mod:`.summary`: the summary tables (best in bold);
* :mod:`.html`: the HTML page from the Jinja2 template
  ``recoeval_tracking/reporting/templates/report.html.j2``;
* :mod:`.markdown`: the same items as Markdown;
* :mod:`.latex`: booktabs tables for a paper;
* :mod:`.figures`: the PNG figures (curves, distributions, sweeps, critical-difference
  diagrams);
* :mod:`.write`: the report's files (:func:`write_report`).
"""

from __future__ import annotations

from .figures import comparison_figures, render_figures

# the template's name and environment and the Markdown of items, for the agreement page
# (reporting/agreement_page.py)
from .html import _PAGE as _PAGE
from .html import _environment as _environment
from .html import render_html
from .latex import baselines_latex, comparison_latex, effects_latex
from .markdown import _md_items as _md_items
from .markdown import render_markdown
from .sections import metric_table
from .summary import catalogue_table, headline_metrics, summary_table
from .write import write_report

__all__ = [
    "render_figures",
    "comparison_figures",
    "render_html",
    "render_markdown",
    "write_report",
    "metric_table",
    "comparison_latex",
    "effects_latex",
    "baselines_latex",
    "summary_table",
    "catalogue_table",
    "headline_metrics",
]
