"""Every text of the report's figures lies inside the figure: the per-user box plots once cut
their axis label off at the bottom edge (a 3-inch figure kept 0.3 inch under its axes, less than
the tick labels and the label need)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from report_runs import synthetic_run

from recoeval_tracking.reporting.render import figures
from recoeval_tracking.reporting.report import build_report

#: Text may overhang the canvas by this many pixels (antialiasing), no more.
SLACK = 1.0


def _report(n_runs: int, name_length: int = 8, curves: bool = True):
    runs = []
    for j in range(n_runs):
        level = 0.2 + 0.5 * j / n_runs
        run = synthetic_run(
            f"r{j}", {"ndcg_at_10": level, "p_at_10": level / 2}, n_users=60, seed=j
        )
        run.name = f"{'m' * name_length}{j}"
        run.params = {"model.name": "m", "model.lam": 10.0 * (j + 1)}
        if curves:
            k = np.arange(1, 11)
            mean = level + 0.0 * k
            run.curves = pd.DataFrame(
                {
                    "k": k,
                    "ndcg_at_k": mean,
                    "ndcg_at_k_ci95_low": mean - 0.02,
                    "ndcg_at_k_ci95_high": mean + 0.02,
                }
            )
        runs.append(run)
    return build_report(runs, baseline="r0", n_bootstrap=0, n_permutations=100)


def _outside(box, width: float, height: float) -> bool:
    return box.x0 < -SLACK or box.y0 < -SLACK or box.x1 > width + SLACK or box.y1 > height + SLACK


def outside_text(fig) -> list[str]:
    """What of ``fig`` is drawn past its edges: an axis label, a title, or an axes with its
    drawn tick labels and legend (``Axes.get_tightbbox``), with its box in pixels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.xaxis.label, ax.yaxis.label, ax.title]
    out = [
        f"{text.get_text()!r} at {text.get_window_extent(renderer).bounds}"
        for text in texts
        if str(text.get_text()).strip()
        and _outside(text.get_window_extent(renderer), width, height)
    ]
    for i, ax in enumerate(fig.axes):
        box = ax.get_tightbbox(renderer)
        if _outside(box, width, height):
            out.append(f"axes {i} ({ax.get_title()!r}) with its ticks and legend at {box.bounds}")
    return out


def test_outside_text_is_found():
    fig = figures.new_figure(4.0, 3.0)
    ax = fig.add_subplot()
    ax.set_xlabel("a label")
    fig.subplots_adjust(bottom=0.3)
    assert outside_text(fig) == []
    fig.subplots_adjust(bottom=0.02)  # the axis label goes under the bottom edge
    assert any("'a label'" in t for t in outside_text(fig))


@pytest.mark.parametrize("n_runs,name_length", [(2, 8), (3, 30), (25, 12)])
def test_per_user_box_plots_keep_their_text_inside(n_runs, name_length):
    report = _report(n_runs, name_length)
    for m in report.metrics:
        assert outside_text(figures.distribution_figure(report, m)) == [], m


@pytest.mark.parametrize("n_runs", [2, 14])
def test_curves_keep_their_text_inside(n_runs):
    report = _report(n_runs)
    assert outside_text(figures.curve_figure(report, "ndcg_at_k")) == []


def test_sweep_figure_keeps_its_text_inside():
    report = _report(3)
    assert figures.sweep_params(report) == ["model.lam"]
    assert outside_text(figures.sweep_figure(report, "model.lam")) == []


@pytest.mark.parametrize("n_runs,name_length", [(2, 8), (3, 30), (20, 10)])
def test_the_plot_without_curves_keeps_its_text_inside(n_runs, name_length):
    report = _report(n_runs, name_length, curves=False)
    assert outside_text(figures.comparison_plot(report, "ndcg_at_10")) == []


def test_every_baseline_of_a_sweep_is_marked_in_the_figures():
    """The summary table marks each of a sweep's baselines; the curves' legend and the box
    plots marked only the report's own, so the second baseline looked like a compared system."""
    from recoeval_tracking.reporting.report import BASELINE_RANK_TAG

    runs = [
        synthetic_run(name, {"ndcg_at_10": level}, n_users=40, seed=j)
        for j, (name, level) in enumerate([("pop", 0.2), ("ease", 0.4), ("als", 0.35)])
    ]
    runs[0].tags = {BASELINE_RANK_TAG: "0"}
    runs[2].tags = {BASELINE_RANK_TAG: "1"}
    k = np.arange(1, 4)
    for run in runs:
        run.curves = pd.DataFrame({"k": k, "ndcg_at_k": np.full(3, 0.3)})
    report = build_report(runs, baseline="pop", n_bootstrap=0, n_permutations=100)
    legend = figures.curve_figure(report, "ndcg_at_k").axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "pop (baseline)",
        "ease",
        "als (baseline)",
    ]
    box = figures.distribution_figure(report, "ndcg_at_10").axes[0]
    shown = [t.get_text() for t in box.get_yticklabels()]
    assert shown == ["pop (baseline)", "ease", "als (baseline)"]
