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
