"""Effect sizes first: the difference of means, its interval, the relative difference and d_z.

Over thousands of users almost any difference is "significant", so a comparison leads with how
large the difference is and how precisely it is known; the test's mark comes second.

What is computed (for paired per-user values ``a`` and a baseline ``b``, over the users defined
on both sides, ``d_i = a_i - b_i``):

* **difference** ``mean(d)`` with its Student-t interval (Student 1908);
* **relative difference** ``mean(d) / mean(b)`` with a delta-method interval: the ratio's
  linearisation ``u_i = (d_i - r b_i) / mean(b)`` has the same mean as the ratio's error to first
  order, so ``r ± t_{(1+c)/2, n-1} sd(u) / sqrt(n)`` (Deng, Knoblich & Lu 2018, "Applying the
  delta method in metric analytics", KDD); NaN when ``mean(b)`` is 0;
* **d_z** ``mean(d) / sd(d)`` (Cohen 1988; Lakens 2013).

The default test
----------------
:data:`DEFAULT_TEST` is the paired t-test (``test="t"`` of :func:`~recoeval_tracking.compare`,
already the package's default). Ihemelandu & Ekstrand ("Inference at scale: significance testing
for large search and recommendation experiments", SIGIR 2023) simulated A/A and A/B comparisons
of recommenders over thousands of users: the paired t-test held its type-I error rate and was as
powerful as or more powerful than the Wilcoxon, sign, bootstrap and permutation tests at large
sample sizes; Otero et al. (ECIR 2025) reach the same conclusion for the paired t-test with
recommender per-user metrics. The package checks the claim on real per-user NDCG@10 differences
of MovieLens 100K (``tests/reporting/test_aa_error_rate.py``: sign-flipped A/A draws at 20, 200
and 2,000 users reject at the nominal rate).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .._validation import check_unit_open, param_error

__all__ = ["DEFAULT_TEST", "EffectSize", "effect_size", "relative_difference"]

#: The test the package uses by default for paired per-user comparisons (see the module text).
DEFAULT_TEST = "t"


def _paired(a, b, func: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error("a", func, "two 1-d arrays of numbers", (a, b)) from None
    if x.ndim != 1:
        raise param_error("a", func, "a 1-d array of numbers", x)
    if y.shape != x.shape:
        raise param_error("b", func, f"a 1-d array of the same length as 'a' ({x.size})", y)
    if np.isinf(x).any() or np.isinf(y).any():
        raise param_error(
            "a",
            func,
            "finite numbers or NaN (undefined)",
            "an array holding infinite values",
            got_is_text=True,
        )
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


@dataclass(frozen=True)
class EffectSize:
    """How large a paired difference ``a - b`` is: the difference with its interval, the
    relative difference with its interval, d_z, the pairs and the baseline's mean over them."""

    diff: float
    diff_low: float
    diff_high: float
    rel: float
    rel_low: float
    rel_high: float
    d_z: float
    n: int
    baseline_mean: float

    def as_dict(self) -> dict[str, float | int]:
        """The fields as a dict (a table row)."""
        return asdict(self)


def relative_difference(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """``mean(a - b) / mean(b)`` over the pairs defined on both sides, with its delta-method
    interval (see the module text).

    Returns
    -------
    (rel, low, high)
        NaN when ``mean(b)`` is 0 or no pair is defined; bounds NaN with fewer than two pairs.

    Examples
    --------
    ``d = (1, 1, 1)``, ``mean(b) = 2``, ``r = 0.5``; ``u = (1 - 0.5 b) / 2 = (0.25, 0, -0.25)``,
    ``sd(u) = 0.25``, half-width ``t_{0.975,2} 0.25 / sqrt(3) = 0.621``:

    >>> [round(v, 3) for v in relative_difference([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])]
    [0.5, -0.121, 1.121]
    """
    from scipy import stats

    func = "relative_difference"
    c = check_unit_open(confidence, "confidence", func)
    x, y = _paired(a, b, func)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mb = float(y.mean())
    if mb == 0:
        return math.nan, math.nan, math.nan
    d = x - y
    r = float(d.mean()) / mb
    if n < 2:
        return r, math.nan, math.nan
    u = (d - r * y) / mb
    half = float(stats.t.ppf(0.5 + c / 2.0, n - 1)) * float(u.std(ddof=1)) / math.sqrt(n)
    return r, r - half, r + half


def effect_size(a, b, *, confidence: float = 0.95) -> EffectSize:
    """The effect of ``a`` against the baseline ``b`` over the pairs defined on both sides.

    Parameters
    ----------
    a, b : array-like of float
        Per-user values, aligned; NaN marks an undefined value (the pair is left out).
    confidence : float
        Coverage of both intervals (default 0.95).

    Returns
    -------
    EffectSize

    Examples
    --------
    >>> e = effect_size([0.30, 0.25, 0.40, 0.35], [0.20, 0.25, 0.30, 0.25])
    >>> round(e.diff, 4), round(e.rel, 4), round(e.d_z, 4)
    (0.075, 0.3, 1.5)
    """
    from scipy import stats

    func = "effect_size"
    c = check_unit_open(confidence, "confidence", func)
    x, y = _paired(a, b, func)
    n = int(x.size)
    nan = math.nan
    if n == 0:
        return EffectSize(nan, nan, nan, nan, nan, nan, nan, 0, nan)
    d = x - y
    diff = float(d.mean())
    lo = hi = dz = nan
    if n >= 2:
        sd = float(d.std(ddof=1))
        half = float(stats.t.ppf(0.5 + c / 2.0, n - 1)) * sd / math.sqrt(n)
        lo, hi = diff - half, diff + half
        dz = diff / sd if sd > 0 else nan
    rel, rlo, rhi = relative_difference(x, y, c)
    return EffectSize(diff, lo, hi, rel, rlo, rhi, dz, n, float(y.mean()))
