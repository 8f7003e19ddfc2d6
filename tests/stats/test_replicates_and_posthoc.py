"""Fold replicates (Nadeau-Bengio, the correlated t-test), pairwise post-hoc tests over datasets,
the sign test and the BCa bootstrap, each against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recoeval_tracking import InputError
from recoeval_tracking.stats import (
    bootstrap_ci,
    corrected_resampled_t,
    correlated_t_verdict,
    pairwise_cliques,
    pairwise_tests,
    ratio_test_train,
    sign_test,
)

A = [0.312, 0.335, 0.301, 0.344, 0.322, 0.318, 0.329, 0.307, 0.338, 0.315]
B = [0.301, 0.318, 0.300, 0.327, 0.305, 0.309, 0.320, 0.301, 0.322, 0.311]


def test_nadeau_bengio_by_hand():
    d = np.subtract(A, B)
    J = d.size  # 2 repetitions of 5-fold: n_test / n_train = 1/4
    se = math.sqrt((1 / J + 1 / 4) * d.var(ddof=1))
    t = d.mean() / se
    r = corrected_resampled_t(A, B, n_folds=5, confidence=0.9)
    assert r.t == pytest.approx(t, rel=1e-12)
    assert r.p == pytest.approx(2 * stats.t.sf(abs(t), J - 1), rel=1e-10)
    half = stats.t.ppf(0.95, J - 1) * se
    assert (r.low, r.high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-12)
    # the correction makes the plain paired t's p smaller than the corrected one
    assert stats.ttest_rel(A, B).pvalue < r.p
    r2 = corrected_resampled_t(A, B, test_fraction=0.2)
    assert r2.t == pytest.approx(t, rel=1e-12)  # 0.2 / 0.8 = 1/4 as for 5 folds


def test_the_test_train_ratio_needs_exactly_one_design():
    assert ratio_test_train(n_folds=10) == pytest.approx(1 / 9)
    with pytest.raises(InputError, match="'n_folds'"):
        ratio_test_train()
    with pytest.raises(InputError, match="'n_folds'"):
        ratio_test_train(n_folds=5, test_fraction=0.2)


@pytest.mark.parametrize("rope", [0.0, 0.005, 0.02])
def test_correlated_t_matches_baycomp(rope):
    baycomp = pytest.importorskip("baycomp")
    mine = correlated_t_verdict(A, B, rope, n_folds=5)
    ref = baycomp.CorrelatedTTest.probs(np.array(B), np.array(A), rope, runs=2)
    if rope > 0:
        assert mine[:3] == pytest.approx(ref, abs=1e-10)
    else:
        assert (mine[0], mine[2]) == pytest.approx(ref, abs=1e-10)


@pytest.fixture
def datasets_table():
    rng = np.random.default_rng(4)
    base = rng.uniform(0.1, 0.4, 14)
    cols = {
        "pop": base,
        "knn": base + rng.normal(0.02, 0.01, 14),
        "als": base + rng.normal(0.025, 0.01, 14),
        "rand": base - rng.uniform(0.05, 0.1, 14),
    }
    return pd.DataFrame(cols, index=[f"ds{i}" for i in range(14)])


def test_pairwise_wilcoxon_holm_matches_scikit_posthocs(datasets_table):
    sp = pytest.importorskip("scikit_posthocs")
    long = datasets_table.melt(var_name="system", value_name="score", ignore_index=False)
    ref = sp.posthoc_wilcoxon(
        long, val_col="score", group_col="system", p_adjust="holm", sort=False
    )
    mine = pairwise_tests(datasets_table.to_numpy(), test="wilcoxon", correction="holm")
    names = list(datasets_table.columns)
    ref = ref.loc[names, names]
    np.testing.assert_allclose(mine, ref.to_numpy(), rtol=1e-10)


def test_pairwise_sign_test_is_binomial_with_holm(datasets_table):
    t = datasets_table
    mine = pd.DataFrame(pairwise_tests(t.to_numpy(), test="sign"), t.columns, t.columns)
    raw = {}
    for i, x in enumerate(t.columns):
        for y in t.columns[i + 1 :]:
            d = (t[x] - t[y]).to_numpy()
            raw[(x, y)] = stats.binomtest(int((d > 0).sum()), int((d != 0).sum())).pvalue
    order = sorted(raw, key=raw.get)
    m, running = len(order), 0.0
    for i, key in enumerate(order):  # Holm by hand
        running = max(running, min(1.0, (m - i) * raw[key]))
        assert mine.loc[key[0], key[1]] == pytest.approx(running, rel=1e-12)


def test_cliques_join_runs_without_a_significant_pair(datasets_table):
    P = pairwise_tests(datasets_table.to_numpy())
    ranks = (-datasets_table).rank(axis=1).mean().to_numpy()
    names = list(datasets_table.columns)
    cliques = [[names[i] for i in c] for c in pairwise_cliques(ranks, P)]
    assert ["knn", "als"] in cliques or ["als", "knn"] in cliques
    assert not any("rand" in c and "als" in c for c in cliques)


def test_sign_test_against_binomtest():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, 40).astype(float), rng.integers(0, 4, 40).astype(float)
    pos, neg, p = sign_test(a, b)
    d = a - b
    assert (pos, neg) == (int((d > 0).sum()), int((d < 0).sum()))
    assert p == pytest.approx(stats.binomtest(pos, pos + neg, 0.5).pvalue, rel=1e-12)
    assert sign_test([1.0, 2.0], [1.0, 2.0]) == (0, 0, 1.0)


def test_bca_agrees_with_scipy_and_differs_from_percentile():
    rng = np.random.default_rng(0)
    x = rng.exponential(1.0, 60) ** 2  # skewed: BCa moves the interval right
    refs = np.array(
        [
            stats.bootstrap(
                (x,), np.mean, n_resamples=20000, method="BCa", random_state=s
            ).confidence_interval
            for s in range(3)
        ]
    )
    ref = refs.mean(axis=0)
    width = ref[1] - ref[0]
    bca = bootstrap_ci(x, 20000, seed=0, method="bca")
    pct = bootstrap_ci(x, 20000, seed=0)
    assert bca == pytest.approx(tuple(ref), abs=0.04 * width)
    assert abs(pct[1] - ref[1]) > 0.08 * width  # the percentile interval is visibly different
    with pytest.raises(InputError, match="'method'"):
        bootstrap_ci(x, method="bc")


def _exact_bca(tenths, n_resamples, seed, confidence=0.95):
    """BCa of the mean of ``tenths / 10`` on the draws of ``bootstrap_counts``, with every
    replicate compared to the observed mean in integers (``z_0`` exactly as defined)."""
    from scipy import special

    from recoeval_tracking.stats import bootstrap_counts

    u = np.asarray(tenths, dtype=np.int64)
    n = u.size
    sums = bootstrap_counts(n, n_resamples, seed).astype(np.int64) @ u  # n * replicate mean
    total = int(u.sum())  # n * observed mean
    z0 = special.ndtri((np.sum(sums < total) + np.sum(sums <= total)) / (2.0 * n_resamples))
    jack = (total - u) / (n - 1) / 10.0
    dev = jack.mean() - jack
    acc = np.sum(dev**3) / (6.0 * np.sum(dev**2) ** 1.5)
    zq = special.ndtri(np.array([(1 - confidence) / 2, (1 + confidence) / 2]))
    q = special.ndtr(z0 + (z0 + zq) / (1 - acc * (z0 + zq)))
    return tuple(np.quantile(sums / (10.0 * n), q))


@pytest.mark.parametrize(
    "tenths",
    [[1, 2, 0, 1, 0], list(np.random.default_rng(3).integers(-3, 4, 30))],
    ids=["5 users", "30 users"],
)
def test_bca_on_a_lattice_metric_counts_replicates_equal_to_the_mean_as_equal(tenths):
    # P@10 differences: many replicate means equal the observed one exactly; in float32 they
    # fell on either side of it and moved z_0 (5 users: [0.00, 0.12] instead of [0.02, 0.16])
    values = np.asarray(tenths) / 10.0
    for seed in (0, 1):
        low, high = bootstrap_ci(values, 2000, seed=seed, method="bca")
        assert (low, high) == pytest.approx(_exact_bca(tenths, 2000, seed), abs=1e-12)
    if len(tenths) == 5:
        assert bootstrap_ci(values, 2000, seed=0, method="bca") == pytest.approx((0.02, 0.16))
