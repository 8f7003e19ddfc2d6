"""Replicates and what runs vary: the param that makes replicates of a sweep (seeds, the folds
of a k-fold split), the curves and catalogue values of a replicate group, the params a sweep
varies, and the refusal of runs that are not comparable (naming a replicate key that would make
them so). Builds on :mod:`recoeval_tracking.reporting.replicates`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import stats as st
from .comparability import (
    check_comparable,
    check_replicates,
    not_comparable,
    swept_params,
)
from .replicates import guess_replicate_key
from .runs import RunData

__all__ = ["swept_params", "detect_replicate_key", "group_curves_and_catalogue", "not_comparable"]


def detect_replicate_key(runs: Sequence[RunData]) -> str | None:
    """The param whose values are replicates of one experiment, or None.

    A sweep over seeds (:func:`~recoeval_tracking.reporting.replicates.guess_replicate_key`)
    or over the folds of a k-fold split (``split.fold``, any swept ``*.fold``): each value
    draws another split of the same data, so the runs differ in their split fingerprint while
    the runs of one value share theirs. Nothing is detected when the runs are comparable as
    they are, or when the runs of one value do not share their data and split."""
    runs = list(runs)
    if not check_comparable(runs):
        return None
    key = guess_replicate_key(runs)
    if key and not check_replicates(runs, key):
        return key
    # a swept seed that only tells models apart (model.seed: None for one model, 0 for
    # another) is no replicate: the runs of one of its values must share their split
    keys = [k for k in swept_params(runs) if k.rsplit(".", 1)[-1] in ("seed", "fold")]
    for k in sorted(keys, key=lambda k: (k.count("."), k)):
        if not check_replicates(runs, k):
            return k
    return None


def group_curves_and_catalogue(groups: list[RunData], runs: list[RunData]) -> None:
    """Give each replicate group the @1..K curves and catalogue-level metrics of its runs: the
    mean over replicates at each k with its Student-t 95% interval over replicates (n =
    replicates, like the tables), and the mean of each logged value."""
    for g in groups:
        members = [
            r for r in runs if all(str(r.params.get(k)) == str(v) for k, v in g.params.items())
        ]
        if not members:
            continue
        logged: dict[str, list[float]] = {}
        for r in members:
            for k, v in r.metrics.items():
                if v is not None and math.isfinite(float(v)):
                    logged.setdefault(k, []).append(float(v))
        g.metrics = {k: float(np.mean(v)) for k, v in logged.items() if len(v) == len(members)}
        curves = [r.curves for r in members if r.curves is not None and len(r.curves)]
        if len(curves) != len(members):
            continue
        names = [
            c
            for c in curves[0].columns
            if c != "k"
            and not c.endswith(("_ci95_low", "_ci95_high"))
            and all(c in other.columns for other in curves)
        ]
        ks = curves[0]["k"].to_numpy()
        if not names or any(
            len(c) != len(ks) or not np.array_equal(c["k"].to_numpy(), ks) for c in curves
        ):
            continue
        out = {"k": ks}
        for name in names:
            stack = np.column_stack([c[name].to_numpy(dtype=np.float64) for c in curves])
            cols = [st.t_interval(row) for row in stack]
            out[name] = np.array([c[0] for c in cols])
            out[f"{name}_ci95_low"] = np.array([c[1] for c in cols])
            out[f"{name}_ci95_high"] = np.array([c[2] for c in cols])
        g.curves = pd.DataFrame(out)
