"""What the report says of power: the detectable difference beside an observed one, and in
words how each test's detectable difference is computed.

The power and sample-size statistics themselves (:func:`~recoeval_tracking.stats.power_paired`,
``minimum_detectable_difference``, ``sample_size``, ``detectable_difference``,
``corrected_alpha``) are plain functions in :mod:`recoeval_tracking.stats`; the names that moved
there still read from here, with a :class:`DeprecationWarning`, for one release.
"""

from __future__ import annotations

import math

from ._moved import moved_names

__all__ = ["detectable_text", "POWER_BASIS"]


__getattr__ = moved_names(__name__)


def detectable_text(mde: float, observed: float, precision: int = 3) -> str:
    """``"could detect 0.011; observed 0.004"``: the minimum detectable difference beside the
    observed absolute difference (empty when the detectable difference is NaN; "too few pairs
    to detect any difference" when it is infinite,
    :func:`~recoeval_tracking.stats.detectable_difference`)."""
    if mde is None or math.isnan(mde):
        return ""
    if math.isinf(mde):
        return f"too few pairs to detect any difference; observed {abs(observed):.{precision}f}"
    return f"could detect {mde:.{precision}f}; observed {abs(observed):.{precision}f}"


#: What the detectable difference of each test is computed from, in words (the page says it).
POWER_BASIS = {
    "t": "the paired t-test's power (noncentral t)",
    "wilcoxon": (
        "the Wilcoxon signed-rank test's power as the t's at its asymptotic relative efficiency "
        "3/π (normal differences; no exact formula), and none when its smallest p-value with "
        "the pairs there cannot pass the corrected alpha"
    ),
    "randomization": (
        "the t's power, which the sign-flip randomisation test of the mean matches "
        "asymptotically (no exact formula), and none when its smallest p-value with the pairs "
        "there cannot pass the corrected alpha"
    ),
}
