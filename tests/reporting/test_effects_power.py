"""Effect sizes (difference, relative difference, d_z) and the power of the paired t-test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from recoeval_tracking import InputError
from recoeval_tracking.reporting.effects import effect_size, relative_difference
from recoeval_tracking.reporting.power import (
    corrected_alpha,
    detectable_text,
    minimum_detectable_difference,
    power_paired,
    sample_size,
)


@pytest.fixture
def pair():
    rng = np.random.default_rng(3)
    b = rng.beta(2, 5, 300)
    a = np.clip(b + rng.normal(0.01, 0.08, 300), 0, 1)
    a[:5] = np.nan  # undefined users are left out of every statistic
    return a, b


def test_effect_size_matches_scipy_and_the_definitions(pair):
    a, b = pair
    e = effect_size(a, b, confidence=0.9)
    x, y = a[5:], b[5:]
    ref = stats.ttest_rel(x, y).confidence_interval(0.9)
    assert e.n == 295
    assert e.diff == pytest.approx(np.mean(x - y), rel=1e-12)
    assert (e.diff_low, e.diff_high) == pytest.approx((ref.low, ref.high), rel=1e-10)
    assert e.d_z == pytest.approx(np.mean(x - y) / np.std(x - y, ddof=1), rel=1e-12)
    assert e.rel == pytest.approx(np.mean(x) / np.mean(y) - 1, rel=1e-12)
    assert e.baseline_mean == pytest.approx(np.mean(y))


def test_relative_interval_is_the_delta_method_of_a_ratio_of_means(pair):
    a, b = pair
    x, y = a[5:], b[5:]
    n = x.size
    ma, mb = x.mean(), y.mean()
    cov = np.cov(x, y, ddof=1)
    # textbook delta method for ratio R = ma / mb: Var = (v_a/mb^2 - 2 ma c/mb^3 + ma^2 v_b/mb^4)/n
    var = (cov[0, 0] / mb**2 - 2 * ma * cov[0, 1] / mb**3 + ma**2 * cov[1, 1] / mb**4) / n
    half = stats.t.ppf(0.975, n - 1) * math.sqrt(var)
    r, lo, hi = relative_difference(a, b)
    assert (lo, hi) == pytest.approx((ma / mb - 1 - half, ma / mb - 1 + half), rel=1e-10)
    assert r == pytest.approx(ma / mb - 1)


def test_relative_difference_is_nan_for_a_zero_baseline_and_errors_name_the_argument():
    assert all(math.isnan(v) for v in relative_difference([1.0, 2.0], [0.0, 0.0]))
    with pytest.raises(InputError, match="'b'"):
        effect_size([1.0, 2.0], [1.0])
    with pytest.raises(InputError, match="'confidence'"):
        effect_size([1.0, 2.0], [1.0, 3.0], confidence=95)


def test_power_matches_statsmodels():
    power_mod = pytest.importorskip("statsmodels.stats.power")
    tp = power_mod.TTestPower()
    for sd, n, alpha in [(0.2, 943, 0.05), (0.05, 20, 0.01), (0.1, 200, 0.05 / 6)]:
        d_ref = tp.solve_power(effect_size=None, nobs=n, alpha=alpha, power=0.8)
        mde = minimum_detectable_difference(sd, n, alpha)
        assert mde == pytest.approx(d_ref * sd, rel=1e-4)  # statsmodels' solver stops early
        assert tp.power(effect_size=mde / sd, nobs=n, alpha=alpha) == pytest.approx(0.8, rel=1e-9)
        assert power_paired(0.3 * sd, sd, n, alpha) == pytest.approx(
            tp.power(effect_size=0.3, nobs=n, alpha=alpha), rel=1e-8
        )
    for delta, sd in [(0.01, 0.2), (0.05, 0.1), (-0.02, 0.15)]:
        n_ref = tp.solve_power(effect_size=abs(delta) / sd, nobs=None, alpha=0.05, power=0.8)
        assert sample_size(delta, sd) == math.ceil(n_ref)


def test_sample_size_is_the_smallest_n_reaching_the_power():
    n = sample_size(0.01, 0.1, alpha=0.01, power=0.9)
    assert power_paired(0.01, 0.1, n, 0.01) >= 0.9 > power_paired(0.01, 0.1, n - 1, 0.01)


def test_corrected_alpha_and_the_text():
    assert corrected_alpha(0.05, 4, "holm") == 0.0125
    assert corrected_alpha(0.05, 4, "none") == 0.05
    with pytest.raises(InputError, match="'correction'"):
        corrected_alpha(0.05, 4, "sidak")
    assert detectable_text(0.0112, -0.0041) == "could detect 0.011; observed 0.004"
    assert detectable_text(math.nan, 0.1) == ""
    assert minimum_detectable_difference(0.0, 10) == 0.0
    assert math.isnan(minimum_detectable_difference(0.1, 1))


@pytest.mark.parametrize(
    "module",
    [
        "recoeval_tracking.reporting.effects",
        "recoeval_tracking.reporting.equivalence",
        "recoeval_tracking.reporting.folds",
        "recoeval_tracking.reporting.posthoc",
        "recoeval_tracking.reporting.power",
    ],
)
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
