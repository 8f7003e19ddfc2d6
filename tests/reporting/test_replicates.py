"""The row of a replicate: each metric's mean over that replicate's users, NaN users left out
(the per-user NaN rule: an undefined user is not a 0), NaN only when every user is NaN."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from recoeval_tracking.reporting.replicates import aggregate_replicates
from recoeval_tracking.reporting.runs import RunData


def _run(name: str, seed: int, ndcg: list[float], p: list[float]) -> RunData:
    per_user = pd.DataFrame(
        {"user_id": np.arange(len(ndcg)), "n_test": 1, "ndcg_at_10": ndcg, "p_at_10": p}
    )
    return RunData(
        run_id=name,
        name=name,
        per_user=per_user,
        params={"model.name": "als", "seed": seed},
        fingerprints={"data": "d", "split": f"s{seed}", "definitions": "f"},
    )


def test_replicate_mean_leaves_nan_users_out():
    runs = [
        _run("a0", 0, [0.2, math.nan, 0.4], [0.1, 0.3, 0.5]),
        _run("a1", 1, [0.6, 0.8, 1.0], [math.nan, math.nan, math.nan]),
    ]
    (group,) = aggregate_replicates(runs, "seed", group_by=["model.name"])
    rows = group.per_user.set_index("user_id")
    assert list(rows.index) == ["0", "1"]
    assert rows.loc["0", "ndcg_at_10"] == (0.2 + 0.4) / 2  # the NaN user left out
    assert rows.loc["1", "ndcg_at_10"] == (0.6 + 0.8 + 1.0) / 3
    assert rows.loc["0", "p_at_10"] == (0.1 + 0.3 + 0.5) / 3
    assert math.isnan(rows.loc["1", "p_at_10"])  # no user defined: NaN
    assert "n_test" not in rows.columns  # counts are not metrics
