"""Every baseline through the evaluator: same config and seed give bit-identical per-user metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking.metrics.evaluate import evaluate
from recoeval_tracking.models import make_model

CONFIGS = [
    ("popularity", {}),
    ("random", {"seed": 3}),
    ("als", {"factors": 8, "iterations": 3, "seed": 1, "progress": False}),
    ("item_knn", {"neighbours": 20}),
]


@pytest.mark.parametrize("name, params", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_per_user_metrics_do_not_depend_on_threads_or_blocks(name, params, low_rank, recall_at_10):
    train, test = low_rank
    runs = []
    for nthreads, block_rows in [(1, 500), (2, 37)]:
        model = make_model(name, **params).fit(train)
        res = evaluate(
            train,
            test,
            scores=model.score_source(),
            metrics=["r", "ndcg", "roc_auc"],
            k=10,
            ties="index",
            nthreads=nthreads,
            block_rows=block_rows,
        )
        runs.append(res.per_user)
    pd.testing.assert_frame_equal(runs[0], runs[1], check_exact=True)
    # the evaluator's recall (ties by item index) equals the brute-force reference
    model = make_model(name, **params).fit(train)
    scores = model.score_source().block(np.arange(train.shape[0]))
    ref = recall_at_10(scores, train, test)
    assert runs[0]["r_at_10"].mean() == pytest.approx(ref, rel=1e-12)
