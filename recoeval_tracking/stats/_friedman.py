"""Many systems over many datasets by their ranks (Demšar 2006, "Statistical comparisons of
classifiers over multiple data sets", JMLR 7): the Friedman test and its post-hoc tests.

The input is a datasets x systems table of scores (a 2-d array: one row per dataset, one column
per system; a row with a NaN is left out):

* ranks per dataset (:func:`rank_table`, 1 = best, average ranks for ties) and the Friedman test
  with the Iman-Davenport F (:func:`friedman_test`);
* Nemenyi's critical value and critical difference of mean ranks (:func:`nemenyi_q`,
  :func:`critical_difference`) and its p-value for every pair (:func:`nemenyi_pvalues`);
* every system against a control by mean rank, Holm-adjusted (:func:`posthoc_vs_control`);
* the groups a critical-difference diagram joins with a bar (:func:`cd_cliques`).

Systems are named by their column's position; :mod:`recoeval_tracking.reporting.multisystem`
gives the same results labelled with the systems' names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import InputError, check_int, param_error
from ._corrections import adjust_pvalues

__all__ = [
    "rank_table",
    "FriedmanResult",
    "friedman_test",
    "nemenyi_q",
    "critical_difference",
    "nemenyi_pvalues",
    "ControlComparison",
    "posthoc_vs_control",
    "cd_cliques",
]


def _scores(table: ArrayLike, func: str) -> np.ndarray:
    """A datasets x systems table as a 2-d float array with a row at least and two systems."""
    try:
        t = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error("table", func, "a datasets x systems table of numbers", table) from None
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
        raise param_error(
            "table",
            func,
            "a datasets x systems table with two systems or more",
            f"shape {t.shape}",
            got_is_text=True,
        )
    return t


def _mean_ranks(mean_ranks: ArrayLike, func: str) -> np.ndarray:
    r = np.asarray(mean_ranks, dtype=np.float64)
    if r.ndim != 1 or r.size < 2:
        raise param_error("mean_ranks", func, "a 1-d array of two systems' mean ranks or more", r)
    return r


def rank_table(table: ArrayLike, lower_is_better: bool = False) -> np.ndarray:
    """Rank of each system (column) on each dataset (row): 1 for the best, the average of the
    tied ranks for ties (Demšar 2006, section 3.2.2): on a dataset whose scores are
    ``x_1 > x_2 = x_3``, the ranks ``1, (2 + 3) / 2, (2 + 3) / 2``. Rows with a NaN are left out.

    Examples
    --------
    >>> rank_table([[0.9, 0.7, 0.7], [0.5, 0.6, float("nan")], [0.1, 0.3, 0.2]]).tolist()
    [[1.0, 2.5, 2.5], [3.0, 1.0, 2.0]]
    """
    from scipy import stats

    t = _scores(table, "rank_table")
    t = t[~np.isnan(t).any(axis=1)]
    return np.asarray(stats.rankdata(t if lower_is_better else -t, axis=1, method="average"))


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test over ``n_datasets`` datasets and ``n_systems`` systems.

    ``mean_ranks`` holds each system's (column's) mean rank; ``statistic`` is the chi-square
    statistic (tie-corrected unless asked otherwise), ``pvalue`` its p-value with ``k - 1``
    degrees of freedom; ``iman_davenport`` is ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` with
    its p-value from ``F(k-1, (k-1)(N-1))`` (Iman & Davenport 1980), which Demšar recommends as
    less conservative; NaN when every dataset ranks the systems alike (the denominator is 0).
    ``note`` says why a value is NaN (empty when none is)."""

    mean_ranks: np.ndarray
    statistic: float
    pvalue: float
    iman_davenport: float
    pvalue_iman_davenport: float
    n_datasets: int
    n_systems: int
    note: str = ""


def friedman_test(
    table: ArrayLike, lower_is_better: bool = False, tie_correction: bool = True
) -> FriedmanResult:
    """The Friedman test (Friedman 1937) on a datasets x systems table of scores.

    .. math:: \\chi^2_F = \\frac{12N}{k(k+1)}\\Big[\\sum_j R_j^2 - \\frac{k(k+1)^2}{4}\\Big]

    with ``R_j`` the mean rank of system ``j`` over the ``N`` datasets (:func:`rank_table`). With
    ``tie_correction`` (the default, as :func:`scipy.stats.friedmanchisquare`) it is divided by
    ``1 - sum(t^3 - t) / (N k (k^2 - 1))`` over the groups of ``t`` tied values of each dataset;
    without it, it is Demšar's (2006) equation. Datasets with a NaN are left out.

    Examples
    --------
    Three datasets that rank three systems alike: ``R = (1, 2, 3)``,
    ``chi2 = 12 * 3 / 12 * (14 - 12) = 6``, ``p = exp(-6 / 2)`` (2 degrees of freedom); the
    Iman-Davenport F is undefined (``N (k - 1) - chi2 = 0``):

    >>> r = friedman_test([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.7, 0.4, 0.3]])
    >>> r.mean_ranks.tolist(), r.statistic, round(r.pvalue, 6), round(math.exp(-3), 6)
    ([1.0, 2.0, 3.0], 6.0, 0.049787, 0.049787)
    >>> r.iman_davenport
    nan
    """
    from scipy import stats

    ranks = rank_table(table, lower_is_better)
    N, k = ranks.shape
    if N < 2:
        raise InputError(
            f"The 'table' parameter of friedman_test must hold at least two "
            f"datasets with every system defined. Got {N} instead."
        )
    R = ranks.mean(axis=0)
    chi2 = 12.0 * N / (k * (k + 1)) * (float((R**2).sum()) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        ties = 0.0
        for row in ranks:
            _, counts = np.unique(row, return_counts=True)
            ties += float((counts**3 - counts).sum())
        c = 1.0 - ties / (N * k * (k * k - 1))
        chi2 = chi2 / c if c > 0 else math.nan
    p = float(stats.chi2.sf(chi2, k - 1)) if math.isfinite(chi2) else math.nan
    denom = N * (k - 1) - chi2
    # every dataset ranking the systems alike makes the denominator 0: F is undefined there
    # (its limit, p = 0, would claim more than N datasets can show)
    ff = (N - 1) * chi2 / denom if denom > 1e-12 else math.nan
    pf = float(stats.f.sf(ff, k - 1, (k - 1) * (N - 1))) if math.isfinite(ff) else math.nan
    note = (
        "Friedman statistic undefined: every dataset ties every system"
        if not math.isfinite(chi2)
        else "Iman-Davenport F undefined: every dataset ranks the "
        f"systems alike (N(k-1) - chi2 = {N * (k - 1)} - {chi2:g} = 0, a zero "
        "denominator); the Friedman chi2 and its p stand"
        if not math.isfinite(ff)
        else ""
    )
    return FriedmanResult(R, float(chi2), p, float(ff), pf, int(N), int(k), note)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value ``q_alpha`` of the Nemenyi test for ``k`` systems: the studentized range
    quantile with infinite degrees of freedom divided by ``sqrt(2)`` (Demšar 2006, Table 5a:
    ``q_0.05 = 1.960, 2.343, 2.569, ...`` for ``k = 2, 3, 4, ...``).

    Examples
    --------
    >>> round(nemenyi_q(2), 3), round(nemenyi_q(4), 3)  # Demšar's Table 5a
    (1.96, 2.569)
    """
    from scipy import stats

    if int(k) != k or k < 2:
        raise param_error("k", "nemenyi_q", "an int >= 2", k)
    return float(stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf)) / math.sqrt(2.0)


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks, ``CD = q_alpha sqrt(k (k+1) / (6 N))``
    (Demšar 2006, section 3.2.2): two systems whose mean ranks differ by at least this much
    differ significantly.

    Examples
    --------
    Demšar's worked example, 4 systems over 14 datasets: ``2.569 sqrt(4 * 5 / (6 * 14))``:

    >>> round(critical_difference(4, 14), 2)
    1.25
    """
    if int(n) != n or n < 1:
        raise param_error("n", "critical_difference", "an int >= 1 (the datasets)", n)
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def nemenyi_pvalues(mean_ranks: ArrayLike, n: int) -> np.ndarray:
    """Nemenyi's p-value for every pair of systems: ``P(Q_{k,inf} >= sqrt(2) |R_a - R_b| / SE)``
    with ``SE = sqrt(k (k+1) / (6 N))`` (Demšar 2006, section 3.2.2), the family-wise adjusted
    p-value of the test whose threshold is :func:`critical_difference`. A square array, systems
    in the order of ``mean_ranks`` (1 on the diagonal).

    Examples
    --------
    Two systems whose mean ranks differ by exactly the critical difference: ``p = alpha``.

    >>> cd = critical_difference(3, 10)
    >>> round(float(nemenyi_pvalues([1.0, 1.0 + cd, 2.0], 10)[0, 1]), 6)
    0.05
    """
    from scipy import stats

    R = _mean_ranks(mean_ranks, "nemenyi_pvalues")
    n = check_int(n, "n", "nemenyi_pvalues", minimum=1)
    k = R.size
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    diff = np.abs(R[:, None] - R[None, :])
    p = stats.studentized_range.sf(math.sqrt(2.0) * diff / se, k, np.inf)
    return np.where(diff == 0, 1.0, np.minimum(1.0, p))


@dataclass(frozen=True)
class ControlComparison:
    """Every system but the control against it (:func:`posthoc_vs_control`): ``others`` holds
    their positions, and each array one value per other system: ``z``, the two-sided ``p`` and
    its adjusted ``p_adj``."""

    others: np.ndarray
    z: np.ndarray
    p: np.ndarray
    p_adj: np.ndarray


def posthoc_vs_control(
    mean_ranks: ArrayLike, n: int, control: int, correction: str = "holm"
) -> ControlComparison:
    """Every system against a control by mean rank (Demšar 2006, section 3.2.2):
    ``z = (R_i - R_c) / sqrt(k (k+1) / (6 N))``, two-sided normal p-values, adjusted with
    ``correction`` (Holm 1979 by default) over the ``k - 1`` comparisons.

    Parameters
    ----------
    mean_ranks : array-like of float
        Each system's mean rank over the ``n`` datasets.
    n : int
        The datasets.
    control : int
        The control's position in ``mean_ranks``.
    correction : str
        One of :data:`CORRECTIONS`.

    Examples
    --------
    Demšar's worked example, the fourth system (mean rank 1.964) as control: ``z = 2.416,
    0.074, 1.904`` and ``p = 0.016, 0.941, 0.057`` for the others:

    >>> r = posthoc_vs_control([3.143, 2.000, 2.893, 1.964], 14, control=3)
    >>> r.others.tolist(), r.z.round(3).tolist(), r.p.round(3).tolist()
    ([0, 1, 2], [2.416, 0.074, 1.904], [0.016, 0.941, 0.057])
    """
    from scipy import stats

    func = "posthoc_vs_control"
    R = _mean_ranks(mean_ranks, func)
    k = R.size
    control = check_int(control, "control", func, minimum=0, maximum=k - 1)
    n = check_int(n, "n", func, minimum=1)
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    others = np.array([i for i in range(k) if i != control], dtype=np.int64)
    z = (R[others] - R[control]) / se
    p = 2.0 * stats.norm.sf(np.abs(z))
    return ControlComparison(others, z, p, adjust_pvalues(p, correction))


def cd_cliques(mean_ranks: ArrayLike, cd: float) -> list[list[int]]:
    """The groups a critical-difference diagram joins with a bar (Demšar 2006, Figure 1):
    maximal runs of systems (sorted by mean rank) whose first and last mean ranks differ by
    less than ``cd``, i.e. whose members are pairwise not significantly different
    (``|R_a - R_b| < CD``). Groups of one are left out; each group lists the systems'
    positions in ``mean_ranks``, best first.

    Examples
    --------
    >>> cd_cliques([1.0, 3.5, 1.8, 2.9], cd=1.2)  # 1.0, 1.8 | 1.8, 2.9 | 2.9, 3.5
    [[0, 2], [2, 3], [3, 1]]
    """
    R = _mean_ranks(mean_ranks, "cd_cliques")
    order = np.argsort(R, kind="stable")
    r = R[order]
    out: list[list[int]] = []
    last_end = -1
    for i in range(len(r)):
        j = i
        while j + 1 < len(r) and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and j > last_end:
            out.append([int(x) for x in order[i : j + 1]])
            last_end = j
    return out
