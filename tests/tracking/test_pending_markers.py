"""``mark_pending``: the job directory's ``UPLOADING`` marker is replaced by ``PENDING``, never
left beside it (sync would otherwise read the job as killed mid-upload), and the record holds
the scrubbed store address and the error."""

from __future__ import annotations

from recoeval_tracking.jobdir.markers import PENDING, UPLOADING, read_marker, write_json_atomic
from recoeval_tracking.tracking.pending import mark_pending
from recoeval_tracking.tracking.runs import upload_args


def test_mark_pending_replaces_uploading(tmp_path):
    root = tmp_path / "job"
    root.mkdir()
    write_json_atomic(root / UPLOADING, {"started": "2026-01-01T00:00:00+00:00"})
    err = mark_pending(
        root,
        "http://alice:s3cret@store.example:5000",
        ConnectionError("refused"),
        upload_args(experiment="exp"),
    )
    assert not (root / UPLOADING).exists()
    record = read_marker(root / PENDING)
    assert record is not None
    assert "refused" in err and "refused" in record["error"]
    assert "s3cret" not in (root / PENDING).read_text()
    assert record["upload"]["experiment"] == "exp"
