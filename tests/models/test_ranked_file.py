"""Recommendations made elsewhere, read from CSV, Parquet and TREC run files.

The fixture is small enough to check by hand: three users (``u1``..``u3``), five items
(10..50), K = 2.

* ``u1`` has item 10 in train and {20, 30} in test; its file list is 10, 30, 40, 20, 30: 10 is
  skipped (a train item), the repeated 30 counts once at its best rank, so the top 2 are
  30, 40: P@2 = 1/2, R@2 = 1/2, NDCG@2 = 1 / (1 + 1/log2 3) = 0.61315.
* ``u2`` has {10} in test and the list 40, 10: P@2 = 1/2, R@2 = 1, NDCG@2 = 1/log2 3 = 0.63093.
* ``u3`` has {50} in test and no list in the file: every metric 0.
* one row names an unknown user (``u9``) and one an unknown item (99): counted, not evaluated.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recoeval_tracking import InputError, evaluate
from recoeval_tracking.models import RankedFileModel, read_ranked_file

USERS = np.array(["u1", "u2", "u3"])
ITEMS = np.array([10, 20, 30, 40, 50])
ROWS = [
    ("u1", 10, 1, 0.9),
    ("u1", 30, 2, 0.8),
    ("u1", 40, 3, 0.7),
    ("u1", 20, 4, 0.6),
    ("u1", 30, 5, 0.5),
    ("u2", 40, 1, 0.9),
    ("u2", 10, 2, 0.8),
    ("u9", 10, 1, 0.9),
    ("u2", 99, 3, 0.1),
]
EXPECTED = {
    "p_at_2": [0.5, 0.5, 0.0],
    "r_at_2": [0.5, 1.0, 0.0],
    "ndcg_at_2": [1 / (1 + 1 / math.log2(3)), 1 / math.log2(3), 0.0],
    "hit_at_2": [1.0, 1.0, 0.0],
}


def _split():
    train = sp.csr_array(([1.0], ([0], [0])), shape=(3, 5))
    test = sp.csr_array((np.ones(4), ([0, 0, 1, 2], [1, 2, 0, 4])), shape=(3, 5))
    return train, test


def _evaluate(path, **kw):
    train, test = _split()
    model = RankedFileModel(path, **kw).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(2), k=2, metrics=["p", "r", "ndcg", "hit"])
    return model, res


def _check(res):
    for name, values in EXPECTED.items():
        np.testing.assert_allclose(res.per_user[name].to_numpy(), values, rtol=1e-12)


def test_csv_with_ranks(tmp_path, caplog):
    path = tmp_path / "recs.csv"
    pd.DataFrame(ROWS, columns=["user", "item", "rank", "score"]).drop(columns="score").to_csv(
        path, index=False
    )
    with caplog.at_level(logging.WARNING):
        model, res = _evaluate(path)
    _check(res)
    c = model.counts
    assert (
        c["unknown_users"],
        c["unknown_items"],
        c["rows_dropped_unknown"],
        c["repeated_items"],
        c["users_with_lists"],
    ) == (1, 1, 2, 1, 2)
    text = caplog.text
    assert "2 of 9 rows" in text and "1 unknown users, 1 unknown items" in text
    assert "1 repeated (user, item) rows" in text


def test_parquet_with_scores_and_other_column_names(tmp_path):
    path = tmp_path / "recs.parquet"
    df = pd.DataFrame(ROWS, columns=["uid", "iid", "pos", "relevance"]).drop(columns="pos")
    df.to_parquet(path)
    _, res = _evaluate(path, user_col="uid", item_col="iid", score_col="relevance")
    _check(res)


def test_trec_run_is_ordered_by_score_as_trec_eval_does(tmp_path):
    # the rank column disagrees with the scores on purpose: trec_eval sorts by score
    lines = [f"{u} Q0 {i} {99 - r} {s} run1" for u, i, r, s in ROWS]
    path = tmp_path / "recs.run"
    path.write_text("\n".join(lines) + "\n")
    _, res = _evaluate(path)
    _check(res)
    df = read_ranked_file(path)
    assert list(df[df.user == "u1"].item) == ["10", "30", "40", "20", "30"]


def test_lists_shorter_than_k_are_padded(tmp_path):
    path = tmp_path / "short.csv"
    pd.DataFrame([("u2", 10, 1)], columns=["user", "item", "rank"]).to_csv(path, index=False)
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(3), k=3, metrics=["p", "hit"])
    np.testing.assert_allclose(res.per_user["p_at_3"], [0.0, 1 / 3, 0.0])
    np.testing.assert_allclose(res.per_user["hit_at_3"], [0.0, 1.0, 0.0])


def test_whole_ranking_metrics_are_left_out_with_the_reason(tmp_path):
    path = tmp_path / "recs.csv"
    pd.DataFrame(ROWS, columns=["user", "item", "rank", "score"]).to_csv(path, index=False)
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(2), k=2, metrics="standard")
    left = res.definitions["left_out"]
    assert {"roc_auc", "pr_auc"} <= set(left) and "roc_auc" not in res.per_user
    assert all("score for every item" in reason for reason in left.values())


def test_bad_files_name_the_argument(tmp_path):
    path = tmp_path / "recs.csv"
    pd.DataFrame({"user": ["u1"], "item": [10]}).to_csv(path, index=False)
    with pytest.raises(InputError, match="rank_col.*orders each list"):
        _evaluate(path)
    with pytest.raises(InputError, match="'user_col'.*columns"):
        _evaluate(path, user_col="uid")
    with pytest.raises(InputError, match="'path'.*no such file"):
        RankedFileModel(tmp_path / "missing.csv")
    odd = tmp_path / "recs.xlsx"
    odd.write_text("x")
    with pytest.raises(InputError, match="'format'"):
        RankedFileModel(odd)
