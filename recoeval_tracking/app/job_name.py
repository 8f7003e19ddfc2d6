"""``hydra.job.name`` must stay a plain name: Hydra writes the job's log to
``<job folder>/<hydra.job.name>.log``, so a name with ``/``, ``\\`` or ``..`` puts the log outside
the job folder.

The name can come from the command line (checked by :func:`recoeval_tracking.app.cli.main`
before Hydra starts), from a primary config, from a ``--config-dir`` option with
``# @package _global_``, or from the config of a Hydra app of the user's own that uses our groups
(door 3). Hydra opens the log file before the task runs, so the composed config is checked
earlier, when the run or sweep starts: by :class:`JobNameCheck` (which ``recoeval-track`` always
adds to ``hydra.callbacks``) and by our sweep callback
(:class:`~recoeval_tracking.app.callbacks.MlflowSweepCallback`, which door 3 names); the
``recoeval`` sweeper checks each job of a sweep as it composes it. The task itself checks
:class:`~hydra.core.hydra_config.HydraConfig` again, as the last line of defence.
"""

from __future__ import annotations

from typing import Any

from hydra.experimental.callback import Callback

from .._validation import InputError

__all__ = [
    "JobNameError",
    "StartRefused",
    "JobNameCheck",
    "CALLBACK_OVERRIDE",
    "name_problem",
    "check_job_name",
    "check_config_job_name",
    "check_hydra_job_name",
]

#: The override ``recoeval-track`` adds to every command line: the check runs whatever the
#: primary config (``--config-path``, ``--config-name``) holds.
CALLBACK_OVERRIDE = (
    "++hydra.callbacks.recoeval_job_name._target_=recoeval_tracking.app.job_name.JobNameCheck"
)


class StartRefused(SystemExit):
    """A run or sweep refused when it starts, before any job. A ``SystemExit`` (a
    ``BaseException``) on purpose: Hydra turns the exceptions that callbacks raise into
    warnings, and this one must stop the run; ``recoeval-track`` prints ``error`` as a usage
    error (status 2), and a Hydra app of the user's own that does not catch it ends with the
    message on standard error (status 1), not a traceback."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class JobNameError(InputError):
    """``hydra.job.name`` is not a plain name (a usage error: exit 2 in ``recoeval-track``)."""


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name the job's log file, or None when it can."""
    if not isinstance(name, str):
        return f"it must be a text, not {type(name).__name__}"
    if not name.strip():
        return "it is empty"
    if "/" in name or "\\" in name or ".." in name:
        return "it holds '/', '\\' or '..', so the log file would be written outside the job folder"
    if any(ord(c) < 32 for c in name):
        return "it holds a control character"
    return None


def check_job_name(
    name: object, where: str = "the config", done: str = "Nothing was written."
) -> None:
    """Raise :class:`JobNameError` naming the key, the value and where it was set, when ``name``
    is not a plain name; ``done`` says what was written already."""
    problem = name_problem(name)
    if problem is not None:
        raise JobNameError(
            f"hydra.job.name must be a plain name (it names the job's log file, <name>.log, in "
            f"the job folder), but {where} sets it to {name!r}: {problem}. Set a name without "
            f"'/', '\\' or '..' (or remove the setting). {done}"
        )


def check_config_job_name(config: Any, where: str = "the config") -> None:
    """Check ``hydra.job.name`` of a composed config (with its ``hydra`` node)."""
    from omegaconf import OmegaConf

    if OmegaConf.select(config, "hydra.job", default=None) is None:
        return
    try:
        name = OmegaConf.select(config, "hydra.job.name", default=None, throw_on_missing=False)
    except Exception:  # noqa: BLE001 - not resolvable yet: the task checks the job's own name
        return
    check_job_name(name, where)


def check_hydra_job_name() -> None:
    """Check the name of the running job (:class:`~hydra.core.hydra_config.HydraConfig`), when
    a Hydra job is running."""
    from hydra.core.hydra_config import HydraConfig

    if HydraConfig.initialized():
        hc = HydraConfig.get()
        check_job_name(
            hc.job.name,
            done=f"Hydra had already opened the log file {hc.runtime.output_dir}/{hc.job.name}"
            ".log (name recoeval_tracking.app.job_name.JobNameCheck in hydra.callbacks to refuse "
            "the name before that); the job was stopped before anything else was written.",
        )


class JobNameCheck(Callback):
    """Refuse a run or sweep whose ``hydra.job.name`` is not a plain name, before Hydra opens
    the job's log file."""

    def on_run_start(self, config: Any, **kwargs: Any) -> None:
        self._check(config)

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        self._check(config)

    @staticmethod
    def _check(config: Any) -> None:
        try:
            check_config_job_name(config)
        except JobNameError as err:  # raised past Hydra's handlers: no job, no parent run
            raise StartRefused(err) from err
