"""build_report refuses malformed inputs by name, with the standard message (the checks of
user_features and of each run's per-user table)."""

from __future__ import annotations

import pandas as pd
import pytest
from report_runs import synthetic_run

from recoeval_tracking import InputError
from recoeval_tracking.reporting.report import build_report


def _runs():
    return [
        synthetic_run("a", {"ndcg_at_10": 0.3}, n_users=40, seed=1),
        synthetic_run("b", {"ndcg_at_10": 0.5}, n_users=40, seed=2),
    ]


@pytest.mark.parametrize(
    "features", [pd.DataFrame({"uid": [0, 1], "age": [20, 30]}), {"user_id": [0, 1]}]
)
def test_user_features_need_a_user_id_column(features):
    with pytest.raises(
        InputError,
        match="The 'user_features' parameter of build_report must be "
        "a DataFrame with a 'user_id' column or None",
    ):
        build_report(_runs(), user_features=features, n_bootstrap=0, n_permutations=10)


def test_a_run_without_user_ids_is_named():
    runs = _runs()
    runs[1].per_user = runs[1].per_user.drop(columns="user_id")
    with pytest.raises(InputError) as err:
        build_report(runs, n_bootstrap=0, n_permutations=10)
    assert str(err.value) == (
        "The 'runs' parameter of build_report must be runs whose per_user "
        "table has a 'user_id' column. Got run 'b' (b) without it instead."
    )


def test_fingerprints_from_every_spelling():
    """The data and split fingerprints under each key spelling a dataset.json has used."""
    from recoeval_tracking.reporting.runs import fingerprints_from

    want = {"data": "d", "split": "s", "definitions": "f"}
    for ds in (
        {"data_fingerprint": "d", "split_fingerprint": "s"},
        {"fingerprint": "d", "split": {"fingerprint": "s"}},
        {"data": {"fingerprint": "d"}, "split": {"split_fingerprint": "s"}},
        {"dataset": {"data_fingerprint": "d"}, "split": {"fingerprint": "s"}},
    ):
        assert fingerprints_from(ds, "f") == want, ds
    assert fingerprints_from(None, None) == {}
