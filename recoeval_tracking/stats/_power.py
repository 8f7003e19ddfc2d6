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
from ._paired import min_attainable_p

__all__ = [
    "power_paired",
    "minimum_detectable_difference",
    "sample_size",
    "detectable_difference",
    "WILCOXON_ARE",
]

#: The tests :func:`detectable_difference` knows.
_TESTS = ("t", "wilcoxon", "randomization")


def power_paired(delta: float, sd: float, n: int, alpha: float = 0.05) -> float:
    r"""Power of the two-sided paired t-test with ``n`` pairs whose differences have standard
    deviation ``sd`` against a true mean difference ``delta`` (Cohen 1988, ch. 2; Sakai 2016):

    .. math:: \pi(\delta) = P(|T'_{n-1}(\lambda)| > t_{1-\alpha/2,\,n-1}),
              \quad \lambda = \delta \sqrt{n} / s

    with ``T'`` the noncentral t.

    Examples
    --------
    No difference is rejected at the test's level; the minimum detectable difference at its
    power:

    >>> round(power_paired(0.0, sd=0.1, n=20), 6)
    0.05
    >>> round(power_paired(minimum_detectable_difference(0.1, 100), sd=0.1, n=100), 6)
    0.8
    """
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
    ``sd`` of the differences) detects with probability ``power`` at level ``alpha``: the root
    ``δ`` of ``power_paired(δ, sd, n, alpha) = power`` (Cohen 1988; Sakai 2016).

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
    paired differences have standard deviation ``sd`` (Sakai 2016's topic set size design): the
    smallest ``n`` with ``power_paired(delta, sd, n, alpha) >= power``.

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


#: Pitman's asymptotic relative efficiency of the Wilcoxon signed-rank test to the paired
#: t-test when the differences are normal (3/pi, about 0.955; Lehmann 1975, "Nonparametrics",
#: ch. 4): with ``n`` pairs it has about the t's power with ``n * 3/pi`` pairs, so its
#: detectable difference is the t's times ``sqrt(pi/3)``.
WILCOXON_ARE = 3.0 / math.pi


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
    have spread ``sd``:

    * ``"t"``: :func:`minimum_detectable_difference` (the noncentral t);
    * ``"wilcoxon"``: the t's times ``sqrt(π/3)``, the Wilcoxon signed-rank test having about
      the t's power with ``n 3/π`` pairs (its asymptotic relative efficiency for normal
      differences, :data:`WILCOXON_ARE`; Lehmann 1975); no exact formula;
    * ``"randomization"``: the t's, which the sign-flip test of the mean matches
      asymptotically (Hoeffding 1952, "The large-sample power of tests based on permutations
      of observations"); no exact formula.

    ``inf`` when the test's smallest p-value over ``n_nonzero`` pairs with a sign (default
    ``n``; :func:`min_attainable_p`) is not below ``alpha``: no difference can be detected
    there.

    Examples
    --------
    >>> t = detectable_difference(0.1, 100)  # minimum_detectable_difference's example
    >>> round(t, 4), round(detectable_difference(0.1, 100, test="wilcoxon") / t, 4)
    (0.0283, 1.0233)
    >>> detectable_difference(0.1, 5, test="wilcoxon")  # 5 pairs: p >= 2 / 2^5 = 0.0625
    inf
    """
    if test not in _TESTS:
        raise param_error("test", "detectable_difference", f"one of {list(_TESTS)}", test)
    mde = minimum_detectable_difference(sd, n, alpha, power)
    if test == "t" or not math.isfinite(mde):
        return mde
    floor = min_attainable_p(int(n if n_nonzero is None else n_nonzero), test)
    if math.isfinite(floor) and floor >= alpha:
        return math.inf
    return mde * math.sqrt(1.0 / WILCOXON_ARE) if test == "wilcoxon" else mde
