"""Power and sample size of the paired t-test: what a comparison could detect, and how many
users (or datasets) a difference needs.

A non-significant difference says little without the smallest difference the comparison could
have detected. From the standard deviation ``s`` of the paired differences, ``n`` pairs and the
per-comparison ``alpha`` left after the multiple-comparison correction, the two-sided paired
t-test rejects with probability

.. math:: \\pi(\\delta) = P(|T'_{n-1}(\\lambda)| > t_{1-\\alpha/2,\\,n-1}),
          \\quad \\lambda = \\delta \\sqrt{n} / s

(``T'`` the noncentral t). :func:`minimum_detectable_difference` solves ``π(δ) = power`` for
``δ`` (default power 0.8); :func:`sample_size` gives the smallest ``n`` with ``π(δ) >= power``
for a difference ``δ`` the user names: Sakai's topic set size design for the paired t-test
(Sakai 2016, "Topic set size design", Information Retrieval Journal 19), with users (or
datasets) in place of topics. :func:`corrected_alpha` is the per-comparison alpha of a
correction at its strictest step (``alpha / m`` for Holm, Bonferroni and Benjamini-Hochberg's
first step), so the detectable difference is the one the corrected comparison could find.
"""

from __future__ import annotations

import math

from .._validation import check_float, check_int, check_unit_open, param_error

__all__ = [
    "power_paired",
    "minimum_detectable_difference",
    "sample_size",
    "corrected_alpha",
    "detectable_text",
    "detectable_difference",
    "POWER_BASIS",
    "WILCOXON_ARE",
]


def corrected_alpha(alpha: float, m: int, correction: str = "holm") -> float:
    """Per-comparison alpha of a family of ``m`` comparisons at the correction's strictest step:
    ``alpha / m`` for ``"holm"``, ``"bonferroni"`` and ``"bh"``; ``alpha`` for ``"none"``."""
    func = "corrected_alpha"
    a = check_unit_open(alpha, "alpha", func)
    m = check_int(m, "m", func, minimum=1)
    if correction not in ("holm", "bonferroni", "bh", "none"):
        raise param_error(
            "correction", func, "one of ['holm', 'bonferroni', 'bh', 'none']", correction
        )
    return a if correction == "none" else a / m


def power_paired(delta: float, sd: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` pairs whose differences have standard
    deviation ``sd`` against a true mean difference ``delta`` (formula in the module text)."""
    from scipy import stats

    func = "power_paired"
    delta = check_float(delta, "delta", func)
    sd = check_float(sd, "sd", func, minimum=0.0, strict=True)
    n = check_int(n, "n", func, minimum=2)
    a = check_unit_open(alpha, "alpha", func)
    df = n - 1
    crit = float(stats.t.ppf(1.0 - a / 2.0, df))
    ncp = abs(delta) * math.sqrt(n) / sd
    upper = float(stats.nct.sf(crit, df, ncp))
    lower = float(stats.nct.cdf(-crit, df, ncp))
    # far in the tails scipy's noncentral t can return NaN: the limits are 1 and 0 there
    if not math.isfinite(upper):
        upper = 1.0 if ncp > crit else 0.0
    if not math.isfinite(lower):
        lower = 0.0
    return min(1.0, upper + lower)


def minimum_detectable_difference(
    sd: float, n: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest absolute mean difference the two-sided paired t-test with ``n`` pairs (spread
    ``sd`` of the differences) detects with probability ``power`` at level ``alpha``.

    NaN when ``sd`` is NaN or ``n < 2``; 0 when ``sd`` is 0.

    Examples
    --------
    The normal approximation gives ``(1.960 + 0.842) 0.1 / sqrt(100) = 0.0280``; the t
    distribution's heavier tails need a little more:

    >>> round(minimum_detectable_difference(sd=0.1, n=100), 4)
    0.0283
    """
    from scipy import optimize

    func = "minimum_detectable_difference"
    pw = check_unit_open(power, "power", func)
    a = check_unit_open(alpha, "alpha", func)
    if not isinstance(n, int) or n < 2 or sd is None or not math.isfinite(float(sd)):
        return math.nan
    sd = float(sd)
    if sd == 0:
        return 0.0
    if pw <= a:
        return 0.0
    hi = 2.0 * sd / math.sqrt(n)
    while power_paired(hi, sd, n, a) < pw:
        hi *= 2.0
    return float(
        optimize.brentq(
            lambda x: power_paired(x, sd, n, a) - pw, 0.0, hi, xtol=1e-12 * sd, rtol=1e-12
        )
    )


def sample_size(
    delta: float, sd: float, alpha: float = 0.05, power: float = 0.8, max_n: int = 10_000_000
) -> int:
    """Smallest number of pairs (users, or datasets) for which the two-sided paired t-test
    detects a mean difference ``delta`` with probability ``power`` at level ``alpha``, when the
    paired differences have standard deviation ``sd`` (Sakai 2016's topic set size design).

    Examples
    --------
    >>> sample_size(delta=0.01, sd=0.1)  # about ((1.96 + 0.84) * 0.1 / 0.01) ** 2 + 2
    787
    """
    func = "sample_size"
    delta = check_float(delta, "delta", func)
    if delta == 0:
        raise param_error("delta", func, "a non-zero difference", delta)
    sd = check_float(sd, "sd", func, minimum=0.0, strict=True)
    pw = check_unit_open(power, "power", func)
    a = check_unit_open(alpha, "alpha", func)
    if power_paired(delta, sd, max_n, a) < pw:
        raise param_error(
            "delta", func, f"a difference detectable with at most {max_n} pairs", delta
        )
    lo, hi = 1, 2  # power(lo) < pw <= power(hi), lo = 1 standing for "no test"
    while power_paired(delta, sd, hi, a) < pw:
        lo, hi = hi, min(hi * 2, max_n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 2 and power_paired(delta, sd, mid, a) >= pw:
            hi = mid
        else:
            lo = mid
    return hi


def detectable_text(mde: float, observed: float, precision: int = 3) -> str:
    """``"could detect 0.011; observed 0.004"``: the minimum detectable difference beside the
    observed absolute difference (empty when the detectable difference is NaN; "too few pairs
    to detect any difference" when it is infinite, :func:`detectable_difference`)."""
    if mde is None or math.isnan(mde):
        return ""
    if math.isinf(mde):
        return f"too few pairs to detect any difference; observed {abs(observed):.{precision}f}"
    return f"could detect {mde:.{precision}f}; observed {abs(observed):.{precision}f}"


#: Pitman's asymptotic relative efficiency of the Wilcoxon signed-rank test to the paired
#: t-test when the differences are normal (3/pi, about 0.955; Lehmann 1975, "Nonparametrics",
#: ch. 4): with ``n`` pairs it has about the t's power with ``n * 3/pi`` pairs, so its
#: detectable difference is the t's times ``sqrt(pi/3)``.
WILCOXON_ARE = 3.0 / math.pi

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


def detectable_difference(
    sd: float,
    n: int,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = "t",
    n_nonzero: int | None = None,
) -> float:
    """The smallest mean difference ``test`` (``"t"``, ``"wilcoxon"``, ``"randomization"``)
    detects with probability ``power`` at level ``alpha`` over ``n`` pairs whose differences
    have spread ``sd`` (:data:`POWER_BASIS` says how for each test). ``inf`` when the test's
    smallest p-value over ``n_nonzero`` pairs with a sign (default ``n``) is not below
    ``alpha``: no difference can be detected there."""
    if test not in POWER_BASIS:
        raise param_error("test", "detectable_difference", f"one of {list(POWER_BASIS)}", test)
    mde = minimum_detectable_difference(sd, n, alpha, power)
    if test == "t" or not math.isfinite(mde):
        return mde
    from .multisystem import min_attainable_p

    floor = min_attainable_p(int(n if n_nonzero is None else n_nonzero), test)
    if math.isfinite(floor) and floor >= alpha:
        return math.inf
    return mde * math.sqrt(1.0 / WILCOXON_ARE) if test == "wilcoxon" else mde
