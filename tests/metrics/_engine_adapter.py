"""Calls into the public engine API, returning values keyed like tests/reference.py.

Only the public functions are used: :func:`recoeval_tracking.calc_reco_metrics` (recometrics'
boolean-per-metric interface, ``as_df=False`` dict keyed ``P@K``...) and
:func:`recoeval_tracking.evaluate` (the project's interface, per-user columns ``p_at_5``...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from reference import ALL_METRICS, METRICS, TOPK_METRICS

import recoeval_tracking as rt

#: reference metric name -> key of calc_reco_metrics(as_df=False).
CALC_KEYS = {
    "p": "P@K",
    "tp": "TP@K",
    "r": "R@K",
    "ap": "AP@K",
    "tap": "TAP@K",
    "ndcg": "NDCG@K",
    "hit": "Hit@K",
    "rr": "RR@K",
    "roc_auc": "ROC_AUC",
    "pr_auc": "PR_AUC",
}
#: reference metric name -> DataFrame column prefix of calc_reco_metrics(as_df=True).
CALC_COLUMNS = {
    "p": "P",
    "tp": "TP",
    "r": "R",
    "ap": "AP",
    "tap": "TAP",
    "ndcg": "NDCG",
    "hit": "Hit",
    "rr": "RR",
    "roc_auc": "ROC_AUC",
    "pr_auc": "PR_AUC",
}
#: reference metric name -> calc_reco_metrics flag.
CALC_FLAGS = {
    "p": "precision",
    "tp": "trunc_precision",
    "r": "recall",
    "ap": "average_precision",
    "tap": "trunc_average_precision",
    "ndcg": "ndcg",
    "hit": "hit",
    "rr": "rr",
    "roc_auc": "roc_auc",
    "pr_auc": "pr_auc",
}


def calc(
    X_train: Any,
    X_test: Any,
    A: Any,
    B: Any,
    k: int,
    *,
    noise: bool = False,
    cumulative: bool = False,
    nthreads: int = 1,
    **kw: Any,
) -> dict[str, np.ndarray]:
    """calc_reco_metrics with every metric, as float64 arrays keyed by reference name."""
    out = rt.calc_reco_metrics(
        X_train,
        X_test,
        A,
        B,
        k=k,
        as_df=False,
        all_metrics=True,
        break_ties_with_noise=noise,
        cumulative=cumulative,
        nthreads=nthreads,
        **kw,
    )
    assert out["K"] == k
    return {m: np.asarray(out[CALC_KEYS[m]], dtype=np.float64) for m in METRICS}


def run_evaluate(
    train: Any,
    test: Any,
    k: int,
    *,
    cumulative: bool = False,
    ties: str = "index",
    nthreads: int = 1,
    metrics: Any = "all",
    **kw: Any,
) -> tuple[dict[str, np.ndarray], np.ndarray, rt.Results]:
    """evaluate(); returns (values keyed by reference name, nan_reason array, Results).

    With ``cumulative`` the top-K metrics are the (m, k) curves; the per-user column at K is
    checked to equal the curve's last column.
    """
    res = rt.evaluate(
        train, test, metrics=metrics, k=k, cumulative=cumulative, ties=ties, nthreads=nthreads, **kw
    )
    pu = res.per_user
    values: dict[str, np.ndarray] = {}
    for m in ALL_METRICS:
        col = m if m not in TOPK_METRICS else f"{m}_at_{k}"
        if col not in pu.columns:
            continue
        at_k = pu[col].to_numpy(dtype=np.float64)
        if cumulative and m in TOPK_METRICS:
            curve = np.asarray(res.curves_per_user[f"{m}_at_k"], dtype=np.float64)
            np.testing.assert_array_equal(curve[:, -1], at_k)
            values[m] = curve
        else:
            values[m] = at_k
    return values, pu["nan_reason"].to_numpy(), res
