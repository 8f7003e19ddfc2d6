"""Post-hoc tests over every pair of systems: pairwise paired tests with Holm's correction, and
Tukey's honestly significant difference.

* **Pairwise tests by pairs** (:func:`pairwise_tests`): mean-rank post-hoc tests (Nemenyi; every
  system against a control by mean rank) make the verdict on A against B depend on which other
  systems are in the pool (Benavoli, Corani & Mangili 2016, "Should we really use post-hoc tests
  based on mean-ranks?", JMLR 17). Their recommendation, which aeon's critical-difference
  diagram follows: compare every pair of systems by a paired test over the datasets, the
  Wilcoxon signed-rank test (or the sign test), and adjust the ``k (k - 1) / 2`` p-values with
  Holm's procedure. A diagram then joins with a bar each maximal run of systems (by mean rank)
  in which no pair differs significantly (:func:`pairwise_cliques`).
* **Tukey's HSD** (:func:`tukey_hsd`, Tukey 1949): every pair of systems with family-wise
  control from the studentized range. ``paired=True`` (the systems are evaluated on the same
  users) takes the error variance of the two-way ANOVA without replication (systems x users), as
  recommended for IR evaluation (Sakai 2014, "Statistical reform in information retrieval?");
  ``paired=False`` is :func:`scipy.stats.tukey_hsd` (one-way, independent groups).

Systems are columns, named by their position; :mod:`recoeval_tracking.reporting.posthoc` and
:mod:`recoeval_tracking.reporting.multisystem` give the same results labelled with the systems'
names.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import InputError, check_unit_open, param_error
from ._corrections import CORRECTIONS, adjust_pvalues
from ._paired import sign_test, wilcoxon_test

__all__ = ["pairwise_tests", "pairwise_cliques", "TukeyHSD", "tukey_hsd"]


def pairwise_tests(
    table: ArrayLike, *, test: str = "wilcoxon", correction: str = "holm"
) -> np.ndarray:
    """Every pair of systems compared over the datasets by a paired test, p-values adjusted
    (Benavoli, Corani & Mangili 2016): the ``k (k - 1) / 2`` raw p-values ``p_ab`` of
    :func:`wilcoxon_test` (Wilcoxon 1945; exact for up to 50 non-zero differences) or
    :func:`sign_test` go through :func:`adjust_pvalues` (Holm 1979 by default).

    Parameters
    ----------
    table : array-like of float, shape (datasets, systems)
        A metric's scores; a pair is compared over the datasets where both are defined.
    test : {"wilcoxon", "sign"}
    correction : str
        One of :data:`CORRECTIONS`.

    Returns
    -------
    numpy.ndarray of shape (systems, systems)
        The adjusted p-values, symmetric, 1 on the diagonal.

    Examples
    --------
    Three systems over six datasets: the first wins every dataset against the other two (the
    exact p of the most extreme outcome, ``2 / 2^6``), whose differences ``(1, -1, 2, -2, 3,
    -3)`` balance (``W+ = W-``, p = 1). Holm over the three pairs multiplies the smallest p by
    3 and keeps the adjusted values increasing:

    >>> t = [[20, 15, 14], [30, 13, 14], [40, 14, 12], [50, 16, 18], [60, 12, 9], [70, 15, 18]]
    >>> pairwise_tests(t).round(4).tolist()
    [[1.0, 0.0938, 0.0938], [0.0938, 1.0, 1.0], [0.0938, 1.0, 1.0]]
    """
    func = "pairwise_tests"
    if test not in ("wilcoxon", "sign"):
        raise param_error("test", func, "'wilcoxon' or 'sign'", test)
    if correction not in CORRECTIONS:
        raise param_error("correction", func, f"one of {list(CORRECTIONS)}", correction)
    try:
        t = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        t = np.empty((0, 0))
    if t.ndim != 2 or t.shape[1] < 2:
        raise param_error(
            "table", func, "a datasets x systems table with two systems or more", table
        )
    k = t.shape[1]
    pairs = list(itertools.combinations(range(k), 2))
    raw = [
        wilcoxon_test(t[:, i], t[:, j])[1] if test == "wilcoxon" else sign_test(t[:, i], t[:, j])[2]
        for i, j in pairs
    ]
    adj = adjust_pvalues(np.asarray(raw, dtype=np.float64), correction)
    out = np.ones((k, k))
    for (i, j), p in zip(pairs, adj, strict=True):
        out[i, j] = out[j, i] = p
    return out


def pairwise_cliques(
    mean_ranks: ArrayLike, pvalues: ArrayLike, alpha: float = 0.05
) -> list[list[int]]:
    """The groups a diagram joins with a bar after a pairwise post-hoc (Benavoli, Corani &
    Mangili 2016): maximal runs of systems, sorted by mean rank, in which no pair's adjusted
    p-value is below ``alpha`` (``p_ab >= alpha`` for every pair of the run). Groups of one are
    left out; each group lists the systems' positions, best first.

    Parameters
    ----------
    mean_ranks : array-like of float
        Each system's mean rank (1 = best).
    pvalues : array-like of float, shape (systems, systems)
        Adjusted p-values of every pair (:func:`pairwise_tests`), systems in the order of
        ``mean_ranks``.
    alpha : float

    Examples
    --------
    >>> P = [[1, 0.3, 0.01], [0.3, 1, 0.2], [0.01, 0.2, 1]]
    >>> pairwise_cliques([1.2, 1.9, 2.9], P)
    [[0, 1], [1, 2]]
    """
    func = "pairwise_cliques"
    alpha = check_unit_open(alpha, "alpha", func)
    R = np.asarray(mean_ranks, dtype=np.float64)
    P = np.asarray(pvalues, dtype=np.float64)
    if R.ndim != 1:
        raise param_error("mean_ranks", func, "a 1-d array of mean ranks", R)
    if P.shape != (R.size, R.size):
        raise param_error(
            "pvalues",
            func,
            f"a square array of {R.size} x {R.size} p-values",
            f"shape {P.shape}",
            got_is_text=True,
        )
    order = [int(x) for x in np.argsort(R, kind="stable")]
    out: list[list[int]] = []
    last_end = -1
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and all(
            P[order[m], order[j + 1]] >= alpha for m in range(i, j + 1)
        ):
            j += 1
        if j > i and j > last_end:
            out.append(order[i : j + 1])
            last_end = j
    return out


@dataclass(frozen=True)
class TukeyHSD:
    """Tukey's HSD over every pair of ``k`` systems (:func:`tukey_hsd`): ``k x k`` arrays whose
    entry ``[a, b]`` is of system ``a`` against system ``b``: ``diff`` (mean of ``a`` minus
    mean of ``b``), its simultaneous interval ``low``/``high`` and the adjusted ``p``."""

    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray


def tukey_hsd(X: ArrayLike, *, paired: bool = True, confidence: float = 0.95) -> TukeyHSD:
    """Tukey's honestly significant difference over every pair of the ``k`` columns of ``X``
    (Tukey 1949).

    With ``paired=True`` the rows are the same users in every system; rows with a NaN are left
    out (complete cases, ``n`` of them) and the error variance is the residual mean square of
    the two-way ANOVA without replication (Sakai 2014),

    .. math:: MSE = \\frac{\\sum_{ij} (x_{ij} - \\bar x_{i\\cdot} - \\bar x_{\\cdot j}
              + \\bar x)^2}{(n-1)(k-1)},\\quad q = \\frac{|\\bar x_a - \\bar x_b|}
              {\\sqrt{MSE / n}}

    and ``p = P(Q_{k,(n-1)(k-1)} >= q)`` from the studentized range distribution
    (:data:`scipy.stats.studentized_range`); the interval is ``diff ± q_{c} sqrt(MSE/n)``.
    With ``paired=False`` each column's defined values are an independent group and the result
    is :func:`scipy.stats.tukey_hsd`'s (one-way ANOVA error, Tukey-Kramer for unequal sizes).

    Examples
    --------
    Two systems, the second 0.1 above the first on every user, the users' own levels apart:
    paired, the residual variance is 0 and the difference certain; unpaired, the users' spread
    hides it.

    >>> X = [[0.1, 0.2], [0.5, 0.6], [0.9, 1.0]]
    >>> r = tukey_hsd(X)
    >>> round(float(r.diff[0, 1]), 6), float(r.p[0, 1])
    (-0.1, 0.0)
    >>> bool(tukey_hsd(X, paired=False).p[0, 1] > 0.5)
    True
    """
    from scipy import stats

    func = "tukey_hsd"
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 2:
        raise param_error("X", func, "a 2-d array with a column per system (at least two)", X)
    k = X.shape[1]
    if not paired:
        groups = [X[~np.isnan(X[:, j]), j] for j in range(k)]
        res = stats.tukey_hsd(*groups)
        ci = res.confidence_interval(confidence)
        return TukeyHSD(
            np.asarray(res.statistic, dtype=np.float64),
            np.asarray(ci.low, dtype=np.float64),
            np.asarray(ci.high, dtype=np.float64),
            np.asarray(res.pvalue, dtype=np.float64),
        )
    Y = X[~np.isnan(X).any(axis=1)]
    n = Y.shape[0]
    if n < 2:
        raise InputError(
            f"The 'X' parameter of {func} must have at least two rows defined "
            f"in every column for paired=True. Got {n} instead."
        )
    resid = Y - Y.mean(axis=1, keepdims=True) - Y.mean(axis=0, keepdims=True) + Y.mean()
    df = (n - 1) * (k - 1)
    se = math.sqrt(float((resid**2).sum() / df) / n)
    means = Y.mean(axis=0)
    diff = means[:, None] - means[None, :]
    crit = float(stats.studentized_range.ppf(confidence, k, df))
    if se > 0:
        p = np.asarray(stats.studentized_range.sf(np.abs(diff) / se, k, df), dtype=np.float64)
    else:
        p = np.where(diff == 0, 1.0, 0.0)
    p = np.minimum(1.0, p)
    np.fill_diagonal(p, 1.0)
    return TukeyHSD(diff, diff - crit * se, diff + crit * se, p)
