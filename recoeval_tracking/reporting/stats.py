"""Statistics for comparing runs on the same users: intervals, paired tests, corrections.

Plain numpy and scipy; no tracking or config code. Every function takes per-user values (NaN marks
a user for whom the metric is undefined) and is deterministic given its ``seed``.

What is computed
----------------
* **Mean with a 95% interval**: the Student-t interval ``mean ± t_{1-α/2, n-1} s / sqrt(n)``
  (Student 1908) and the percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13).
* **Paired differences** ``d_i = x_i - y_i`` over the users defined in both runs: their mean with
  the same two intervals, the paired t-test (:func:`scipy.stats.ttest_rel`), the Wilcoxon
  signed-rank test (:func:`scipy.stats.wilcoxon`, Wilcoxon 1945), a paired randomisation
  (sign-flip) test (Fisher 1935; Smucker, Allan & Carterette 2007) and Cohen's ``d_z``
  (Cohen 1988; Lakens 2013).
* **Multiple comparisons**: Holm-Bonferroni (Holm 1979), Bonferroni, Benjamini-Hochberg (1995).

Resampling is written as matrix products so that many columns (runs, metrics, differences) share
one set of draws: a bootstrap replicate is a vector of counts ``w`` (how often each user is drawn,
``sum(w) = n``) and its mean is ``w·x / n``; a sign-flip replicate is a vector of signs ``s``
and its statistic is ``s·d``. The draws depend only on ``seed`` and ``n`` (never on the values), so a
column gets the same result alone or together with others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import InputError, check_unit_open, param_error
from .resampling import (
    all_sign_vectors,
    auto_permutations,
    bca_interval,
    bootstrap_counts,
    bootstrap_means,
    randomization_pvalues,
    sign_flips,
)

__all__ = [
    "CORRECTIONS",
    "FAMILIES",
    "permutations_for",
    "significance_mark",
    "MeanCI",
    "PairedComparison",
    "t_interval",
    "bootstrap_counts",
    "bootstrap_means",
    "bootstrap_ci",
    "bca_interval",
    "mean_ci",
    "sign_flips",
    "all_sign_vectors",
    "auto_permutations",
    "randomization_pvalues",
    "randomization_test",
    "paired_t_test",
    "wilcoxon_test",
    "sign_test",
    "cohens_dz",
    "paired_comparison",
    "adjust_pvalues",
    "percent",
]


def percent(confidence: float) -> str:
    """A coverage as the pages label it: ``0.95`` -> ``"95%"``, ``0.975`` -> ``"97.5%"``."""
    return f"{float(confidence) * 100:.10g}%"


#: Names accepted by :func:`adjust_pvalues`.
CORRECTIONS = ("holm", "bonferroni", "bh", "none")


# ---------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------


def _as_values(values, name: str, func: str) -> np.ndarray:
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, func, "a 1-d array of numbers", values) from None
    if v.ndim != 1:
        raise param_error(name, func, "a 1-d array of numbers", v)
    if np.isinf(v).any():
        raise param_error(
            name,
            func,
            "finite numbers or NaN (undefined)",
            "an array holding infinite values",
            got_is_text=True,
        )
    return v


def _pair(a, b, func: str) -> tuple[np.ndarray, np.ndarray]:
    x = _as_values(a, "a", func)
    y = _as_values(b, "b", func)
    if x.shape != y.shape:
        raise param_error("b", func, f"an array of the same length as 'a' ({x.shape[0]})", y)
    return x, y


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float, int]:
    """Mean of the defined values with its Student-t interval.

    .. math:: \\bar x \\pm t_{(1+c)/2,\\,n-1} \\, s / \\sqrt{n}

    with ``s`` the sample standard deviation (``ddof=1``) of the ``n`` non-NaN values
    (Student 1908).

    Parameters
    ----------
    values : array-like of float
        NaN marks undefined values (left out).
    confidence : float
        Coverage ``c`` of the interval (default 0.95).

    Returns
    -------
    (mean, low, high, n)
        Bounds are NaN when fewer than two values are defined; everything is NaN for none.

    Examples
    --------
    >>> t_interval([1.0, 2.0, 3.0])[:3]  # t_{0.975,2} = 4.3027, s/sqrt(3) = 0.57735
    (2.0, -0.48413771175033027, 4.48413771175033)
    """
    from scipy import stats

    func = "t_interval"
    v = _as_values(values, "values", func)
    c = check_unit_open(confidence, "confidence", func)
    v = v[~np.isnan(v)]
    n = int(v.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(v.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    half = float(stats.t.ppf(0.5 + c / 2.0, n - 1)) * float(v.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half, n


def _percentile_bounds(replicates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = 1.0 - confidence
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanquantile(replicates, alpha / 2.0, axis=0)
            high = np.nanquantile(replicates, 1.0 - alpha / 2.0, axis=0)
    return np.atleast_1d(low), np.atleast_1d(high)


def bootstrap_ci(
    values,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "percentile",
) -> tuple[float, float]:
    """Percentile (default) or BCa bootstrap interval of the mean of the defined values.

    The percentile bounds are the ``(1-c)/2`` and ``(1+c)/2`` quantiles (linear interpolation,
    numpy's default) of the replicate means of :func:`bootstrap_means` (Efron & Tibshirani 1993,
    section 13.3); ``method="bca"`` gives the bias-corrected and accelerated interval of the same
    draws over the defined values (:func:`~recoeval_tracking.reporting.resampling.bca_interval`).
    The same ``seed`` gives the same interval.

    Returns
    -------
    (low, high)
        NaN when no value is defined.
    """
    func = "bootstrap_ci"
    v = _as_values(values, "values", func)
    c = check_unit_open(confidence, "confidence", func)
    if method not in ("percentile", "bca"):
        raise param_error("method", func, "'percentile' or 'bca'", method)
    if method == "bca":
        return bca_interval(v, n_resamples, seed, c)
    reps = bootstrap_means(v[:, None], n_resamples, seed)
    low, high = _percentile_bounds(reps, c)
    return float(low[0]), float(high[0])


@dataclass(frozen=True)
class MeanCI:
    """Mean of the defined values with a t interval and a percentile bootstrap interval."""

    mean: float
    t_low: float
    t_high: float
    boot_low: float
    boot_high: float
    n: int
    n_nan: int


def mean_ci(values, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> MeanCI:
    """Mean with both intervals (:func:`t_interval`, :func:`bootstrap_ci`) and the NaN count."""
    v = _as_values(values, "values", "mean_ci")
    mean, lo, hi, n = t_interval(v, confidence)
    blo, bhi = bootstrap_ci(v, n_resamples, seed, confidence) if n else (math.nan, math.nan)
    return MeanCI(mean, lo, hi, blo, bhi, n, int(v.size - n))


# ---------------------------------------------------------------------------------------------
# Paired tests
# ---------------------------------------------------------------------------------------------


def randomization_test(a, b, n_permutations: int = 1000, seed: int = 0) -> float:
    """Two-sided paired randomisation test of ``mean(a - b) = 0`` (see
    :func:`randomization_pvalues`); pairs with a NaN side are left out."""
    x, y = _pair(a, b, "randomization_test")
    return float(randomization_pvalues(x - y, n_permutations, seed)[0])


def _defined_differences(a, b, func: str) -> np.ndarray:
    x, y = _pair(a, b, func)
    d = x - y
    return d[~np.isnan(d)]


def paired_t_test(a, b) -> tuple[float, float]:
    """Paired t-test over the pairs defined on both sides: :func:`scipy.stats.ttest_rel`.

    .. math:: t = \\bar d / (s_d / \\sqrt{n}),\\quad p = 2\\,P(T_{n-1} \\ge |t|)

    Returns
    -------
    (t, p)
        ``(nan, nan)`` with fewer than two pairs; ``(0, 1)`` when every difference is 0; a
        constant non-zero difference gives an infinite ``t`` and ``p = 0``.
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


def wilcoxon_test(a, b) -> tuple[float, float]:
    r"""Wilcoxon signed-rank test over the defined pairs (Wilcoxon 1945) on the non-zero
    differences: zero differences are dropped first (``zero_method="wilcox"``; two-sided; no
    continuity correction), so the p-value is that of :func:`scipy.stats.wilcoxon` on
    ``d[d != 0]``.

    With the ``n`` non-zero differences ranked by absolute value (mid-ranks for ties),
    ``W+`` the sum of the ranks of the positive ones and ``W- = n(n+1)/2 - W+``, the statistic is
    ``min(W+, W-)``. For ``n <= 50`` scipy itself gives the p-value (exact distribution). Above,
    the normal approximation that scipy uses is computed here directly (scipy's generic
    implementation takes about a second per 100,000 pairs):

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
    if n <= 50:
        import warnings

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


def sign_test(a, b) -> tuple[int, int, float]:
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


def cohens_dz(a, b) -> float:
    """Cohen's ``d_z`` for paired data: ``mean(d) / sd(d)`` (``ddof=1``) over the defined pairs
    (Cohen 1988; Lakens 2013, eq. 5). NaN with fewer than two pairs or zero spread."""
    d = _defined_differences(a, b, "cohens_dz")
    if d.size < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd if sd > 0 else math.nan


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
    a,
    b,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    seed: int = 0,
) -> PairedComparison:
    """Mean difference ``a - b`` over the pairs defined on both sides with its t and bootstrap
    intervals, the paired t, Wilcoxon and randomisation tests, and Cohen's ``d_z``."""
    x, y = _pair(a, b, "paired_comparison")
    d = x - y
    mean, lo, hi, n = t_interval(d, confidence)
    blo, bhi = bootstrap_ci(d, n_resamples, seed, confidence) if n else (math.nan, math.nan)
    t, pt = paired_t_test(x, y)
    w, pw = wilcoxon_test(x, y)
    pr = float(randomization_pvalues(d, n_permutations, seed)[0]) if n else math.nan
    return PairedComparison(mean, lo, hi, blo, bhi, n, t, pt, w, pw, pr, cohens_dz(x, y))


# ---------------------------------------------------------------------------------------------
# Multiple comparisons
# ---------------------------------------------------------------------------------------------


def adjust_pvalues(pvalues: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    With the ``m`` defined p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:

    * ``holm`` (Holm 1979): ``p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``;
    * ``bonferroni``: ``min(1, m p)``;
    * ``bh`` (Benjamini & Hochberg 1995): ``p~_(i) = min_{j >= i} min(1, m p_(j) / j)``;
    * ``none``: unchanged.

    NaN p-values stay NaN and do not count in ``m``.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    func = "adjust_pvalues"
    if method not in CORRECTIONS:
        raise param_error("method", func, f"one of {list(CORRECTIONS)}", method)
    p = np.asarray(pvalues, dtype=np.float64).ravel().copy()
    defined = ~np.isnan(p)
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise InputError(
            f"The 'pvalues' parameter of {func} must hold probabilities in [0, 1]. "
            f"Got values from {p[defined].min()} to {p[defined].max()} instead."
        )
    q = p[defined]
    m = q.size
    if m == 0 or method == "none":
        return p
    if method == "bonferroni":
        adj = np.minimum(1.0, m * q)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        stepped = np.maximum.accumulate((m - np.arange(m)) * q[order])
        adj = np.empty(m)
        adj[order] = np.minimum(1.0, stepped)
    else:  # bh
        order = np.argsort(q, kind="stable")
        ranked = m * q[order] / np.arange(1, m + 1)
        stepped = np.minimum.accumulate(ranked[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = np.minimum(1.0, stepped)
    p[defined] = adj
    return p


#: The families p-values are adjusted over: each metric's comparisons with the baseline, or
#: every (run, metric) comparison of a table.
FAMILIES = ("metric", "table")


def permutations_for(n_permutations: int | str, family: str, n_metrics: int, n_others: int) -> int:
    """The sign vectors of the randomisation test: ``n_permutations`` itself, or for ``"auto"``
    :func:`~recoeval_tracking.reporting.resampling.auto_permutations` of the family size (the
    other runs for ``family="metric"``, runs x metrics for ``"table"``)."""
    if n_permutations != "auto":
        return int(n_permutations)
    size = n_others * (n_metrics if family == "table" else 1)
    return auto_permutations(max(size, 1))


def significance_mark(
    p: float, diff: float, lower_is_better: bool = False, alpha: float = 0.05
) -> str:
    """``▲``/``▼`` (better/worse than the baseline) followed by ``*`` (p < alpha), ``**``
    (p < 0.01) or ``***`` (p < 0.001) for an adjusted p-value; empty when not significant."""
    if p is None or not np.isfinite(p) or not np.isfinite(diff) or p >= alpha or diff == 0:
        return ""
    stars = "***" if p < 0.001 else "**" if p < 0.01 else "*"
    better = (diff < 0) if lower_is_better else (diff > 0)
    return ("▲" if better else "▼") + stars
