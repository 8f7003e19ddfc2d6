"""Hydra callback mapping a multirun sweep to one MLflow parent run with every job as a child.

Registered in ``configs/config.yaml`` under ``hydra.callbacks.mlflow_sweep``. It works the same
with Hydra's basic launcher, the joblib launcher and the submitit launchers (``submitit_local``,
``submitit_slurm``: each job in a process of its own, on other machines with SLURM; the sweep
directory is on a shared file system, as submitit requires), and with the Optuna sweeper:

* ``on_multirun_start`` first refuses a launcher that runs jobs on other machines with a local
  SQLite or file store (:func:`~recoeval_tracking.app.precheck.check_launcher_store`), by
  raising :class:`SweepRefused`: a cluster sweep needs ``tracking=server``.

* With the ``recoeval`` sweeper (``hydra/sweeper=recoeval``, the app's default) what follows
  waits until that sweeper has composed every job of the sweep
  (:func:`start_sweep_tracking`): a sweep stopped by a job that does not compose leaves no run
  in MLflow and prints no report command. Other sweepers (``optuna``) start it at once; they
  cannot run ``baselines``, which is refused before any job.

* ``on_multirun_start`` (in the launching process) takes the sweep lock
  (:data:`~recoeval_tracking.tracking.sweeps.SWEEP_LOCK`, held until the process ends, so a
  sync can tell a killed sweep from a running one), creates the RUNNING parent run with
  :func:`recoeval_tracking.tracking.sweeps.create_sweep_parent` and writes the sweep id, the
  parent's id and the store into ``<sweep dir>/recoeval_sweep.json``. Each job (in this
  process or in a joblib worker) reads that file (:func:`read_sweep_parent`) and logs its own
  run as a child (``parent_run_id``), tagged with the same ``recoeval.sweep_id``. The parent id
  never travels through ``MLFLOW_RUN_ID``: with that variable set MLflow resumes the parent
  instead of creating a child, and joblib reuses worker processes from job to job.
* When the store cannot be reached at start, the file is written all the same, with the sweep
  id and no parent: the jobs (or ``recoeval-track-sync``, later) find the parent by its sweep
  id on the store or create it
  (:func:`~recoeval_tracking.tracking.sweeps.find_or_create_sweep_parent`, race-safe across
  machines), so the sweep still has one parent.
* ``on_multirun_end`` closes the parent as FINISHED with a leaderboard of the children
  (:func:`~recoeval_tracking.tracking.pending.finish_sweep_parent_or_mark_pending`); with
  ``baselines``, the end of the sweep says how each system compares with each baseline, paired
  by fold or seed (:func:`baseline_lines`).
* When a job fails Hydra never calls ``on_multirun_end``; an exit handler (and a SIGTERM
  handler) registered at sweep start closes the parent then, as FAILED (KILLED when the sweep
  was interrupted). A store that cannot be reached leaves ``PENDING_SWEEP`` in the sweep
  directory for ``recoeval-track-sync``, which also closes, as KILLED, the parent of a sweep
  killed outright (SIGKILL), once its lock is free.

The parent's tags and name hold the overrides redacted
(:func:`recoeval_tracking.jobdir.redact.scrub_overrides`); Hydra's own ``multirun.yaml`` keeps
them as typed.

With ``tracking=none`` the callback opens no run; the sweep still ends with its leaderboard,
protocol, budgets, leakage and report command, read from the job folders
(:func:`~recoeval_tracking.app.local_sweep.local_sweep_end_text`). A single run (no ``-m``) has no parent: its run
carries its own job uid as ``recoeval.sweep_id``.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from .job_name import JobNameCheck, StartRefused
from .pipeline import tracking_uri_for

__all__ = [
    "MlflowSweepCallback",
    "SWEEP_FILE",
    "read_sweep_parent",
    "job_sweep_record",
    "note_interrupted",
    "start_sweep_tracking",
    "baseline_lines",
    "SweepRefused",
]

logger = logging.getLogger(__name__)

#: File in the sweep directory describing the sweep and its parent run (JSON).
SWEEP_FILE = "recoeval_sweep.json"  # the same as recoeval_tracking.tracking.sweeps.SWEEP_FILE

_interrupted = threading.Event()

#: The sweeper that composes every job first and then calls :func:`start_sweep_tracking`.
_RECOEVAL_SWEEPER = "hydra_plugins.recoeval_sweeper.sweeper.RecoevalSweeper"
#: Callbacks whose sweep waits for :func:`start_sweep_tracking`, with their sweep's config.
_waiting: list[tuple[MlflowSweepCallback, DictConfig]] = []


class SweepRefused(StartRefused):
    """A sweep refused before any job is launched (a local store with a cluster launcher).

    A ``BaseException`` on purpose: Hydra turns the exceptions raised by callbacks into
    warnings, and this one must stop the sweep; ``recoeval-track`` prints ``error`` as a usage
    error (status 2)."""


def note_interrupted() -> None:
    """Record that the sweep was interrupted (Ctrl-C, SIGTERM): an open parent closes KILLED."""
    _interrupted.set()


def read_sweep_parent(sweep_dir: str | Path) -> dict[str, Any] | None:
    """The record written at sweep start (``sweep_id``, ``parent_run_id`` (None when the store
    could not be reached then), ``tracking_uri``, ``experiment``), or None when the sweep is not
    tracked."""
    from ..tracking.sweeps import read_sweep_record

    return read_sweep_record(sweep_dir)


def job_sweep_record(hc: Any) -> dict[str, Any] | None:
    """The sweep record of the job running under ``hc`` (Hydra's runtime config): the record of
    its sweep directory (relative to the start directory) in a multirun, else None."""
    from hydra.types import RunMode

    if hc.mode != RunMode.MULTIRUN:
        return None
    sweep_dir = Path(str(hc.sweep.dir))
    if not sweep_dir.is_absolute():
        sweep_dir = Path(hc.runtime.cwd) / sweep_dir
    return read_sweep_parent(sweep_dir)


def _sweep_dir_of(config: DictConfig) -> Path:
    """The sweep's folder (``hydra.sweep.dir``, relative to the start directory)."""
    sweep_dir = Path(str(config.hydra.sweep.dir))
    return sweep_dir if sweep_dir.is_absolute() else Path(config.hydra.runtime.cwd) / sweep_dir


def _sweep_overrides(config: DictConfig) -> list[str]:
    try:
        return [str(o) for o in OmegaConf.to_container(config.hydra.overrides.task, resolve=False)]
    except Exception:  # noqa: BLE001 - best effort, only used for names and params
        return []


def _create_parent(
    config: DictConfig, sweep_dir: Path, uri: str, experiment: str, sweep_id: str
) -> str | None:
    """Create the sweep's RUNNING parent run; None (and a warning) when the store cannot be
    reached: the jobs or a later sync then find or create it by ``sweep_id``."""
    from ..jobdir.redact import scrub_overrides, scrub_text
    from ..tracking.client import _fast_fail_http
    from ..tracking.names import MAX_NAME_CHARS, swept_keys
    from ..tracking.sweeps import create_sweep_parent

    overrides = _sweep_overrides(config)
    grid = {}
    for item in overrides:
        key, _, value = item.partition("=")
        key = key.lstrip("+~")
        if "," in value or value.startswith(("range(", "choice(", "interval(")):
            grid[f"sweep.{key}"] = value
    launcher = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
    swept = swept_keys(overrides)
    name = ("sweep " + " ".join(k.rsplit(".", 1)[-1] for k in swept))[:MAX_NAME_CHARS]
    try:
        with _fast_fail_http():  # a dead server fails in seconds, as job uploads do
            parent = create_sweep_parent(
                tracking_uri=uri,
                experiment=experiment,
                sweep_id=sweep_id,
                run_name=name if swept else None,
                tags={
                    "recoeval.sweep_dir": str(sweep_dir),
                    "recoeval.launcher": launcher.rsplit(".", 1)[-1],
                    "recoeval.overrides": " ".join(scrub_overrides(overrides)),
                },
                params=grid or None,
            )
    except Exception as err:  # noqa: BLE001 - the jobs must still run and keep results
        first = (str(err).splitlines() or [""])[0][:300]
        print(
            scrub_text(
                f"recoeval: WARNING: could not create the sweep's parent run on {uri} "
                f"({type(err).__name__}: {first}). The jobs still run; the parent is "
                f"created by sweep id {sweep_id} when the store can be reached (by "
                "the jobs, or by recoeval-track-sync)."
            ),
            file=sys.stderr,
            flush=True,
        )
        return None
    return parent.run_id


def start_sweep_tracking() -> None:
    """Start the tracking of the sweep this process runs (parent run, sweep record, lock), once
    its sweeper composed every job: the ``recoeval`` sweeper calls it before the first job. A
    no-op when the sweep is not tracked."""
    while _waiting:
        callback, config = _waiting.pop(0)
        callback._start(config)


def _check_baselines_sweeper(config: DictConfig) -> None:
    """``baselines`` needs the ``recoeval`` sweeper (another sweeper would drop them)."""
    from .._validation import InputError

    baselines = OmegaConf.select(config, "baselines", default=None)
    target = str(OmegaConf.select(config, "hydra.sweeper._target_", default="") or "")
    if baselines and target != _RECOEVAL_SWEEPER:
        raise SweepRefused(
            InputError(
                f"baselines={list(baselines)} runs beside a grid of hydra/sweeper=recoeval; the "
                f"sweeper of this sweep is {target.rsplit('.', 1)[-1] or 'another one'}, which "
                "would not run them. Drop baselines=... (run the baselines as a sweep of their "
                "own), or, in a Hydra app of your own, add '- override hydra/sweeper: recoeval' "
                "to its defaults list."
            )
        )


def baseline_lines(board: Any, tags: dict[str, dict[str, str]]) -> list[str]:
    """How each system of a sweep compares with each baseline on the leaderboard's sort
    metric: one block per baseline, in the order of ``baselines=[...]``; each run is paired
    with the baseline's run of the same replicate (fold, seed: the overrides outside the model
    group), and a system's difference is the mean over the replicates paired, their number
    beside it (:func:`~recoeval_tracking.tracking.sweeps.baseline_differences`, the numbers the
    parent run and each run's ``vs_<baseline>_<metric>`` hold). ``board`` as
    :func:`~recoeval_tracking.tracking.sweeps.build_leaderboard` returns it, ``tags`` the tags
    of each run by id. Empty when no run is a baseline (``recoeval.baseline_rank``) or the sort
    metric is unknown."""
    from ..tracking.sweeps import baseline_differences, baseline_text

    return baseline_text(baseline_differences(board, tags))


def _with_baselines(text: str, parent_run_id: str, uri: str) -> str:
    """The sweep's closing text with :func:`baseline_lines` after its leaderboard."""
    from ..tracking.search import search_runs_for_report
    from ..tracking.sweeps import build_leaderboard

    try:
        board = build_leaderboard(parent_run_id, tracking_uri=uri)
        sweep_id = search_runs_for_report(tracking_uri=uri, run_ids=[parent_run_id])[0]["tags"].get(
            "recoeval.sweep_id"
        )
        runs = search_runs_for_report(tracking_uri=uri, sweep_id=sweep_id) if sweep_id else []
        lines = baseline_lines(board, {r["run_id"]: r["tags"] for r in runs})
    except Exception:  # noqa: BLE001 - the comparison is a convenience; the table is printed
        return text
    if not lines:
        return text
    out = text.splitlines()
    at = next((i for i, line in enumerate(out) if line.startswith("compare them with")), len(out))
    return "\n".join(out[:at] + lines + out[at:])


class MlflowSweepCallback(JobNameCheck):
    """Parent run per multirun sweep, closed with a leaderboard of its children; see the module
    docstring. It refuses a ``hydra.job.name`` that is not a plain name first
    (:class:`~recoeval_tracking.app.job_name.JobNameCheck`), in a Hydra app of the user's own
    too."""

    def __init__(self) -> None:
        self._parent: dict[str, Any] | None = None
        self._sweep_dir: Path | None = None
        self._closed = False
        self._previous_sigterm: Any = None
        self._lock_fd: int | None = None
        self._baselines = False
        self._untracked_dir: Path | None = None  # a sweep with tracking=none: its folder

    # -- Hydra hooks ------------------------------------------------------------------------
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        super().on_multirun_start(config, **kwargs)  # before the parent run
        _check_baselines_sweeper(config)
        from .pipeline import progress_mode

        try:  # a bad setting every job shares fails once, before the parent run and any job
            if config.get("progress") is not None:
                progress_mode(config.progress)
        except Exception as err:
            raise SweepRefused(err) from err
        tracking = (
            OmegaConf.to_container(config.tracking, resolve=True) if "tracking" in config else None
        )
        if not isinstance(tracking, dict) or not tracking.get("enabled", False):
            self._untracked_dir = _sweep_dir_of(config)
            atexit.register(self._end_untracked)  # a failed job skips on_multirun_end
            return
        from .precheck import check_launcher_store

        uri = tracking_uri_for(tracking, Path(config.hydra.runtime.cwd))
        try:
            check_launcher_store(OmegaConf.select(config, "hydra.launcher._target_"), uri)
        except Exception as err:
            raise SweepRefused(err) from err
        if OmegaConf.select(config, "hydra.sweeper._target_", default=None) == _RECOEVAL_SWEEPER:
            _waiting[:] = [(self, config)]  # once every job composes (one sweep a process)
            return
        self._start(config)

    def _start(self, config: DictConfig) -> None:
        """The sweep lock, the parent run and the sweep record; see the module docstring."""
        from ..jobdir.markers import try_lock
        from ..tracking.client import DEFAULT_EXPERIMENT
        from ..tracking.sweeps import SWEEP_LOCK, new_sweep_id, write_sweep_record

        tracking = OmegaConf.to_container(config.tracking, resolve=True)
        assert isinstance(tracking, dict)
        base_dir = Path(config.hydra.runtime.cwd)
        uri = tracking_uri_for(tracking, base_dir)
        self._baselines = bool(OmegaConf.select(config, "baselines", default=None))
        sweep_dir = _sweep_dir_of(config)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = try_lock(sweep_dir / SWEEP_LOCK)  # held until this process ends
        experiment = tracking.get("experiment") or DEFAULT_EXPERIMENT
        sweep_id = new_sweep_id()  # read back as text from a command line
        from .._heartbeat import heartbeat
        from ..jobdir.redact import scrub_text

        # MLflow's import and a new store's tables take seconds before the first job starts
        logger.info("creating the sweep's MLflow parent run (%s)...", scrub_text(uri))
        with heartbeat("creating the sweep's parent run", logger.info):
            parent_run_id = _create_parent(config, sweep_dir, uri, experiment, sweep_id)
        from ..tracking.names import swept_keys

        self._parent = {
            "sweep_id": sweep_id,
            "parent_run_id": parent_run_id,
            "tracking_uri": uri,
            "experiment": experiment,
            "swept_keys": swept_keys(_sweep_overrides(config)),
        }
        self._sweep_dir = sweep_dir
        write_sweep_record(sweep_dir, self._parent)
        atexit.register(self._close_at_exit)
        self._install_sigterm()
        logger.info(
            "MLflow sweep %s, parent run %s",
            sweep_id,
            parent_run_id or "to be created when the store can be reached",
        )

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._end_untracked()
        self.close("FINISHED")

    def _end_untracked(self) -> None:
        """A sweep without tracking ends with the lines a tracked one prints, read from its job
        folders (:func:`~recoeval_tracking.app.local_sweep.local_sweep_end_text`)."""
        if self._untracked_dir is None:
            return
        sweep_dir, self._untracked_dir = self._untracked_dir, None
        atexit.unregister(self._end_untracked)
        from .local_sweep import local_sweep_end_text

        try:
            text = local_sweep_end_text(sweep_dir)
        except Exception as err:  # noqa: BLE001 - never mask the sweep's own outcome
            text = f"recoeval: WARNING: could not read the sweep's job folders ({err})."
        if text:
            print(text, flush=True)

    # -- closing ----------------------------------------------------------------------------
    def close(self, status: str) -> bool:
        """Close the parent run once with ``status``; True when it was closed now."""
        if self._parent is None or self._closed:
            return False
        self._closed = True
        atexit.unregister(self._close_at_exit)
        self._restore_sigterm()
        from ..tracking.pending import finish_sweep_parent_or_mark_pending

        try:
            closed = finish_sweep_parent_or_mark_pending(
                self._sweep_dir,
                self._parent["parent_run_id"],
                status,
                sweep_id=self._parent["sweep_id"],
                experiment=self._parent["experiment"],
                tracking_uri=self._parent["tracking_uri"],
            )
            if closed and self._parent.get("parent_run_id"):
                from ..tracking.sweeps import sweep_end_text

                # the leaderboard, the report command and the UI's addresses, last on screen
                text = sweep_end_text(self._parent["parent_run_id"], self._parent["tracking_uri"])
                if self._baselines:
                    text = _with_baselines(
                        text, self._parent["parent_run_id"], self._parent["tracking_uri"]
                    )
                print(text, flush=True)
            return closed
        except Exception as err:  # noqa: BLE001 - never mask the sweep's own outcome
            from ..jobdir.redact import scrub_text

            print(
                scrub_text(
                    f"recoeval: WARNING: could not close the parent run of sweep "
                    f"{self._parent['sweep_id']} ({type(err).__name__}: {err})."
                ),
                file=sys.stderr,
                flush=True,
            )
            return False
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    def _close_at_exit(self) -> None:
        self.close("KILLED" if _interrupted.is_set() else "FAILED")

    def _install_sigterm(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        if previous not in (signal.SIG_DFL, None):
            return  # somebody else handles SIGTERM; the exit handler still runs on sys.exit

        def _on_sigterm(signum: int, frame: Any) -> None:
            note_interrupted()
            raise SystemExit(128 + signum)

        self._previous_sigterm = previous
        signal.signal(signal.SIGTERM, _on_sigterm)

    def _restore_sigterm(self) -> None:
        if (
            self._previous_sigterm is not None
            and threading.current_thread() is threading.main_thread()
        ):
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None
