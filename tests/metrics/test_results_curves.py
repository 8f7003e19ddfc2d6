"""``Results.curves_ci``: each curve's own mean and Student-t 95% interval at every k."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from recoeval_tracking.metrics.results import Results


def test_each_curve_keeps_its_own_intervals():
    rng = np.random.default_rng(0)
    curves = {
        "recall_at_k": rng.random((30, 3)),
        "ndcg_at_k": rng.random((30, 3)) + 5.0,  # another range: a mix-up cannot pass
    }
    curves["ndcg_at_k"][:4, 1] = np.nan  # undefined users are left out of n
    res = Results(per_user=pd.DataFrame({"user_id": np.arange(30)}), k=3, curves_per_user=curves)
    table = res.curves_ci()
    assert list(table.columns) == ["curve", "k", "mean", "ci95_low", "ci95_high", "n"]
    assert table[["curve", "k"]].values.tolist() == [
        [name, k] for name in curves for k in (1, 2, 3)
    ]
    for name, arr in curves.items():
        for k in (1, 2, 3):
            values = arr[:, k - 1][~np.isnan(arr[:, k - 1])]
            half = stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
            row = table[(table["curve"] == name) & (table["k"] == k)].iloc[0]
            assert row["n"] == values.size
            np.testing.assert_allclose(
                [row["mean"], row["ci95_low"], row["ci95_high"]],
                [values.mean(), values.mean() - half, values.mean() + half],
                rtol=1e-12,
            )
