"""A rope given to ``rt.compare`` (or the report's ``rope=``) puts each system's three-way verdict
on the page and in the printed summary; the critical-difference diagram's post-hoc defaults to
pairwise Wilcoxon signed-rank tests with Holm (Benavoli, Corani & Mangili 2016), Nemenyi on
request, and the diagram and the page say which."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from _rundata import dataset_runs
from report_runs import synthetic_run
from scipy import stats

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.stats import bayesian_signed_rank


def _runs():
    return [
        synthetic_run("base", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, n_users=120, seed=0),
        synthetic_run("big", {"ndcg_at_10": 0.40, "p_at_10": 0.3}, n_users=120, seed=1),
        synthetic_run("same", {"ndcg_at_10": 0.30, "p_at_10": 0.2}, n_users=120, seed=2),
    ]


@pytest.fixture(scope="module")
def with_rope():
    return rt.compare(_runs(), baseline="base", n_bootstrap=0, n_permutations=100, rope="5%")


def test_a_rope_puts_the_verdicts_on_the_page_and_in_the_summary(with_rope):
    c = with_rope
    v = c.values("ndcg_at_10")
    width = 0.05 * v["base"].mean()  # "5%" of the baseline's mean
    # over users the default is the Bayesian paired t: the mean difference's posterior is
    # Student's t (n - 1 dof, location mean(z), scale sd(z) / sqrt(n))
    z = (v["same"] - v["base"]).to_numpy()
    post = stats.t(z.size - 1, z.mean(), z.std(ddof=1) / np.sqrt(z.size))
    p_better, p_worse = post.sf(width), post.cdf(-width)
    ref = SimpleNamespace(
        p_better=p_better,
        p_worse=p_worse,
        p_equivalent=1 - p_better - p_worse,
        verdict="equivalent" if 1 - p_better - p_worse >= 0.95 else "undecided",
    )
    assert max(p_better, p_worse) < 0.95  # so "undecided" or "equivalent" is the verdict
    out = c.verdicts()  # the comparison's rope by default
    row = out[(out.system == "same") & (out.metric == "ndcg_at_10")].iloc[0]
    assert row["rope"] == pytest.approx(width)
    np.testing.assert_allclose(
        [row.p_better, row.p_equivalent, row.p_worse],
        [ref.p_better, ref.p_equivalent, ref.p_worse],
        rtol=1e-12,
        atol=1e-15,
    )
    signed = c.verdicts(test="signed-rank")
    srow = signed[(signed.system == "same") & (signed.metric == "ndcg_at_10")].iloc[0]
    sref = bayesian_signed_rank(v["same"], v["base"], width)
    assert (srow.p_better, srow.p_equivalent, srow.p_worse) == (
        sref.p_better,
        sref.p_equivalent,
        sref.p_worse,
    )
    md = c.to_markdown()
    assert "Verdicts against base for the rope 5%" in md
    page_row = next(
        line for line in md.splitlines() if line.startswith("| same | ndcg\\_at\\_10 |")
    )
    cells = [x.strip() for x in page_row.strip("|").split("|")]
    assert cells[2] == f"{width:.4f}"
    assert cells[3:7] == [
        f"{ref.p_better:.3f}",
        f"{ref.p_equivalent:.3f}",
        f"{ref.p_worse:.3f}",
        ref.verdict,
    ]
    big = next(line for line in md.splitlines() if line.startswith("| big | ndcg\\_at\\_10 |"))
    assert "| better |" in big  # +0.1 on a mean of 0.3, far outside a rope of 0.015
    # the verdicts come after the effect sizes and before the summary table
    # the summary table first, then the effect sizes and the verdicts
    assert md.index("Summary:") < md.index("Effect sizes against") < md.index("Verdicts against")
    printed = str(c)
    assert "verdicts for the rope 5%" in printed
    tail = printed.split("verdicts for the rope 5%")[1]  # after the summary table
    line = next(x for x in tail.splitlines() if x.split()[:2] == ["same", "ndcg_at_10"])
    assert line.split()[-2] == ref.verdict
    assert f"{ref.p_better:.3f}" in line and f"{ref.p_worse:.3f}" in line


def test_a_rope_per_metric_and_none_by_default():
    plain = rt.compare(_runs(), baseline="base", n_bootstrap=0, n_permutations=100)
    assert "Verdicts against" not in plain.to_markdown()
    assert "verdicts for the rope" not in str(plain)
    with pytest.raises(InputError, match="'rope'"):
        plain.verdicts()
    per = rt.compare(
        _runs(), baseline="base", n_bootstrap=0, n_permutations=100, rope={"ndcg_at_10": 0.02}
    )
    out = per.verdicts()
    assert out.loc[out.metric == "ndcg_at_10", "rope"].tolist() == [0.02, 0.02]
    assert out.loc[out.metric == "p_at_10", "rope"].tolist() == [0.0, 0.0]  # a metric it lacks


@pytest.mark.parametrize("rope", ["abc", -0.1, "-5%", {"ndcg_at_10": "x"}, {}])
def test_a_bad_rope_is_refused_by_name(rope):
    with pytest.raises(InputError, match="'rope' parameter of compare"):
        rt.compare(_runs(), baseline="base", n_bootstrap=0, n_permutations=100, rope=rope)


def test_a_bad_posthoc_is_refused_by_name():
    with pytest.raises(InputError, match="'posthoc' parameter of compare"):
        rt.compare(_runs(), baseline="base", n_bootstrap=0, n_permutations=100, posthoc="tukey")


def _dataset_runs():
    return dataset_runs(
        8, seed=3, n_users=200, means=lambda base, d, j: {"ndcg_at_10": base + 0.08 * j}
    )


def _holm(p):
    """Holm's step-down adjustment, by hand."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    out = np.empty_like(p)
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, (p.size - step) * p[i])
        out[i] = min(1.0, running)
    return out


def _bars(fig):
    return [ln for ln in fig.axes[0].lines if ln.get_linewidth() == 3]


def test_the_diagram_defaults_to_pairwise_wilcoxon_with_holm():
    scipy_stats = pytest.importorskip("scipy.stats")
    c = rt.compare(_dataset_runs(), baseline="pop", n_bootstrap=0, n_permutations=100)
    table = c.dataset_table("ndcg_at_10").drop(columns="mean rank").T
    names = list(table.columns)
    pairs = list(itertools.combinations(names, 2))
    raw = [scipy_stats.wilcoxon(table[a], table[b]).pvalue for a, b in pairs]
    adj = _holm(raw)
    P = c.pairwise_posthoc("ndcg_at_10")
    for (a, b), p in zip(pairs, adj):
        assert P.loc[a, b] == pytest.approx(p, rel=1e-9)
    # eight datasets, knn > als > pop on each: exact p = 2/256 per pair, 3 x that after Holm
    assert all(p == pytest.approx(3 * 2 / 256) for p in adj)
    fig = c.cd_diagram("ndcg_at_10")
    assert "post-hoc: pairwise Wilcoxon tests, Holm" in fig._suptitle.get_text()
    assert not any(t.get_text().startswith("CD = ") for t in fig.axes[0].texts)
    assert _bars(fig) == []  # every pair differs: no bar
    # Nemenyi, asked for: CD = 2.343 sqrt(3 * 4 / (6 * 8)) = 1.17 > 1, neighbours joined
    nem = c.cd_diagram("ndcg_at_10", posthoc="nemenyi")
    assert "post-hoc: Nemenyi" in nem._suptitle.get_text()
    assert any(t.get_text() == "CD = 1.17" for t in nem.axes[0].texts)
    assert len(_bars(nem)) == 2
    md = c.to_markdown()
    assert "pairwise Wilcoxon signed-rank tests with Holm over the datasets" in md
    assert "pairwise Wilcoxon signed-rank tests with Holm p-values (the diagram's bars)" in md
    assert "Nemenyi critical difference at α" not in md


def test_nemenyi_and_sign_on_request_for_the_diagram_and_the_page():
    c = rt.compare(
        _dataset_runs(), baseline="pop", n_bootstrap=0, n_permutations=100, posthoc="nemenyi"
    )
    assert "post-hoc: Nemenyi" in c.cd_diagram("ndcg_at_10")._suptitle.get_text()
    md = c.to_markdown()
    assert "Nemenyi critical difference at α = 0.05: CD = 1.17" in md
    s = rt.compare(
        _dataset_runs(), baseline="pop", n_bootstrap=0, n_permutations=100, posthoc="sign"
    )
    assert "pairwise sign tests, Holm" in s.cd_diagram("ndcg_at_10")._suptitle.get_text()


def test_over_users_a_hit_difference_of_many_ropes_is_better_not_equivalent():
    """Hit@10 is 0 or 1 per user, so most paired differences are exactly 0. The signed-rank
    test judges pairs of users (their Walsh averages), nearly all inside a small rope, and
    calls a +0.15 difference "equivalent" for a rope of 0.01; the verdict over users speaks of
    the mean difference (the Bayesian paired t), as the effect sizes and the TOST do."""
    import pandas as pd

    from recoeval_tracking.reporting.runs import RunData

    rng = np.random.default_rng(3)
    base = (rng.uniform(size=900) < 0.6).astype(float)
    other = base.copy()
    flip = rng.choice(np.flatnonzero(base == 0), size=160, replace=False)
    other[flip] = 1.0  # 160 more hits, 25 lost: +0.15 on a mean of 0.6
    other[rng.choice(np.flatnonzero(base == 1), size=25, replace=False)] = 0.0
    ids = np.arange(base.size)
    fps = {"data": "d", "split": "s", "definitions": "f"}
    runs = [
        RunData(n, n, pd.DataFrame({"user_id": ids, "hit_at_10": v}), fingerprints=fps)
        for n, v in (("base", base), ("model", other))
    ]
    cmp = rt.compare(runs, baseline="base", n_bootstrap=0, n_permutations=100, rope=0.01)
    assert other.mean() - base.mean() == pytest.approx(0.15)
    assert cmp.verdicts().iloc[0]["verdict"] == "better"
    assert cmp.verdicts(test="signed-rank").iloc[0]["verdict"] == "equivalent"
