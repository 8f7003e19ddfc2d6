"""Spark judges ratings by the data's relevance rule, as the app does (issue #47, item 8).

A Spark frame carries no rule: ``evaluate_spark(relevance=split.test.relevance)`` applies the
data's (MovieLens: ratings >= 4 are the positives, with gain 1), and values with no rule are
refused rather than all counted as positives. The refusal's logic is checked without Spark;
the end-to-end check runs when pyspark and a Java runtime are there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.data import Relevance
from recoeval_tracking.options import EvalOptions
from recoeval_tracking.spark import relevance_options


def _no_rule(**kw):
    return relevance_options(EvalOptions(), kw.pop("relevance", None), **kw)


def test_a_rating_column_with_no_rule_is_refused():
    with pytest.raises(rt.InputError, match="'relevance'.*relevance=split.test.relevance"):
        _no_rule(rating_col="rating", columns={"test": ["user", "item", "rating"]})


def test_a_value_column_left_unnamed_is_refused():
    # split.test.to_dataframe()'s columns: every row would be a positive of gain 1
    cols = {"test": ["user", "item", "value", "timestamp"]}
    with pytest.raises(rt.InputError, match="'rating_col'.*rating_col='value'"):
        _no_rule(rating_col=None, columns=cols)
    with pytest.raises(rt.InputError, match="train frame"):
        _no_rule(rating_col=None, columns={"test": ["user", "item"], "train": ["u", "i", "Rating"]})


def test_a_stated_rule_is_taken():
    cols = {"test": ["user", "item", "value"]}
    ml = Relevance(4.0, "binary")
    opts = relevance_options(EvalOptions(), ml, "value", cols)
    assert (opts.relevance_level, opts.gains) == (4.0, "binary")
    # explicit options win over the data's rule, as in rt.evaluate
    opts = relevance_options(EvalOptions(relevance_level=3.0), ml, "value", cols)
    assert (opts.relevance_level, opts.gains) == (3.0, "binary")
    for stated in ({"gains": "graded"}, {"relevance_level": 4.0}, {"profile": "spark"}):
        assert relevance_options(EvalOptions(**stated), None, "value", cols) == EvalOptions(
            **stated
        )
    assert relevance_options(EvalOptions(gains="binary"), None, None, cols).gains == "binary"
    # no value anywhere: nothing to judge, every row a positive as before
    plain = relevance_options(EvalOptions(), None, None, {"test": ["user", "item"]})
    assert plain == EvalOptions()
    with pytest.raises(rt.InputError, match="'relevance'.*Relevance"):
        relevance_options(EvalOptions(), 4.0, "value", cols)


def _ratings(path: Path) -> None:
    """60 users x 40 items in MovieLens 100K's u.data layout, 1..5 stars."""
    rng = np.random.default_rng(7)
    rows, t = [], 880_000_000
    for user in range(1, 61):
        for item in rng.choice(np.arange(1, 41), size=int(rng.integers(6, 16)), replace=False):
            t += int(rng.integers(1, 100))
            rows.append(f"{user}\t{item}\t{int(rng.integers(1, 6))}\t{t}")
    path.write_text("\n".join(rows) + "\n")


def test_spark_on_the_apps_split_gives_the_apps_numbers(spark, tmp_path):
    from recoeval_tracking.spark import evaluate_spark

    _ratings(tmp_path / "u.data")
    X = rt.load_dataset("movielens_100k", path=tmp_path / "u.data")
    split = rt.make_split("random", X, seed=0)
    counts = np.bincount(split.train.matrix.indices, minlength=X.shape[1]).astype(np.float64)
    kw = dict(metrics=["p", "ndcg"], k=5)
    local = rt.evaluate(split, A=np.ones((X.shape[0], 1)), B=counts[:, None], **kw)
    test_df = spark.createDataFrame(split.test.to_dataframe())
    train_df = spark.createDataFrame(split.train.to_dataframe())
    uf = spark.createDataFrame(pd.DataFrame({"id": X.user_ids, "features": [[1.0]] * X.shape[0]}))
    itf = spark.createDataFrame(pd.DataFrame({"id": X.item_ids, "features": [[c] for c in counts]}))
    factors = dict(user_factors=uf, item_factors=itf)
    # the guide's call before: every rating a positive; now refused
    with pytest.raises(rt.InputError, match="rating_col='value'"):
        evaluate_spark(test_df, train_df, **factors, **kw)
    res = evaluate_spark(
        test_df, train_df, **factors, rating_col="value", relevance=split.test.relevance, **kw
    )
    assert res.definitions["relevance_level"] == 4.0 and res.definitions["gains"] == "binary"
    assert res.n_users_evaluated == local.n_users_evaluated < X.shape[0]
    for name in ("p_at_5", "ndcg_at_5"):
        assert res.means[name] == pytest.approx(local.means[name], rel=1e-12), name
    # every rating a positive, said explicitly: another number, as the issue saw
    every = evaluate_spark(test_df, train_df, **factors, gains="binary", **kw)
    assert every.n_users_evaluated > res.n_users_evaluated
    assert every.means["p_at_5"] != pytest.approx(res.means["p_at_5"])
