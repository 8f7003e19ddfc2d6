"""Render a :class:`~recoeval_tracking.reporting.report.Report` as HTML and Markdown.

The HTML page is self-contained (inline CSS, figures embedded as base64 PNG, no script); the
Markdown holds the same tables with the figures as files beside it. Both name their inputs
(run ids, sources, fingerprints) and the report's config, so the report can be regenerated.

Every text that comes from the runs (names, sources, params, the report's config) goes through
:func:`recoeval_tracking.jobdir.redact.scrub_text` (or ``scrub_mapping``), and is escaped for the
page it lands in: HTML-escaped in the page; in the Markdown, run names and table cells get a
backslash before every character Markdown reads as a mark (``*``, ``|``, ``<``...), so a run name
can neither leak a credential nor change the page's structure.

Figures (built with :class:`matplotlib.figure.Figure` and the Agg canvas, never ``pyplot``):

* ``curves_<curve>.png``: the @1..K curve of every run with its 95% band (from ``curves.csv``);
* ``per_user_<metric>.png``: the distribution of each run's per-user values (box plots: quartiles,
  whiskers at 1.5 IQR, the mean as a dot; NaN users left out and counted in the tables);
* ``sweep_<param>.png``: each metric's mean with its t interval against each swept parameter.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..jobdir.plots import new_figure
from ..jobdir.redact import scrub_mapping, scrub_text
from .report import Report
from .summary import Best, summary_table

__all__ = ["render_figures", "render_html", "render_markdown", "write_report", "metric_table"]

_MAX_SWEEP_FIGURES = 8


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def _figure(width: float, height: float):
    return new_figure(width, height)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _curve_figures(report: Report) -> dict[str, bytes]:
    names: dict[str, None] = {}
    for r in report.runs:
        if r.curves is not None:
            for c in r.curves.columns:
                if c != "k" and not c.endswith(("_ci95_low", "_ci95_high")):
                    names.setdefault(c, None)
    out = {}
    many = len(report.runs) > 12
    for name in names:
        fig = _figure(8.0, 5.0)
        ax = fig.add_subplot()
        for r in report.runs:
            if r.curves is None or name not in r.curves.columns:
                continue
            k = r.curves["k"].to_numpy()
            is_base = r.run_id == report.baseline
            (line,) = ax.plot(k, r.curves[name].to_numpy(dtype=float),
                              linewidth=2.2 if is_base else 1.2,
                              label=scrub_text(f"{r.name} (baseline)" if is_base else r.name))
            low, high = f"{name}_ci95_low", f"{name}_ci95_high"
            if low in r.curves.columns and high in r.curves.columns:
                ax.fill_between(k, r.curves[low].to_numpy(dtype=float),
                                r.curves[high].to_numpy(dtype=float), color=line.get_color(),
                                alpha=0.08 if many else 0.2, linewidth=0)
        ax.set_xlabel("k (cutoff)")
        ax.set_ylabel(f"mean {name} (95% CI band)")
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{name} @1..K, every run")
        ax.legend(loc="best", fontsize="x-small", ncols=3 if many else 1)
        out[f"curves_{_safe(name)}.png"] = _png(fig)
    return out


def _distribution_figures(report: Report) -> dict[str, bytes]:
    from matplotlib import cbook

    out = {}
    for m in report.metrics:
        stats_list, labels = [], []
        for r in report.runs:
            if m not in r.per_user.columns:
                continue
            v = r.per_user[m].to_numpy(dtype=np.float64)
            v = v[~np.isnan(v)]
            if v.size == 0:
                continue
            s = cbook.boxplot_stats(v, whis=1.5)[0]
            stats_list.append(s)
            labels.append(scrub_text(r.name)[:40])
        height = max(3.0, 0.3 * len(stats_list) + 1.5)
        fig = _figure(8.0, height)
        fig.subplots_adjust(left=0.3, right=0.97, top=0.92, bottom=0.1)
        ax = fig.add_subplot()
        if stats_list:
            for s, label in zip(stats_list, labels):
                s["label"] = label
            ax.bxp(stats_list, orientation="horizontal", showfliers=False, showmeans=True,
                   meanprops={"marker": "o", "markerfacecolor": "#C44E52",
                              "markeredgecolor": "#C44E52", "markersize": 4})
            ax.invert_yaxis()
            ax.tick_params(axis="y", labelsize=7 if len(labels) > 20 else 9)
        else:
            ax.text(0.5, 0.5, "no defined values", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xlabel(f"per-user {m}")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_title(f"Per-user {m} (box: quartiles, dot: mean)")
        out[f"per_user_{_safe(m)}.png"] = _png(fig)
    return out


def _as_number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _sweep_figures(report: Report) -> dict[str, bytes]:
    out = {}
    summary = report.summary
    for param in report.swept_params[:_MAX_SWEEP_FIGURES]:
        raw = [r.params.get(param) for r in report.runs]
        nums = [_as_number(v) for v in raw]
        numeric = all(v is not None for v in nums)
        if numeric:
            x = np.array(nums, dtype=float)
            ticks = None
        else:
            cats = sorted({str(v) for v in raw})
            x = np.array([cats.index(str(v)) for v in raw], dtype=float)
            ticks = cats
        n_m = len(report.metrics)
        fig = _figure(max(5.0, 4.0 * min(n_m, 3)), 3.8 * math.ceil(n_m / 3))
        fig.subplots_adjust(left=0.12 if n_m > 1 else 0.16, right=0.98, top=0.88, bottom=0.15,
                            wspace=0.4, hspace=0.45)
        for i, m in enumerate(report.metrics):
            ax = fig.add_subplot(math.ceil(n_m / 3), min(n_m, 3), i + 1)
            part = summary[summary["metric"] == m].set_index("run_id")
            ids = [r.run_id for r in report.runs]
            y, lo, hi = (part[c].reindex(ids).to_numpy(dtype=float)
                         for c in ("mean", "t_low", "t_high"))
            order = np.argsort(x, kind="stable")
            err = np.vstack([y - lo, hi - y])
            err = np.where(np.isfinite(err), err, 0.0)
            ax.errorbar(x[order], y[order], yerr=err[:, order], fmt="o", markersize=4,
                        capsize=3, color="#4C72B0")
            if len(np.unique(x)) == len(x) and numeric:
                ax.plot(x[order], y[order], color="#4C72B0", alpha=0.5)
            if ticks is not None:
                ax.set_xticks(range(len(ticks)))
                ax.set_xticklabels([t[:15] for t in ticks], rotation=30, fontsize=8)
            ax.set_xlabel(param)
            ax.set_ylabel(f"mean {m}")
            ax.grid(True, alpha=0.3)
        fig.suptitle(f"Metrics against {param} (95% t intervals)")
        out[f"sweep_{_safe(param)}.png"] = _png(fig)
    return out


def render_figures(report: Report) -> dict[str, bytes]:
    """Every figure of the report as PNG bytes, keyed by file name (see the module docstring)."""
    if not isinstance(report, Report):
        raise param_error("report", "render_figures", "a Report from build_report", report)
    figures: dict[str, bytes] = {}
    figures.update(_curve_figures(report))
    figures.update(_distribution_figures(report))
    figures.update(_sweep_figures(report))
    return figures


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

def _f(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}f}"


def _p(x: Any) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    return f"{x:.2e}" if x < 1e-3 else f"{x:.4f}"


def _ci(lo: Any, hi: Any) -> str:
    return f"[{_f(lo)}, {_f(hi)}]"


def metric_table(summary: pd.DataFrame, comparisons: pd.DataFrame, metric: str,
                 baseline: str) -> pd.DataFrame:
    """One display table for ``metric``: each run's mean with its intervals and counts, and its
    comparison with the baseline (difference, intervals, adjusted p-values, d_z, mark)."""
    s = summary[summary["metric"] == metric]
    c = comparisons[comparisons["metric"] == metric].set_index("run_id")
    rows = []
    for _, row in s.iterrows():
        out = {"run": row["run"] + (" (baseline)" if row["run_id"] == baseline else ""),
               "mean": _f(row["mean"]), "95% t CI": _ci(row["t_low"], row["t_high"]),
               "95% bootstrap CI": _ci(row["boot_low"], row["boot_high"]),
               "users": _f(row["n"]), "NaN": _f(row["n_nan"]),
               "missing": _f(row["n_missing"])}
        if row["run_id"] in c.index:
            d = c.loc[row["run_id"]]
            out.update({"Δ vs baseline": _f(d["mean_diff"]),
                        "Δ 95% t CI": _ci(d["t_low"], d["t_high"]),
                        "Δ 95% bootstrap CI": _ci(d["boot_low"], d["boot_high"]),
                        "pairs": _f(d["n_pairs"]), "p t (adj)": _p(d["p_t_adj"]),
                        "p Wilcoxon (adj)": _p(d["p_wilcoxon_adj"]),
                        "p randomisation (adj)": _p(d["p_randomization_adj"]),
                        "d_z": _f(d["cohens_dz"], 3), "sig.": d["mark"]})
        else:
            out.update({k: "" for k in ("Δ vs baseline", "Δ 95% t CI", "Δ 95% bootstrap CI",
                                        "pairs", "p t (adj)", "p Wilcoxon (adj)",
                                        "p randomisation (adj)", "d_z", "sig.")})
        rows.append(out)
    return pd.DataFrame(rows)


def _html_table(df: pd.DataFrame, cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(scrub_text(str(c)))}</th>" for c in df.columns)
    body = []
    for row in df.itertuples(index=False):  # keeps each cell's own object (Best marks)
        cells = "".join(f"<td><b>{html.escape(scrub_text(str(v)))}</b></td>" if isinstance(
            v, Best) else f"<td>{html.escape(scrub_text(str(v)))}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    return (f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(body) + "</tbody></table>")


_MD_SPECIAL = "\\`*_{}[]<>()#+!|~"


def md_escape(text: Any) -> str:
    """User text for Markdown: secrets redacted, on one line, every character Markdown reads as
    a mark backslash-escaped (``a*b*`` stays ``a*b*``, ``<script>`` stays text)."""
    flat = " ".join(scrub_text(str(text)).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in flat)


def _md_cell(v: Any) -> str:
    return f"**{md_escape(v)}**" if isinstance(v, Best) else md_escape(v)


def _md_table(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(_md_cell(c) for c in df.columns) + " |",
             "|" + "---|" * len(df.columns)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    return "\n".join(lines)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [_f(v) for v in out[c]]
    return out


def _settings_text(report: Report) -> str:
    s = report.settings
    return (f"Intervals: {s['confidence']:.0%} Student-t and percentile bootstrap "
            f"({s['n_bootstrap']} resamples). Paired tests against the baseline on the users "
            f"defined in both runs: t-test, Wilcoxon signed-rank, sign-flip randomisation "
            f"({s['n_permutations']} random sign vectors). Seed {s['seed']}. p-values adjusted "
            f"with {s['correction']} over every (run, metric) comparison of a table; marks from "
            f"the adjusted {s['test']}-test p-value: ▲/▼ better/worse than the baseline, "
            f"`*` p < {s['alpha']:g}, `**` p < 0.01, `***` p < 0.001.")


def _config_text(report: Report) -> str:
    import yaml

    if not report.config:
        return "(not given)\n"
    plain = scrub_mapping(json.loads(json.dumps(report.config, default=str)))
    return yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)


def _sections(report: Report) -> list[tuple[str, str, Any]]:
    """The page as (kind, title, payload) items shared by both renderers."""
    items: list[tuple[str, str, Any]] = []
    base = report.run(report.baseline)
    intro = (f"{len(report.runs)} runs compared against the baseline **{md_escape(base.name)}** "
             f"(`{scrub_text(base.run_id)}`) on {len(report.metrics)} metric(s): "
             f"{', '.join(report.metrics)}.")
    items.append(("text", "", intro))
    if len(report.runs) > 1 or report.metrics:
        items.append(("table", "Summary: mean [95% t CI] and mark vs the baseline, best in bold",
                      summary_table(report)))
    rep = report.settings.get("replicate_key")
    if rep:
        groups = ", ".join(report.settings.get("group_by") or []) or "none"
        items.append(("text", "", f"Replicates over `{rep}`, grouped by {groups}: each row of "
                      f"a group is one {rep}'s mean, n counts replicates, intervals show the "
                      f"spread between them and comparisons are paired by {rep}."))
    for note in report.notes:
        items.append(("text", "", md_escape(note) + "."))
    if report.mismatches:
        items.append(("warning", "", "NOT COMPARABLE (compared anyway, allow_mismatch=true): "
                      + "; ".join(report.mismatches) + ". Every table below is marked."))
    items.append(("text", "", _settings_text(report)))
    mark = " [fingerprints differ]" if report.mismatches else ""
    for m in report.metrics:
        items.append(("table", f"{m}: all users{mark}",
                      metric_table(report.summary, report.comparisons, m, report.baseline)))
    for sl in report.slices:
        for m in report.metrics:
            heading = f"{m}: slice {sl.slice}, {sl.group} ({sl.n_users} users){mark}"
            items.append(("table", heading, metric_table(sl.summary, sl.comparisons, m,
                                                         report.baseline)))
    heading = ("Users per run (union of all runs; missing and NaN are counted, never dropped "
               "silently)")
    items.append(("table", heading, _plain(report.coverage)))
    return items


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;
color:#222;max-width:1800px}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f0f3f7}td:first-child,th:first-child{text-align:left}
.warning{background:#fff3cd;border:1px solid #e0b100;padding:8px;font-weight:bold}
img{max-width:100%;border:1px solid #ddd;margin:6px 0}
pre{background:#f6f8fa;padding:8px;font-size:12px;overflow-x:auto}
"""


def _md_inline(text: str) -> str:
    """The few Markdown marks used in the text items, as HTML (backslash-escaped characters
    are shown as themselves)."""
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        kept.append(m.group(1))
        return f"\x00{len(kept) - 1}\x00"

    out = html.escape(re.sub(r"\\(.)", keep, text))
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)
    out = re.sub(r"`(.+?)`", r"<code>\1</code>", out)
    return re.sub("\x00(\\d+)\x00", lambda m: html.escape(kept[int(m.group(1))]), out)


def render_html(report: Report, figures: dict[str, bytes] | None = None, *,
                title: str = "Run comparison") -> str:
    """The report as one self-contained HTML page (figures embedded as base64 PNG)."""
    if not isinstance(report, Report):
        raise param_error("report", "render_html", "a Report from build_report", report)
    figures = render_figures(report) if figures is None else figures
    parts = [(f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
              f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"),
             f"<h1>{html.escape(title)}</h1>"]
    for kind, heading, payload in _sections(report):
        if kind == "text":
            parts.append(f"<p>{_md_inline(payload)}</p>")
        elif kind == "warning":
            parts.append(f"<p class='warning'>{html.escape(scrub_text(payload))}</p>")
        else:
            parts.append(f"<h2>{html.escape(scrub_text(heading))}</h2>{_html_table(payload)}")
    if figures:
        parts.append("<h2>Figures</h2>")
        for name, data in figures.items():
            b64 = base64.b64encode(data).decode("ascii")
            parts.append(f"<figure><img alt='{html.escape(name)}' "
                         f"src='data:image/png;base64,{b64}'><figcaption>{html.escape(name)}"
                         f"</figcaption></figure>")
    parts.append("<h2>Inputs</h2>" + _html_table(report.inputs))
    parts.append("<h2>Report config</h2><pre>" + html.escape(_config_text(report)) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(report: Report, figures_dir: str | None = None,
                    figure_names: list[str] | None = None, *,
                    title: str = "Run comparison") -> str:
    """The report as Markdown; figures are linked as ``<figures_dir>/<name>``."""
    if not isinstance(report, Report):
        raise param_error("report", "render_markdown", "a Report from build_report", report)
    lines = [f"# {title}", ""]
    for kind, heading, payload in _sections(report):
        if kind == "text":
            lines += [payload, ""]
        elif kind == "warning":
            lines += [f"> **{scrub_text(payload)}**", ""]
        else:
            lines += [f"## {scrub_text(heading)}", "", _md_table(payload), ""]
    if figures_dir is not None and figure_names:
        lines += ["## Figures", ""]
        lines += [f"![{name}]({figures_dir}/{name})" for name in figure_names]
        lines.append("")
    lines += ["## Inputs", "", _md_table(report.inputs), "", "## Report config", "", "```yaml",
              _config_text(report).rstrip("\n"), "```", ""]
    return "\n".join(lines)


def write_report(report: Report, html_path: str | Path | None = None,
                 markdown_path: str | Path | None = None, *,
                 title: str = "Run comparison") -> dict[str, Path]:
    """Write the HTML page and/or the Markdown (with its figures in ``<stem>_figures/`` beside
    it). Returns the paths written: ``html``, ``markdown``, ``figures`` (the folder)."""
    if html_path is None and markdown_path is None:
        raise param_error("html_path", "write_report", "a path (or markdown_path)", None)
    figures = render_figures(report)
    out: dict[str, Path] = {}
    if html_path is not None:
        p = Path(html_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(render_html(report, figures, title=title), encoding="utf-8")
        out["html"] = p
    if markdown_path is not None:
        p = Path(markdown_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fig_dir = p.parent / f"{p.stem}_figures"
        fig_dir.mkdir(exist_ok=True)
        for name, data in figures.items():
            (fig_dir / name).write_bytes(data)
        p.write_text(render_markdown(report, fig_dir.name, list(figures), title=title),
                     encoding="utf-8")
        out["markdown"] = p
        out["figures"] = fig_dir
    return out
