"""The figures of a report, as PNG bytes keyed by file name.

Figures are built with :class:`matplotlib.figure.Figure` on the Agg canvas
(:func:`recoeval_tracking.jobdir.plots.new_figure`), never ``pyplot``:

* ``curves_<curve>.png``: the @1..K curve of every run with its 95% band (from ``curves.csv``);
* ``per_user_<metric>.png``: the distribution of each run's per-user values (box plots: quartiles,
  whiskers at 1.5 IQR, the mean as a dot; NaN users left out and counted in the tables);
* ``sweep_<param>.png``: each metric's mean with its t interval against a parameter, drawn only
  for parameters that take more than one value within one model (``model.factors`` swept for ALS),
  one series per model; a parameter that only tells models apart (``model.name``, or a setting
  that one model has and the others lack) is already the summary table's rows.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from ..._validation import InputError, param_error
from ...jobdir.plots import new_figure
from ...jobdir.redact import scrub_text
from ..outputs import register_output
from ..view import ComparisonView, ReportView, baseline_ids, cd_cliques, percent
from .summary import headline_metrics

__all__ = [
    "render_figures",
    "comparison_figures",
    "dataset_prefix",
    "curve_names",
    "sweep_params",
    "comparison_plot",
    "cd_figure",
    "figure_png",
    "curve_figure",
    "distribution_figure",
    "sweep_figure",
]

_MAX_SWEEP_FIGURES = 8
#: Room under the axes for the tick labels and the axis label, and over them for a title, in
#: inches: a margin given as a fraction of the height leaves too little on a short figure.
_BOTTOM_IN = 0.55
_TOP_IN = 0.4
#: Room left of the widest tick label of the y axis (ticks, their pad, the edge), in inches.
_LABEL_PAD_IN = 0.2
#: The param that names the model: sweep figures are drawn within each of its values.
MODEL_KEY = "model.name"


def figure_png(fig) -> bytes:
    """A figure as PNG bytes."""
    return _png(fig)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def safe_name(name: str) -> str:
    """``name`` with every character but letters, digits and ``-_.`` replaced by ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def curve_names(report: ReportView) -> list[str]:
    """The @1..K curves any run has, in first-seen order."""
    names: dict[str, None] = {}
    for r in report.runs:
        if r.curves is not None:
            for c in r.curves.columns:
                if c != "k" and not c.endswith(("_ci95_low", "_ci95_high")):
                    names.setdefault(c, None)
    return list(names)


def _vertical_margins(fig, height: float, title: bool = True) -> None:
    """Fixed room in inches under and over the axes of a ``height``-inch figure."""
    fig.subplots_adjust(bottom=_BOTTOM_IN / height, top=1 - (_TOP_IN if title else 0.15) / height)


def _fit_labels(fig, labels: list[str], fontsize: float, most: float = 0.55) -> list[str]:
    """Set the left margin of ``fig`` to its widest label of the y axis, measured at
    ``fontsize`` (at most ``most`` of the width); labels wider than that are shortened with
    an ellipsis. Returns the labels as they fit."""
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=fontsize)
    room = most * fig.bbox.width - _LABEL_PAD_IN * fig.dpi

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0]

    fitted = []
    for label in labels:
        while len(label) > 2 and width(label) > room:
            label = label[:-2] + "…"
        fitted.append(label)
    widest = max((width(s) for s in fitted), default=0.0)
    fig.subplots_adjust(left=max(0.08, (widest + _LABEL_PAD_IN * fig.dpi) / fig.bbox.width))
    return fitted


def curve_figure(report: ReportView, name: str):
    """The @1..K curve ``name`` of every run with its 95% band, as a figure."""
    fig = new_figure(8.0, 5.0)
    _vertical_margins(fig, 5.0)
    _draw_curves(fig.add_subplot(), report, name)
    return fig


def _shown_name(report: ReportView, run: Any) -> str:
    """A run's name as the figures show it: every baseline marked, as in the summary table."""
    marked = run.run_id == report.baseline or run.run_id in baseline_ids(report)
    return scrub_text(f"{run.name} (baseline)" if marked else run.name)


def _colours(n: int) -> list:
    """``n`` distinct colours: matplotlib's ``tab10`` up to 10, ``tab20`` up to 20, then a
    sampled ``turbo`` map."""
    from matplotlib import colormaps

    if n <= 10:
        return [colormaps["tab10"](i) for i in range(n)]
    if n <= 20:
        return [colormaps["tab20"](i) for i in range(n)]
    return [colormaps["turbo"](x) for x in np.linspace(0.05, 0.95, n)]


def distribution_figure(report: ReportView, m: str):
    """Each run's per-user values of ``m`` as a box plot (quartiles, whiskers at 1.5 IQR, the
    mean as a dot), as a figure."""
    from matplotlib import cbook

    stats_list, labels = [], []
    for r in report.runs:
        if m not in r.per_user.columns:
            continue
        v = r.per_user[m].to_numpy(dtype=np.float64)
        v = v[~np.isnan(v)]
        if v.size == 0:
            continue
        stats_list.append(cbook.boxplot_stats(v, whis=1.5)[0])
        labels.append(_shown_name(report, r))
    height = max(3.0, 0.3 * len(stats_list) + 1.5)
    fig = new_figure(8.0, height)
    fontsize = 7 if len(labels) > 20 else 9
    labels = _fit_labels(fig, labels, fontsize)
    fig.subplots_adjust(right=0.97)
    _vertical_margins(fig, height)
    ax = fig.add_subplot()
    if stats_list:
        for s, label in zip(stats_list, labels):
            s["label"] = label
        ax.bxp(
            stats_list,
            orientation="horizontal",
            showfliers=False,
            showmeans=True,
            meanprops={
                "marker": "o",
                "markerfacecolor": "#C44E52",
                "markeredgecolor": "#C44E52",
                "markersize": 4,
            },
        )
        ax.invert_yaxis()
        ax.tick_params(axis="y", labelsize=fontsize)
    else:
        ax.text(0.5, 0.5, "no defined values", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(f"per-user {m}")
    ax.grid(True, axis="x", alpha=0.3)
    # over the figure, not the axes: a wide left margin would push a centred title off the edge
    fig.suptitle(f"Per-user {m} (box: quartiles, dot: mean)", y=1 - 0.08 / height)
    return fig


def _as_number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _model_of(run: Any) -> str:
    return str(run.params.get(MODEL_KEY, ""))


def sweep_params(report: ReportView) -> list[str]:
    """The swept parameters that take two or more values among the runs of one model."""
    out = []
    for param in report.swept_params:
        if param == MODEL_KEY:
            continue
        per_model: dict[str, set[str]] = {}
        for r in report.runs:
            if r.params.get(param) is not None:
                per_model.setdefault(_model_of(r), set()).add(str(r.params.get(param)))
        if any(len(v) > 1 for v in per_model.values()):
            out.append(param)
    return out


def sweep_figure(report: ReportView, param: str):
    """Each metric's mean with its t interval against the swept ``param``, one series per model,
    as a figure."""
    runs = [r for r in report.runs if r.params.get(param) is not None]
    raw = [r.params.get(param) for r in runs]
    nums = [_as_number(v) for v in raw]
    numeric = all(v is not None for v in nums)
    cats = None if numeric else sorted({str(v) for v in raw})
    x = np.array(nums if numeric else [cats.index(str(v)) for v in raw], dtype=float)
    models = list(dict.fromkeys(_model_of(r) for r in runs))
    colours = _colours(len(models))
    n_m = len(report.metrics)
    fig = new_figure(max(5.0, 4.0 * min(n_m, 3)), 3.8 * math.ceil(n_m / 3))
    fig.subplots_adjust(
        left=0.12 if n_m > 1 else 0.16, right=0.98, top=0.88, bottom=0.15, wspace=0.4, hspace=0.45
    )
    summary = report.summary
    for i, m in enumerate(report.metrics):
        ax = fig.add_subplot(math.ceil(n_m / 3), min(n_m, 3), i + 1)
        part = summary[summary["metric"] == m].set_index("run_id")
        for c, model in enumerate(models):
            sel = np.array([_model_of(r) == model for r in runs])
            ids = [r.run_id for r, s in zip(runs, sel) if s]
            y, lo, hi = (
                part[col].reindex(ids).to_numpy(dtype=float) for col in ("mean", "t_low", "t_high")
            )
            xs = x[sel]
            order = np.argsort(xs, kind="stable")
            err = np.where(
                np.isfinite(np.vstack([y - lo, hi - y])), np.vstack([y - lo, hi - y]), 0.0
            )
            ax.errorbar(
                xs[order],
                y[order],
                yerr=err[:, order],
                fmt="o",
                markersize=4,
                capsize=3,
                color=colours[c],
                label=scrub_text(model) or None,
            )
            if numeric and len(np.unique(xs)) == len(xs) > 1:
                ax.plot(xs[order], y[order], color=colours[c], alpha=0.5)
        if cats is not None:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels([t[:15] for t in cats], rotation=30, fontsize=8)
        ax.set_xlabel(param)
        ax.set_ylabel(f"mean {m}")
        ax.grid(True, alpha=0.3)
        if i == 0 and len(models) > 1:
            ax.legend(fontsize="x-small")
    fig.suptitle(f"Metrics against {param} ({percent(report.settings['confidence'])} t intervals)")
    return fig


def render_figures(report: ReportView) -> dict[str, bytes]:
    """Every figure of the report as PNG bytes, keyed by file name (see the module docstring):
    the curves first, then the per-user distributions, then the sweep figures."""
    if not isinstance(report, ReportView):
        raise param_error("report", "render_figures", "a Report from build_report", report)
    figures: dict[str, bytes] = {}
    for name in curve_names(report):
        figures[f"curves_{safe_name(name)}.png"] = _png(curve_figure(report, name))
    for m in report.metrics:
        figures[f"per_user_{safe_name(m)}.png"] = _png(distribution_figure(report, m))
    for param in sweep_params(report)[:_MAX_SWEEP_FIGURES]:
        figures[f"sweep_{safe_name(param)}.png"] = _png(sweep_figure(report, param))
    return figures


def dataset_prefix(dataset: str) -> str:
    """What starts the names of one dataset's figures on a page over several:
    ``<dataset>__``."""
    return f"{safe_name(dataset)}__"


def comparison_figures(comparison: ComparisonView) -> dict[str, bytes]:
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
            figures[dataset_prefix(ds) + name] = data
    return figures


def comparison_plot(report: ReportView, metric: str | None = None):
    """The figure behind :meth:`~recoeval_tracking.reporting.compare.Comparison.plot`: the
    @1..K curve of ``metric`` (a curve such as ``ndcg_at_k``, or a column such as
    ``ndcg_at_10`` standing for its curve) for every system with its 95% band (as the runs
    recorded it); without curves, each system's mean of ``metric`` with its Student-t interval
    at the report's confidence."""
    curves = curve_names(report)
    name = metric
    if metric is not None and metric not in curves and "_at_" in metric:
        name = metric.rsplit("_at_", 1)[0] + "_at_k"
    if curves and (metric is None or name in curves):
        fig = new_figure(8.0, 5.0)
        _draw_curves(fig.add_subplot(), report, name or curves[0])
        return fig
    if metric is None:
        metric = report.metrics[0]
    if metric not in report.metrics:
        raise param_error(
            "metric", "Comparison.plot", f"a curve {curves} or a metric {report.metrics}", metric
        )
    s = report.summary[report.summary["metric"] == metric]
    height = max(2.5, 0.35 * len(s) + 1.2)
    fig = new_figure(7.0, height)
    names = _fit_labels(fig, [scrub_text(str(n)) for n in s["run"]], 10.0)
    _vertical_margins(fig, height, title=False)
    ax = fig.add_subplot()
    y = np.arange(len(s))
    mean = s["mean"].to_numpy(dtype=float)
    err = np.vstack(
        [mean - s["t_low"].to_numpy(dtype=float), s["t_high"].to_numpy(dtype=float) - mean]
    )
    ax.errorbar(mean, y, xerr=np.where(np.isfinite(err), err, 0.0), fmt="o", capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel(f"mean {metric} ({percent(report.settings['confidence'])} t interval)")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _draw_curves(ax, report: ReportView, name: str) -> None:
    many = len(report.runs) > 12
    colours = _colours(len(report.runs))
    for i, r in enumerate(report.runs):
        if r.curves is None or name not in r.curves.columns:
            continue
        k = r.curves["k"].to_numpy()
        is_base = r.run_id == report.baseline
        ax.plot(
            k,
            r.curves[name].to_numpy(dtype=float),
            color=colours[i],
            linewidth=2.2 if is_base else 1.2,
            label=_shown_name(report, r),
        )
        low, high = f"{name}_ci95_low", f"{name}_ci95_high"
        if low in r.curves.columns and high in r.curves.columns:
            ax.fill_between(
                k,
                r.curves[low].to_numpy(dtype=float),
                r.curves[high].to_numpy(dtype=float),
                color=colours[i],
                alpha=0.08 if many else 0.2,
                linewidth=0,
            )
    ax.set_xlabel("k (cutoff)")
    ax.set_ylabel(f"mean {name} (95% CI band)")
    ax.grid(True, alpha=0.3)
    ax.set_title(f"{name} @1..K, every run")
    ax.legend(loc="best", fontsize="x-small", ncols=3 if many else 1)


def cd_figure(
    mean_ranks, cd: float | None, title: str = "", cliques: list[list[str]] | None = None
):
    """A critical-difference diagram (Demšar 2006, figure 1): the systems placed on an axis of
    mean ranks (1, the best, on the left), labelled on either side, with the CD drawn above
    the axis and a thick bar under each group of systems not significantly different
    (:func:`~recoeval_tracking.reporting.multisystem.cd_cliques`, or the ``cliques`` given by a
    pairwise post-hoc, with ``cd=None`` and no CD drawn)."""
    import pandas as pd

    ranks = pd.Series(mean_ranks, dtype=float).sort_values(kind="stable")
    k = len(ranks)
    if cliques is None:
        cliques = cd_cliques(ranks, cd)
    half = (k + 1) // 2
    rows = max(half, k - half)
    height = 1.2 + 0.3 * rows + 0.15 * len(cliques)
    fig = new_figure(8.0, height)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.86 if title else 0.98, bottom=0.02)
    ax = fig.add_subplot()
    ax.set_axis_off()
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.9, hi + 0.9)
    top = 1.0
    ax.set_ylim(top - 0.3 - 0.3 * rows - 0.15 * len(cliques), top + 0.6)
    ax.plot([lo, hi], [top, top], color="black", linewidth=1)
    for t in range(lo, hi + 1):
        ax.plot([t, t], [top, top + 0.08], color="black", linewidth=1)
        ax.text(t, top + 0.12, str(t), ha="center", va="bottom", fontsize=9)
    # the critical difference, above the axis at the left
    if cd is not None:
        ax.plot([lo, lo + cd], [top + 0.45, top + 0.45], color="black", linewidth=1.5)
        ax.text(lo + cd / 2, top + 0.5, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    base = top - 0.15 - 0.15 * len(cliques)
    for i, (name, r) in enumerate(ranks.items()):
        left = i < half
        row = i if left else k - 1 - i
        y = base - 0.3 * (row + 1)
        x_text = lo - 0.8 if left else hi + 0.8
        ax.plot([r, r, x_text], [top, y, y], color="black", linewidth=0.8)
        ax.text(
            x_text + (-0.02 if left else 0.02),
            y + 0.03,
            f"{scrub_text(str(name))} ({r:.2f})",
            ha="left" if left else "right",
            va="bottom",
            fontsize=8,
        )
    for j, members in enumerate(cliques):
        y = top - 0.1 - 0.15 * j
        xs = ranks[members]
        ax.plot([xs.min() - 0.03, xs.max() + 0.03], [y, y], color="black", linewidth=3)
    if title:
        fig.suptitle(scrub_text(title), fontsize=9)
    return fig


register_output("plot", comparison_plot)  # Comparison.plot
register_output("cd_figure", cd_figure)  # Comparison.cd_diagram
