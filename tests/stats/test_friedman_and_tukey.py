"""Statistics over several systems on arrays (recoeval_tracking.stats: the Friedman family,
Tukey's HSD, win/tie/loss), each against scipy or a published worked example:
Demšar (2006, JMLR 7, "Statistical comparisons of classifiers over multiple data sets"),
section 3.2.2 and its Tables 5 and 6; scipy's friedmanchisquare and tukey_hsd."""

from __future__ import annotations

import math

import numpy as np
import pytest
from demsar import DEMSAR_TABLE6
from scipy import stats

from recoeval_tracking import stats as st


def test_demsar_worked_example_ranks_friedman_and_iman_davenport():
    # Published: average ranks 3.143, 2.000, 2.893, 1.964; chi2_F = 9.28; F_F = 3.69.
    res = st.friedman_test(DEMSAR_TABLE6.to_numpy(), tie_correction=False)
    np.testing.assert_allclose(res.mean_ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    assert res.statistic == pytest.approx(9.28, abs=0.005)
    assert res.iman_davenport == pytest.approx(3.69, abs=0.005)
    # "the critical value of F(3, 39) for alpha = 0.05 is 2.85, so we reject the null hypothesis"
    assert stats.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.005)
    assert res.pvalue_iman_davenport < 0.05


def test_friedman_matches_scipy_with_and_without_ties():
    rng = np.random.default_rng(3)
    for table in (rng.random((9, 5)), DEMSAR_TABLE6.to_numpy(), np.round(rng.random((7, 4)), 1)):
        res = st.friedman_test(table)
        ref = stats.friedmanchisquare(*table.T)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_nemenyi_q_values_of_demsar_table_5a():
    published = {
        2: 1.960,
        3: 2.343,
        4: 2.569,
        5: 2.728,
        6: 2.850,
        7: 2.949,
        8: 3.031,
        9: 3.102,
        10: 3.164,
    }
    for k, q in published.items():
        assert st.nemenyi_q(k, 0.05) == pytest.approx(q, abs=1e-3)  # printed to 3 decimals
    published_10 = {2: 1.645, 3: 2.052, 4: 2.291, 5: 2.459, 10: 2.920}
    for k, q in published_10.items():
        assert st.nemenyi_q(k, 0.10) == pytest.approx(q, abs=1e-3)  # printed to 3 decimals


def test_critical_difference_of_the_worked_example():
    # "CD = 2.569 sqrt(4*5/(6*14)) = 1.25" and at alpha = 0.10, 2.291 ... = 1.12
    assert st.critical_difference(4, 14, 0.05) == pytest.approx(1.25, abs=0.005)
    assert st.critical_difference(4, 14, 0.10) == pytest.approx(1.12, abs=0.005)
    ranks = st.friedman_test(DEMSAR_TABLE6.to_numpy()).mean_ranks
    # Demšar: at 0.05 only C4.5+m+cf vs C4.5 differs? 3.143 - 1.964 = 1.179 < 1.25: none.
    p = st.nemenyi_pvalues(ranks, 14)
    assert (p[~np.eye(4, dtype=bool)] > 0.05).all()
    # At 0.10 (CD 1.12) C4.5+m+cf and C4.5 differ: p between 0.05 and 0.10.
    c45, c45m, c45cf, c45mcf = range(4)  # the columns of Table 6
    assert 0.05 < p[c45, c45mcf] < 0.10
    cliques = st.cd_cliques(ranks, 1.12)
    assert [c45mcf, c45m, c45cf] in cliques
    assert not any({c45, c45mcf} <= set(c) for c in cliques)


def test_holm_against_a_control_matches_the_worked_example():
    # Demšar 3.2.2, C4.5+m+cf as control: z = 2.416, 1.904, 0.074; p = 0.016, 0.057, 0.941;
    # Holm rejects only C4.5 (0.016 < 0.05/3), then stops (0.057 > 0.05/2).
    res = st.posthoc_vs_control([3.143, 2.000, 2.893, 1.964], 14, control=3)
    assert res.others.tolist() == [0, 1, 2]  # C4.5, C4.5+m, C4.5+cf
    np.testing.assert_allclose(res.z[[0, 2, 1]], [2.416, 1.904, 0.074], atol=2e-3)
    np.testing.assert_allclose(res.p[[0, 2, 1]], [0.016, 0.057, 0.941], atol=1e-3)
    assert (res.p_adj[[0, 2, 1]] < 0.05).tolist() == [True, False, False]


def test_tukey_independent_is_scipys():
    rng = np.random.default_rng(0)
    X = rng.normal([0.3, 0.35, 0.5], 0.1, (40, 3))
    X[3, 1] = np.nan
    res = st.tukey_hsd(X, paired=False)
    ref = stats.tukey_hsd(X[:, 0], X[~np.isnan(X[:, 1]), 1], X[:, 2])
    ci = ref.confidence_interval(0.95)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert res.p[i, j] == pytest.approx(ref.pvalue[i, j], rel=1e-9)
        assert res.diff[i, j] == pytest.approx(ref.statistic[i, j], rel=1e-12)
        assert (res.low[i, j], res.high[i, j]) == pytest.approx((ci.low[i, j], ci.high[i, j]))


def test_tukey_paired_against_a_two_way_anova_fitted_by_least_squares():
    rng = np.random.default_rng(1)
    n, k = 30, 4
    user = rng.normal(0, 0.2, (n, 1))
    X = user + np.array([0.3, 0.32, 0.4, 0.3]) + rng.normal(0, 0.05, (n, k))
    res = st.tukey_hsd(X)
    # Independent reference: the additive model y = mu + user + system fitted with lstsq on
    # dummy columns; its residual mean square on (n-1)(k-1) degrees of freedom.
    y = X.ravel()
    rows = np.repeat(np.arange(n), k)
    cols = np.tile(np.arange(k), n)
    D = np.column_stack(
        [np.ones(n * k)]
        + [(rows == i).astype(float) for i in range(1, n)]
        + [(cols == j).astype(float) for j in range(1, k)]
    )
    beta, *_ = np.linalg.lstsq(D, y, rcond=None)
    df = (n - 1) * (k - 1)
    mse = float(((y - D @ beta) ** 2).sum()) / df
    means = X.mean(axis=0)
    for i in range(k):
        for j in range(i + 1, k):
            q = abs(means[i] - means[j]) / math.sqrt(mse / n)
            assert res.p[i, j] == pytest.approx(stats.studentized_range.sf(q, k, df), rel=1e-6)
    # a differs from c (0.1 apart, noise 0.05/sqrt(30)); a and d do not
    a, b, c, d = range(4)
    assert res.p[a, c] < 0.001 and res.p[a, d] > 0.05
    # the user effect is removed: unpaired, the same data shows far less
    assert st.tukey_hsd(X, paired=False).p[a, b] > res.p[a, b]


def test_win_tie_loss_counts_users():
    a = np.array([0.5, 0.2, 0.1, np.nan, 0.7, 0.7])
    b = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.9])
    assert st.win_tie_loss(a, b) == (2, 1, 2)
    assert st.win_tie_loss(a, b, lower_is_better=True) == (2, 1, 2)[::-1]


def test_identical_rankings_leave_iman_davenport_undefined():
    res = st.friedman_test([[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]])
    ref = stats.friedmanchisquare([0.1, 0.2], [0.2, 0.3], [0.3, 0.4])
    assert res.statistic == pytest.approx(ref.statistic) == 4.0
    assert np.isnan(res.iman_davenport) and np.isnan(res.pvalue_iman_davenport)


def test_nemenyi_p_at_the_critical_difference_is_alpha():
    # By definition the pair whose mean ranks differ by exactly CD has p = alpha.
    for k, n, alpha in ((4, 14, 0.05), (5, 10, 0.10), (3, 8, 0.05)):
        cd = st.critical_difference(k, n, alpha)
        ranks = [1.0, 1.0 + cd] + [2.0] * (k - 2)
        assert st.nemenyi_pvalues(ranks, n)[0, 1] == pytest.approx(alpha, rel=1e-6)
