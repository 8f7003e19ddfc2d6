"""How a job judges relevance from explicit ratings: the dataset's ``relevance_level`` and
``gains`` (MovieLens: 4 and binary) reach the evaluation unless the metrics section sets its
own, and the job says so. Expected values are worked out from the definitions on a 3-user
example: RBP@k = (1 - p) * sum_i gain_i * p^(i-1), p = 0.8."""

from __future__ import annotations

import json

import pytest

from recoeval_tracking.app.pipeline import run_job
from recoeval_tracking.metrics.results import relevance_text

# Items 0..4; popularity in train: 0 (3 users) > 1 (2) > 2 (1); 3 and 4 never in train.
TRAIN = [(0, 0, 1), (1, 0, 1), (2, 0, 1), (0, 1, 1), (1, 1, 1), (1, 2, 1)]
# User 0's pool: 2, 3, 4 (popularity order 2 first); test: item 2 rated 5, item 3 rated 1.
TEST = [(0, 2, 5), (0, 3, 1)]


def _config(tmp_path, **dataset) -> dict:
    rows = ["user,item,value,timestamp"]
    rows += [f"{u},{i},{v},{t}" for t, (u, i, v) in enumerate(TRAIN)]
    rows += [f"{u},{i},{v},{100 + t}" for t, (u, i, v) in enumerate(TEST)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    return {
        "dataset": {"kind": "csv", "path": str(tmp_path / "d.csv"), **dataset},
        "split": {"name": "temporal_global", "cut": 100},
        "model": {"name": "popularity"},
        "metrics": {"names": ["rbp", "bpref"], "k": 2, "ties": "index"},
        "tracking": {"enabled": False},
        "seed": 0,
        "nthreads": 1,
        "progress": "false",
        "plots": False,
    }


def test_binary_relevance_at_a_level(tmp_path):
    out = run_job(
        _config(tmp_path, relevance_level=4, gains="binary"), tmp_path / "job", echo=False
    )
    m = out["metrics"]
    # top 2 of user 0: items 2 (rated 5: the positive, gain 1), then 3 (rated 1: judged
    # non-relevant) -> RBP = 0.2 * 1; bpref: no judged non-relevant above item 2 -> 1
    assert m["rbp_at_2"] == pytest.approx(0.2)
    assert m["bpref_at_2"] == pytest.approx(1.0)
    defs = json.loads((tmp_path / "job" / "definitions.json").read_text())["definitions"]
    assert defs["gains"] == "binary" and defs["relevance_level"] == 4
    assert relevance_text(defs) == (
        "relevance: test entries >= 4 are the positives, with "
        "gain 1; lower ones are judged non-relevant"
    )


def test_ratings_as_gains_when_asked(tmp_path):
    out = run_job(_config(tmp_path), tmp_path / "job", echo=False)
    m = out["metrics"]
    # every rating a positive, ratings as gains: RBP = 0.2 * (5 + 1 * 0.8), above 1
    assert m["rbp_at_2"] == pytest.approx(0.2 * (5 + 0.8))


def test_the_metrics_section_wins(tmp_path):
    cfg = _config(tmp_path, relevance_level=4, gains="binary")
    cfg["metrics"]["gains"] = "graded"
    out = run_job(cfg, tmp_path / "job", echo=False)
    assert out["metrics"]["rbp_at_2"] == pytest.approx(0.2 * 5)  # level 4 kept, gain 5
