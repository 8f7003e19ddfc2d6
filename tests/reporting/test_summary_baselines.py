"""The summary table marks every baseline of a sweep, not only the report's own."""

from __future__ import annotations

import numpy as np
import pandas as pd

import recoeval_tracking as rt
from recoeval_tracking.reporting.render.summary import summary_table
from recoeval_tracking.reporting.runs import RunData


def test_every_baseline_is_marked_in_the_summary():
    rng = np.random.default_rng(2)
    users = np.arange(30)

    def run(name, rank=None):
        tags = {} if rank is None else {"recoeval.baseline_rank": str(rank)}
        table = pd.DataFrame({"user_id": users, "ndcg_at_10": rng.random(30)})
        return RunData(run_id=name, name=name, per_user=table, tags=tags)

    runs = [run("pop", 0), run("als", 1), run("mine")]
    report = next(iter(rt.compare(runs, n_bootstrap=20, n_permutations=20).reports.values()))
    assert sorted(summary_table(report)["run"]) == ["als (baseline)", "mine", "pop (baseline)"]
