"""The report's statistical settings and marks: the families p-values are adjusted over, the
sign vectors a randomisation test draws for a family, the mark of an adjusted p-value and the
label of a coverage.

The statistics themselves (intervals, paired tests, corrections, effect sizes, ...) are plain
functions on arrays in :mod:`recoeval_tracking.stats`; the names that moved there from this
module still read from here, with a :class:`DeprecationWarning`, for one release.
"""

from __future__ import annotations

import numpy as np

from ..stats import auto_permutations as _auto_permutations
from ._moved import moved_names

__all__ = ["FAMILIES", "permutations_for", "significance_mark", "percent"]


__getattr__ = moved_names(__name__)


def percent(confidence: float) -> str:
    """A coverage as the pages label it: ``0.95`` -> ``"95%"``, ``0.975`` -> ``"97.5%"``."""
    return f"{float(confidence) * 100:.10g}%"


#: The families p-values are adjusted over: each metric's comparisons with the baseline, or
#: every (run, metric) comparison of a table.
FAMILIES = ("metric", "table")


def permutations_for(n_permutations: int | str, family: str, n_metrics: int, n_others: int) -> int:
    """The sign vectors of the randomisation test: ``n_permutations`` itself, or for ``"auto"``
    :func:`~recoeval_tracking.stats.auto_permutations` of the family size (the
    other runs for ``family="metric"``, runs x metrics for ``"table"``)."""
    if n_permutations != "auto":
        return int(n_permutations)
    size = n_others * (n_metrics if family == "table" else 1)
    return _auto_permutations(max(size, 1))


def significance_mark(
    p: float, diff: float, lower_is_better: bool = False, alpha: float = 0.05
) -> str:
    """``▲``/``▼`` (better/worse than the baseline) followed by ``*`` (p < alpha), ``**``
    (p < 0.01) or ``***`` (p < 0.001) for an adjusted p-value; empty when not significant."""
    if p is None or not np.isfinite(p) or not np.isfinite(diff) or p >= alpha or diff == 0:
        return ""
    stars = "***" if p < 0.001 else "**" if p < 0.01 else "*"
    better = (diff < 0) if lower_is_better else (diff > 0)
    return ("▲" if better else "▼") + stars
