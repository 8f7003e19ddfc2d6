"""Paired tests of per-user values: does ``a`` differ from the baseline ``b`` on the same users?

Over the users defined on both sides (a NaN on either side leaves the pair out), with the
paired differences ``d_i = a_i - b_i``:

* the **paired t-test** (Student 1908; :func:`scipy.stats.ttest_rel`);
* the **Wilcoxon signed-rank test** (Wilcoxon 1945) on the non-zero differences;
* the **sign test** (Dixon & Mood 1946);
* the **paired randomisation (sign-flip) test** of the mean difference (Fisher 1935; Smucker,
  Allan & Carterette 2007), exact when every sign vector fits in the draws;
* :func:`paired_comparison`: all of them at once, with the mean difference's intervals and
  Cohen's d_z.

The default test
----------------
:data:`DEFAULT_TEST` is the paired t-test (``test="t"`` of :func:`~recoeval_tracking.compare`,
the package's default). Ihemelandu & Ekstrand ("Inference at scale: significance testing for
large search and recommendation experiments", SIGIR 2023) simulated A/A and A/B comparisons of
recommenders over thousands of users: the paired t-test held its type-I error rate and was as
powerful as or more powerful than the Wilcoxon, sign, bootstrap and permutation tests at large
sample sizes; Otero et al. (ECIR 2025) reach the same conclusion for the paired t-test with
recommender per-user metrics. The package checks the claim on real per-user NDCG@10 differences
of MovieLens 100K (``tests/reporting/test_aa_error_rate.py``: sign-flipped A/A draws at 20, 200
and 2,000 users reject at the nominal rate).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import param_error
from ._arrays import _defined_differences, _pair
from ._effects import cohens_dz
from ._intervals import bootstrap_ci, t_interval
from ._resampling import randomization_pvalues

__all__ = [
    "DEFAULT_TEST",
    "paired_t_test",
    "wilcoxon_test",
    "sign_test",
    "randomization_test",
    "paired_comparison",
    "PairedComparison",
    "min_attainable_p",
]

#: The test the package uses by default for paired per-user comparisons (see the module text).
DEFAULT_TEST = "t"


def randomization_test(
    a: ArrayLike, b: ArrayLike, n_permutations: int = 1000, seed: int = 0
) -> float:
    r"""Two-sided paired randomisation (sign-flip) test of ``mean(a - b) = 0`` (Fisher 1935;
    Smucker, Allan & Carterette 2007); pairs with a NaN side are left out. With
    :math:`T = |\sum_i d_i|` and :math:`T_r` the same sum under ``R = n_permutations`` random
    sign vectors, :math:`p = (1 + \#\{r : T_r \ge T\}) / (1 + R)`; exact over every sign
    vector when :math:`2^n \le R` (:func:`randomization_pvalues`).

    Examples
    --------
    Three pairs, every difference positive: the two sign vectors of one sign reach ``T``,
    ``p = 2 / 2^3``:

    >>> randomization_test([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])
    0.25
    """
    x, y = _pair(a, b, "randomization_test")
    return float(randomization_pvalues(x - y, n_permutations, seed)[0])


def paired_t_test(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    """Paired t-test over the pairs defined on both sides: :func:`scipy.stats.ttest_rel`.

    .. math:: t = \\bar d / (s_d / \\sqrt{n}),\\quad p = 2\\,P(T_{n-1} \\ge |t|)

    (Student 1908). ``s_d`` is the standard deviation (``ddof=1``) of the ``n`` differences.

    Returns
    -------
    (t, p)
        ``(nan, nan)`` with fewer than two pairs; ``(0, 1)`` when every difference is 0; a
        constant non-zero difference gives an infinite ``t`` and ``p = 0``.

    Examples
    --------
    ``d = (1, 2, 3)``: ``t = 2 / (1 / sqrt(3)) = 3.4641``; with 2 degrees of freedom
    ``p = 1 - t / sqrt(t^2 + 2) = 0.0742``:

    >>> t, p = paired_t_test([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])
    >>> round(t, 4), round(p, 4)
    (3.4641, 0.0742)
    """
    from scipy import stats

    d = _defined_differences(a, b, "paired_t_test")
    if d.size < 2:
        return math.nan, math.nan
    if np.all(d == 0):
        return 0.0, 1.0
    if np.all(d == d[0]):
        return math.copysign(math.inf, d[0]), 0.0
    res = stats.ttest_rel(d, np.zeros_like(d))
    return float(res.statistic), float(res.pvalue)


def wilcoxon_test(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    r"""Wilcoxon signed-rank test over the defined pairs (Wilcoxon 1945) on the non-zero
    differences: zero differences are dropped first (``zero_method="wilcox"``; two-sided; no
    continuity correction), so the p-value is that of :func:`scipy.stats.wilcoxon` on
    ``d[d != 0]``.

    With the ``n`` non-zero differences ranked by absolute value (mid-ranks for ties),
    ``W+`` the sum of the ranks of the positive ones and ``W- = n(n+1)/2 - W+``, the statistic is
    ``min(W+, W-)``. The p-value is the one :func:`scipy.stats.wilcoxon` gives (its
    ``method="auto"``): for ``n <= 50`` without tied absolute differences, scipy's exact
    distribution of ``W+``; for ``n <= 13`` with ties, the exact permutation distribution, ``W+``
    over all ``2^n`` assignments of signs to the ranks, enumerated here (scipy's generic
    permutation test re-ranks every assignment: half a second a call, thirty seconds of a small
    sweep's report); for ``13 < n <= 50`` with ties, scipy's normal approximation; above 50,
    that same approximation computed here directly (scipy's generic implementation takes about
    a second per 100,000 pairs):

    .. math:: z = \frac{W^+ - n(n+1)/4}{\sqrt{n(n+1)(2n+1)/24 - \sum_t (t^3 - t)/48}},
              \quad p = 2\,\Phi(-|z|)

    where ``t`` runs over the sizes of the groups of tied absolute differences.

    When some differences are zero this is not what ``scipy.stats.wilcoxon(a - b)`` gives with
    its defaults: scipy then leaves the exact distribution for the normal approximation over
    all the pairs. The exact p over the non-zero differences is the better number: a zero
    difference carries no sign, and with ``n`` non-zero differences no outcome is rarer than
    ``2 / 2^n``, which the approximation undercuts. Twenty pairs of which four differ, all in
    one direction: the exact p is ``2 / 2^4 = 0.125``, scipy's default about 0.068.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> d = np.array([0.0] * 16 + [0.1, 0.2, 0.3, 0.4])
    >>> wilcoxon_test(d, np.zeros(20))
    (0.0, 0.125)
    >>> float(stats.wilcoxon(d[d != 0]).pvalue), round(float(stats.wilcoxon(d).pvalue), 3)
    (0.125, 0.068)

    Returns
    -------
    (statistic, p)
        ``(nan, 1.0)`` when every defined difference is zero; ``(nan, nan)`` without pairs.
    """
    from scipy import stats

    d = _defined_differences(a, b, "wilcoxon_test")
    if d.size == 0:
        return math.nan, math.nan
    d = d[d != 0]
    n = int(d.size)
    if n == 0:
        return math.nan, 1.0
    if n <= _ENUMERATED:
        exact = _signed_rank_permutation_p(d)
        if exact is not None:
            return exact
    if n <= 50:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns about ties under the exact method
            res = stats.wilcoxon(d, zero_method="wilcox")
        return float(res.statistic), float(res.pvalue)
    absd = np.abs(d)
    ranks = stats.rankdata(absd)
    w_plus = float(ranks[d > 0].sum())
    total = n * (n + 1) / 2.0
    statistic = min(w_plus, total - w_plus)
    _, counts = np.unique(absd, return_counts=True)
    counts = counts[counts > 1].astype(np.float64)
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(counts**3 - counts)) / 48.0
    if var <= 0:
        return statistic, 1.0
    z = (statistic - n * (n + 1) / 4.0) / math.sqrt(var)
    return statistic, float(min(1.0, 2.0 * stats.norm.sf(abs(z))))


#: The most non-zero differences whose ``2^n`` sign assignments scipy enumerates (with ties).
_ENUMERATED = 13


def _signed_rank_permutation_p(d: np.ndarray) -> tuple[float, float] | None:
    """``(min(W+, W-), p)`` of :func:`scipy.stats.wilcoxon` on the non-zero ``d`` when it takes
    the exact permutation route (tied ``|d|``, ``n <= 13``): the null distribution is ``W+`` of
    every one of the ``2^n`` sign assignments, which leave the mid-ranks as they are, and
    ``p = min(1, 2 min(P(W+ <= w), P(W+ >= w)))`` with scipy's relative tolerance of
    ``100 eps`` around the observed ``w`` (:func:`scipy.stats.permutation_test`, exact, so no
    +1 adjustment). ``None`` without ties: scipy's exact distribution then (cheap)."""
    from scipy import stats

    absd = np.abs(d)
    if np.unique(absd).size == absd.size:
        return None
    ranks = stats.rankdata(absd)  # mid-ranks, as scipy's statistic ranks
    w_plus, w_minus = float(ranks[d > 0].sum()), float(ranks[d < 0].sum())
    n = d.size
    signs = (np.arange(2**n)[:, None] >> np.arange(n)) & 1  # one row per assignment
    null = signs @ ranks  # sums of halves: exact in float64, in any order
    gamma = abs(np.finfo(np.float64).eps * 100 * w_plus)
    below = np.count_nonzero(null <= w_plus + gamma) / 2**n
    above = np.count_nonzero(null >= w_plus - gamma) / 2**n
    return min(w_plus, w_minus), float(min(1.0, 2 * min(below, above)))


def sign_test(a: ArrayLike, b: ArrayLike) -> tuple[int, int, float]:
    """Two-sided sign test over the defined pairs (Dixon & Mood 1946): the number of positive
    differences ``a - b`` among the ``n`` non-zero ones is Binomial(n, 1/2) under the null;
    zero differences are dropped. The p-value is :func:`scipy.stats.binomtest`'s two-sided one.

    Returns
    -------
    (n_positive, n_negative, p)
        ``p = 1`` when every defined difference is zero; NaN without pairs.

    Examples
    --------
    >>> sign_test([1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 0, 9])  # P(X <= 1 or X >= 5), X ~ B(6, 1/2)
    (5, 1, 0.21875)
    """
    from scipy import stats

    d = _defined_differences(a, b, "sign_test")
    if d.size == 0:
        return 0, 0, math.nan
    pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
    if pos + neg == 0:
        return 0, 0, 1.0
    return pos, neg, float(stats.binomtest(pos, pos + neg, 0.5).pvalue)


@dataclass(frozen=True)
class PairedComparison:
    """Everything reported for one run against the baseline on one metric."""

    mean_diff: float
    t_low: float
    t_high: float
    boot_low: float
    boot_high: float
    n_pairs: int
    t_stat: float
    p_t: float
    w_stat: float
    p_wilcoxon: float
    p_randomization: float
    cohens_dz: float


def paired_comparison(
    a: ArrayLike,
    b: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    seed: int = 0,
) -> PairedComparison:
    """Mean difference ``a - b`` over the pairs defined on both sides with its t and bootstrap
    intervals (:func:`t_interval`, :func:`bootstrap_ci`), the paired t, Wilcoxon and
    randomisation tests (:func:`paired_t_test`, :func:`wilcoxon_test`,
    :func:`randomization_test`; Student 1908, Wilcoxon 1945, Fisher 1935), and Cohen's ``d_z``
    (:func:`cohens_dz`, ``mean(d) / sd(d)``).

    Examples
    --------
    ``d = (1, 2, 3)``: the t-test of :func:`paired_t_test`'s example; both distribution-free
    tests at their floor over three pairs, ``2 / 2^3``; ``d_z = 2 / 1``:

    >>> c = paired_comparison([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])
    >>> c.mean_diff, c.n_pairs, round(c.p_t, 4), c.p_wilcoxon, c.p_randomization, c.cohens_dz
    (2.0, 3, 0.0742, 0.25, 0.25, 2.0)
    """
    x, y = _pair(a, b, "paired_comparison")
    d = x - y
    mean, lo, hi, n = t_interval(d, confidence)
    blo, bhi = bootstrap_ci(d, n_resamples, seed, confidence) if n else (math.nan, math.nan)
    t, pt = paired_t_test(x, y)
    w, pw = wilcoxon_test(x, y)
    pr = float(randomization_pvalues(d, n_permutations, seed)[0]) if n else math.nan
    return PairedComparison(mean, lo, hi, blo, bhi, n, t, pt, w, pw, pr, cohens_dz(x, y))


def min_attainable_p(n: int, test: str, n_permutations: int | None = None) -> float:
    """The smallest two-sided p-value ``test`` can give over ``n`` pairs (before correction).

    * ``wilcoxon``: exact up to 50 pairs (:func:`wilcoxon_test`; Wilcoxon 1945), where the most
      extreme outcome (every difference of one sign) has probability ``2 / 2^n``; above, the
      normal approximation at ``W = 0``.
    * ``randomization``: ``2 / 2^n`` (every sign vector, exact; Fisher 1935) and never below
      ``1 / (R + 1)`` with ``R = n_permutations`` random sign vectors (Phipson & Smyth 2010).
    * ``t``: 0 for ``n >= 2`` (the t-test reaches any level, by assuming normal differences).

    NaN for fewer than one pair (two for the t-test).

    Examples
    --------
    >>> min_attainable_p(3, "wilcoxon"), min_attainable_p(3, "randomization")
    (0.25, 0.25)
    """
    from scipy import stats

    if n < 1 or (test == "t" and n < 2):
        return math.nan
    if test == "t":
        return 0.0
    exact = math.ldexp(2.0, -n)  # 2 / 2^n, 0.0 (no overflow) for thousands of pairs
    if test == "wilcoxon":
        if n <= 50:
            return min(1.0, exact)
        z = (n * (n + 1) / 4.0) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        return float(2.0 * stats.norm.sf(z))
    if test == "randomization":
        if n_permutations is not None and n > math.log2(max(n_permutations, 1)):
            return max(exact, 1.0 / (n_permutations + 1.0))
        return min(1.0, exact)
    raise param_error("test", "min_attainable_p", "one of ['t', 'wilcoxon', 'randomization']", test)
