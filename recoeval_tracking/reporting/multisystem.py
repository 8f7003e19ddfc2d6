"""Statistics over several systems, labelled with the systems' names: Tukey's HSD over all pairs
and the rank-based comparison over many datasets as tables of a comparison, and the mark of a
comparison whose pairs are too few.

The statistics are those of :mod:`recoeval_tracking.stats` on arrays (systems named by their
column's position); this module takes a datasets x systems :class:`pandas.DataFrame` (or an
array) and gives its results with the systems' names, as :class:`~.compare.Comparison` shows
them:

* **Tukey's HSD** (:func:`tukey_hsd`): one row per pair of systems
  (:func:`recoeval_tracking.stats.tukey_hsd`, Tukey 1949);
* **Many datasets** (Demšar 2006): ranks per dataset (:func:`rank_table`), the Friedman test
  and the Iman-Davenport F (:func:`friedman_test`), Nemenyi's pairwise p-values
  (:func:`nemenyi_pvalues`), Holm's step-down procedure against a control
  (:func:`posthoc_vs_control`) and the cliques of a critical-difference diagram
  (:func:`cd_cliques`);
* **Too few pairs** (:func:`small_n_mark`): the direction of a comparison without stars when
  no distribution-free test can reach alpha (:func:`recoeval_tracking.stats.too_few_pairs`).

The names that moved to :mod:`recoeval_tracking.stats` (``win_tie_loss``,
``min_attainable_p``, ``too_few_pairs``, ``nemenyi_q``, ``critical_difference``) still read
from here, with a :class:`DeprecationWarning`, for one release.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import stats as st
from .._validation import param_error
from ._moved import moved_names

__all__ = [
    "small_n_mark",
    "SMALL_N_MARK",
    "tukey_hsd",
    "rank_table",
    "FriedmanResult",
    "friedman_test",
    "nemenyi_pvalues",
    "posthoc_vs_control",
    "cd_cliques",
]


__getattr__ = moved_names(__name__)


#: Appended to a mark when the pairs are too few for a distribution-free test to reach alpha.
SMALL_N_MARK = "†"


def small_n_mark(mark: str, small: bool) -> str:
    """The mark shown for a comparison: ``mark`` itself, or with too few pairs
    (:func:`~recoeval_tracking.stats.too_few_pairs`) only its direction (``▲``/``▼``, never
    stars) followed by :data:`SMALL_N_MARK`: with 3 seeds neither Wilcoxon nor the
    randomisation test can go below p = 0.25, and stars from a t-test alone would rest on its
    normality assumption."""
    if not small:
        return mark
    return (mark[:1] if mark else "") + SMALL_N_MARK


def tukey_hsd(
    X, names: Sequence[str] | None = None, *, paired: bool = True, confidence: float = 0.95
) -> pd.DataFrame:
    """Tukey's honestly significant difference over every pair of the ``k`` columns of ``X``
    (:func:`recoeval_tracking.stats.tukey_hsd`: paired by row, the two-way ANOVA's error,
    unless ``paired=False``), the systems named by ``names`` (default ``"0"``, ``"1"``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per pair ``(a, b)``, ``a`` before ``b`` in column order: ``a, b, diff``
        (mean of ``a`` minus mean of ``b``), ``low, high, p``.
    """
    X = np.asarray(X, dtype=np.float64)
    k = X.shape[1] if X.ndim == 2 else 0
    names = [str(i) for i in range(k)] if names is None else [str(n) for n in names]
    if k >= 2 and len(names) != k:
        raise param_error("names", "tukey_hsd", f"{k} names (one per column of X)", names)
    res = st.tukey_hsd(X, paired=paired, confidence=confidence)
    rows = [
        {
            "a": names[i],
            "b": names[j],
            "diff": float(res.diff[i, j]),
            "low": float(res.low[i, j]),
            "high": float(res.high[i, j]),
            "p": float(res.p[i, j]),
        }
        for i in range(k)
        for j in range(i + 1, k)
    ]
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
    """Rank of each system (column) on each dataset (row), labelled: 1 for the best, the average
    of the tied ranks for ties (:func:`recoeval_tracking.stats.rank_table`; Demšar 2006). Rows
    with a NaN are left out."""
    t = _table(table, "rank_table").dropna(axis=0, how="any")
    ranks = st.rank_table(t.to_numpy(), lower_is_better) if len(t) else np.empty(t.shape)
    return pd.DataFrame(ranks, index=t.index, columns=t.columns)


@dataclass(frozen=True)
class FriedmanResult(st.FriedmanResult):
    """The Friedman test's result (:class:`recoeval_tracking.stats.FriedmanResult`, whose
    fields it has and documents) with its ``mean_ranks`` labelled: a :class:`pandas.Series`
    indexed by the systems' names."""

    mean_ranks: pd.Series


def friedman_test(
    table, lower_is_better: bool = False, tie_correction: bool = True
) -> FriedmanResult:
    """The Friedman test (Friedman 1937) on a datasets x systems table of scores
    (:func:`recoeval_tracking.stats.friedman_test`), its mean ranks labelled by the table's
    columns. Datasets with a NaN are left out."""
    t = _table(table, "rank_table")
    r = st.friedman_test(t.to_numpy(), lower_is_better, tie_correction)
    fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
    return FriedmanResult(**{**fields, "mean_ranks": pd.Series(r.mean_ranks, index=t.columns)})


def nemenyi_pvalues(mean_ranks: pd.Series, n: int) -> pd.DataFrame:
    """Nemenyi's p-value for every pair of systems
    (:func:`recoeval_tracking.stats.nemenyi_pvalues`): a square table, systems x systems, 1 on
    the diagonal."""
    R = pd.Series(mean_ranks, dtype=np.float64)
    return pd.DataFrame(st.nemenyi_pvalues(R.to_numpy(), n), index=R.index, columns=R.index)


def posthoc_vs_control(
    mean_ranks: pd.Series, n: int, control: str, correction: str = "holm"
) -> pd.DataFrame:
    """Every system against the ``control`` (a system's name) by mean rank
    (:func:`recoeval_tracking.stats.posthoc_vs_control`; Demšar 2006, section 3.2.2), adjusted
    with ``correction`` (Holm by default) over the ``k - 1`` comparisons.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (the control left out): ``mean_rank, z, p, p_adj``.
    """
    R = pd.Series(mean_ranks, dtype=np.float64)
    if control not in R.index:
        raise param_error("control", "posthoc_vs_control", f"one of {list(R.index)}", control)
    r = st.posthoc_vs_control(R.to_numpy(), n, R.index.get_loc(control), correction)
    others = R.iloc[r.others]
    return pd.DataFrame(
        {"mean_rank": others, "z": r.z, "p": r.p, "p_adj": r.p_adj}, index=others.index
    )


def cd_cliques(mean_ranks: pd.Series, cd: float) -> list[list[str]]:
    """The groups a critical-difference diagram joins with a bar, by name
    (:func:`recoeval_tracking.stats.cd_cliques`): maximal runs of systems (sorted by mean rank)
    whose first and last mean ranks differ by less than ``cd``. Groups of one are left out."""
    R = pd.Series(mean_ranks, dtype=np.float64)
    names = [str(x) for x in R.index]
    return [[names[i] for i in group] for group in st.cd_cliques(R.to_numpy(), cd)]
