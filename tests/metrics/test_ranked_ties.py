"""The tie rule of ranked (user, item, score) rows: a tied score goes to the lower item id,
whatever the frame's row order -- the rule of ``evaluate_spark`` (whose frames keep no row
order through a shuffle), so a frame gives the same lists in both.

The example, by hand: one user, test positives {1, 2} (|T| = 2), no train, K = 3; the frame
lists item 4 then item 1, both at score 1.0, then item 2 at 0.5. By the rule the list is
1, 4, 2: hits at ranks 1 and 3, so

* AP@3 = (1/|T|) (1/1 + 2/3) = 5/6,
* NDCG@3 = (1/log2 2 + 1/log2 4) / (1/log2 2 + 1/log2 3) = 1.5 / 1.63093 = 0.91972,

where the rows' order (4, 1, 2: hits at ranks 2 and 3) would give AP@3 = (1/2 + 2/3)/2 = 7/12
and NDCG@3 = (1/log2 3 + 1/log2 4) / 1.63093 = 0.69343.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.scores import RankedLists, id_order

AP = 5 / 6
NDCG = 1.5 / (1 + 1 / math.log2(3))
KW = dict(k=3, metrics=["ap", "ndcg"])


def _check(res):
    assert res.per_user["ap_at_3"].iloc[0] == pytest.approx(AP, rel=1e-12)
    assert res.per_user["ndcg_at_3"].iloc[0] == pytest.approx(NDCG, rel=1e-12)


def test_a_tied_score_goes_to_the_lower_column_index_with_bare_matrices():
    test = sp.csr_array(([1.0, 1.0], ([0, 0], [1, 2])), shape=(1, 6))
    frame = pd.DataFrame({"user": [0, 0, 0], "item": [4, 1, 2], "score": [1.0, 1.0, 0.5]})
    _check(rt.evaluate(None, test, ranked=frame, **KW))


@pytest.mark.parametrize(
    "item_ids",
    [np.array([30, 10, 20, 50, 40, 60]), np.array(["e", "a", "c", "f", "b", "d"])],
    ids=["int", "str"],
)
def test_a_tied_score_goes_to_the_lower_item_id_not_the_lower_column(item_ids):
    # the example with ids whose columns are not in id order: the tied pair is columns 0 and 1
    # (ids 30 and 10, or 'e' and 'a'), the positives columns 1 and 2: the lower id, column 1,
    # goes first (AP 5/6), where the column order or the rows' order would put column 0 first
    test = rt.Interactions(
        sp.csr_array(([1.0, 1.0], ([0, 0], [1, 2])), shape=(1, 6)), np.array(["u"]), item_ids
    )
    frame = pd.DataFrame({"user": ["u"] * 3, "item": item_ids[:3], "score": [1.0, 1.0, 0.5]})
    _check(rt.evaluate(None, test, ranked=frame, **KW))
    _check(rt.evaluate(None, test, ranked=frame.iloc[[1, 0, 2]], **KW))  # any row order


def test_lists_from_pairs_order_ties_by_the_tie_key():
    users, items, key = np.zeros(3, int), np.array([4, 1, 2]), np.array([-1.0, -1.0, -0.5])
    np.testing.assert_array_equal(RankedLists.from_pairs(users, items, key, 1).items, [[1, 4, 2]])
    tie = np.array([0, 9, 5])  # item 4 has the lower id
    got = RankedLists.from_pairs(users, items, key, 1, tie=tie).items
    np.testing.assert_array_equal(got, [[4, 1, 2]])


def test_id_order_is_the_position_in_sorted_order():
    assert id_order(np.array([10, 20, 30])) is None  # ascending: the index order is the id order
    np.testing.assert_array_equal(id_order(np.array([30, 10, 20])), [2, 0, 1])
    np.testing.assert_array_equal(id_order(np.array(["b", "c", "a"])), [1, 2, 0])
    assert id_order(np.array([1, "a"], dtype=object)) is None  # not comparable: index order
