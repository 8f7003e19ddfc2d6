"""The paired tests, intervals, corrections and resampling of recoeval_tracking.stats against
scipy.stats, hand computation and slow references."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy import stats as sps

from recoeval_tracking import InputError
from recoeval_tracking import stats as st


def _pair(n, seed, shift=0.05, decimals=None):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a - shift + 0.2 * rng.standard_normal(n), 0, 1)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
    return a, b


@pytest.mark.parametrize("n,seed", [(5, 0), (30, 1), (500, 2)])
def test_paired_t_matches_scipy(n, seed):
    a, b = _pair(n, seed)
    ref = sps.ttest_rel(a, b)
    t, p = st.paired_t_test(a, b)
    assert t == pytest.approx(float(ref.statistic), rel=1e-12)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-10)


def test_paired_t_hand_computed():
    # d = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / sqrt 3) = 2 sqrt 3; p = 2 P(T_2 >= 3.4641)
    t, p = st.paired_t_test([2, 4, 6], [1, 2, 3])
    assert t == pytest.approx(2 * math.sqrt(3))
    assert p == pytest.approx(2 * sps.t.sf(2 * math.sqrt(3), 2))


@pytest.mark.parametrize(
    "n,seed,decimals", [(12, 0, None), (40, 1, 1), (80, 2, None), (3000, 3, 2), (20000, 4, 1)]
)
def test_wilcoxon_matches_scipy(n, seed, decimals):
    # Exact distribution (n <= 50) and the normal approximation with tie correction
    # (rounded values make ties and zero differences).
    a, b = _pair(n, seed, decimals=decimals)
    ref = sps.wilcoxon(a - b, zero_method="wilcox")
    w, p = st.wilcoxon_test(a, b)
    assert w == pytest.approx(float(ref.statistic), rel=1e-12)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-8, abs=1e-300)


def test_nan_pairs_are_left_out_of_tests():
    a, b = _pair(60, 5)
    a2, b2 = a.copy(), b.copy()
    a2[[3, 7]] = np.nan
    b2[11] = np.nan
    keep = np.ones(60, bool)
    keep[[3, 7, 11]] = False
    assert st.paired_t_test(a2, b2) == pytest.approx(st.paired_t_test(a[keep], b[keep]))
    assert st.wilcoxon_test(a2, b2) == pytest.approx(st.wilcoxon_test(a[keep], b[keep]))
    assert st.cohens_dz(a2, b2) == pytest.approx(st.cohens_dz(a[keep], b[keep]))


def test_t_interval_hand_computed():
    # mean 2, s = 1, n = 3: half-width t_{0.975,2} / sqrt(3), where the Student quantile with
    # 2 degrees of freedom has the closed form (2p - 1) / sqrt(2 p (1 - p)).
    mean, lo, hi, n = st.t_interval([1.0, 2.0, np.nan, 3.0])
    q = 0.975
    half = (2 * q - 1) / math.sqrt(2 * q * (1 - q)) / math.sqrt(3)
    assert (mean, n) == (2.0, 3)
    assert lo == pytest.approx(2 - half, rel=1e-12) and hi == pytest.approx(2 + half, rel=1e-12)


def test_cohens_dz_hand_computed():
    # d = (1, 2, 3, 6): mean 3, sd sqrt(((4 + 1 + 0 + 9) / 3)) = sqrt(14/3)
    assert st.cohens_dz([2, 4, 6, 12], [1, 2, 3, 6]) == pytest.approx(3 / math.sqrt(14 / 3))


def _slow_bootstrap(values, n_resamples, seed, confidence):
    v = np.asarray(values, float)
    n = v.size
    means = []
    for b in range(n_resamples):
        idx = np.random.default_rng([seed, n, b]).integers(0, n, n)
        s = v[idx]
        s = s[~np.isnan(s)]
        means.append(s.mean() if s.size else np.nan)
    means = np.array(means)
    alpha = 1 - confidence
    return np.nanquantile(means, alpha / 2), np.nanquantile(means, 1 - alpha / 2)


def test_bootstrap_equals_slow_reference_and_is_reproducible():
    rng = np.random.default_rng(7)
    v = rng.random(257)
    v[[4, 100]] = np.nan
    lo, hi = st.bootstrap_ci(v, 300, seed=11)
    ref_lo, ref_hi = _slow_bootstrap(v, 300, 11, 0.95)
    # float32 products: relative error of a mean below 1e-6
    assert lo == pytest.approx(ref_lo, rel=1e-5) and hi == pytest.approx(ref_hi, rel=1e-5)
    assert st.bootstrap_ci(v, 300, seed=11) == (lo, hi)
    assert st.bootstrap_ci(v, 300, seed=12) != (lo, hi)
    # The interval brackets the mean and has about the t interval's width.
    mean, tlo, thi, _ = st.t_interval(v)
    assert lo < mean < hi
    assert (hi - lo) == pytest.approx(thi - tlo, rel=0.2)


def test_bootstrap_columns_do_not_depend_on_each_other():
    rng = np.random.default_rng(3)
    X = rng.random((200, 3))
    X[rng.random((200, 3)) < 0.1] = np.nan
    together = st.bootstrap_means(X, 50, seed=4)
    for j in range(3):
        alone = st.bootstrap_means(X[:, [j]], 50, seed=4)[:, 0]
        # Same draws; the float32 products may be blocked differently (rounding only).
        np.testing.assert_allclose(together[:, j], alone, rtol=1e-6)


def _slow_randomization(d, n_permutations, seed):
    d = np.where(np.isnan(d), 0.0, d).astype(np.float32).astype(np.float64)
    n = d.size
    obs = abs(d.sum())
    count = 0
    n_bytes = (n + 7) // 8
    for r in range(n_permutations):
        # Replicate r: row r % 1024 of the stream of block r // 1024 (1024 rows of n_bytes).
        block = np.random.default_rng([seed, n, r // 1024]).bytes(1024 * n_bytes)
        row = block[(r % 1024) * n_bytes : (r % 1024 + 1) * n_bytes]
        s = 1 - 2 * np.unpackbits(np.frombuffer(row, np.uint8))[:n].astype(float)
        count += abs((s * d).sum()) >= obs - 1e-6 * np.abs(d).sum()
    return (1 + count) / (1 + n_permutations)


def test_randomization_equals_slow_reference_and_is_reproducible():
    a, b = _pair(150, 8, shift=0.01)
    p = st.randomization_test(a, b, n_permutations=2500, seed=3)  # three blocks of draws
    assert p == _slow_randomization(a - b, 2500, 3)
    assert st.randomization_test(a, b, n_permutations=2500, seed=3) == p
    # Any slice of the series is the same draws as the whole.
    np.testing.assert_array_equal(
        st.sign_flips(150, 1000, 2100, 3), st.sign_flips(150, 0, 2500, 3)[1000:2100]
    )
    assert st.randomization_test(a, b, n_permutations=500, seed=4) != p


def test_randomization_is_exact_when_every_sign_vector_fits():
    """With 2^n <= R the test enumerates all 2^n sign vectors: p = #{|s.d| >= |sum d|} / 2^n,
    counted here over itertools.product."""
    import itertools

    d = np.array([0.3, -0.1, 0.25, 0.4, 0.05, -0.2, 0.15, 0.35])
    obs = abs(d.sum())
    count = sum(
        abs(np.dot(s, d)) >= obs - 1e-9 for s in itertools.product((1.0, -1.0), repeat=d.size)
    )
    assert st.randomization_pvalues(d, 256, 0)[0] == pytest.approx(count / 256, abs=1e-12)
    assert st.randomization_pvalues(d, 5000, 7)[0] == pytest.approx(count / 256, abs=1e-12)
    # Every difference positive: only the identity and its mirror reach the sum -> 2 / 2^n.
    assert st.randomization_pvalues(np.linspace(0.1, 1.0, 10), 2000, 0)[0] == 2 / 1024


def test_auto_permutations_reach_the_strongest_mark():
    """m comparisons under Holm/Bonferroni: the smallest adjusted p is m / (R + 1), which must be
    below 0.001 (the *** mark) up to the cap."""
    for m in (1, 3, 10, 48):
        R = st.auto_permutations(m)
        assert 1000 <= R <= 100_000
        assert m / (R + 1) < 0.001
    assert st.auto_permutations(10_000) == 100_000


def test_randomization_extremes():
    # Every difference positive: only the identity flip (probability 2^-40) reaches the sum.
    d = np.linspace(0.1, 1.0, 40)
    assert st.randomization_pvalues(d, 999, 0)[0] == pytest.approx(1 / 1000)
    # No difference at all: p = 1. Symmetric differences: a large p.
    assert st.randomization_pvalues(np.zeros(10), 99, 0)[0] == 1.0
    assert st.randomization_pvalues(np.array([1.0, -1.0] * 20), 999, 0)[0] == 1.0


def test_randomization_agrees_with_t_test_on_large_samples():
    a, b = _pair(2000, 9, shift=0.01)
    p_perm = st.randomization_test(a, b, n_permutations=4000, seed=0)
    p_t = st.paired_t_test(a, b)[1]
    assert p_perm == pytest.approx(p_t, abs=0.03)


def test_corrections_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005=0.02, 3*0.01=0.03, 2*0.03=0.06, 1*0.04
    # -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(st.adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(st.adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # BH: m p / rank = 0.02, 0.02, 0.04, 0.04 (ranks 1..4) -> running min from the top
    np.testing.assert_allclose(st.adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(st.adjust_pvalues(p, "none"), p)
    # NaN stays NaN and is not counted in m; values are capped at 1.
    out = st.adjust_pvalues([0.2, np.nan, 0.6], "bonferroni")
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.4) and out[2] == 1.0


def test_errors_name_the_argument():
    with pytest.raises(InputError, match="'method' parameter of adjust_pvalues"):
        st.adjust_pvalues([0.1], "sidak")
    with pytest.raises(InputError, match="'b' parameter of paired_t_test"):
        st.paired_t_test([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="'n_permutations'"):
        st.randomization_pvalues(np.ones(3), 0)
    with pytest.raises(InputError, match="'confidence'"):
        st.t_interval([1.0, 2.0], confidence=95)


def test_wilcoxon_docstring_gives_the_zero_case_with_scipys_numbers():
    finder = doctest.DocTestFinder()
    (test,) = [t for t in finder.find(st.wilcoxon_test, "wilcoxon_test") if t.examples]
    result = doctest.DocTestRunner().run(test)
    assert result.attempted >= 2 and result.failed == 0
    assert "zero" in st.wilcoxon_test.__doc__ and "better number" in st.wilcoxon_test.__doc__
    # the claim itself: with zeros, scipy's default is not the exact p on the non-zero ones
    d = np.array([0.0] * 16 + [0.1, 0.2, 0.3, 0.4])
    assert st.wilcoxon_test(d, np.zeros(20))[1] == sps.wilcoxon(d[d != 0]).pvalue == 0.125
    assert sps.wilcoxon(d).pvalue < 0.1


def test_smallest_p_of_the_distribution_free_tests_is_reached():
    for n in (3, 4, 6):
        d = np.arange(1.0, n + 1)  # every difference positive: the most extreme outcome
        assert st.min_attainable_p(n, "wilcoxon") == pytest.approx(
            sps.wilcoxon(d).pvalue, rel=1e-12
        )
        assert st.min_attainable_p(n, "randomization") == pytest.approx(
            st.randomization_pvalues(d, 1000, 0)[0], rel=1e-12
        )
        assert st.min_attainable_p(n, "wilcoxon") == pytest.approx(st.wilcoxon_test(d, 0 * d)[1])
    assert st.min_attainable_p(3, "wilcoxon") == 0.25
    # randomisation with R random vectors cannot go below 1/(R+1)
    assert st.min_attainable_p(40, "randomization", 999) == pytest.approx(1e-3)
    # thousands of users: no overflow, and never too few
    assert st.min_attainable_p(5000, "randomization", 2000) == pytest.approx(1 / 2001)
    assert st.min_attainable_p(5000, "wilcoxon") == 0.0
    assert not st.too_few_pairs(5000, 3, "holm", 0.05, 2000)
    # three seeds: no distribution-free test reaches 0.05, even uncorrected
    assert st.too_few_pairs(3, 1, "none", 0.05)
    assert not st.too_few_pairs(20, 5, "holm", 0.05)


@pytest.mark.parametrize(
    "d,expected",
    [
        # |d| = (1, 1, 2): mid-ranks (1.5, 1.5, 3), all positive, W+ = 6, W- = 0. The 8 sign
        # assignments give W+ in {0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6}: P(W+ >= 6) = 1/8, p = 2/8
        ([1.0, 1.0, 2.0], (0.0, 0.25)),
        # mid-ranks (1.5, 1.5, 3.5, 3.5), W+ = 8.5, W- = 1.5; of the 16 assignments, 3 reach
        # W+ >= 8.5 (those leaving out nothing or one 1.5): p = 2 * 3/16
        ([1.0, -1.0, 2.0, 2.0], (1.5, 0.375)),
    ],
)
def test_wilcoxon_with_ties_on_few_pairs_is_the_exact_permutation_p(d, expected, monkeypatch):
    """Ties among at most 13 non-zero differences: the p-value of all 2^n sign assignments,
    worked out by hand above, enumerated without scipy's generic permutation test (which
    re-ranked each assignment: 30 s of a small sweep's report)."""
    monkeypatch.setattr(sps, "permutation_test", None)  # a call would fail
    d = np.array(d)
    assert st.wilcoxon_test(d, np.zeros_like(d)) == expected


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_with_ties_on_few_pairs_equals_scipys_p(seed):
    """Equal, bit for bit, to scipy's own permutation route (ties, n <= 13, zeros dropped),
    including n = 13 and differences tied only to the last bit."""
    rng = np.random.default_rng(seed)
    n = (4, 7, 9, 10, 13, 11)[seed]
    d = rng.integers(-3, 4, size=n) * 0.5
    d[0] = d[1] = 1.0  # a tie at least
    d[-1] = 0.0  # a zero, dropped by both
    if seed == 5:
        d[2] = d[3] = 0.1 + 0.2  # 0.30000000000000004
        d[4] = 0.3
    ref = sps.wilcoxon(d[d != 0], zero_method="wilcox")
    assert st.wilcoxon_test(d, np.zeros(n)) == (float(ref.statistic), float(ref.pvalue))
