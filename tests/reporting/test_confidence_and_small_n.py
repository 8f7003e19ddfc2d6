"""What the page says about its numbers: every interval label follows ``confidence``; the
small-sample dagger counts the pairs whose difference is not zero; the Wilcoxon docstring says
how its p differs from scipy's default with zeros; an undefined Iman-Davenport F says why."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recoeval_tracking as rt
from recoeval_tracking.reporting import multisystem as ms
from recoeval_tracking.reporting import stats as st
from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.render.figures import comparison_plot
from recoeval_tracking.reporting.report import build_report
from recoeval_tracking.reporting.runs import RunData

FAST = {"n_bootstrap": 20, "n_permutations": 20}


def _runs(base: np.ndarray, other: np.ndarray) -> list[RunData]:
    ids = np.arange(base.size)
    fps = {"data": "d", "split": "s", "definitions": "f"}
    return [
        RunData(name, name, pd.DataFrame({"user_id": ids, "hit_at_10": v}), fingerprints=fps)
        for name, v in (("base", base), ("model", other))
    ]


@pytest.fixture(scope="module")
def comparison_at_90():
    rng = np.random.default_rng(0)
    base = rng.uniform(size=60)
    other = np.clip(base + rng.normal(0.05, 0.1, size=60), 0, 1)
    return rt.compare(_runs(base, other), confidence=0.9, **FAST)


def test_every_interval_label_of_the_page_follows_the_confidence(comparison_at_90):
    md = render_markdown(comparison_at_90)
    html = render_html(comparison_at_90)
    for page in (md, html):
        assert "95%" not in page  # no curves here: every interval is the report's own
    assert "Summary: mean [90% t CI]" in md
    assert "| run | mean | 90% t CI | 90% bootstrap CI |" in md
    assert "Δ 90% t CI" in md and "Δ 90% bootstrap CI" in md
    assert "Intervals: 90% Student-t" in md
    assert "<th>90% t CI</th>" in html and "<th>Δ 90% bootstrap CI</th>" in html


def test_the_plot_without_curves_names_the_confidence(comparison_at_90):
    fig = comparison_plot(comparison_at_90.report, "hit_at_10")
    assert fig.axes[0].get_xlabel() == "mean hit_at_10 (90% t interval)"
    # and the interval drawn is the 90% one
    lo, hi = comparison_at_90.summary().iloc[0][["ci_low", "ci_high"]]
    v = comparison_at_90.report.runs[0].per_user["hit_at_10"].to_numpy()
    half = stats.t.ppf(0.95, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    assert (lo, hi) == (pytest.approx(v.mean() - half), pytest.approx(v.mean() + half))


def test_a_confidence_that_is_not_a_whole_percent_is_labelled_as_given():
    assert st.percent(0.975) == "97.5%" and st.percent(0.9) == "90%" and st.percent(0.95) == "95%"
    rng = np.random.default_rng(1)
    base = rng.uniform(size=40)
    md = render_markdown(rt.compare(_runs(base, base[::-1].copy()), confidence=0.975, **FAST))
    assert "Intervals: 97.5% Student-t" in md and "| 97.5% t CI |" in md


def test_the_dagger_counts_only_the_non_zero_differences():
    """20 pairs, 4 of them non-zero (all in one direction): the paired t-test gives p 0.043,
    while no distribution-free test can go below 2 / 2^4 = 0.125 on four signs."""
    base = np.linspace(0.1, 0.5, 20)
    other = base.copy()
    other[:4] += [0.05, 0.05, 0.05, 0.06]
    d = other - base
    assert stats.ttest_rel(other, base).pvalue < 0.05  # the t-test alone would mark it
    assert stats.wilcoxon(d[d != 0]).pvalue == pytest.approx(0.125)
    rep = build_report(_runs(base, other), "base", n_bootstrap=0, n_permutations="auto")
    c = rep.comparisons.iloc[0]
    assert (c["n_pairs"], c["n_nonzero"]) == (20, 4)
    assert c["p_t"] == pytest.approx(stats.ttest_rel(other, base).pvalue)
    assert c["p_wilcoxon"] == pytest.approx(0.125)
    # random sign vectors estimate the exact 0.125 (4 standard errors of 2000 draws: 0.03)
    assert abs(c["p_randomization"] - 0.125) < 0.03
    assert bool(c["small_n"]) and c["mark"] == "▲†"
    assert "only 4 pairs, too few" in render_markdown(rep)
    # the same 20 users with every difference non-zero are enough pairs: the t mark stands
    other2 = base + np.where(np.arange(20) < 16, 0.001, 0.05)
    c2 = build_report(_runs(base, other2), "base", n_bootstrap=0).comparisons.iloc[0]
    assert c2["n_nonzero"] == 20 and not c2["small_n"] and c2["mark"].startswith("▲*")


def test_an_undefined_iman_davenport_says_why():
    same = ms.friedman_test([[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]])
    assert np.isnan(same.iman_davenport)
    assert "every dataset ranks the systems alike" in same.note
    assert "N(k-1) - chi2 = 4 - 4 = 0" in same.note  # N = 2, k = 3, chi2 = 4 (scipy)
    tied = ms.friedman_test([[0.1, 0.1, 0.1], [0.2, 0.2, 0.2]])
    assert np.isnan(tied.statistic) and "every dataset ties every system" in tied.note
    assert ms.friedman_test([[0.1, 0.2, 0.3], [0.2, 0.4, 0.3], [0.1, 0.3, 0.2]]).note == ""


def test_a_run_equal_to_the_baseline_on_every_user_gets_no_dagger_and_no_legend():
    """Every difference zero: there is nothing to test and nothing too small; the mark is empty
    and the page carries no dagger legend (it read 'only 0 pairs ... p with 0 is nan')."""
    base = np.linspace(0.1, 0.5, 30)
    cmp = rt.compare(_runs(base, base.copy()), **FAST)
    row = cmp.report.comparisons.iloc[0]
    assert row["n_nonzero"] == 0
    assert row["mark"] == ""
    md = render_markdown(cmp)
    assert ms.SMALL_N_MARK not in md


def test_the_effect_lead_shows_its_stars_as_stars_on_both_pages():
    """The lead's marks were pasted raw: '▲***; next system ... ▲***' became bold text between
    the two sets of stars on the HTML page (and in any Markdown viewer)."""
    base = np.linspace(0.1, 0.5, 60)
    other = base + np.linspace(0.05, 0.15, 60)  # better on every user: p far below 0.001
    runs = _runs(base, other) + _runs(base, other + 0.01)[1:]
    runs[2].name = runs[2].run_id = "model2"
    cmp = rt.compare(runs, **FAST)
    html = render_html(cmp)
    start = html.index("Effect sizes against")  # below the summary table
    lead = html[start : html.index("<details", start)]
    assert lead.count("▲***") == 2 and "<b>model" not in lead
    md = render_markdown(cmp)
    start = md.index("Effect sizes against")
    lead_md = md[start : md.index("<details", start)]
    assert "▲\\*\\*\\*" in lead_md and "▲***" not in lead_md
