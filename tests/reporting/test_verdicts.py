"""The comparison object's effect sizes and verdicts: rt.compare exposes them, and the page
leads with the effect table."""

from __future__ import annotations

import numpy as np
import pytest
from _rundata import dataset_runs, fold_runs
from report_runs import synthetic_run

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.reporting.render.sections import md_escape
from recoeval_tracking.stats import (
    bayesian_signed_rank,
    corrected_resampled_t,
    minimum_detectable_difference,
    sample_size,
    tost_paired,
)


@pytest.fixture(scope="module")
def cmp():
    runs = [
        synthetic_run("base", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, seed=0),
        synthetic_run("big", {"ndcg_at_10": 0.40, "p_at_10": 0.3}, seed=1),
        synthetic_run("same", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, seed=2),
    ]
    return rt.compare(runs, baseline="base", n_bootstrap=0, n_permutations=100)


def test_effects_lead_with_the_difference_and_show_what_could_be_detected(cmp):
    eff = cmp.effects()
    assert set(eff["system"]) == {"big", "same"} and len(eff) == 4
    v = cmp.values("ndcg_at_10")
    d = (v["same"] - v["base"]).to_numpy()
    row = eff[(eff.system == "same") & (eff.metric == "ndcg_at_10")].iloc[0]
    assert row["diff"] == pytest.approx(d.mean())
    assert row["rel"] == pytest.approx(v["same"].mean() / v["base"].mean() - 1)
    # holm over each metric's two comparisons: the strictest step is alpha / 2
    assert row["alpha_used"] == pytest.approx(0.025)
    power = pytest.importorskip("statsmodels.stats.power")
    es = power.TTestPower().solve_power(nobs=d.size, alpha=0.025, power=0.8)
    assert row["mde"] == pytest.approx(es * d.std(ddof=1), rel=1e-4)
    for r in eff.itertuples():
        significant = r.p_adj < 0.05
        assert (r.detectable == "") == significant
        if not significant:
            assert r.detectable.startswith(f"could detect {r.mde:.3f}; observed")
    big = eff[(eff.system == "big") & (eff.metric == "ndcg_at_10")].iloc[0]
    assert big["mark"].startswith("▲") and big["detectable"] == ""


def test_verdicts_over_users_by_the_signed_rank_test_and_tost(cmp):
    """The signed-rank test over users on request (the default there is the paired t)."""
    out = cmp.verdicts({"ndcg_at_10": "50%", "p_at_10": 0.01}, test="signed-rank")
    v = cmp.values("ndcg_at_10")
    row = out[(out.system == "same") & (out.metric == "ndcg_at_10")].iloc[0]
    width = 0.5 * v["base"].mean()
    assert row["rope"] == pytest.approx(width)
    ref = bayesian_signed_rank(v["same"], v["base"], width)
    assert (row.p_worse, row.p_equivalent, row.p_better) == (
        ref.p_worse,
        ref.p_equivalent,
        ref.p_better,
    )
    assert row["p_tost"] == pytest.approx(tost_paired(v["same"], v["base"], width)[0])
    assert out.loc[out.metric == "p_at_10", "rope"].tolist() == [0.01, 0.01]
    with pytest.raises(InputError, match="'over'"):
        cmp.verdicts(0.01, over="items")
    with pytest.raises(InputError, match="'test'"):
        cmp.verdicts(0.01, test="wilcoxon")
    with pytest.raises(InputError, match="several datasets"):
        cmp.verdicts(0.01, over="datasets")


def test_lower_is_better_turns_better_around():
    runs = [
        synthetic_run("base", {"mae": 0.5}, seed=0, n_users=80),
        synthetic_run("low", {"mae": 0.3}, seed=1, n_users=80),
    ]
    c = rt.compare(
        runs, baseline="base", n_bootstrap=0, n_permutations=100, lower_is_better=["mae"]
    )
    assert c.verdicts(0.01).iloc[0]["verdict"] == "better"


def _dataset_runs():
    return dataset_runs(
        6, seed=7, n_users=60, means=lambda base, d, j: {"ndcg_at_10": base + 0.04 * j}
    )


def test_over_datasets_verdicts_posthoc_and_the_diagram_say_which_post_hoc():
    c = rt.compare(_dataset_runs(), baseline="pop", n_bootstrap=0, n_permutations=100)
    table = c.dataset_table("ndcg_at_10").drop(columns="mean rank").T
    out = c.verdicts(0.01, over="datasets")
    row = out[out.system == "knn"].iloc[0]
    ref = bayesian_signed_rank(table["knn"], table["pop"], 0.01)
    assert (row.p_better, row.verdict, row.n) == (ref.p_better, ref.verdict, 6)
    P = c.pairwise_posthoc("ndcg_at_10")
    assert P.shape == (3, 3) and np.allclose(np.diag(P), 1)
    fig = c.cd_diagram("ndcg_at_10", posthoc="wilcoxon")
    assert "post-hoc: pairwise Wilcoxon tests, Holm" in fig._suptitle.get_text()
    assert not any(t.get_text().startswith("CD = ") for t in fig.axes[0].texts)
    fig = c.cd_diagram("ndcg_at_10", posthoc="nemenyi")
    assert "post-hoc: Nemenyi" in fig._suptitle.get_text()
    with pytest.raises(InputError, match="'posthoc'"):
        c.cd_diagram("ndcg_at_10", posthoc="tukey")


def test_replicate_tests_apply_nadeau_bengio():
    runs = []
    for s in range(5):
        for j, model in enumerate(("pop", "als")):
            runs.append(
                synthetic_run(
                    f"{model}-{s}",
                    {"ndcg_at_10": 0.3 + 0.01 * j},
                    n_users=50,
                    seed=10 * s + j,
                    fingerprints={"data": "d", "split": f"fold{s}", "definitions": "f"},
                    params={"model.name": model, "fold": s},
                )
            )
    c = rt.compare(runs, baseline="pop", replicate_key="fold", n_bootstrap=0, n_permutations=100)
    out = c.replicate_tests("ndcg_at_10", n_folds=5, rope=0.005)
    v = c.values("ndcg_at_10")
    ref = corrected_resampled_t(v.iloc[:, 1], v.iloc[:, 0], n_folds=5)
    assert out.iloc[0]["t"] == pytest.approx(ref.t) and out.iloc[0]["p"] == pytest.approx(ref.p)
    assert "Nadeau-Bengio" in out.iloc[0]["correction"]
    assert "Nadeau-Bengio" in c.to_markdown()


def test_users_needed_and_the_page(cmp):
    need = cmp.users_needed("ndcg_at_10", 0.01)
    v = cmp.values("ndcg_at_10")
    sd = (v["same"] - v["base"]).std(ddof=1)
    assert need.loc[need.system == "same", "n_needed"].iloc[0] == sample_size(0.01, sd, 0.025)
    assert minimum_detectable_difference(sd, 300, 0.025) > 0
    md = cmp.to_markdown()
    # the summary table first, then the effect sizes (the first screen is the table)
    assert md.index("Summary:") < md.index("Effect sizes against **base**")
    same = cmp.effects().query("system == 'same' and metric == 'ndcg_at_10'").iloc[0]
    diff = f"{same['diff']:+.4f} [{same['diff_low']:+.4f}, {same['diff_high']:+.4f}]"
    assert f"| ndcg\\_at\\_10 | same | {md_escape(diff)} |" in md  # the effect table's row
    if same["detectable"]:
        assert same["detectable"] in md
    with pytest.raises(InputError, match="replicate"):
        cmp.replicate_tests("ndcg_at_10", n_folds=5)


def test_effects_latex_leads_with_the_difference(cmp):
    from recoeval_tracking.reporting.render.latex import structure_problems

    tex = cmp.effects_to_latex(["ndcg_at_10"], caption="Effects.")
    assert structure_problems(tex) == []
    big = cmp.effects().query("system == 'big' and metric == 'ndcg_at_10'").iloc[0]
    row = next(line for line in tex.splitlines() if "& big &" in line)
    assert row.strip().startswith("NDCG@10 & big & $" + f"{big['diff']:.3f}$ [$")
    assert r"\blacktriangle" in row and "80\\% power" in tex
    with pytest.raises(InputError, match="'metrics'"):
        cmp.effects_to_latex(["mrr"])


def test_effects_latex_with_a_rope_adds_the_verdict(cmp):
    from recoeval_tracking.reporting.render.latex import structure_problems

    tex = cmp.effects_to_latex(["ndcg_at_10"], rope=0.001)
    assert structure_problems(tex) == [] and "& Verdict" in tex
    v = cmp.verdicts(0.001).query("system == 'big' and metric == 'ndcg_at_10'").iloc[0]
    row = next(line for line in tex.splitlines() if "& big &" in line)
    assert v["verdict"] == "better"
    assert row.rstrip().endswith(f"better (${v['p_better']:.2f}$) \\\\")


def _fold_runs(deltas, n_users=30):
    """Two systems over len(deltas) folds: on fold s every user of "als" scores ``deltas[s]``
    above "pop"; each fold's test has a quarter the entries of its training set (5 folds)."""
    return fold_runs(deltas, n_users=n_users, seed=0)


def test_over_folds_the_marks_effects_and_verdicts_use_nadeau_bengio():
    from recoeval_tracking.stats import correlated_t_verdict, paired_t_test

    deltas = np.array([0.022, -0.002, 0.017, 0.007, 0.016])
    c = rt.compare(
        _fold_runs(deltas), baseline="pop", replicate_key="fold", n_bootstrap=0, rope=0.001
    )
    v = c.values("ndcg_at_10")
    x, y = v["als"].to_numpy(), v["pop"].to_numpy()
    assert x - y == pytest.approx(deltas)
    plain = paired_t_test(x, y)[1]
    ref = corrected_resampled_t(x, y, n_folds=5)  # n_test/n_train = 5/20 = 1/(5-1)
    assert plain < 0.05 < ref.p  # the plain t over folds would mark it
    row = c.report.comparisons.iloc[0]
    assert (row["p_t"], row["p_t_adj"]) == pytest.approx((ref.p, ref.p))
    assert (row["t_low"], row["t_high"]) == pytest.approx((ref.low, ref.high))
    assert "*" not in row["mark"] and "▲" not in row["mark"]  # († : 5 pairs, too few)
    eff = c.effects().iloc[0]
    assert (eff["diff_low"], eff["diff_high"]) == pytest.approx((ref.low, ref.high))
    ver = c.verdicts().iloc[0]
    pw, pe, pb, verdict = correlated_t_verdict(x, y, 0.001, n_folds=5)
    assert (ver.p_worse, ver.p_equivalent, ver.p_better) == pytest.approx((pw, pe, pb))
    assert ver.verdict == verdict == "undecided"
    assert ver.p_tost == pytest.approx(tost_paired(x, y, 0.001, test_train_ratio=0.25)[0])
    assert "Nadeau-Bengio" in c.settings["replicate_correction"]
    md = c.to_markdown()
    assert "5 fold replicates" in md  # the count of a group built in Python (was 0)
    head = next(line for line in md.splitlines() if "P(better)" in line)
    assert "replicates" in head and "users" not in head
    # the replicate tests take the design the comparison found
    out = c.replicate_tests("ndcg_at_10")
    assert out.iloc[0]["p"] == pytest.approx(ref.p)


def test_replicates_on_one_split_keep_the_plain_paired_t():
    from recoeval_tracking.stats import paired_t_test

    runs = _fold_runs([0.022, -0.002, 0.017, 0.007, 0.016])
    for r in runs:
        r.fingerprints["split"] = "one"  # only the model's seed changes
    c = rt.compare(runs, baseline="pop", replicate_key="fold", n_bootstrap=0)
    v = c.values("ndcg_at_10")
    row = c.report.comparisons.iloc[0]
    assert row["p_t"] == pytest.approx(paired_t_test(v["als"], v["pop"])[1])
    assert c.settings["replicate_ratio"] == 0.0 and "plain" in c.settings["replicate_correction"]
