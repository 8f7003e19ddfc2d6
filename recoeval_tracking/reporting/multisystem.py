"""Statistics over several systems at once: win/tie/loss counts, the smallest p-value a test can
reach, Tukey's HSD over all pairs, and the rank-based comparison over many datasets.

Plain numpy and scipy, like :mod:`recoeval_tracking.reporting.stats` (the paired tests of one run
against a baseline live there; this module adds what needs every system together).

What is computed
----------------
* **Win/tie/loss** (:func:`win_tie_loss`): users where one system is better, equal, worse than
  another, over the users defined in both.
* **Smallest attainable p** (:func:`min_attainable_p`): a distribution-free test over ``n`` pairs
  cannot give a p-value below ``2 / 2^n`` (two-sided, exact sign-flip or Wilcoxon: 0.25 for 3
  pairs); after a Holm or Bonferroni correction over ``m`` comparisons, ``m`` times that.
  :func:`too_few_pairs` says when such a test cannot reach ``alpha``: the report then refuses to
  print a t-test's stars alone.
* **Tukey's HSD** (:func:`tukey_hsd`, Tukey 1949): every pair of systems with family-wise control
  from the studentized range. ``paired=True`` (default: the systems are evaluated on the same
  users) takes the error variance of the two-way ANOVA without replication (systems x users), as
  recommended for IR evaluation (Sakai 2014, "Statistical reform in information retrieval?");
  ``paired=False`` is :func:`scipy.stats.tukey_hsd` (one-way, independent groups).
* **Many datasets** (Demšar 2006, "Statistical comparisons of classifiers over multiple data
  sets", JMLR 7): ranks per dataset (:func:`rank_table`, 1 = best, average ranks for ties), the
  Friedman test and the Iman-Davenport F (:func:`friedman_test`), Nemenyi's critical difference
  (:func:`nemenyi_q`, :func:`critical_difference`) and pairwise p-values
  (:func:`nemenyi_pvalues`), Holm's step-down procedure against a control
  (:func:`posthoc_vs_control`), and the cliques of a critical-difference diagram
  (:func:`cd_cliques`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..stats import adjust_pvalues
from ._moved import moved_names

__all__ = [
    "win_tie_loss",
    "small_n_mark",
    "SMALL_N_MARK",
    "tukey_hsd",
    "rank_table",
    "FriedmanResult",
    "friedman_test",
    "nemenyi_q",
    "critical_difference",
    "nemenyi_pvalues",
    "posthoc_vs_control",
    "cd_cliques",
]

#: Names that moved to :mod:`recoeval_tracking.stats`: read from here with a warning.
_MOVED = dict.fromkeys(("min_attainable_p", "too_few_pairs"), "recoeval_tracking.stats")

__getattr__ = moved_names(__name__, _MOVED)


# ---------------------------------------------------------------------------------------------
# Pairs of systems
# ---------------------------------------------------------------------------------------------


def win_tie_loss(a, b, *, lower_is_better: bool = False) -> tuple[int, int, int]:
    """Users where ``a`` is better than, equal to, worse than ``b`` (pairs with a NaN side left
    out). "Better" is greater unless ``lower_is_better``.

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


#: Appended to a mark when the pairs are too few for a distribution-free test to reach alpha.
SMALL_N_MARK = "†"


def small_n_mark(mark: str, small: bool) -> str:
    """The mark shown for a comparison: ``mark`` itself, or with too few pairs
    (:func:`too_few_pairs`) only its direction (``▲``/``▼``, never stars) followed by
    :data:`SMALL_N_MARK`: with 3 seeds neither Wilcoxon
    nor the randomisation test can go below p = 0.25, and stars from a t-test alone would rest
    on its normality assumption."""
    if not small:
        return mark
    return (mark[:1] if mark else "") + SMALL_N_MARK


# ---------------------------------------------------------------------------------------------
# Tukey's HSD
# ---------------------------------------------------------------------------------------------


def tukey_hsd(
    X, names: Sequence[str] | None = None, *, paired: bool = True, confidence: float = 0.95
) -> pd.DataFrame:
    """Tukey's honestly significant difference over every pair of the ``k`` columns of ``X``.

    With ``paired=True`` the rows are the same users in every system; rows with a NaN are left
    out (complete cases, ``n`` of them) and the error variance is the residual mean square of
    the two-way ANOVA without replication,

    .. math:: MSE = \\frac{\\sum_{ij} (x_{ij} - \\bar x_{i\\cdot} - \\bar x_{\\cdot j}
              + \\bar x)^2}{(n-1)(k-1)},\\quad q = \\frac{|\\bar x_a - \\bar x_b|}
              {\\sqrt{MSE / n}}

    and ``p = P(Q_{k,(n-1)(k-1)} >= q)`` from the studentized range distribution
    (:data:`scipy.stats.studentized_range`); the interval is ``diff ± q_{c} sqrt(MSE/n)``.
    With ``paired=False`` each column's defined values are an independent group and the result
    is :func:`scipy.stats.tukey_hsd`'s (one-way ANOVA error, Tukey-Kramer for unequal sizes).

    Returns
    -------
    pandas.DataFrame
        One row per pair ``(a, b)``, ``a`` before ``b`` in column order: ``a, b, diff``
        (mean of ``a`` minus mean of ``b``), ``low, high, p``.
    """
    from scipy import stats

    func = "tukey_hsd"
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 2:
        raise param_error("X", func, "a 2-d array with a column per system (at least two)", X)
    k = X.shape[1]
    names = [str(i) for i in range(k)] if names is None else [str(n) for n in names]
    if len(names) != k:
        raise param_error("names", func, f"{k} names (one per column of X)", names)
    rows = []
    if paired:
        Y = X[~np.isnan(X).any(axis=1)]
        n = Y.shape[0]
        if n < 2:
            raise InputError(
                f"The 'X' parameter of {func} must have at least two rows defined "
                f"in every column for paired=True. Got {n} instead."
            )
        resid = Y - Y.mean(axis=1, keepdims=True) - Y.mean(axis=0, keepdims=True) + Y.mean()
        df = (n - 1) * (k - 1)
        mse = float((resid**2).sum() / df)
        se = math.sqrt(mse / n)
        means = Y.mean(axis=0)
        crit = float(stats.studentized_range.ppf(confidence, k, df))
        for i in range(k):
            for j in range(i + 1, k):
                d = float(means[i] - means[j])
                if se > 0:
                    p = float(stats.studentized_range.sf(abs(d) / se, k, df))
                else:
                    p = 1.0 if d == 0 else 0.0
                rows.append(
                    {
                        "a": names[i],
                        "b": names[j],
                        "diff": d,
                        "low": d - crit * se,
                        "high": d + crit * se,
                        "p": min(1.0, p),
                    }
                )
    else:
        groups = [X[~np.isnan(X[:, j]), j] for j in range(k)]
        res = stats.tukey_hsd(*groups)
        ci = res.confidence_interval(confidence)
        for i in range(k):
            for j in range(i + 1, k):
                rows.append(
                    {
                        "a": names[i],
                        "b": names[j],
                        "diff": float(res.statistic[i, j]),
                        "low": float(ci.low[i, j]),
                        "high": float(ci.high[i, j]),
                        "p": float(res.pvalue[i, j]),
                    }
                )
    return pd.DataFrame(rows, columns=["a", "b", "diff", "low", "high", "p"])


# ---------------------------------------------------------------------------------------------
# Many datasets (Demšar 2006)
# ---------------------------------------------------------------------------------------------


def _table(table, func: str) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        table = pd.DataFrame(np.asarray(table, dtype=np.float64))
    if table.shape[0] < 1 or table.shape[1] < 2:
        raise param_error(
            "table",
            func,
            "a datasets x systems table with two systems or more",
            f"shape {table.shape}",
            got_is_text=True,
        )
    return table.astype(np.float64)


def rank_table(table, lower_is_better: bool = False) -> pd.DataFrame:
    """Rank of each system (column) on each dataset (row): 1 for the best, the average of the
    tied ranks for ties (Demšar 2006, section 3.2.2). Rows with a NaN are left out."""
    from scipy import stats

    t = _table(table, "rank_table").dropna(axis=0, how="any")
    values = t.to_numpy() if lower_is_better else -t.to_numpy()
    ranks = stats.rankdata(values, axis=1, method="average")
    return pd.DataFrame(ranks, index=t.index, columns=t.columns)


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test over ``n_datasets`` datasets and ``n_systems`` systems.

    ``statistic`` is the chi-square statistic (tie-corrected unless asked otherwise),
    ``pvalue`` its p-value with ``k - 1`` degrees of freedom; ``iman_davenport`` is
    ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` with its p-value from ``F(k-1, (k-1)(N-1))``
    (Iman & Davenport 1980), which Demšar recommends as less conservative; NaN when every
    dataset ranks the systems alike (the denominator is 0). ``note`` says why a value is NaN
    (empty when none is)."""

    mean_ranks: pd.Series
    statistic: float
    pvalue: float
    iman_davenport: float
    pvalue_iman_davenport: float
    n_datasets: int
    n_systems: int
    note: str = ""


def friedman_test(
    table, lower_is_better: bool = False, tie_correction: bool = True
) -> FriedmanResult:
    """The Friedman test (Friedman 1937) on a datasets x systems table of scores.

    .. math:: \\chi^2_F = \\frac{12N}{k(k+1)}\\Big[\\sum_j R_j^2 - \\frac{k(k+1)^2}{4}\\Big]

    with ``R_j`` the mean rank of system ``j`` over the ``N`` datasets (:func:`rank_table`). With
    ``tie_correction`` (the default, as :func:`scipy.stats.friedmanchisquare`) it is divided by
    ``1 - sum(t^3 - t) / (N k (k^2 - 1))`` over the groups of ``t`` tied values of each dataset;
    without it, it is Demšar's (2006) equation. Datasets with a NaN are left out.
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
        for row in ranks.to_numpy():
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
    ``q_0.05 = 1.960, 2.343, 2.569, ...`` for ``k = 2, 3, 4, ...``)."""
    from scipy import stats

    if int(k) != k or k < 2:
        raise param_error("k", "nemenyi_q", "an int >= 2", k)
    return float(stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf)) / math.sqrt(2.0)


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks, ``CD = q_alpha sqrt(k (k+1) / (6 N))``
    (Demšar 2006, section 3.2.2): two systems whose mean ranks differ by at least this much
    differ significantly."""
    if int(n) != n or n < 1:
        raise param_error("n", "critical_difference", "an int >= 1 (the datasets)", n)
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def nemenyi_pvalues(mean_ranks: pd.Series, n: int) -> pd.DataFrame:
    """Nemenyi's p-value for every pair of systems: ``P(Q_{k,inf} >= sqrt(2) |R_a - R_b| / SE)``
    with ``SE = sqrt(k (k+1) / (6 N))``, the family-wise adjusted p-value of the test whose
    threshold is :func:`critical_difference`. A square table (1 on the diagonal)."""
    from scipy import stats

    R = pd.Series(mean_ranks, dtype=np.float64)
    k = R.size
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    diff = np.abs(R.to_numpy()[:, None] - R.to_numpy()[None, :])
    p = stats.studentized_range.sf(math.sqrt(2.0) * diff / se, k, np.inf)
    p = np.where(diff == 0, 1.0, np.minimum(1.0, p))
    return pd.DataFrame(p, index=R.index, columns=R.index)


def posthoc_vs_control(
    mean_ranks: pd.Series, n: int, control: str, correction: str = "holm"
) -> pd.DataFrame:
    """Every system against a control by mean rank (Demšar 2006, section 3.2.2):
    ``z = (R_i - R_c) / sqrt(k (k+1) / (6 N))``, two-sided normal p-values, adjusted with
    ``correction`` (Holm by default) over the ``k - 1`` comparisons.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (the control left out): ``mean_rank, z, p, p_adj``.
    """
    from scipy import stats

    R = pd.Series(mean_ranks, dtype=np.float64)
    if control not in R.index:
        raise param_error("control", "posthoc_vs_control", f"one of {list(R.index)}", control)
    k = R.size
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    others = R.drop(control)
    z = (others - R[control]) / se
    p = 2.0 * stats.norm.sf(np.abs(z.to_numpy()))
    return pd.DataFrame(
        {"mean_rank": others, "z": z, "p": p, "p_adj": adjust_pvalues(p, correction)},
        index=others.index,
    )


def cd_cliques(mean_ranks: pd.Series, cd: float) -> list[list[str]]:
    """The groups a critical-difference diagram joins with a bar: maximal runs of systems
    (sorted by mean rank) whose first and last mean ranks differ by less than ``cd``, i.e. whose
    members are pairwise not significantly different. Groups of one are left out."""
    R = pd.Series(mean_ranks, dtype=np.float64).sort_values(kind="stable")
    names, r = list(R.index), R.to_numpy()
    out: list[list[str]] = []
    last_end = -1
    for i in range(len(r)):
        j = i
        while j + 1 < len(r) and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and j > last_end:
            out.append([str(x) for x in names[i : j + 1]])
            last_end = j
    return out
