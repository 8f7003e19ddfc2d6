"""The report's first screen: runs x headline metrics, mean with CI, mark, best in bold."""

from __future__ import annotations

from report_runs import synthetic_run

from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.render.summary import Best, headline_metrics, summary_table
from recoeval_tracking.reporting.report import build_report


def test_headline_metrics_put_the_usual_ones_first():
    got = headline_metrics(
        ["mpr", "novelty_at_10", "r_at_10", "ndcg_at_10", "p_at_10", "gini_at_10", "roc_auc"]
    )
    assert got == ["ndcg_at_10", "p_at_10", "r_at_10", "roc_auc", "mpr"]


def test_summary_comes_first_with_marks_and_the_best_in_bold():
    runs = [
        synthetic_run("base", {"ndcg_at_10": 0.3, "mpr": 0.4}, seed=1),
        synthetic_run("good", {"ndcg_at_10": 0.6, "mpr": 0.2, "ils_at_10": 0.5}, seed=2),
        synthetic_run("same", {"ndcg_at_10": 0.3, "mpr": 0.4}, seed=3),
    ]
    rep = build_report(runs, "base", n_bootstrap=20, n_permutations=20)
    table = summary_table(rep)
    assert list(table["run"]) == ["base (baseline)", "good", "same"]
    ndcg = table["ndcg_at_10"].tolist()
    assert isinstance(ndcg[1], Best) and "▲***" in ndcg[1] and "[" in ndcg[1]
    assert not any(isinstance(v, Best) for v in (ndcg[0], ndcg[2]))
    assert isinstance(table["mpr"].iloc[1], Best)  # lower is better for mpr
    assert table["ils_at_10"].tolist() == ["n/a", table["ils_at_10"].iloc[1], "n/a"]
    md = render_markdown(rep)
    assert md.index("## Summary") < md.index("## ndcg_at_10: all users")
    assert "| **" in md
    assert "<td><b>" in render_html(rep, figures={})


def test_catalogue_columns_read_alike_down_their_rows():
    """A share of 1 was shown as '1' beside '0.9990' (pop_rsp_at_10 of a popularity baseline);
    a count keeps no decimals."""
    from recoeval_tracking.reporting.render.summary import catalogue_table

    runs = [synthetic_run(name, {"ndcg_at_10": 0.3}, seed=j) for j, name in enumerate("abc")]
    for run, share, count, coverage in zip(runs, (1.0, 0.999, 0.25), (47, 309, 380), (1, 1, 1)):
        run.metrics = {
            "pop_rsp_at_10": share,
            "aggregated_diversity_at_10": float(count),
            "coverage_at_10": float(coverage),
        }
    table = catalogue_table(build_report(runs, "a", n_bootstrap=0, n_permutations=20))
    assert [str(v) for v in table["pop_rsp_at_10"]] == ["1.0000", "0.9990", "0.2500"]
    assert [str(v) for v in table["aggregated_diversity_at_10"]] == ["47", "309", "380"]
    assert [str(v) for v in table["coverage_at_10"]] == ["1.0000"] * 3
