"""Hand-built :class:`Results` for tracking tests: random per-user tables with NaN users."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recoeval_tracking.metrics.results import Results


def make_results(
    n_users: int = 50,
    k: int = 5,
    seed: int = 0,
    *,
    curves: tuple[str, ...] = ("ndcg", "p"),
    extra_metrics: tuple[str, ...] = ("r",),
    with_auc: bool = True,
) -> Results:
    """A Results with ``n_users`` users: ~10% ``no_test`` and ~5% ``cold_start`` (all metrics
    NaN), the rest random in [0, 1]. Curves are cumulative-looking (nondecreasing for ndcg) and
    their column at K equals the per-user value at K, as the evaluator guarantees."""
    rng = np.random.default_rng(seed)
    reasons = np.array([""] * n_users, dtype=object)
    r = rng.random(n_users)
    reasons[r < 0.10] = "no_test"
    reasons[(r >= 0.10) & (r < 0.15)] = "cold_start"
    nan_rows = reasons != ""
    per_user = pd.DataFrame(
        {
            "user_id": [f"u{i:05d}" for i in range(n_users)],
            "n_train": rng.integers(1, 50, n_users),
            "n_test": np.where(reasons == "no_test", 0, rng.integers(1, 10, n_users)),
            "nan_reason": reasons.astype(str),
        }
    )
    curves_per_user = {}
    for name in curves:
        arr = np.sort(rng.random((n_users, k)), axis=1)
        if name == "p":
            arr = arr[:, ::-1].copy()
        arr[nan_rows] = np.nan
        curves_per_user[f"{name}_at_k"] = arr
        per_user[f"{name}_at_{k}"] = arr[:, -1]
    for name in extra_metrics:
        v = rng.random(n_users)
        v[nan_rows] = np.nan
        per_user[f"{name}_at_{k}"] = v
    if with_auc:
        v = rng.random(n_users)
        v[nan_rows] = np.nan
        v[rng.random(n_users) < 0.05] = np.nan  # undefined by rule for a few more users
        per_user["roc_auc"] = v
    definitions = {"ndcg_gain": "linear", "ties": "average", "k": k, "profile": "recometrics"}
    return Results(
        per_user=per_user,
        k=k,
        curves_per_user=curves_per_user,
        definitions=definitions,
        fingerprint=f"def{seed:05d}abc",
        timings={"eval": 0.25, "fit_seconds": 1.5},
    )
