"""The old path of a sweep directory's records (``SWEEP_FILE``, the study's record, the locks,
``replicate_of``, ``note_swept_keys``): they live in :mod:`.sweeps` beside the parent run they
name, and read from here with a :class:`DeprecationWarning` for one release."""

from __future__ import annotations

from .._moved import moved_names

_MOVED = dict.fromkeys(
    (
        "SWEEP_FILE",
        "SWEEP_LOCK",
        "PARENT_LOCK",
        "write_sweep_record",
        "read_sweep_record",
        "find_sweep_record",
        "note_swept_keys",
        "STUDY_FILE",
        "read_study",
        "write_study",
        "replicate_of",
    ),
    "recoeval_tracking.tracking.sweeps",
)

__getattr__ = moved_names(__name__, _MOVED)
