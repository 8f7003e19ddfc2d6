"""The documented defaults and counts of recoeval_tracking.stats, and their error messages:
the lines a value-by-value check with explicit arguments (test_paired_and_intervals.py) leaves
unchecked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from recoeval_tracking import InputError
from recoeval_tracking import stats as st


def _slow_bootstrap(values, n_resamples, seed, confidence):
    """The documented bootstrap: replicate b draws n indices with default_rng([seed, n, b]);
    the percentile bounds of the replicate means of the defined values."""
    v = np.asarray(values, float)
    n = v.size
    means = []
    for b in range(n_resamples):
        s = v[np.random.default_rng([seed, n, b]).integers(0, n, n)]
        s = s[~np.isnan(s)]
        means.append(s.mean() if s.size else np.nan)
    alpha = 1 - confidence
    return np.nanquantile(means, alpha / 2), np.nanquantile(means, 1 - alpha / 2)


def _values():
    v = np.random.default_rng(21).random(40)
    v[[2, 9, 30]] = np.nan
    return v


def test_mean_ci_defaults_and_nan_count():
    """confidence 0.95, 1000 resamples, seed 0; n counts the defined values, n_nan the others."""
    v = _values()
    r = st.mean_ci(v)
    lo, hi = _slow_bootstrap(v, 1000, 0, 0.95)
    assert r.boot_low == pytest.approx(lo, rel=1e-5) and r.boot_high == pytest.approx(hi, rel=1e-5)
    assert (r.n, r.n_nan) == (37, 3)
    assert r.mean == pytest.approx(np.nanmean(v))
    assert (r.t_low, r.t_high) == st.t_interval(v, 0.95)[1:3]


def test_bootstrap_ci_defaults():
    v = _values()
    lo, hi = _slow_bootstrap(v, 1000, 0, 0.95)
    got = st.bootstrap_ci(v)
    assert got[0] == pytest.approx(lo, rel=1e-5) and got[1] == pytest.approx(hi, rel=1e-5)


def test_paired_comparison_defaults():
    """The difference's bootstrap interval with 1000 resamples and seed 0, the randomisation
    test with 1000 permutations and seed 0: the same as those functions with these arguments."""
    rng = np.random.default_rng(5)
    a = rng.random(30)
    b = np.clip(a - 0.1 + 0.2 * rng.standard_normal(30), 0, 1)
    r = st.paired_comparison(a, b)
    assert r.mean_diff == pytest.approx(np.mean(a - b), rel=1e-12)
    lo, hi = _slow_bootstrap(a - b, 1000, 0, 0.95)
    assert r.boot_low == pytest.approx(lo, rel=1e-5) and r.boot_high == pytest.approx(hi, rel=1e-5)
    assert r.p_randomization == st.randomization_test(a, b, 1000, 0)
    assert r.n_pairs == 30


def test_randomization_test_defaults():
    rng = np.random.default_rng(6)
    a, b = rng.random(25), rng.random(25)
    assert st.randomization_test(a, b) == st.randomization_test(a, b, 1000, 0)
    assert st.randomization_test(a, b) != st.randomization_test(a, b, 1000, 1)


def test_infinite_values_are_refused_by_name():
    with pytest.raises(InputError) as err:
        st.t_interval([1.0, math.inf])
    assert str(err.value) == (
        "The 'values' parameter of t_interval must be finite numbers or "
        "NaN (undefined). Got an array holding infinite values instead."
    )
    with pytest.raises(InputError, match="'values' parameter of t_interval must be a 1-d"):
        st.t_interval([[1.0, 2.0]])


def test_two_values_are_enough():
    """The t interval and Cohen's d_z need two defined values, not three."""
    # mean 2, s = sqrt 2, n = 2: half-width t_{0.975,1} s / sqrt 2 with the Cauchy quantile
    # t_{q,1} = tan(pi (q - 1/2))
    mean, lo, hi, n = st.t_interval([1.0, 3.0])
    half = math.tan(math.pi * 0.475)
    assert (mean, n) == (2.0, 2)
    assert lo == pytest.approx(2 - half, rel=1e-12) and hi == pytest.approx(2 + half, rel=1e-12)
    # d = (1, 3): mean 2, sd sqrt 2
    assert st.cohens_dz([2.0, 5.0], [1.0, 2.0]) == pytest.approx(math.sqrt(2), rel=1e-12)
    assert math.isnan(st.cohens_dz([2.0], [1.0]))
    assert math.isnan(st.t_interval([4.0])[1])
