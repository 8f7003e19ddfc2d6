"""The page's verdicts and "could detect" (issue #44, item 6): a per-metric rope judges only the
metrics it names (a metric it lacks got "rope 0.0000, better"), the heading says the rope in
words (it printed a Python dict), and the detectable difference is that of the test the
comparison is configured with (it was always the t's, whatever ``test=``)."""

from __future__ import annotations

import math

import pytest
from report_runs import synthetic_run

import recoeval_tracking as rt
from recoeval_tracking.reporting.power import POWER_BASIS, detectable_text
from recoeval_tracking.reporting.render.latex import effects_latex
from recoeval_tracking.reporting.render.sections import rope_text, verdict_table
from recoeval_tracking.stats import (
    WILCOXON_ARE,
    detectable_difference,
    minimum_detectable_difference,
)

FAST = {"n_bootstrap": 0, "n_permutations": 100}


def _runs():
    return [
        synthetic_run("base", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, n_users=120, seed=0),
        synthetic_run("near", {"ndcg_at_10": 0.302, "p_at_10": 0.2}, n_users=120, seed=1),
    ]


def test_a_per_metric_rope_judges_only_the_metrics_it_names_and_is_said_in_words():
    cmp = rt.compare(_runs(), baseline="base", rope={"ndcg_at_10": 0.01}, **FAST)
    table = verdict_table(cmp)
    assert table["metric"].tolist() == ["ndcg_at_10"]  # p_at_10 has no rope: no verdict
    md = cmp.to_markdown()
    assert "for the rope ndcg_at_10: 0.01 (the metrics it names)" in md
    assert "{'" not in md and "rope 0.0000" not in md
    tex = effects_latex(cmp)
    assert "ndcg\\_at\\_10: 0.01" in tex
    rows = [ln for ln in tex.splitlines() if ln.strip().startswith("P@10")]
    assert rows and all(ln.rstrip().endswith("&  \\\\") for ln in rows)  # no verdict cell
    assert rope_text("5%") == "5% of the baseline's mean" and rope_text(0.02) == "0.02"
    assert rope_text({"a": 0.01, "b": "2%"}) == "a: 0.01; b: 2% of the baseline's mean"


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
def test_could_detect_is_the_power_of_the_configured_test(test):
    cmp = rt.compare(_runs(), baseline="base", test=test, **FAST)
    eff = cmp.effects().set_index("metric")
    row = eff.loc["ndcg_at_10"]
    v = cmp.values("ndcg_at_10")
    d = (v["near"] - v["base"]).dropna()
    t_mde = minimum_detectable_difference(float(d.std(ddof=1)), int(d.size), row["alpha_used"])
    factor = math.sqrt(1 / WILCOXON_ARE) if test == "wilcoxon" else 1.0
    assert math.isclose(row["mde"], t_mde * factor, rel_tol=1e-12)
    if row["detectable"]:
        assert row["detectable"].startswith(f"could detect {row['mde']:.3f}")
    assert POWER_BASIS[test] in cmp.to_markdown()


def test_a_test_that_cannot_pass_alpha_with_so_few_pairs_detects_nothing():
    assert math.isinf(detectable_difference(0.1, 4, 0.05, test="wilcoxon"))  # smallest p 0.125
    assert math.isinf(detectable_difference(0.1, 4, 0.05, test="randomization"))
    assert math.isfinite(detectable_difference(0.1, 4, 0.05, test="t"))
    assert detectable_text(math.inf, 0.012) == (
        "too few pairs to detect any difference; observed 0.012"
    )
    with pytest.raises(rt.InputError, match="'test'"):
        detectable_difference(0.1, 10, test="sign")


def test_the_text_beside_a_difference_and_the_words_of_each_test():
    assert detectable_text(0.0112, -0.0041) == "could detect 0.011; observed 0.004"
    assert detectable_text(math.nan, 0.1) == ""
    # the page's words cover every test the detectable difference knows, and no other
    for test in POWER_BASIS:
        assert math.isfinite(detectable_difference(0.1, 100, test=test))
    with pytest.raises(rt.InputError, match="'test'.*\\['t', 'wilcoxon', 'randomization'\\]"):
        detectable_difference(0.1, 100, test="sign")
    assert sorted(POWER_BASIS) == ["randomization", "t", "wilcoxon"]


@pytest.mark.parametrize(
    "module",
    [
        "recoeval_tracking.reporting.equivalence",
        "recoeval_tracking.reporting.posthoc",
    ],
)
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
