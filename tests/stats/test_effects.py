"""Effect sizes of recoeval_tracking.stats (difference, relative difference, d_z) against scipy
and their definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from recoeval_tracking import InputError
from recoeval_tracking.stats import effect_size, relative_difference


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
