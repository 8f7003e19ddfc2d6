"""Render a :class:`~recoeval_tracking.reporting.report.Report` as HTML and Markdown.

The HTML page is self-contained (inline CSS, figures embedded as base64 PNG, no script); the
Markdown holds the same tables with the figures as files beside it. Both name their inputs
(run ids, sources, fingerprints) and the report's config, so the report can be regenerated.

Every text that comes from the runs (names, sources, params, the report's config) goes through
:func:`recoeval_tracking.jobdir.redact.scrub_text` (or ``scrub_mapping``), and is escaped for the
page it lands in: HTML-escaped in the page; in the Markdown, run names and table cells get a
backslash before every character Markdown reads as a mark (``*``, ``|``, ``<``...), so a run name
can neither leak a credential nor change the page's structure.

The page reads top down: the summary (runs x headline metrics, best in bold), the catalogue-level
metrics, the @1..K curves with their bands, the settings of the tests; then, folded
(``<details>``), the table of every metric, every slice, the per-user distributions, the sweep
figures, the inputs and the config. Figures come from :mod:`recoeval_tracking.reporting.figures`.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..jobdir.redact import scrub_mapping, scrub_text
from .compare import Comparison
from .figures import figure_png, render_figures, safe_name
from .report import SMALL_N_MARK, Report
from .stats import percent
from .summary import Best, catalogue_table, headline_metrics, summary_table
from .verdicts import effect_items

__all__ = ["render_figures", "comparison_figures", "render_html", "render_markdown",
           "write_report", "metric_table"]


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
                 baseline: str, confidence: float = 0.95) -> pd.DataFrame:
    """One display table for ``metric``: each run's mean with its intervals and counts, and its
    comparison with the baseline (difference, intervals, adjusted p-values, d_z, mark); the
    interval headers name their ``confidence``."""
    pc = percent(confidence)
    s = summary[summary["metric"] == metric]
    c = comparisons[comparisons["metric"] == metric].set_index("run_id")
    rows = []
    for _, row in s.iterrows():
        out = {"run": row["run"] + (" (baseline)" if row["run_id"] == baseline else ""),
               "mean": _f(row["mean"]), f"{pc} t CI": _ci(row["t_low"], row["t_high"]),
               f"{pc} bootstrap CI": _ci(row["boot_low"], row["boot_high"]),
               "users": _f(row["n"]), "NaN": _f(row["n_nan"]),
               "missing": _f(row["n_missing"])}
        if row["run_id"] in c.index:
            d = c.loc[row["run_id"]]
            out.update({"Δ vs baseline": _f(d["mean_diff"]),
                        f"Δ {pc} t CI": _ci(d["t_low"], d["t_high"]),
                        f"Δ {pc} bootstrap CI": _ci(d["boot_low"], d["boot_high"]),
                        "pairs": _f(d["n_pairs"]), "p t (adj)": _p(d["p_t_adj"]),
                        "p Wilcoxon (adj)": _p(d["p_wilcoxon_adj"]),
                        "p randomisation (adj)": _p(d["p_randomization_adj"]),
                        "d_z": _f(d["cohens_dz"], 3), "sig.": d["mark"]})
        else:
            out.update({k: "" for k in ("Δ vs baseline", f"Δ {pc} t CI", f"Δ {pc} bootstrap CI",
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
    used = s.get("n_permutations_used", s["n_permutations"])
    auto = " (auto: enough for the correction)" if s["n_permutations"] == "auto" else ""
    family = ("each metric's comparisons with the baseline" if s.get("family", "table") ==
              "metric" else "every (run, metric) comparison of a table")
    return (f"Intervals: {percent(s['confidence'])} Student-t and percentile bootstrap "
            f"({s['n_bootstrap']} resamples). Paired tests against the baseline on the users "
            f"defined in both runs: t-test, Wilcoxon signed-rank, sign-flip randomisation "
            f"({used} random sign vectors{auto}, or all 2^n when that is fewer: exact). "
            f"Seed {s['seed']}. p-values adjusted with {s['correction']} over {family}; marks "
            f"from the adjusted {s['test']}-test p-value: ▲/▼ better/worse than the baseline, "
            f"`*` p < {s['alpha']:g}, `**` p < 0.01, `***` p < 0.001." + _small_n_text(report))


def _small_n_text(report: Report) -> str:
    """The legend of ``†``, when a comparison has too few pairs for its mark."""
    c = report.comparisons
    if not len(c) or "small_n" not in c.columns or not c["small_n"].any():
        return ""
    n = sorted({int(v) for v in c.loc[c["small_n"], "n_nonzero"]})
    from .multisystem import min_attainable_p

    smallest = min_attainable_p(n[0], "wilcoxon") if n[0] >= 1 else float("nan")
    return (f" {SMALL_N_MARK}: only {', '.join(map(str, n))} pairs, too few for a "
            f"distribution-free test to reach p < {report.settings['alpha']:g} after the "
            f"correction (pairs whose difference is not zero: a zero one carries no sign; the "
            f"smallest possible Wilcoxon or randomisation p with {n[0]} is {smallest:.3g}); no "
            f"significance is claimed, the arrow gives the direction "
            f"only. More {'replicates' if report.settings.get('replicate_key') else 'users'} "
            "are needed to test.")


def _config_text(report: Report) -> str:
    import yaml

    if not report.config:
        return "(not given)\n"
    plain = scrub_mapping(json.loads(json.dumps(report.config, default=str)))
    return yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)


Item = tuple[str, str, Any]


def _compared(report: Report) -> str:
    """What was compared: ``4 runs``, or ``2 groups (6 runs)`` with replicates."""
    n_in = int(report.settings.get("n_runs", len(report.runs)))
    if report.settings.get("replicate_key"):
        return (f"{len(report.runs)} group{'s' if len(report.runs) != 1 else ''} "
                f"({n_in} runs)")
    return f"{len(report.runs)} run{'s' if len(report.runs) != 1 else ''}"


def _shown_id(report: Report, run: Any) -> str:
    """A run's id, or for a replicate group the count of its runs (its id lists every param)."""
    if report.settings.get("replicate_key") and run.run_id.startswith("group:"):
        n = len([s for s in run.source.split(", ") if s])
        return f"{n} {report.settings['replicate_key']} replicates"
    return run.run_id


def _head_items(report: Report, comparison: Comparison | None = None) -> list[Item]:
    """The first screen: intro, summary, notes, catalogue-level metrics."""
    base = report.run(report.baseline)
    items: list[Item] = [("text", "", (
        f"{_compared(report)} compared against the baseline **{md_escape(base.name)}** "
        f"(`{scrub_text(_shown_id(report, base))}`) on {len(report.metrics)} metric(s): "
        f"{', '.join(report.metrics)}."))]
    if len(report.runs) > 1 or report.metrics:
        items.append(("table", f"Summary: mean [{percent(report.settings['confidence'])} t "
                      "CI] and mark vs the baseline, best in bold", summary_table(report)))
    rep = report.settings.get("replicate_key")
    if rep:
        groups = ", ".join(md_escape(r.name) for r in report.runs)
        items.append(("text", "", f"Replicates over `{rep}`: one group per system ({groups}); "
                      f"each row of a group is one {rep}'s mean, n counts replicates, intervals "
                      f"show the spread between them and comparisons are paired by {rep}. "
                      f"The groups are formed by the params that differ: "
                      f"{', '.join(report.settings.get('group_by') or []) or 'none'}."))
    for note in report.notes:
        items.append(("text", "", md_escape(note) + "."))
    if len(report.left_out):
        items.append(("table", "Left out of the comparison, with the reason",
                      report.left_out.drop(columns="run_id")))
    if report.mismatches:
        items.append(("warning", "", "NOT COMPARABLE (compared anyway, allow_mismatch=true): "
                      + "; ".join(report.mismatches) + ". Every table below is marked."))
    catalogue = catalogue_table(report)
    if len(catalogue.columns):
        items.append(("table", "Catalogue-level metrics (one value per run, best in bold)",
                      catalogue))
    items.append(("text", "", _settings_text(report)))
    return items


def _headline_curves(report: Report, curves: list[str], prefix: str = "") -> list[str]:
    """The curve figures of the summary's metrics (``ndcg_at_10`` -> ``curves_ndcg_at_k.png``)."""
    wanted = {f"{prefix}curves_{m.rsplit('_at_', 1)[0]}_at_k.png" for m in headline_metrics(
        report.metrics)}
    return [n for n in curves if n in wanted][:4]


def _sections(report: Report, figure_names: list[str], prefix: str = "",
              comparison: Comparison | None = None, dataset: str | None = None) -> list[Item]:
    """The page as (kind, title, payload) items shared by both renderers: ``text``, ``warning``,
    ``table`` (a DataFrame), ``figures`` (file names) and ``fold`` (a list of items shown folded).
    ``prefix`` starts the names of this report's figures (one dataset of several)."""
    comparison = comparison or Comparison.from_report(report)
    items = _head_items(report, comparison)
    items[1:1] = effect_items(comparison, dataset)  # effect sizes lead, before the marks
    curves = [n for n in figure_names if n.startswith(prefix + "curves_")]
    first = _headline_curves(report, curves, prefix)
    if first:
        items.append(("figures", "@1..K curves of the headline metrics (each run's 95% CI "
                      "bands, as evaluated)", first))
    if len(curves) > len(first):
        items.append(("fold", "Every @1..K curve", [
            ("figures", "", [n for n in curves if n not in first])]))
    mark = " [fingerprints differ]" if report.mismatches else ""
    items.append(("fold", f"Every metric, all users: intervals, differences and tests{mark}",
                  [("table", f"{m}: all users{mark}",
                    metric_table(report.summary, report.comparisons, m, report.baseline,
                                 report.settings["confidence"]))
                   for m in report.metrics]))
    if len(report.runs) > 1:
        unit = "replicates" if report.settings.get("replicate_key") else "users"
        items.append(("fold", f"Win/tie/loss: {unit} where each system is better, equal, worse",
                      [("table", f"{m}: {unit} where system beats, ties, loses to other",
                        _plain_wtl(comparison.win_tie_loss(m, dataset)))
                       for m in headline_metrics(report.metrics)]))
    for name in dict.fromkeys(sl.slice for sl in report.slices):
        items.append(("fold", f"Slice {name}{mark}", [
            ("table", f"{m}: slice {sl.slice}, {sl.group} ({sl.n_users} users){mark}",
             metric_table(sl.summary, sl.comparisons, m, report.baseline,
                          report.settings["confidence"]))
            for sl in report.slices if sl.slice == name for m in report.metrics]))
    per_user = [n for n in figure_names if n.startswith(prefix + "per_user_")]
    if per_user:
        items.append(("fold", "Per-user distributions", [("figures", "", per_user)]))
    sweeps = [n for n in figure_names if n.startswith(prefix + "sweep_")]
    if sweeps:
        items.append(("fold", "Metrics against the swept parameters", [("figures", "", sweeps)]))
    items.append(("fold", "Users per run, inputs and the report's config", [
        ("table", "Users per run (union of all runs; missing and NaN are counted, never dropped "
         "silently)", _plain(report.coverage)),
        ("table", "Inputs", report.inputs), ("config", "Report config", _config_text(report))]))
    return items


def _plain_wtl(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns="metric").astype({c: object for c in ("wins", "ties", "losses",
                                                                      "n")})


def _prefix(dataset: str) -> str:
    return f"{safe_name(dataset)}__"


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


def _comparison_sections(comparison: Comparison, figure_names: list[str]) -> list[Item]:
    if comparison.multi_dataset:
        from .render_multi import multi_sections

        return multi_sections(comparison, figure_names)
    items = _sections(comparison.report, figure_names, comparison=comparison)
    items.insert(next((i for i, it in enumerate(items) if it[0] == "fold"), len(items)), (
        "text", "", "One dataset: the rank statistics over datasets (mean ranks, Friedman, "
        "Nemenyi's critical difference) do not apply; the paired tests over users do."))
    return items


def _as_comparison(obj: Any, func: str) -> Comparison:
    if isinstance(obj, Comparison):
        return obj
    if isinstance(obj, Report):
        return Comparison.from_report(obj)
    raise param_error("report", func, "a Comparison (from compare) or a Report (from "
                      "build_report)", obj)


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;
color:#222;max-width:1800px}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}h3{font-size:1em;margin-top:1.2em}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f0f3f7}td:first-child,th:first-child{text-align:left}
.scroll{overflow-x:auto}
.warning{background:#fff3cd;border:1px solid #e0b100;padding:8px;font-weight:bold}
details{margin:10px 0;border:1px solid #ddd;border-radius:4px;padding:4px 10px}
summary{cursor:pointer;font-weight:600;font-size:1.05em;padding:4px 0}
figure{display:inline-block;margin:6px;max-width:48%;vertical-align:top}
img{max-width:100%;border:1px solid #ddd}
pre{background:#f6f8fa;padding:8px;font-size:12px;overflow-x:auto}
"""


def _md_inline(text: str) -> str:
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
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], out)


def _html_items(items: list[Item], figures: dict[str, bytes], level: int = 2) -> list[str]:
    parts: list[str] = []
    for kind, heading, payload in items:
        if kind == "text":
            parts.append(f"<p>{_md_inline(payload)}</p>")
        elif kind == "warning":
            parts.append(f"<p class='warning'>{html.escape(scrub_text(payload))}</p>")
        elif kind == "table":
            parts.append(f"<h{level}>{html.escape(scrub_text(heading))}</h{level}>"
                         f"<div class='scroll'>{_html_table(payload)}</div>")
        elif kind == "config":
            parts.append(f"<h{level}>{html.escape(heading)}</h{level}><pre>"
                         f"{html.escape(payload)}</pre>")
        elif kind == "figures":
            if heading:
                parts.append(f"<h{level}>{html.escape(heading)}</h{level}>")
            for name in payload:
                b64 = base64.b64encode(figures[name]).decode("ascii")
                parts.append(f"<figure><img alt='{html.escape(name)}' "
                             f"src='data:image/png;base64,{b64}'></figure>")
        else:  # fold
            parts.append(f"<details><summary>{html.escape(scrub_text(heading))}</summary>")
            parts += _html_items(payload, figures, level=3)
            parts.append("</details>")
    return parts


def render_html(report: Report | Comparison, figures: dict[str, bytes] | None = None, *,
                title: str = "Run comparison") -> str:
    """The report (a :class:`Comparison`, or a :class:`Report`) as one self-contained HTML page
    (figures embedded as base64 PNG, no script; the details are folded in ``<details>``)."""
    comparison = _as_comparison(report, "render_html")
    figures = comparison_figures(comparison) if figures is None else figures
    parts = [(f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
              f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"),
             f"<h1>{html.escape(title)}</h1>"]
    parts += _html_items(_comparison_sections(comparison, list(figures)), figures)
    parts.append("</body></html>")
    return "\n".join(parts)


def _md_items(items: list[Item], figures_dir: str | None, level: int = 2) -> list[str]:
    lines: list[str] = []
    hashes = "#" * level
    for kind, heading, payload in items:
        if kind == "text":
            lines += [payload, ""]
        elif kind == "warning":
            lines += [f"> **{scrub_text(payload)}**", ""]
        elif kind == "table":
            lines += [f"{hashes} {scrub_text(heading)}", "", _md_table(payload), ""]
        elif kind == "config":
            lines += [f"{hashes} {heading}", "", "```yaml", payload.rstrip("\n"), "```", ""]
        elif kind == "figures":
            if figures_dir is None:
                continue
            lines += ([f"{hashes} {heading}", ""] if heading else [])
            lines += [f"![{name}]({figures_dir}/{name})" for name in payload] + [""]
        else:  # fold: a <details> block, which GitHub and most viewers render folded
            lines += ["<details>", f"<summary>{html.escape(scrub_text(heading))}</summary>", ""]
            lines += _md_items(payload, figures_dir, level=3)
            lines += ["</details>", ""]
    return lines


def render_markdown(report: Report | Comparison, figures_dir: str | None = None,
                    figure_names: list[str] | None = None, *,
                    title: str = "Run comparison") -> str:
    """The report (a :class:`Comparison`, or a :class:`Report`) as Markdown; figures are
    linked as ``<figures_dir>/<name>``."""
    comparison = _as_comparison(report, "render_markdown")
    names = list(figure_names or [])
    return "\n".join([f"# {title}", ""] + _md_items(_comparison_sections(comparison, names),
                                                     figures_dir))


def write_report(report: Report | Comparison, html_path: str | Path | None = None,
                 markdown_path: str | Path | None = None, *,
                 latex_path: str | Path | None = None,
                 title: str = "Run comparison") -> dict[str, Path]:
    """Write the HTML page, the Markdown (with its figures in ``<stem>_figures/`` beside it)
    and the LaTeX table (:meth:`Comparison.to_latex`), each when its path is given. Returns the
    paths written: ``html``, ``markdown``, ``figures`` (the folder), ``latex``."""
    if html_path is None and markdown_path is None and latex_path is None:
        raise param_error("html_path", "write_report", "a path (or markdown_path, latex_path)",
                          None)
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
        p.write_text(render_markdown(comparison, fig_dir.name, list(figures), title=title),
                     encoding="utf-8")
        out["markdown"] = p
        out["figures"] = fig_dir
    if latex_path is not None:
        p = Path(latex_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(comparison.to_latex(caption=title + "."), encoding="utf-8")
        out["latex"] = p
    return out
