"""Merging repeated (user, item) rows: the merged pair keeps the latest timestamp under "sum"
and "max" (the documented rule of ``build_interactions``), the last row's under "last", so a
temporal split cuts on the time of the latest interaction."""

from __future__ import annotations

import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.data import from_dataframe

#: user 1 met item 1 three times; its first row is not its latest (times 3, 5, 4).
ROWS = pd.DataFrame(
    {
        "user": [1, 1, 1, 1, 2],
        "item": [1, 1, 1, 2, 1],
        "value": [2.0, 4.0, 1.0, 1.0, 3.0],
        "timestamp": [3, 5, 4, 1, 2],
    }
)


@pytest.mark.parametrize("policy, value, ts", [("sum", 7.0, 5), ("max", 4.0, 5), ("last", 1.0, 4)])
def test_merged_pair_keeps_the_latest_timestamp(policy, value, ts):
    X = from_dataframe(ROWS, duplicates=policy)
    assert X.nnz == 3
    assert X.matrix[0, 0] == value
    assert X.timestamps[0, 0] == ts
    assert X.timestamps[0, 1] == 1 and X.timestamps[1, 0] == 2


@pytest.mark.parametrize("policy", ["sum", "max"])
def test_temporal_split_cuts_on_the_latest_time(policy):
    """A global cut at time 5: the merged pair (latest time 5) is a test entry; with its first
    time (3) it would stay in train."""
    X = from_dataframe(ROWS, duplicates=policy)
    s = rt.make_split("temporal_global", X, cut=5)
    assert s.test.nnz == 1
    assert s.test.to_dataframe()[["user", "item"]].values.tolist() == [[1, 1]]
