"""``calc_reco_metrics``: a drop-in for recometrics' Python function of the same name.

Same signature, defaults and output layout; semantics follow the recometrics documentation
(see "Differences from recometrics" in docs/guides/profiles.md for where its code departs and
we do not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import InputError
from ..options import EvalOptions
from .evaluate import compute

if TYPE_CHECKING:  # pandas is imported when a frame is made (it is 0.8 s of evaluate's import)
    import pandas as pd

__all__ = ["calc_reco_metrics"]

# flag name of calc_reco_metrics -> registered metric name
_FLAGS = {
    "precision": "p",
    "trunc_precision": "tp",
    "recall": "r",
    "average_precision": "ap",
    "trunc_average_precision": "tap",
    "ndcg": "ndcg",
    "hit": "hit",
    "rr": "rr",
    "roc_auc": "roc_auc",
    "pr_auc": "pr_auc",
}


def calc_reco_metrics(
    X_train: Any,
    X_test: Any,
    A: Any,
    B: Any,
    k: int = 5,
    item_biases: Any = None,
    as_df: bool = True,
    precision: bool = True,
    trunc_precision: bool = False,
    recall: bool = False,
    average_precision: bool = True,
    trunc_average_precision: bool = False,
    ndcg: bool = True,
    hit: bool = False,
    rr: bool = False,
    roc_auc: bool = False,
    pr_auc: bool = False,
    all_metrics: bool = False,
    rename_k: bool = True,
    break_ties_with_noise: bool = True,
    min_pos_test: int = 1,
    min_items_pool: int = 2,
    consider_cold_start: bool = True,
    cumulative: bool = False,
    nthreads: int = -1,
    seed: int = 1,
    inf_scores: str = "nan",
) -> pd.DataFrame | dict[str, Any]:
    """Per-user ranking metrics with recometrics' signature, defaults and output.

    Parameters
    ----------
    X_train : sparse CSR (m x n) or None
        Training interactions (excluded from each user's ranking); None for none.
    X_test : sparse CSR (m x n)
        Test interactions: stored entries are positives, values are NDCG gains.
    A, B : ndarray (m x p), (n x p) or None
        User and item factors, users as rows; both None with ``item_biases`` for a
        non-personalised model. float32 when both are float32.
    k : int
        Cutoff.
    item_biases : ndarray (n,), optional
        Added to every user's scores.
    as_df : bool
        DataFrame (columns ``P@5``...) or dict keyed ``P@K``... plus ``K``.
    precision, trunc_precision, recall, average_precision, trunc_average_precision, ndcg, hit, \
rr, roc_auc, pr_auc, all_metrics : bool
        Which metrics to compute.
    rename_k : bool
        Column names end in the value of k (``P@5``) rather than ``P@K``.
    break_ties_with_noise : bool
        Order tied scores by a seeded random key (same result for any thread count); when False,
        ties are ordered by item index (lower first).
    min_pos_test, min_items_pool, consider_cold_start :
        Users with fewer test entries, fewer rankable items, or (when False) no train entries get
        NaN.
    cumulative : bool
        Metrics at 1..k (columns ``P@1``..``P@k``, or (m, k) arrays).
    nthreads : int
        Threads (numba and BLAS); -1 for all.
    seed : int
        Seed of the tie-breaking noise.
    inf_scores : {"nan", "rank"}
        recometrics' rule by default: a +-inf score among a user's items not in train makes
        the user NaN, as a NaN score does (recometrics' test-ndcg.R, "Invalid cases": a -Inf
        and a +Inf factor give NA). ``"rank"`` ranks them as ordinary scores (+inf first,
        -inf last). Not a parameter of recometrics: an addition at the end of its signature.

    Returns
    -------
    pandas.DataFrame or dict
        One row per user. Values are float64 (metrics are computed from exact integer ranks).
    """
    func = "calc_reco_metrics"
    flags = {
        "precision": precision,
        "trunc_precision": trunc_precision,
        "recall": recall,
        "average_precision": average_precision,
        "trunc_average_precision": trunc_average_precision,
        "ndcg": ndcg,
        "hit": hit,
        "rr": rr,
        "roc_auc": roc_auc,
        "pr_auc": pr_auc,
    }
    names = list(_FLAGS.values()) if all_metrics else [_FLAGS[f] for f, on in flags.items() if on]
    if not names:
        raise InputError(
            f"{func} was asked for no metric: pass at least one of "
            f"{', '.join(_FLAGS)} as True, or all_metrics=True."
        )
    options = EvalOptions(
        metrics=names,
        k=k,
        cumulative=cumulative,
        ties="noise" if break_ties_with_noise else "index",
        seed=seed,
        min_pos_test=min_pos_test,
        min_items_pool=min_items_pool,
        consider_cold_start=consider_cold_start,
        nthreads=nthreads,
        inf_scores=inf_scores,
    )
    raw = compute(X_train, X_test, options, A=A, B=B, item_biases=item_biases, func=func)
    k = int(k)
    result: dict[str, Any] = {}
    for row, s in enumerate(raw.topk_specs):
        values = raw.out[row]
        result[f"{s.label}@K"] = values if cumulative else values[:, 0]
    for row, s in enumerate(raw.whole_specs):
        result[s.label] = raw.whole[row]
    if not as_df:
        result["K"] = k
        return result
    frame: dict[str, np.ndarray] = {}
    for key, values in result.items():
        if key.endswith("@K"):
            label = key[:-2]
            if cumulative:
                for j in range(k):
                    frame[f"{label}@{j + 1}"] = values[:, j]
            else:
                frame[f"{label}@{k}" if rename_k else key] = values
        else:
            frame[key] = values
    import pandas as pd

    return pd.DataFrame(frame)
