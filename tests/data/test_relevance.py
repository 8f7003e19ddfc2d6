"""The relevance rule belongs to the data: loaders set it (MovieLens: ratings >= 4, gain 1;
every other source: every entry a positive, its value its gain), splits and preparation keep it
(``to_implicit`` resets it), a partitioned dataset's manifest records it, and ``evaluate``
applies it unless an argument says otherwise.

Worked example for ``evaluate``: one user, items 0..3 scored 4, 3, 2, 1 (ranked 0, 1, 2, 3), no
train; test ratings item 0: 2, item 1: 5. NDCG@2 with linear gains g:
DCG = g0 / log2(2) + g1 / log2(3); IDCG sorts the gains descending.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking._validation import InputError
from recoeval_tracking.data import (
    EVERY_ENTRY,
    RATINGS,
    Interactions,
    Relevance,
    filter_min_interactions,
    from_dataframe,
    load_csv,
    load_movielens_100k,
    open_partitioned,
    to_implicit,
    write_partitioned,
)

L3 = math.log2(3)


def _udata(path):
    rows = [(1, 10, 5), (1, 11, 2), (1, 12, 4), (2, 10, 3), (2, 11, 4), (2, 13, 1), (3, 12, 5)]
    path.write_text("".join(f"{u}\t{i}\t{r}\t{100 + n}\n" for n, (u, i, r) in enumerate(rows)))
    return path


def test_movielens_loaders_carry_the_ratings_rule_and_others_every_entry(tmp_path):
    udata = _udata(tmp_path / "u.data")
    X = load_movielens_100k(udata)
    assert X.relevance == Relevance(4.0, "binary") == RATINGS
    assert "relevance: test entries >= 4 are the positives, with gain 1" in repr(X)
    assert load_movielens_100k(udata, relevance_level=None, gains="graded").relevance == (
        EVERY_ENTRY
    )
    csv = tmp_path / "r.csv"
    csv.write_text("user,item,value\n1,10,5\n2,10,1\n")
    assert load_csv(csv).relevance == Relevance(None, "graded")
    assert load_csv(csv, relevance_level=3, gains="binary").relevance == Relevance(3.0, "binary")
    assert rt.load_dataset("synthetic", n_users=20, n_items=10, seed=0).relevance == EVERY_ENTRY


def test_a_bad_rule_names_the_argument(tmp_path):
    udata = _udata(tmp_path / "u.data")
    with pytest.raises(InputError, match="gains.*load_movielens_100k.*graded.*binary"):
        load_movielens_100k(udata, gains="yes")
    with pytest.raises(InputError, match="relevance_level.*from_dataframe"):
        from_dataframe(pd.DataFrame({"user": [1], "item": [2]}), relevance_level="high")
    X = load_movielens_100k(udata)
    with pytest.raises(InputError, match="gains.*with_relevance"):
        X.with_relevance(4, "linear")


def test_splits_and_preparation_keep_the_rule_and_to_implicit_resets_it(tmp_path):
    X = load_movielens_100k(_udata(tmp_path / "u.data"))
    split = rt.make_split("leave_one_out", X, seed=0)
    assert split.train.relevance == split.test.relevance == RATINGS
    assert filter_min_interactions(X, 2, 1).relevance == RATINGS
    assert rt.data.k_core(X, 1).relevance == RATINGS
    assert to_implicit(X, "binarize", threshold=4).relevance == EVERY_ENTRY
    Y = X.with_relevance(None, "graded")
    assert Y.relevance == EVERY_ENTRY and X.relevance == RATINGS  # a copy
    assert Y.fingerprint() == X.fingerprint()  # the content is the same


def test_a_partitioned_dataset_keeps_the_rule_in_its_manifest(tmp_path):
    X = load_movielens_100k(_udata(tmp_path / "u.data"))
    split = rt.make_split("leave_one_out", X, seed=0)
    ds = write_partitioned(tmp_path / "p", split.train, split.test, users_per_part=2)
    manifest = json.loads((tmp_path / "p" / "_recoeval_layout.json").read_text())
    assert manifest["relevance"] == {"relevance_level": 4.0, "gains": "binary"}
    assert ds.relevance == RATINGS
    train, test = open_partitioned(tmp_path / "p").load()
    assert train.relevance == test.relevance == RATINGS
    # a manifest written before the rule was recorded: the default rule
    del manifest["relevance"]
    (tmp_path / "p" / "_recoeval_layout.json").write_text(json.dumps(manifest))
    assert open_partitioned(tmp_path / "p").relevance == EVERY_ENTRY
    # bare matrices carry no rule: every entry a positive
    bare = write_partitioned(tmp_path / "q", split.train.matrix, split.test.matrix)
    assert bare.relevance == EVERY_ENTRY


@pytest.fixture
def one_user():
    test = sp.csr_array(np.array([[2.0, 5.0, 0.0, 0.0]]))
    scores = np.array([[4.0, 3.0, 2.0, 1.0]])
    return Interactions(test, np.array([1]), np.arange(4), relevance=RATINGS), scores


def _ndcg2(res):
    return float(res.per_user["ndcg_at_2"].iloc[0])


def test_evaluate_applies_the_data_rule_unless_told_otherwise(one_user):
    test, scores = one_user
    kw = dict(scores=scores, metrics=["ndcg", "p"], k=2)
    data_rule = rt.evaluate(None, test, **kw)
    # item 1 (5 stars) is the one positive, gain 1; item 0 (2 stars) is not
    assert _ndcg2(data_rule) == pytest.approx(1 / L3)
    assert data_rule.per_user["p_at_2"].iloc[0] == pytest.approx(0.5)
    assert data_rule.definitions["relevance_level"] == 4.0
    assert data_rule.definitions["gains"] == "binary"
    assert data_rule.summary().endswith(
        "relevance: test entries >= 4 are the positives, with gain 1; lower ones are judged "
        "non-relevant"
    )
    # the same matrix without the rule: both ratings positives, ratings as gains
    bare = rt.evaluate(None, test.matrix, **kw)
    assert _ndcg2(bare) == pytest.approx((2 + 5 / L3) / (5 + 2 / L3))
    assert bare.fingerprint != data_rule.fingerprint
    # an explicit level overrides the data's, and the data's binary gains stay
    level1 = rt.evaluate(None, test, relevance_level=1, **kw)
    assert _ndcg2(level1) == pytest.approx(1.0)
    # explicit gains override the data's, the data's level stays: gain 5 for item 1 alone
    graded = rt.evaluate(None, test, gains="graded", **kw)
    assert _ndcg2(graded) == pytest.approx(1 / L3)
    assert "gains" not in graded.definitions and graded.definitions["relevance_level"] == 4.0
    # a profile that sets a level keeps its library's convention (trec_eval: -l 1, graded)
    trec = rt.evaluate(None, test, scores=scores, metrics=["ndcg"], k=2, profile="trec_eval")
    assert _ndcg2(trec) == pytest.approx((2 + 5 / L3) / (5 + 2 / L3))
