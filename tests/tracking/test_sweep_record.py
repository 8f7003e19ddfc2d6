"""The sweep record file: written atomically into a folder created as needed, read back only
when it names a sweep id, and found from a job directory up to four levels below it."""

from __future__ import annotations

import json

from recoeval_tracking.tracking.sweeps import (
    SWEEP_FILE,
    find_sweep_record,
    read_sweep_record,
    write_sweep_record,
)


def test_written_into_a_new_folder_and_rewritten(tmp_path):
    sweep = tmp_path / "multirun" / "2026-01-01" / "12-00-00"
    write_sweep_record(sweep, {"sweep_id": "s1", "parent_run_id": None})
    write_sweep_record(sweep, {"sweep_id": "s1", "parent_run_id": "r1"})  # folder exists now
    assert read_sweep_record(sweep) == {"sweep_id": "s1", "parent_run_id": "r1"}


def test_a_record_without_a_sweep_id_is_none(tmp_path):
    for content in ({}, {"parent_run_id": "r1"}, {"sweep_id": ""}, [1, 2], "text"):
        (tmp_path / SWEEP_FILE).write_text(json.dumps(content))
        assert read_sweep_record(tmp_path) is None, content
    (tmp_path / SWEEP_FILE).write_text("{not json")
    assert read_sweep_record(tmp_path) is None
    assert read_sweep_record(tmp_path / "absent") is None


def test_found_up_to_four_levels_above_the_job(tmp_path):
    write_sweep_record(tmp_path, {"sweep_id": "s2"})
    job = tmp_path / "a" / "b" / "c" / "job"
    job.mkdir(parents=True)
    found = find_sweep_record(job)  # the record is 4 levels up
    assert found is not None and found[0] == tmp_path.resolve() and found[1]["sweep_id"] == "s2"
    deeper = job / "d"
    deeper.mkdir()
    assert find_sweep_record(deeper) is None  # 5 levels up


def test_record_sweep_best_refuses_a_run_id_that_is_not_text(tmp_path):
    """A bad parent run id is refused at the boundary, naming the argument, before any store
    is touched (no store file is created)."""
    import pytest

    from recoeval_tracking import InputError
    from recoeval_tracking.tracking.sweeps import record_sweep_best

    db = tmp_path / "mlflow.db"
    with pytest.raises(InputError, match="parent_run_id"):
        record_sweep_best(
            123, "ndcg_at_10", 0.5, {"model.factors": 8}, step=0, tracking_uri=f"sqlite:///{db}"
        )
    assert not db.exists()
