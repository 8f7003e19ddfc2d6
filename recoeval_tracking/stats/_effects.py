"""Effect sizes of paired per-user values: how large a difference is, beside whether it is
significant.

* **Cohen's d_z** ``mean(d) / sd(d)`` of the paired differences (Cohen 1988; Lakens 2013,
  "Calculating and reporting effect sizes", Frontiers in Psychology 4, eq. 5).
"""

from __future__ import annotations

import math

from numpy.typing import ArrayLike

from ._arrays import _defined_differences

__all__ = ["cohens_dz"]


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
