"""Negative test values with no relevance level: every stored test entry is then a positive whose
value is its gain (recometrics' rule, tests/reference.py), so a -1 (a dislike, a centred rating)
counts as a hit for P@K and leaves NDCG NaN with an empty NaN reason. That was silent; it is
now said in a warning that counts the entries and names ``relevance_level``. The values stay
those of the rule; with a relevance level the same entries are judgements, with no warning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

SCORES = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
TEST = [[-1.0, 0, 0, 2.0], [0, -3.0, 0, 0]]


def test_negative_values_without_a_level_are_said():
    with pytest.warns(UserWarning, match="has 2 stored entries with a negative value") as caught:
        r = rt.evaluate(None, sp.csr_array(np.array(TEST)), scores=SCORES, metrics=["p"], k=2)
    text = str(caught[0].message)
    assert "the smallest -3.0" in text and "relevance_level" in text
    # the rule: user 0's positives are items 0 (rank 1) and 3 (rank 4): P@2 = 1/2; user 1's
    # only positive, item 1, is ranked 3rd: P@2 = 0
    assert r.per_user["p_at_2"].tolist() == [0.5, 0.0]


def test_a_frame_with_negative_ratings_is_said():
    test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 3, 1], "rating": [-1.0, 2.0, -3.0]})
    train = pd.DataFrame({"user": [1], "item": [2], "rating": [1.0]})
    with pytest.warns(UserWarning, match="has 2 stored entries with a negative value"):
        rt.evaluate(train, test, A=np.eye(2), B=np.eye(4, 2), metrics=["p"], k=2)


def test_with_a_level_there_is_no_warning_and_they_are_judgements():
    """Level 1: user 0's only positive (value 2, item 3) is ranked 4th, user 1 has none."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = rt.evaluate(
            None,
            sp.csr_array(np.array(TEST)),
            scores=SCORES,
            metrics=["p"],
            k=2,
            relevance_level=1.0,
        )
    per_user = r.per_user.set_index("user_id")
    assert per_user.loc[0, "p_at_2"] == 0.0
    assert per_user.loc[1, "nan_reason"] == "no_positive"
