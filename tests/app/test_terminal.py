"""What the terminal shows: Dask's INFO records held back during an evaluation on a cluster,
the leaderboard text of a sweep (best first, with the sort metric's interval)."""

from __future__ import annotations

import logging

import pandas as pd

from recoeval_tracking import _heartbeat
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


def test_a_stage_says_what_it_does_when_it_starts_and_is_timed(caplog):
    from recoeval_tracking.app.stages import timed_stage

    timings: dict[str, float] = {}
    seen_inside = []
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.app.pipeline"):
        with timed_stage(timings, "split", "with 'random_holdout'"):
            seen_inside.append([r.getMessage() for r in caplog.records])
        with timed_stage(timings, "fit", "ALSModel(factors=8)"):
            pass
        with timed_stage(timings, "prepare", "", quiet=True):
            pass
    # the line is there while the stage is still running, not only once it ends
    assert seen_inside == [["splitting with 'random_holdout'..."]]
    assert [r.getMessage() for r in caplog.records] == [
        "splitting with 'random_holdout'...",
        "fitting ALSModel(factors=8)...",
    ]
    assert set(timings) == {"split", "fit", "prepare"}
    assert all(t >= 0 for t in timings.values())


def test_a_failed_stage_is_timed_too():
    from recoeval_tracking.app.stages import timed_stage

    timings: dict[str, float] = {}
    try:
        with timed_stage(timings, "load", "dataset 'x'"):
            raise ValueError("bad file")
    except ValueError:
        pass
    assert "load" in timings


def test_preparation_steps_are_the_ones_asked_for():
    from recoeval_tracking.app.stages import prep_steps

    default = {"kind": "synthetic", "implicit": {"method": None, "threshold": None, "alpha": 1.0}}
    assert prep_steps(default) == []
    assert prep_steps({**default, "k_core": 5}) == ["k_core"]
    assert prep_steps(
        {"implicit": {"method": None, "threshold": 4.0}, "min_user_interactions": 2}
    ) == ["implicit", "min_user_interactions"]


def test_a_long_stage_says_it_is_still_at_work_and_a_short_one_does_not(caplog, monkeypatch):
    import time

    from recoeval_tracking.app import stages

    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    timings: dict[str, float] = {}
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.app.pipeline"):
        with stages.timed_stage(timings, "fit", "MyModel()"):
            time.sleep(0.3)
        said = [r.getMessage() for r in caplog.records]
        caplog.clear()
        with stages.timed_stage(timings, "split", "with 'random'"):
            pass
    assert said[0] == "fitting MyModel()..."
    ticks = said[1:]
    assert len(ticks) >= 3 and all(t.startswith("... still fitting (") for t in ticks)
    assert [r.getMessage() for r in caplog.records] == ["splitting with 'random'..."]
    # no line after the stage ended: the thread stopped with it
    caplog.clear()
    time.sleep(0.15)
    assert caplog.records == []


def test_the_console_commands_skip_the_collections_of_the_interpreters_exit(monkeypatch):
    import atexit
    import gc

    from recoeval_tracking.app import stages

    registered: list = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(
        atexit, "unregister", lambda f: registered.remove(f) if f in registered else None
    )
    stages.quick_exit()
    stages.quick_exit()
    assert registered == [gc.freeze]  # once, however often a process runs a command
