r"""Rating and probability metrics on (user, item, value) predictions, for completeness with
RecBole's evaluator (``recbole.evaluator.metrics``) and Recommendation.jl.

* RMSE :math:`= \sqrt{\frac{1}{|T|}\sum_{(u,i) \in T} (\hat r_{ui} - r_{ui})^2}`
* MAE :math:`= \frac{1}{|T|}\sum_{(u,i) \in T} |\hat r_{ui} - r_{ui}|`
* log loss :math:`= -\frac{1}{|T|}\sum_t \left(y_t \log p_t + (1 - y_t) \log(1 - p_t)\right)`
  with :math:`y_t \in \{0, 1\}`; probabilities are clipped to :math:`[\epsilon, 1 - \epsilon]`,
  :math:`\epsilon = 10^{-15}`, as scikit-learn does, so a confident mistake costs a finite amount.
* global AUC (RecBole's ``auc``, over labelled samples regardless of users)
  :math:`= \left(\sum_{i=1}^{M} rank_i - M(M+1)/2\right) / (M N)` with :math:`rank_i` the
  ascending rank of the i-th of the M positive samples among all M + N samples, tied scores
  taking their average rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, param_error

__all__ = ["rmse", "mae", "log_loss", "global_auc", "predictions_at"]

_EPS = 1e-15


def _pair(truth: Any, pred: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(truth, dtype=np.float64).ravel()
    p = np.asarray(pred, dtype=np.float64).ravel()
    if t.shape != p.shape:
        raise InputError(
            f"The 'truth' and 'pred' parameters of {func} must have the same "
            f"length. Got {t.shape[0]} and {p.shape[0]} instead."
        )
    if t.shape[0] == 0:
        raise param_error("truth", func, "a non-empty array", t)
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p))):
        raise param_error("pred", func, "finite values (no NaN or infinity)", p)
    return t, p


def rmse(truth: Any, pred: Any) -> float:
    """Root mean squared error of predicted ratings."""
    t, p = _pair(truth, pred, "rmse")
    return float(np.sqrt(np.mean((p - t) ** 2)))


def mae(truth: Any, pred: Any) -> float:
    """Mean absolute error of predicted ratings."""
    t, p = _pair(truth, pred, "mae")
    return float(np.mean(np.abs(p - t)))


def log_loss(truth: Any, prob: Any) -> float:
    """Mean binary cross-entropy of predicted probabilities against 0/1 labels."""
    t, p = _pair(truth, prob, "log_loss")
    if not np.all((t == 0) | (t == 1)):
        raise param_error("truth", "log_loss", "labels in {0, 1}", t)
    if np.any((p < 0) | (p > 1)):
        raise param_error("pred", "log_loss", "probabilities in [0, 1]", p)
    p = np.clip(p, _EPS, 1 - _EPS)
    return float(-np.mean(t * np.log(p) + (1 - t) * np.log(1 - p)))


def global_auc(truth: Any, pred: Any) -> float:
    """RecBole's AUC over labelled (user, item) samples pooled across users (ties: average rank)."""
    from scipy.stats import rankdata

    t, p = _pair(truth, pred, "global_auc")
    if not np.all((t == 0) | (t == 1)):
        raise param_error("truth", "global_auc", "labels in {0, 1}", t)
    M = float(t.sum())
    N = float(t.shape[0] - M)
    if M == 0 or N == 0:
        return float("nan")
    ranks = rankdata(p, method="average")
    return float((ranks[t == 1].sum() - M * (M + 1) / 2) / (M * N))


def predictions_at(test: Any, scorer_block: Any) -> tuple[np.ndarray, np.ndarray]:
    """The test values and the model's scores at the test entries, for :func:`rmse`/:func:`mae`.

    ``scorer_block(users) -> (len(users), n_items)`` is any score source's ``block`` method; rows
    are scored one user block at a time.
    """
    X = sp.csr_array(test)
    users = np.flatnonzero(np.diff(X.indptr))
    preds = np.empty(X.nnz, dtype=np.float64)
    for start in range(0, users.shape[0], 1024):
        block = users[start : start + 1024]
        S = np.asarray(scorer_block(block))
        for r, u in enumerate(block):
            lo, hi = X.indptr[u], X.indptr[u + 1]
            preds[lo:hi] = S[r, X.indices[lo:hi]]
    return np.asarray(X.data, dtype=np.float64), preds
