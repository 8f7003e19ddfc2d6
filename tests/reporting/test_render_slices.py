"""A slice whose one group holds every user (MovieLens: no user has fewer than 5 train entries,
so every one is warm) says so in one line instead of repeating every metric's all-users table
under another heading."""

from __future__ import annotations

from report_runs import synthetic_run

from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.report import build_report


def _report(threshold: int):
    runs = [
        synthetic_run("a", {"ndcg_at_10": 0.3, "p_at_10": 0.2}, n_users=80, seed=0),
        synthetic_run("b", {"ndcg_at_10": 0.4, "p_at_10": 0.25}, n_users=80, seed=1),
    ]
    slices = [{"kind": "cold_warm", "threshold": threshold}]
    return build_report(runs, "a", slices=slices, n_bootstrap=0, n_permutations=20)


def _fold(page: str, title: str) -> str:
    start = page.index(f"<summary>{title}</summary>")
    return page[start : page.index("</details>", start)]


def test_a_slice_of_one_group_says_so_instead_of_repeating_the_tables():
    report = _report(threshold=1)  # n_train runs 1..40: every user is warm
    assert [(s.group, s.n_users) for s in report.slices] == [("warm (n_train >= 1)", 80)]
    fold = _fold(render_html(report, {}), "Slice cold_warm")
    assert "<table" not in fold
    assert "Every user falls in one group of this slice, warm (n_train &gt;= 1) (80 users)" in fold
    md = render_markdown(report)
    assert "Every user falls in one group of this slice" in md
    assert "slice cold_warm, warm" not in md  # no per-metric heading of the slice


def test_a_slice_of_two_groups_keeps_its_tables():
    report = _report(threshold=5)
    assert [s.n_users for s in report.slices] == [8, 72]  # n_train 1..4 twice, then the rest
    fold = _fold(render_html(report, {}), "Slice cold_warm")
    assert fold.count("<table") == 2 * len(report.metrics)
    assert "Every user falls in one group" not in fold
