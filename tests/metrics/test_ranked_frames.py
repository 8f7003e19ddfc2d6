"""``evaluate(ranked=DataFrame)``: the frame is checked by the rule a ranked file follows, and
users it gives no list are counted and treated by ``missing_users``.

The example is small enough to check by hand: three users with test items {0}, {1}, {2} and
no train; a frame listing item 0 first for user 0 and item 1 first for user 1, nothing for
user 2. At K = 1, P@1 is 1, 1 and (without a list) 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking import InputError, RankedLists

TEST = sp.csr_array((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(3, 4))


def _frame(**columns):
    base = {"user": [0, 0, 1, 1], "item": [0, 3, 1, 2], "rank": [1, 2, 1, 2]}
    return pd.DataFrame({**base, **columns})


def _eval(ranked, **kw):
    return rt.evaluate(None, TEST, ranked=ranked, k=1, metrics=["p"], **kw)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (
            {"rank": [1, np.nan, 1, 2]},
            r"'rank' column holds a finite number >= 0.*Got nan in row 1",
        ),
        ({"rank": [1, 2, -1, 2]}, r"'rank' column holds a finite number >= 0.*Got -1 in row 2"),
        ({"rank": [1, 2, np.inf, 2]}, r"'rank' column.*Got inf in row 2"),
        ({"rank": [1, 2, 1, "two"]}, r"'rank' column.*Got 'two' in row 3"),
        ({"rank": [1 + 0j, 2, 1, 2]}, r"'rank' column holds a real number.*imaginary"),
        ({"user_id": [0, 0, 1, 1]}, r"one user id column.*both 'user' and 'user_id'"),
        ({"item_id": [0, 3, 1, 2]}, r"one item id column.*both 'item' and 'item_id'"),
        ({"user": [0j, 0j, 1j, 1j]}, r"'user' column holds ids.*complex"),
    ],
)
def test_frames_that_cannot_order_a_list_are_refused(columns, message):
    with pytest.raises(
        InputError, match=r"The 'ranked' parameter of evaluate must be .*" + message
    ):
        _eval(_frame(**columns))


def test_a_frame_without_a_row_is_refused():
    with pytest.raises(InputError, match=r"at least one \(user, item\) row.*Got columns"):
        _eval(_frame().iloc[:0])


def test_a_nan_score_is_refused_and_an_infinite_one_ranks():
    scores = {"score": [0.9, np.nan, 0.9, 0.1]}
    frame = _frame(**scores).drop(columns="rank")
    with pytest.raises(
        InputError, match=r"'score' column holds a number, not NaN.*Got nan in row 1"
    ):
        _eval(frame)
    # +inf ranks first: user 1's list is 2 (+inf), 1, so P@1 = 0 for it
    frame = _frame(score=[0.9, 0.1, 0.5, np.inf]).drop(columns="rank")
    res = _eval(frame, missing_users="skip")
    np.testing.assert_array_equal(res.per_user["p_at_1"], [1.0, 0.0, np.nan])


def test_complex_scores_are_refused_not_truncated():
    frame = _frame(score=[0.9 + 1j, 0.1, 0.5, 0.2]).drop(columns="rank")
    with pytest.raises(InputError, match=r"'score' column holds a real number"):
        _eval(frame)
    with pytest.raises(InputError, match=r"'ranked'.*integer array.*dtype complex128"):
        _eval(np.array([[0, 3], [1, 2], [2, 0]]) + 0j)


def test_missing_users_zero_is_the_default_with_a_warning_and_a_count():
    with pytest.warns(UserWarning, match=r"1 of 3 evaluated users \(33\.3%\) have no list.*\[2\]"):
        res = _eval(_frame())
    np.testing.assert_array_equal(res.per_user["p_at_1"], [1.0, 1.0, 0.0])
    assert res.means["p_at_1"] == pytest.approx(2 / 3)
    src = res.definitions["source"]
    assert (src["users_without_list"], src["evaluated_users"]) == (1, 3)


def test_missing_users_skip_and_error():
    zero = _eval(_frame())
    res = _eval(_frame(), missing_users="skip")
    assert list(res.per_user["nan_reason"]) == ["", "", "no_list"]
    assert res.means["p_at_1"] == 1.0
    assert res.fingerprint != zero.fingerprint
    with pytest.raises(
        InputError,
        match=r"'missing_users' parameter of evaluate is 'error', and "
        r"1 of 3 evaluated users .* user ids \[2\]",
    ):
        _eval(_frame(), missing_users="error")


def test_users_the_nan_rules_leave_out_are_not_counted_as_missing():
    # user 2 has no test item: not evaluated, so a list missing for it is not counted
    test = sp.csr_array((np.ones(2), ([0, 1], [0, 1])), shape=(3, 4))
    res = rt.evaluate(None, test, ranked=_frame(), k=1, metrics=["p"], missing_users="error")
    assert res.definitions["source"]["users_without_list"] == 0
    assert list(res.per_user["nan_reason"]) == ["", "", "no_test"]


def test_missing_users_is_refused_where_it_does_not_apply():
    lists = np.array([[0, 3], [1, 2], [-1, -1]])
    with pytest.raises(InputError, match="'missing_users'.*an array of lists has a row for every"):
        _eval(lists, missing_users="skip")
    with pytest.raises(InputError, match="'missing_users'.*goes with 'ranked'"):
        rt.evaluate(None, TEST, scores=np.ones((3, 4)), k=1, missing_users="skip")
    with pytest.raises(InputError, match=r"'missing_users'.*one of \['zero', 'skip', 'error'\]"):
        _eval(_frame(), missing_users="drop")
    # an array's empty row is an empty list, not a missing user: nothing counted, no warning
    res = _eval(lists)
    assert "users_without_list" not in res.definitions["source"]


def test_lists_from_pairs_carry_the_rule():
    rl = RankedLists.from_pairs(
        np.array([0, 1]), np.array([0, 1]), np.array([1.0, 1.0]), 3, missing_users="skip"
    )
    np.testing.assert_array_equal(rl.listed, [True, True, False])
    res = _eval(rl)
    assert list(res.per_user["nan_reason"]) == ["", "", "no_list"]


def test_the_callers_lists_are_not_changed_by_an_evaluation():
    # the same lists on other data: the count is this evaluation's, not the previous one's
    rl = RankedLists.from_pairs(np.array([0, 1]), np.array([0, 1]), np.array([1.0, 1.0]), 3)
    with pytest.warns(UserWarning, match="1 of 3 evaluated users"):
        _eval(rl)
    assert rl.missing_count is None
    fewer = sp.csr_array((np.ones(2), ([0, 1], [0, 1])), shape=(3, 4))  # user 2: no test item
    res = rt.evaluate(None, fewer, ranked=rl, k=1, metrics=["p"])
    assert res.definitions["source"]["users_without_list"] == 0


def test_list_stage_metrics_follow_the_rule():
    # rbp (p = 0.8) of user 0's list 0, 3 with test {0}: (1 - 0.8) * 0.8**0 = 0.2; user 1's list
    # 1, 2 with test {1}: 0.2; user 2 has no list: 0 under "zero", NaN under "skip"
    zero = rt.evaluate(None, TEST, ranked=_frame(), k=2, metrics=["rbp", "bpref"])
    skip = rt.evaluate(
        None, TEST, ranked=_frame(), k=2, metrics=["rbp", "bpref"], missing_users="skip"
    )
    np.testing.assert_allclose(zero.per_user["rbp_at_2"], [0.2, 0.2, 0.0])
    np.testing.assert_allclose(skip.per_user["rbp_at_2"], [0.2, 0.2, np.nan])
    np.testing.assert_allclose(zero.per_user["bpref_at_2"], [1.0, 1.0, 0.0])
    np.testing.assert_allclose(skip.per_user["bpref_at_2"], [1.0, 1.0, np.nan])
