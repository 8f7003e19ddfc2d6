"""A sweep's job uploaded as its parent's child, as the app uploads it: one spelling of the
call the tracking tests make for every child."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recoeval_tracking.tracking.pending import upload_or_mark_pending
from recoeval_tracking.tracking.sweeps import SweepParent


def upload_child(
    path: str | Path, parent: SweepParent, uri: str, experiment: str, **more: Any
) -> str | None:
    """:func:`upload_or_mark_pending` of the job folder ``path`` to ``uri`` as a child of
    ``parent`` (its run id and sweep id; ``more`` may say otherwise: ``parent_run_id=None``, a
    job that knows its sweep only); the run id, or None when it was marked pending."""
    child = {"parent_run_id": parent.run_id, "sweep_id": parent.sweep_id, **more}
    return upload_or_mark_pending(path, tracking_uri=uri, experiment=experiment, **child)
