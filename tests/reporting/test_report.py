"""build_report on synthetic runs: comparability, alignment, counts, baselines, slices, output."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from report_runs import synthetic_run

from recoeval_tracking import InputError
from recoeval_tracking import stats as st
from recoeval_tracking.reporting.render import render_html, render_markdown, write_report
from recoeval_tracking.reporting.report import build_report, check_comparable


def _runs():
    return [
        synthetic_run("a", {"ndcg_at_10": 0.3, "p_at_10": 0.2}, seed=1),
        synthetic_run("b", {"ndcg_at_10": 0.5, "p_at_10": 0.2}, seed=2),
        synthetic_run("c", {"ndcg_at_10": 0.31, "p_at_10": 0.21}, seed=3),
    ]


def test_different_split_fingerprints_are_refused_with_the_difference_named():
    runs = _runs()
    runs[2].fingerprints = {**runs[2].fingerprints, "split": "s2"}
    with pytest.raises(InputError, match=r"split fingerprint differs: s1 \(a, b\) vs s2 \(c\)"):
        build_report(runs, n_bootstrap=10, n_permutations=10)
    rep = build_report(runs, allow_mismatch=True, n_bootstrap=10, n_permutations=10)
    assert rep.mismatches == check_comparable(runs) and not rep.comparable
    assert "NOT COMPARABLE" in render_markdown(rep)
    assert "[fingerprints differ]" in render_markdown(rep)


def test_means_counts_and_paired_statistics():
    runs = _runs()
    # Run c misses users 0..9 and has NaN for users 10..14: counted, never silently dropped.
    runs[2].per_user = runs[2].per_user.iloc[10:].reset_index(drop=True)
    runs[2].per_user.loc[:4, "ndcg_at_10"] = np.nan
    rep = build_report(runs, "a", n_bootstrap=200, n_permutations=200, seed=5)
    s = rep.summary.set_index(["run_id", "metric"])
    for r in runs:
        v = r.per_user["ndcg_at_10"].to_numpy()
        assert s.loc[(r.run_id, "ndcg_at_10"), "mean"] == pytest.approx(np.nanmean(v), rel=1e-12)
    assert s.loc[("c", "ndcg_at_10"), ["n", "n_nan", "n_missing"]].tolist() == [285, 5, 10]
    cov = rep.coverage.set_index("run_id")
    assert cov.loc["c", "users_missing"] == 10 and cov.loc["c", "nan_ndcg_at_10"] == 5
    c = rep.comparisons.set_index(["run_id", "metric"])
    row = c.loc[("c", "ndcg_at_10")]
    x = runs[2].per_user.set_index("user_id")["ndcg_at_10"].reindex(range(300)).to_numpy()
    y = runs[0].per_user["ndcg_at_10"].to_numpy()
    assert row["n_pairs"] == 285
    assert row["mean_diff"] == pytest.approx(np.nanmean(x - y), rel=1e-12)
    assert row["p_t"] == pytest.approx(st.paired_t_test(x, y)[1], rel=1e-12)
    assert row["p_wilcoxon"] == pytest.approx(st.wilcoxon_test(x, y)[1], rel=1e-12)
    assert row["p_randomization"] == st.randomization_test(x, y, 200, 5)
    assert row["cohens_dz"] == pytest.approx(st.cohens_dz(x, y))
    # Holm over each metric's two comparisons (the default family).
    for m in ("ndcg_at_10", "p_at_10"):
        part = rep.comparisons[rep.comparisons["metric"] == m]
        assert len(part) == 2
        np.testing.assert_allclose(
            part["p_t_adj"], st.adjust_pvalues(part["p_t"].to_numpy(), "holm")
        )
    # b is far better on ndcg, equal on p: the marks say so.
    assert c.loc[("b", "ndcg_at_10"), "mark"] == "▲***"
    assert c.loc[("b", "p_at_10"), "mark"] == ""


def test_same_seed_same_report():
    one = build_report(_runs(), n_bootstrap=50, n_permutations=50, seed=2)
    two = build_report(_runs(), n_bootstrap=50, n_permutations=50, seed=2)
    assert one.summary.equals(two.summary) and one.comparisons.equals(two.comparisons)


def test_baseline_selection():
    runs = _runs()
    runs[1].tags = {"role": "reference"}
    assert build_report(runs, "best:ndcg_at_10", n_permutations=10, n_bootstrap=0).baseline == "b"
    assert build_report(runs, "worst:ndcg_at_10", n_permutations=10, n_bootstrap=0).baseline == "a"
    assert (
        build_report(runs, "tag:role=reference", n_permutations=10, n_bootstrap=0).baseline == "b"
    )
    rep = build_report(runs, "c", n_permutations=10, n_bootstrap=0)
    assert rep.baseline == "c" and rep.runs[0].run_id == "c"
    with pytest.raises(InputError, match="'baseline' parameter of build_report"):
        build_report(runs, "nope")
    with pytest.raises(InputError, match="'metrics' parameter of build_report"):
        build_report(runs, metrics=["roc_auc"])


def test_slice_tables_compare_against_the_reports_baseline():
    """Every slice table tests the other runs against the report's baseline (``a`` here), never
    a run against itself."""
    rep = build_report(
        _runs(),
        baseline="a",
        slices=[{"kind": "activity", "q": 2}],
        n_bootstrap=20,
        n_permutations=20,
    )
    assert len(rep.slices) == 2
    for table in rep.slices:
        assert sorted(set(table.comparisons["run_id"])) == ["b", "c"]


def test_slices_partition_the_users():
    runs = _runs()
    rep = build_report(
        runs,
        slices=[{"kind": "activity", "q": 4}, {"kind": "cold_warm", "threshold": 10}],
        n_bootstrap=20,
        n_permutations=20,
    )
    activity = [t for t in rep.slices if t.slice == "activity"]
    cold = [t for t in rep.slices if t.slice == "cold_warm"]
    assert sum(t.n_users for t in activity) == 300 and len(activity) == 4
    # n_train = (i % 40) + 1: 9 users below 10 in each of the 7 full cycles of 40, and 9 more
    # among the last 20 users.
    assert [t.n_users for t in cold] == [7 * 9 + 9, 300 - 72]
    warm = cold[1]
    ids = runs[0].per_user["user_id"][runs[0].per_user["n_train"] >= 10]
    mean = runs[0].per_user.set_index("user_id").loc[ids, "ndcg_at_10"].mean()
    got = warm.summary.set_index(["run_id", "metric"]).loc[("a", "ndcg_at_10"), "mean"]
    assert got == pytest.approx(mean, rel=1e-12)
    with pytest.raises(InputError, match="slices"):
        build_report(runs, slices=[{"kind": "popularity"}])


def test_pages_hold_tables_figures_and_inputs(tmp_path):
    runs = _runs()
    for i, r in enumerate(runs):
        r.params = {"model.factors": str(8 * (i + 1))}
    rep = build_report(runs, n_bootstrap=20, n_permutations=20, config={"seed": 0})
    assert rep.swept_params == ["model.factors"]
    paths = write_report(rep, tmp_path / "r.html", tmp_path / "r.md")
    page = paths["html"].read_text()
    assert page.count("data:image/png;base64,") == len(list(paths["figures"].iterdir()))
    assert {p.name for p in paths["figures"].iterdir()} == {
        "per_user_ndcg_at_10.png",
        "per_user_p_at_10.png",
        "sweep_model.factors.png",
    }
    start = page.index("base64,") + 7
    png = base64.b64decode(page[start : page.index("'", start)])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    for r in runs:
        assert r.run_id in page
    assert "s1" in page and "<script" not in page
    md = paths["markdown"].read_text()
    assert "![sweep_model.factors.png](r_figures/sweep_model.factors.png)" in md
    assert "| run | mean | 95% t CI |" in md
    # the summary, the effect sizes, one table per metric, the win/tie/loss table of each
    # (headline) metric, the users per run, the inputs
    assert render_html(rep, {}).count("<table") == 2 * len(rep.metrics) + 4
