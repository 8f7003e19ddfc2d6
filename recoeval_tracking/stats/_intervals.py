"""Intervals of the mean of per-user values: Student's t, the percentile bootstrap and the
bias-corrected and accelerated (BCa) bootstrap.

* **Student-t**: ``mean ± t_{(1+c)/2, n-1} s / sqrt(n)`` (Student 1908);
* **percentile bootstrap**: the ``(1-c)/2`` and ``(1+c)/2`` quantiles of the replicate means
  (Efron & Tibshirani 1993, section 13.3), from the seeded draws of :func:`bootstrap_means`;
* **BCa**: the same draws, the quantiles moved by the bias and the skew (Efron 1987; Efron &
  Tibshirani 1993, section 14.3).

NaN marks an undefined value (left out). Every interval is deterministic given its ``seed``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_int, check_seed, check_unit_open, param_error
from ._arrays import _as_values
from ._resampling import _exact_means, bootstrap_means

__all__ = ["t_interval", "bootstrap_ci", "bca_interval", "MeanCI", "mean_ci"]


def t_interval(values: ArrayLike, confidence: float = 0.95) -> tuple[float, float, float, int]:
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanquantile(replicates, alpha / 2.0, axis=0)
            high = np.nanquantile(replicates, 1.0 - alpha / 2.0, axis=0)
    return np.atleast_1d(low), np.atleast_1d(high)


def bootstrap_ci(
    values: ArrayLike,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "percentile",
) -> tuple[float, float]:
    r"""Percentile (default) or BCa bootstrap interval of the mean of the defined values.

    The percentile bounds are the ``(1-c)/2`` and ``(1+c)/2`` quantiles (linear interpolation,
    numpy's default) of the replicate means of :func:`bootstrap_means` (Efron & Tibshirani 1993,
    section 13.3); ``method="bca"`` gives the bias-corrected and accelerated interval of the same
    draws over the defined values (:func:`bca_interval`). The same ``seed`` gives the same
    interval.

    .. math:: [\hat\theta^*_{((1-c)/2)},\; \hat\theta^*_{((1+c)/2)}],\quad
              \hat\theta^*_b = w_b \cdot x / n

    Returns
    -------
    (low, high)
        NaN when no value is defined.

    Examples
    --------
    The bounds are the quantiles of the replicate means:

    >>> x = np.array([0.0, 0.1, 0.1, 0.3, 0.5, 0.2, 0.0, 0.4])
    >>> reps = bootstrap_means(x[:, None], 1000, seed=0)[:, 0]
    >>> bool(np.allclose(bootstrap_ci(x, 1000, seed=0), np.quantile(reps, [0.025, 0.975])))
    True
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


def mean_ci(
    values: ArrayLike, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0
) -> MeanCI:
    """Mean of the defined values with both intervals: Student's t,
    ``mean ± t_{(1+c)/2, n-1} s / sqrt(n)`` (:func:`t_interval`, Student 1908), and the
    percentile bootstrap (:func:`bootstrap_ci`, Efron & Tibshirani 1993), and the count of NaN
    (undefined) values left out.

    Examples
    --------
    >>> m = mean_ci([1.0, 2.0, 3.0, float("nan")])  # the t interval of t_interval's example
    >>> m.mean, m.n, m.n_nan, round(m.t_low, 4), round(m.t_high, 4)
    (2.0, 3, 1, -0.4841, 4.4841)
    """
    v = _as_values(values, "values", "mean_ci")
    mean, lo, hi, n = t_interval(v, confidence)
    blo, bhi = bootstrap_ci(v, n_resamples, seed, confidence) if n else (math.nan, math.nan)
    return MeanCI(mean, lo, hi, blo, bhi, n, int(v.size - n))


def bca_interval(
    values: ArrayLike, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Bias-corrected and accelerated (BCa) bootstrap interval of the mean of the defined values
    (Efron 1987; Efron & Tibshirani 1993, section 14.3).

    With ``θ^*_b`` the replicate means over the ``n`` defined values (the seeded draws of
    :func:`bootstrap_means`, the percentile interval's, but in float64: ``z_0`` counts the
    replicates below ``θ``, and a float32 mean puts the replicates equal to ``θ`` on either
    side of it), ``θ`` their mean and ``θ_(i)`` the leave-one-out means,

    .. math:: z_0 = \\Phi^{-1}\\Big(\\frac{\\#\\{θ^*_b < θ\\} + \\#\\{θ^*_b \\le θ\\}}{2B}\\Big),\\quad
              a = \\frac{\\sum_i (\\bar θ_{(\\cdot)} - θ_{(i)})^3}
                       {6 \\big[\\sum_i (\\bar θ_{(\\cdot)} - θ_{(i)})^2\\big]^{3/2}}

    (a replicate within ``1e-9 max|x|`` of ``θ`` counts as equal to it) and the bounds are the
    replicate quantiles (linear interpolation) at
    ``Φ(z_0 + (z_0 + z_q) / (1 - a (z_0 + z_q)))`` for ``z_q = Φ^{-1}((1 ∓ c)/2)``, as
    :func:`scipy.stats.bootstrap` with ``method="BCa"`` computes them.

    Returns
    -------
    (low, high)
        NaN with fewer than two defined values or when every value is the same.

    Examples
    --------
    Right-skewed values: the interval agrees with scipy's BCa on its own draws (to their
    Monte-Carlo error) and lies right of the percentile interval of the same draws:

    >>> from scipy import stats
    >>> x = (np.arange(1, 21) / 20.0) ** 2
    >>> lo, hi = bca_interval(x, 4000, seed=0)
    >>> ref = stats.bootstrap((x,), np.mean, n_resamples=4000, method="BCa", random_state=0)
    >>> bool(abs(lo - ref.confidence_interval.low) < 0.01)
    True
    >>> bool(abs(hi - ref.confidence_interval.high) < 0.01)
    True
    >>> p_lo, p_hi = bootstrap_ci(x, 4000, seed=0)
    >>> bool(lo > p_lo and hi > p_hi)
    True
    >>> bca_interval([0.5, 0.5, 0.5])
    (nan, nan)
    """
    from scipy import special

    func = "bca_interval"
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error("values", func, "a 1-d array of numbers", values) from None
    if v.ndim != 1:
        raise param_error("values", func, "a 1-d array of numbers", v)
    if not (isinstance(confidence, (int, float)) and 0.0 < float(confidence) < 1.0):
        raise param_error("confidence", func, "a number strictly between 0 and 1", confidence)
    v = v[~np.isnan(v)]
    n = v.size
    if n < 2 or np.all(v == v[0]):
        return float("nan"), float("nan")
    n_resamples = check_int(n_resamples, "n_resamples", func, minimum=1)
    seed = check_seed(seed, func)
    reps = _exact_means(v, n_resamples, seed)
    theta = float(v.mean())
    # a replicate equal to θ in exact arithmetic may differ from it in the last bits (the sums
    # run in another order): within the tolerance it counts as equal
    tol = 1e-9 * float(np.max(np.abs(v)))
    share = (np.sum(reps < theta - tol) + np.sum(reps <= theta + tol)) / (2.0 * reps.size)
    z0 = float(special.ndtri(share))
    jack = (v.sum() - v) / (n - 1)
    dev = jack.mean() - jack
    den = 6.0 * float(np.sum(dev**2)) ** 1.5
    acc = float(np.sum(dev**3)) / den if den > 0 else 0.0
    zq = special.ndtri(np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]))
    q = special.ndtr(z0 + (z0 + zq) / (1.0 - acc * (z0 + zq)))
    if not np.all(np.isfinite(q)):
        return float("nan"), float("nan")
    low, high = np.quantile(reps, q)
    return float(low), float(high)
