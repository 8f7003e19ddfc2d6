"""The ``recommenders`` and ``recommenders_spark`` profiles against Microsoft Recommenders 1.2.1
(``recommenders/evaluation/python_evaluation.py`` and ``spark_evaluation.py``).

Recommenders is heavy to install (and pins old libraries), so its code is written out below on
pandas frames, step for step (``merge_ranking_true_pred``, ``get_top_k_items``, the metrics),
independently of the package: the expected values on MovieLens 100K predictions (20 scored items
per user, some users with 4, some with none, tied and untied scores). Its Spark evaluator is
pyspark's ``RankingMetrics`` on the top-k lists joined with the users' ground truth: the local
``RankingMetrics.scala`` transcription (``reference.spark_ranking_metrics``) gives its values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from reference import spark_ranking_metrics

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

from ._peer_lists import lists, ml100k, truth, user_lists

K = 10


def _top_k(pred: pd.DataFrame, k: int) -> pd.DataFrame:
    """get_top_k_items: sort by (user asc, prediction desc) (a stable multi-column sort: ties
    keep the frame's row order), the first k rows per user, rank = 1, 2, ..."""
    top = (
        pred.sort_values(["userID", "prediction"], ascending=[True, False])
        .groupby("userID", as_index=False)
        .head(k)
        .reset_index(drop=True)
    )
    top["rank"] = top.groupby("userID", sort=False).cumcount() + 1
    return top


def _hits(true: pd.DataFrame, pred: pd.DataFrame, k: int):
    """merge_ranking_true_pred with relevancy_method="top_k"."""
    common = set(true["userID"]) & set(pred["userID"])
    true_c = true[true["userID"].isin(common)]
    pred_c = pred[pred["userID"].isin(common)]
    df_hit = pd.merge(_top_k(pred_c, k), true_c, on=["userID", "itemID"])[
        ["userID", "itemID", "rank"]
    ]
    df_hit_count = pd.merge(
        df_hit.groupby("userID", as_index=False)["userID"].agg(hit="count"),
        true_c.groupby("userID", as_index=False)["userID"].agg(actual="count"),
        on="userID",
    )
    return df_hit, df_hit_count, len(common)


def recommenders_metrics(true: pd.DataFrame, pred: pd.DataFrame, k: int) -> dict[str, float]:
    """The python evaluator's numbers (one per metric, averaged as its code averages)."""
    df_hit, df_hit_count, n_users = _hits(true, pred, k)
    out = {
        "precision_at_k": (df_hit_count["hit"] / k).sum() / n_users,
        "recall_at_k": (df_hit_count["hit"] / df_hit_count["actual"]).sum() / n_users,
    }
    rr = df_hit.copy()
    rr["rr"] = (rr.groupby("userID").cumcount() + 1) / rr["rank"]
    rr = pd.merge(rr.groupby("userID").agg({"rr": "sum"}).reset_index(), df_hit_count, on="userID")
    out["map"] = (rr["rr"] / rr["actual"]).sum() / n_users
    out["map_at_k"] = (rr["rr"] / rr["actual"].apply(lambda x: min(x, k))).sum() / n_users
    for score_type, name in (
        ("binary", "ndcg_at_k"),
        ("raw", "ndcg_at_k(score_type='raw')"),
        ("exp", "ndcg_at_k(score_type='exp')"),
    ):
        df = df_hit.merge(pred, on=["userID", "itemID"]).merge(
            true, on=["userID", "itemID"], how="outer", suffixes=("_left", None)
        )
        df["rel"] = {"binary": 1, "raw": df["rating"], "exp": 2 ** df["rating"] - 1}[score_type]
        df["dcg"] = df["rel"] / np.log(1 + df["rank"])
        idcg = df.sort_values(["userID", "rating"], ascending=False)
        idcg["irank"] = idcg.groupby("userID", as_index=False, sort=False)["rating"].rank(
            "first", ascending=False
        )
        idcg["idcg"] = idcg["rel"] / np.log(1 + idcg["irank"])
        user = df.groupby("userID", as_index=False, sort=False).agg({"dcg": "sum"})
        user = user.merge(
            idcg.groupby("userID", as_index=False, sort=False)
            .head(k)
            .groupby("userID", as_index=False, sort=False)
            .agg({"idcg": "sum"}),
            on="userID",
        )
        out[name] = (user["dcg"] / user["idcg"]).mean()
    return out


@pytest.fixture(scope="module")
def data():
    train, test, scores = ml100k()
    tru = truth(test)
    true = pd.DataFrame(
        [(u, i, v) for u, t in enumerate(tru) for i, v in t.items()],
        columns=["userID", "itemID", "rating"],
    )
    return train, test, scores, true


def _predictions(train, scores: np.ndarray) -> pd.DataFrame:
    """20 scored items per user (the best not in train, in item order within the frame), 4 for
    every 7th user, none for every 11th."""
    L = lists(train, scores, 20)
    rows = [(u, i, scores[u, i]) for u, items in enumerate(user_lists(L)) for i in sorted(items)]
    return pd.DataFrame(rows, columns=["userID", "itemID", "prediction"])


def _means(res: rt.Results, profile: str) -> dict[str, float]:
    aliases = PROFILES[profile]["aliases"]
    return {name: res.means[f"{metric}_at_{K}"] for name, metric in aliases.items()}


@pytest.mark.parametrize("source", ["untied", "tied"])
def test_python_evaluator(data, source):
    """Users without predictions: precision, recall and both MAPs leave them out (the code
    averages over the users with a prediction and a test entry), ndcg_at_k counts them 0 (it
    merges the whole truth back in): ``missing_users="skip"`` and ``"zero"`` give each."""
    train, test, scores, true = data
    pred = _predictions(train, scores[source])
    want = recommenders_metrics(true, pred, K)
    frame = pred.rename(columns={"userID": "user", "itemID": "item", "prediction": "score"})
    got = {}
    for missing in ("skip", "zero"):
        with pytest.warns(UserWarning, match="no list"):
            res = rt.evaluate(
                None, test, ranked=frame, k=K, profile="recommenders", missing_users=missing
            )
        got[missing] = _means(res, "recommenders")
    for name in ("precision_at_k", "recall_at_k", "map", "map_at_k"):
        assert got["skip"][name] == pytest.approx(want[name], rel=1e-12), name
    for name in ("ndcg_at_k", "ndcg_at_k(score_type='raw')", "ndcg_at_k(score_type='exp')"):
        assert got["zero"][name] == pytest.approx(want[name], rel=1e-12), name
    # the numbers differ between the two rules (the case is exercised)
    assert got["skip"]["precision_at_k"] != got["zero"]["precision_at_k"]


def test_spark_evaluator(data):
    """SparkRankingEvaluation: RankingMetrics on the top-k lists of the users with a prediction
    and a test entry (an inner join: a user without predictions is left out)."""
    train, test, scores, true = data
    L = lists(train, scores["untied"], K)
    tru = truth(test)
    users = [u for u, items in enumerate(user_lists(L)) if items]
    res = rt.evaluate(
        None,
        test,
        ranked=pd.DataFrame(
            [(u, i, r + 1) for u in users for r, i in enumerate(user_lists(L)[u])],
            columns=["user", "item", "rank"],
        ),
        k=K,
        profile="recommenders_spark",
        missing_users="skip",
    )
    per = [spark_ranking_metrics(user_lists(L)[u], list(tru[u]), K) for u in users]
    spark_names = {"p": "p", "r": "r", "ndcg_bin": "ndcg_bin", "ap": "ap", "tap": "tap"}
    for name, metric in PROFILES["recommenders_spark"]["aliases"].items():
        want = np.mean([v[spark_names[metric]] for v in per])
        assert res.means[f"{metric}_at_{K}"] == pytest.approx(want, rel=1e-12), name


def test_repeated_predictions_are_refused_by_name(data):
    train, test, scores, true = data
    frame = pd.DataFrame({"user": [1, 1, 1], "item": [5, 5, 7], "score": [3.0, 2.0, 1.0]})
    for profile in ("recommenders", "recommenders_spark"):
        with pytest.raises(rt.InputError, match=rf"profile='{profile}'.*every copy"):
            rt.evaluate(None, test, ranked=frame, k=3, profile=profile)
