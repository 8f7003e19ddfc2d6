"""What ``recoeval-track-report`` says on the terminal about what it left out: a metric that no
run is compared on (the baseline has no value of it) is said once, with the runs that have it
and the reason, as the page's intro says it, not once per run and reason."""

from __future__ import annotations

from types import SimpleNamespace

from report_runs import synthetic_run

from recoeval_tracking.app.report import _left_out_lines
from recoeval_tracking.reporting.report import build_report


def test_metrics_compared_for_no_run_are_one_line():
    runs = [  # ils and diversity: only als has item vectors; the baseline pop has none
        synthetic_run("als", {"ndcg_at_10": 0.3, "ils_at_10": 0.4, "diversity_at_10": 0.6}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
        synthetic_run("knn", {"ndcg_at_10": 0.25}, seed=3),
    ]
    report = build_report(runs, "pop", n_bootstrap=0, n_permutations=20)
    assert len(report.left_out) >= 4  # the table still names every (metric, run)
    lines = _left_out_lines(SimpleNamespace(reports={"": report}))
    assert lines == [
        "not compared: ils_at_10, diversity_at_10 (only als has them; each needs item vectors "
        "(a factor model's item factors, or item_features=), and a model without them gets none)"
    ]


def test_a_run_left_out_of_one_metric_is_named_with_its_reason():
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3, "p_at_10": 0.2}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2, "p_at_10": 0.1}, seed=2),
        synthetic_run("knn", {"ndcg_at_10": 0.25}, seed=3),
    ]
    report = build_report(runs, "pop", n_bootstrap=0, n_permutations=20)
    (line,) = _left_out_lines(SimpleNamespace(reports={"": report}))
    assert line.startswith("left out: p_at_10 of knn: no p_at_10 column")
