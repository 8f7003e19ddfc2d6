"""evaluate_spark's driver-side checks of its frames (issue #44, item 9): ids of one type across
the frames, no nulls, an empty test frame refused, duplicate rows counted, factors of one length,
the test users without a list warned about with their ids; the executors' warnings gathered into
one driver-side warning naming the users' ids; the workers' Python in local mode."""

from __future__ import annotations

import sys
import warnings
from types import SimpleNamespace

import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.spark import evaluate_spark, local_workers_python
from recoeval_tracking.spark._checks import gather

KW = dict(k=2, metrics=["p"])


def _frames(spark):
    test = spark.createDataFrame(pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 10, 12]}))
    ranked = spark.createDataFrame(
        pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [10, 12, 11, 10, 12, 11]}).assign(
            rank=[1, 2, 1, 2, 1, 2]
        )
    )
    return test, ranked


def _ours(caught):
    return [str(w.message) for w in caught if "evaluate_spark" in str(w.message)]


def test_ids_of_another_type_are_refused_naming_the_frame_and_column(spark):
    test, ranked = _frames(spark)
    as_text = spark.createDataFrame(
        pd.DataFrame({"user": ["1", "1", "2"], "item": ["10", "11", "10"]})
    )
    with pytest.raises(rt.InputError, match=r"'ranked'.*user ids.*'test'.*'user'.*string"):
        evaluate_spark(as_text, ranked=ranked, **KW)
    text_rank = ranked.withColumn("rank", ranked["rank"].cast("string"))
    with pytest.raises(rt.InputError, match=r"'ranked'.*'rank' column holds numbers"):
        evaluate_spark(test, ranked=text_rank, **KW)


def test_string_ids_of_one_type_everywhere_are_evaluated(spark):
    test, ranked = _frames(spark)
    cast = [test, ranked]
    for i, df in enumerate(cast):
        cast[i] = df.withColumn("user", df["user"].cast("string")).withColumn(
            "item", df["item"].cast("string")
        )
    res = evaluate_spark(cast[0], ranked=cast[1], **KW)
    # P@2 by hand: user 1 hits 10 of [10, 12]; user 2 hits 10 of [11, 10]; user 3 hits 12
    assert res.means["p_at_2"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 2) / 3)


def test_nulls_and_an_empty_test_frame_are_refused(spark):
    _, ranked = _frames(spark)
    with_null = spark.createDataFrame([(1, 10), (None, 11), (2, 10)], "user long, item long")
    with pytest.raises(rt.InputError, match=r"'test'.*1 of 3 rows with a null 'user'"):
        evaluate_spark(with_null, ranked=ranked, **KW)
    test, _ = _frames(spark)
    null_rank = spark.createDataFrame(
        [(1, 10, 1), (1, 12, None), (2, 11, 1)], "user long, item long, rank long"
    )
    with pytest.raises(rt.InputError, match=r"'ranked'.*null 'rank'"):
        evaluate_spark(test, ranked=null_rank, **KW)
    empty = spark.createDataFrame([], "user long, item long")
    with pytest.raises(rt.InputError, match=r"'test'.*at least one row.*empty"):
        evaluate_spark(empty, ranked=ranked, **KW)


def test_duplicate_rows_are_counted_in_a_warning(spark):
    _, ranked = _frames(spark)
    dup = spark.createDataFrame(
        pd.DataFrame({"user": [1, 1, 1, 2, 3], "item": [10, 10, 11, 10, 12]})
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = evaluate_spark(dup, ranked=ranked, **KW)
    said = [m for m in _ours(caught) if "duplicate" in m]
    assert len(said) == 1 and "1 duplicate (user, item) rows" in said[0]
    assert "user 1, item 10" in said[0]
    assert res.means["p_at_2"] == pytest.approx(1 / 2)  # each pair counted once


def test_factors_of_another_length_are_refused(spark):
    test, _ = _frames(spark)
    items = spark.createDataFrame(
        pd.DataFrame({"id": [10, 11, 12], "features": [[1.0, 2.0], [1.0, 0.0], [0.5, 0.5]]})
    )
    users = spark.createDataFrame(
        pd.DataFrame({"id": [1, 2, 3], "features": [[1.0, 2.0], [1.0], [0.5, 0.5]]})
    )
    with pytest.raises(rt.InputError, match=r"'user_factors'.*length \(2\).*from 1 to 2"):
        evaluate_spark(test, user_factors=users, item_factors=items, **KW)
    ragged = spark.createDataFrame(
        pd.DataFrame({"id": [10, 11, 12], "features": [[1.0, 2.0], [1.0], [0.5, 0.5]]})
    )
    with pytest.raises(rt.InputError, match=r"'item_factors'.*one length.*from 1 to 2"):
        evaluate_spark(test, user_factors=users, item_factors=ragged, **KW)


def test_test_users_without_a_list_are_counted_once_with_their_ids(spark):
    test, ranked = _frames(spark)
    ranked = ranked.where("user != 3")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = evaluate_spark(test, ranked=ranked, shards=2, **KW)
    said = [m for m in _ours(caught) if "no list" in m]
    assert len(said) == 1, _ours(caught)
    assert "1 of 3 test users" in said[0] and "[3]" in said[0]
    # user 3 scores 0 and counts: (1/2 + 1/2 + 0) / 3
    assert res.means["p_at_2"] == pytest.approx(1 / 3)


def test_executor_warnings_are_gathered_into_one_naming_user_ids():
    # the tasks give the users' own ids (their shard's numbering never leaves the task)
    text = "5 of 9 users in evaluate are odd, e.g. user ids [{}]"
    outs = [
        SimpleNamespace(w=[("UserWarning", text.format("101, 205"))]),
        SimpleNamespace(w=[("UserWarning", text.format("307"))]),
        SimpleNamespace(w=[]),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gather(outs, "w")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "2 of 3 shards" in message and "[101, 205, 307]" in message
    assert "in evaluate_spark" in message and "in evaluate " not in message
    outs = [SimpleNamespace(w=[("UserWarning", text.format("'a', 'b'"))])]  # string ids
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gather(outs, "w")
    assert "user ids ['a', 'b']" in str(caught[0].message)


def test_local_mode_workers_run_this_python(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)

    def session(master):
        conf = SimpleNamespace(get=lambda key, default=None: default)
        sc = SimpleNamespace(master=master, pythonExec="python3", getConf=lambda: conf)
        return SimpleNamespace(sparkContext=sc)

    assert local_workers_python(session("local[2]")) == sys.executable
    assert local_workers_python(session("yarn")) == "python3"  # a cluster's own setting
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py")
    assert local_workers_python(session("local[*]")) == "python3"
