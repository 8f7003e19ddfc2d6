"""What the terminal shows: Dask's INFO records held back during an evaluation on a cluster,
the leaderboard text of a sweep (best first, with the sort metric's interval)."""

from __future__ import annotations

import logging

import pandas as pd

from recoeval_tracking.app.pipeline import _quiet
from recoeval_tracking.tracking.views import leaderboard_text


def test_dask_info_records_are_held_back_and_others_kept():
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append((record.name, record.levelno))

    root = logging.getLogger()
    handler = Keep(level=logging.DEBUG)
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.INFO)
    try:
        with _quiet("distributed"):
            logging.getLogger("distributed.scheduler").info("State start")
            logging.getLogger("distributed.nanny").warning("worker lost")
            logging.getLogger("distributedx").info("not dask")
            logging.getLogger("recoeval_tracking.app").info("ours")
        logging.getLogger("distributed.scheduler").info("after")
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    assert seen == [
        ("distributed.nanny", logging.WARNING),
        ("distributedx", logging.INFO),
        ("recoeval_tracking.app", logging.INFO),
        ("distributed.scheduler", logging.INFO),
    ]


def test_leaderboard_text_best_first_with_interval():
    board = pd.DataFrame(
        {
            "run_name": ["als", "popularity"],
            "status": ["FINISHED", "FAILED"],
            "ndcg_at_10": [0.3716, 0.1978],
            "ndcg_at_10_ci95_low": [0.36, 0.18],
            "ndcg_at_10_ci95_high": [0.38, 0.21],
            "p_at_10": [0.3, 0.1],
        }
    )
    board.attrs.update(sort_by="ndcg_at_10", headline=["ndcg_at_10", "p_at_10"])
    lines = leaderboard_text(board).splitlines()
    assert lines[0].split() == ["#", "run", "ndcg_at_10", "95%", "interval", "p_at_10"]
    assert lines[1].split() == ["1", "als", "0.3716", "[0.3600,", "0.3800]", "0.3000"]
    assert lines[2].split()[:2] == ["2", "popularity"] and lines[2].endswith("(FAILED)")
