"""The renderers receive the comparison's read-only view (reporting/view.py): the model's objects
are that view as they are, and a renderer given anything else names what it expected."""

from __future__ import annotations

import pytest
from report_runs import synthetic_run

from recoeval_tracking._validation import InputError
from recoeval_tracking.reporting import render
from recoeval_tracking.reporting.compare import Comparison
from recoeval_tracking.reporting.report import build_report
from recoeval_tracking.reporting.view import (
    ComparisonView,
    ReportView,
    RunView,
    SliceView,
    as_view,
)


def _report():
    runs = [
        synthetic_run("pop", {"ndcg_at_10": 0.2}, n_users=40, seed=1),
        synthetic_run("als", {"ndcg_at_10": 0.3}, n_users=40, seed=2),
    ]
    return build_report(
        runs, "pop", n_bootstrap=0, n_permutations=10, slices=[{"kind": "activity"}]
    )


def _members(protocol) -> set[str]:
    return {n for n in (*vars(protocol), *protocol.__annotations__) if not n.startswith("_")}


def test_the_model_is_its_view():
    report = _report()
    comparison = as_view(report, "render_html")
    assert isinstance(comparison, Comparison)
    assert isinstance(comparison, ComparisonView) and isinstance(report, ReportView)
    assert all(isinstance(r, RunView) for r in report.runs)
    assert report.slices and all(isinstance(s, SliceView) for s in report.slices)
    # each protocol names members of the model, none more (a renamed model member shows here)
    assert _members(ReportView) <= set(dir(report))
    assert _members(ComparisonView) <= set(dir(comparison))
    assert _members(RunView) <= set(dir(report.runs[0]))
    # a comparison is shown as it is
    assert as_view(comparison, "render_html") is comparison


def test_a_renderer_names_what_it_expected():
    with pytest.raises(InputError, match=r"report.*render_markdown.*a Comparison.*a Report"):
        render.render_markdown({"ndcg_at_10": 0.3})
