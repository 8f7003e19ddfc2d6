"""The leaderboard in a sweep parent's description links each run to its page with
``workflowType=machine_learning``: MLflow 3.17's own links to a parent's child runs drop it, and
a fresh browser then opens a run under the GenAI "Evaluations" pages instead of the training
runs (seen on the UI: the sidebar switched to GenAI, the breadcrumb "Evaluations")."""

from __future__ import annotations

import re

import pandas as pd

from recoeval_tracking.tracking.views import _markdown


def _board() -> pd.DataFrame:
    board = pd.DataFrame(
        {
            "run_name": ["als f=8 reg=0.01", "item_knn [x](y)"],
            "run_id": ["68861193c2ee4385b3a129f36514a4b0", "09c6a62bc7a542d49e4e01eb0fbdb708"],
            "status": ["FINISHED", "FINISHED"],
            "ndcg_at_10": [0.3373, 0.3141],
        }
    )
    board.attrs["baselines"] = {"68861193c2ee4385b3a129f36514a4b0": 2}
    return board


def test_each_run_of_the_leaderboard_links_to_its_page_on_the_training_runs():
    board = _board()
    board.attrs["experiment_id"] = "7"
    rows = _markdown(board, ["ndcg_at_10"], "ndcg_at_10").splitlines()[2:]
    links = [re.match(r"\| \[(.*)\]\(([^)\s]*)\) \|", row) for row in rows]
    assert all(links), rows
    assert [m.group(2) for m in links] == [
        "#/experiments/7/runs/68861193c2ee4385b3a129f36514a4b0?workflowType=machine_learning",
        "#/experiments/7/runs/09c6a62bc7a542d49e4e01eb0fbdb708?workflowType=machine_learning",
    ]
    # the name's own marks stay text inside the link
    assert [m.group(1) for m in links] == [
        "als f=8 reg=0.01 (baseline)",
        "item\\_knn \\[x\\]\\(y\\)",
    ]


def test_without_an_experiment_the_names_stay_plain():
    rows = _markdown(_board(), ["ndcg_at_10"]).splitlines()[2:]
    assert rows[0].startswith("| als f=8 reg=0.01 (baseline) | FINISHED |")
