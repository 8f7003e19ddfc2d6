"""Atomic writes, markers and locks of a job directory: what another process sees, whatever
happens to the writer."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from recoeval_tracking.jobdir.markers import (
    LockTimeout,
    atomic_write,
    file_lock,
    read_marker,
    remove_stale_temporaries,
    try_lock,
    write_json_atomic,
)

HOLD = """
import sys, time
from recoeval_tracking.jobdir.markers import try_lock
fd = try_lock(sys.argv[1])
print("held" if fd is not None else "busy", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _holder(path, seconds):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "metrics.json"
    write_json_atomic(target, {"a": 1})

    def broken(tmp):
        tmp.write_text('{"a": 2, "trunc')
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        atomic_write(target, broken)
    assert read_marker(target) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]


def test_stale_temporaries_are_removed(tmp_path):
    (tmp_path / ".per_user.parquet.123.abcd.recoeval-tmp").write_bytes(b"PAR1")
    (tmp_path / "keep.txt").write_text("x")
    assert remove_stale_temporaries(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_read_marker(tmp_path):
    assert read_marker(tmp_path / "PENDING") is None
    (tmp_path / "PENDING").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_marker(tmp_path / "PENDING")
    (tmp_path / "PENDING").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        read_marker(tmp_path / "PENDING")


def test_lock_is_reentrant_in_a_thread_and_exclusive_across_processes(tmp_path):
    lock = tmp_path / ".recoeval.lock"
    with file_lock(lock):
        with file_lock(lock):  # the same thread again: no deadlock
            pass
        fd = None
        out = subprocess.run(
            [sys.executable, "-c", HOLD, str(lock), "0"], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "busy"
        assert fd is None
    fd = try_lock(lock)
    assert fd is not None
    os.close(fd)


def test_a_lock_held_elsewhere_times_out_and_is_freed_by_sigkill(tmp_path):
    lock = tmp_path / ".recoeval.lock"
    holder = _holder(lock, 60)
    try:
        t0 = time.monotonic()
        with pytest.raises(LockTimeout, match="locked by another process"):
            with file_lock(lock, timeout=0.3, what="the job directory x"):
                pass
        assert time.monotonic() - t0 < 5
    finally:
        holder.kill()  # SIGKILL: no clean-up runs, the kernel releases the lock
        holder.wait()
    with file_lock(lock, timeout=5):
        pass


def test_lock_if_writable_skips_the_lock_only_where_it_cannot_be_written(tmp_path):
    """A read-only folder is used without a lock (False); any other failure to create the lock
    file (a folder that does not exist) is raised, not taken for read-only."""
    from recoeval_tracking.jobdir.markers import lock_if_writable

    with lock_if_writable(tmp_path / ".recoeval.lock", timeout=1) as held:
        assert held is True
    with pytest.raises(FileNotFoundError):
        with lock_if_writable(tmp_path / "missing" / ".recoeval.lock", timeout=1):
            pass
    if os.geteuid() != 0:  # root writes into read-only folders
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            with lock_if_writable(ro / ".recoeval.lock", timeout=1) as held:
                assert held is False
        finally:
            ro.chmod(0o755)
