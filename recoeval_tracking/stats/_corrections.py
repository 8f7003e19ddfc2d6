"""Multiple comparisons: a family of p-values adjusted so that the family's error rate holds.

* **Holm-Bonferroni** (Holm 1979, "A simple sequentially rejective multiple test procedure",
  Scand. J. Statist. 6): step-down, controls the family-wise error rate;
* **Bonferroni**: every p-value times the family's size;
* **Benjamini-Hochberg** (Benjamini & Hochberg 1995, JRSS B 57): step-up, controls the false
  discovery rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import InputError, check_int, check_unit_open, param_error
from ._paired import min_attainable_p

__all__ = ["CORRECTIONS", "adjust_pvalues", "corrected_alpha", "too_few_pairs"]

#: Names accepted by :func:`adjust_pvalues`.
CORRECTIONS = ("holm", "bonferroni", "bh", "none")


def adjust_pvalues(pvalues: Sequence[float] | ArrayLike, method: str = "holm") -> np.ndarray:
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


def corrected_alpha(alpha: float, m: int, correction: str = "holm") -> float:
    """Per-comparison alpha of a family of ``m`` comparisons at the correction's strictest step:
    ``alpha / m`` for ``"holm"``, ``"bonferroni"`` and ``"bh"`` (the first step of Holm 1979 and
    of Benjamini & Hochberg 1995); ``alpha`` for ``"none"``.

    Examples
    --------
    >>> corrected_alpha(0.05, 4), corrected_alpha(0.05, 4, "none")
    (0.0125, 0.05)
    """
    func = "corrected_alpha"
    a = check_unit_open(alpha, "alpha", func)
    m = check_int(m, "m", func, minimum=1)
    if correction not in ("holm", "bonferroni", "bh", "none"):
        raise param_error(
            "correction", func, "one of ['holm', 'bonferroni', 'bh', 'none']", correction
        )
    return a if correction == "none" else a / m


def too_few_pairs(
    n: int, m: int, correction: str, alpha: float, n_permutations: int | None = None
) -> bool:
    """True when neither distribution-free test (Wilcoxon, randomisation) can reach ``alpha``
    over ``n`` pairs, once corrected over a family of ``m`` comparisons: ``m`` times the
    smallest p for Holm and Bonferroni (the smallest p of a family is multiplied by ``m``; Holm
    1979), the smallest p itself for Benjamini-Hochberg and no correction
    (:func:`min_attainable_p`): ``min(1, m p_min) >= alpha``.

    Examples
    --------
    >>> too_few_pairs(3, 1, "holm", 0.05), too_few_pairs(6, 1, "holm", 0.05)
    (True, False)
    >>> too_few_pairs(6, 2, "holm", 0.05)  # 2 x 2/64 = 0.0625
    True
    """
    if correction not in CORRECTIONS:
        raise param_error("correction", "too_few_pairs", f"one of {list(CORRECTIONS)}", correction)
    best = (
        min(min_attainable_p(n, "wilcoxon"), min_attainable_p(n, "randomization", n_permutations))
        if n >= 1
        else math.nan
    )
    if not math.isfinite(best):
        return True
    factor = max(1, m) if correction in ("holm", "bonferroni") else 1
    return min(1.0, factor * best) >= alpha
