"""A launched job's outcome, read as the recoeval sweepers need it (``hydra/sweeper=recoeval``
and ``hydra/sweeper=optuna``), and the configs a sweeper composed to check its jobs, handed to
the launcher that runs them in this process."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ComposedOnce", "compose_once", "job_error", "raise_failures"]


def job_error(result: Any) -> BaseException | None:
    """The error a launched job failed with, or None when it completed.

    Read without Hydra's ``JobReturn.return_value``, which writes ``Error executing job with
    overrides: [...]`` to standard error before raising: the job has already said why it
    failed, in its own words (``recoeval-track: job #N of the sweep failed: ...``)."""
    from hydra.core.utils import JobStatus

    if result.status == JobStatus.COMPLETED:
        return None
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            _ = result.return_value  # raises the job's error
        except BaseException as err:  # noqa: BLE001 - the job's own error, handed back
            return err
    return None


def raise_failures(
    returns: Any,
    after: str | None = None,
    errors: Mapping[int, BaseException | None] | None = None,
    sweep_dir: str | Path | None = None,
) -> None:
    """Raise :class:`~recoeval_tracking.app.errors.SweepJobsFailed` naming every launched job
    that failed (each has said why), caused by the first one's error; nothing when none did.
    ``returns`` is the launcher's batches of results, in launch order; ``after`` says what the
    sweep did then (default: the other jobs ran); ``errors``: the :func:`job_error` of results
    the sweeper has already read, by ``id(result)`` (each job's error is read once). With
    ``sweep_dir``, the sweep's record says first how many jobs ran and which failed
    (:func:`~recoeval_tracking.tracking.sweeps.note_sweep_outcome`): the parent run then
    closes as a sweep that finished, its failed jobs named."""
    from recoeval_tracking.app.errors import SweepJobsFailed
    from recoeval_tracking.tracking.sweeps import note_sweep_outcome

    known = errors or {}
    results = [r for batch in returns for r in batch]
    overrides = [[str(o) for o in (getattr(r, "overrides", None) or [])] for r in results]
    common = set.intersection(*map(set, overrides)) if len(overrides) > 1 else set()
    failures = []
    for i, r in enumerate(results):
        error = known[id(r)] if id(r) in known else job_error(r)
        if error is not None:  # named by what sets it apart from the sweep's other jobs
            own = [o for o in overrides[i] if o not in common]
            failures.append((_job_num(r, i), own, error))
    if sweep_dir is not None:
        named = [f"#{num} ({' '.join(own)})" if own else f"#{num}" for num, own, _ in failures]
        note_sweep_outcome(sweep_dir, len(results), named, after)
    if failures:
        extra = {"after": after} if after else {}
        raise SweepJobsFailed(failures, len(results), **extra) from failures[0][2]


def _job_num(result: Any, index: int) -> Any:
    """The job's number in the sweep (``hydra.job.num``, the number it said it failed under),
    else its place among the results."""
    try:
        return result.hydra_cfg.hydra.job.num
    except Exception:  # noqa: BLE001 - a result without Hydra's config
        return index


class ComposedOnce:
    """A config loader that hands back, once each, the job configs the sweep's check composed.

    Hydra's basic launcher composes every job again (``load_sweep_config``) just before running
    it, with the same master config and overrides as the check: a composition per job, 0.07-0.2
    s each, for a config already in hand. Wrapped around the launcher's loader, it returns the
    kept config for those exact overrides (the first time they are asked for) and composes
    anything else with the loader it wraps, which answers every other call."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader
        self._kept: dict[tuple[int, tuple[str, ...]], Any] = {}

    def keep(
        self,
        master_config: Any,
        jobs: Sequence[Sequence[str]],
        configs: Sequence[Any],
    ) -> None:
        """Keep ``configs``, composed from ``master_config`` with each job's overrides."""
        for job, config in zip(jobs, configs, strict=True):
            self._kept[(id(master_config), tuple(job))] = config

    def forget(self) -> None:
        """Drop the configs not asked for."""
        self._kept.clear()

    def load_sweep_config(self, master_config: Any, sweep_overrides: list[str]) -> Any:
        kept = self._kept.pop((id(master_config), tuple(sweep_overrides)), None)
        if kept is not None:
            return kept
        return self._loader.load_sweep_config(master_config, sweep_overrides)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def compose_once(launcher: Any, hydra_context: Any) -> ComposedOnce | None:
    """When ``launcher`` is Hydra's basic launcher (it runs the jobs in this process and
    composes each just before): a :class:`ComposedOnce` put in its Hydra context, for the
    sweeper to :meth:`~ComposedOnce.keep` the configs it composed to check the jobs. None for
    launchers that run jobs elsewhere (joblib, submitit), which compose them there."""
    from hydra._internal.core_plugins.basic_launcher import BasicLauncher
    from hydra.types import HydraContext

    # by module: Hydra's plugin scan may load a second copy of the launcher's class
    if type(launcher).__module__ != BasicLauncher.__module__ or not isinstance(
        getattr(launcher, "hydra_context", None), HydraContext
    ):
        return None
    composed = ComposedOnce(hydra_context.config_loader)
    launcher.hydra_context = HydraContext(config_loader=composed, callbacks=hydra_context.callbacks)
    return composed
