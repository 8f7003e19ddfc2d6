"""The power and sample size of the paired t-test against statsmodels and their definitions, and
the per-comparison alpha of a correction."""

from __future__ import annotations

import math

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.stats import (
    corrected_alpha,
    minimum_detectable_difference,
    power_paired,
    sample_size,
)


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


def test_corrected_alpha_and_the_detectable_difference_s_edges():
    assert corrected_alpha(0.05, 4, "holm") == 0.0125
    assert corrected_alpha(0.05, 4, "none") == 0.05
    with pytest.raises(InputError, match="'correction'"):
        corrected_alpha(0.05, 4, "sidak")
    assert minimum_detectable_difference(0.0, 10) == 0.0
    assert math.isnan(minimum_detectable_difference(0.1, 1))
