"""The page's effect sizes are one table, a row per headline metric and system: they were one
paragraph per metric with every system's numbers run together, which the eye could not scan
over three systems and five metrics."""

from __future__ import annotations

import numpy as np
import pytest
from report_runs import synthetic_run
from scipy import stats

import recoeval_tracking as rt
from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.render.sections import effect_table, md_escape


@pytest.fixture(scope="module")
def cmp():
    runs = [
        synthetic_run("base", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, n_users=200, seed=0),
        synthetic_run("better", {"ndcg_at_10": 0.40, "p_at_10": 0.3}, n_users=200, seed=1),
        synthetic_run("level", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, n_users=200, seed=2),
    ]
    return rt.compare(runs, baseline="base", n_bootstrap=0, n_permutations=100)


def test_one_row_per_headline_metric_and_system_with_the_numbers_of_the_definitions(cmp):
    table = effect_table(cmp)
    assert list(table[["metric", "system"]].itertuples(index=False, name=None)) == [
        ("ndcg_at_10", "better"),
        ("ndcg_at_10", "level"),
        ("p_at_10", "better"),
        ("p_at_10", "level"),
    ]
    for row in table.itertuples(index=False):
        v = cmp.values(row.metric)
        d = (v[row.system] - v["base"]).to_numpy()
        n, mean, sd = d.size, d.mean(), d.std(ddof=1)
        half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)  # Student-t interval of the mean
        assert row[2] == f"{mean:+.4f} [{mean - half:+.4f}, {mean + half:+.4f}]"
        rel = mean / v["base"].mean()
        assert row[3].startswith(f"{100 * rel:+.1f}% [")
        assert row[4] == f"{mean / sd:+.2f}"  # Cohen's d_z: mean difference over its sd
    assert list(table.columns[2:4]) == ["difference [95% CI]", "relative [95% CI]"]
    marks = dict(zip(table["system"] + " " + table["metric"], table["mark"]))
    assert marks["better ndcg_at_10"] == "▲***" and marks["level ndcg_at_10"] == ""
    detect = table.set_index(["metric", "system"])["detectable at 80% power"]
    assert detect[("ndcg_at_10", "level")].startswith("could detect ")
    assert detect[("ndcg_at_10", "better")] == ""


def test_both_pages_show_the_table_under_its_sentence(cmp):
    html = render_html(cmp)
    lead = html[html.index("Effect sizes against") : html.index("<details")]
    assert "<table" in lead and '<td class="t">better</td>' in lead
    assert "better +0." not in lead  # no longer the numbers run together in a sentence
    md = render_markdown(cmp)
    lead_md = md[md.index("Effect sizes against") : md.index("<details")]
    row = effect_table(cmp).iloc[0]
    assert f"| ndcg\\_at\\_10 | better | {md_escape(row.iloc[2])} |" in lead_md
    assert "\n## \n" not in md  # a table without a heading gets no empty heading


def test_without_a_non_significant_difference_the_power_column_is_left_out():
    runs = [
        synthetic_run("base", {"ndcg_at_10": 0.2}, n_users=200, seed=0),
        synthetic_run("better", {"ndcg_at_10": 0.5}, n_users=200, seed=1),
    ]
    cmp = rt.compare(runs, baseline="base", n_bootstrap=0, n_permutations=100)
    assert "detectable at 80% power" not in effect_table(cmp).columns


def test_a_p_value_that_underflowed_reads_as_a_bound():
    """A p-value below what a double holds came out of the test as 0 and was shown as
    '0.00e+00', as if the difference were certain."""
    from recoeval_tracking.reporting.render.sections import _p

    assert _p(0.0) == "< 1e-300"
    assert _p(3.1e-11) == "3.10e-11" and _p(0.0123) == "0.0123" and _p(float("nan")) == "–"
