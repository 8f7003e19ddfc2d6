"""Synthetic runs for the report tests (a module of its own, so that no test imports a conftest
by name: two conftest modules on sys.path shadow each other)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def synthetic_run(
    run_id: str,
    means: dict[str, float],
    n_users: int = 300,
    seed: int = 0,
    fingerprints: dict[str, str] | None = None,
    user_ids=None,
    params: dict | None = None,
):
    """A RunData whose per-user values are Beta-distributed around the given means."""
    from recoeval_tracking.reporting.report import RunData

    rng = np.random.default_rng(seed)
    ids = np.arange(n_users) if user_ids is None else np.asarray(user_ids)
    df = pd.DataFrame({"user_id": ids, "n_train": (np.arange(ids.size) % 40) + 1, "n_test": 5})
    for m, mu in means.items():
        df[m] = rng.beta(mu * 10, (1 - mu) * 10, ids.size)
    fps = (
        {"data": "d1", "split": "s1", "definitions": "f1"} if fingerprints is None else fingerprints
    )
    return RunData(run_id=run_id, name=run_id, per_user=df, fingerprints=fps, params=params or {})
