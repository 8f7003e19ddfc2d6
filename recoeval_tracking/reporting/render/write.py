"""The report's files: the HTML page, the Markdown with its figures beside it, the LaTeX
tables (:meth:`~recoeval_tracking.reporting.compare.Comparison.write`, ``recoeval-report``)."""

from __future__ import annotations

from pathlib import Path

from ..._validation import param_error
from ..outputs import register_output
from ..view import ComparisonView, ReportView, as_view
from .figures import comparison_figures
from .html import render_html
from .latex import baselines_latex
from .markdown import render_markdown

__all__ = ["write_report"]


def write_report(
    report: ReportView | ComparisonView,
    html_path: str | Path | None = None,
    markdown_path: str | Path | None = None,
    *,
    latex_path: str | Path | None = None,
    title: str = "Run comparison",
) -> dict[str, Path]:
    """Write the HTML page, the Markdown (with its figures in ``<stem>_figures/`` beside it)
    and the LaTeX table (:meth:`~recoeval_tracking.reporting.compare.Comparison.to_latex`,
    then with two baselines or more the table of every system against every baseline,
    :func:`~.latex.baselines_latex`), each when its path is given. Returns the paths written:
    ``html``, ``markdown``, ``figures`` (the folder), ``latex``."""
    if html_path is None and markdown_path is None and latex_path is None:
        raise param_error(
            "html_path", "write_report", "a path (or markdown_path, latex_path)", None
        )
    comparison = as_view(report, "write_report")
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


register_output("write", write_report)  # Comparison.write
