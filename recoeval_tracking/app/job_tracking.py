"""The tracking step of a job: its MLflow run (new, a sweep's child, or the caller's open run),
its params and its name; and the store a ``tracking`` config section names."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._heartbeat import heartbeat
from .._validation import param_error

__all__ = ["track_job", "tracking_uri_for", "user_params"]

logger = logging.getLogger("recoeval_tracking.app.pipeline")

_FUNC = "run_job"


def track_job(
    cfg: Mapping[str, Any],
    out: Path,
    base: Path,
    tracking_uri: str | None,
    sweep: Mapping[str, Any] | None,
    overrides: list[str] | None = None,
    model_name: str | None = None,
    run_id: str | None = None,
) -> str | None:
    """Log the job folder as one MLflow run (``run_id``: into that existing run) unless
    tracking is off; None when it is off or the store could not be reached (the folder is then
    marked pending)."""
    tracking = dict(cfg.get("tracking") or {"enabled": False})
    if not tracking.get("enabled", False):
        return None
    from ..tracking import DEFAULT_EXPERIMENT, upload_or_mark_pending
    from ..tracking.names import short_run_name

    uri = tracking_uri or tracking_uri_for(tracking, base)
    swept = (sweep or {}).get("swept_keys") if sweep else None
    named = dict(cfg)
    if model_name and not (named.get("model") or {}).get("name"):
        named["model"] = {**dict(named.get("model") or {}), "name": model_name}
    name = short_run_name(
        named, overrides, swept if sweep else None, suffix=f"#{out.name}" if sweep else ""
    )
    if cfg.get("phase") == "selection":  # a fair study's job on validation only
        name = f"{name} (validation)"
    sweep = dict(sweep or {})
    if run_id is not None:  # the caller's open run (the user's own app): add the job to it
        from ..tracking.runs import log_job_dir_into_run

        log_job_dir_into_run(
            out,
            run_id,
            tracking_uri=uri,
            sweep_id=sweep.get("sweep_id"),
            parent_run_id=sweep.get("parent_run_id"),
            params=user_params(cfg),
        )
        logger.info("MLflow run %s in %s (the run open in this process)", run_id, _scrub(uri))
        return run_id
    rank = cfg.get("baseline_rank")  # a baseline job of a sweep (baselines=[...])
    tags = (
        None if rank is None else {"recoeval.baseline": "true", "recoeval.baseline_rank": str(rank)}
    )
    experiment = tracking.get("experiment") or DEFAULT_EXPERIMENT
    # MLflow's import and its store's start take seconds: say what the job is doing meanwhile
    logger.info("logging the job to MLflow (%s, experiment %r)...", _scrub(uri), experiment)
    t0 = time.perf_counter()
    upload = {
        "tracking_uri": uri,
        "experiment": experiment,
        "parent_run_id": sweep.get("parent_run_id"),
        "sweep_id": sweep.get("sweep_id"),
        "params": user_params(cfg),
        "run_name": name,
        "precision": tracking.get("precision") or "auto",
        "tags": tags,
    }
    with heartbeat("logging the job to MLflow", logger.info):
        done, run_id = _in_upload_child(out, upload)
        if not done:
            run_id = upload_or_mark_pending(out, **upload)
    if run_id is not None:
        logger.info(
            "MLflow run %s in %s (logged in %.2f s)", run_id, _scrub(uri), time.perf_counter() - t0
        )
    return run_id


#: Top-level settings that are not the experiment's (where and how the job ran).
#: ``baselines`` and ``baseline_rank`` belong to the sweep (a baseline job is tagged instead).
_RUNTIME_KEYS = (
    "tracking",
    "backend",
    "nthreads",
    "progress",
    "plots",
    "objective",
    "hydra",
    "baselines",
    "baseline_rank",
)


def _in_upload_child(out: Path, upload: dict[str, Any]) -> tuple[bool, str | None]:
    """The upload by the command's upload child, when it started one
    (:func:`~recoeval_tracking.app.startup.prestart_uploader`: MLflow already imported there):
    whether it took it, and the run id."""
    from .startup import uploader

    proc = uploader()
    if proc is None:
        return False, None
    from .._uploader_child import upload_in_child

    return upload_in_child(proc, out, upload)


def user_params(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The config the user chose, as run params: data, split, model and metric options, the
    top-level seed, and the other sections of a user's own app (tracking, output and runtime
    settings left out)."""
    return {k: v for k, v in cfg.items() if k not in _RUNTIME_KEYS}


def tracking_uri_for(tracking: Mapping[str, Any], base_dir: str | Path | None = None) -> str:
    """The MLflow store of a ``tracking`` config section: ``tracking.uri`` when set, else the
    local SQLite store ``sqlite:///<base_dir>/mlflow.db`` (``base_dir``: the directory the command
    was started from; default the current directory)."""
    uri = tracking.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise param_error("tracking.uri", _FUNC, "an MLflow tracking URI (str) or null", uri)
    if uri:
        return uri
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    return f"sqlite:///{(base / 'mlflow.db').resolve()}"


def _scrub(uri: str) -> str:
    from ..jobdir.redact import scrub_url

    return scrub_url(uri)
