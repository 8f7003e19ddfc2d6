"""Effect sizes of paired per-user values: how large a difference is, beside whether it is
significant.

Over thousands of users almost any difference is "significant", so a comparison leads with how
large the difference is and how precisely it is known; the test's mark comes second.

For paired per-user values ``a`` and a baseline ``b``, over the users defined on both sides,
``d_i = a_i - b_i``:

* **difference** ``mean(d)`` with its Student-t interval (Student 1908);
* **relative difference** ``mean(d) / mean(b)`` with a delta-method interval: the ratio's
  linearisation ``u_i = (d_i - r b_i) / mean(b)`` has the same mean as the ratio's error to first
  order, so ``r ± t_{(1+c)/2, n-1} sd(u) / sqrt(n)`` (Deng, Knoblich & Lu 2018, "Applying the
  delta method in metric analytics", KDD); NaN when ``mean(b)`` is 0;
* **Cohen's d_z** ``mean(d) / sd(d)`` (Cohen 1988; Lakens 2013, "Calculating and reporting
  effect sizes", Frontiers in Psychology 4, eq. 5);
* **wins, ties and losses**: the users where ``a`` is better than, equal to, worse than ``b``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_unit_open, param_error
from ._arrays import _defined_differences, _paired

__all__ = ["cohens_dz", "EffectSize", "effect_size", "relative_difference", "win_tie_loss"]


def cohens_dz(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's ``d_z`` for paired data: ``mean(d) / sd(d)`` (``ddof=1``) over the defined pairs
    (Cohen 1988; Lakens 2013, eq. 5). NaN with fewer than two pairs or zero spread.

    Examples
    --------
    >>> cohens_dz([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])  # d = (1, 2, 3): mean 2, sd 1
    2.0
    """
    d = _defined_differences(a, b, "cohens_dz")
    if d.size < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd if sd > 0 else math.nan


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


def relative_difference(
    a: ArrayLike, b: ArrayLike, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``r = mean(a - b) / mean(b)`` over the pairs defined on both sides, with its delta-method
    interval ``r ± t_{(1+c)/2, n-1} sd(u) / sqrt(n)``, ``u_i = (d_i - r b_i) / mean(b)`` (Deng,
    Knoblich & Lu 2018; see the module text).

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


def effect_size(a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95) -> EffectSize:
    """The effect of ``a`` against the baseline ``b`` over the pairs defined on both sides:
    the difference ``mean(d)`` with its Student-t interval ``mean(d) ± t_{(1+c)/2, n-1} sd(d) /
    sqrt(n)`` (Student 1908), the relative difference with its delta-method interval
    (:func:`relative_difference`; Deng, Knoblich & Lu 2018) and Cohen's ``d_z = mean(d) /
    sd(d)`` (Cohen 1988; Lakens 2013).

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
    ``d = (0.1, 0, 0.1, 0.1)``: ``mean(d) = 0.075``, ``sd(d) = 0.05``, ``mean(b) = 0.25``:

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


def win_tie_loss(
    a: ArrayLike, b: ArrayLike, *, lower_is_better: bool = False
) -> tuple[int, int, int]:
    """Users where ``a`` is better than, equal to, worse than ``b`` (pairs with a NaN side left
    out): the counts of ``d_i > 0``, ``d_i = 0`` and ``d_i < 0`` for ``d = a - b`` (``b - a``
    when ``lower_is_better``), the counts of wins, ties and losses of Demšar (2006, section
    3.1.3) over users.

    Examples
    --------
    >>> win_tie_loss([0.5, 0.2, 0.1, float("nan")], [0.1, 0.2, 0.3, 0.4])
    (1, 1, 1)
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise param_error(
            "b", "win_tie_loss", f"a 1-d array of the same length as 'a' ({x.shape})", y
        )
    keep = ~(np.isnan(x) | np.isnan(y))
    d = x[keep] - y[keep]
    if lower_is_better:
        d = -d
    return int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
