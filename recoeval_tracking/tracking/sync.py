"""The old path of the sync of what is pending (``sync_paths``, ``scan``, ``find_pending``,
``sync_job_dir``, ``SyncOutcome``, ``Found``, ``JOB_FILE_NAMES``): it lives in :mod:`.pending`
with the markers it clears, and reads from here with a :class:`DeprecationWarning` for one
release."""

from __future__ import annotations

from .._moved import moved_names
from .pending import SYNC_NAMES

_MOVED = dict.fromkeys(SYNC_NAMES, "recoeval_tracking.tracking.pending")

__getattr__ = moved_names(__name__, _MOVED)
