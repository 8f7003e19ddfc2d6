"""``job.json``: which job the results are and what made them (uid, time, package version, git
commit, the run's display name and the model); written last into a job directory
(:func:`recoeval_tracking.jobdir.write_job_dir`)."""

from __future__ import annotations

import datetime as _dt
import math
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .markers import FILES, write_json_atomic
from .read import artifact_sizes
from .redact import scrub_mapping, scrub_text

#: Version of the job directory's layout, in ``job.json``.
FORMAT_VERSION = 1


def _git_commit(cwd: Path) -> tuple[str | None, bool | None]:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
        )
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return head.stdout.strip() or None, dirty
    except (OSError, subprocess.SubprocessError):
        return None, None


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("recoeval_tracking")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        from .._version import __version__

        return __version__


def _json_safe(obj: Any) -> Any:
    """Replace non-finite floats by None and numpy scalars by Python ones, recursively."""
    if isinstance(obj, Mapping):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _job_meta(config: str | Mapping | None, model: Mapping[str, Any] | None) -> dict[str, Any]:
    """``label`` (the config's top-level ``label``, a display name) and ``model`` for
    ``job.json``, redacted; empty when neither is known."""
    import yaml

    data: Any = config
    if isinstance(config, str):
        try:
            data = yaml.safe_load(config)
        except yaml.YAMLError:
            data = None
    meta: dict[str, Any] = {}
    label = data.get("label") if isinstance(data, Mapping) else None
    if isinstance(label, str) and label.strip():
        meta["label"] = scrub_text(label.strip())
    if model:
        meta["model"] = _json_safe(scrub_mapping({str(k): v for k, v in model.items()}))
    return meta


def _write_job_json(out: Path, uid: str, meta: Mapping[str, Any] | None = None) -> None:
    commit, dirty = _git_commit(Path.cwd())
    write_json_atomic(
        out / FILES["job"],
        {
            "format_version": FORMAT_VERSION,
            "job_uid": uid,
            "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "package_version": _package_version(),
            "git_commit": commit,
            "git_dirty": dirty,
            "files": artifact_sizes(out),  # compared before an upload (check_job_dir)
            **(meta or {}),
        },
    )
