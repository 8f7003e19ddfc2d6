"""Runs for the report tests: a model fitted and evaluated on a split, synthetic runs of
three systems over several datasets, and two systems over folds."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from report_runs import synthetic_run

import recoeval_tracking as rt


def evaluate_model(split, model: str, **kw):
    """``model`` (a built-in, default settings) fitted on the split's train part and evaluated."""
    scores = rt.make_model(model).fit(split.train.matrix).score_source()
    return rt.evaluate(split.train, split.test, scores=scores, **kw)


#: The three systems, in the order their runs are made (``j`` is the index in this tuple).
SYSTEMS = ("pop", "als", "knn")


def dataset_runs(
    n_datasets: int,
    *,
    seed: int,
    n_users: int,
    means: Callable[[float, int, int], dict[str, float]],
) -> list:
    """One synthetic run per system and dataset ``d``: its own data and split fingerprint,
    ``dataset.name`` ``data{d}``, run id ``{system}@{d}``, seeded ``10 d + j``. A dataset's
    ``base`` level is drawn uniformly in [0.2, 0.4) (``seed``); ``means(base, d, j)`` gives the
    metrics' means of system ``j`` on it."""
    rng = np.random.default_rng(seed)
    runs = []
    for d in range(n_datasets):
        base = rng.uniform(0.2, 0.4)
        for j, model in enumerate(SYSTEMS):
            runs.append(
                synthetic_run(
                    f"{model}@{d}",
                    means(base, d, j),
                    n_users=n_users,
                    seed=10 * d + j,
                    fingerprints={"data": f"d{d}", "split": f"s{d}", "definitions": "f"},
                    params={"model.name": model, "dataset.name": f"data{d}"},
                )
            )
    return runs


def fold_runs(deltas, *, n_users: int, seed: int) -> list:
    """Two systems over ``len(deltas)`` folds: on fold ``s`` every user of "als" scores
    ``deltas[s]`` above "pop" (NDCG@10 drawn from Beta(3, 7), seeded), each fold's test a
    quarter the entries of its training set (``n_test`` 5, ``n_train`` 20), its own split
    fingerprint; run ids ``{system}-{s}``, param ``fold``."""
    import pandas as pd

    from recoeval_tracking.reporting.runs import RunData

    rng = np.random.default_rng(seed)
    runs = []
    for s, delta in enumerate(deltas):
        base = rng.beta(3, 7, n_users)
        for model, values in (("pop", base), ("als", base + delta)):
            per_user = pd.DataFrame(
                {"user_id": np.arange(n_users), "n_train": 20, "n_test": 5, "ndcg_at_10": values}
            )
            runs.append(
                RunData(
                    run_id=f"{model}-{s}",
                    name=f"{model}-{s}",
                    per_user=per_user,
                    params={"model.name": model, "fold": s},
                    fingerprints={"data": "d", "split": f"fold{s}", "definitions": "f"},
                )
            )
    return runs
