"""Cross-validation runner: evaluate a model over every fold and aggregate per metric."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, check_int, check_seed, param_error
from ..data import Interactions
from ._split import Split
from ._strategies import SPLITS

__all__ = ["cross_validate"]

_FOLDED = ("kfold", "user_kfold")


def cross_validate(
    interactions: Interactions,
    evaluate_fold: Callable[[Interactions, Interactions], Mapping[str, float]],
    strategy: str = "kfold",
    n_folds: int = 5,
    seed: int = 0,
    **split_params: Any,
) -> pd.DataFrame:
    r"""Evaluate over all folds and aggregate, like Recommendation.jl's ``cross_validation``
    and ``leave_one_out``.

    For the k-fold strategies (``kfold``, ``user_kfold``) the data is split once into
    ``n_folds`` folds. Any other strategy of :data:`SPLITS` (``leave_one_out``, ``random``,
    ...) is repeated ``n_folds`` times with seeds ``seed, seed + 1, ...`` (repeated holdout;
    a deterministic strategy such as ``temporal_global`` gives identical repetitions, so use
    ``n_folds=1`` there).

    Parameters
    ----------
    interactions : Interactions
    evaluate_fold : callable
        ``evaluate_fold(train, test) -> {metric name: mean value}``, supplied by the caller
        (fit on ``train``, evaluate on ``test``).
    strategy : str
        A key of :data:`SPLITS`.
    n_folds : int
        Folds (k-fold) or repetitions (other strategies), >= 1 (>= 2 for k-fold).
    seed : int
    **split_params
        Passed to the split strategy.

    Returns
    -------
    pandas.DataFrame
        One row per fold (index ``0 .. n_folds - 1``, column ``fingerprint`` holding the split's
        fingerprint) with one column per metric, then the rows ``mean`` and ``std`` (sample
        standard deviation, :math:`\sqrt{\sum (x - \bar x)^2 / (n - 1)}`, NaN for one fold),
        computed over the folds with NaN values ignored.
    """
    func = "cross_validate"
    X = Interactions.checked(interactions, func)
    if not callable(evaluate_fold):
        raise param_error(
            "evaluate_fold", func, "a callable (train, test) -> dict of metrics", evaluate_fold
        )
    if strategy not in SPLITS:
        raise param_error("strategy", func, f"one of {sorted(SPLITS)}", strategy)
    n_folds = check_int(n_folds, "n_folds", func, minimum=2 if strategy in _FOLDED else 1)
    seed = check_seed(seed, func)
    splits: list[Split]
    if strategy in _FOLDED:
        splits = list(SPLITS[strategy](X, n_folds=n_folds, seed=seed, **split_params))
    else:
        splits = []
        for r in range(n_folds):
            s = SPLITS[strategy](X, seed=seed + r, **split_params)
            splits.append(s[0] if isinstance(s, list) else s)
    rows = []
    for i, s in enumerate(splits):
        result = evaluate_fold(s.train, s.test)
        if not isinstance(result, Mapping):
            raise InputError(
                f"{func}: evaluate_fold must return a mapping of metric names to "
                f"numbers; fold {i} returned {type(result).__name__}."
            )
        try:
            row = {str(k): float(v) for k, v in result.items()}
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{func}: evaluate_fold returned a non-numeric metric value on fold {i}: {exc}"
            ) from exc
        rows.append(row)
    metrics = list(dict.fromkeys(k for r in rows for k in r))
    table = pd.DataFrame(rows, columns=metrics, dtype=np.float64)
    summary = pd.DataFrame(
        [table.mean(axis=0, skipna=True), table.std(axis=0, ddof=1, skipna=True)],
        index=["mean", "std"],
    )
    table["fingerprint"] = [s.fingerprint for s in splits]
    out = pd.concat([table, summary], axis=0)
    out.index = pd.Index(list(range(len(splits))) + ["mean", "std"], name="fold")
    out.attrs["strategy"] = strategy
    out.attrs["splits"] = [s.summary() for s in splits]
    return out
