"""Post-hoc tests by pairs over datasets: pairwise Wilcoxon signed-rank (or sign) tests with Holm.

Mean-rank post-hoc tests (Nemenyi; every system against a control by mean rank) make the
verdict on A against B depend on which other systems are in the pool (Benavoli, Corani & Mangili
2016, "Should we really use post-hoc tests based on mean-ranks?", JMLR 17). Their recommendation,
which aeon's critical-difference diagram follows (autorank 1.3.0 does not: for more than two
systems with non-normal scores it uses Friedman's test and Nemenyi's): compare every pair of systems
by a paired test over the datasets, the Wilcoxon signed-rank test (or the sign test), and adjust
the ``k (k - 1) / 2`` p-values with Holm's procedure. A diagram then joins with a bar each
maximal run of systems (by mean rank) in which no pair differs significantly
(:func:`pairwise_cliques`).

:data:`POSTHOCS` names the post-hoc procedures ``Comparison.cd_diagram(metric, posthoc=...)``
accepts: ``"wilcoxon"`` and ``"sign"`` (pairwise, Holm) and ``"nemenyi"`` (mean ranks, the
critical difference).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .._validation import check_unit_open, param_error
from ..stats import CORRECTIONS, adjust_pvalues, sign_test, wilcoxon_test

__all__ = ["POSTHOCS", "pairwise_tests", "pairwise_cliques"]

#: Post-hoc procedures of a critical-difference diagram.
POSTHOCS = ("wilcoxon", "sign", "nemenyi")


def pairwise_tests(table, *, test: str = "wilcoxon", correction: str = "holm") -> pd.DataFrame:
    """Every pair of systems compared over the datasets by a paired test, p-values adjusted.

    Parameters
    ----------
    table : pandas.DataFrame
        Datasets (rows) x systems (columns) of a metric's scores; a pair is compared over the
        datasets where both are defined.
    test : {"wilcoxon", "sign"}
        :func:`~recoeval_tracking.reporting.stats.wilcoxon_test` (exact p for up to 50 non-zero
        differences) or :func:`~recoeval_tracking.reporting.stats.sign_test`.
    correction : str
        Adjustment over the ``k (k - 1) / 2`` pairs (:func:`adjust_pvalues`; Holm by default).

    Returns
    -------
    pandas.DataFrame
        A square table of adjusted p-values, systems x systems, 1 on the diagonal.
    """
    func = "pairwise_tests"
    if test not in ("wilcoxon", "sign"):
        raise param_error("test", func, "'wilcoxon' or 'sign'", test)
    if correction not in CORRECTIONS:
        raise param_error("correction", func, f"one of {list(CORRECTIONS)}", correction)
    if not isinstance(table, pd.DataFrame) or table.shape[1] < 2:
        raise param_error(
            "table", func, "a datasets x systems DataFrame with two systems or more", table
        )
    t = table.astype(np.float64)
    names = list(t.columns)
    pairs = list(itertools.combinations(range(len(names)), 2))
    raw = []
    for i, j in pairs:
        a, b = t.iloc[:, i].to_numpy(), t.iloc[:, j].to_numpy()
        raw.append(wilcoxon_test(a, b)[1] if test == "wilcoxon" else sign_test(a, b)[2])
    adj = adjust_pvalues(np.asarray(raw, dtype=np.float64), correction)
    out = np.ones((len(names), len(names)))
    for (i, j), p in zip(pairs, adj, strict=True):
        out[i, j] = out[j, i] = p
    return pd.DataFrame(out, index=names, columns=names)


def pairwise_cliques(
    mean_ranks: pd.Series, pvalues: pd.DataFrame, alpha: float = 0.05
) -> list[list[str]]:
    """The groups a diagram joins with a bar after a pairwise post-hoc: maximal runs of systems
    (sorted by mean rank) in which no pair's adjusted p-value is below ``alpha``. Groups of one
    are left out.

    Examples
    --------
    >>> R = pd.Series({"a": 1.2, "b": 1.9, "c": 2.9})
    >>> P = pd.DataFrame([[1, 0.3, 0.01], [0.3, 1, 0.2], [0.01, 0.2, 1]], index=list("abc"),
    ...                  columns=list("abc"))
    >>> pairwise_cliques(R, P)
    [['a', 'b'], ['b', 'c']]
    """
    alpha = check_unit_open(alpha, "alpha", "pairwise_cliques")
    R = pd.Series(mean_ranks, dtype=np.float64).sort_values(kind="stable")
    names = [str(x) for x in R.index]
    P = pvalues.copy()
    P.index = [str(x) for x in P.index]
    P.columns = [str(x) for x in P.columns]
    out: list[list[str]] = []
    last_end = -1
    for i in range(len(names)):
        j = i
        while j + 1 < len(names) and all(
            P.loc[names[m], names[j + 1]] >= alpha for m in range(i, j + 1)
        ):
            j += 1
        if j > i and j > last_end:
            out.append(names[i : j + 1])
            last_end = j
    return out
