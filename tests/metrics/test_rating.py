"""RMSE, MAE and log loss against hand-computed values and scikit-learn's definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.rating import global_auc, log_loss, mae, predictions_at, rmse


def test_rmse_mae_by_hand():
    truth = [4.0, 3.0, 5.0, 1.0]
    pred = [3.5, 3.0, 4.0, 2.0]  # errors 0.5, 0, 1, 1
    assert rmse(truth, pred) == pytest.approx(math.sqrt((0.25 + 0 + 1 + 1) / 4))
    assert mae(truth, pred) == pytest.approx((0.5 + 0 + 1 + 1) / 4)


def test_log_loss_by_hand_and_clipping():
    y = [1, 0, 1]
    p = [0.9, 0.2, 0.6]
    expected = -(math.log(0.9) + math.log(0.8) + math.log(0.6)) / 3
    assert log_loss(y, p) == pytest.approx(expected)
    assert math.isfinite(log_loss([1], [0.0]))  # clipped, as scikit-learn does
    assert log_loss([1], [0.0]) == pytest.approx(-math.log(1e-15))


def test_errors_name_the_argument():
    with pytest.raises(rt.InputError, match="same length"):
        rmse([1, 2], [1])
    with pytest.raises(rt.InputError, match="'truth'.*labels"):
        log_loss([2], [0.5])
    with pytest.raises(rt.InputError, match="'pred'.*probabilities"):
        log_loss([1], [1.5])


def test_predictions_at_reads_the_scores_of_test_entries():
    A = np.array([[1.0, 0.0], [0.0, 2.0]])
    B = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    test = sp.csr_array((np.array([5.0, 1.0, 4.0]), [0, 2, 1], [0, 2, 3]), shape=(2, 3))
    truth, pred = predictions_at(test, rt.FactorScores(A, B).block)
    np.testing.assert_array_equal(truth, [5.0, 1.0, 4.0])
    np.testing.assert_array_equal(pred, [1.0, 0.0, 0.0])  # (u0,i0)=1, (u0,i2)=0, (u1,i1)=0


def test_global_auc_counts_ordered_pairs_with_half_for_ties():
    y = [1, 0, 1, 0, 0]
    p = [0.9, 0.8, 0.3, 0.3, 0.1]
    # pairs (pos, neg): 0.9 beats all 3; 0.3 beats 0.1, ties 0.3 (half), loses to 0.8
    assert global_auc(y, p) == pytest.approx((3 + 1 + 0.5) / 6)
    assert math.isnan(global_auc([1, 1], [0.2, 0.4]))
