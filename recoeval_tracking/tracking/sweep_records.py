"""A sweep's record file: :data:`SWEEP_FILE` in the sweep directory names the sweep (its id, its
parent run once known, the tracking URI and experiment) so that each job finds its sweep; the
lock files the sweep holds while it runs and while its parent is found or closed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..jobdir.markers import write_json_atomic

__all__ = [
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
]

#: The study's record in the sweep directory (JSON, written by the recoeval sweeper:
#: :mod:`recoeval_tracking.app.study`): the protocol line, the objective, each system's budget.
STUDY_FILE = "recoeval_study.json"

#: File in the sweep directory describing the sweep (JSON: ``sweep_id``, ``parent_run_id`` or
#: null, ``tracking_uri``, ``experiment``).
SWEEP_FILE = "recoeval_sweep.json"
#: Lock file held by the running sweep for its whole life.
SWEEP_LOCK = ".recoeval_sweep.lock"
#: Lock file held while a sweep's parent run is found or created, and while it is closed.
PARENT_LOCK = ".recoeval_parent.lock"
_SWEEP_DEPTH = 4  # how many folders above a job directory its sweep directory may be


def write_sweep_record(sweep_dir: str | Path, record: Mapping[str, Any]) -> Path:
    """Write :data:`SWEEP_FILE` into ``sweep_dir`` (created if needed), atomically."""
    root = Path(sweep_dir)
    root.mkdir(parents=True, exist_ok=True)
    return write_json_atomic(root / SWEEP_FILE, dict(record))


def read_sweep_record(sweep_dir: str | Path) -> dict[str, Any] | None:
    """The record of :data:`SWEEP_FILE` in ``sweep_dir``, or None when there is no readable one
    naming a sweep id."""
    path = Path(sweep_dir) / SWEEP_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("sweep_id") else None


def read_study(sweep_dir: str | Path | None) -> dict[str, Any] | None:
    """The study's record of a sweep directory (:data:`STUDY_FILE`), or None when there is
    none (an older sweep, or a sweep of another sweeper)."""
    if not sweep_dir:
        return None
    try:
        value = json.loads((Path(sweep_dir) / STUDY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def write_study(sweep_dir: str | Path, record: Mapping[str, Any]) -> Path:
    """Write a study's record (:data:`STUDY_FILE`) into the sweep directory, atomically."""
    return write_json_atomic(Path(sweep_dir) / STUDY_FILE, dict(record))


#: The keys that name a system, not a replicate (a baseline job gets the grid's values of the
#: others); and those that configure the run, not what it evaluates.
_SYSTEM_KEYS = ("model", "baselines", "baseline_rank", "phase", "label")
_NOT_SETTINGS = ("hydra", "tracking", "mlflow", "output")


def replicate_of(overrides: str | Sequence[str] | None) -> tuple[str, ...]:
    """The replicate a job evaluates (``seed=1``, ``split.fold=2``), from its overrides (a
    list, or the ``recoeval.overrides`` tag's text): those outside the ``model`` group and the
    keys that name a system or configure the run, ``+``/``~`` dropped, sorted. A job of the
    grid and a baseline's job of the same fold or seed have the same replicate: what a fair
    study chooses within, and what a system is paired with its baselines by."""
    items = overrides.split() if isinstance(overrides, str) else list(overrides or ())
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.lstrip("+~")
        head = key.split(".", 1)[0].split("/", 1)[0]
        if sep and key and head not in _SYSTEM_KEYS and head not in _NOT_SETTINGS:
            out.append(f"{key}={value}")
    return tuple(sorted(out))


def note_swept_keys(sweep_dir: str | Path, keys: list[str]) -> None:
    """Add ``keys`` to the ``swept_keys`` of the sweep's record (written by the app's sweep
    callback, which sees the command line only): the keys of an Optuna search space, or of the
    search spaces a sweep tunes its baselines over. Each job's run is then named after its
    values (``cosknn neighbours=57 shrink=3.142``). Nothing when the sweep is not tracked."""
    record = read_sweep_record(sweep_dir)
    if record is None:  # not tracked
        return
    known = [str(k) for k in record.get("swept_keys") or []]
    keys = [k.lstrip("+~") for k in keys]  # +model.shrink: a key the config did not list
    record["swept_keys"] = known + [k for k in keys if k not in known]
    write_sweep_record(sweep_dir, record)


def find_sweep_record(job_dir: str | Path) -> tuple[Path, dict[str, Any]] | None:
    """The sweep directory above ``job_dir`` (up to four levels) and its record, or None."""
    here = Path(job_dir).resolve()
    for folder in list(here.parents)[:_SWEEP_DEPTH]:
        record = read_sweep_record(folder)
        if record is not None:
            return folder, record
    return None
