"""rt.compare: Results, job folders and RunData in; the summary, win/tie/loss, Tukey, LaTeX,
pages and plots out; replicates (seeds, folds) with small n; several datasets."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from _report_process import assert_latex_compiles
from _rundata import dataset_runs, evaluate_model
from report_runs import synthetic_run
from scipy import stats

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking import stats as st
from recoeval_tracking.reporting.render.latex import structure_problems
from recoeval_tracking.reporting.report import build_report


@pytest.fixture(scope="module")
def two_results():
    data = rt.make_synthetic(n_users=150, n_items=80, seed=0)
    split = rt.make_split("random", data, test_fraction=0.3, seed=0)
    return {
        name: evaluate_model(split, name, metrics=["ndcg", "p"], k=5, cumulative=True)
        for name in ("random", "popularity")
    }


def test_compare_two_results_summary_is_the_reports_numbers(two_results):
    cmp = rt.compare(two_results, baseline="random", test="wilcoxon", n_bootstrap=100)
    assert cmp.systems == ["random", "popularity"] and cmp.baseline == "random"
    s = cmp.summary().set_index(["system", "metric"])
    x = two_results["popularity"].per_user["ndcg_at_5"].to_numpy()
    y = two_results["random"].per_user["ndcg_at_5"].to_numpy()
    row = s.loc[("popularity", "ndcg_at_5")]
    assert row["mean"] == pytest.approx(np.nanmean(x), rel=1e-12)
    _, lo, hi, n = st.t_interval(x)
    assert (row["ci_low"], row["ci_high"], row["n"]) == (pytest.approx(lo), pytest.approx(hi), n)
    assert row["delta"] == pytest.approx(np.nanmean(x - y), rel=1e-12)
    d = (x - y)[~np.isnan(x - y)]
    assert row["p"] == pytest.approx(stats.wilcoxon(d[d != 0]).pvalue, rel=1e-9)
    assert row["p_adj"] == row["p"]  # one comparison per metric: Holm changes nothing
    keep = ~(np.isnan(x) | np.isnan(y))
    assert (row["wins"], row["ties"], row["losses"]) == (
        (x[keep] > y[keep]).sum(),
        (x[keep] == y[keep]).sum(),
        (x[keep] < y[keep]).sum(),
    )
    assert row["mark"] == "▲***"
    # the same number as the page's report
    rep = build_report([cmp.report.runs[0], cmp.report.runs[1]], test="wilcoxon", n_bootstrap=100)
    assert (
        rep.comparisons["p_wilcoxon_adj"].tolist()
        == cmp.report.comparisons["p_wilcoxon_adj"].tolist()
    )
    assert "popularity" in str(cmp) and "▲***" in str(cmp)


def test_win_tie_loss_every_pair_and_tukey(two_results):
    three = {**two_results, "random again": two_results["random"]}
    cmp = rt.compare(three, n_bootstrap=0, n_permutations=100)
    wtl = cmp.win_tie_loss("p_at_5")
    assert len(wtl) == 3
    same = wtl[(wtl["system"] == "random") & (wtl["other"] == "random again")].iloc[0]
    assert same["wins"] == same["losses"] == 0 and same["ties"] == same["n"]
    tk = cmp.tukey("ndcg_at_5")
    assert len(tk) == 3 and tk.set_index(["a", "b"]).loc[("random", "random again"), "p"] == 1


def test_inputs_job_folders_and_errors(two_results, tmp_path):
    from recoeval_tracking.jobdir import write_job_dir

    folders = {
        name: write_job_dir(res, tmp_path / name, plots=False) for name, res in two_results.items()
    }
    from_dirs = rt.compare(
        {n: str(p) for n, p in folders.items()}, n_bootstrap=0, n_permutations=100
    )
    from_res = rt.compare(two_results, n_bootstrap=0, n_permutations=100)
    a, b = from_dirs.summary(), from_res.summary()
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=1e-12)
    np.testing.assert_allclose(a["p_adj"].fillna(-1), b["p_adj"].fillna(-1), rtol=1e-12)
    with pytest.raises(InputError, match="runs"):
        rt.compare(42)
    with pytest.raises(InputError, match="The 'test' parameter of compare must be one of"):
        rt.compare(two_results, test="welch")
    with pytest.raises(InputError, match="The 'correction' parameter of compare"):
        rt.compare(two_results, correction="sidak")
    with pytest.raises(InputError, match="runs"):
        rt.compare({"a": 3.5})
    with pytest.raises(InputError, match="does not apply"):
        from_res.friedman("ndcg_at_5")


def test_plot_gives_curves_with_bands(two_results):
    fig = rt.compare(two_results, n_bootstrap=0, n_permutations=10).plot("ndcg_at_5")
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and len(ax.collections) == 2  # a line and a band per system
    assert ax.lines[0].get_xdata().tolist() == [1, 2, 3, 4, 5]


def test_latex_booktabs_bold_underline_marks_and_caption(two_results, tmp_path):
    runs = {**two_results, "pop_2 & co": two_results["popularity"]}
    cmp = rt.compare(
        runs,
        baseline="random",
        correction="bonferroni",
        alpha=0.01,
        n_bootstrap=0,
        n_permutations=100,
    )
    tex = cmp.to_latex(
        ["ndcg_at_5", "p_at_5"],
        precision=3,
        intervals=True,
        underline_second=True,
        caption="Synthetic data.",
        label="tab:x",
    )
    assert structure_problems(tex) == []
    lines = [ln.strip() for ln in tex.splitlines()]
    header = next(ln for ln in lines if ln.startswith("System &"))
    assert header == r"System & NDCG@5 & P@5 \\"
    rows = [ln for ln in lines if ln.endswith(r"\\") and not ln.startswith("System")]
    assert len(rows) == 3  # one row per system
    assert rows[0].startswith(r"random (baseline) & \underline{")  # second best, underlined
    assert r"pop\_2 \& co & \textbf{" in rows[2]  # escaped name, tied best in bold
    assert r"$^{\blacktriangle}$" in rows[1] and r"{\scriptsize[" in rows[1]
    mean = np.nanmean(two_results["popularity"].per_user["ndcg_at_5"])
    assert f"{mean:.3f}" in rows[1]
    assert "Bonferroni correction" in tex and r"\alpha = 0.01" in tex
    assert "Wilcoxon" not in tex and "paired t-test" in tex
    assert r"\label{tab:x}" in tex and "Synthetic data." in tex
    if shutil.which("pdflatex"):
        assert_latex_compiles(tex, tmp_path)
    wtl = cmp.to_latex(["p_at_5"], win_tie_loss=True)
    assert structure_problems(wtl) == [] and r"System & P@5 & W/T/L \\" in wtl
    s = cmp.summary().set_index(["system", "metric"]).loc[("popularity", "p_at_5")]
    assert f"& {s['wins']}/{s['ties']}/{s['losses']} \\\\" in wtl
    assert "random (baseline) & " in wtl and "& -- \\\\" in wtl


def test_structure_check_finds_broken_tables():
    good = (
        "\\begin{table}\\begin{tabular}{lr}\n\\toprule\nA & B \\\\\n\\midrule\n"
        "x & 1 \\\\\n\\bottomrule\n\\end{tabular}\\end{table}"
    )
    assert structure_problems(good) == []
    assert structure_problems(good.replace("x & 1", "x & 1 & 2"))
    assert structure_problems(good.replace("\\midrule\n", ""))
    assert structure_problems(good.replace("\\end{table}", ""))
    assert structure_problems(good.replace("{lr}", "{lr"))


def _replicate_runs(values: dict[str, list[float]], key: str = "seed"):
    """Runs of a sweep over ``key`` (3 values): each value its own split fingerprint."""
    runs = []
    for model, means in values.items():
        for rep, mu in enumerate(means):
            r = synthetic_run(
                f"{model}-{rep}",
                {"ndcg_at_10": mu},
                n_users=200,
                seed=rep,
                fingerprints={"data": "d", "split": f"s{rep}", "definitions": "f"},
                params={"model.name": model, key: rep, "model.weighted": None},
            )
            r.curves = pd.DataFrame(
                {
                    "k": [1, 2],
                    "ndcg_at_k": [mu / 2 + rep / 100, mu],
                    "ndcg_at_k_ci95_low": [0, 0],
                    "ndcg_at_k_ci95_high": [1, 1],
                }
            )
            r.metrics = {"coverage_at_10": 0.1 * (rep + 1)}
            runs.append(r)
    return runs


@pytest.mark.parametrize("key", ["seed", "split.fold"])
def test_seeds_and_folds_are_replicates_and_three_are_too_few_for_stars(key):
    runs = _replicate_runs({"als": [0.40, 0.41, 0.42], "pop": [0.30, 0.31, 0.30]}, key)
    with pytest.raises(InputError, match=f"replicate_key={key}"):
        build_report(runs, n_bootstrap=0)  # the refusal names the fix
    cmp = rt.compare(runs, baseline="pop", n_bootstrap=0)  # detected, no setting needed
    rep = cmp.report
    assert rep.settings["replicate_key"] == key
    assert [r.name for r in rep.runs] == ["pop", "als"]  # named by what differs, not None
    c = rep.comparisons.iloc[0]
    assert c["n_pairs"] == 3 and c["small_n"]
    # the t-test alone would mark it (p small over 3 seeds), Wilcoxon could not go below 0.25
    assert c["p_t_adj"] < 0.05 and c["p_wilcoxon"] == pytest.approx(0.25)
    assert c["mark"] == "▲†"
    md = cmp.to_markdown()
    assert "2 groups (6 runs) compared" in md
    assert "only 3 pairs, too few" in md and "0.25" in md
    assert "Catalogue-level metrics" in md  # coverage averaged over the replicates
    als = rep.run(rep.runs[1].run_id)
    assert als.metrics["coverage_at_10"] == pytest.approx(0.2)
    # curves: the mean over replicates with a t interval over them
    ks = als.curves.set_index("k")
    assert ks.loc[1, "ndcg_at_k"] == pytest.approx(np.mean([0.20, 0.215, 0.23]))
    _, lo, hi, _ = st.t_interval([0.20, 0.215, 0.23])
    assert (ks.loc[1, "ndcg_at_k_ci95_low"], ks.loc[1, "ndcg_at_k_ci95_high"]) == (
        pytest.approx(lo),
        pytest.approx(hi),
    )
    assert r"$^{\blacktriangle\dagger}$" in cmp.to_latex()


def _dataset_runs():
    """Three systems over four datasets, each dataset its own data fingerprint."""

    def means(base: float, d: int, j: int) -> dict[str, float]:
        mu = base + 0.05 * j * (1 if d % 3 else -0.3)
        return {"ndcg_at_10": mu, "p_at_10": mu / 2}

    return dataset_runs(4, seed=7, n_users=80, means=means)


def test_several_datasets_ranks_friedman_and_cd_diagram(tmp_path):
    runs = _dataset_runs()
    cmp = rt.compare(runs, baseline="pop", n_bootstrap=0, n_permutations=100)
    assert cmp.multi_dataset and cmp.dataset_key == "dataset.name"
    assert cmp.datasets == ["data0", "data1", "data2", "data3"]
    assert cmp.systems == ["pop", "als", "knn"]
    table = cmp.dataset_table("ndcg_at_10")
    for d, ds in enumerate(cmp.datasets):
        for model in cmp.systems:
            run = next(r for r in runs if r.run_id == f"{model}@{d}")
            assert table.loc[model, ds] == pytest.approx(run.per_user["ndcg_at_10"].mean())
    means = table.drop(columns="mean rank")
    ranks = pd.DataFrame(stats.rankdata(-means.T.to_numpy(), axis=1), columns=means.index)
    np.testing.assert_allclose(table["mean rank"], ranks.mean(axis=0).to_numpy())
    f = cmp.friedman("ndcg_at_10")
    ref = stats.friedmanchisquare(*means.to_numpy())
    assert f.statistic == pytest.approx(ref.statistic) and f.pvalue == pytest.approx(ref.pvalue)
    assert cmp.critical_difference("ndcg_at_10") == pytest.approx(
        2.343 * np.sqrt(3 * 4 / (6 * 4)), abs=1e-3
    )
    holm = cmp.posthoc("ndcg_at_10", "holm")
    assert set(holm.index) == {"als", "knn"}
    fig = cmp.cd_diagram("ndcg_at_10", posthoc="nemenyi")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.startswith("CD = ") for t in texts)
    assert sum(t.startswith(("pop (", "als (", "knn (")) for t in texts) == 3
    summary = cmp.summary()
    assert summary["dataset"].nunique() == 4
    tex = cmp.to_latex()
    assert structure_problems(tex) == [] and tex.count(r"\begin{table}") == 2
    assert "Friedman" in tex and "Mean rank" in tex
    assert r"\label{tab:comparison-ndcg-at-10}" in tex and "NDCG@10 per dataset." in tex
    if shutil.which("pdflatex"):
        assert_latex_compiles(tex, tmp_path)
    md = cmp.to_markdown()
    assert "Friedman test of ndcg_at_10 over 4 datasets and 3 systems" in md
    assert "Dataset data2" in md
    html = cmp.to_html()
    assert html.count("data:image/png;base64,") >= 1 + 4  # CD diagrams and per-dataset figures


def test_nested_mapping_names_the_datasets(two_results):
    cmp = rt.compare({"a": two_results, "b": two_results}, n_bootstrap=0, n_permutations=50)
    assert cmp.datasets == ["a", "b"] and cmp.systems == ["random", "popularity"]
    assert (cmp.dataset_table("p_at_5")["mean rank"].to_numpy() == [2.0, 1.0]).all()


def test_datasets_with_seeds_inside_each():
    runs = []
    for d in range(3):
        for r in _replicate_runs({"als": [0.40 + d / 50, 0.41, 0.42], "pop": [0.30, 0.31, 0.3]}):
            r.fingerprints = {**r.fingerprints, "data": f"d{d}"}
            r.params = {**r.params, "dataset.name": f"ds{d}"}
            r.run_id = f"{r.run_id}@{d}"
            runs.append(r)
    cmp = rt.compare(runs, baseline="pop", n_bootstrap=0)
    assert cmp.datasets == ["ds0", "ds1", "ds2"] and cmp.systems == ["pop", "als"]
    assert all(rep.settings["replicate_key"] == "seed" for rep in cmp.reports.values())
    assert (cmp.dataset_table("ndcg_at_10")["mean rank"] == [2.0, 1.0]).all()


def test_a_baseline_that_picks_different_systems_per_dataset_is_refused():
    runs = _dataset_runs()
    with pytest.raises(InputError, match="baseline.*the same in every dataset"):
        rt.compare(runs, baseline="best:ndcg_at_10", n_bootstrap=0, n_permutations=10)


def test_results_of_two_kinds_of_model_are_compared_metric_by_metric():
    """Two models whose scores come from different sources (factors, item biases) define every
    metric the same way: both are compared, their means are their own Results' means, and
    wins + ties + losses count the users defined in both."""
    import recoeval_tracking as rt

    X = rt.make_synthetic(n_users=120, n_items=60, n_interactions=2000, seed=0)
    split = rt.make_split("random", X, test_fraction=0.2, seed=1)
    als = rt.make_model("als", factors=4, iterations=3, seed=1).fit(split.train.matrix)
    pop = rt.make_model("popularity").fit(split.train.matrix)
    res = {
        name: rt.evaluate(
            split.train, split.test, scores=m.score_source(), k=5, metrics=["ndcg", "r"]
        )
        for name, m in (("popularity", pop), ("als", als))
    }
    table = rt.compare(res, baseline="popularity", test="wilcoxon").summary()
    rows = table.set_index(["system", "metric"])
    for name, r in res.items():
        for metric in ("ndcg_at_5", "r_at_5"):
            assert rows.loc[(name, metric), "mean"] == pytest.approx(r.means[metric])
    als_ndcg = rows.loc[("als", "ndcg_at_5")]
    both = (
        res["als"].per_user["ndcg_at_5"].notna() & res["popularity"].per_user["ndcg_at_5"].notna()
    ).sum()
    assert als_ndcg["wins"] + als_ndcg["ties"] + als_ndcg["losses"] == both
    assert 0 <= als_ndcg["p"] <= 1
