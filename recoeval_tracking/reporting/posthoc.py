"""Post-hoc tests by pairs over datasets, labelled with the systems' names: pairwise Wilcoxon
signed-rank (or sign) tests with Holm, and the groups a critical-difference diagram joins.

The tests are :func:`recoeval_tracking.stats.pairwise_tests` and
:func:`recoeval_tracking.stats.pairwise_cliques` (Benavoli, Corani & Mangili 2016, "Should we
really use post-hoc tests based on mean-ranks?", JMLR 17: compare every pair of systems by a
paired test over the datasets and adjust the ``k (k - 1) / 2`` p-values with Holm's procedure,
as aeon's critical-difference diagram does; autorank 1.3.0 uses Friedman's test and Nemenyi's
for more than two systems with non-normal scores); this module takes and gives tables labelled
with the systems' names.

:data:`POSTHOCS` names the post-hoc procedures ``Comparison.cd_diagram(metric, posthoc=...)``
accepts: ``"wilcoxon"`` and ``"sign"`` (pairwise, Holm) and ``"nemenyi"`` (mean ranks, the
critical difference).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import stats as st
from .._validation import param_error

__all__ = ["POSTHOCS", "pairwise_tests", "pairwise_cliques"]

#: Post-hoc procedures of a critical-difference diagram.
POSTHOCS = ("wilcoxon", "sign", "nemenyi")


def pairwise_tests(table, *, test: str = "wilcoxon", correction: str = "holm") -> pd.DataFrame:
    """Every pair of systems compared over the datasets by a paired test, p-values adjusted
    (:func:`recoeval_tracking.stats.pairwise_tests`).

    Parameters
    ----------
    table : pandas.DataFrame
        Datasets (rows) x systems (columns) of a metric's scores; a pair is compared over the
        datasets where both are defined.
    test : {"wilcoxon", "sign"}
        :func:`~recoeval_tracking.stats.wilcoxon_test` (exact p for up to 50 non-zero
        differences) or :func:`~recoeval_tracking.stats.sign_test`.
    correction : str
        Adjustment over the ``k (k - 1) / 2`` pairs
        (:func:`~recoeval_tracking.stats.adjust_pvalues`; Holm by default).

    Returns
    -------
    pandas.DataFrame
        A square table of adjusted p-values, systems x systems, 1 on the diagonal.
    """
    func = "pairwise_tests"
    if test not in ("wilcoxon", "sign"):
        raise param_error("test", func, "'wilcoxon' or 'sign'", test)
    if correction not in st.CORRECTIONS:
        raise param_error("correction", func, f"one of {list(st.CORRECTIONS)}", correction)
    if not isinstance(table, pd.DataFrame) or table.shape[1] < 2:
        raise param_error(
            "table", func, "a datasets x systems DataFrame with two systems or more", table
        )
    names = list(table.columns)
    out = st.pairwise_tests(table.to_numpy(dtype=np.float64), test=test, correction=correction)
    return pd.DataFrame(out, index=names, columns=names)


def pairwise_cliques(
    mean_ranks: pd.Series, pvalues: pd.DataFrame, alpha: float = 0.05
) -> list[list[str]]:
    """The groups a diagram joins with a bar after a pairwise post-hoc, by name
    (:func:`recoeval_tracking.stats.pairwise_cliques`): maximal runs of systems (sorted by mean
    rank) in which no pair's adjusted p-value is below ``alpha``. Groups of one are left out.

    Examples
    --------
    >>> R = pd.Series({"a": 1.2, "b": 1.9, "c": 2.9})
    >>> P = pd.DataFrame([[1, 0.3, 0.01], [0.3, 1, 0.2], [0.01, 0.2, 1]], index=list("abc"),
    ...                  columns=list("abc"))
    >>> pairwise_cliques(R, P)
    [['a', 'b'], ['b', 'c']]
    """
    R = pd.Series(mean_ranks, dtype=np.float64)
    names = [str(x) for x in R.index]
    P = pvalues.copy()
    P.index = [str(x) for x in P.index]
    P.columns = [str(x) for x in P.columns]
    aligned = P.loc[names, names].to_numpy(dtype=np.float64)
    return [[names[i] for i in g] for g in st.pairwise_cliques(R.to_numpy(), aligned, alpha)]
